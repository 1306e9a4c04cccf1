//! JSON-RPC 2.0 as MCP uses it: requests (an `id` that is a string or an integer, never null),
//! notifications (no `id`), the client's own responses (accepted and not answered), batches
//! (2025-03-26 only), and the error codes.

use serde_json::{json, Map, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }
    pub fn parse(message: impl Into<String>) -> RpcError {
        RpcError::new(PARSE_ERROR, message)
    }
    pub fn invalid_request(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_REQUEST, message)
    }
    pub fn method_not_found(method: &str) -> RpcError {
        RpcError::new(
            METHOD_NOT_FOUND,
            format!("no method '{method}' (served: initialize, ping, tools/list, tools/call)"),
        )
    }
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }
    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(INTERNAL_ERROR, message)
    }
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }
    fn to_json(&self) -> Value {
        let mut e = Map::new();
        e.insert("code".into(), json!(self.code));
        e.insert("message".into(), json!(self.message));
        if let Some(d) = &self.data {
            e.insert("data".into(), d.clone());
        }
        Value::Object(e)
    }
}

/// A request the server answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// A string or an integer, echoed as it came.
    pub id: Value,
    pub method: String,
    pub params: Option<Value>,
}

/// One message of a POST body.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Request(Request),
    /// A notification (no `id`): accepted, never answered.
    Notification {
        method: String,
    },
    /// A response of the client's (to a request this server never sends): accepted, not answered.
    Response,
    /// Not a JSON-RPC message: answered with the error (`id` as far as it was read, else null).
    Invalid {
        id: Value,
        error: RpcError,
    },
}

/// A body's messages: one, or a batch.
#[derive(Clone, Debug, PartialEq)]
pub struct Messages {
    pub batch: bool,
    pub items: Vec<Message>,
}

/// A request's result: a JSON value, or JSON text made without building one (a `tools/list`
/// page copied from the renderings kept with the catalog: building and serializing a value of
/// ~16 KB cost ~7 M instructions on the IC, the copy a small part of that).
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    Value(Value),
    /// JSON text (the maker's promise: one JSON value, as `serde_json` writes it).
    Text(String),
}

impl From<Value> for Answer {
    fn from(v: Value) -> Self {
        Answer::Value(v)
    }
}

impl Answer {
    /// As a value (parsing the text): for tests and the rare reader, not the reply path.
    pub fn into_value(self) -> Result<Value, RpcError> {
        match self {
            Answer::Value(v) => Ok(v),
            Answer::Text(t) => serde_json::from_str(&t)
                .map_err(|e| RpcError::internal(format!("an answer is not JSON: {e}"))),
        }
    }
}

/// A JSON-RPC response as text, the result copied in rather than cloned into a value.
pub fn response_text(id: &Value, answer: &Result<Answer, RpcError>) -> String {
    let id = id.to_string();
    match answer {
        Ok(Answer::Text(t)) => format!("{{\"id\":{id},\"jsonrpc\":\"2.0\",\"result\":{t}}}"),
        Ok(Answer::Value(v)) => format!("{{\"id\":{id},\"jsonrpc\":\"2.0\",\"result\":{v}}}"),
        Err(e) => format!(
            "{{\"error\":{},\"id\":{id},\"jsonrpc\":\"2.0\"}}",
            e.to_json()
        ),
    }
}

/// A JSON-RPC response with an id.
pub fn response(id: &Value, answer: &Result<Value, RpcError>) -> Value {
    match answer {
        Ok(r) => json!({ "jsonrpc": "2.0", "id": id, "result": r }),
        Err(e) => json!({ "jsonrpc": "2.0", "id": id, "error": e.to_json() }),
    }
}

/// A JSON-RPC error response without an id (a body that could not be read as a request).
pub fn error_response(error: &RpcError) -> Value {
    response(&Value::Null, &Err(error.clone()))
}

fn valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// Reads one message. `jsonrpc` must be "2.0"; a request's `id` a string or an integer (MCP:
/// never null); `method` a string; `params`, when present, an object (MCP's params are named).
pub fn read_message(v: &Value) -> Message {
    let Some(m) = v.as_object() else {
        return Message::Invalid {
            id: Value::Null,
            error: RpcError::invalid_request("a JSON-RPC message is an object"),
        };
    };
    let id = m.get("id");
    let echo = id.filter(|i| valid_id(i)).cloned().unwrap_or(Value::Null);
    let invalid = |why: &str| Message::Invalid {
        id: echo.clone(),
        error: RpcError::invalid_request(why),
    };
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    if let Some(i) = id {
        if !valid_id(i) {
            return invalid("\"id\" is a string or an integer (never null)");
        }
    }
    let Some(method) = m.get("method") else {
        // The client's response to a server request (none are sent): a result or an error.
        if id.is_some() && (m.contains_key("result") ^ m.contains_key("error")) {
            return Message::Response;
        }
        return invalid("a request has a \"method\"; a response a \"result\" or an \"error\"");
    };
    let Some(method) = method.as_str() else {
        return invalid("\"method\" is a string");
    };
    let params = m.get("params").cloned();
    if let Some(p) = &params {
        if !p.is_object() {
            return invalid("\"params\" is an object");
        }
    }
    match id {
        Some(id) => Message::Request(Request {
            id: id.clone(),
            method: method.to_string(),
            params,
        }),
        None => Message::Notification {
            method: method.to_string(),
        },
    }
}

/// Reads a body: JSON (-32700 otherwise), one message or a batch. A batch is read only when
/// `version` has them (2025-03-26): in later versions it is -32600; an empty batch, or one over
/// [`super::MAX_BATCH`], is -32600 too. `initialize` in a batch is refused (-32600) alone.
pub fn read_body(body: &[u8], version: &str) -> Result<Messages, RpcError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| RpcError::parse(format!("the body is not JSON: {e}")))?;
    match v {
        Value::Array(items) => {
            if version != super::BATCH_VERSION {
                return Err(RpcError::invalid_request(format!(
                    "JSON-RPC batches are not part of MCP {version} (only of {})",
                    super::BATCH_VERSION
                )));
            }
            if items.is_empty() {
                return Err(RpcError::invalid_request("an empty batch"));
            }
            if items.len() > super::MAX_BATCH {
                return Err(RpcError::invalid_request(format!(
                    "a batch of {} messages, over the bound of {}",
                    items.len(),
                    super::MAX_BATCH
                )));
            }
            let items = items
                .iter()
                .map(|i| match read_message(i) {
                    Message::Request(r) if r.method == "initialize" => Message::Invalid {
                        id: r.id,
                        error: RpcError::invalid_request("initialize is never part of a batch"),
                    },
                    m => m,
                })
                .collect();
            Ok(Messages { batch: true, items })
        }
        v => Ok(Messages {
            batch: false,
            items: vec![read_message(&v)],
        }),
    }
}
