//! MCP's Streamable HTTP transport and JSON-RPC rules (src/core/src/mcp): every refusal with its
//! status and code, version negotiation, batches per version, pages and tool results.

use serde_json::{json, Value};
use tool_host_core::bus::kept::Text;
use tool_host_core::mcp::*;

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn json_headers() -> Vec<(String, String)> {
    h(&[
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", "Bearer thk_1_abc"),
    ])
}

fn req<'a>(
    method: &'a str,
    url: &'a str,
    headers: &'a [(String, String)],
    body: &'a [u8],
) -> HttpIn<'a> {
    HttpIn {
        method,
        url,
        headers,
        body,
    }
}

fn body_json(o: &HttpOut) -> Value {
    serde_json::from_slice(&o.body).expect("a JSON body")
}

fn error_code(o: &HttpOut) -> i64 {
    body_json(o)["error"]["code"]
        .as_i64()
        .expect("a JSON-RPC error")
}

#[test]
fn get_is_405_with_allow_post_and_other_paths_404() {
    let hs = json_headers();
    let e = door(&req("GET", "/mcp", &hs, b"")).unwrap_err();
    assert_eq!(e.status, 405);
    assert_eq!(e.header("Allow"), Some("POST"));
    assert_eq!(body_json(&e)["jsonrpc"], "2.0");
    let e = door(&req("DELETE", "/mcp", &hs, b"")).unwrap_err();
    assert_eq!(e.status, 405);
    for path in ["/", "/mcp/", "/mcpx", "/other"] {
        let e = door(&req("POST", path, &hs, b"{}")).unwrap_err();
        assert_eq!(e.status, 404, "{path}");
    }
    assert!(door(&req("POST", "/mcp?x=1", &hs, b"{}")).is_ok());
}

#[test]
fn bodies_headers_and_urls_over_their_bounds_are_refused_whole() {
    let hs = json_headers();
    let big = vec![b' '; MAX_BODY_BYTES + 1];
    let e = door(&req("POST", "/mcp", &hs, &big)).unwrap_err();
    assert_eq!(e.status, 413);
    assert_eq!(error_code(&e), INVALID_REQUEST);
    assert!(body_json(&e)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("131073"));
    let at = vec![b' '; MAX_BODY_BYTES];
    assert!(
        door(&req("POST", "/mcp", &hs, &at)).is_ok(),
        "the bound itself is accepted"
    );
    let many: Vec<(String, String)> = (0..=MAX_HEADERS)
        .map(|i| (format!("x-{i}"), "v".into()))
        .collect();
    assert_eq!(
        door(&req("POST", "/mcp", &many, b"{}")).unwrap_err().status,
        431
    );
    let long = h(&[("x-long", &"v".repeat(MAX_HEADER_BYTES))]);
    assert_eq!(
        door(&req("POST", "/mcp", &long, b"{}")).unwrap_err().status,
        431
    );
    let url = format!("/mcp?{}", "a".repeat(MAX_URL_BYTES));
    assert_eq!(
        door(&req("POST", &url, &hs, b"{}")).unwrap_err().status,
        414
    );
}

#[test]
fn the_bearer_token_and_the_certified_option_are_read_at_the_door() {
    let hs = json_headers();
    let d = door(&req("POST", "/mcp", &hs, b"{}")).unwrap();
    assert_eq!(d.bearer, Some("thk_1_abc"));
    assert!(
        !d.uncertified_ok,
        "through consensus unless asked otherwise"
    );
    let d = door(&req("POST", "/mcp?certified=false", &hs, b"{}")).unwrap();
    assert!(d.uncertified_ok);
    for value in ["Basic abc", "Bearer", "Bearer   ", "thk_1_abc"] {
        let hs = h(&[("authorization", value)]);
        assert_eq!(
            door(&req("POST", "/mcp", &hs, b"{}")).unwrap().bearer,
            None,
            "{value}"
        );
    }
    let hs = h(&[("AUTHORIZATION", "bearer  tok ")]);
    assert_eq!(
        door(&req("POST", "/mcp", &hs, b"{}")).unwrap().bearer,
        Some("tok")
    );
}

#[test]
fn unauthorized_says_bearer_and_never_repeats_the_token() {
    let o = unauthorized(false, "no token");
    assert_eq!(o.status, 401);
    assert_eq!(
        o.header("www-authenticate"),
        Some("Bearer realm=\"tool-host\"")
    );
    assert_eq!(error_code(&o), INVALID_REQUEST);
    let o = unauthorized(true, "revoked");
    assert!(o
        .header("WWW-Authenticate")
        .unwrap()
        .contains("invalid_token"));
}

#[test]
fn content_type_must_be_json_and_accept_must_allow_it() {
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    for ct in ["text/plain", "application/x-www-form-urlencoded", ""] {
        let hs = h(&[("content-type", ct)]);
        let e = read(&req("POST", "/mcp", &hs, body)).unwrap_err();
        assert_eq!(e.status, 415, "{ct}");
    }
    let hs = h(&[("content-type", "application/json; charset=utf-8")]);
    assert!(
        read(&req("POST", "/mcp", &hs, body)).is_ok(),
        "parameters are allowed; no Accept is any"
    );
    for accept in ["text/event-stream", "text/html", "application/json;q=0"] {
        let hs = h(&[("content-type", "application/json"), ("accept", accept)]);
        assert_eq!(
            read(&req("POST", "/mcp", &hs, body)).unwrap_err().status,
            406,
            "{accept}"
        );
    }
    for accept in [
        "application/json, text/event-stream",
        "*/*",
        "application/*;q=0.5",
    ] {
        let hs = h(&[("content-type", "application/json"), ("accept", accept)]);
        assert!(read(&req("POST", "/mcp", &hs, body)).is_ok(), "{accept}");
    }
}

#[test]
fn the_protocol_version_header_is_checked_except_on_initialize() {
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let with = |v: &str| {
        h(&[
            ("content-type", "application/json"),
            ("MCP-Protocol-Version", v),
        ])
    };
    let hs = with("2024-11-05");
    let e = read(&req("POST", "/mcp", &hs, ping)).unwrap_err();
    assert_eq!(e.status, 400);
    assert_eq!(error_code(&e), INVALID_REQUEST);
    for v in VERSIONS {
        let hs = with(v);
        assert_eq!(read(&req("POST", "/mcp", &hs, ping)).unwrap().0, v);
    }
    let hs = h(&[("content-type", "application/json")]);
    assert_eq!(read(&req("POST", "/mcp", &hs, ping)).unwrap().0, ASSUMED);
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}"#;
    let hs = with("2024-11-05");
    assert!(
        read(&req("POST", "/mcp", &hs, init)).is_ok(),
        "initialize negotiates"
    );
}

#[test]
fn initialize_answers_the_clients_version_when_served_else_the_latest() {
    let info = ServerInfo {
        name: "tool-host",
        version: "0.1.0",
        instructions: "i",
    };
    for v in VERSIONS {
        let r = initialize(Some(&json!({ "protocolVersion": v })), &info).unwrap();
        assert_eq!(r["protocolVersion"], v);
        assert_eq!(r["capabilities"]["tools"]["listChanged"], false);
        assert_eq!(r["serverInfo"]["name"], "tool-host");
    }
    for v in ["2024-11-05", "2099-01-01", ""] {
        let r = initialize(Some(&json!({ "protocolVersion": v })), &info).unwrap();
        assert_eq!(r["protocolVersion"], LATEST);
    }
    assert_eq!(LATEST, "2025-11-25");
    let e = initialize(Some(&json!({})), &info).unwrap_err();
    assert_eq!(e.code, INVALID_PARAMS);
    assert_eq!(initialize(None, &info).unwrap_err().code, INVALID_PARAMS);
    let e = initialize(Some(&json!({ "protocolVersion": 5 })), &info).unwrap_err();
    assert_eq!(e.code, INVALID_PARAMS);
}

fn read_json(body: &str, version: &str) -> Result<(String, Messages), HttpOut> {
    let hs = h(&[
        ("content-type", "application/json"),
        ("mcp-protocol-version", version),
    ]);
    read(&req("POST", "/mcp", &hs, body.as_bytes()))
}

#[test]
fn bodies_that_are_not_json_rpc_are_400_with_their_code() {
    for (body, code) in [
        ("{", PARSE_ERROR),
        ("not json", PARSE_ERROR),
        ("\u{0}", PARSE_ERROR),
        ("42", INVALID_REQUEST),
        (r#"{"id":1,"method":"ping"}"#, INVALID_REQUEST),
        (
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            INVALID_REQUEST,
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            INVALID_REQUEST,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            INVALID_REQUEST,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            INVALID_REQUEST,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, INVALID_REQUEST),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
            INVALID_REQUEST,
        ),
        (r#"{"jsonrpc":"2.0","id":1}"#, INVALID_REQUEST),
    ] {
        let e = read_json(body, "2025-06-18").unwrap_err();
        assert_eq!(e.status, 400, "{body}");
        assert_eq!(error_code(&e), code, "{body}");
    }
    // The id is echoed when it could be read.
    let e = read_json(r#"{"jsonrpc":"2.0","id":"a","method":7}"#, "2025-06-18").unwrap_err();
    assert_eq!(body_json(&e)["id"], "a");
}

#[test]
fn requests_notifications_and_responses_are_told_apart() {
    let (_, m) = read_json(
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{}}"#,
        "2025-11-25",
    )
    .unwrap();
    assert_eq!(
        m.items,
        vec![Message::Request(Request {
            id: json!("x"),
            method: "tools/list".into(),
            params: Some(json!({})),
        })]
    );
    let (_, m) = read_json(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "2025-11-25",
    )
    .unwrap();
    assert_eq!(
        m.items,
        vec![Message::Notification {
            method: "notifications/initialized".into()
        }]
    );
    let (_, m) = read_json(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, "2025-11-25").unwrap();
    assert_eq!(m.items, vec![Message::Response]);
    assert!(!m.batch);
}

#[test]
fn batches_only_in_2025_03_26() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2}]"#;
    for v in ["2025-06-18", "2025-11-25"] {
        let e = read_json(batch, v).unwrap_err();
        assert_eq!(e.status, 400);
        assert_eq!(error_code(&e), INVALID_REQUEST);
        assert_eq!(body_json(&e)["id"], Value::Null);
    }
    let (_, m) = read_json(batch, "2025-03-26").unwrap();
    assert!(m.batch);
    assert!(matches!(m.items[0], Message::Request(_)));
    assert!(matches!(m.items[1], Message::Notification { .. }));
    assert!(
        matches!(&m.items[2], Message::Invalid { id, error } if *id == json!(2) && error.code == INVALID_REQUEST)
    );
    // Without the header a request is 2025-03-26's.
    let hs = h(&[("content-type", "application/json")]);
    assert!(
        read(&req("POST", "/mcp", &hs, batch.as_bytes()))
            .unwrap()
            .1
            .batch
    );
    assert_eq!(
        error_code(&read_json("[]", "2025-03-26").unwrap_err()),
        INVALID_REQUEST
    );
    let over = format!(
        "[{}]",
        vec![r#"{"jsonrpc":"2.0","method":"n"}"#; MAX_BATCH + 1].join(",")
    );
    assert_eq!(
        error_code(&read_json(&over, "2025-03-26").unwrap_err()),
        INVALID_REQUEST
    );
    let init = r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}]"#;
    let (_, m) = read_json(init, "2025-03-26").unwrap();
    assert!(matches!(&m.items[0], Message::Invalid { error, .. } if error.code == INVALID_REQUEST));
}

#[test]
fn replies_are_202_for_notifications_one_response_or_an_array() {
    let o = reply(false, &[]);
    assert_eq!((o.status, o.body.len()), (202, 0));
    let o = reply(false, &[(json!(7), Ok(json!({}).into()))]);
    assert_eq!(o.status, 200);
    assert_eq!(o.header("content-type"), Some("application/json"));
    assert_eq!(
        body_json(&o),
        json!({ "jsonrpc": "2.0", "id": 7, "result": {} })
    );
    let o = reply(
        true,
        &[
            (json!(1), Ok(json!({}).into())),
            (json!("b"), Err(RpcError::method_not_found("nope"))),
        ],
    );
    let v = body_json(&o);
    assert_eq!(v[0]["id"], 1);
    assert_eq!(v[1]["error"]["code"], METHOD_NOT_FOUND);
    assert!(v[1]["error"]["message"].as_str().unwrap().contains("nope"));
}

#[test]
fn a_reply_over_its_bound_is_refused_never_cut() {
    let big = json!({ "text": "x".repeat(MAX_REPLY_BYTES) });
    let o = reply(false, &[(json!(1), Ok(big.into()))]);
    assert_eq!(o.status, 500);
    let v = body_json(&o);
    assert_eq!(v["id"], 1);
    assert_eq!(v["error"]["code"], INTERNAL_ERROR);
    assert!(o.body.len() < 1024);
}

fn named(n: usize) -> Vec<Value> {
    sized(n, 0)
}

/// `n` tools sorted by name, each with a description of `chars` characters.
fn sized(n: usize, chars: usize) -> Vec<Value> {
    let mut names: Vec<String> = (0..n).map(|i| format!("tool_{i:03}")).collect();
    names.sort();
    names
        .into_iter()
        .map(|n| json!({ "name": n, "description": "d".repeat(chars) }))
        .collect()
}

/// Every page of `tools` from the first.
fn pages_of(tools: &[Value]) -> Vec<Value> {
    let texts: Vec<(String, Text)> = tools
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t.to_string().into(),
            )
        })
        .collect();
    let kept: Vec<(&str, &Text)> = texts.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let mut pages = vec![];
    let mut after: Option<String> = None;
    loop {
        let page = list_page(&kept, after.as_deref()).into_value().unwrap();
        let next = page.get("nextCursor").cloned();
        pages.push(page);
        match next {
            Some(c) => {
                let params = json!({ "cursor": c });
                after = list_after(Some(&params)).unwrap();
            }
            None => return pages,
        }
        assert!(pages.len() <= tools.len());
    }
}

/// Large tools: a page holds at most `PAGE_BYTES` of them (one alone when larger), whole.
#[test]
fn tools_list_pages_are_bounded_in_bytes() {
    let tools = sized(20, PAGE_BYTES / 5);
    let pages = pages_of(&tools);
    let mut seen = Vec::new();
    for page in &pages {
        let items = page["tools"].as_array().unwrap();
        let bytes: usize = items.iter().map(|t| t.to_string().len()).sum();
        assert!(bytes <= PAGE_BYTES || items.len() == 1, "{bytes}");
        assert!(page.to_string().len() < MAX_REPLY_BYTES);
        seen.extend(items.iter().cloned());
    }
    assert_eq!(seen, tools);
    assert_eq!(pages.len(), 5, "four of a fifth of the bound each");
    let huge = sized(3, PAGE_BYTES + 10);
    let pages = pages_of(&huge);
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[1]["tools"][0], huge[1]);
}

#[test]
fn tools_list_pages_with_an_opaque_cursor() {
    let tools = named(PAGE_SIZE * 2 + 5);
    let pages = pages_of(&tools);
    let mut seen = Vec::new();
    for page in &pages {
        let items = page["tools"].as_array().unwrap();
        assert!(items.len() <= PAGE_SIZE);
        seen.extend(items.iter().cloned());
    }
    assert_eq!(pages.len(), 3);
    assert_eq!(seen, tools);
    let one = &pages_of(&named(3))[0];
    assert!(one.get("nextCursor").is_none());
    assert_eq!(list_after(None).unwrap(), None);
    assert_eq!(list_after(Some(&json!({}))).unwrap(), None);
    // A null cursor is the first page, as an absent one.
    assert_eq!(list_after(Some(&json!({ "cursor": null }))).unwrap(), None);
    for bad in [
        json!(5),
        json!(""),
        json!("zz"),
        json!("abc"),
        json!("ff"),
        json!("a".repeat(MAX_CURSOR_BYTES + 2)),
    ] {
        let e = list_after(Some(&json!({ "cursor": bad }))).unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS, "{bad}");
    }
}

#[test]
fn tools_call_params_and_results() {
    let (n, a) = call_params(Some(&json!({ "name": "t", "arguments": { "x": 1 } }))).unwrap();
    assert_eq!((n.as_str(), a.as_str()), ("t", r#"{"x":1}"#));
    assert_eq!(call_params(Some(&json!({ "name": "t" }))).unwrap().1, "{}");
    for bad in [
        json!({}),
        json!({ "name": 3 }),
        json!({ "name": "t", "arguments": [1] }),
    ] {
        assert_eq!(
            call_params(Some(&bad)).unwrap_err().code,
            INVALID_PARAMS,
            "{bad}"
        );
    }
    assert_eq!(call_params(None).unwrap_err().code, INVALID_PARAMS);
    let r = tool_result("done", Some(json!({ "intent_id": "1" })), false);
    assert_eq!(r["isError"], false);
    assert_eq!(r["structuredContent"]["intent_id"], "1");
    assert_eq!(r["content"][0], json!({ "type": "text", "text": "done" }));
    assert_eq!(r["content"][1]["text"], r#"{"intent_id":"1"}"#);
    let r = tool_result("NOT_AUTHORIZED: no", None, true);
    assert_eq!(r["isError"], true);
    assert!(r.get("structuredContent").is_none());
    assert_eq!(r["content"].as_array().unwrap().len(), 1);
}

#[test]
fn the_intent_answer_schema_requires_what_every_answer_has() {
    let s = intent_answer_schema();
    assert_eq!(s["type"], "object");
    let required: Vec<&str> = s["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        required,
        ["intent_id", "status", "preview", "digest", "confirm"]
    );
    for r in required {
        assert!(s["properties"].get(r).is_some(), "{r}");
    }
}

#[test]
fn prepare_tools_and_commit_publish_the_schema_read_tools_do_not() {
    use tool_host_core::bus::{commit_decl, host_decls};
    use tool_host_core::packs::pack;
    assert_eq!(commit_decl().output_schema, Some(intent_answer_schema()));
    let plans =
        tool_host_core::plan::build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let decls = host_decls(&plans, &[]);
    assert!(decls.iter().any(|d| d.name.starts_with("prepare_")));
    for d in decls {
        let prepare = d.name.starts_with("prepare_") || d.name == "commit";
        assert_eq!(d.output_schema.is_some(), prepare, "{}", d.name);
    }
}

#[test]
fn negotiation_and_support() {
    assert_eq!(negotiate("2025-03-26"), "2025-03-26");
    assert_eq!(negotiate("1999-01-01"), LATEST);
    assert!(is_supported("2025-06-18") && !is_supported("2024-11-05"));
}

/// The response text (the reply path) is the response value's JSON, for values, text answers
/// and errors, with any id.
#[test]
fn response_text_is_the_response_value() {
    let result = json!({ "tools": [{ "name": "a\"b", "n": 1.5 }], "nextCursor": "61" });
    for id in [json!(1), json!("x\"y"), Value::Null] {
        let cases: [(Result<Answer, RpcError>, Result<Value, RpcError>); 3] = [
            (Ok(result.clone().into()), Ok(result.clone())),
            (Ok(Answer::Text(result.to_string())), Ok(result.clone())),
            (
                Err(RpcError::invalid_params("bad \"cursor\"")),
                Err(RpcError::invalid_params("bad \"cursor\"")),
            ),
        ];
        for (answer, value) in cases {
            let text: Value = serde_json::from_str(&response_text(&id, &answer)).unwrap();
            assert_eq!(text, response(&id, &value));
        }
    }
}
