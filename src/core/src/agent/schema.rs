//! The response schema profile: the small, closed part of JSON Schema that every structured
//! output API takes and that a local check can decide exactly. A root object that declares the
//! FLOW dialect, closed objects whose properties are all required, arrays with a bound, strings
//! (optionally an enum) and safe integers (optionally bounded); only strings and integers may be
//! nullable.

use super::error::{join, AgentError};
use super::json::{check_value, Json, Number, DOCUMENT, MAX_SAFE_INTEGER};
use std::collections::BTreeSet;

/// The dialect the root must declare in `$schema`.
pub const DIALECT: &str = "https://flow.jig.md/schemas/schema-0.json";
/// Canonical (sorted, compact) UTF-8 bytes of a whole schema.
pub const MAX_SCHEMA_BYTES: usize = 256 << 10;
/// Nesting of schema nodes: the root is depth 1, its properties depth 2, an array's items one
/// deeper than the array.
pub const MAX_DEPTH: usize = 8;
pub const MAX_OBJECT_PROPERTIES: usize = 32;
pub const MAX_PROPERTIES: usize = 128;
/// The largest `maxItems`.
pub const MAX_ARRAY_ITEMS: i64 = 256;
/// Enum values, over every enum in the schema.
pub const MAX_ENUM_VALUES: usize = 256;
/// Unicode scalar values of every property name and every enum string, together.
pub const MAX_SCALARS: usize = 120_000;
/// An enum with more values than this ...
pub const LARGE_ENUM: usize = 250;
/// ... holds at most this many Unicode scalar values in its strings.
pub const MAX_LARGE_ENUM_SCALARS: usize = 15_000;

/// A schema that passed the profile, ready to check answers against.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseSchema {
    pub json: Json,
    root: Node,
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Object(Vec<(String, Node)>),
    Array {
        items: Box<Node>,
        min: i64,
        max: i64,
    },
    String {
        nullable: bool,
        /// `None` in an enum is `null`.
        options: Option<Vec<Option<String>>>,
    },
    Integer {
        nullable: bool,
        min: Option<i64>,
        max: Option<i64>,
    },
}

/// Checks `schema` against the profile. Errors are `INVALID_INPUT`, or `RESOURCE_EXHAUSTED` for
/// a bound, placed under `response_schema`.
pub fn assert_response_schema(schema: &Json) -> Result<(), AgentError> {
    compile(schema, "response_schema").map(|_| ())
}

/// A copy of `schema` without the root `$schema`, for a provider's structured-output field.
pub fn project_response_schema(schema: &Json) -> Result<Json, AgentError> {
    compile(schema, "response_schema")?;
    Ok(project(schema))
}

pub(crate) fn project(schema: &Json) -> Json {
    match schema {
        Json::Object(m) => {
            Json::Object(m.iter().filter(|(k, _)| k != "$schema").cloned().collect())
        }
        other => other.clone(),
    }
}

pub fn compile(schema: &Json, place: &str) -> Result<ResponseSchema, AgentError> {
    // A value built in code may hold what no parse gives (a member twice, an unsafe number).
    check_value(schema, &DOCUMENT, place)?;
    let bytes = schema.canonical().len();
    if bytes > MAX_SCHEMA_BYTES {
        return Err(AgentError::exhausted(
            place,
            format!("{bytes} canonical bytes, over the {MAX_SCHEMA_BYTES} a schema may have"),
        ));
    }
    let Some(members) = schema.members() else {
        return Err(AgentError::input(
            place,
            format!("a schema is an object, not {}", schema.kind()),
        ));
    };
    match schema.get("$schema") {
        Some(Json::String(d)) if d == DIALECT => {}
        Some(_) => {
            return Err(AgentError::input(
                join(place, "$schema"),
                format!("the root declares \"{DIALECT}\""),
            ))
        }
        None => {
            return Err(AgentError::input(
                place,
                format!("the root declares \"$schema\": \"{DIALECT}\""),
            ))
        }
    }
    if schema.get("type").and_then(Json::as_str) != Some("object") {
        return Err(AgentError::input(
            join(place, "type"),
            "the root is an object (\"type\": \"object\")",
        ));
    }
    let mut tally = Tally::default();
    let root_members: Vec<(String, Json)> = members
        .iter()
        .filter(|(k, _)| k != "$schema")
        .cloned()
        .collect();
    let root = node(&Json::Object(root_members), place, 1, &mut tally)?;
    if let Node::Object(props) = &root {
        if props.is_empty() {
            return Err(AgentError::input(
                join(place, "properties"),
                "the root has at least one property",
            ));
        }
    }
    Ok(ResponseSchema {
        json: schema.clone(),
        root,
    })
}

#[derive(Default)]
struct Tally {
    properties: usize,
    enum_values: usize,
    scalars: usize,
}

impl Tally {
    fn scalars(&mut self, n: usize, place: &str) -> Result<(), AgentError> {
        self.scalars += n;
        if self.scalars > MAX_SCALARS {
            return Err(AgentError::exhausted(
                place,
                format!(
                    "property names and enum strings hold over {MAX_SCALARS} Unicode scalar values"
                ),
            ));
        }
        Ok(())
    }
}

fn allowed(
    members: &[(String, Json)],
    keys: &[&str],
    what: &str,
    place: &str,
) -> Result<(), AgentError> {
    for (k, _) in members {
        if !keys.contains(&k.as_str()) {
            let why = match k.as_str() {
                "$ref" | "$defs" | "definitions" => "references are outside the profile",
                "anyOf" | "oneOf" | "allOf" | "not" | "if" | "then" | "else" => {
                    "combinators are outside the profile"
                }
                "$schema" => "only the root declares $schema",
                _ => "not a keyword the profile takes here",
            };
            return Err(AgentError::input(
                join(place, k),
                format!("{why} (a {what} takes {})", keys.join(", ")),
            ));
        }
    }
    Ok(())
}

fn description(v: &Json, place: &str) -> Result<(), AgentError> {
    match v.get("description") {
        None | Some(Json::String(_)) => Ok(()),
        Some(other) => Err(AgentError::input(
            join(place, "description"),
            format!("a description is a string, not {}", other.kind()),
        )),
    }
}

fn count(v: &Json, key: &str, place: &str, lo: i64, hi: i64) -> Result<Option<i64>, AgentError> {
    match v.get(key) {
        None => Ok(None),
        Some(Json::Number(Number::Int(i))) if (lo..=hi).contains(i) => Ok(Some(*i)),
        Some(other) => Err(AgentError::input(
            join(place, key),
            format!("an integer from {lo} to {hi}, not {}", short(other)),
        )),
    }
}

fn short(v: &Json) -> String {
    let t = v.compact();
    if t.chars().count() > 40 {
        v.kind().to_string()
    } else {
        t
    }
}

/// `type` as the profile writes it: one name, or a name and "null".
fn type_of(v: &Json, place: &str) -> Result<(String, bool), AgentError> {
    let at = join(place, "type");
    let refuse = |name: &str| -> AgentError {
        let why = match name {
            "boolean" => "booleans are outside the profile (use a string enum)",
            "number" => "numbers are outside the profile (use an integer, or a string)",
            "null" => "null alone is outside the profile (make a string or an integer nullable)",
            _ => "the profile's types are object, array, string and integer",
        };
        AgentError::input(at.clone(), format!("\"{name}\": {why}"))
    };
    match v.get("type") {
        None => Err(AgentError::input(place, "every node states its \"type\"")),
        Some(Json::String(t)) => match t.as_str() {
            "object" | "array" | "string" | "integer" => Ok((t.clone(), false)),
            other => Err(refuse(other)),
        },
        Some(Json::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Json::as_str).collect();
            if names.len() != 2 || ts.len() != 2 || !names.contains(&"null") || names[0] == names[1]
            {
                return Err(AgentError::input(
                    at,
                    "a list of types is one type and \"null\", as [\"string\", \"null\"]",
                ));
            }
            let t = if names[0] == "null" {
                names[1]
            } else {
                names[0]
            };
            match t {
                "string" | "integer" => Ok((t.to_string(), true)),
                "object" | "array" => Err(AgentError::input(
                    at,
                    format!("only strings and integers may be nullable, not {t}s"),
                )),
                other => Err(refuse(other)),
            }
        }
        Some(other) => Err(AgentError::input(
            at,
            format!("a type name, not {}", other.kind()),
        )),
    }
}

fn node(v: &Json, place: &str, depth: usize, tally: &mut Tally) -> Result<Node, AgentError> {
    if depth > MAX_DEPTH {
        return Err(AgentError::exhausted(
            place,
            format!("schema nodes nested deeper than {MAX_DEPTH} levels"),
        ));
    }
    let Some(members) = v.members() else {
        return Err(AgentError::input(
            place,
            format!("a schema node is an object, not {}", v.kind()),
        ));
    };
    let (t, nullable) = type_of(v, place)?;
    description(v, place)?;
    match t.as_str() {
        "object" => {
            allowed(
                members,
                &[
                    "type",
                    "description",
                    "properties",
                    "required",
                    "additionalProperties",
                ],
                "object",
                place,
            )?;
            if v.get("additionalProperties") != Some(&Json::Bool(false)) {
                return Err(AgentError::input(
                    join(place, "additionalProperties"),
                    "objects are closed: \"additionalProperties\": false",
                ));
            }
            let props = match v.get("properties") {
                Some(Json::Object(p)) => p,
                None => {
                    return Err(AgentError::input(
                        join(place, "properties"),
                        "an object node lists its \"properties\"",
                    ))
                }
                Some(other) => {
                    return Err(AgentError::input(
                        join(place, "properties"),
                        format!("an object of property schemas, not {}", other.kind()),
                    ))
                }
            };
            let at = join(place, "properties");
            if props.len() > MAX_OBJECT_PROPERTIES {
                return Err(AgentError::exhausted(
                    at,
                    format!(
                        "{} properties, over the {MAX_OBJECT_PROPERTIES} an object may have",
                        props.len()
                    ),
                ));
            }
            tally.properties += props.len();
            if tally.properties > MAX_PROPERTIES {
                return Err(AgentError::exhausted(
                    at,
                    format!("over {MAX_PROPERTIES} properties in the whole schema"),
                ));
            }
            let required = match v.get("required") {
                Some(Json::Array(r)) => r,
                None if props.is_empty() => &Vec::new(),
                None => {
                    return Err(AgentError::input(
                        join(place, "required"),
                        "every property is required: list them all in \"required\"",
                    ))
                }
                Some(other) => {
                    return Err(AgentError::input(
                        join(place, "required"),
                        format!("an array of property names, not {}", other.kind()),
                    ))
                }
            };
            let mut names = BTreeSet::new();
            for (i, r) in required.iter().enumerate() {
                let at = format!("{}[{i}]", join(place, "required"));
                let Some(name) = r.as_str() else {
                    return Err(AgentError::input(at, "a property name"));
                };
                if !props.iter().any(|(k, _)| k == name) {
                    return Err(AgentError::input(
                        at,
                        format!("\"{name}\" is not a property"),
                    ));
                }
                if !names.insert(name) {
                    return Err(AgentError::input(at, format!("\"{name}\" is listed twice")));
                }
            }
            let mut out = Vec::with_capacity(props.len());
            for (k, p) in props {
                let at = join(&join(place, "properties"), k);
                if !names.contains(k.as_str()) {
                    return Err(AgentError::input(
                        at,
                        "optional properties are outside the profile: list it in \"required\" (make it nullable if it may be absent)",
                    ));
                }
                tally.scalars(k.chars().count(), &at)?;
                out.push((k.clone(), node(p, &at, depth + 1, tally)?));
            }
            Ok(Node::Object(out))
        }
        "array" => {
            allowed(
                members,
                &["type", "description", "items", "maxItems", "minItems"],
                "array",
                place,
            )?;
            let Some(max) = count(v, "maxItems", place, 0, MAX_ARRAY_ITEMS)? else {
                return Err(AgentError::input(
                    join(place, "maxItems"),
                    format!("arrays are bounded: \"maxItems\" at most {MAX_ARRAY_ITEMS}"),
                ));
            };
            let min = count(v, "minItems", place, 0, max)?.unwrap_or(0);
            let Some(items) = v.get("items") else {
                return Err(AgentError::input(
                    join(place, "items"),
                    "an array node states its \"items\"",
                ));
            };
            let items = node(items, &join(place, "items"), depth + 1, tally)?;
            Ok(Node::Array {
                items: Box::new(items),
                min,
                max,
            })
        }
        "string" => {
            // No length bounds: OpenAI's strict structured output does not take them, and a
            // profile schema must go to a provider's strict format as it is.
            allowed(members, &["type", "description", "enum"], "string", place)?;
            let options = match v.get("enum") {
                None => None,
                Some(Json::Array(opts)) => {
                    Some(enum_options(opts, nullable, &join(place, "enum"), tally)?)
                }
                Some(other) => {
                    return Err(AgentError::input(
                        join(place, "enum"),
                        format!("an array of strings, not {}", other.kind()),
                    ))
                }
            };
            Ok(Node::String { nullable, options })
        }
        _ => {
            allowed(
                members,
                &["type", "description", "minimum", "maximum"],
                "integer",
                place,
            )?;
            let max = count(v, "maximum", place, -MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)?;
            let min = count(
                v,
                "minimum",
                place,
                -MAX_SAFE_INTEGER,
                max.unwrap_or(MAX_SAFE_INTEGER),
            )?;
            Ok(Node::Integer { nullable, min, max })
        }
    }
}

fn enum_options(
    opts: &[Json],
    nullable: bool,
    place: &str,
    tally: &mut Tally,
) -> Result<Vec<Option<String>>, AgentError> {
    tally.enum_values += opts.len();
    if tally.enum_values > MAX_ENUM_VALUES {
        return Err(AgentError::exhausted(
            place,
            format!("over {MAX_ENUM_VALUES} enum values in the whole schema"),
        ));
    }
    let mut out = Vec::with_capacity(opts.len());
    let mut seen = BTreeSet::new();
    let mut scalars = 0;
    for (i, o) in opts.iter().enumerate() {
        let at = format!("{place}[{i}]");
        let opt = match o {
            Json::String(s) => Some(s.clone()),
            Json::Null if nullable => None,
            Json::Null => {
                return Err(AgentError::input(
                    at,
                    "null in the enum of a string that is not nullable",
                ))
            }
            other => {
                return Err(AgentError::input(
                    at,
                    format!("enum options are strings, not {}", other.kind()),
                ))
            }
        };
        if !seen.insert(opt.clone()) {
            return Err(AgentError::input(at, "an enum option listed twice"));
        }
        if let Some(s) = &opt {
            let n = s.chars().count();
            scalars += n;
            tally.scalars(n, &at)?;
        }
        out.push(opt);
    }
    if !out.iter().any(Option::is_some) {
        return Err(AgentError::input(
            place,
            "an enum holds at least one string",
        ));
    }
    if nullable && !out.contains(&None) {
        return Err(AgentError::input(
            place,
            "the enum of a nullable string holds null too",
        ));
    }
    if out.len() > LARGE_ENUM && scalars > MAX_LARGE_ENUM_SCALARS {
        return Err(AgentError::exhausted(
            place,
            format!(
                "an enum of over {LARGE_ENUM} values holds {scalars} Unicode scalar values, over {MAX_LARGE_ENUM_SCALARS}"
            ),
        ));
    }
    Ok(out)
}

impl ResponseSchema {
    /// Checks an answer's value; errors are `INVALID_RESULT` placed under `place`.
    pub fn check(&self, value: &Json, place: &str) -> Result<(), AgentError> {
        check(&self.root, value, place)
    }
}

fn check(node: &Node, v: &Json, place: &str) -> Result<(), AgentError> {
    let wrong = |what: &str| AgentError::result(place, format!("{what}, not {}", v.kind()));
    match node {
        Node::Object(props) => {
            let Json::Object(m) = v else {
                return Err(wrong("an object"));
            };
            for (k, _) in m {
                if !props.iter().any(|(p, _)| p == k) {
                    return Err(AgentError::result(
                        join(place, k),
                        "a member the schema does not have",
                    ));
                }
            }
            for (k, p) in props {
                match v.get(k) {
                    Some(x) => check(p, x, &join(place, k))?,
                    None => {
                        return Err(AgentError::result(
                            join(place, k),
                            "missing: every property is required",
                        ))
                    }
                }
            }
            Ok(())
        }
        Node::Array { items, min, max } => {
            let Json::Array(a) = v else {
                return Err(wrong("an array"));
            };
            let n = a.len() as i64;
            if n > *max || n < *min {
                return Err(AgentError::result(
                    place,
                    format!("{n} items, where the schema takes {min} to {max}"),
                ));
            }
            a.iter()
                .enumerate()
                .try_for_each(|(i, x)| check(items, x, &format!("{place}[{i}]")))
        }
        Node::String { nullable, options } => match v {
            Json::Null if *nullable => {
                if options.as_ref().is_some_and(|o| !o.contains(&None)) {
                    return Err(AgentError::result(
                        place,
                        "null is not one of the enum's options",
                    ));
                }
                Ok(())
            }
            Json::String(s) => {
                if let Some(o) = options {
                    if !o.iter().any(|x| x.as_deref() == Some(s.as_str())) {
                        return Err(AgentError::result(place, "not one of the enum's options"));
                    }
                }
                Ok(())
            }
            _ => Err(wrong(if *nullable {
                "a string or null"
            } else {
                "a string"
            })),
        },
        Node::Integer { nullable, min, max } => match v {
            Json::Null if *nullable => Ok(()),
            Json::Number(Number::Int(i)) => {
                if min.is_some_and(|m| *i < m) || max.is_some_and(|m| *i > m) {
                    return Err(AgentError::result(
                        place,
                        format!("{i} is outside the schema's bounds"),
                    ));
                }
                Ok(())
            }
            _ => Err(wrong(if *nullable {
                "an integer or null"
            } else {
                "an integer"
            })),
        },
    }
}
