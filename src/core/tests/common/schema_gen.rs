//! Inputs generated from a tool's JSON Schema, and the check that its reader reads them: the
//! schema is what a model is shown, so every input it allows must be read (but for what no
//! schema can state), and an input it forbids must be refused. Any (name, input schema, reader)
//! triple can be checked: the ICRC tools' readers and the builtins' `run_pure` alike.
//!
//! The generator covers the subset the host emits: `object` with `properties` / `required` /
//! `additionalProperties: false` (an optional property is left out or given a value its schema
//! allows, `null` among them when nullable), `string` with `pattern` (generated from the
//! pattern's own language), `maxLength` / `minLength`, `format` uri / email, `enum`, `const`,
//! `integer` / `number` with bounds, `boolean`, `null`, type arrays, `array` with bounds,
//! `anyOf` / `oneOf`.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Map, Value};
use tool_host_core::issue::{Code, Issue};

/// Elements generated for an array at most (its `maxItems` still bounds it): enough to find
/// a disagreement, few enough that a case stays fast.
const GENERATED_ITEMS: usize = 4;
/// Characters generated for a string without a pattern at most.
const GENERATED_CHARS: u64 = 40;

/// Cases per tool: `SCHEMA_AGREEMENT_CASES` raises it.
pub fn cases() -> u32 {
    std::env::var("SCHEMA_AGREEMENT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

/// A schema's `pattern` as a generator's regular expression: the same language with the
/// anchors off (proptest generates no anchors; an unanchored pattern's own language is a
/// subset of what it matches). The host's patterns use only syntax both read alike.
fn generator_regex(pattern: &str) -> String {
    let p = pattern.strip_prefix('^').unwrap_or(pattern);
    let p = match p.strip_suffix('$') {
        Some(q) if !q.ends_with('\\') => q,
        _ => p,
    };
    // ECMAScript's `\s` is not Rust's: it has U+FEFF and lacks U+0085 (`builtin::input`'s
    // `ecma_space`). Generated from a subset of ECMAScript's classes, so that what is generated
    // is what the schema (read as ECMAScript by `satisfies`) allows.
    p.replace("\\s", "[\\t\\n\\x0B\\x0C\\r \\xA0\\x{3000}\\x{FEFF}]")
        .replace("\\S", "[^\\s\\x{FEFF}]")
}

fn char_len(s: &str) -> u64 {
    s.chars().count() as u64
}

fn string_strategy(m: &Map<String, Value>) -> BoxedStrategy<Value> {
    let min = m.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    let max = m.get("maxLength").and_then(Value::as_u64);
    let base: BoxedStrategy<String> = if let Some(p) = m.get("pattern").and_then(Value::as_str) {
        proptest::string::string_regex(&generator_regex(p))
            .unwrap_or_else(|e| panic!("pattern {p} cannot be generated from: {e}"))
            .boxed()
    } else {
        match m.get("format").and_then(Value::as_str) {
            Some("uri") => "https://[a-z]{1,12}\\.(com|org|io)(/[a-z0-9]{0,10})?"
                .prop_map(String::from)
                .boxed(),
            Some("email") => "[a-z]{1,10}@[a-z]{1,10}\\.(com|org)"
                .prop_map(String::from)
                .boxed(),
            _ => {
                let hi = max.unwrap_or(GENERATED_CHARS).min(min + GENERATED_CHARS);
                proptest::string::string_regex(&format!("(?s).{{{min},{hi}}}"))
                    .expect("a length regex")
                    .boxed()
            }
        }
    };
    base.prop_filter("within the schema's lengths", move |s| {
        let n = char_len(s);
        n >= min && max.is_none_or(|x| n <= x)
    })
    .prop_map(Value::String)
    .boxed()
}

fn number_bounds(m: &Map<String, Value>) -> (f64, f64) {
    let lo = m
        .get("minimum")
        .and_then(Value::as_f64)
        .or_else(|| {
            m.get("exclusiveMinimum")
                .and_then(Value::as_f64)
                .map(|x| x + 1.0)
        })
        .unwrap_or(-1.0e6);
    let hi = m
        .get("maximum")
        .and_then(Value::as_f64)
        .or_else(|| {
            m.get("exclusiveMaximum")
                .and_then(Value::as_f64)
                .map(|x| x - 1.0)
        })
        .unwrap_or(1.0e6);
    (lo, hi)
}

fn typed_strategy(ty: &str, m: &Map<String, Value>) -> BoxedStrategy<Value> {
    match ty {
        "string" => string_strategy(m),
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => {
            let (lo, hi) = number_bounds(m);
            (lo.ceil() as i64..=hi.floor() as i64)
                .prop_map(|n| json!(n))
                .boxed()
        }
        "number" => {
            let (lo, hi) = number_bounds(m);
            (lo..=hi).prop_map(|x| json!(x)).boxed()
        }
        "array" => {
            let items = m
                .get("items")
                .map(value_strategy)
                .unwrap_or_else(|| Just(Value::Null).boxed());
            let min = m.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = m
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(GENERATED_ITEMS, |x| x as usize)
                .min(min.max(GENERATED_ITEMS));
            proptest::collection::vec(items, min..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        "object" => object_strategy(m),
        other => panic!("type {other} is not in the schema subset"),
    }
}

fn object_strategy(m: &Map<String, Value>) -> BoxedStrategy<Value> {
    let required: Vec<String> = m
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = vec![];
    if let Some(Value::Object(props)) = m.get("properties") {
        for (name, schema) in props {
            if schema == &Value::Bool(false) {
                continue;
            }
            let n = name.clone();
            let value = value_strategy(schema).prop_map(move |v| Some((n.clone(), v)));
            if required.contains(name) {
                fields.push(value.boxed());
            } else {
                // Left out, or any value its schema allows (null when it is nullable).
                fields.push(prop_oneof![1 => Just(None), 2 => value].boxed());
            }
        }
    }
    fields
        .prop_map(|fs| Value::Object(fs.into_iter().flatten().collect()))
        .boxed()
}

/// Values the schema allows.
pub fn value_strategy(schema: &Value) -> BoxedStrategy<Value> {
    let Value::Object(m) = schema else {
        assert_eq!(schema, &Value::Bool(true), "a false schema allows nothing");
        return Just(json!("any")).boxed();
    };
    if let Some(c) = m.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(Value::Array(options)) = m.get("enum") {
        return proptest::sample::select(options.clone()).boxed();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = m.get(key) {
            let strategies: Vec<BoxedStrategy<Value>> =
                branches.iter().map(value_strategy).collect();
            return proptest::strategy::Union::new(strategies).boxed();
        }
    }
    match m.get("type") {
        Some(Value::String(t)) => typed_strategy(t, m),
        Some(Value::Array(ts)) => {
            let strategies: Vec<BoxedStrategy<Value>> = ts
                .iter()
                .map(|t| typed_strategy(t.as_str().expect("a type name"), m))
                .collect();
            proptest::strategy::Union::new(strategies).boxed()
        }
        _ => panic!("a schema without a type, enum, const or anyOf: {schema}"),
    }
}

/// Whether `v` satisfies `schema` (the same subset, patterns run as ECMAScript with the `u`
/// flag, lengths in code points as JSON Schema counts them). The generator is checked by it,
/// and the refused direction uses it to keep only inputs the schema truly forbids.
pub fn satisfies(schema: &Value, v: &Value) -> bool {
    let Value::Object(m) = schema else {
        return schema != &Value::Bool(false);
    };
    if let Some(c) = m.get("const") {
        if c != v {
            return false;
        }
    }
    if let Some(Value::Array(options)) = m.get("enum") {
        if !options.contains(v) {
            return false;
        }
    }
    if let Some(Value::Array(bs)) = m.get("anyOf") {
        if !bs.iter().any(|b| satisfies(b, v)) {
            return false;
        }
    }
    if let Some(Value::Array(bs)) = m.get("oneOf") {
        if bs.iter().filter(|b| satisfies(b, v)).count() != 1 {
            return false;
        }
    }
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let kind_ok = |t: &str| match (t, v) {
        ("string", Value::String(_)) | ("null", Value::Null) | ("boolean", Value::Bool(_)) => true,
        ("object", Value::Object(_)) | ("array", Value::Array(_)) => true,
        ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    };
    if !types.is_empty() && !types.iter().any(|t| kind_ok(t)) {
        return false;
    }
    match v {
        Value::String(s) => {
            let n = char_len(s);
            if m.get("maxLength")
                .and_then(Value::as_u64)
                .is_some_and(|x| n > x)
                || m.get("minLength")
                    .and_then(Value::as_u64)
                    .is_some_and(|x| n < x)
            {
                return false;
            }
            if let Some(p) = m.get("pattern").and_then(Value::as_str) {
                let re = regress::Regex::with_flags(p, "u")
                    .unwrap_or_else(|e| panic!("{p} is not ECMAScript (u): {e}"));
                if re.find(s).is_none() {
                    return false;
                }
            }
        }
        Value::Number(x) => {
            let x = x.as_f64().unwrap_or(f64::NAN);
            if m.get("minimum")
                .and_then(Value::as_f64)
                .is_some_and(|lo| x < lo)
                || m.get("maximum")
                    .and_then(Value::as_f64)
                    .is_some_and(|hi| x > hi)
            {
                return false;
            }
        }
        Value::Array(items) => {
            let n = items.len() as u64;
            if m.get("maxItems")
                .and_then(Value::as_u64)
                .is_some_and(|x| n > x)
                || m.get("minItems")
                    .and_then(Value::as_u64)
                    .is_some_and(|x| n < x)
            {
                return false;
            }
            if let Some(item) = m.get("items") {
                if !items.iter().all(|x| satisfies(item, x)) {
                    return false;
                }
            }
        }
        Value::Object(obj) => {
            let props = m.get("properties").and_then(Value::as_object);
            if let Some(Value::Array(req)) = m.get("required") {
                if !req
                    .iter()
                    .filter_map(Value::as_str)
                    .all(|k| obj.contains_key(k))
                {
                    return false;
                }
            }
            for (k, x) in obj {
                let allowed = match props.and_then(|p| p.get(k)) {
                    Some(s) => satisfies(s, x),
                    None => m.get("additionalProperties") != Some(&Value::Bool(false)),
                };
                if !allowed {
                    return false;
                }
            }
        }
        _ => {}
    }
    true
}

/// Inputs near `valid` that the schema forbids: each top-level property replaced by a value
/// of the wrong kind, text it does not match, text one over its length, an enum option that
/// is not one, an array one over its bound; a required property left out; an unknown one added.
/// Only those `satisfies` refuses are kept.
pub fn violations(schema: &Value, valid: &Value) -> Vec<(String, Value)> {
    let mut out = vec![];
    let (Some(props), Value::Object(obj)) = (schema["properties"].as_object(), valid) else {
        return out;
    };
    let mut with = |what: String, key: &str, x: Option<Value>| {
        let mut o = obj.clone();
        match x {
            Some(x) => o.insert(key.to_string(), x),
            None => o.remove(key),
        };
        out.push((what, Value::Object(o)));
    };
    with(
        "an unknown input".into(),
        "not_an_input_of_this_tool",
        Some(json!("x")),
    );
    for (k, s) in props {
        let max = s["maxLength"].as_u64();
        let mut candidates = vec![
            json!(7),
            json!(true),
            json!({}),
            json!([]),
            json!(""),
            json!("#"),
            json!("1,5"),
            json!("not-an-option"),
            json!("\u{00a0}1\u{00a0}"),
        ];
        if let Some(x) = max {
            candidates.push(json!("7".repeat(x as usize + 1)));
            if let Some(Value::String(v)) = obj.get(k) {
                candidates.push(json!(format!("{v}{}", " ".repeat(x as usize))));
            }
        }
        if let Some(x) = s["maxItems"].as_u64() {
            let item = obj
                .get(k)
                .and_then(|v| v.as_array())
                .and_then(|a| a.first().cloned())
                .unwrap_or(Value::Null);
            candidates.push(Value::Array(vec![item; x as usize + 1]));
        }
        for c in candidates {
            if !satisfies(s, &c) {
                with(format!("'{k}' = {}", short(&c)), k, Some(c));
            }
        }
        if schema["required"]
            .as_array()
            .is_some_and(|r| r.contains(&json!(k)))
        {
            with(format!("'{k}' left out"), k, None);
        }
    }
    out.retain(|(_, v)| !satisfies(schema, v));
    out
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!(
            "{}… ({} chars)",
            s.chars().take(40).collect::<String>(),
            s.chars().count()
        )
    } else {
        s
    }
}

/// What one tool's check found wrong, if anything.
pub fn check_tool(
    name: &str,
    input_schema: &Value,
    read: &dyn Fn(&Value) -> Result<(), Vec<Issue>>,
    semantic: &dyn Fn(&Issue) -> bool,
) -> Result<(), String> {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = value_strategy(input_schema);
    let result = runner.run(&strategy, |input| {
        if !satisfies(input_schema, &input) {
            return Err(TestCaseError::fail(format!(
                "the generator made an input its schema refuses: {input}"
            )));
        }
        if let Err(issues) = read(&input) {
            let statable: Vec<&Issue> = issues.iter().filter(|i| !semantic(i)).collect();
            if !statable.is_empty() {
                return Err(TestCaseError::fail(format!(
                    "the schema allows {input} but the reader refuses it: {statable:?}"
                )));
            }
        }
        // The other direction, from this valid input: what the schema forbids is refused.
        for (what, bad) in violations(input_schema, &input) {
            if read(&bad).is_ok() {
                return Err(TestCaseError::fail(format!(
                    "the schema forbids {what} ({bad}) but the reader reads it"
                )));
            }
        }
        Ok(())
    });
    result.map_err(|e| format!("{name}: {e}"))
}

/// Codes a reader may refuse a schema-valid input with: none of them can be written in a JSON
/// Schema. `E_PRINCIPAL` / `E_ACCOUNT`: the CRC32 inside a principal or an account text (and
/// the exact base32 length of a principal). `E_CANISTER`: the canister is not registered for the
/// tool. `E_NAME_NOT_FOUND` / `E_NAME_AMBIGUOUS` / `E_NAMES_UNREAD`: a name set is read from the
/// canister at call time.
pub const SEMANTIC_CODES: [Code; 6] = [
    Code::Principal,
    Code::Account,
    Code::Canister,
    Code::NameNotFound,
    Code::NameAmbiguous,
    Code::NamesUnread,
];
