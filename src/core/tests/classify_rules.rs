//! Reply classification by outcome keys, and how replies and previews are shown.

mod common;
use candid::types::value::{IDLField, VariantValue};
use candid::types::Label;
use candid::{IDLArgs, IDLValue};
use common::*;
use serde_json::json;
use tool_host_core::classify::Classifier;
use tool_host_core::form::OutcomeClass;
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;

fn variant(case: &str, val: IDLValue) -> IDLValue {
    IDLValue::Variant(VariantValue(
        Box::new(IDLField {
            id: Label::Named(case.into()),
            val,
        }),
        0,
    ))
}
fn record(fields: &[(&str, IDLValue)]) -> IDLValue {
    IDLValue::Record(
        fields
            .iter()
            .map(|(n, v)| IDLField {
                id: Label::Named((*n).into()),
                val: v.clone(),
            })
            .collect(),
    )
}

fn transfer_classifier() -> Classifier {
    let p = build_tool_plans(&[pack("icrc1").unwrap()]);
    p.plans["prepare_icrc1_transfer"].classifier.clone()
}

#[test]
fn the_icrc1_transfer_outcome_classes() {
    let c = transfer_classifier();
    let nat = IDLValue::Nat(candid::Nat::from(5u8));
    let cases = [
        (variant("Ok", nat.clone()), OutcomeClass::Success),
        (
            variant(
                "Err",
                variant("Duplicate", record(&[("duplicate_of", nat.clone())])),
            ),
            OutcomeClass::AlreadyDone,
        ),
        (
            variant("Err", variant("TemporarilyUnavailable", IDLValue::Null)),
            OutcomeClass::RetrySame,
        ),
        (
            variant("Err", variant("TooOld", IDLValue::Null)),
            OutcomeClass::RetryNew,
        ),
        (
            variant(
                "Err",
                variant(
                    "CreatedInFuture",
                    record(&[("ledger_time", IDLValue::Nat64(1))]),
                ),
            ),
            OutcomeClass::RetryNew,
        ),
        (
            variant(
                "Err",
                variant("BadFee", record(&[("expected_fee", nat.clone())])),
            ),
            OutcomeClass::FixInput,
        ),
        (
            variant(
                "Err",
                variant("BadBurn", record(&[("min_burn_amount", nat.clone())])),
            ),
            OutcomeClass::FixInput,
        ),
        (
            variant(
                "Err",
                variant("InsufficientFunds", record(&[("balance", nat.clone())])),
            ),
            OutcomeClass::FixInput,
        ),
        (
            variant(
                "Err",
                variant(
                    "GenericError",
                    record(&[
                        ("error_code", nat.clone()),
                        ("message", IDLValue::Text("x".into())),
                    ]),
                ),
            ),
            OutcomeClass::Fail,
        ),
    ];
    for (reply, class) in cases {
        assert_eq!(c.classify(Some(&reply)).class, class, "{reply}");
    }
}

#[test]
fn the_icrc2_outcome_classes() {
    let p = build_tool_plans(&[pack("icrc2").unwrap()]);
    let approve = &p.plans["prepare_icrc2_approve"].classifier;
    let from = &p.plans["prepare_icrc2_transfer_from"].classifier;
    let nat = IDLValue::Nat(candid::Nat::from(5u8));
    let err = |case: &str, f: &str| variant("Err", variant(case, record(&[(f, nat.clone())])));
    assert_eq!(
        approve
            .classify(Some(&err("AllowanceChanged", "current_allowance")))
            .class,
        OutcomeClass::FixInput
    );
    assert_eq!(
        approve
            .classify(Some(&variant(
                "Err",
                variant("Expired", record(&[("ledger_time", IDLValue::Nat64(1))]))
            )))
            .class,
        OutcomeClass::FixInput
    );
    assert_eq!(
        from.classify(Some(&err("InsufficientAllowance", "allowance")))
            .class,
        OutcomeClass::FixInput
    );
    assert_eq!(
        from.classify(Some(&variant("Ok", nat))).class,
        OutcomeClass::Success
    );
}

fn classifier(outcome: serde_json::Value, result: serde_json::Value) -> Classifier {
    let p = plans(
        json!({ "m": { "mode": "update", "intent": "x", "args": [], "results": [result], "outcome": outcome } }),
        json!({}),
    );
    p.plans["prepare_m"].classifier.clone()
}

#[test]
fn outcome_keys_three_spellings_classify_alike() {
    let result = json!({ "type": "variant", "cases": [{ "name": "Ok", "type": "null" }, { "name": "Err", "type": "null" }] });
    for key in ["(0).Ok", ".Ok", "Ok"] {
        let c = classifier(json!({ key: "success", "Err": "fail" }), result.clone());
        assert_eq!(
            c.classify(Some(&variant("Ok", IDLValue::Null))).class,
            OutcomeClass::Success,
            "{key}"
        );
    }
}

#[test]
fn the_deepest_key_wins_and_default_catches_the_rest() {
    let result = json!({ "type": "variant", "cases": [{ "name": "Ok", "type": "null" }, { "name": "Err", "type": "variant", "cases": [{ "name": "A", "type": "null" }, { "name": "B", "type": "null" }] }] });
    let c = classifier(
        json!({ "Err": "fix_input", "Err.A": "retry_same", "default": "success" }),
        result,
    );
    assert_eq!(
        c.classify(Some(&variant("Err", variant("A", IDLValue::Null))))
            .class,
        OutcomeClass::RetrySame
    );
    let b = c.classify(Some(&variant("Err", variant("B", IDLValue::Null))));
    assert_eq!(b.class, OutcomeClass::FixInput);
    assert_eq!(b.path, vec!["Err", "B"]);
    assert_eq!(b.key.as_deref(), Some("Err"));
    let ok = c.classify(Some(&variant("Ok", IDLValue::Null)));
    assert_eq!(
        (ok.class, ok.key),
        (OutcomeClass::Success, None),
        "the default"
    );
}

#[test]
fn without_a_default_an_unnamed_reply_fails() {
    let result = json!({ "type": "variant", "cases": [{ "name": "Ok", "type": "null" }, { "name": "Other", "type": "null" }] });
    let c = classifier(json!({ "Ok": "success" }), result);
    assert_eq!(
        c.classify(Some(&variant("Other", IDLValue::Null))).class,
        OutcomeClass::Fail
    );
}

#[test]
fn outcome_keys_through_record_fields_follow_the_field() {
    let result = json!({ "type": "variant", "cases": [
        { "name": "Ok", "type": "record", "fields": [{ "name": "id", "type": "nat" }, { "name": "state", "type": "variant", "cases": [{ "name": "Done", "type": "null" }, { "name": "Failed", "type": "null" }] }] }
    ] });
    let c = classifier(
        json!({ "Ok.state.Done": "success", "Ok.state.Failed": "fail" }),
        result,
    );
    let reply = variant(
        "Ok",
        record(&[
            ("id", IDLValue::Nat(candid::Nat::from(1u8))),
            ("state", variant("Failed", IDLValue::Null)),
        ]),
    );
    let r = c.classify(Some(&reply));
    assert_eq!(r.class, OutcomeClass::Fail);
    assert_eq!(r.path, vec!["Ok", "state", "Failed"]);
}

#[test]
fn default_alone_classes_every_reply() {
    let p = plans(
        json!({ "m": { "mode": "update", "intent": "x", "args": [], "results": [{ "type": "nat" }], "outcome": { "default": "already_done" } } }),
        json!({}),
    );
    let c = &p.plans["prepare_m"].classifier;
    assert_eq!(
        c.classify(Some(&IDLValue::Nat(candid::Nat::from(1u8))))
            .class,
        OutcomeClass::AlreadyDone
    );
    assert_eq!(c.classify(None).class, OutcomeClass::AlreadyDone);
}

#[test]
fn no_outcome_tag_means_a_reply_is_a_success() {
    let p = plans(
        json!({ "m": { "mode": "update", "intent": "x", "args": [], "results": [] } }),
        json!({}),
    );
    assert_eq!(
        p.plans["prepare_m"].classifier.classify(None).class,
        OutcomeClass::Success
    );
}

#[test]
fn replies_decode_with_the_form_types_and_classify() {
    let p = build_tool_plans(&[pack("icrc1").unwrap()]);
    let plan = &p.plans["prepare_icrc1_transfer"];
    let reply = IDLArgs::new(&[variant(
        "Err",
        variant(
            "InsufficientFunds",
            record(&[("balance", IDLValue::Nat(candid::Nat::from(7u8)))]),
        ),
    )]);
    let types = tool_host_core::candid_types::to_types(&plan.method_def().results);
    let env = tool_host_core::candid_types::type_env(&plan.form.form);
    let bytes = reply.to_bytes_with_types(&env, &types).unwrap();
    let decoded = tool_host_core::codec::decode_reply(plan, &bytes).unwrap();
    assert_eq!(
        plan.classifier.classify(decoded.args.first()).class,
        OutcomeClass::FixInput
    );
    let shown = tool_host_core::display::display_reply(plan, &decoded, &ledger().refs);
    assert_eq!(
        shown,
        json!({ "Err": { "InsufficientFunds": { "balance": "0.00000007 TKA" } } })
    );
    assert!(
        tool_host_core::codec::decode_reply(plan, b"DIDL\x00\x01\x7d").is_err(),
        "a reply that does not fit"
    );
}

#[test]
fn previews_show_amounts_accounts_times_and_exact_bytes() {
    let p = build_tool_plans(&[pack("icrc1").unwrap()]);
    let plan = &p.plans["prepare_icrc1_transfer"];
    let out = read(
        plan,
        with_ledger(json!({ "to": OWNER, "amount": "1.5 TKA" })),
    )
    .unwrap();
    let bytes = tool_host_core::codec::encode_args(plan, &out.args).unwrap();
    let pv = tool_host_core::display::preview(plan, &out, &ledger(), &bytes, "p1");
    assert_eq!(pv.arguments["amount"], json!("1.5 TKA"));
    assert_eq!(pv.arguments["fee"], json!("0.0001 TKA"));
    assert_eq!(pv.arguments["to"], json!(OWNER));
    assert_eq!(
        pv.arguments["created_at_time"],
        json!("2026-12-01T10:00:00Z")
    );
    assert_eq!(pv.arg_hex, hex::encode(&bytes));
    // As an intent stores it: the same text with its last member, `arg_hex`, taken off.
    let full = serde_json::to_string(&pv).unwrap();
    let without = tool_host_core::display::preview_without_hex(plan, &out, &ledger(), "p1");
    let hex_member = format!(",\"arg_hex\":\"{}\"}}", hex::encode(&bytes));
    assert!(full.ends_with(&hex_member), "{full}");
    assert_eq!(
        serde_json::to_string(&without).unwrap(),
        format!("{}}}", &full[..full.len() - hex_member.len()])
    );
    assert_eq!(pv.title, "Transfer tokens");
    assert_eq!(pv.canister_label.as_deref(), Some("TKA"));
    // The bytes decode back to the same value.
    let back = tool_host_core::codec::decode_args(plan, &bytes).unwrap();
    assert_eq!(back.args.len(), 1);
}
