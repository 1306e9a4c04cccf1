//! The CLI contract, run as a user runs it.

use serde_json::Value;
use std::process::Command;

const TOOL: &str = env!("CARGO_BIN_EXE_tool-host");
const REFS: &str =
    r#"{"query:icrc1_decimals":8,"query:icrc1_symbol":"TKA","query:icrc1_fee":10000}"#;
const TO: &str = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae";

fn run(args: &[&str]) -> (i32, Value) {
    let out = Command::new(TOOL).args(args).output().expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (out.status.code().unwrap_or(-1), v)
}

fn transfer_input(to: &str, amount: &str) -> String {
    format!(r#"{{"canister_id":"ryjl3-tyaaa-aaaaa-aaaba-cai","to":"{to}","amount":"{amount}"}}"#)
}

#[test]
fn lint_lists_the_icrc_tools_and_skips_nothing() {
    let (code, v) = run(&["lint", "--pack", "icrc1", "--pack", "icrc2"]);
    assert_eq!(code, 0);
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let mut want = vec![
        "icrc1_balance_of",
        "icrc1_decimals",
        "icrc1_fee",
        "icrc1_metadata",
        "icrc1_minting_account",
        "icrc1_name",
        "icrc1_supported_standards",
        "icrc1_symbol",
        "icrc1_total_supply",
        "prepare_icrc1_transfer",
        "icrc2_allowance",
        "prepare_icrc2_approve",
        "prepare_icrc2_transfer_from",
        "commit",
    ];
    want.sort();
    assert_eq!(tools, want);
    assert_eq!(v["skipped"], serde_json::json!([]));
}

#[test]
fn read_gives_the_exact_amount() {
    let input = transfer_input(TO, "1.5 TKA");
    let (code, v) = run(&[
        "read",
        "--pack",
        "icrc1",
        "--tool",
        "prepare_icrc1_transfer",
        "--input",
        &input,
        "--refs",
        REFS,
        "--owner",
        TO,
    ]);
    assert_eq!(code, 0, "{v}");
    assert!(
        v["value"]
            .as_str()
            .unwrap()
            .contains("amount = 150_000_000 : nat"),
        "{}",
        v["value"]
    );
    assert_eq!(v["preview"]["arguments"]["amount"], "1.5 TKA");
    assert!(v["identity"].is_array());
}

fn issue_codes(v: &Value) -> Vec<String> {
    v["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn read_reports_every_issue_at_once() {
    let bad_to = TO.replace("oj3xs", "oj3xt");
    for (to, amount, want) in [
        (TO, "1.123456789 TKA", vec!["E_PRECISION"]),
        (TO, "1.5 XYZ", vec!["E_UNIT"]),
        (bad_to.as_str(), "1.5 TKA", vec!["E_PRINCIPAL"]),
        (
            bad_to.as_str(),
            "1.123456789 TKA",
            vec!["E_PRINCIPAL", "E_PRECISION"],
        ),
        (bad_to.as_str(), "1.5 XYZ", vec!["E_PRINCIPAL", "E_UNIT"]),
    ] {
        let input = transfer_input(to, amount);
        let (code, v) = run(&[
            "read",
            "--pack",
            "icrc1",
            "--tool",
            "prepare_icrc1_transfer",
            "--input",
            &input,
            "--refs",
            REFS,
            "--owner",
            TO,
        ]);
        assert_eq!(code, 1);
        assert_eq!(issue_codes(&v), want, "{to} {amount}");
    }
}

#[test]
fn read_applies_the_canisters_input_bound_exactly() {
    // The same bound as the canister's (tool_host_core::read::MAX_INPUT_BYTES), whole: an input
    // of exactly 64 KiB is read, one byte more is refused, never cut.
    const LIMIT: usize = 64 * 1024;
    assert_eq!(LIMIT, tool_host_core::read::MAX_INPUT_BYTES);
    let base = transfer_input(TO, "1.5 TKA");
    let padded = |len: usize| format!("{base}{}", " ".repeat(len - base.len()));
    let read = |input: &str| {
        run(&[
            "read",
            "--pack",
            "icrc1",
            "--tool",
            "prepare_icrc1_transfer",
            "--input",
            input,
            "--refs",
            REFS,
            "--owner",
            TO,
        ])
    };
    let (code, v) = read(&padded(LIMIT));
    assert_eq!(code, 0, "{v}");
    assert!(v["value"]
        .as_str()
        .unwrap()
        .contains("amount = 150_000_000 : nat"));
    let (code, v) = read(&padded(LIMIT + 1));
    assert_eq!(code, 1, "{v}");
    assert_eq!(issue_codes(&v), vec!["E_TOO_LARGE"]);
    assert_eq!(v["issues"][0]["path"], "$input");
    // A 74 KB input, as the canister refuses it.
    let (code, v) = read(&padded(74_000));
    assert_eq!(
        (code, issue_codes(&v)),
        (1, vec!["E_TOO_LARGE".to_string()])
    );
}

#[test]
fn classify_a_reply() {
    let (code, v) = run(&[
        "classify",
        "--pack",
        "icrc1",
        "--method",
        "icrc1_transfer",
        "--reply",
        "(variant { Err = variant { TooOld } })",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["class"], "retry_new");
    assert_eq!(v["path"], serde_json::json!(["Err", "TooOld"]));
    let (_, ok) = run(&[
        "classify",
        "--pack",
        "icrc1",
        "--method",
        "icrc1_transfer",
        "--reply",
        "(variant { Ok = 5 })",
    ]);
    assert_eq!(ok["class"], "success");
}

#[test]
fn tools_prints_definitions_sorted() {
    let canisters = r#"[{"id":"ryjl3-tyaaa-aaaaa-aaaba-cai","label":"TKA","refs":{"query:icrc1_decimals":8,"query:icrc1_symbol":"TKA"}}]"#;
    let (code, v) = run(&[
        "tools",
        "--pack",
        "icrc1",
        "--pack",
        "icrc2",
        "--canisters",
        canisters,
    ]);
    assert_eq!(code, 0);
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(names.len(), 14);
}

#[test]
fn lint_refuses_an_invalid_form_with_its_problems() {
    let dir = std::env::temp_dir().join(format!("tool-host-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    std::fs::write(&path, r#"{"format":"candid-profile-resolved","format_version":0,"methods":{"m":{"mode":"often","args":[],"results":[]}}}"#).unwrap();
    let (code, v) = run(&["lint", path.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(v["problems"][0]["path"], "$.methods.m.mode");
}

#[test]
fn usage_errors_exit_2() {
    let (code, v) = run(&["lint", "--pack", "nope"]);
    assert_eq!(code, 2);
    assert!(v["error"].as_str().unwrap().contains("no pack"));
}
