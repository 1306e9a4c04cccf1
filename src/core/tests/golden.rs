//! Golden tests: the ICRC packs' tool definitions are pinned byte for byte. Set
//! `UPDATE_GOLDEN=1` to write them anew after an intended change (a change of generated text).

mod common;
use candid::Principal;
use common::*;
use std::collections::BTreeMap;
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;
use tool_host_core::read::Canister;
use tool_host_core::schema::tool_definitions;

fn defs(canisters: &[Canister]) -> String {
    let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    serde_json::to_string_pretty(&tool_definitions(&plans, canisters)).unwrap() + "\n"
}

#[test]
fn icrc_tool_definitions_with_one_ledger() {
    check_golden("icrc_tools_one_ledger.json", &defs(&[ledger()]));
}

#[test]
fn icrc_tool_definitions_without_canisters() {
    check_golden("icrc_tools_no_canisters.json", &defs(&[]));
}

#[test]
fn icrc_tool_definitions_when_ledgers_disagree() {
    let mut other = ledger();
    other.id = Principal::from_text("mxzaz-hqaaa-aaaar-qaada-cai").unwrap();
    other.label = Some("ckBTC".into());
    other.refs = BTreeMap::from([
        ("query:icrc1_decimals".to_string(), serde_json::json!(8)),
        ("query:icrc1_symbol".to_string(), serde_json::json!("ckBTC")),
    ]);
    let text = defs(&[ledger(), other]);
    check_golden("icrc_tools_two_ledgers.json", &text);
    assert!(
        !text.contains("\"1.5 TKA\""),
        "no symbol when the canisters disagree"
    );
}

#[test]
fn definitions_are_deterministic_bytes() {
    assert_eq!(defs(&[ledger()]), defs(&[ledger()]));
}
