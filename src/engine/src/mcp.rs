//! MCP over HTTP (`http_request`, `http_request_update`): the core's transport and JSON-RPC
//! rules (`tool_host_core::mcp`), the caller authenticated by an agent token, and the bus's
//! tools run as that token's principal for its owner (docs/mcp.md).
//!
//! The query asks for the update (`upgrade = opt true`) for every request, refusals included,
//! unless the URL says `?certified=false`: then refusals, `initialize`, `ping` and `tools/list`
//! come from the query, uncertified (`tools/call` always goes to the update). The update checks
//! everything again and answers through consensus.

use crate::runtime::Runtime;
use crate::tokens::{self, Bearer};
use crate::types::{ApiError, CallToolArgs, HeaderField, HttpRequest, HttpResponse};
use serde_bytes::ByteBuf;
use serde_json::{json, Value};
use tool_host_core::mcp::{
    self as core, Answer, HttpIn, HttpOut, Message, Messages, Request, RpcError,
};

const INSTRUCTIONS: &str = "Tools of an on-chain tool host, acting for the owner that issued your token. \
Read tools answer at once. prepare_* tools store an intent and answer its preview and digest; nothing is \
sent until the owner confirms that preview with a signed call, which you cannot make. commit asks the owner \
to confirm an intent (status awaiting_confirmation).";

/// Tools that need what MCP does not give: `finish` ends a turn (`begin_turn`), and MCP calls
/// are not made in turns.
const NOT_OVER_MCP: [&str; 1] = ["finish"];

fn out(o: HttpOut) -> HttpResponse {
    HttpResponse {
        status_code: o.status,
        headers: o
            .headers
            .into_iter()
            .map(|(n, v)| HeaderField(n, v))
            .collect(),
        body: ByteBuf::from(o.body),
        upgrade: None,
    }
}

fn upgrade() -> HttpResponse {
    HttpResponse {
        status_code: 200,
        headers: vec![],
        body: ByteBuf::new(),
        upgrade: Some(true),
    }
}

struct Admitted {
    bearer: Bearer,
    uncertified_ok: bool,
    version: String,
    messages: Messages,
}

/// Everything a request passes before a message is answered, in this order: the transport's
/// door (URL, path, method, header and body bounds), the bearer token, then content type,
/// `Accept`, protocol version and the body.
fn admit<R: Runtime>(rt: &R, req: &HttpRequest) -> Result<Admitted, HttpOut> {
    // Copied only within the bound (the door refuses more before anything else is read).
    let headers: Vec<(String, String)> = req
        .headers
        .iter()
        .take(core::MAX_HEADERS + 1)
        .map(|h| (h.0.clone(), h.1.clone()))
        .collect();
    let inb = HttpIn {
        method: &req.method,
        url: &req.url,
        headers: &headers,
        body: &req.body,
    };
    let door = core::door(&inb)?;
    let Some(secret) = door.bearer else {
        return Err(core::unauthorized(
            false,
            "an MCP request carries Authorization: Bearer <token>, a token its owner issued (issue_agent_token)",
        ));
    };
    let bearer =
        tokens::authenticate(rt, secret, rt.now()).map_err(|why| core::unauthorized(true, why))?;
    let (version, messages) = core::read(&inb)?;
    Ok(Admitted {
        bearer,
        uncertified_ok: door.uncertified_ok,
        version,
        messages,
    })
}

/// `http_request` (a query: nothing it does is kept).
pub fn http_request<R: Runtime>(rt: &R, req: HttpRequest) -> HttpResponse {
    let a = match admit(rt, &req) {
        Ok(a) => a,
        // A refusal too is answered through consensus unless the client asked for uncertified
        // answers: the tool host certifies no query answer, and the IC's HTTP gateway on
        // icp0.io refuses an uncertified one (the client would see a 503, not the 401 that
        // tells it to fix its token). Nothing a single replica answers can then pass as ours.
        Err(o) if core::url_asks_uncertified(&req.url) => return out(o),
        Err(_) => return upgrade(),
    };
    let calls = a
        .messages
        .items
        .iter()
        .any(|m| matches!(m, Message::Request(r) if r.method == "tools/call"));
    if calls || !a.uncertified_ok {
        return upgrade();
    }
    let mut answers = Vec::new();
    for m in &a.messages.items {
        match m {
            Message::Request(r) => answers.push((r.id.clone(), local(rt, r, &a.version))),
            Message::Invalid { id, error } => answers.push((id.clone(), Err(error.clone()))),
            Message::Notification { .. } | Message::Response => {}
        }
    }
    out(core::reply(a.messages.batch, &answers))
}

/// `http_request_update`: every message answered, `tools/call` run as the token's principal.
pub async fn http_request_update<R: Runtime>(rt: &R, req: HttpRequest) -> HttpResponse {
    rt.mark("mcp: update begins");
    let a = match admit(rt, &req) {
        Ok(a) => a,
        Err(o) => return out(o),
    };
    rt.mark("mcp: admitted");
    tokens::touch(rt, a.bearer.id, rt.now());
    rt.mark("mcp: token touched");
    let mut answers = Vec::new();
    for m in &a.messages.items {
        match m {
            Message::Request(r) if r.method == "tools/call" => {
                answers.push((r.id.clone(), call(rt, &a.bearer, r).await.map(Answer::from)))
            }
            Message::Request(r) => answers.push((r.id.clone(), local(rt, r, &a.version))),
            Message::Invalid { id, error } => answers.push((id.clone(), Err(error.clone()))),
            Message::Notification { .. } | Message::Response => {}
        }
    }
    rt.mark("mcp: answered");
    let o = core::reply(a.messages.batch, &answers);
    rt.mark("mcp: reply serialized");
    out(o)
}

/// The methods that need no call: `initialize`, `ping`, `tools/list`; any other is -32601.
fn local<R: Runtime>(rt: &R, r: &Request, _version: &str) -> Result<Answer, RpcError> {
    match r.method.as_str() {
        "initialize" => core::initialize(
            r.params.as_ref(),
            &core::ServerInfo {
                name: "tool-host",
                version: env!("CARGO_PKG_VERSION"),
                instructions: INSTRUCTIONS,
            },
        )
        .map(Answer::from),
        "ping" => Ok(json!({}).into()),
        "tools/list" => {
            let after = core::list_after(r.params.as_ref())?;
            let bus = rt.with_state(crate::catalog::bus);
            rt.mark("mcp: bus");
            let p = core::list_page(&tools(&bus), after.as_deref());
            rt.mark("mcp: page");
            Ok(p)
        }
        other => Err(RpcError::method_not_found(other)),
    }
}

/// The bus's tools as MCP has them (name, compact JSON kept with the catalog), sorted by name,
/// those MCP cannot call left out.
fn tools(bus: &crate::catalog::Bus) -> Vec<(&str, &tool_host_core::bus::kept::Text)> {
    bus.decls
        .iter()
        .zip(&bus.items)
        .filter(|(d, _)| !NOT_OVER_MCP.contains(&d.name.as_str()))
        .map(|(d, t)| (d.name.as_str(), t.mcp()))
        .collect()
}

/// `tools/call`: the tool run by the token's principal for its owner, outside any turn. An
/// unknown tool is -32602 (as MCP has it); every other refusal is a tool error (`isError`), its
/// code, message and issues in the text so that the model can correct its input.
async fn call<R: Runtime>(rt: &R, bearer: &Bearer, r: &Request) -> Result<Value, RpcError> {
    let (name, input) = core::call_params(r.params.as_ref())?;
    if NOT_OVER_MCP.contains(&name.as_str()) {
        return Err(RpcError::invalid_params(format!(
            "{name} is not served over MCP (it ends a turn, begun with begin_turn)"
        )));
    }
    let args = CallToolArgs {
        name,
        input,
        owner: Some(bearer.owner),
        turn: None,
    };
    match crate::tools::call_tool(rt, bearer.principal, args).await {
        Ok(t) => {
            let structured = serde_json::from_str::<Value>(&t.structured)
                .ok()
                .filter(Value::is_object);
            Ok(core::tool_result(&t.content, structured, t.is_error))
        }
        Err(e) if e.code == "UNKNOWN_TOOL" => Err(RpcError::invalid_params(e.message.clone())
            .with_data(core::error_data(&e.code, issues(&e)))),
        Err(e) => Ok(core::tool_result(&refusal_text(&e), None, true)),
    }
}

fn issues(e: &ApiError) -> Value {
    Value::Array(
        e.issues
            .iter()
            .map(|i| json!({ "param": i.param, "path": i.path, "code": i.code, "message": i.message }))
            .collect(),
    )
}

fn refusal_text(e: &ApiError) -> String {
    let detail = json!({ "error": { "code": e.code, "message": e.message, "issues": issues(e) } });
    format!("{}: {}\n{detail}", e.code, e.message)
}
