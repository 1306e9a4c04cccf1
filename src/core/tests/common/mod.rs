#![allow(dead_code)]
//! Helpers for the core's rule tests: small forms written inline.

pub mod schema_gen;

use candid::Principal;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use tool_host_core::form::{form_from_json, Problem};
use tool_host_core::issue::Issue;
use tool_host_core::plan::{build_tool_plans, FormRef, ToolPlan, ToolPlans};
use tool_host_core::read::{read_tool_input, Canister, NameEntry, ReadContext, ReadOutput};

pub const LEDGER: &str = "ryjl3-tyaaa-aaaaa-aaaba-cai";
pub const OWNER: &str = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae";
pub const NOW: u64 = 1_796_119_200_000_000_000;

/// A form of the given methods (and named types).
pub fn form_json(methods: Value, types: Value) -> Value {
    json!({ "format": "candid-profile-resolved", "format_version": 0, "name": "t", "types": types, "methods": methods })
}

pub fn form(methods: Value, types: Value) -> FormRef {
    let f = form_from_json(&form_json(methods, types))
        .unwrap_or_else(|p| panic!("invalid test form: {p:#?}"));
    FormRef {
        id: "t".into(),
        form: Arc::new(f),
    }
}

pub fn problems(v: Value) -> Vec<Problem> {
    form_from_json(&v).expect_err("the form should be refused")
}

pub fn plans(methods: Value, types: Value) -> ToolPlans {
    build_tool_plans(&[form(methods, types)])
}

/// The one skip reason of a method, failing the test if it was not skipped.
pub fn skip_reason(plans: &ToolPlans, method: &str) -> String {
    let reasons: Vec<&str> = plans
        .skipped
        .iter()
        .filter(|s| s.method == method)
        .map(|s| s.reason.as_str())
        .collect();
    assert!(
        !reasons.is_empty(),
        "{method} was not skipped; tools: {:?}",
        plans.tool_names()
    );
    reasons.join("; ")
}

pub fn ledger() -> Canister {
    let refs: BTreeMap<String, Value> = [
        ("query:icrc1_decimals".to_string(), json!(8)),
        ("query:icrc1_symbol".to_string(), json!("TKA")),
        ("query:icrc1_fee".to_string(), json!(10000)),
    ]
    .into_iter()
    .collect();
    Canister {
        id: Principal::from_text(LEDGER).unwrap(),
        label: Some("TKA".into()),
        refs,
        forms: None,
    }
}

pub fn read(plan: &ToolPlan, input: Value) -> Result<ReadOutput, Vec<Issue>> {
    read_names(plan, input, None)
}

pub fn read_names(
    plan: &ToolPlan,
    input: Value,
    names: Option<&BTreeMap<String, Vec<NameEntry>>>,
) -> Result<ReadOutput, Vec<Issue>> {
    let canisters = vec![ledger()];
    let ctx = ReadContext {
        canisters: &canisters,
        now_ns: Some(NOW),
        owner: Some(Principal::from_text(OWNER).unwrap()),
        names,
        memo: None,
    };
    let out = read_tool_input(plan, &input, &ctx)?;
    // Every value read encodes with the form's types.
    tool_host_core::codec::encode_args(plan, &out.args).expect("read values encode");
    Ok(out)
}

/// The issues' codes (and paths) of a failed read.
pub fn codes(r: Result<ReadOutput, Vec<Issue>>) -> Vec<(String, String)> {
    match r {
        Ok(out) => panic!("expected issues, read {}", out.args),
        Err(issues) => issues
            .into_iter()
            .map(|i| (i.code.as_str().to_string(), i.path))
            .collect(),
    }
}

pub fn with_ledger(mut input: Value) -> Value {
    input["canister_id"] = json!(LEDGER);
    input
}

/// Compares `text` with the golden file `tests/golden/<name>`; `UPDATE_GOLDEN=1` rewrites it.
pub fn check_golden(name: &str, text: &str) {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var("UPDATE_GOLDEN").is_ok() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{path} missing; run with UPDATE_GOLDEN=1"));
    assert!(
        want == text,
        "{name} changed; compare with UPDATE_GOLDEN=1 and git diff"
    );
}
