//! Tool results: a short text for people, structured JSON for programs.

use crate::model::Intent;
use crate::types::ToolResult;
use serde_json::Value;

/// What can be a result's structured JSON.
pub trait Structured {
    fn to_json(&self) -> String;
}

impl Structured for Value {
    fn to_json(&self) -> String {
        self.to_string()
    }
}

impl Structured for Answer<'_> {
    /// Written by hand: the stored preview and reply are our own JSON and are spliced in as
    /// they are, rather than parsed and written again.
    fn to_json(&self) -> String {
        fn text(out: &mut String, key: &str, v: &str) {
            out.push_str(",\"");
            out.push_str(key);
            out.push_str("\":");
            out.push_str(&serde_json::to_string(v).unwrap_or_default());
        }
        let mut out =
            String::with_capacity(self.preview.len() + self.reply.map_or(0, str::len) + 320);
        // Digits and hex need no escaping.
        out.push_str("{\"intent_id\":\"");
        out.push_str(&self.intent_id);
        out.push('"');
        text(&mut out, "status", self.status);
        out.push_str(",\"preview\":");
        out.push_str(if self.preview.is_empty() {
            "null"
        } else {
            &self.preview
        });
        out.push_str(",\"digest\":\"");
        out.push_str(&self.digest);
        out.push_str("\",\"confirm\":{\"method\":\"confirm\",\"intent_id\":");
        out.push_str(&self.intent_id);
        out.push_str(",\"digest\":\"");
        out.push_str(&self.digest);
        out.push_str("\"}");
        for (key, v) in [
            ("outcome", self.outcome),
            ("earlier_outcome", self.earlier_outcome),
            ("finding", self.finding),
        ] {
            if let Some(v) = v {
                text(&mut out, key, v);
            }
        }
        if let Some(r) = self.reply {
            out.push_str(",\"reply\":");
            out.push_str(r);
        }
        if let Some(e) = &self.restamp_error {
            text(&mut out, "restamp_error", e);
        }
        out.push('}');
        out
    }
}

pub fn ok(
    content: impl Into<String>,
    structured: impl Structured,
    outcome: Option<&str>,
) -> ToolResult {
    result(false, content.into(), structured, outcome)
}

pub fn error(
    content: impl Into<String>,
    structured: impl Structured,
    outcome: Option<&str>,
) -> ToolResult {
    result(true, content.into(), structured, outcome)
}

fn result(
    is_error: bool,
    content: String,
    structured: impl Structured,
    outcome: Option<&str>,
) -> ToolResult {
    ToolResult {
        content,
        structured: structured.to_json(),
        is_error,
        outcome: outcome.map(str::to_string),
    }
}

/// An intent's state as tool results carry it.
pub struct Answer<'a> {
    /// The id's digits (written into the JSON unescaped).
    intent_id: String,
    pub status: &'a str,
    /// The preview JSON as shown (`Intent::preview_text`).
    preview: String,
    digest: String,
    pub outcome: Option<&'a str>,
    pub earlier_outcome: Option<&'a str>,
    finding: Option<&'a str>,
    reply: Option<&'a str>,
    pub restamp_error: Option<String>,
}

impl<'a> Answer<'a> {
    pub fn of(i: &'a Intent) -> Answer<'a> {
        Answer {
            intent_id: i.id.to_string(),
            status: i.status.as_str(),
            preview: i.preview_text(),
            digest: tool_host_core::text::bytes::to_hex(i.digest),
            outcome: i.outcome.as_deref(),
            earlier_outcome: None,
            finding: i.finding.as_deref(),
            reply: i.reply_json.as_deref(),
            restamp_error: None,
        }
    }
}

/// The title and the intent's main arguments in one line, for `content` (made once, at preparation).
pub fn summary(preview: &tool_host_core::display::Preview) -> String {
    // Pushed piece by piece: it is made for every prepared intent, and `format!` costs more.
    let mut out = preview.title.clone();
    if let Value::Object(args) = &preview.arguments {
        let mut first = true;
        for k in ["amount", "to", "spender"] {
            if let Some(v) = args.get(k).and_then(Value::as_str) {
                out.push_str(if first { " (" } else { ", " });
                out.push_str(k);
                out.push(' ');
                out.push_str(v);
                first = false;
            }
        }
        if !first {
            out.push(')');
        }
    }
    out
}
