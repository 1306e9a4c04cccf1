//! The declaration checks: each rule a provider documents (and would otherwise enforce with an
//! opaque 400, or not at all), stated here with the provider it comes from. See docs/bus.md.

use super::decl::{DeclIssue, ToolDecl};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// Tool descriptions: OpenAI refuses a function description over 1 024 characters
/// (`string_above_max_length`), the tightest bound of the three providers; an empty one gives a
/// model nothing to choose by.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Property descriptions: no provider states one; the tool's bound, so that one input never
/// says more than the whole tool may.
pub const MAX_PROPERTY_DESCRIPTION_CHARS: usize = 1024;

/// A provider's rule for a name: who, the rule as documented, its length bounds and characters.
pub struct NameRule {
    pub provider: &'static str,
    pub rule: &'static str,
    pub max_len: usize,
    pub extra: &'static [char],
}

impl NameRule {
    pub fn allows(&self, name: &str) -> bool {
        !name.is_empty()
            && name.len() <= self.max_len
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || self.extra.contains(&c))
    }
}

/// The tool-name rules of the providers the bus renders for.
pub const TOOL_NAME_RULES: [NameRule; 3] = [
    NameRule {
        provider: "OpenAI",
        rule: "function names match ^[a-zA-Z0-9_-]{1,64}$",
        max_len: 64,
        extra: &['_', '-'],
    },
    NameRule {
        provider: "Anthropic",
        rule: "tool names match ^[a-zA-Z0-9_-]{1,64}$",
        max_len: 64,
        extra: &['_', '-'],
    },
    NameRule {
        provider: "MCP 2025-11-25",
        rule: "tool names are 1 to 128 characters of A-Z a-z 0-9 _ - .",
        max_len: 128,
        extra: &['_', '-', '.'],
    },
];

/// Anthropic's rule for `input_schema` property keys (its 400 names the pattern).
pub const PROPERTY_KEY_RULE: NameRule = NameRule {
    provider: "Anthropic",
    rule: "input_schema property keys match ^[a-zA-Z0-9_.-]{1,64}$",
    max_len: 64,
    extra: &['_', '.', '-'],
};

pub(super) fn issues(decl: &ToolDecl) -> Vec<DeclIssue> {
    let mut out = Issues {
        tool: &decl.name,
        list: vec![],
    };
    for r in &TOOL_NAME_RULES {
        if !r.allows(&decl.name) {
            out.push(
                "name",
                format!(
                    "{:?} is not a name {} takes: {}",
                    decl.name, r.provider, r.rule
                ),
            );
        }
    }
    let chars = decl.description.chars().count();
    if decl.description.trim().is_empty() {
        out.push(
            "description",
            "the description is empty: a model chooses a tool by it".into(),
        );
    } else if chars > MAX_DESCRIPTION_CHARS {
        out.push(
            "description",
            format!("the description has {chars} characters; OpenAI takes at most {MAX_DESCRIPTION_CHARS}"),
        );
    }
    let root = &decl.input_schema;
    if root.get("type").and_then(Value::as_str) != Some("object") {
        out.push(
            "inputSchema",
            "the input schema's root is not `type: object`: Anthropic's input_schema, OpenAI's parameters and MCP's inputSchema are objects".into(),
        );
    }
    walk(root, "inputSchema", &mut out);
    out.list
}

/// The issues of one property's schema at `path` (`inputSchema.properties.<name>`), as
/// [`issues`] finds them there.
pub(super) fn property_issues(tool: &str, node: &Value, path: &str) -> Vec<DeclIssue> {
    let mut out = Issues { tool, list: vec![] };
    walk(node, path, &mut out);
    out.list
}

struct Issues<'a> {
    tool: &'a str,
    list: Vec<DeclIssue>,
}

impl Issues<'_> {
    fn push(&mut self, path: &str, message: String) {
        self.list.push(DeclIssue {
            tool: self.tool.to_string(),
            path: path.to_string(),
            message,
        });
    }
}

/// Keywords whose value is one subschema, a list of them, or a map of them.
const ONE: [&str; 7] = [
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "additionalProperties",
];
const LIST: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP: [&str; 4] = ["properties", "patternProperties", "$defs", "definitions"];

fn walk(node: &Value, path: &str, out: &mut Issues) {
    let Some(m) = node.as_object() else { return };
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        for key in props.keys() {
            if !PROPERTY_KEY_RULE.allows(key) {
                out.push(
                    &format!("{path}.properties"),
                    format!(
                        "{key:?} is not a property key {} takes: {}",
                        PROPERTY_KEY_RULE.provider, PROPERTY_KEY_RULE.rule
                    ),
                );
            }
        }
    }
    if path != "inputSchema" {
        if let Some(d) = m.get("description").and_then(Value::as_str) {
            let n = d.chars().count();
            if n > MAX_PROPERTY_DESCRIPTION_CHARS {
                out.push(
                    &format!("{path}.description"),
                    format!("the description has {n} characters; at most {MAX_PROPERTY_DESCRIPTION_CHARS} (the bound of a whole tool's description)"),
                );
            }
        }
    }
    if let Some(e) = m.get("enum") {
        check_enum(e, &format!("{path}.enum"), out);
    }
    for k in ONE {
        if let Some(v) = m.get(k) {
            walk(v, &format!("{path}.{k}"), out);
        }
    }
    for k in LIST {
        if let Some(Value::Array(items)) = m.get(k) {
            for (i, v) in items.iter().enumerate() {
                walk(v, &format!("{path}.{k}[{i}]"), out);
            }
        }
    }
    for k in MAP {
        if let Some(Value::Object(children)) = m.get(k) {
            for (name, v) in children {
                walk(v, &format!("{path}.{k}.{name}"), out);
            }
        }
    }
}

fn check_enum(e: &Value, path: &str, out: &mut Issues) {
    let Some(options) = e.as_array().filter(|a| !a.is_empty()) else {
        out.push(path, "an enum is a non-empty array of options (JSON Schema; a model could send nothing that fits)".into());
        return;
    };
    // Strings in strictly ascending order are unique, and a canister part's enum is sorted
    // (it lists every canister its form applies to; kept in a set, it cost 1.3 K instructions
    // a canister). Other options are compared as JSON values: a string by its text (not
    // serialized), anything else by its JSON text, so that "1" and 1 stay two options.
    let ascending = options.windows(2).all(|w| match (&w[0], &w[1]) {
        (Value::String(a), Value::String(b)) => a < b,
        _ => false,
    });
    let mut seen: BTreeSet<(bool, Cow<str>)> = BTreeSet::new();
    for (i, o) in options.iter().enumerate() {
        if o.as_str().is_some_and(|s| s.trim().is_empty()) {
            out.push(
                &format!("{path}[{i}]"),
                "a blank enum option: a model cannot tell it means anything".into(),
            );
        }
        if ascending {
            continue;
        }
        let key = match o {
            Value::String(s) => (true, Cow::Borrowed(s.as_str())),
            _ => (false, Cow::Owned(o.to_string())),
        };
        if !seen.insert(key) {
            out.push(
                &format!("{path}[{i}]"),
                format!(
                    "the enum option {o} is given twice (JSON Schema wants its options unique)"
                ),
            );
        }
    }
}
