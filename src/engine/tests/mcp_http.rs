//! MCP over HTTP and agent tokens (issue 12): issuing, listing without the secret, revoking,
//! expiry, the owner's bound, the constant-time compare's refusals, and the HTTP answers with
//! their statuses; a token acts for its owner only and never confirms or declines.

mod common;
use common::*;
use serde_json::{json, Value};
use std::pin::pin;
use std::task::Poll;
use tool_host_engine::mcp::{http_request, http_request_update};
use tool_host_engine::runtime::CallOutcome;
use tool_host_engine::tokens::{self, token_principal, MAX_LIVE_PER_OWNER};
use tool_host_engine::types::*;

fn issue(
    w: &World,
    caller: candid::Principal,
    label: &str,
    expires_at: Option<u64>,
) -> ApiResult<IssuedAgentToken> {
    futures::executor::block_on(tokens::issue(
        w,
        caller,
        IssueAgentTokenArgs {
            label: label.into(),
            expires_at,
        },
    ))
}

fn request(method: &str, url: &str, headers: &[(&str, &str)], body: &[u8]) -> HttpRequest {
    HttpRequest {
        method: method.into(),
        url: url.into(),
        headers: headers
            .iter()
            .map(|(n, v)| HeaderField(n.to_string(), v.to_string()))
            .collect(),
        body: serde_bytes::ByteBuf::from(body.to_vec()),
        certificate_version: Some(2),
    }
}

fn post(secret: Option<&str>, body: &Value) -> HttpRequest {
    post_text(secret, &body.to_string(), "2025-11-25")
}

fn post_text(secret: Option<&str>, body: &str, version: &str) -> HttpRequest {
    let auth = secret.map(|s| format!("Bearer {s}"));
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", version),
    ];
    if let Some(a) = &auth {
        headers.push(("Authorization", a.as_str()));
    }
    request("POST", "/mcp", &headers, body.as_bytes())
}

fn update(w: &World, req: HttpRequest) -> HttpResponse {
    futures::executor::block_on(http_request_update(w, req))
}

/// A refusal as the gateway gets it: the query asks for the update (it certifies no answer),
/// the update answers the refusal.
fn refusal(w: &World, req: HttpRequest) -> HttpResponse {
    let q = http_request(w, req.clone());
    assert_eq!(
        (q.upgrade, q.body.len()),
        (Some(true), 0),
        "the query upgrades"
    );
    update(w, req)
}

fn header<'a>(r: &'a HttpResponse, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .find(|h| h.0.eq_ignore_ascii_case(name))
        .map(|h| h.1.as_str())
}

fn body(r: &HttpResponse) -> Value {
    serde_json::from_slice(&r.body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&r.body)))
}

fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn call(w: &World, secret: &str, name: &str, arguments: Value) -> Value {
    let r = update(
        w,
        post(
            Some(secret),
            &rpc(
                1,
                "tools/call",
                json!({ "name": name, "arguments": arguments }),
            ),
        ),
    );
    assert_eq!(r.status_code, 200, "{:?}", String::from_utf8_lossy(&r.body));
    body(&r)["result"].clone()
}

fn transfer_input(amount: &str) -> Value {
    json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": amount })
}

/// Every byte of stable memory, to show what is never stored.
fn stable_bytes(w: &World) -> Vec<u8> {
    use ic_stable_structures::Memory;
    let pages = w.memory.size();
    let mut b = vec![0u8; (pages * 65_536) as usize];
    w.memory.read(0, &mut b);
    b
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|x| x == needle)
}

// Tokens.

#[test]
fn a_token_is_issued_once_stored_only_as_its_hash_and_listed_without_it() {
    let w = World::new().setup();
    let t = issue(&w, owner(), "desktop", None).unwrap();
    assert_eq!(t.id, 1);
    assert_eq!(t.label, "desktop");
    assert_eq!(t.created_at, w.now.get());
    assert!(
        t.secret.starts_with("thk_1_") && t.secret.len() == "thk_1_".len() + 64,
        "{}",
        t.secret
    );
    let random = &t.secret["thk_1_".len()..];
    let memory = stable_bytes(&w);
    assert!(
        !contains(&memory, t.secret.as_bytes()),
        "the secret is not stored"
    );
    assert!(!contains(&memory, random.as_bytes()));
    assert!(
        !contains(&memory, &hex::decode(random).unwrap()),
        "nor its random bytes"
    );
    use sha2::Digest;
    let hash = sha2::Sha256::digest(t.secret.as_bytes());
    assert!(contains(&memory, &hash), "its SHA-256 is");
    let listed = tokens::list(&*w, owner());
    assert_eq!(
        listed,
        vec![AgentTokenView {
            id: 1,
            label: "desktop".into(),
            created_at: t.created_at,
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        }]
    );
    assert!(
        tokens::list(&*w, other_owner()).is_empty(),
        "an owner lists its own"
    );
    let second = issue(&w, owner(), "laptop", None).unwrap();
    assert_ne!(second.secret, t.secret);
    assert_eq!(second.id, 2);
    w.state.borrow().check_indexes().unwrap();
}

#[test]
fn bad_arguments_are_refused_and_change_nothing() {
    let w = World::new().setup();
    assert_eq!(
        issue(&w, candid::Principal::anonymous(), "x", None)
            .unwrap_err()
            .code,
        "ANONYMOUS"
    );
    for label in ["", "a\nb", &"x".repeat(65)] {
        assert_eq!(
            issue(&w, owner(), label, None).unwrap_err().code,
            "INVALID_ARGUMENT",
            "{label:?}"
        );
    }
    let now = w.now.get();
    assert_eq!(
        issue(&w, owner(), "x", Some(now)).unwrap_err().code,
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        w.rand_calls.get(),
        0,
        "refused before any randomness is asked for"
    );
    assert!(w.state.borrow().agent_tokens.is_empty());
    assert!(issue(&w, owner(), &"x".repeat(64), Some(now + 1)).is_ok());
}

#[test]
fn an_owner_holds_at_most_eight_live_tokens() {
    let w = World::new().setup();
    let mut ids = vec![];
    for n in 0..MAX_LIVE_PER_OWNER {
        ids.push(issue(&w, owner(), &format!("t{n}"), None).unwrap().id);
    }
    let e = issue(&w, owner(), "one more", None).unwrap_err();
    assert_eq!(e.code, "LIMIT");
    assert_eq!(
        w.rand_calls.get(),
        MAX_LIVE_PER_OWNER as u64,
        "refused before the await"
    );
    assert!(issue(&w, other_owner(), "b's", None).is_ok(), "per owner");
    tokens::revoke(&*w, owner(), ids[0]).unwrap();
    assert!(issue(&w, owner(), "room again", None).is_ok());
    // Expired tokens make room too.
    let w = World::new().setup();
    let soon = w.now.get() + 1_000;
    for n in 0..MAX_LIVE_PER_OWNER {
        issue(&w, owner(), &format!("t{n}"), Some(soon)).unwrap();
    }
    assert_eq!(issue(&w, owner(), "x", None).unwrap_err().code, "LIMIT");
    w.advance(1_000);
    assert!(issue(&w, owner(), "x", None).is_ok());
    // Dead tokens are kept up to 16 per owner, the oldest dropped first.
    for n in 0..20 {
        let t = issue(&w, owner(), &format!("d{n}"), None).unwrap();
        tokens::revoke(&*w, owner(), t.id).unwrap();
    }
    assert!(tokens::list(&*w, owner()).len() <= tokens::MAX_KEPT_PER_OWNER);
    w.state.borrow().check_indexes().unwrap();
}

#[test]
fn the_record_and_the_bound_are_written_before_the_await() {
    let w = World::new().setup();
    for n in 0..MAX_LIVE_PER_OWNER - 1 {
        issue(&w, owner(), &format!("t{n}"), None).unwrap();
    }
    w.yield_after.borrow_mut().insert("raw_rand".into());
    let mut first = pin!(tokens::issue(
        &*w,
        owner(),
        IssueAgentTokenArgs {
            label: "racing".into(),
            expires_at: None
        }
    ));
    assert!(
        poll_once(first.as_mut()).is_pending(),
        "at raw_rand's await"
    );
    let pending = w
        .state
        .borrow()
        .agent_tokens
        .get(&8)
        .expect("reserved before the await");
    assert_eq!(pending.secret_sha256, None);
    w.yield_after.borrow_mut().clear();
    assert_eq!(
        issue(&w, owner(), "second", None).unwrap_err().code,
        "LIMIT",
        "the reservation counts"
    );
    let Poll::Ready(done) = poll_once(first.as_mut()) else {
        panic!("finishes after the await")
    };
    assert_eq!(done.unwrap().id, 8);
    assert!(tokens::list(&*w, owner())
        .iter()
        .any(|t| t.label == "racing"));
}

#[test]
fn no_randomness_keeps_nothing() {
    let w = World::new().setup();
    w.rand_replies
        .borrow_mut()
        .push_back(CallOutcome::Rejected {
            code: 2,
            message: "busy".into(),
        });
    let e = issue(&w, owner(), "x", None).unwrap_err();
    assert_eq!(e.code, "RETRY");
    assert!(w.state.borrow().agent_tokens.is_empty());
    assert!(w.state.borrow().owner_tokens.is_empty());
    w.rand_replies.borrow_mut().push_back(CallOutcome::Replied(
        candid::encode_one(vec![1u8; 31]).unwrap(),
    ));
    assert_eq!(
        issue(&w, owner(), "x", None).unwrap_err().code,
        "RETRY",
        "31 bytes are not 32"
    );
    assert!(w.state.borrow().agent_tokens.is_empty());
}

#[test]
fn revoking_is_the_owners_alone() {
    let w = World::new().setup();
    let t = issue(&w, owner(), "x", None).unwrap();
    assert_eq!(
        tokens::revoke(&*w, other_owner(), t.id).unwrap_err().code,
        "NOT_FOUND"
    );
    assert_eq!(
        tokens::revoke(&*w, owner(), 99).unwrap_err().code,
        "NOT_FOUND"
    );
    assert_eq!(
        tokens::revoke(&*w, candid::Principal::anonymous(), t.id)
            .unwrap_err()
            .code,
        "ANONYMOUS"
    );
    assert_eq!(tokens::list(&*w, owner())[0].revoked_at, None);
    w.advance(5);
    tokens::revoke(&*w, owner(), t.id).unwrap();
    let at = w.now.get();
    assert_eq!(tokens::list(&*w, owner())[0].revoked_at, Some(at));
    w.advance(5);
    tokens::revoke(&*w, owner(), t.id).unwrap();
    assert_eq!(
        tokens::list(&*w, owner())[0].revoked_at,
        Some(at),
        "revoking again changes nothing"
    );
}

// HTTP.

fn unauthorized(r: &HttpResponse) {
    assert_eq!(r.status_code, 401, "{:?}", String::from_utf8_lossy(&r.body));
    assert!(header(r, "www-authenticate").unwrap().starts_with("Bearer"));
    assert_eq!(body(r)["error"]["code"], -32600);
}

#[test]
fn missing_unknown_expired_and_revoked_tokens_are_401() {
    let w = World::new().setup();
    let ping = rpc(1, "ping", json!({}));
    // The query leaves a refusal to the update too (an uncertified query answer would not
    // pass icp0.io's gateway); with ?certified=false it answers the 401 itself.
    let r = http_request(&*w, post(None, &ping));
    assert_eq!((r.upgrade, r.body.len()), (Some(true), 0));
    let mut uncertified = post(None, &ping);
    uncertified.url = "/mcp?certified=false".into();
    unauthorized(&http_request(&*w, uncertified));
    unauthorized(&update(&w, post(None, &ping)));
    let t = issue(&w, owner(), "x", Some(w.now.get() + 1_000)).unwrap();
    assert_eq!(update(&w, post(Some(&t.secret), &ping)).status_code, 200);
    // The same id with other bytes (the constant-time compare refuses it), an unknown id,
    // a secret of another shape.
    let mut wrong = t.secret.clone();
    let last = wrong.pop().unwrap();
    wrong.push(if last == '0' { '1' } else { '0' });
    let unknown = t.secret.replacen("thk_1_", "thk_9_", 1);
    for bad in [
        wrong.as_str(),
        unknown.as_str(),
        "thk_1_",
        "thk_x_00",
        "opaquesecretvalue",
    ] {
        let r = update(&w, post(Some(bad), &ping));
        unauthorized(&r);
        assert!(header(&r, "www-authenticate")
            .unwrap()
            .contains("invalid_token"));
        assert!(
            !String::from_utf8_lossy(&r.body).contains(bad),
            "the token is never echoed"
        );
    }
    w.advance(1_000);
    let r = update(&w, post(Some(&t.secret), &ping));
    unauthorized(&r);
    assert!(body(&r)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("expired"));
    let t2 = issue(&w, owner(), "y", None).unwrap();
    tokens::revoke(&*w, owner(), t2.id).unwrap();
    let r = update(&w, post(Some(&t2.secret), &ping));
    unauthorized(&r);
    assert!(body(&r)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("revoked"));
}

#[test]
fn transport_refusals_have_their_statuses() {
    let w = World::new().setup();
    let t = issue(&w, owner(), "x", None).unwrap();
    let auth = format!("Bearer {}", t.secret);
    let r = refusal(&w, request("GET", "/mcp", &[("Authorization", &auth)], b""));
    assert_eq!(r.status_code, 405);
    assert_eq!(header(&r, "allow"), Some("POST"));
    let r = refusal(&w, request("POST", "/", &[("Authorization", &auth)], b"{}"));
    assert_eq!(r.status_code, 404);
    let big = vec![b'x'; tool_host_core::mcp::MAX_BODY_BYTES + 1];
    let r = update(
        &w,
        request(
            "POST",
            "/mcp",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            &big,
        ),
    );
    assert_eq!(r.status_code, 413);
    assert_eq!(body(&r)["error"]["code"], -32600);
    let r = update(
        &w,
        request(
            "POST",
            "/mcp",
            &[("Authorization", &auth), ("Content-Type", "text/plain")],
            b"{}",
        ),
    );
    assert_eq!(r.status_code, 415);
    let r = update(
        &w,
        request(
            "POST",
            "/mcp",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
                ("Accept", "text/html"),
            ],
            b"{}",
        ),
    );
    assert_eq!(r.status_code, 406);
    let r = update(
        &w,
        post_text(
            Some(&t.secret),
            &rpc(1, "ping", json!({})).to_string(),
            "2024-11-05",
        ),
    );
    assert_eq!(r.status_code, 400);
    let r = update(&w, post_text(Some(&t.secret), "{not json", "2025-11-25"));
    assert_eq!(
        (r.status_code, body(&r)["error"]["code"].clone()),
        (400, json!(-32700))
    );
    let r = update(
        &w,
        post_text(Some(&t.secret), r#"{"jsonrpc":"2.0","id":1}"#, "2025-11-25"),
    );
    assert_eq!(
        (r.status_code, body(&r)["error"]["code"].clone()),
        (400, json!(-32600))
    );
    let r = update(
        &w,
        post(Some(&t.secret), &rpc(4, "resources/list", json!({}))),
    );
    assert_eq!(
        (
            r.status_code,
            body(&r)["error"]["code"].clone(),
            body(&r)["id"].clone()
        ),
        (200, json!(-32601), json!(4))
    );
    let r = update(
        &w,
        post(
            Some(&t.secret),
            &rpc(5, "tools/call", json!({ "arguments": {} })),
        ),
    );
    assert_eq!(body(&r)["error"]["code"], -32602);
    let r = update(
        &w,
        post(
            Some(&t.secret),
            &rpc(6, "tools/call", json!({ "name": "no_such_tool" })),
        ),
    );
    assert_eq!(body(&r)["error"]["code"], -32602);
    let r = update(
        &w,
        post(
            Some(&t.secret),
            &rpc(7, "tools/list", json!({ "cursor": "zz" })),
        ),
    );
    assert_eq!(body(&r)["error"]["code"], -32602);
}

#[test]
fn the_query_answers_or_upgrades() {
    let w = World::new().setup();
    let t = issue(&w, owner(), "x", None).unwrap();
    let init = rpc(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    // By default, through consensus: the query asks for the update.
    let r = http_request(&*w, post(Some(&t.secret), &init));
    assert_eq!((r.status_code, r.upgrade), (200, Some(true)));
    assert!(r.body.is_empty());
    // With ?certified=false, what needs no call is answered by the query, uncertified.
    let mut q = post(Some(&t.secret), &init);
    q.url = "/mcp?certified=false".into();
    let r = http_request(&*w, q.clone());
    assert_eq!(r.upgrade, None);
    assert_eq!(body(&r)["result"]["protocolVersion"], "2025-06-18");
    q.body = serde_bytes::ByteBuf::from(rpc(2, "tools/list", json!({})).to_string().into_bytes());
    let r = http_request(&*w, q.clone());
    assert_eq!(r.upgrade, None);
    assert!(!body(&r)["result"]["tools"].as_array().unwrap().is_empty());
    // tools/call always goes through the update.
    q.body = serde_bytes::ByteBuf::from(
        rpc(3, "tools/call", json!({ "name": "commit" }))
            .to_string()
            .into_bytes(),
    );
    assert_eq!(http_request(&*w, q.clone()).upgrade, Some(true));
    // A notification is accepted with 202 and no body.
    q.body = serde_bytes::ByteBuf::from(
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
    );
    let r = http_request(&*w, q.clone());
    assert_eq!((r.status_code, r.body.len()), (202, 0));
    let r = update(&w, q);
    assert_eq!((r.status_code, r.body.len()), (202, 0));
    // The query keeps nothing; the update records the token's use.
    assert_eq!(
        tokens::list(&*w, owner())[0].last_used_at,
        Some(w.now.get())
    );
}

#[test]
fn initialize_negotiates_and_tools_list_pages_through_every_tool() {
    let w = World::new().setup();
    let t = issue(&w, owner(), "x", None).unwrap();
    let r = update(
        &w,
        post(
            Some(&t.secret),
            &rpc(1, "initialize", json!({ "protocolVersion": "2024-11-05" })),
        ),
    );
    let v = body(&r);
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(v["result"]["serverInfo"]["name"], "tool-host");
    let r = update(&w, post(Some(&t.secret), &rpc(2, "ping", json!({}))));
    assert_eq!(body(&r)["result"], json!({}));
    let mut names = vec![];
    let mut cursor: Option<Value> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let v = body(&update(
            &w,
            post(Some(&t.secret), &rpc(3, "tools/list", params)),
        ));
        for tool in v["result"]["tools"].as_array().unwrap() {
            names.push(tool["name"].as_str().unwrap().to_string());
            let prepare =
                tool["name"].as_str().unwrap().starts_with("prepare_") || tool["name"] == "commit";
            assert_eq!(
                tool.get("outputSchema").is_some(),
                prepare,
                "{}",
                tool["name"]
            );
            assert_eq!(tool["inputSchema"]["type"], "object");
        }
        match v["result"].get("nextCursor") {
            Some(c) => cursor = Some(c.clone()),
            None => break,
        }
    }
    let all: Vec<Value> =
        serde_json::from_str(&tool_host_engine::bus::list_tools(&*w, None)).unwrap();
    let expected: Vec<String> = all
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .filter(|n| n != "finish")
        .collect();
    assert_eq!(names, expected);
    assert!(names.contains(&"prepare_icrc1_transfer".to_string()));
}

/// The shape `outputSchema` states (required fields and their JSON types).
fn matches_intent_answer(v: &Value) {
    let schema = tool_host_core::mcp::intent_answer_schema();
    for r in schema["required"].as_array().unwrap() {
        assert!(v.get(r.as_str().unwrap()).is_some(), "{r} missing in {v}");
    }
    assert!(v["intent_id"]
        .as_str()
        .unwrap()
        .chars()
        .all(|c| c.is_ascii_digit()));
    assert_eq!(v["digest"].as_str().unwrap().len(), 64);
    assert_eq!(v["confirm"]["method"], "confirm");
    assert!(v["confirm"]["intent_id"].is_u64());
}

#[test]
fn a_token_reads_prepares_and_commits_as_its_owners_agent_and_the_owner_confirms() {
    let w = World::new().setup();
    let t = issue(&w, owner(), "x", None).unwrap();
    let r = call(
        &w,
        &t.secret,
        "icrc1_balance_of",
        json!({ "canister_id": ledger_id().to_text(), "account": receiver().to_text() }),
    );
    assert_eq!(r["isError"], false);
    assert_eq!(r["structuredContent"]["result"], "0.00000042 TKA");
    let r = call(
        &w,
        &t.secret,
        "prepare_icrc1_transfer",
        transfer_input("1.5 TKA"),
    );
    assert_eq!(r["isError"], false, "{r}");
    let s = r["structuredContent"].clone();
    matches_intent_answer(&s);
    assert_eq!(s["status"], "prepared");
    assert_eq!(r["content"][1]["text"].as_str().unwrap(), s.to_string());
    let id: u64 = s["intent_id"].as_str().unwrap().parse().unwrap();
    let intent = w.intent(id);
    assert_eq!(intent.owner, owner());
    assert_eq!(
        intent.preparer,
        token_principal(&owner(), t.id),
        "attributed to the token's principal"
    );
    let r = call(
        &w,
        &t.secret,
        "commit",
        json!({ "preview_id": id.to_string(), "digest": s["digest"] }),
    );
    assert_eq!(
        r["structuredContent"]["status"], "awaiting_confirmation",
        "{r}"
    );
    matches_intent_answer(&r["structuredContent"]);
    assert_eq!(w.sends("icrc1_transfer"), 0, "a token never sends");
    let digest = hex::decode(s["digest"].as_str().unwrap()).unwrap();
    let done = w.confirm(owner(), id, &digest).unwrap();
    assert_eq!(done.outcome.as_deref(), Some("success"));
    assert_eq!(w.sends("icrc1_transfer"), 1);
    // An input that does not read is a tool error the model can correct, not a JSON-RPC one.
    let r = call(
        &w,
        &t.secret,
        "prepare_icrc1_transfer",
        json!({ "canister_id": ledger_id().to_text(), "to": "nobody", "amount": "1 TKA" }),
    );
    assert_eq!(r["isError"], true);
    assert!(r.get("structuredContent").is_none());
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("INVALID_INPUT"));
    w.state.borrow().check_indexes().unwrap();
}

#[test]
fn a_token_never_confirms_or_declines_and_never_touches_another_owners_intents() {
    let w = World::new().setup();
    let a = issue(&w, owner(), "a's", None).unwrap();
    let pa = token_principal(&owner(), a.id);
    // B's intent, prepared by B itself.
    let b_prep = w
        .tool(
            other_owner(),
            "prepare_icrc1_transfer",
            transfer_input("2 TKA"),
            None,
        )
        .unwrap();
    let bs = structured(&b_prep);
    let b_id: u64 = bs["intent_id"].as_str().unwrap().parse().unwrap();
    let b_digest = hex::decode(bs["digest"].as_str().unwrap()).unwrap();
    let r = call(
        &w,
        &a.secret,
        "commit",
        json!({ "preview_id": b_id.to_string(), "digest": bs["digest"] }),
    );
    assert_eq!(r["isError"], true);
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("NOT_FOUND")
            || r["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("NOT_AUTHORIZED"),
        "{r}"
    );
    assert!(
        w.intent(b_id).confirm_requested_at.is_none(),
        "B's intent is untouched"
    );
    // The token's principal, however it calls, is no agent of B.
    assert!(!w.state.borrow().is_agent_of(&other_owner(), &pa));
    assert!(w.state.borrow().is_agent_of(&owner(), &pa));
    let e = w
        .tool(
            pa,
            "prepare_icrc1_transfer",
            transfer_input("1 TKA"),
            Some(other_owner()),
        )
        .unwrap_err();
    assert_eq!(e.code, "NOT_AUTHORIZED");
    assert_eq!(
        tool_host_engine::views::get_intent(&*w, pa, b_id)
            .unwrap_err()
            .code,
        "NOT_AUTHORIZED"
    );
    // B cannot make A's token its agent either.
    let e = tool_host_engine::owners::authorize_agent(&*w, other_owner(), pa).unwrap_err();
    assert_eq!(e.code, "INVALID_ARGUMENT");
    // A's own intent: the token cannot confirm or decline it.
    let r = call(
        &w,
        &a.secret,
        "prepare_icrc1_transfer",
        transfer_input("1 TKA"),
    );
    let s = r["structuredContent"].clone();
    let a_id: u64 = s["intent_id"].as_str().unwrap().parse().unwrap();
    let a_digest = hex::decode(s["digest"].as_str().unwrap()).unwrap();
    assert_eq!(
        w.confirm(pa, a_id, &a_digest).unwrap_err().code,
        "NOT_OWNER"
    );
    assert_eq!(
        w.confirm(pa, b_id, &b_digest).unwrap_err().code,
        "NOT_OWNER"
    );
    let e = tool_host_engine::send::decline(&*w, pa, a_id, Some(&a_digest)).unwrap_err();
    assert_eq!(e.code, "NOT_OWNER");
    // No tool confirms: confirm and decline are not tools.
    let r = update(
        &w,
        post(
            Some(&a.secret),
            &rpc(
                9,
                "tools/call",
                json!({ "name": "confirm", "arguments": { "intent_id": a_id } }),
            ),
        ),
    );
    assert_eq!(body(&r)["error"]["code"], -32602);
    assert_eq!(w.sends("icrc1_transfer"), 0);
    // Revoked, the token's principal stops acting for A at once.
    tokens::revoke(&*w, owner(), a.id).unwrap();
    assert!(!w.state.borrow().is_agent_of(&owner(), &pa));
    assert_eq!(
        w.tool(
            pa,
            "prepare_icrc1_transfer",
            transfer_input("1 TKA"),
            Some(owner())
        )
        .unwrap_err()
        .code,
        "NOT_AUTHORIZED"
    );
}

#[test]
fn the_secret_never_appears_in_a_reply_an_intent_or_the_state() {
    let w = World::new().setup();
    let t = issue(&w, owner(), "x", None).unwrap();
    let mut replies = vec![];
    replies.push(update(
        &w,
        post(
            Some(&t.secret),
            &rpc(1, "initialize", json!({ "protocolVersion": "2025-11-25" })),
        ),
    ));
    replies.push(update(
        &w,
        post(Some(&t.secret), &rpc(2, "tools/list", json!({}))),
    ));
    replies.push(update(
        &w,
        post(
            Some(&t.secret),
            &rpc(
                3,
                "tools/call",
                json!({ "name": "prepare_icrc1_transfer", "arguments": transfer_input("1 TKA") }),
            ),
        ),
    ));
    replies.push(update(
        &w,
        post(
            Some(&t.secret),
            &rpc(
                4,
                "tools/call",
                json!({ "name": "commit", "arguments": { "preview_id": "1" } }),
            ),
        ),
    ));
    replies.push(update(
        &w,
        post(Some(&t.secret), &rpc(5, "nope", json!({}))),
    ));
    let random = &t.secret["thk_1_".len()..];
    for r in &replies {
        let all = format!("{:?}{}", r.headers, String::from_utf8_lossy(&r.body));
        assert!(!all.contains(random), "{all}");
    }
    assert!(!format!("{:?}", w.intent(1)).contains(random));
    assert!(!format!("{:?}", tokens::list(&*w, owner())).contains(random));
    assert!(!contains(&stable_bytes(&w), random.as_bytes()));
}

#[test]
fn a_batch_in_2025_03_26_is_answered_in_order_and_refused_in_later_versions() {
    let w = World::new().setup();
    let t = issue(&w, owner(), "x", None).unwrap();
    let batch = json!([
        rpc(1, "ping", json!({})),
        { "jsonrpc": "2.0", "method": "notifications/initialized" },
        rpc(2, "tools/call", json!({ "name": "icrc1_balance_of", "arguments": { "canister_id": ledger_id().to_text(), "account": receiver().to_text() } })),
        rpc(3, "nope", json!({})),
    ])
    .to_string();
    assert_eq!(
        http_request(&*w, post_text(Some(&t.secret), &batch, "2025-03-26")).upgrade,
        Some(true)
    );
    let r = update(&w, post_text(Some(&t.secret), &batch, "2025-03-26"));
    let v = body(&r);
    let ids: Vec<Value> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!(1), json!(2), json!(3)]);
    assert_eq!(v[1]["result"]["isError"], false);
    assert_eq!(v[2]["error"]["code"], -32601);
    for version in ["2025-06-18", "2025-11-25"] {
        let r = update(&w, post_text(Some(&t.secret), &batch, version));
        assert_eq!(
            (r.status_code, body(&r)["error"]["code"].clone()),
            (400, json!(-32600))
        );
    }
    let only_notes = json!([{ "jsonrpc": "2.0", "method": "notifications/a" }, { "jsonrpc": "2.0", "method": "notifications/b" }]).to_string();
    assert_eq!(
        update(&w, post_text(Some(&t.secret), &only_notes, "2025-03-26")).status_code,
        202
    );
}

#[test]
fn token_records_read_back_and_are_checked_with_the_others() {
    let w = World::new().setup();
    let t = issue(&w, owner(), "x", Some(w.now.get() + 10)).unwrap();
    w.upgrade();
    assert_eq!(tokens::list(&*w, owner()).len(), 1);
    assert_eq!(
        update(&w, post(Some(&t.secret), &rpc(1, "ping", json!({})))).status_code,
        200
    );
    w.state.borrow().check_records().unwrap();
}
