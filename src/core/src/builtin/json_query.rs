//! `json_query`: one value out of a JSON document by path. The document is read as JSON/0
//! (`agent::json`: duplicate keys refused, numbers within ±(2^53 − 1), bounded depth).
//!
//! Path grammar: an optional `$`, then steps: `name` (first step) or `.name` (a member; a name
//! is letters, digits, `_` and `-`), `["any key"]` (a JSON string: any member name), `[3]` (an
//! array index from 0), `[*]` or `.*` (every element of an array, or every member value of an
//! object, in order). After a wildcard the rest of the path applies to each element; elements
//! where it does not match are skipped, and the matches come back as an array.

use crate::agent::json::{self as json0, Json, JsonLimits};
use crate::builtin::input::{issue, Input};
use crate::issue::{Code, Issue};
use serde_json::{json, Value};

/// The largest document read: 2^20 characters (so at most 4 MiB of UTF-8), 64 levels,
/// 100 000 values. The character bound is the schema's `maxLength`; the byte bound never binds
/// before it.
pub const DOCUMENT: JsonLimits = JsonLimits {
    max_bytes: 4 << 20,
    max_depth: 64,
    max_values: 100_000,
};

/// The longest path read, in characters.
pub const MAX_PATH: usize = 1000;

/// The most characters of document text taken (as JSON Schema's `maxLength` counts).
pub const MAX_DOCUMENT_CHARS: usize = 1 << 20;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
    Each,
}

/// A path refused: the 1-based character and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError {
    pub position: usize,
    pub message: String,
}

fn perr(position: usize, message: impl Into<String>) -> PathError {
    PathError {
        position,
        message: message.into(),
    }
}

fn name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

pub fn parse_path(path: &str) -> Result<Vec<Step>, PathError> {
    let chars: Vec<char> = path.chars().collect();
    let mut i = 0;
    let mut steps = Vec::new();
    if chars.first() == Some(&'$') {
        i = 1;
    }
    let bare_first = i == 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '.' || (bare_first && steps.is_empty() && i == 0 && name_char(c)) {
            let start = if c == '.' { i + 1 } else { i };
            if chars.get(start) == Some(&'*') {
                steps.push(Step::Each);
                i = start + 1;
                continue;
            }
            let mut j = start;
            while j < chars.len() && name_char(chars[j]) {
                j += 1;
            }
            if j == start {
                return Err(perr(
                    start + 1,
                    "a . is followed by a member name (letters, digits, _ or -), or * ; write [\"...\"] for any other key",
                ));
            }
            steps.push(Step::Key(chars[start..j].iter().collect()));
            i = j;
        } else if c == '[' {
            let open = i + 1;
            match chars.get(i + 1) {
                Some('*') => {
                    if chars.get(i + 2) != Some(&']') {
                        return Err(perr(i + 3, "[* is closed by ]"));
                    }
                    steps.push(Step::Each);
                    i += 3;
                }
                Some('"') => {
                    let (key, next) = quoted(&chars, i + 1)?;
                    if chars.get(next) != Some(&']') {
                        return Err(perr(
                            next + 1,
                            format!("the [ at character {open} is closed by ] after its key"),
                        ));
                    }
                    steps.push(Step::Key(key));
                    i = next + 1;
                }
                Some(d) if d.is_ascii_digit() => {
                    let mut j = i + 1;
                    while j < chars.len() && chars[j].is_ascii_digit() {
                        j += 1;
                    }
                    let digits: String = chars[i + 1..j].iter().collect();
                    if digits.len() > 1 && digits.starts_with('0') {
                        return Err(perr(i + 2, "an index has no leading zeros"));
                    }
                    let index: usize = digits
                        .parse()
                        .map_err(|_| perr(i + 2, "the index is too large"))?;
                    if chars.get(j) != Some(&']') {
                        return Err(perr(
                            j + 1,
                            format!("the [ at character {open} is closed by ] after its index"),
                        ));
                    }
                    steps.push(Step::Index(index));
                    i = j + 1;
                }
                Some('-') => {
                    return Err(perr(
                        i + 2,
                        "an index counts from 0 at the start; negative indexes are not taken",
                    ))
                }
                _ => {
                    return Err(perr(
                        i + 2,
                        "[ is followed by an index (0, 1, ...), * or a key in double quotes",
                    ))
                }
            }
        } else {
            return Err(perr(
                i + 1,
                format!("{c:?} cannot start a step: steps are .name, [index], [*] or [\"key\"]"),
            ));
        }
    }
    Ok(steps)
}

/// A JSON string literal starting at `chars[at]` (a `"`): its text and the index after it.
fn quoted(chars: &[char], at: usize) -> Result<(String, usize), PathError> {
    let mut j = at + 1;
    let mut escaped = false;
    while j < chars.len() {
        match chars[j] {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => {
                let literal: String = chars[at..=j].iter().collect();
                let key: String = serde_json::from_str(&literal)
                    .map_err(|e| perr(at + 1, format!("the key is not a JSON string: {e}")))?;
                return Ok((key, j + 1));
            }
            _ => escaped = false,
        }
        j += 1;
    }
    Err(perr(at + 1, "the key's \" is never closed"))
}

/// Every match of `steps` in `doc`, in document order.
pub fn matches<'a>(doc: &'a Json, steps: &[Step], out: &mut Vec<&'a Json>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(doc);
        return;
    };
    match (step, doc) {
        (Step::Key(k), Json::Object(_)) => {
            if let Some(v) = doc.get(k) {
                matches(v, rest, out);
            }
        }
        (Step::Index(i), Json::Array(items)) => {
            if let Some(v) = items.get(*i) {
                matches(v, rest, out);
            }
        }
        (Step::Each, Json::Array(items)) => {
            for v in items {
                matches(v, rest, out);
            }
        }
        (Step::Each, Json::Object(members)) => {
            for (_, v) in members {
                matches(v, rest, out);
            }
        }
        _ => {}
    }
}

/// The answer: `{ found: false }`, or `{ found: true, value }` (an array of the matches when the
/// path has a wildcard).
pub fn query(doc: &Json, steps: &[Step]) -> Value {
    let mut found = Vec::new();
    matches(doc, steps, &mut found);
    let to_value = |j: &Json| serde_json::to_value(j).unwrap_or(Value::Null);
    if found.is_empty() {
        return json!({ "found": false });
    }
    if steps.contains(&Step::Each) {
        let values: Vec<Value> = found.into_iter().map(to_value).collect();
        json!({ "found": true, "value": values })
    } else {
        json!({ "found": true, "value": to_value(found[0]) })
    }
}

pub(crate) fn run(input: &Value) -> Result<Value, Vec<Issue>> {
    let input = Input::new(input, "json_query", &["document", "path"])?;
    let document = input.required_text("document", MAX_DOCUMENT_CHARS);
    let path = input.required_text("path", MAX_PATH);
    let mut issues = Vec::new();
    let steps = match path {
        Ok(p) => match parse_path(p) {
            Ok(s) => Some(s),
            Err(e) => {
                issues.push(issue(
                    "path",
                    Code::Syntax,
                    format!("at character {}: {}", e.position, e.message),
                ));
                None
            }
        },
        Err(i) => {
            issues.push(i);
            None
        }
    };
    let doc = match document {
        Ok(d) => match json0::parse(d, &DOCUMENT, "document") {
            Ok(j) => Some(j),
            Err(e) => {
                let code = if e.code == crate::agent::AgentErrorCode::ResourceExhausted {
                    Code::TooLarge
                } else {
                    Code::Syntax
                };
                issues.push(issue(
                    "document",
                    code,
                    format!("the document is not JSON this reads: {}", e.message),
                ));
                None
            }
        },
        Err(i) => {
            issues.push(i);
            None
        }
    };
    match (doc, steps) {
        (Some(doc), Some(steps)) if issues.is_empty() => Ok(query(&doc, &steps)),
        _ => Err(issues),
    }
}

pub(crate) fn decl_parts() -> (String, Value, Value) {
    let description = "One value out of a JSON document, by path, instead of reading it by eye. \
        document is the JSON text; path is like invoices[0].total, invoices[*].lines[0].sku or \
        [\"key with.dot\"] ($ at the start optional). After [*] the rest of the path applies to \
        each element, and the matches come back as an array. Nothing matching is found: false \
        (never null)."
        .to_string();
    let input = json!({
        "type": "object",
        "properties": {
            "document": { "type": "string", "maxLength": MAX_DOCUMENT_CHARS, "description": "The JSON document, as text." },
            "path": { "type": "string", "maxLength": MAX_PATH, "description": "For example invoices[0].total or invoices[*].lines[0].sku." }
        },
        "required": ["document", "path"],
        "additionalProperties": false
    });
    let output = json!({
        "type": "object",
        "properties": {
            "found": { "type": "boolean" },
            "value": { "description": "The value found; an array of every match when the path has a wildcard." }
        },
        "required": ["found"],
        "additionalProperties": false
    });
    (description, input, output)
}
