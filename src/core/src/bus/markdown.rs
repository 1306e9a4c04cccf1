//! The tools as Markdown, for a model with no tools API: a heading per tool, its description,
//! its inputs as a list, and one line saying how to call a tool in a reply. The label is
//! dropped (the model does not gate; the host does).

use super::decl::ToolDecl;
use serde_json::Value;
use std::fmt::Write as _;

/// How a model with no tools API calls one: the host reads this object from its reply.
pub const CALL_LINE: &str = "To call a tool, reply with one JSON object and nothing else: {\"tool\": \"<tool name>\", \"input\": {<the inputs by name>}}.";

pub(super) fn render(decls: &[&ToolDecl]) -> String {
    let mut out = header();
    for d in decls {
        section(d, &mut out);
    }
    out
}

/// What every Markdown listing (and every page of one) starts with.
pub fn header() -> String {
    let mut out = String::from("# Tools\n\n");
    out.push_str(CALL_LINE);
    out.push('\n');
    out
}

/// One tool's part of a listing: its heading, title, description and inputs.
pub(super) fn section(d: &ToolDecl, out: &mut String) {
    out.push_str(&format!("\n## {}\n\n", d.name));
    if !d.title.is_empty() && d.title != d.name {
        out.push_str(&format!("**{}**\n\n", d.title));
    }
    out.push_str(d.description.trim());
    out.push_str("\n\nInputs:\n\n");
    let before = out.len();
    inputs(&d.input_schema, 0, out);
    if out.len() == before {
        out.push_str("- none\n");
    }
}

fn inputs(schema: &Value, depth: usize, out: &mut String) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, s) in props {
        let need = if required.contains(&name.as_str()) {
            "required"
        } else {
            "optional"
        };
        out.push_str(&"  ".repeat(depth));
        out.push_str(&format!("- `{name}` "));
        out.push_str(&property_rest(s, need));
        out.push('\n');
        inputs(object_of(s), depth + 1, out);
    }
}

/// A property's line after its name: its type, whether it is required, its description and
/// its allowed values.
pub(super) fn property_rest(s: &Value, need: &str) -> String {
    property_rest_at(s, need).0
}

/// [`property_rest`], and where its enum's first option begins (its backquote) when it has
/// an enum of one option or more: a canister part's options are put in there
/// (`bus::splice::one_more`).
pub(super) fn property_rest_at(s: &Value, need: &str) -> (String, Option<usize>) {
    let mut line = property_head(s, need);
    let mut at = None;
    match s.get("enum").and_then(Value::as_array) {
        // Written in place: a canister part's enum names every canister of its form (each
        // option copied three times over, it cost a registration ~1 K a canister a form).
        Some(e) => {
            for (i, v) in e.iter().enumerate() {
                if i == 0 {
                    line.push_str(ALLOWED);
                    at = Some(line.len());
                    line.push('`');
                } else {
                    line.push_str(", `");
                }
                push_json(&mut line, v);
                line.push('`');
            }
            if !e.is_empty() {
                line.push('.');
            }
        }
        None => {
            let allowed = allowed(s);
            if !allowed.is_empty() {
                line.push_str(ALLOWED);
                line.push_str(&allowed.join(", "));
                line.push('.');
            }
        }
    }
    (line, at)
}

/// What comes before a property's allowed values.
pub(super) const ALLOWED: &str = " Allowed values: ";

/// A property's line after its name up to its allowed values: its type, whether it is
/// required and its description.
pub(super) fn property_head(s: &Value, need: &str) -> String {
    let mut line = format!("({}, {need})", type_words(s));
    if let Some(d) = description(s) {
        line.push_str(": ");
        line.push_str(d.trim());
    }
    line
}

/// Whether [`property_rest`] writes string `s`, an enum option, as it is between quotes.
fn written_as_is(s: &str) -> bool {
    !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)
}

/// `v`'s compact JSON (as it displays). A string JSON writes as it is (no quote, backslash or
/// control character) is copied between quotes: a canister part's enum names every canister
/// of its form, and each principal displayed cost ~1.5 K instructions.
fn push_json(line: &mut String, v: &Value) {
    match v {
        Value::String(s) if written_as_is(s) => {
            line.push('"');
            line.push_str(s);
            line.push('"');
        }
        // A `Value` displays as its compact JSON; writing to a `String` cannot fail.
        _ => {
            let _ = write!(line, "{v}");
        }
    }
}

/// The object schema of a property, looking through a nullable `anyOf` and an array's `items`.
fn object_of(s: &Value) -> &Value {
    if let Some(items) = s.get("items") {
        return object_of(items);
    }
    match s.get("anyOf").and_then(Value::as_array) {
        Some(members) => members
            .iter()
            .find(|m| m.get("properties").is_some())
            .unwrap_or(s),
        None => s,
    }
}

fn description(s: &Value) -> Option<&str> {
    s.get("description").and_then(Value::as_str).or_else(|| {
        s.get("anyOf")?
            .as_array()?
            .iter()
            .find_map(|m| m.get("description")?.as_str())
    })
}

fn type_words(s: &Value) -> String {
    if let Some(t) = s.get("type") {
        return match t {
            Value::String(t) => t.clone(),
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
            _ => "any".into(),
        };
    }
    if let Some(members) = s.get("anyOf").and_then(Value::as_array) {
        return members
            .iter()
            .map(type_words)
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if let Some(cases) = s.get("oneOf").and_then(Value::as_array) {
        return format!("one of {} cases", cases.len());
    }
    if s.get("const").is_some() {
        return "constant".into();
    }
    "any".into()
}

/// A value as code: its compact JSON between backticks (`{v}`'s text, written by serde_json's
/// own writer rather than through `Display`, several times dearer a byte: a canister's enum
/// lists every canister its form applies to, in every tool).
fn code(v: &Value) -> String {
    let json = serde_json::to_string(v).unwrap_or_default();
    let mut out = String::with_capacity(json.len() + 2);
    out.push('`');
    out.push_str(&json);
    out.push('`');
    out
}

fn allowed(s: &Value) -> Vec<String> {
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return e.iter().map(code).collect();
    }
    if let Some(c) = s.get("const") {
        return vec![code(c)];
    }
    if let Some(members) = s.get("anyOf").and_then(Value::as_array) {
        return members.iter().flat_map(allowed).collect();
    }
    if let Some(cases) = s.get("oneOf").and_then(Value::as_array) {
        return cases
            .iter()
            .filter_map(|c| c.pointer("/properties/tag/const"))
            .map(|t| format!("`{{\"tag\": {t}}}`"))
            .collect();
    }
    vec![]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An enum's options written in place are those `allowed` lists, joined.
    #[test]
    fn enum_options_are_written_as_listed() {
        for e in [
            json!([]),
            json!(["a"]),
            json!(["a\"b", "c\\d", "\u{e9}\u{1}", "x`y"]),
            json!(["", "\u{1f}", "\u{7f}", "\u{20}", "aaaaa-aa", "\u{e9}", "\t", "z\"", "\\"]),
            json!([1, null, true, { "k": [2] }]),
        ] {
            let s = json!({ "type": "string", "description": "D", "enum": e });
            let listed = allowed(&s);
            let want = if listed.is_empty() {
                "(string, required): D".to_string()
            } else {
                format!(
                    "(string, required): D Allowed values: {}.",
                    listed.join(", ")
                )
            };
            assert_eq!(property_rest(&s, "required"), want, "{e}");
        }
    }

    /// Each enum option is written as `Display` writes it, escapes and all.
    #[test]
    fn enum_options_read_as_display_writes_them() {
        let e = json!(["a", "a\"b\\c\n\u{1}é😀", 1, 1.5, -0.0, null, true, { "k": [1, "x"] }, 12345678901234567890u64]);
        let want: Vec<String> = e
            .as_array()
            .unwrap()
            .iter()
            .map(|v| format!("`{v}`"))
            .collect();
        assert_eq!(allowed(&json!({ "enum": e })), want);
    }
}
