//! Instructions of MCP requests over HTTP on the real tool host wasm (docs/perf.md, "MCP over
//! HTTP"): `scripts/build.sh tool_host`, then
//! `LOCAL_IC_COST_MODEL=ic cargo run -q -p local-ic --example mcp_probe` from the repository root.
//! The ICRC packs are registered (no ledger); each request is made twice, as the query
//! `http_request` and then as the update `http_request_update`, anonymously as the HTTP
//! gateway makes them.

use candid::{CandidType, Decode, Deserialize, Encode, Principal};
use local_ic::{InstallMode, LocalIc};

#[derive(CandidType, Deserialize, Debug)]
struct HttpRequest {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: serde_bytes::ByteBuf,
    certificate_version: Option<u16>,
}
#[derive(CandidType, Deserialize, Debug)]
struct HttpResponse {
    status_code: u16,
    headers: Vec<(String, String)>,
    body: serde_bytes::ByteBuf,
    upgrade: Option<bool>,
}
#[derive(CandidType, Deserialize, Debug)]
struct IssueArgs {
    label: String,
    expires_at: Option<u64>,
}
#[derive(CandidType, Deserialize, Debug)]
struct Issued {
    id: u64,
    secret: String,
    label: String,
    expires_at: Option<u64>,
    created_at: u64,
}
#[derive(CandidType, Deserialize, Debug)]
struct ApiError {
    code: String,
    message: String,
}
#[derive(CandidType, Deserialize, Debug)]
enum IssueResult {
    Ok(Issued),
    Err(ApiError),
}
#[derive(CandidType, Deserialize, Debug)]
struct RegisterFormArgs {
    id: String,
    json: String,
}

fn req(secret: &str, body: &str) -> HttpRequest {
    HttpRequest {
        method: "POST".into(),
        url: "/mcp".into(),
        headers: vec![
            ("Content-Type".into(), "application/json".into()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
            ("MCP-Protocol-Version".into(), "2025-06-18".into()),
            ("Authorization".into(), format!("Bearer {secret}")),
        ],
        body: serde_bytes::ByteBuf::from(body.as_bytes().to_vec()),
        certificate_version: Some(2),
    }
}

fn main() {
    let wasm = std::fs::read("out/tool_host.wasm.gz").unwrap();
    let mut ic = LocalIc::new();
    let ctl = Principal::from_slice(&[1; 29]);
    let owner = Principal::from_slice(&[2; 29]);
    let id = ic.create_canister(vec![ctl]);
    ic.install(id, &wasm, vec![], InstallMode::Install, ctl)
        .unwrap();
    for f in ["icrc1", "icrc2"] {
        let json = std::fs::read_to_string(format!("src/core/packs/{f}.json")).unwrap();
        ic.update_call(
            id,
            ctl,
            "register_form",
            Encode!(&RegisterFormArgs { id: f.into(), json }).unwrap(),
        )
        .unwrap();
    }
    let r = ic
        .update_call(
            id,
            owner,
            "issue_agent_token",
            Encode!(&IssueArgs {
                label: "probe".into(),
                expires_at: None
            })
            .unwrap(),
        )
        .unwrap();
    let IssueResult::Ok(t) = Decode!(&r, IssueResult).unwrap() else {
        panic!("{r:?}")
    };
    println!("issued id {} secret len {}", t.id, t.secret.len());
    let anon = Principal::anonymous();
    for round in ["first", "again"] {
        println!("-- {round}");
        for (name, body) in [
            (
                "initialize",
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
            ),
            (
                "tools/list",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            ),
            (
                "tools/call prepare",
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"prepare_icrc1_transfer","arguments":{"canister_id":"ryjl3-tyaaa-aaaaa-aaaba-cai","to":"aaaaa-aa","amount":"1 TKA"}}}"#,
            ),
        ] {
            let q = ic
                .query_call(
                    id,
                    anon,
                    "http_request",
                    Encode!(&req(&t.secret, body)).unwrap(),
                )
                .unwrap();
            let q = Decode!(&q, HttpResponse).unwrap();
            let qi = ic.last_instructions();
            let u = ic
                .update_call(
                    id,
                    anon,
                    "http_request_update",
                    Encode!(&req(&t.secret, body)).unwrap(),
                )
                .unwrap();
            let ui = ic.last_instructions();
            let u = Decode!(&u, HttpResponse).unwrap();
            let text = String::from_utf8_lossy(&u.body);
            println!("{name}: query {} upgrade {:?}, {qi} instructions; update {}, {ui} instructions, reply {} bytes: {}", q.status_code, q.upgrade, u.status_code, u.body.len(), &text[..text.len().min(120)]);
        }
    }
    let bad = ic
        .query_call(
            id,
            anon,
            "http_request",
            Encode!(&req("thk_1_00", "{}")).unwrap(),
        )
        .unwrap();
    println!(
        "bad token: {:?}",
        Decode!(&bad, HttpResponse).unwrap().status_code
    );
    // anonymous other update still refused
    println!(
        "anon issue: {:?}",
        ic.update_call(
            id,
            anon,
            "issue_agent_token",
            Encode!(&IssueArgs {
                label: "x".into(),
                expires_at: None
            })
            .unwrap()
        )
        .map(|_| ())
    );
}
