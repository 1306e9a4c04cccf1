//! OpenAI's strict mode (Structured Outputs) takes a subset of JSON Schema: every object lists
//! all its properties in `required` and says `additionalProperties: false`, and only the
//! keywords of OpenAI's "supported schemas" list appear. A schema becomes strict only when that
//! loses no rule: an optional property becomes a required nullable one (the readers take
//! `null` for an optional input), anything else outside the subset keeps the schema non-strict.

use serde_json::{json, Map, Value};

/// The keywords OpenAI's strict mode takes (its supported-schemas list: types, `enum`/`const`,
/// `anyOf`, `$defs`/`$ref`, string `pattern`/`format`, number bounds, array `minItems`/
/// `maxItems`). Not in it, so never strict: `minLength`, `maxLength`, `oneOf`, `allOf`, `not`,
/// `if`/`then`/`else`, `patternProperties`, `prefixItems`, `uniqueItems`, ...
pub const STRICT_KEYWORDS: [&str; 21] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$defs",
    "$ref",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The string formats strict mode takes.
pub const STRICT_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// OpenAI's bounds: at most 10 levels of object nesting, 5 000 properties, 1 000 enum values.
pub const MAX_DEPTH: usize = 10;
pub const MAX_PROPERTIES: usize = 5000;
pub const MAX_ENUM_VALUES: usize = 1000;

/// The strict form of `schema` (an input schema, `$schema` left out), or `None` when making it
/// strict would lose a rule or it uses a keyword strict mode does not take.
pub fn strict_schema(schema: &Value) -> Option<Value> {
    strict_schema_with(schema, 0)
}

/// [`strict_schema`] with `enum_values` counted against the enum budget before the schema's
/// own: a schema with a hole where a part of that many enum values goes (`bus::splice`). The
/// budget's count only grows, so starting it there fails exactly when the whole schema would,
/// given some other enum is checked after it or the part alone is within the budget.
pub(super) fn strict_schema_with(schema: &Value, enum_values: usize) -> Option<Value> {
    strict_counted(schema, enum_values).map(|(s, _)| s)
}

/// [`strict_schema`] of a schema with a hole where a part's enum goes, and the enum values
/// counted in the rest: a part of `n` values that has a strict form on its own fits
/// ([`strict_schema_with`] of `n` is the same schema) when `n` and these are within the
/// budget (each enum checks the count so far, and the count only grows, so the last one
/// checks them all; with none in the rest, the part's own check is the one).
pub(super) fn strict_schema_counted(schema: &Value) -> Option<(Value, usize)> {
    strict_counted(schema, 0)
}

/// Whether a part of `n` enum values (with a strict form of its own) fits beside `rest`
/// counted by [`strict_schema_counted`].
pub(super) fn part_fits(n: usize, rest: usize) -> bool {
    n + rest <= MAX_ENUM_VALUES
}

fn strict_counted(schema: &Value, enum_values: usize) -> Option<(Value, usize)> {
    let root = schema.as_object()?;
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    let mut budget = Budget {
        properties: 0,
        enum_values,
    };
    let strict = node_of(root, 1, &mut budget, true)?;
    Some((strict, budget.enum_values - enum_values))
}

/// A root property's strict form on its own (a fresh budget), as [`strict_schema`] makes it
/// inside its schema.
pub(super) fn property_node(s: &Value) -> Option<Value> {
    let mut budget = Budget {
        properties: 0,
        enum_values: 0,
    };
    node(s, 2, &mut budget)
}

struct Budget {
    properties: usize,
    enum_values: usize,
}

fn node(v: &Value, depth: usize, b: &mut Budget) -> Option<Value> {
    node_of(v.as_object()?, depth, b, false)
}

/// A schema object's strict form; `root`: the input schema, whose `$schema` is left out.
fn node_of(m: &Map<String, Value>, depth: usize, b: &mut Budget, root: bool) -> Option<Value> {
    let skipped = |k: &str| root && k == "$schema";
    if m.keys()
        .any(|k| !skipped(k) && !STRICT_KEYWORDS.contains(&k.as_str()))
    {
        return None;
    }
    if let Some(f) = m.get("format") {
        if !STRICT_FORMATS.contains(&f.as_str()?) {
            return None;
        }
    }
    if let Some(e) = m.get("enum") {
        b.enum_values += e.as_array()?.len();
        if b.enum_values > MAX_ENUM_VALUES {
            return None;
        }
    }
    let is_object =
        m.get("type").and_then(Value::as_str) == Some("object") || m.contains_key("properties");
    // The members made again below are not copied first (`properties` holds every input's
    // schema, a canister's enum among them).
    let made_again = |k: &str| {
        matches!(k, "items" | "anyOf" | "$defs" | "properties") || (is_object && k == "required")
    };
    let mut out: Map<String, Value> = m
        .iter()
        .filter(|(k, _)| !skipped(k) && !made_again(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(items) = m.get("items") {
        out.insert("items".into(), node(items, depth, b)?);
    }
    if let Some(any) = m.get("anyOf") {
        let members: Option<Vec<Value>> =
            any.as_array()?.iter().map(|s| node(s, depth, b)).collect();
        out.insert("anyOf".into(), Value::Array(members?));
    }
    if let Some(defs) = m.get("$defs") {
        let mut d = Map::new();
        for (k, s) in defs.as_object()? {
            d.insert(k.clone(), node(s, depth, b)?);
        }
        out.insert("$defs".into(), Value::Object(d));
    }
    if is_object {
        if depth > MAX_DEPTH || m.get("additionalProperties") != Some(&Value::Bool(false)) {
            return None;
        }
        let empty = Map::new();
        let props = match m.get("properties") {
            Some(p) => p.as_object()?,
            None => &empty,
        };
        let required: Vec<&str> = match m.get("required") {
            Some(r) => r
                .as_array()?
                .iter()
                .map(Value::as_str)
                .collect::<Option<_>>()?,
            None => vec![],
        };
        b.properties += props.len();
        if b.properties > MAX_PROPERTIES {
            return None;
        }
        let mut strict_props = Map::new();
        for (k, s) in props {
            let s = node(s, depth + 1, b)?;
            let s = if required.contains(&k.as_str()) {
                s
            } else {
                nullable(s)
            };
            strict_props.insert(k.clone(), s);
        }
        let all: Vec<Value> = strict_props.keys().map(|k| json!(k)).collect();
        out.insert("properties".into(), Value::Object(strict_props));
        out.insert("required".into(), Value::Array(all));
    }
    Some(Value::Object(out))
}

/// Whether a schema already takes `null`.
fn admits_null(s: &Value) -> bool {
    match s.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(ts)) if ts.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    s.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(admits_null))
}

/// An optional property made required: `null` stands for "left out".
fn nullable(s: Value) -> Value {
    if admits_null(&s) {
        return s;
    }
    let simple = s.get("enum").is_none() && s.get("const").is_none();
    match s.get("type") {
        Some(Value::String(t)) if simple => {
            let mut m = s.as_object().cloned().unwrap_or_default();
            m.insert("type".into(), json!([t, "null"]));
            Value::Object(m)
        }
        _ => json!({ "anyOf": [s, { "type": "null" }] }),
    }
}
