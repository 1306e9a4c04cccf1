//! The HTTP side: which requests reach JSON-RPC, with what status everything else is refused,
//! and the reply a body's answers make.

use super::jsonrpc::*;
use serde_json::Value;

/// An HTTP request as the IC's HTTP gateway gives it (`http_request`'s argument).
pub struct HttpIn<'a> {
    pub method: &'a str,
    pub url: &'a str,
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
}

/// An HTTP reply (`http_request`'s answer without `upgrade`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpOut {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpOut {
    /// A JSON body with its content type; never cached (answers depend on the token).
    pub fn json(status: u16, body: &Value) -> HttpOut {
        HttpOut {
            status,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("cache-control".into(), "no-store".into()),
            ],
            body: body.to_string().into_bytes(),
        }
    }
    /// JSON text as the body (`reply` makes it without building a value).
    pub fn json_text(status: u16, body: String) -> HttpOut {
        HttpOut {
            status,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("cache-control".into(), "no-store".into()),
            ],
            body: body.into_bytes(),
        }
    }
    /// A JSON-RPC error without an id, with an HTTP status.
    pub fn rpc_error(status: u16, error: RpcError) -> HttpOut {
        HttpOut::json(status, &error_response(&error))
    }
    pub fn with_header(mut self, name: &str, value: &str) -> HttpOut {
        self.headers.push((name.into(), value.into()));
        self
    }
    /// 202 Accepted, no body: what a POST of notifications and responses only gets.
    pub fn accepted() -> HttpOut {
        HttpOut {
            status: 202,
            headers: vec![],
            body: vec![],
        }
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        find(&self.headers, name)
    }
}

/// A header's value (names compared without case); the first when repeated.
pub fn find<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// What the transport checks give: the request's bearer token (unchecked), and the options.
#[derive(Debug, PartialEq, Eq)]
pub struct Door<'a> {
    pub bearer: Option<&'a str>,
    /// `?certified=false` in the URL: answers that need no update (initialize, ping,
    /// tools/list) come from the query, uncertified. Default: every authenticated request
    /// goes through consensus (docs/mcp.md, "Certification").
    pub uncertified_ok: bool,
}

/// The checks made before anything is authenticated or parsed: the URL's bound (414), the path
/// (404), the method (405, `Allow: POST`), the headers' bounds (431), the body's (413, with a
/// JSON-RPC error body). The bearer token is read, not checked.
pub fn door<'a>(req: &HttpIn<'a>) -> Result<Door<'a>, HttpOut> {
    if req.url.len() > super::MAX_URL_BYTES {
        return Err(HttpOut::rpc_error(
            414,
            RpcError::invalid_request(format!(
                "the URL is {} bytes, over the bound of {}",
                req.url.len(),
                super::MAX_URL_BYTES
            )),
        ));
    }
    let (path, query) = match req.url.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (req.url, None),
    };
    if path != super::PATH {
        return Err(HttpOut::rpc_error(
            404,
            RpcError::invalid_request(format!(
                "nothing is served at {path}; MCP is at {}",
                super::PATH
            )),
        ));
    }
    if !req.method.eq_ignore_ascii_case("POST") {
        return Err(HttpOut::rpc_error(
            405,
            RpcError::invalid_request(format!(
                "{} is not served at {}: MCP messages are POSTed (this server opens no stream)",
                req.method,
                super::PATH
            )),
        )
        .with_header("allow", "POST"));
    }
    let header_bytes: usize = req.headers.iter().map(|(n, v)| n.len() + v.len()).sum();
    if req.headers.len() > super::MAX_HEADERS || header_bytes > super::MAX_HEADER_BYTES {
        return Err(HttpOut::rpc_error(
            431,
            RpcError::invalid_request(format!(
                "{} headers of {header_bytes} bytes, over the bound of {} headers of {} bytes",
                req.headers.len(),
                super::MAX_HEADERS,
                super::MAX_HEADER_BYTES
            )),
        ));
    }
    if req.body.len() > super::MAX_BODY_BYTES {
        return Err(HttpOut::rpc_error(
            413,
            RpcError::invalid_request(format!(
                "the body is {} bytes, over the bound of {}",
                req.body.len(),
                super::MAX_BODY_BYTES
            )),
        ));
    }
    let bearer = find(req.headers, "authorization").and_then(|v| {
        let (scheme, token) = v.trim().split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| token.trim())
            .filter(|t| !t.is_empty())
    });
    let uncertified_ok = query.is_some_and(uncertified_asked);
    Ok(Door {
        bearer,
        uncertified_ok,
    })
}

/// 401 with `WWW-Authenticate: Bearer` (and `error="invalid_token"` when a token was given)
/// and a JSON-RPC error body. `why` never holds the token.
pub fn unauthorized(given: bool, why: &str) -> HttpOut {
    let challenge = if given {
        "Bearer realm=\"tool-host\", error=\"invalid_token\""
    } else {
        "Bearer realm=\"tool-host\""
    };
    HttpOut::rpc_error(401, RpcError::invalid_request(why))
        .with_header("www-authenticate", challenge)
}

/// The checks after authentication: `Content-Type` application/json (415), `Accept` allowing
/// application/json when present (406; absent is any, as HTTP reads it), the
/// `MCP-Protocol-Version` header when present (400 for a version not served; absent is
/// 2025-03-26), then the body (400 with -32700 or -32600 when it is no JSON-RPC at all).
/// Answers the version the request is read in and its messages.
pub fn read(req: &HttpIn) -> Result<(String, Messages), HttpOut> {
    let ctype = find(req.headers, "content-type").unwrap_or("");
    let essence = ctype.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Err(HttpOut::rpc_error(
            415,
            RpcError::invalid_request(format!(
                "Content-Type is '{}'; MCP messages are application/json",
                truncated(ctype)
            )),
        ));
    }
    if let Some(accept) = find(req.headers, "accept") {
        if !accepts_json(accept) {
            return Err(HttpOut::rpc_error(
                406,
                RpcError::invalid_request(
                    "Accept does not allow application/json, the only type this server answers in",
                ),
            ));
        }
    }
    let header_version = find(req.headers, "mcp-protocol-version").map(str::trim);
    let version = match header_version {
        Some(v) if super::is_supported(v) => v.to_string(),
        Some(v) => {
            // The header is checked on every request but an initialize (which negotiates).
            if !is_initialize(req.body) {
                return Err(HttpOut::rpc_error(
                    400,
                    RpcError::invalid_request(format!(
                        "MCP-Protocol-Version '{}' is not served (served: {})",
                        truncated(v),
                        super::VERSIONS.join(", ")
                    )),
                ));
            }
            super::ASSUMED.to_string()
        }
        None => super::ASSUMED.to_string(),
    };
    let messages = read_body(req.body, &version).map_err(|e| HttpOut::rpc_error(400, e))?;
    if !messages.batch {
        if let Some(Message::Invalid { id, error }) = messages.items.first() {
            return Err(HttpOut::json(400, &response(id, &Err(error.clone()))));
        }
    }
    Ok((version, messages))
}

/// A text as an error message may repeat it: at most 64 bytes.
fn truncated(s: &str) -> String {
    if s.len() <= 64 {
        return s.to_string();
    }
    let mut end = 64;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

fn accepts_json(accept: &str) -> bool {
    accept.split(',').any(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused = parts.any(|p| {
            let p = p.trim().replace(' ', "");
            p == "q=0" || p == "q=0.0" || p == "q=0.00" || p == "q=0.000"
        });
        !refused && matches!(media.as_str(), "application/json" | "application/*" | "*/*")
    })
}

fn is_initialize(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("method")
                .and_then(Value::as_str)
                .map(|m| m == "initialize")
        })
        .unwrap_or(false)
}

/// The reply to a body's answers (`(id, answer)` for each request, in order): 202 without a
/// body when there are none (notifications and responses only), one response or a batch's
/// array otherwise. A reply over [`super::MAX_REPLY_BYTES`] is refused whole (500, -32603),
/// never cut.
pub fn reply(batch: bool, answers: &[(Value, Result<Answer, RpcError>)]) -> HttpOut {
    if answers.is_empty() {
        return HttpOut::accepted();
    }
    let body = if batch {
        let parts: Vec<String> = answers.iter().map(|(id, a)| response_text(id, a)).collect();
        format!("[{}]", parts.join(","))
    } else {
        response_text(&answers[0].0, &answers[0].1)
    };
    let out = HttpOut::json_text(200, body);
    if out.body.len() > super::MAX_REPLY_BYTES {
        let e = RpcError::internal(format!(
            "the reply would be {} bytes, over the bound of {}: ask for less (one call per request, a page of tools)",
            out.body.len(),
            super::MAX_REPLY_BYTES
        ));
        let id = if batch {
            Value::Null
        } else {
            answers[0].0.clone()
        };
        return HttpOut::json(500, &response(&id, &Err(e)));
    }
    out
}

/// `certified=false` (or `0`) among a URL query's pairs: the client accepts uncertified query
/// answers.
pub fn uncertified_asked(query: &str) -> bool {
    query
        .split('&')
        .any(|kv| kv == "certified=false" || kv == "certified=0")
}

/// Whether `url` asks for uncertified answers (see [`uncertified_asked`]).
pub fn url_asks_uncertified(url: &str) -> bool {
    url.split_once('?')
        .is_some_and(|(_, q)| uncertified_asked(q.split('#').next().unwrap_or("")))
}
