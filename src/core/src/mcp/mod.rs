//! MCP's Streamable HTTP transport, stateless and JSON only: the HTTP checks (path, method,
//! sizes, content type, `Accept`, `MCP-Protocol-Version`), JSON-RPC 2.0 reading and answers,
//! `initialize` with version negotiation, `ping`, batches where the version has them,
//! `tools/list` pages and `tools/call` results. No state is kept between requests: the
//! protocol version of a request is its `MCP-Protocol-Version` header (2025-03-26 when absent,
//! as the transport says). The engine authenticates the caller and runs the tools
//! (`tool_host_engine::mcp`); docs/mcp.md.

mod jsonrpc;
mod transport;

pub use jsonrpc::*;
pub use transport::*;

use serde_json::{json, Map, Value};

/// The path MCP is served at.
pub const PATH: &str = "/mcp";
/// The protocol versions served, newest first.
pub const VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// What `initialize` answers when the client asks for a version not served.
pub const LATEST: &str = VERSIONS[0];
/// The version a request without `MCP-Protocol-Version` is read as (the transport's rule for
/// servers that cannot tell otherwise, and this one keeps no session).
pub const ASSUMED: &str = "2025-03-26";
/// The only version with JSON-RPC batches (2025-06-18 removed them).
pub const BATCH_VERSION: &str = "2025-03-26";

/// A request body's bound: a tool input's bound (64 KiB, `max_input_bytes`) with room for
/// JSON escaping and the envelope; far within the IC's 2 MiB ingress limit.
pub const MAX_BODY_BYTES: usize = 128 * 1024;
/// Headers: at most this many, of at most this many bytes (names and values) in all.
pub const MAX_HEADERS: usize = 64;
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// The URL's bound (path and query).
pub const MAX_URL_BYTES: usize = 2048;
/// A reply body's bound: within the IC's 2 MiB reply limit of an update (3 MiB for a query),
/// with room for the Candid envelope and headers. A reply over it is refused with -32603, never cut.
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;
/// Messages in one batch (2025-03-26 only).
pub const MAX_BATCH: usize = 16;
/// Tools in one `tools/list` page.
pub const PAGE_SIZE: usize = 32;
/// The JSON of one `tools/list` page's tools at most (a tool larger comes alone): far inside
/// [`MAX_REPLY_BYTES`] unless one tool alone is larger.
pub const PAGE_BYTES: usize = 256 * 1024;
/// A cursor's bound (hex of a tool name of at most 128 bytes).
pub const MAX_CURSOR_BYTES: usize = 256;

pub fn is_supported(version: &str) -> bool {
    VERSIONS.contains(&version)
}

/// The version `initialize` answers: the client's when served, else the latest.
pub fn negotiate(requested: &str) -> &'static str {
    VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LATEST)
}

/// What the server says about itself.
pub struct ServerInfo<'a> {
    pub name: &'a str,
    pub version: &'a str,
    pub instructions: &'a str,
}

/// `initialize`'s result, or -32602 when `params.protocolVersion` is not a string.
pub fn initialize(params: Option<&Value>, info: &ServerInfo) -> Result<Value, RpcError> {
    let requested = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            RpcError::invalid_params("initialize needs params.protocolVersion, a string")
        })?;
    Ok(json!({
        "protocolVersion": negotiate(requested),
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": info.name, "version": info.version },
        "instructions": info.instructions,
    }))
}

/// `tools/list`'s params: the cursor read back to the name of the last tool given before.
pub fn list_after(params: Option<&Value>) -> Result<Option<String>, RpcError> {
    // `"cursor": null` is no cursor, as an absent one (clients that serialize an unset field).
    let Some(c) = params
        .and_then(|p| p.get("cursor"))
        .filter(|c| !c.is_null())
    else {
        return Ok(None);
    };
    let bad = || RpcError::invalid_params("params.cursor is not a cursor this server gave");
    let c = c.as_str().ok_or_else(bad)?;
    if c.len() > MAX_CURSOR_BYTES || c.len() % 2 != 0 || c.is_empty() {
        return Err(bad());
    }
    let bytes = hex::decode(c).map_err(|_| bad())?;
    let name = String::from_utf8(bytes).map_err(|_| bad())?;
    Ok(Some(name))
}

/// A page of `tools` (name and compact JSON, sorted by name): those after `after`, at most
/// [`PAGE_SIZE`] and [`PAGE_BYTES`] of JSON (at least one, whole), and `nextCursor` when more
/// follow. The cursor is the last name given (hex): a tool added or removed between pages moves
/// no other tool in or out of later pages. The tools' text is copied, not parsed (each as the
/// catalog keeps it, whole or around its form's canister part).
pub fn list_page(tools: &[(&str, &crate::bus::kept::Text)], after: Option<&str>) -> Answer {
    let start = match after {
        Some(a) => tools.partition_point(|(name, _)| *name <= a),
        None => 0,
    };
    let mut text = String::from("{\"tools\":[");
    let (mut count, mut bytes) = (0, 0);
    for (_, json) in tools.iter().skip(start).take(PAGE_SIZE) {
        if count > 0 && bytes + json.len() > PAGE_BYTES {
            break;
        }
        if count > 0 {
            text.push(',');
        }
        json.push_to(&mut text);
        bytes += json.len();
        count += 1;
    }
    text.push(']');
    if count > 0 && start + count < tools.len() {
        if let Some((last, _)) = tools.get(start + count - 1) {
            text.push_str(",\"nextCursor\":\"");
            text.push_str(&hex::encode(last));
            text.push('"');
        }
    }
    text.push('}');
    Answer::Text(text)
}

/// `tools/call`'s params: the tool's name and its arguments as JSON text (`{}` when absent).
pub fn call_params(params: Option<&Value>) -> Result<(String, String), RpcError> {
    let p = params
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::invalid_params("tools/call needs params with a name"))?;
    let name = p
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("params.name is the tool's name, a string"))?;
    let args = match p.get("arguments") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(v @ Value::Object(_)) => v.to_string(),
        Some(_) => {
            return Err(RpcError::invalid_params(
                "params.arguments is the tool input, a JSON object",
            ))
        }
    };
    Ok((name.to_string(), args))
}

/// A `tools/call` result: the text (and the structured JSON as text too, as the spec asks of
/// tools with structured content), `structuredContent` when there is one, and `isError`.
pub fn tool_result(text: &str, structured: Option<Value>, is_error: bool) -> Value {
    let mut content = vec![json!({ "type": "text", "text": text })];
    let mut out = Map::new();
    if let Some(s) = structured {
        content.push(json!({ "type": "text", "text": s.to_string() }));
        out.insert("structuredContent".into(), s);
    }
    out.insert("content".into(), Value::Array(content));
    out.insert("isError".into(), json!(is_error));
    Value::Object(out)
}

/// The shape of an intent's answer (`prepare_*`, `commit`): MCP's `outputSchema` for them.
/// Every answer has `intent_id` (digits, as text), `status`, `preview` (`null` for an intent
/// whose preview was not kept), `digest` (hex of SHA-256 of the argument bytes) and `confirm`
/// (the owner's exact `confirm` argument); the other fields come with sends and decisions.
pub fn intent_answer_schema() -> Value {
    let text = json!({ "type": "string" });
    json!({
        "type": "object",
        "properties": {
            "intent_id": { "type": "string", "pattern": "^[0-9]+$" },
            "status": text,
            "preview": { "type": ["object", "null"] },
            "digest": { "type": "string", "pattern": "^[0-9a-f]{64}$" },
            "confirm": {
                "type": "object",
                "properties": {
                    "method": { "const": "confirm" },
                    "intent_id": { "type": "integer", "minimum": 0 },
                    "digest": { "type": "string", "pattern": "^[0-9a-f]{64}$" }
                },
                "required": ["method", "intent_id", "digest"]
            },
            "outcome": text,
            "earlier_outcome": text,
            "finding": text,
            "reply": {},
            "restamp_error": text
        },
        "required": ["intent_id", "status", "preview", "digest", "confirm"]
    })
}

/// A JSON-RPC error as a tool's caller reads it: the engine's refusal (code, message, issues)
/// in `data`.
pub fn error_data(code: &str, issues: Value) -> Value {
    json!({ "code": code, "issues": issues })
}
