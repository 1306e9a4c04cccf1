//! The JSON values every part of a form is made of: each misfit is a problem at its path.

use super::{kind, problem, At, Parser};
use crate::form::limits::MAX_NAME_CHARS;
use serde_json::{Map, Value};

impl Parser {
    pub(super) fn err(&mut self, path: &At<'_>, reason: impl Into<String>) {
        self.problems.push(problem(&path.to_string(), reason));
    }

    pub(super) fn object<'a>(
        &mut self,
        v: &'a Value,
        path: &At<'_>,
    ) -> Option<&'a Map<String, Value>> {
        match v {
            Value::Object(m) => Some(m),
            _ => {
                self.err(path, format!("expected an object, found {}", kind(v)));
                None
            }
        }
    }

    pub(super) fn known_keys(&mut self, m: &Map<String, Value>, path: &At<'_>, known: &[&str]) {
        for k in m.keys() {
            if !known.contains(&k.as_str()) {
                self.unknown_key(path, k, known);
            }
        }
    }

    /// Key `k` at `path` is none of `known`.
    pub(super) fn unknown_key(&mut self, path: &At<'_>, k: &str, known: &[&str]) {
        self.err(
            &path.key(k),
            format!("unknown key '{k}' (expected one of: {})", known.join(", ")),
        );
    }

    pub(super) fn text(&mut self, v: &Value, path: &At<'_>, max_chars: usize) -> Option<String> {
        match v {
            Value::String(s) => {
                let n = s.chars().count();
                if n > max_chars {
                    self.err(
                        path,
                        format!("{n} characters, over the limit of {max_chars}"),
                    );
                    None
                } else {
                    Some(s.clone())
                }
            }
            _ => {
                self.err(path, format!("expected a string, found {}", kind(v)));
                None
            }
        }
    }

    pub(super) fn name(&mut self, v: &Value, path: &At<'_>) -> Option<String> {
        let s = self.text(v, path, MAX_NAME_CHARS)?;
        if s.is_empty() {
            self.err(path, "a name may not be empty");
            return None;
        }
        Some(s)
    }

    pub(super) fn boolean(&mut self, v: &Value, path: &At<'_>) -> Option<bool> {
        match v {
            Value::Bool(b) => Some(*b),
            _ => {
                self.err(path, format!("expected true or false, found {}", kind(v)));
                None
            }
        }
    }
}
