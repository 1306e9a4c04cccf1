//! MCP over HTTP on the real wasm, through the local HTTP gateway (`tool_host_tests::gateway`):
//! the official TypeScript SDK's client with an agent token, the owner confirming through
//! Candid what the agent prepared; the HTTP and JSON-RPC rules as a client meets them; a token
//! that acts for its owner only and never confirms.

use crate::Scenario;
use candid::Principal;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;
use tool_host_tests::check::{ApiOk, Check, Fail};
use tool_host_tests::gateway::{Gateway, Reply};
use tool_host_tests::world::{prepared_of, World};
use tool_host_tests::{ensure, ensure_eq, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "mcp::the_sdk_client_prepares_with_a_token_the_owner_confirms_and_a_revoked_token_gets_401",
            the_sdk_client_prepares_with_a_token_the_owner_confirms_and_a_revoked_token_gets_401,
        ),
        Scenario::new(
            "mcp::the_http_and_json_rpc_rules_over_the_gateway",
            the_http_and_json_rpc_rules_over_the_gateway,
        ),
        Scenario::new(
            "mcp::a_token_acts_for_its_owner_only_and_never_confirms",
            a_token_acts_for_its_owner_only_and_never_confirms,
        ),
    ]
}

const VERSION: &str = "2025-11-25";

/// The owner issues a token for its agent; the secret.
fn issue(
    w: &mut World,
    owner: Principal,
    label: &str,
    expires_at: Option<u64>,
) -> Check<(u64, String)> {
    let t = w
        .host
        .issue_agent_token(w.b.as_mut(), owner, label, expires_at)?
        .ok_or_fail("issue_agent_token")?;
    ensure_eq!(t.label, label);
    Ok((t.id, t.secret))
}

/// A JSON-RPC request (or batch, or notification) POSTed to `/mcp` with `token` and the
/// protocol version header.
fn post(
    w: &mut World,
    gw: &Gateway,
    token: Option<&str>,
    version: Option<&str>,
    body: &Value,
) -> Reply {
    post_to(w, gw, "/mcp", token, version, body)
}

fn post_to(
    w: &mut World,
    gw: &Gateway,
    path: &str,
    token: Option<&str>,
    version: Option<&str>,
    body: &Value,
) -> Reply {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers: Vec<(&str, &str)> = Vec::new();
    if let Some(b) = bearer.as_deref() {
        headers.push(("Authorization", b));
    }
    if let Some(v) = version {
        headers.push(("MCP-Protocol-Version", v));
    }
    gw.post_json(w.b.as_mut(), path, &headers, &body.to_string())
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn initialize(version: &str) -> Value {
    request(
        1,
        "initialize",
        json!({ "protocolVersion": version, "capabilities": {},
                "clientInfo": { "name": "e2e", "version": "1.0.0" } }),
    )
}

/// The JSON-RPC error code of a reply, with its HTTP status.
fn error_code(r: &Reply) -> Check<(u16, i64)> {
    let j = r.json();
    let Some(code) = j["error"]["code"].as_i64() else {
        fail!("no JSON-RPC error in {} {}", r.status, r.text());
    };
    Ok((r.status, code))
}

fn no_secret(r: &Reply, secret: &str) -> Check {
    ensure!(
        !r.text().contains(secret),
        "the token appears in a reply: {}",
        r.text()
    );
    for (k, v) in &r.headers {
        ensure!(!v.contains(secret), "the token appears in the header {k}");
    }
    Ok(())
}

/// `tests/mcp-client`, with its locked packages installed (`scripts/test.sh` runs `npm ci`).
fn client_dir() -> Check<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp-client");
    if !dir.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        fail!(
            "the MCP SDK is not installed: run `npm ci` in {} (scripts/test.sh does)",
            dir.display()
        );
    }
    Ok(dir)
}

/// Runs `node client.mjs <url> <token> <scenario> [args]` against the gateway on a free port,
/// serving its requests until it exits; its one JSON line.
fn run_client(w: &mut World, token: &str, scenario: &str, args: Option<&Value>) -> Check<Value> {
    let dir = client_dir()?;
    let server = tiny_http::Server::http("127.0.0.1:0")
        .map_err(|x| Fail::Failed(format!("gateway: {x}")))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .ok_or_else(|| Fail::Failed("gateway: no TCP port".into()))?;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut cmd = Command::new("node");
    cmd.current_dir(&dir)
        .arg("client.mjs")
        .arg(&url)
        .arg(token)
        .arg(scenario)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(a) = args {
        cmd.arg(a.to_string());
    }
    let mut child = cmd
        .spawn()
        .map_err(|x| Fail::Failed(format!("node (is node >= 20 installed?): {x}")))?;
    let gw = Gateway::new(w.host.0);
    let started = std::time::Instant::now();
    let mut exited = None;
    gw.serve_until(w.b.as_mut(), &server, || {
        if let Ok(Some(s)) = child.try_wait() {
            exited = Some(s);
        }
        exited.is_some() || started.elapsed() > Duration::from_secs(120)
    })
    .map_err(|x| Fail::Failed(format!("gateway: {x}")))?;
    if exited.is_none() {
        let _ = child.kill();
    }
    let out = child
        .wait_with_output()
        .map_err(|x| Fail::Failed(format!("node: {x}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(
        out.status.success(),
        "client.mjs {scenario} failed ({}): {stderr}{stdout}",
        out.status
    );
    let Some(line) = stdout.lines().rev().find(|l| l.starts_with('{')) else {
        fail!("client.mjs {scenario} printed no JSON: {stdout} {stderr}");
    };
    serde_json::from_str(line).map_err(|x| Fail::Failed(format!("client.mjs output {line}: {x}")))
}

fn the_sdk_client_prepares_with_a_token_the_owner_confirms_and_a_revoked_token_gets_401(
    w: &mut World,
) -> Check {
    let owner = w.p.owner;
    let (id, secret) = issue(w, owner, "desktop assistant", None)?;
    let before = w.balance(&tool_host_tests::world::account(w.p.recipient))?;
    let amount = w.amt("1.5");
    let args = json!({
        "read": { "name": "icrc1_balance_of",
                  "arguments": { "canister_id": w.ledger.0.to_text(), "account": owner.to_text() } },
        "prepare": { "name": "prepare_icrc1_transfer",
                     "arguments": serde_json::from_str::<Value>(&w.transfer_input(&amount))
                         .map_err(|x| Fail::Failed(x.to_string()))? },
    });
    let got = run_client(w, &secret, "agent", Some(&args))?;
    let tools: Vec<&str> = got["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    ensure!(tools.contains(&"prepare_icrc1_transfer"), "{got}");
    ensure!(tools.contains(&"icrc1_balance_of"), "{got}");
    for never in ["confirm", "decline"] {
        ensure!(
            !tools.contains(&never),
            "an agent is offered {never}: {got}"
        );
    }
    ensure!(
        got["outputSchemas"]["prepare_icrc1_transfer"] == json!(true),
        "prepare_icrc1_transfer publishes an outputSchema: {got}"
    );
    ensure_eq!(
        got["protocolVersion"],
        got["latestProtocolVersion"],
        "the SDK's version is negotiated"
    );
    ensure!(
        !got.to_string().contains(&secret),
        "the token came back in an answer"
    );

    // What the agent prepared is the owner's, waiting for the owner's signed confirm.
    let prepared = &got["prepared"];
    let Some(intent) = prepared["intent_id"]
        .as_str()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        fail!("no intent_id in {prepared}");
    };
    let Some(digest) = prepared["digest"]
        .as_str()
        .and_then(|d| hex::decode(d).ok())
    else {
        fail!("no digest in {prepared}");
    };
    let view = w.intent(intent)?;
    ensure_eq!(view.owner, owner);
    let r = w.confirm_ok(intent, &digest)?;
    ensure!(!r.is_error, "confirm: {}", r.content);
    let after = w.balance(&tool_host_tests::world::account(w.p.recipient))?;
    ensure_eq!(
        after - before,
        3 * 10u64.pow(w.token.decimals as u32) / 2,
        "1.5 tokens arrived"
    );

    w.host
        .revoke_agent_token(w.b.as_mut(), owner, id)?
        .ok_or_fail("revoke_agent_token")?;
    let refused = run_client(w, &secret, "refused", None)?;
    ensure_eq!(refused["status"], json!(401), "{refused}");
    Ok(())
}

fn the_http_and_json_rpc_rules_over_the_gateway(w: &mut World) -> Check {
    let owner = w.p.owner;
    let (_, secret) = issue(w, owner, "rules", None)?;
    let gw = Gateway::new(w.host.0);
    let t = Some(secret.as_str());

    // initialize: the client's version when supported, else the latest.
    for (asked, answered) in [
        ("2025-06-18", "2025-06-18"),
        (VERSION, VERSION),
        ("2024-01-01", VERSION),
    ] {
        let r = post(w, &gw, t, None, &initialize(asked));
        ensure_eq!(r.status, 200, "initialize {asked}: {}", r.text());
        ensure_eq!(
            r.json()["result"]["protocolVersion"],
            json!(answered),
            "initialize {asked}"
        );
        ensure!(
            r.json()["result"]["capabilities"]["tools"].is_object(),
            "{}",
            r.text()
        );
        no_secret(&r, &secret)?;
    }
    let r = post(
        w,
        &gw,
        t,
        Some(VERSION),
        &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    );
    ensure_eq!(
        (r.status, r.body.len()),
        (202, 0),
        "a notification: {}",
        r.text()
    );
    let r = post(w, &gw, t, Some(VERSION), &request(2, "ping", json!({})));
    ensure_eq!(r.json()["result"], json!({}), "ping: {}", r.text());
    ensure!(
        r.via_update,
        "an authenticated request goes through consensus by default"
    );
    // `?certified=false`: the query answers, uncertified. icp0.io's gateway refuses such an
    // answer (the tool host certifies none); the raw domain passes it on.
    let raw = Gateway::raw(w.host.0);
    let ping = request(2, "ping", json!({}));
    let r = post_to(w, &gw, "/mcp?certified=false", t, Some(VERSION), &ping);
    ensure_eq!(
        r.status,
        503,
        "an uncertified answer on icp0.io: {}",
        r.text()
    );
    ensure!(
        r.text().contains("response verification failed"),
        "{}",
        r.text()
    );
    let r = post_to(w, &raw, "/mcp?certified=false", t, Some(VERSION), &ping);
    ensure_eq!(
        r.json()["result"],
        json!({}),
        "ping from the query: {}",
        r.text()
    );
    ensure!(!r.via_update, "?certified=false: a query answer");

    // tools/list, page by page, through consensus.
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0.. {
        ensure!(page < 100, "more than 100 pages");
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let r = post(
            w,
            &gw,
            t,
            Some(VERSION),
            &request(3, "tools/list", params.clone()),
        );
        ensure_eq!(r.status, 200, "tools/list: {}", r.text());
        ensure!(r.via_update, "tools/list goes through consensus by default");
        let q = post_to(
            w,
            &raw,
            "/mcp?certified=false",
            t,
            Some(VERSION),
            &request(3, "tools/list", params),
        );
        ensure!(!q.via_update, "?certified=false: tools/list from the query");
        ensure_eq!(q.json(), r.json(), "the query's page is the update's");
        let j = r.json();
        for tool in j["result"]["tools"].as_array().into_iter().flatten() {
            names.push(tool["name"].as_str().unwrap_or_default().to_string());
            ensure!(tool["inputSchema"]["type"] == json!("object"), "{tool}");
        }
        cursor = j["result"]["nextCursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    let mut distinct = names.clone();
    distinct.sort();
    distinct.dedup();
    ensure_eq!(distinct.len(), names.len(), "pages do not repeat a tool");
    ensure!(
        names.iter().any(|n| n == "prepare_icrc1_transfer"),
        "{names:?}"
    );
    let r = post(
        w,
        &gw,
        t,
        Some(VERSION),
        &request(4, "tools/list", json!({ "cursor": "not a cursor" })),
    );
    ensure_eq!(error_code(&r)?.1, -32602, "an unknown cursor: {}", r.text());

    // tools/call goes through consensus.
    let read = json!({ "name": "icrc1_balance_of",
                       "arguments": { "canister_id": w.ledger.0.to_text(), "account": owner.to_text() } });
    let r = post(w, &gw, t, Some(VERSION), &request(5, "tools/call", read));
    ensure!(
        r.via_update,
        "tools/call is answered by http_request_update"
    );
    ensure_eq!(r.json()["result"]["isError"], json!(false), "{}", r.text());
    ensure!(
        r.json()["result"]["content"][0]["type"] == json!("text"),
        "{}",
        r.text()
    );
    ensure!(
        r.json()["result"]["structuredContent"].is_object(),
        "{}",
        r.text()
    );
    no_secret(&r, &secret)?;

    // JSON-RPC errors.
    let r = gw.post_json(
        w.b.as_mut(),
        "/mcp",
        &[
            ("Authorization", &format!("Bearer {secret}")),
            ("MCP-Protocol-Version", VERSION),
        ],
        "{ not json",
    );
    ensure_eq!(error_code(&r)?, (400, -32700), "bad JSON: {}", r.text());
    let r = post(
        w,
        &gw,
        t,
        Some(VERSION),
        &json!({ "jsonrpc": "1.0", "id": 6, "method": "ping" }),
    );
    ensure_eq!(error_code(&r)?.1, -32600, "not JSON-RPC 2.0: {}", r.text());
    let r = post(
        w,
        &gw,
        t,
        Some(VERSION),
        &request(7, "tools/unknown", json!({})),
    );
    ensure_eq!(error_code(&r)?.1, -32601, "an unknown method: {}", r.text());
    let r = post(
        w,
        &gw,
        t,
        Some(VERSION),
        &request(8, "tools/call", json!({ "arguments": {} })),
    );
    ensure_eq!(
        error_code(&r)?.1,
        -32602,
        "tools/call without a name: {}",
        r.text()
    );

    // Batches: in 2025-03-26 only.
    let batch = json!([
        request(9, "ping", json!({})),
        request(10, "ping", json!({}))
    ]);
    let r = post(w, &gw, t, Some("2025-03-26"), &batch);
    ensure_eq!(r.status, 200, "a batch in 2025-03-26: {}", r.text());
    ensure_eq!(r.json().as_array().map(Vec::len), Some(2), "{}", r.text());
    let r = post(w, &gw, t, Some(VERSION), &batch);
    ensure_eq!(
        error_code(&r)?.1,
        -32600,
        "a batch in {VERSION}: {}",
        r.text()
    );

    // HTTP.
    let r = post(
        w,
        &gw,
        t,
        Some("1999-01-01"),
        &request(11, "ping", json!({})),
    );
    ensure_eq!(
        r.status,
        400,
        "an unsupported MCP-Protocol-Version: {}",
        r.text()
    );
    let r = gw.forward(
        w.b.as_mut(),
        "GET",
        "/mcp",
        vec![("authorization".into(), format!("Bearer {secret}"))],
        vec![],
    );
    ensure_eq!(r.status, 405, "GET: {}", r.text());
    ensure_eq!(
        r.header("allow").map(str::to_ascii_uppercase),
        Some("POST".to_string())
    );
    let r = gw.post_json(
        w.b.as_mut(),
        "/elsewhere",
        &[("Authorization", &format!("Bearer {secret}"))],
        "{}",
    );
    ensure_eq!(r.status, 404, "another path: {}", r.text());
    let r = gw.forward(
        w.b.as_mut(),
        "POST",
        "/mcp",
        vec![
            ("content-type".into(), "text/plain".into()),
            ("authorization".into(), format!("Bearer {secret}")),
        ],
        request(12, "ping", json!({})).to_string().into_bytes(),
    );
    ensure_eq!(r.status, 415, "a body that is not JSON: {}", r.text());
    let big = json!({ "jsonrpc": "2.0", "id": 13, "method": "ping",
                      "params": { "pad": "x".repeat(tool_host_core::mcp::MAX_BODY_BYTES + 1) } });
    let r = post(w, &gw, t, Some(VERSION), &big);
    ensure_eq!(
        r.status,
        413,
        "a body over the bound: {}",
        &r.text()[..r.text().len().min(300)]
    );

    // Tokens: missing, unknown, expired, revoked.
    let r = post(
        w,
        &gw,
        None,
        Some(VERSION),
        &request(14, "tools/list", json!({})),
    );
    ensure_eq!(r.status, 401, "no token: {}", r.text());
    ensure!(
        r.via_update,
        "a refusal goes through consensus too (icp0.io passes it on)"
    );
    ensure!(
        r.header("www-authenticate")
            .is_some_and(|v| v.starts_with("Bearer")),
        "{:?}",
        r.headers
    );
    let r = post_to(
        w,
        &raw,
        "/mcp?certified=false",
        None,
        Some(VERSION),
        &request(14, "ping", json!({})),
    );
    ensure_eq!(
        (r.status, r.via_update),
        (401, false),
        "?certified=false: the query refuses: {}",
        r.text()
    );
    let r = post(
        w,
        &gw,
        Some("not-a-token"),
        Some(VERSION),
        &request(15, "tools/list", json!({})),
    );
    ensure_eq!(r.status, 401, "an unknown token: {}", r.text());
    let now = w.b.time_nanos();
    let (_, short) = issue(w, owner, "short", Some(now + 60_000_000_000))?;
    let r = post(
        w,
        &gw,
        Some(&short),
        Some(VERSION),
        &request(16, "ping", json!({})),
    );
    ensure_eq!(r.status, 200, "a live token: {}", r.text());
    w.b.advance_time(Duration::from_secs(120));
    w.b.tick();
    let r = post(
        w,
        &gw,
        Some(&short),
        Some(VERSION),
        &request(17, "ping", json!({})),
    );
    ensure_eq!(r.status, 401, "an expired token: {}", r.text());
    let listed = w.host.list_agent_tokens(w.b.as_mut(), owner)?;
    ensure_eq!(listed.len(), 2, "{listed:?}");
    ensure!(
        !format!("{listed:?}").contains(&secret),
        "list_agent_tokens shows a secret"
    );
    Ok(())
}

fn a_token_acts_for_its_owner_only_and_never_confirms(w: &mut World) -> Check {
    let (owner, other) = (w.p.owner, w.p.other_owner);
    let (_, secret) = issue(w, owner, "agent of the owner", None)?;
    let gw = Gateway::new(w.host.0);
    let t = Some(secret.as_str());
    let input: Value = serde_json::from_str(&w.transfer_input(&w.amt("1")))
        .map_err(|x| Fail::Failed(x.to_string()))?;
    let r = post(
        w,
        &gw,
        t,
        Some(VERSION),
        &request(
            1,
            "tools/call",
            json!({ "name": "prepare_icrc1_transfer", "arguments": input }),
        ),
    );
    let result = &r.json()["result"];
    ensure_eq!(result["isError"], json!(false), "{}", r.text());
    let mine = result["structuredContent"]["intent_id"]
        .as_str()
        .and_then(|s| s.parse::<u64>().ok());
    let Some(mine) = mine else {
        fail!("no intent_id: {}", r.text())
    };
    ensure_eq!(
        w.intent(mine)?.owner,
        owner,
        "the token prepares for its owner"
    );

    // Another owner's intent, prepared by its own agent through Candid.
    let their_input = w.transfer_input(&w.amt("1"));
    let theirs = w
        .host
        .call_tool(
            w.b.as_mut(),
            w.p.other_agent,
            "prepare_icrc1_transfer",
            &their_input,
            Some(other),
        )?
        .ok_or_fail("the other owner's prepare")?;
    let theirs = prepared_of(&theirs)?;
    let before = w
        .host
        .get_intent(w.b.as_mut(), other, theirs.id)?
        .ok_or_fail("get_intent")?;

    // commit on the other owner's intent, or as if for the other owner: refused, nothing changes.
    for args in [
        json!({ "intent_id": theirs.id.to_string() }),
        json!({ "intent_id": theirs.id.to_string(), "owner": other.to_text() }),
    ] {
        let r = post(
            w,
            &gw,
            t,
            Some(VERSION),
            &request(
                2,
                "tools/call",
                json!({ "name": "commit", "arguments": args }),
            ),
        );
        ensure!(
            r.json()["result"]["isError"] == json!(true) || r.json()["error"].is_object(),
            "commit of another owner's intent: {}",
            r.text()
        );
    }
    let after = w
        .host
        .get_intent(w.b.as_mut(), other, theirs.id)?
        .ok_or_fail("get_intent")?;
    ensure_eq!(
        (after.status.clone(), after.updated_at),
        (before.status, before.updated_at),
        "the other owner's intent did not change"
    );

    // The owner's own intent: commit asks for the owner's consent and sends nothing.
    let log = w.log_length()?;
    let r = post(
        w,
        &gw,
        t,
        Some(VERSION),
        &request(
            3,
            "tools/call",
            json!({ "name": "commit", "arguments": { "intent_id": mine.to_string() } }),
        ),
    );
    ensure_eq!(r.status, 200, "{}", r.text());
    for name in ["confirm", "decline"] {
        let r = post(
            w,
            &gw,
            t,
            Some(VERSION),
            &request(
                4,
                "tools/call",
                json!({ "name": name, "arguments": { "intent_id": mine.to_string() } }),
            ),
        );
        ensure!(
            r.json()["result"]["isError"] == json!(true) || r.json()["error"].is_object(),
            "{name} through a token: {}",
            r.text()
        );
    }
    ensure_eq!(w.log_length()?, log, "nothing reached the ledger");
    let view = w.intent(mine)?;
    ensure!(view.outcome.is_none(), "nothing was sent: {view:?}");
    Ok(())
}
