//! Tool results: a short text for people, structured JSON for programs.

use crate::model::Intent;
use crate::types::ToolResult;
use serde_json::{json, Value};

pub fn ok(content: impl Into<String>, structured: Value, outcome: Option<&str>) -> ToolResult {
    ToolResult {
        content: content.into(),
        structured: structured.to_string(),
        is_error: false,
        outcome: outcome.map(str::to_string),
    }
}

pub fn error(content: impl Into<String>, structured: Value, outcome: Option<&str>) -> ToolResult {
    ToolResult {
        content: content.into(),
        structured: structured.to_string(),
        is_error: true,
        outcome: outcome.map(str::to_string),
    }
}

pub fn preview_value(i: &Intent) -> Value {
    serde_json::from_str(&i.preview_json).unwrap_or(Value::Null)
}

/// An intent's state as tool results carry it.
pub fn intent_json(i: &Intent) -> Value {
    let mut v = json!({
        "intent_id": i.id.to_string(),
        "status": i.status.as_str(),
        "preview": preview_value(i),
        "digest": hex::encode(i.digest),
        "confirm": { "method": "confirm", "intent_id": i.id, "digest": hex::encode(i.digest) },
    });
    if let Some(o) = &i.outcome {
        v["outcome"] = json!(o);
    }
    if let Some(f) = &i.finding {
        v["finding"] = json!(f);
    }
    if let Some(r) = &i.reply_json {
        v["reply"] = serde_json::from_str(r).unwrap_or(Value::Null);
    }
    v
}

/// The title and the intent's main arguments in one line, for `content`.
pub fn headline(i: &Intent) -> String {
    let p = preview_value(i);
    let title = p["title"].as_str().unwrap_or(&i.method).to_string();
    match p.get("arguments") {
        Some(Value::Object(args)) => {
            let shown: Vec<String> = ["amount", "to", "spender"]
                .iter()
                .filter_map(|k| {
                    args.get(*k)
                        .and_then(Value::as_str)
                        .map(|v| format!("{k} {v}"))
                })
                .collect();
            if shown.is_empty() {
                title
            } else {
                format!("{title} ({})", shown.join(", "))
            }
        }
        _ => title,
    }
}
