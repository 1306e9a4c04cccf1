//! Input reading: a test per reader rule and per issue code, every issue at once, exact values.

mod common;
use candid::{IDLValue, Principal};
use common::*;
use serde_json::json;
use std::collections::BTreeMap;
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;
use tool_host_core::read::NameEntry;

fn icrc() -> tool_host_core::plan::ToolPlans {
    build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()])
}

fn transfer(
    input: serde_json::Value,
) -> Result<tool_host_core::read::ReadOutput, Vec<tool_host_core::issue::Issue>> {
    let p = icrc();
    read(&p.plans["prepare_icrc1_transfer"], with_ledger(input))
}

fn field<'a>(v: &'a IDLValue, name: &str) -> &'a IDLValue {
    let IDLValue::Record(fs) = v else {
        panic!("not a record: {v}")
    };
    &fs.iter()
        .find(|f| f.id.to_string() == name)
        .unwrap_or_else(|| panic!("no field {name}"))
        .val
}

#[test]
fn amounts_in_human_units_are_exact() {
    let out = transfer(json!({ "to": OWNER, "amount": "1.5 TKA" })).unwrap();
    let arg = &out.args.args[0];
    assert_eq!(
        field(arg, "amount"),
        &IDLValue::Nat(candid::Nat::from(150_000_000u64))
    );
    assert_eq!(
        field(arg, "fee"),
        &IDLValue::Opt(Box::new(IDLValue::Nat(candid::Nat::from(10_000u64))))
    );
    assert_eq!(
        field(arg, "created_at_time"),
        &IDLValue::Opt(Box::new(IDLValue::Nat64(NOW)))
    );
}

#[test]
fn e_precision_more_fraction_digits_than_decimals() {
    assert_eq!(
        codes(transfer(
            json!({ "to": OWNER, "amount": "1.123456789 TKA" })
        )),
        vec![("E_PRECISION".into(), "$args[0].amount".into())]
    );
}

#[test]
fn e_unit_another_symbol() {
    assert_eq!(
        codes(transfer(json!({ "to": OWNER, "amount": "1.5 XYZ" }))),
        vec![("E_UNIT".into(), "$args[0].amount".into())]
    );
}

#[test]
fn e_syntax_an_amount_that_is_not_decimal() {
    assert_eq!(
        codes(transfer(json!({ "to": OWNER, "amount": "1,5" })))[0].0,
        "E_SYNTAX"
    );
}

#[test]
fn e_principal_a_wrong_checksum() {
    // One character changed in the middle of a valid principal.
    let bad =
        "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae".replace("oj3xs", "oj3xt");
    assert_eq!(
        codes(transfer(json!({ "to": bad, "amount": "1" }))),
        vec![("E_PRINCIPAL".into(), "$args[0].to".into())]
    );
}

#[test]
fn every_issue_at_once() {
    let bad = OWNER.replace("oj3xs", "oj3xt");
    let c = codes(transfer(
        json!({ "to": bad, "amount": "1.123456789 TKA", "extra": 1 }),
    ));
    let only: Vec<&str> = c.iter().map(|(code, _)| code.as_str()).collect();
    assert_eq!(only, vec!["E_UNKNOWN_PARAM", "E_PRINCIPAL", "E_PRECISION"]);
}

#[test]
fn e_account_a_bad_account_checksum() {
    assert_eq!(
        codes(transfer(
            json!({ "to": format!("{OWNER}-aaaaaaa.1"), "amount": "1" })
        ))[0]
            .0,
        "E_ACCOUNT"
    );
}

#[test]
fn accounts_with_subaccounts_are_read() {
    let out = transfer(json!({ "to": format!("{OWNER}-6cc627i.1"), "amount": "1" })).unwrap();
    let to = field(&out.args.args[0], "to");
    let mut sub = vec![0u8; 32];
    sub[31] = 1;
    assert_eq!(
        field(to, "subaccount"),
        &IDLValue::Opt(Box::new(IDLValue::Blob(sub)))
    );
}

#[test]
fn e_missing_and_e_unknown_param() {
    let c = codes(transfer(json!({ "amount": "1", "colour": "red" })));
    assert!(c.contains(&("E_MISSING".into(), "$args[0].to".into())));
    assert!(c.contains(&("E_UNKNOWN_PARAM".into(), "$input.colour".into())));
}

#[test]
fn e_type_a_number_where_text_is_read() {
    assert_eq!(
        codes(transfer(json!({ "to": OWNER, "amount": 1.5 })))[0].0,
        "E_TYPE"
    );
}

#[test]
fn e_input_an_input_that_is_not_an_object_or_not_json() {
    let p = icrc();
    assert_eq!(
        codes(read(&p.plans["prepare_icrc1_transfer"], json!([1, 2])))[0].0,
        "E_INPUT"
    );
    let canisters = vec![ledger()];
    let ctx = tool_host_core::read::ReadContext {
        canisters: &canisters,
        now_ns: Some(NOW),
        ..Default::default()
    };
    let r = tool_host_core::read::read_tool_input_text(
        &p.plans["prepare_icrc1_transfer"],
        "{not json",
        &ctx,
    );
    assert_eq!(r.unwrap_err()[0].code.as_str(), "E_INPUT");
}

#[test]
fn e_too_large_an_oversized_input_text_is_refused_not_cut() {
    let p = icrc();
    let canisters = vec![ledger()];
    let ctx = tool_host_core::read::ReadContext {
        canisters: &canisters,
        now_ns: Some(NOW),
        ..Default::default()
    };
    let big = format!("{{\"to\": \"{}\"}}", "a".repeat(70_000));
    let r =
        tool_host_core::read::read_tool_input_text(&p.plans["prepare_icrc1_transfer"], &big, &ctx);
    assert_eq!(r.unwrap_err()[0].code.as_str(), "E_TOO_LARGE");
}

#[test]
fn e_canister_a_canister_the_tool_does_not_apply_to() {
    let p = icrc();
    let input = json!({ "canister_id": "aaaaa-aa", "to": OWNER, "amount": "1" });
    let c = codes(read(&p.plans["prepare_icrc1_transfer"], input));
    assert_eq!(
        c,
        vec![("E_CANISTER".into(), "canister_id".into())],
        "no spurious ref issues when the canister is wrong"
    );
    let missing = codes(read(&p.plans["icrc1_fee"], json!({})));
    assert_eq!(missing[0].0, "E_MISSING");
}

#[test]
fn a_read_tool_reads_the_whole_argument_account() {
    let p = icrc();
    let out = read(
        &p.plans["icrc1_balance_of"],
        with_ledger(json!({ "account": OWNER })),
    )
    .unwrap();
    assert_eq!(
        field(&out.args.args[0], "owner"),
        &IDLValue::Principal(Principal::from_text(OWNER).unwrap())
    );
}

#[test]
fn optional_inputs_may_be_left_out_or_null() {
    let p = icrc();
    let approve = &p.plans["prepare_icrc2_approve"];
    let out = read(
        approve,
        with_ledger(json!({ "spender": OWNER, "amount": "2", "expires_at": null })),
    )
    .unwrap();
    assert_eq!(field(&out.args.args[0], "expires_at"), &IDLValue::None);
    let out = read(approve, with_ledger(json!({ "spender": OWNER, "amount": "2", "expires_at": "in 1h", "expected_allowance": "0.5 TKA" }))).unwrap();
    assert_eq!(
        field(&out.args.args[0], "expires_at"),
        &IDLValue::Opt(Box::new(IDLValue::Nat64(NOW + 3_600_000_000_000)))
    );
    assert_eq!(
        field(&out.args.args[0], "expected_allowance"),
        &IDLValue::Opt(Box::new(IDLValue::Nat(candid::Nat::from(50_000_000u64))))
    );
}

#[test]
fn owner_defaults_fill_the_source_account_never_the_input() {
    let p = icrc();
    let out = read(
        &p.plans["prepare_icrc2_transfer_from"],
        with_ledger(json!({ "to": OWNER, "amount": "1" })),
    )
    .unwrap();
    let from = field(&out.args.args[0], "from");
    assert_eq!(
        field(from, "owner"),
        &IDLValue::Principal(Principal::from_text(OWNER).unwrap())
    );
    let c = codes(read(
        &p.plans["prepare_icrc2_transfer_from"],
        with_ledger(json!({ "to": OWNER, "amount": "1", "from": OWNER })),
    ));
    assert_eq!(
        c[0].0, "E_UNKNOWN_PARAM",
        "a hidden position is not an input"
    );
    let out = transfer(json!({ "to": OWNER, "amount": "1" })).unwrap();
    let sub = tool_host_core::funds::deposit_subaccount(&Principal::from_text(OWNER).unwrap());
    assert_eq!(
        field(&out.args.args[0], "from_subaccount"),
        &IDLValue::Opt(Box::new(IDLValue::Blob(sub.to_vec())))
    );
}

#[test]
fn the_stamp_and_a_unique_memo_are_filled() {
    let a = transfer(json!({ "to": OWNER, "amount": "1" })).unwrap();
    let b = transfer(json!({ "to": OWNER, "amount": "2" })).unwrap();
    assert_eq!(a.stamp_ns, Some(NOW));
    assert_eq!(a.memo.as_ref().unwrap().len(), 16);
    assert_ne!(a.memo, b.memo);
    assert_eq!(
        field(&a.args.args[0], "memo"),
        &IDLValue::Opt(Box::new(IDLValue::Blob(a.memo.clone().unwrap())))
    );
}

#[test]
fn identity_is_the_canonical_value_not_the_spelling() {
    let a = transfer(json!({ "to": OWNER, "amount": "1.5 TKA" })).unwrap();
    let b =
        transfer(json!({ "to": format!("  {}  ", OWNER.to_uppercase()), "amount": "1.50000000" }))
            .unwrap();
    assert_eq!(a.identity, b.identity);
    assert_eq!(a.identity_digest(), b.identity_digest());
}

#[test]
fn e_input_a_ref_that_is_not_known() {
    let p = icrc();
    let canisters = vec![tool_host_core::read::Canister {
        refs: BTreeMap::new(),
        ..ledger()
    }];
    let ctx = tool_host_core::read::ReadContext {
        canisters: &canisters,
        now_ns: Some(NOW),
        ..Default::default()
    };
    let r = tool_host_core::read::read_tool_input(
        &p.plans["prepare_icrc1_transfer"],
        &with_ledger(json!({ "to": OWNER, "amount": "1" })),
        &ctx,
    );
    let issues = r.unwrap_err();
    assert_eq!(issues[0].code.as_str(), "E_INPUT");
    assert!(issues[0].message.contains("decimals"));
}

fn text_form() -> tool_host_core::plan::ToolPlans {
    plans(
        json!({ "t": { "mode": "query", "args": [{ "type": "record", "fields": [
            { "name": "note", "type": "opt", "inner": { "type": "text", "text": { "max_len": 5, "pattern": "^[a-z]+$" } } },
            { "name": "site", "type": "opt", "inner": { "type": "text", "text": { "format": "url" } } },
            { "name": "mail", "type": "opt", "inner": { "type": "text", "text": { "format": "email" } } },
            { "name": "free", "type": "opt", "inner": { "type": "text" } },
            { "name": "sized", "type": "opt", "inner": { "type": "text", "range": { "min": 2, "max": 3 } } },
            { "name": "flag", "type": "opt", "inner": { "type": "bool" } },
            { "name": "n", "type": "opt", "inner": { "type": "nat8", "describe": "A count.", "range": { "max": 10 } } },
            { "name": "who", "type": "opt", "inner": { "type": "principal" } },
            { "name": "sub", "type": "opt", "inner": { "type": "blob", "value": { "kind": "subaccount" } } },
            { "name": "bytes", "type": "opt", "inner": { "type": "blob", "range": { "max": 2 } } },
            { "name": "wait", "type": "opt", "inner": { "type": "nat64", "value": { "kind": "duration", "unit": "s" } } },
            { "name": "at", "type": "opt", "inner": { "type": "nat64", "value": { "kind": "timestamp", "unit": "s" } } }
        ] }], "results": [] } }),
        json!({}),
    )
}

fn text_read(
    input: serde_json::Value,
) -> Result<tool_host_core::read::ReadOutput, Vec<tool_host_core::issue::Issue>> {
    read(&text_form().plans["t"], with_ledger(input))
}

#[test]
fn text_is_taken_as_given_within_its_tag() {
    let out = text_read(json!({ "note": "abc", "free": "  spaced  " })).unwrap();
    assert_eq!(
        field(&out.args.args[0], "free"),
        &IDLValue::Opt(Box::new(IDLValue::Text("  spaced  ".into())))
    );
    assert_eq!(
        codes(text_read(json!({ "note": "abcdef" })))[0].0,
        "E_TOO_LARGE"
    );
    assert_eq!(
        codes(text_read(json!({ "free": "x".repeat(1025) })))[0].0,
        "E_TOO_LARGE"
    );
    assert_eq!(codes(text_read(json!({ "sized": "a" })))[0].0, "E_RANGE");
}

#[test]
fn e_pattern_text_that_does_not_match() {
    assert_eq!(
        codes(text_read(json!({ "note": "ABC" }))),
        vec![("E_PATTERN".into(), "$args[0].note".into())]
    );
}

#[test]
fn e_format_urls_and_emails() {
    assert_eq!(
        codes(text_read(json!({ "site": "ftp://x" })))[0].0,
        "E_FORMAT"
    );
    assert_eq!(
        codes(text_read(json!({ "mail": "nobody" })))[0].0,
        "E_FORMAT"
    );
    assert!(
        text_read(json!({ "site": "https://internetcomputer.org", "mail": "a@b.org" })).is_ok()
    );
}

#[test]
fn bool_is_true_or_false_text() {
    let out = text_read(json!({ "flag": "true" })).unwrap();
    assert_eq!(
        field(&out.args.args[0], "flag"),
        &IDLValue::Opt(Box::new(IDLValue::Bool(true)))
    );
    assert_eq!(codes(text_read(json!({ "flag": "yes" })))[0].0, "E_SYNTAX");
    assert_eq!(codes(text_read(json!({ "flag": true })))[0].0, "E_TYPE");
}

#[test]
fn e_range_integers_within_type_and_range_tag() {
    assert_eq!(codes(text_read(json!({ "n": "11" })))[0].0, "E_RANGE");
    assert_eq!(codes(text_read(json!({ "n": "300" })))[0].0, "E_RANGE");
    assert_eq!(codes(text_read(json!({ "n": "+1" })))[0].0, "E_SYNTAX");
    assert!(text_read(json!({ "n": "10" })).is_ok());
}

#[test]
fn subaccounts_bytes_durations_and_times() {
    let out = text_read(
        json!({ "sub": "ff", "bytes": "0a0b", "wait": "1m", "at": "2026-12-01T10:00:00Z" }),
    )
    .unwrap();
    let arg = &out.args.args[0];
    let mut sub = vec![0u8; 32];
    sub[31] = 0xff;
    assert_eq!(
        field(arg, "sub"),
        &IDLValue::Opt(Box::new(IDLValue::Blob(sub)))
    );
    assert_eq!(
        field(arg, "wait"),
        &IDLValue::Opt(Box::new(IDLValue::Nat64(60)))
    );
    assert_eq!(
        field(arg, "at"),
        &IDLValue::Opt(Box::new(IDLValue::Nat64(1_796_119_200)))
    );
    assert_eq!(
        codes(text_read(json!({ "wait": "1500ms" })))[0].0,
        "E_PRECISION"
    );
    assert_eq!(
        codes(text_read(json!({ "bytes": "010203" })))[0].0,
        "E_RANGE"
    );
}

#[test]
fn relative_times_are_one_intent_whenever_prepared() {
    let p = text_form();
    let canisters = vec![ledger()];
    let at = |now| {
        let ctx = tool_host_core::read::ReadContext {
            canisters: &canisters,
            now_ns: Some(now),
            ..Default::default()
        };
        tool_host_core::read::read_tool_input(
            &p.plans["t"],
            &with_ledger(json!({ "at": "in 1h" })),
            &ctx,
        )
        .unwrap()
    };
    let a = at(NOW);
    let b = at(NOW + 5_000_000_000);
    assert_eq!(a.identity, b.identity);
    assert_ne!(a.args, b.args, "resolved again against the clock");
}

fn neuron_form() -> tool_host_core::plan::ToolPlans {
    let types = json!({
        "NeuronId": { "type": "record", "fields": [{ "name": "id", "type": "nat64", "describe": "A neuron id." }] },
        "Command": { "type": "variant", "cases": [
            { "name": "Follow", "type": "record", "fields": [
                { "name": "topic", "type": "int32", "describe": "The topic." },
                { "name": "followees", "type": "vec", "inner": { "type": "NeuronId" } }
            ] },
            { "name": "Refresh", "type": "null" }
        ] }
    });
    plans(
        json!({ "manage_neuron": { "mode": "update", "intent": "Manage a neuron", "args": [{ "type": "record", "fields": [
            { "name": "id", "type": "opt", "inner": { "type": "NeuronId" } },
            { "name": "command", "type": "opt", "inner": { "type": "Command" } }
        ] }], "results": [] } }),
        types,
    )
}

#[test]
fn d050_nested_json_reads_each_leaf_by_its_rule_with_paths() {
    let p = neuron_form();
    let plan = &p.plans["prepare_manage_neuron"];
    let good = with_ledger(
        json!({ "id": { "id": "7" }, "command": { "tag": "Follow", "value": { "topic": "3", "followees": [{ "id": "1" }, { "id": "2" }] } } }),
    );
    let out = read(plan, good).unwrap();
    assert!(out.args.to_string().contains("Follow"));
    let bad = with_ledger(
        json!({ "command": { "tag": "Follow", "value": { "topic": "3", "followees": [{ "id": "1" }, { "id": "x" }] } } }),
    );
    assert_eq!(
        codes(read(plan, bad)),
        vec![(
            "E_SYNTAX".into(),
            "$args[0].command.Follow.followees[1].id".into()
        )]
    );
    let null_case = with_ledger(json!({ "command": { "tag": "Refresh" } }));
    assert!(read(plan, null_case).is_ok(), "a null case takes no value");
}

#[test]
fn d050_nested_json_refusals() {
    let p = neuron_form();
    let plan = &p.plans["prepare_manage_neuron"];
    let c = codes(read(
        plan,
        with_ledger(json!({ "id": { "id": "1", "extra": "2" } })),
    ));
    assert_eq!(
        c,
        vec![("E_UNKNOWN_PARAM".into(), "$args[0].id.extra".into())]
    );
    let c = codes(read(
        plan,
        with_ledger(json!({ "command": { "tag": "Nope" } })),
    ));
    assert_eq!(c[0].1, "$args[0].command.tag");
    let c = codes(read(plan, with_ledger(json!({ "id": {} }))));
    assert_eq!(c, vec![("E_MISSING".into(), "$args[0].id.id".into())]);
    let c = codes(read(plan, with_ledger(json!({ "id": { "id": 1 } }))));
    assert_eq!(c[0].0, "E_TYPE");
}

#[test]
fn e_too_large_vec_elements_and_values() {
    let p = neuron_form();
    let plan = &p.plans["prepare_manage_neuron"];
    let many: Vec<serde_json::Value> = (0..257).map(|i| json!({ "id": i.to_string() })).collect();
    let c = codes(read(
        plan,
        with_ledger(
            json!({ "command": { "tag": "Follow", "value": { "topic": "1", "followees": many } } }),
        ),
    ));
    assert_eq!(
        c,
        vec![(
            "E_TOO_LARGE".into(),
            "$args[0].command.Follow.followees".into()
        )]
    );
    // 4096 values in one input at most.
    let nested = plans(
        json!({ "m": { "mode": "query", "args": [{ "type": "vec", "inner": { "type": "vec", "inner": { "type": "principal" } } }], "results": [] } }),
        json!({}),
    );
    let row: Vec<&str> = vec!["aaaaa-aa"; 200];
    let rows: Vec<Vec<&str>> = vec![row; 25];
    let c = codes(read(
        &nested.plans["m"],
        with_ledger(json!({ "input": rows })),
    ));
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].0, "E_TOO_LARGE");
}

fn named_form() -> tool_host_core::plan::ToolPlans {
    let mut v = form_json(
        json!({
            "list_neurons": { "mode": "query", "args": [], "results": [{ "type": "vec", "inner": { "type": "record", "fields": [
                { "name": "name", "type": "text" }, { "name": "id", "type": "nat64" }
            ] } }] },
            "follow": { "mode": "update", "intent": "Follow", "args": [{ "type": "record", "fields": [
                { "name": "neuron", "type": "nat64", "describe": "A neuron id.", "named": "neurons" }
            ] }], "results": [] }
        }),
        json!({}),
    );
    v["names"] = json!({ "neurons": { "method": "list_neurons", "list": "(0)", "name": "name", "value": "id" } });
    let f = tool_host_core::form::form_from_json(&v).unwrap();
    build_tool_plans(&[tool_host_core::plan::FormRef {
        id: "t".into(),
        form: std::sync::Arc::new(f),
    }])
}

#[test]
fn named_inputs_take_a_name_or_a_value_as_one_intent() {
    let p = named_form();
    let plan = &p.plans["prepare_follow"];
    let mut names = BTreeMap::new();
    names.insert(
        "neurons".to_string(),
        vec![
            NameEntry {
                name: "alpha".into(),
                value: IDLValue::Nat64(11),
            },
            NameEntry {
                name: "beta".into(),
                value: IDLValue::Nat64(12),
            },
            NameEntry {
                name: "twin".into(),
                value: IDLValue::Nat64(13),
            },
            NameEntry {
                name: "twin".into(),
                value: IDLValue::Nat64(14),
            },
        ],
    );
    let by_name = read_names(
        plan,
        with_ledger(json!({ "neuron": "alpha" })),
        Some(&names),
    )
    .unwrap();
    let by_value = read_names(plan, with_ledger(json!({ "neuron": "11" })), Some(&names)).unwrap();
    assert_eq!(by_name.identity, by_value.identity);
    assert_eq!(
        by_name
            .names_used
            .get("$args[0].neuron")
            .map(String::as_str),
        Some("alpha")
    );
    assert_eq!(
        codes(read_names(
            plan,
            with_ledger(json!({ "neuron": "gamma" })),
            Some(&names)
        ))[0]
            .0,
        "E_NAME_NOT_FOUND"
    );
    assert_eq!(
        codes(read_names(
            plan,
            with_ledger(json!({ "neuron": "twin" })),
            Some(&names)
        ))[0]
            .0,
        "E_NAME_AMBIGUOUS"
    );
    assert_eq!(
        codes(read_names(
            plan,
            with_ledger(json!({ "neuron": "alpha" })),
            None
        ))[0]
            .0,
        "E_NAMES_UNREAD"
    );
}

#[test]
fn case_tools_send_their_case_and_the_case_is_part_of_the_identity() {
    let p = plans(
        json!({ "m": { "mode": "update", "args": [{ "type": "variant", "cases": [
            { "name": "A", "type": "principal", "intent": "A" },
            { "name": "B", "type": "principal", "intent": "B" }
        ] }], "results": [] } }),
        json!({}),
    );
    let a = read(
        &p.plans["prepare_m_A"],
        with_ledger(json!({ "principal": OWNER })),
    )
    .unwrap();
    let b = read(
        &p.plans["prepare_m_B"],
        with_ledger(json!({ "principal": OWNER })),
    )
    .unwrap();
    assert!(a.args.to_string().contains("A = principal"), "{}", a.args);
    assert_ne!(a.identity, b.identity);
}

#[test]
fn a_name_never_stands_in_for_an_amount_refused_for_its_units() {
    // Found by the fourth review: an amount in units that are not the ledger's (E_CANISTER)
    // fell back to a name's value, read in no units at all.
    let mut v = form_json(
        json!({
            "presets": { "mode": "query", "args": [], "results": [{ "type": "vec", "inner": { "type": "record", "fields": [
                { "name": "name", "type": "text" }, { "name": "amount", "type": "nat" }
            ] } }] },
            "icrc1_transfer": { "mode": "update", "intent": "Send", "args": [{ "type": "record", "fields": [
                { "name": "to", "type": "principal" },
                { "name": "amount", "type": "nat", "named": "presets", "value": { "kind": "token_amount", "decimals": 18, "symbol": "TKA" } }
            ] }], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": [{ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }] }] }],
              "outcome": { "Ok": "success", "Err.Duplicate": "already_done" } }
        }),
        json!({}),
    );
    v["names"] = json!({ "presets": { "method": "presets", "list": "(0)", "name": "name", "value": "amount" } });
    let f = tool_host_core::form::form_from_json(&v).unwrap();
    let p = build_tool_plans(&[tool_host_core::plan::FormRef {
        id: "t".into(),
        form: std::sync::Arc::new(f),
    }]);
    let plan = &p.plans["prepare_icrc1_transfer"];
    let mut names = BTreeMap::new();
    names.insert(
        "presets".to_string(),
        vec![NameEntry {
            name: "1".into(),
            value: IDLValue::Nat(candid::Nat::from(100_000_000_000u64)),
        }],
    );
    let c = codes(read_names(
        plan,
        with_ledger(json!({ "to": OWNER, "amount": "1" })),
        Some(&names),
    ));
    assert_eq!(c, vec![("E_CANISTER".into(), "$args[0].amount".into())]);
}

/// The input's JSON is read as serde_json reads it, whatever whitespace surrounds it, and text
/// that is not JSON gets serde_json's message for the text as given (its line and column).
#[test]
fn json_text_reads_as_serde_json_reads_it_with_its_errors_placed_in_the_text_given() {
    use tool_host_core::read::json_value;
    let cases = [
        r#"{"a":1}"#,
        "  \n\t\r {\"a\": [1, 2]} \r\n\t ",
        "\n\n\n{\"a\":",
        "\n\n   {\"a\" 1}",
        "   ",
        "",
        "\u{a0}{\"a\":1}",
        "{\"a\":1}\u{3000}",
        " \"é\" ",
        "\n\n  tru",
        " {} x",
    ];
    for text in cases {
        let ours = json_value(text).map_err(|e| e.to_string());
        let theirs = serde_json::from_str::<serde_json::Value>(text).map_err(|e| e.to_string());
        assert_eq!(ours, theirs, "{text:?}");
    }
    // 60 KiB of padding, as a model may send it, still reads.
    let padded = format!("{}{{\"a\":1}}{}", " ".repeat(61_440), "\n".repeat(100));
    assert_eq!(json_value(&padded).unwrap(), serde_json::json!({"a": 1}));
}

/// A canister listed twice (a CLI's list may) is the entry that applies to the tool's form,
/// as the tool's schema offers it.
#[test]
fn a_canister_listed_twice_is_read_as_the_entry_that_applies() {
    use tool_host_core::read::{read_tool_input, Canister, ReadContext};
    let p = icrc();
    let plan = &p.plans["prepare_icrc1_transfer"];
    let mut elsewhere = ledger();
    elsewhere.forms = Some(vec!["icrc2".into()]);
    elsewhere.refs.clear();
    let canisters: Vec<Canister> = vec![elsewhere, ledger()];
    let ctx = ReadContext {
        canisters: &canisters,
        now_ns: Some(NOW),
        owner: Some(Principal::from_text(OWNER).unwrap()),
        names: None,
        memo: None,
    };
    let input = with_ledger(json!({"to": OWNER, "amount": "1"}));
    let out = read_tool_input(plan, &input, &ctx);
    assert!(out.is_ok(), "{:?}", out.err());
}
