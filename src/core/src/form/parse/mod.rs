//! Reading a resolved form from JSON: every problem at once, each with its JSON path.
//!
//! One [`Parser`] collects the problems; its methods are split by what they read:
//! [`values`] the JSON values every part is made of (objects, keys, text, names), [`methods`]
//! the form's top level (methods, name sets, effects, stamps, outcomes), [`types`] type nodes
//! (records, variants, functions, services) and [`tags`] the tags a node carries.

mod methods;
mod tags;
mod types;
mod values;

use super::limits::*;
use super::model::*;
use serde::Serialize;
use serde_json::Value;

/// One reason a form is refused, at a JSON path (`$.methods.icrc1_transfer.args[0]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: String,
    pub reason: String,
}

pub const FORMAT: &str = "candid-profile-resolved";
pub const FORMAT_VERSION: u64 = 0;

/// Parses and validates a form from raw bytes; never panics.
pub fn parse_form(bytes: &[u8]) -> Result<Form, Vec<Problem>> {
    if bytes.len() > MAX_FORM_BYTES {
        return Err(vec![problem(
            "$",
            format!(
                "the form is {} bytes, over the limit of {MAX_FORM_BYTES}",
                bytes.len()
            ),
        )]);
    }
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| vec![problem("$", format!("not JSON: {e}"))])?;
    form_from_json(&value)
}

/// Validates a form already parsed as JSON.
pub fn form_from_json(value: &Value) -> Result<Form, Vec<Problem>> {
    let mut p = Parser::default();
    let form = p.form(value);
    if let Some(form) = &form {
        // Checked even when parts failed to parse, so that every problem is listed at once.
        let parsed_whole = p.problems.is_empty();
        super::check::check_form(form, &mut p.problems, parsed_whole);
    }
    match form {
        Some(form) if p.problems.is_empty() => Ok(form),
        _ => Err(p.problems),
    }
}

fn problem(path: &str, reason: impl Into<String>) -> Problem {
    Problem {
        path: path.to_string(),
        reason: reason.into(),
    }
}

/// A place in a form, as a problem names it (`$.methods.icrc1_transfer.args[0]`): written out
/// only when a problem is found there, not at every place read (each place written out cost
/// a stored form ~0.5 M of its ~2.2 M parse, at every catalog build after an upgrade).
#[derive(Clone, Copy)]
pub(crate) enum At<'a> {
    Root,
    /// `.name`: a key the format names (always plain).
    Field(&'a At<'a>, &'a str),
    /// A key of the form's own: `.key` when plain, `["key"]` otherwise.
    Key(&'a At<'a>, &'a str),
    Index(&'a At<'a>, usize),
}

pub(crate) static ROOT: At<'static> = At::Root;
pub(crate) static TYPES: At<'static> = At::Field(&ROOT, "types");
pub(crate) static NAMES: At<'static> = At::Field(&ROOT, "names");
pub(crate) static METHODS: At<'static> = At::Field(&ROOT, "methods");

impl<'a> At<'a> {
    pub(crate) fn field(&'a self, name: &'a str) -> At<'a> {
        At::Field(self, name)
    }

    pub(crate) fn key(&'a self, key: &'a str) -> At<'a> {
        At::Key(self, key)
    }

    pub(crate) fn index(&'a self, i: usize) -> At<'a> {
        At::Index(self, i)
    }
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Root => f.write_str("$"),
            At::Field(at, name) => write!(f, "{at}.{name}"),
            At::Key(at, key)
                if !key.is_empty()
                    && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                write!(f, "{at}.{key}")
            }
            At::Key(at, key) => write!(f, "{at}[{}]", Value::String(key.to_string())),
            At::Index(at, i) => write!(f, "{at}[{i}]"),
        }
    }
}

/// Reads one form, collecting every problem instead of stopping at the first.
#[derive(Default)]
struct Parser {
    /// Every problem found so far, in reading order.
    problems: Vec<Problem>,
    /// Type nodes read so far, against `MAX_NODES`.
    nodes: usize,
}

/// Defaults the host fills from the owner of the intent, never from the input.
pub const OWNER_SOURCES: [&str; 3] = ["owner:subaccount", "owner:account", "owner:principal"];

const CONSTRUCTORS: [&str; 7] = ["opt", "vec", "record", "variant", "blob", "func", "service"];
/// The keys a type node may have: its tags, and those of every node (listed in this order
/// when a key is not known, with the keys of its constructor after them).
const TAG_KEYS: [&str; 9] = [
    "value", "describe", "auto", "ui", "text", "range", "named", "intent", "effect",
];
const NODE_KEYS: [&str; 3] = ["type", "name", "id"];

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value shown in a message, cut short so a message stays small.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}
