//! Typed fields (what ICRC-21's fields display shows): each tagged top-level field of a
//! one-record argument typed, beside exactly the text the preview shows for it.

mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tool_host_core::display::{display_args, typed_fields, Typed, TypedField};
use tool_host_core::packs::pack;
use tool_host_core::plan::{build_tool_plans, ToolPlan};

/// The typed fields of a read input, each checked against the preview's text for it.
fn typed(plan: &ToolPlan, input: Value) -> BTreeMap<String, Option<Typed>> {
    let out = read(plan, with_ledger(input)).unwrap();
    let refs = ledger().refs;
    let names = BTreeMap::new();
    let preview = display_args(plan, &out.args, &refs, &names);
    typed_fields(plan, &out.args, &refs, &names)
        .into_iter()
        .map(|TypedField { name, shown, typed }| {
            let text = match &preview[&name] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            assert_eq!(shown, text, "{name}: the preview's text");
            (name, typed)
        })
        .collect()
}

#[test]
fn amounts_fees_and_stamps_are_typed_with_the_ledgers_decimals_and_symbol() {
    let p = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let t = typed(
        &p.plans["prepare_icrc1_transfer"],
        json!({ "to": OWNER, "amount": "1.5 TKA" }),
    );
    let tka = |units: u64| {
        Some(Typed::TokenAmount {
            amount: units.into(),
            decimals: 8,
            symbol: "TKA".into(),
        })
    };
    assert_eq!(t["amount"], tka(150_000_000));
    assert_eq!(t["fee"], tka(10_000));
    assert_eq!(
        t["created_at_time"],
        Some(Typed::Timestamp { ns: NOW as i128 })
    );
    assert_eq!(t["to"], None, "an account is text");
    assert_eq!(t["memo"], None);
}

#[test]
fn durations_and_times_in_any_unit_are_typed_in_nanoseconds() {
    let p = plans(
        json!({ "t": { "mode": "update", "args": [{ "type": "record", "fields": [
            { "name": "wait", "type": "opt", "inner": { "type": "nat64", "value": { "kind": "duration", "unit": "s" } } },
            { "name": "at", "type": "opt", "inner": { "type": "nat64", "value": { "kind": "timestamp", "unit": "s" } } },
            { "name": "sub", "type": "opt", "inner": { "type": "blob", "value": { "kind": "subaccount" } } },
            { "name": "note", "type": "opt", "inner": { "type": "text" } }
        ] }], "results": [] } }),
        json!({}),
    );
    let plan = p.plans.values().next().expect("one tool");
    let t = typed(
        plan,
        json!({ "wait": "1m", "at": "2026-12-01T10:00:00Z", "sub": "ff", "note": "hi" }),
    );
    assert_eq!(t["wait"], Some(Typed::Duration { ns: 60_000_000_000 }));
    assert_eq!(
        t["at"],
        Some(Typed::Timestamp {
            ns: 1_796_119_200_000_000_000
        })
    );
    assert_eq!(t["sub"], None);
    assert_eq!(t["note"], None);
}
