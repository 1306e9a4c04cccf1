//! Reading a builtin's input: a JSON object whose keys are the builtin's own, `null` for an
//! optional input meaning absent (models send it), and every text bounded in characters (as
//! JSON Schema's `maxLength` counts them) so the schema and the reader refuse the same texts.

use crate::issue::{Code, Issue};
use serde_json::{Map, Value};

pub(crate) fn issue(param: &str, code: Code, message: impl Into<String>) -> Issue {
    Issue {
        param: param.to_string(),
        path: if param.is_empty() {
            "$input".to_string()
        } else {
            format!("$input.{param}")
        },
        code,
        message: message.into(),
    }
}

pub(crate) fn one(param: &str, code: Code, message: impl Into<String>) -> Vec<Issue> {
    vec![issue(param, code, message)]
}

/// A builtin's input, checked for being an object with only the builtin's keys.
pub(crate) struct Input<'a> {
    members: &'a Map<String, Value>,
}

impl<'a> Input<'a> {
    pub(crate) fn new(
        input: &'a Value,
        tool: &str,
        keys: &[&str],
    ) -> Result<Input<'a>, Vec<Issue>> {
        let Some(members) = input.as_object() else {
            return Err(one(
                "",
                Code::Input,
                format!(
                    "{tool} takes a JSON object (with {}), not {}",
                    keys.join(", "),
                    kind(input)
                ),
            ));
        };
        let unknown: Vec<Issue> = members
            .keys()
            .filter(|k| !keys.contains(&k.as_str()))
            .map(|k| {
                issue(
                    k,
                    Code::UnknownParam,
                    format!(
                        "{tool} takes no input {k:?}; its inputs are {}",
                        keys.join(", ")
                    ),
                )
            })
            .collect();
        if unknown.is_empty() {
            Ok(Input { members })
        } else {
            Err(unknown)
        }
    }

    /// The value of `key`, with `null` read as absent.
    pub(crate) fn value(&self, key: &str) -> Option<&'a Value> {
        self.members.get(key).filter(|v| !v.is_null())
    }

    /// An optional text of at most `max` characters.
    pub(crate) fn text(&self, key: &str, max: usize) -> Result<Option<&'a str>, Issue> {
        let Some(v) = self.value(key) else {
            return Ok(None);
        };
        let Some(s) = v.as_str() else {
            return Err(issue(
                key,
                Code::Type,
                format!("{key} is a text (a JSON string), not {}", kind(v)),
            ));
        };
        let chars = s.chars().count();
        if chars > max {
            return Err(issue(
                key,
                Code::TooLarge,
                format!("{key} is {chars} characters long, over the {max} allowed"),
            ));
        }
        Ok(Some(s))
    }

    /// A required text of at most `max` characters.
    pub(crate) fn required_text(&self, key: &str, max: usize) -> Result<&'a str, Issue> {
        self.text(key, max)?
            .ok_or_else(|| issue(key, Code::Missing, format!("{key} is required")))
    }

    /// An optional choice among `options`, taken exactly as written.
    pub(crate) fn choice(
        &self,
        key: &str,
        options: &[&'static str],
    ) -> Result<Option<&'static str>, Issue> {
        let Some(s) = self.text(key, 64)? else {
            return Ok(None);
        };
        options
            .iter()
            .copied()
            .find(|o| *o == s)
            .map(Some)
            .ok_or_else(|| {
                issue(
                    key,
                    Code::Format,
                    format!("{key} {s:?} is not one of {}", options.join(", ")),
                )
            })
    }

    pub(crate) fn required_choice(
        &self,
        key: &str,
        options: &[&'static str],
    ) -> Result<&'static str, Issue> {
        self.choice(key, options)?.ok_or_else(|| {
            issue(
                key,
                Code::Missing,
                format!("{key} is required: one of {}", options.join(", ")),
            )
        })
    }
}

/// ECMAScript's `\s` (WhiteSpace and LineTerminator): the schemas' `pattern: "\S"` and this
/// reader call the same texts blank (Rust's `is_whitespace` differs at U+0085 and U+FEFF).
pub(crate) fn ecma_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// A text that must hold more than white space.
pub(crate) fn not_blank(key: &str, s: &str) -> Result<(), Issue> {
    if s.chars().all(ecma_space) {
        Err(issue(
            key,
            Code::Missing,
            format!("{key} is blank: it must say something"),
        ))
    } else {
        Ok(())
    }
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
