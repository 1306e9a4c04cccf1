//! Custody rules (issue 9): nothing moves without its owner, whatever a form says. Each test is
//! an attack a form (registered by an untrusted admin) or an agent could make, and the rule
//! that stops it: host-filled positions at any depth, stamps and memos the host really fills,
//! and read tools that can never move funds.

mod common;
use candid::{IDLValue, Principal};
use common::*;
use serde_json::{json, Value};
use tool_host_core::funds::deposit_subaccount;
use tool_host_core::plan::{build_tool_plans, check_plan, ArgPlan, Fill, Reader, ToolKind};
use tool_host_core::read::{read_tool_input, ReadContext};
use tool_host_core::schema::tool_definition;

/// The ICRC types, as the packs write them.
fn icrc_types(extra: Value) -> Value {
    let mut t = json!({
        "Subaccount": { "type": "blob", "value": { "kind": "subaccount" } },
        "Account": { "type": "record", "value": { "kind": "account" }, "fields": [
            { "name": "owner", "type": "principal" },
            { "name": "subaccount", "type": "opt", "inner": { "type": "Subaccount" } }
        ] },
        "Tokens": { "type": "nat", "value": { "kind": "token_amount", "decimals": { "from": "query:icrc1_decimals" }, "symbol": { "from": "query:icrc1_symbol" } } },
        "Timestamp": { "type": "nat64", "value": { "kind": "timestamp", "unit": "ns" } }
    });
    if let Value::Object(m) = extra {
        for (k, v) in m {
            t[k] = v;
        }
    }
    t
}

/// The owner's deposit subaccount as the Candid value of an `opt Subaccount` position.
fn deposit() -> IDLValue {
    let owner = Principal::from_text(OWNER).unwrap();
    IDLValue::Opt(Box::new(IDLValue::Blob(
        deposit_subaccount(&owner).to_vec(),
    )))
}

fn field<'a>(v: &'a IDLValue, name: &str) -> &'a IDLValue {
    let IDLValue::Record(fs) = v else {
        panic!("not a record: {v}")
    };
    &fs.iter()
        .find(|f| f.id.to_string() == name)
        .unwrap_or_else(|| panic!("no field {name} in {v}"))
        .val
}

fn props(schema: &Value) -> Vec<String> {
    schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no properties in {schema}"))
        .keys()
        .cloned()
        .collect()
}

/// A batch payment: a vec of transfer records whose source is the owner's deposit.
fn batch_form() -> tool_host_core::plan::ToolPlans {
    let types = icrc_types(json!({
        "Transfer": { "type": "record", "fields": [
            { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
            { "name": "fee", "type": "opt", "inner": { "type": "Tokens" }, "ui": { "hidden": true }, "auto": { "from": "query:icrc1_fee" } },
            { "name": "to", "type": "Account" },
            { "name": "amount", "type": "Tokens" }
        ] }
    }));
    plans(
        json!({ "pay_many": { "mode": "update", "intent": "Pay several", "args": [{ "type": "record", "fields": [
            { "name": "transfers", "type": "vec", "inner": { "type": "Transfer" } }
        ] }], "results": [] } }),
        types,
    )
}

#[test]
fn custody_auto_positions_inside_vec_elements_are_filled_never_inputs() {
    let p = batch_form();
    let plan = &p.plans["prepare_pay_many"];
    // Not in the schema.
    let def = tool_definition(plan, &[ledger()]);
    let items = &def["inputSchema"]["properties"]["transfers"]["items"];
    assert_eq!(props(items), vec!["amount", "to"], "{items}");
    assert_eq!(items["required"], json!(["to", "amount"]));
    // Refused when named, with the element's path.
    let c = codes(read(
        plan,
        with_ledger(json!({ "transfers": [
            { "to": OWNER, "amount": "1" },
            { "to": OWNER, "amount": "1", "from_subaccount": "01" }
        ] })),
    ));
    assert_eq!(
        c,
        vec![(
            "E_UNKNOWN_PARAM".into(),
            "$args[0].transfers[1].from_subaccount".into()
        )]
    );
    let c = codes(read(
        plan,
        with_ledger(json!({ "transfers": [{ "to": OWNER, "amount": "1", "fee": "0" }] })),
    ));
    assert_eq!(
        c,
        vec![("E_UNKNOWN_PARAM".into(), "$args[0].transfers[0].fee".into())]
    );
    // Filled in every element: the owner's deposit subaccount and the ledger's fee.
    let out = read(
        plan,
        with_ledger(json!({ "transfers": [
            { "to": OWNER, "amount": "1" },
            { "to": OWNER, "amount": "2" },
            { "to": OWNER, "amount": "3" }
        ] })),
    )
    .unwrap();
    let IDLValue::Vec(elems) = field(&out.args.args[0], "transfers") else {
        panic!("a vec")
    };
    assert_eq!(elems.len(), 3);
    for e in elems {
        assert_eq!(field(e, "from_subaccount"), &deposit());
        assert_eq!(
            field(e, "fee"),
            &IDLValue::Opt(Box::new(IDLValue::Nat(candid::Nat::from(10_000u64))))
        );
    }
}

#[test]
fn custody_an_owner_default_without_an_owner_is_an_error_never_null() {
    let p = batch_form();
    let canisters = vec![ledger()];
    let ctx = ReadContext {
        canisters: &canisters,
        now_ns: Some(NOW),
        owner: None,
        ..Default::default()
    };
    let input = with_ledger(json!({ "transfers": [{ "to": OWNER, "amount": "1" }] }));
    let c = codes(read_tool_input(&p.plans["prepare_pay_many"], &input, &ctx));
    assert_eq!(
        c,
        vec![(
            "E_INPUT".into(),
            "$args[0].transfers[0].from_subaccount".into()
        )]
    );
    // The same at the top level: the ICRC-1 transfer's source is never left to the ledger's default.
    let icrc = build_tool_plans(&[tool_host_core::packs::pack("icrc1").unwrap()]);
    let input = with_ledger(json!({ "to": OWNER, "amount": "1" }));
    let c = codes(read_tool_input(
        &icrc.plans["prepare_icrc1_transfer"],
        &input,
        &ctx,
    ));
    assert_eq!(
        c,
        vec![("E_INPUT".into(), "$args[0].from_subaccount".into())]
    );
}

#[test]
fn custody_hidden_and_auto_fields_of_a_second_argument_are_filled() {
    let types = icrc_types(json!({}));
    let p = plans(
        json!({ "pay2": { "mode": "update", "intent": "Pay", "args": [
            { "type": "Account" },
            { "type": "record", "fields": [
                { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
                { "name": "note", "type": "opt", "inner": { "type": "text" }, "ui": { "hidden": true } },
                { "name": "amount", "type": "Tokens" }
            ] }
        ], "results": [] } }),
        types,
    );
    let plan = &p.plans["prepare_pay2"];
    let def = tool_definition(plan, &[ledger()]);
    assert_eq!(
        props(&def["inputSchema"]["properties"]["arg1"]),
        vec!["amount"]
    );
    for (key, val) in [("from_subaccount", "01"), ("note", "hi")] {
        let mut arg1 = json!({ "amount": "1" });
        arg1[key] = json!(val);
        let c = codes(read(
            plan,
            with_ledger(json!({ "arg0": OWNER, "arg1": arg1 })),
        ));
        assert_eq!(
            c,
            vec![("E_UNKNOWN_PARAM".into(), format!("$args[1].{key}"))]
        );
    }
    let out = read(
        plan,
        with_ledger(json!({ "arg0": OWNER, "arg1": { "amount": "1" } })),
    )
    .unwrap();
    assert_eq!(field(&out.args.args[1], "from_subaccount"), &deposit());
    assert_eq!(field(&out.args.args[1], "note"), &IDLValue::None);
}

#[test]
fn custody_auto_fields_inside_variant_payloads_are_filled() {
    let types = icrc_types(json!({}));
    let p = plans(
        json!({ "act": { "mode": "update", "intent": "Act", "args": [{ "type": "record", "fields": [
            { "name": "command", "type": "variant", "cases": [
                { "name": "Pay", "type": "record", "fields": [
                    { "name": "from", "type": "Account", "ui": { "hidden": true }, "auto": { "from": "owner:account" } },
                    { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "auto": { "from": "owner:subaccount" } },
                    { "name": "amount", "type": "Tokens" }
                ] },
                { "name": "Stop", "type": "null" }
            ] }
        ] }], "results": [] } }),
        types,
    );
    let plan = &p.plans["prepare_act"];
    let def = tool_definition(plan, &[ledger()]);
    let pay = def["inputSchema"]["properties"]["command"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["properties"]["tag"]["const"] == "Pay")
        .unwrap()["properties"]["value"]
        .clone();
    assert_eq!(props(&pay), vec!["amount"], "{pay}");
    let c = codes(read(
        plan,
        with_ledger(
            json!({ "command": { "tag": "Pay", "value": { "amount": "1", "from": OWNER } } }),
        ),
    ));
    assert_eq!(
        c,
        vec![("E_UNKNOWN_PARAM".into(), "$args[0].command.Pay.from".into())]
    );
    let out = read(
        plan,
        with_ledger(json!({ "command": { "tag": "Pay", "value": { "amount": "1" } } })),
    )
    .unwrap();
    let IDLValue::Variant(v) = field(&out.args.args[0], "command") else {
        panic!("a variant")
    };
    let owner = Principal::from_text(OWNER).unwrap();
    assert_eq!(
        field(&v.0.val, "from"),
        &tool_host_core::read::value::account_value(owner, None)
    );
    assert_eq!(field(&v.0.val, "from_subaccount"), &deposit());
}

#[test]
fn custody_an_opt_of_a_hidden_named_type_is_filled_not_an_input() {
    // The tags of a named type apply wherever it is used, also as the value of an opt.
    let types = icrc_types(json!({
        "Source": { "type": "blob", "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } }
    }));
    let p = plans(
        json!({ "pay": { "mode": "update", "intent": "Pay", "args": [{ "type": "record", "fields": [
            { "name": "src", "type": "opt", "inner": { "type": "Source" } },
            { "name": "amount", "type": "Tokens" }
        ] }], "results": [] } }),
        types,
    );
    let plan = &p.plans["prepare_pay"];
    let names: Vec<&str> = plan.params.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, vec!["amount"]);
    let out = read(plan, with_ledger(json!({ "amount": "1" }))).unwrap();
    assert_eq!(field(&out.args.args[0], "src"), &deposit());
}

#[test]
fn custody_a_nested_hidden_position_without_a_default_skips_its_method() {
    let p = plans(
        json!({ "h": { "mode": "update", "intent": "H", "args": [{ "type": "record", "fields": [
            { "name": "inner", "type": "record", "fields": [
                { "name": "who", "type": "principal", "ui": { "hidden": true } },
                { "name": "what", "type": "text" }
            ] }
        ] }], "results": [] } }),
        json!({}),
    );
    assert!(skip_reason(&p, "h").contains("hidden position"));
}

#[test]
fn custody_a_vec_of_host_filled_elements_skips_its_method() {
    let types = icrc_types(json!({
        "Source": { "type": "blob", "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } }
    }));
    let p = plans(
        json!({ "v": { "mode": "update", "intent": "V", "args": [{ "type": "record", "fields": [
            { "name": "sources", "type": "vec", "inner": { "type": "Source" } }
        ] }], "results": [] } }),
        types,
    );
    assert!(skip_reason(&p, "v").contains("vec element"));
}

// ---- Stamps and memos (item 4) ----

fn stamped(args: Value, id: Value) -> tool_host_core::plan::ToolPlans {
    plans(
        json!({ "m": { "mode": "update", "intent": "x", "idempotency": id, "args": args, "results": [] } }),
        icrc_types(json!({})),
    )
}

#[test]
fn custody_a_stamp_inside_vec_elements_skips_the_batch_method() {
    let p = stamped(
        json!([{ "type": "record", "fields": [
            { "name": "transfers", "type": "vec", "inner": { "type": "record", "fields": [
                { "name": "amount", "type": "Tokens" },
                { "name": "created_at_time", "type": "opt", "inner": { "type": "Timestamp" } }
            ] } }
        ] }]),
        json!({ "stamp": "transfers.created_at_time" }),
    );
    assert!(
        skip_reason(&p, "m").contains("not a top-level field of the argument record"),
        "{}",
        skip_reason(&p, "m")
    );
}

#[test]
fn custody_a_nested_stamp_skips_its_method() {
    let p = stamped(
        json!([{ "type": "record", "fields": [
            { "name": "a", "type": "record", "fields": [{ "name": "b", "type": "Timestamp" }] },
            { "name": "amount", "type": "Tokens" }
        ] }]),
        json!({ "stamp": "a.b" }),
    );
    assert!(skip_reason(&p, "m").contains("not a top-level field of the argument record"));
}

#[test]
fn custody_a_stamp_that_names_nothing_skips_its_method() {
    let p = stamped(
        json!([{ "type": "record", "fields": [{ "name": "amount", "type": "Tokens" }] }]),
        json!({ "stamp": "nosuch" }),
    );
    assert!(skip_reason(&p, "m").contains("names no field"));
    let p = stamped(
        json!([{ "type": "record", "fields": [{ "name": "t", "type": "nat64" }] }]),
        json!({ "stamp": "(1).t" }),
    );
    assert!(skip_reason(&p, "m").contains("argument 1"));
}

#[test]
fn custody_a_memo_that_is_not_a_top_level_blob_skips_its_method() {
    let args = json!([{ "type": "record", "fields": [
        { "name": "t", "type": "opt", "inner": { "type": "nat64" } },
        { "name": "note", "type": "text" },
        { "name": "inner", "type": "record", "fields": [{ "name": "m", "type": "blob" }] },
        { "name": "amount", "type": "Tokens" }
    ] }]);
    for (memo, why) in [
        ("note", "must be a blob or opt blob"),
        ("inner.m", "not a top-level field of the argument record"),
        ("nosuch", "names no field"),
        ("(1).note", "argument 1"),
        ("t", "the stamp's field"),
    ] {
        let p = stamped(args.clone(), json!({ "stamp": "t", "memo": memo }));
        let r = skip_reason(&p, "m");
        assert!(r.contains(why), "memo {memo}: {r}");
    }
}

#[test]
fn custody_a_stamp_on_a_record_the_argument_is_not_skips_its_method() {
    let p = stamped(
        json!([{ "type": "vec", "inner": { "type": "record", "fields": [{ "name": "t", "type": "Timestamp" }] } }]),
        json!({ "stamp": "t" }),
    );
    assert!(skip_reason(&p, "m").contains("argument record"));
}

// ---- Read tools never move funds (item 5) ----

fn effect_method(mode: &str, effect: Value) -> Value {
    json!({ "mode": mode, "effect": effect, "args": [{ "type": "record", "fields": [
        { "name": "to", "type": "Account" }, { "name": "amount", "type": "Tokens" }
    ] }], "results": [{ "type": "nat" }] })
}

const READ_ONLY: fn() -> Value =
    || json!({ "kind": "read", "irreversible": false, "replicated": true });

#[test]
fn custody_a_read_only_update_needs_exactly_the_read_only_effect() {
    for effect in [
        json!({ "kind": "read", "irreversible": true, "replicated": true }),
        json!({ "kind": "read", "irreversible": false, "replicated": false }),
        json!({ "kind": "read" }),
    ] {
        let p = plans(
            json!({ "peek": effect_method("update", effect.clone()) }),
            icrc_types(json!({})),
        );
        assert!(!p.plans.contains_key("peek"), "{effect}");
        assert!(
            skip_reason(&p, "peek").contains("a read-only update needs exactly"),
            "{effect}: {}",
            skip_reason(&p, "peek")
        );
    }
    let p = plans(
        json!({ "peek": effect_method("update", READ_ONLY()) }),
        icrc_types(json!({})),
    );
    assert!(p.plans.contains_key("peek"));
}

#[test]
fn custody_icrc1_transfer_is_never_a_read_tool() {
    for name in [
        "icrc1_transfer",
        "icrc2_approve",
        "icrc2_transfer_from",
        "transfer",
    ] {
        for (mode, effect) in [("update", READ_ONLY()), ("query", json!(null))] {
            let mut m = effect_method(mode, effect);
            if m["effect"].is_null() {
                m.as_object_mut().unwrap().remove("effect");
            }
            let p = plans(json!({ name: m }), icrc_types(json!({})));
            assert!(p.plans.is_empty(), "{name} as a {mode} read");
            assert!(
                skip_reason(&p, name).contains("moves funds"),
                "{name}: {}",
                skip_reason(&p, name)
            );
        }
    }
}

#[test]
fn custody_a_method_another_form_prepares_is_never_a_read_tool() {
    let writer = form(
        json!({ "pay": { "mode": "update", "intent": "Pay", "args": [{ "type": "record", "fields": [
            { "name": "to", "type": "Account" }, { "name": "amount", "type": "Tokens" }
        ] }], "results": [] } }),
        icrc_types(json!({})),
    );
    for (mode, effect) in [("update", READ_ONLY()), ("query", json!(null))] {
        let mut m = effect_method(mode, effect);
        if m["effect"].is_null() {
            m.as_object_mut().unwrap().remove("effect");
        }
        let liar = tool_host_core::plan::FormRef {
            id: "liar".into(),
            ..form(json!({ "pay": m }), icrc_types(json!({})))
        };
        let p = build_tool_plans(&[writer.clone(), liar]);
        assert!(
            p.plans.contains_key("prepare_pay"),
            "the writer's tool stays"
        );
        assert!(!p.plans.contains_key("pay"), "no read tool of it ({mode})");
        assert!(
            skip_reason(&p, "pay").contains("another form"),
            "{}",
            skip_reason(&p, "pay")
        );
    }
}

#[test]
fn custody_a_read_case_needs_exactly_the_read_only_effect() {
    let m = json!({ "mode": "update", "intent": "Manage", "args": [{ "type": "variant", "cases": [
        { "name": "Look", "type": "null", "effect": { "kind": "read", "irreversible": true, "replicated": true } },
        { "name": "Peek", "type": "null", "effect": { "kind": "read", "irreversible": false, "replicated": true } }
    ] }], "results": [] });
    let p = plans(json!({ "manage": m }), json!({}));
    assert!(!p.plans.contains_key("manage_Look"));
    assert!(p.plans.contains_key("manage_Peek"));
    assert!(skip_reason(&p, "manage").contains("case Look: a read-only update needs exactly"));
}

// ---- The plan guard ----

fn slot_fill<'a>(plan: &'a mut tool_host_core::plan::ToolPlan, name: &str) -> &'a mut Fill {
    let ArgPlan::Fields(slots) = &mut plan.args[0] else {
        panic!("a record argument")
    };
    &mut slots
        .iter_mut()
        .find(|s| s.label.as_ref().and_then(|l| l.name()) == Some(name))
        .unwrap()
        .fill
}

#[test]
fn custody_the_plan_guard_holds_whatever_a_plan_says() {
    let p = build_tool_plans(&[tool_host_core::packs::pack("icrc1").unwrap()]);
    let plan = (*p.plans["prepare_icrc1_transfer"]).clone();
    assert_eq!(check_plan(&plan), Ok(()));
    // A stamped plan whose stamp is not filled.
    let mut unstamped = plan.clone();
    *slot_fill(&mut unstamped, "created_at_time") = Fill::Empty;
    assert!(check_plan(&unstamped).unwrap_err().contains("stamp"));
    // Two stamps.
    let mut twice = plan.clone();
    *slot_fill(&mut twice, "memo") = Fill::Stamp;
    assert!(check_plan(&twice).unwrap_err().contains("stamp"));
    // The memo not filled.
    let mut no_memo = plan.clone();
    *slot_fill(&mut no_memo, "memo") = Fill::Empty;
    assert!(check_plan(&no_memo).unwrap_err().contains("memo"));
    // A stamp without the method's idempotency.
    let mut claimed = (*p.plans["icrc1_fee"]).clone();
    claimed.has_stamp = true;
    assert!(check_plan(&claimed).is_err());
    // A read tool of a method that moves funds.
    let mut read = plan.clone();
    read.kind = ToolKind::Read;
    assert!(check_plan(&read).unwrap_err().contains("moves funds"));
    // An input that is a position the host fills.
    let mut host_input = plan.clone();
    let from = {
        let ArgPlan::Fields(slots) = &plan.args[0] else {
            unreachable!()
        };
        slots[0].clone()
    };
    host_input.params[0].reader = Reader::Host(Box::new(from));
    assert!(check_plan(&host_input).unwrap_err().contains("host fills"));
}

// ---- Amounts the host fills (the fourth review) ----

/// An approve whose `amount` (or another token amount) the host fills from a ref.
fn approve_filled(field: &str, from: &str) -> tool_host_core::plan::ToolPlans {
    let types = icrc_types(json!({
        "Supply": { "type": "nat", "value": { "kind": "token_amount", "decimals": 30, "symbol": { "from": "query:icrc1_symbol" } } }
    }));
    let mut fields = vec![
        json!({ "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } }),
        json!({ "name": "spender", "type": "Account" }),
        json!({ "name": "amount", "type": "Tokens" }),
        json!({ "name": "expected_allowance", "type": "opt", "inner": { "type": "Tokens" } }),
        json!({ "name": "fee", "type": "opt", "inner": { "type": "Tokens" }, "ui": { "hidden": true }, "auto": { "from": "query:icrc1_fee" } }),
    ];
    for f in fields.iter_mut().filter(|f| f["name"] == field) {
        let ty = if f["type"] == "opt" {
            json!({ "type": "opt", "inner": { "type": "Supply" } })
        } else {
            json!({ "type": "Supply" })
        };
        *f = json!({ "name": field, "ui": { "hidden": true }, "auto": { "from": from } });
        for (k, v) in ty.as_object().unwrap() {
            f[k] = v.clone();
        }
    }
    plans(
        json!({ "icrc2_approve": { "mode": "update", "intent": "Approve", "args": [{ "type": "record", "fields": fields }], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": [{ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }] }] }], "outcome": { "Ok": "success", "Err.Duplicate": "already_done" } } }),
        types,
    )
}

#[test]
fn custody_a_funds_amount_the_host_fills_from_a_ref_other_than_the_fee_skips_its_method() {
    // Found by the fourth review: the approve's amount filled from the total supply, shown in
    // a form's fixed 30 decimals, approved the whole supply while the preview showed a dust.
    for field in ["amount", "expected_allowance", "fee"] {
        let p = approve_filled(field, "query:icrc1_total_supply");
        let why = skip_reason(&p, "icrc2_approve");
        assert!(
            why.contains(&format!(
                "'{field}' is filled by the host from query:icrc1_total_supply"
            )),
            "{field}: {why}"
        );
    }
    // The ledger's own fee is the one ref the host fills a position from, and only the fee.
    assert!(approve_filled("fee", "query:icrc1_fee")
        .plans
        .contains_key("prepare_icrc2_approve"));
    assert!(skip_reason(
        &approve_filled("amount", "query:icrc1_fee"),
        "icrc2_approve"
    )
    .contains("'amount' is filled by the host from query:icrc1_fee"));
    // The same fill in a method that moves no funds is the form's to say.
    let p = plans(
        json!({ "note": { "mode": "update", "intent": "Note", "args": [{ "type": "record", "fields": [
            { "name": "supply", "type": "Tokens", "ui": { "hidden": true }, "auto": { "from": "query:icrc1_total_supply" } },
            { "name": "text", "type": "text" }
        ] }], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": [{ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }] }] }], "outcome": { "Ok": "success", "Err.Duplicate": "already_done" } } }),
        icrc_types(json!({})),
    );
    assert!(p.plans.contains_key("prepare_note"));
}

#[test]
fn custody_a_funds_amount_the_host_fills_inside_an_input_is_refused_too() {
    // The batch's transfers are one input; the amounts the host fills are inside it.
    let types = icrc_types(json!({
        "Transfer": { "type": "record", "fields": [
            { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
            { "name": "to", "type": "Account" },
            { "name": "amount", "type": "Tokens", "ui": { "hidden": true }, "auto": { "from": "query:icrc1_total_supply" } }
        ] }
    }));
    let p = plans(
        json!({ "icrc4_transfer_batch": { "mode": "update", "intent": "Pay several", "args": [
            { "type": "vec", "inner": { "type": "Transfer" } }
        ], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": [{ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }] }] }], "outcome": { "Ok": "success", "Err.Duplicate": "already_done" } } }),
        types,
    );
    assert!(
        skip_reason(&p, "icrc4_transfer_batch")
            .contains("'amount' is filled by the host from query:icrc1_total_supply"),
        "{:?}",
        p.skipped
    );
}

#[test]
fn custody_an_amount_is_never_shown_in_units_that_are_not_the_ledgers() {
    use tool_host_core::display::{display_args, display_reply, typed_fields};
    // The fee the host fills is never read as an input is: its form's units (30 decimals
    // here, the ledger's are 8) would show 10 000 base units as a dust.
    let types = icrc_types(json!({
        "Fee": { "type": "nat", "value": { "kind": "token_amount", "decimals": 30, "symbol": { "from": "query:icrc1_symbol" } } }
    }));
    let p = plans(
        json!({ "icrc1_transfer": { "mode": "update", "intent": "Send", "args": [{ "type": "record", "fields": [
            { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
            { "name": "to", "type": "Account" },
            { "name": "amount", "type": "Tokens" },
            { "name": "fee", "type": "opt", "inner": { "type": "Fee" }, "ui": { "hidden": true }, "auto": { "from": "query:icrc1_fee" } }
        ] }], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": [{ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }] }] }], "outcome": { "Ok": "success", "Err.Duplicate": "already_done" } },
          "balance": { "mode": "query", "args": [{ "type": "Account" }], "results": [{ "type": "Fee" }] } }),
        types,
    );
    let plan = &p.plans["prepare_icrc1_transfer"];
    let out = read(plan, with_ledger(json!({ "to": OWNER, "amount": "1.5" }))).unwrap();
    let refs = ledger().refs;
    let names = std::collections::BTreeMap::new();
    let shown = display_args(plan, &out.args, &refs, &names);
    assert_eq!(shown["fee"], json!("10000 base units"), "{shown}");
    assert_eq!(shown["amount"], json!("1.5 TKA"), "{shown}");
    let typed = typed_fields(plan, &out.args, &refs, &names);
    let fee = typed.iter().find(|f| f.name == "fee").unwrap();
    assert_eq!(
        (fee.typed.as_ref(), fee.shown.as_str()),
        (None, "10000 base units")
    );
    // A read shows a balance in its form's fixed units only when they are the ledger's.
    let reply = candid::IDLArgs::new(&[IDLValue::Nat(candid::Nat::from(150_000_000u64))]);
    assert_eq!(
        display_reply(&p.plans["balance"], &reply, &refs),
        json!("150000000 base units")
    );
}

#[test]
fn custody_a_funds_method_shows_an_amount_as_an_amount_and_nothing_else_as_one() {
    // Found by the review of the fix above: an approve's amount tagged a duration was read
    // from "2h" and shown as 2h, and approved 72 000 TKA; filled from the total supply and
    // tagged a timestamp, it was shown as a date in 1973. Untagged, from a ref, bare digits.
    let approve = |amount: Value| {
        let types = icrc_types(json!({}));
        plans(
            json!({ "icrc2_approve": { "mode": "update", "intent": "Approve", "args": [{ "type": "record", "fields": [
                { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
                { "name": "spender", "type": "Account" },
                amount
            ] }], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": [{ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }] }] }], "outcome": { "Ok": "success", "Err.Duplicate": "already_done" } } }),
            types,
        )
    };
    for (amount, want) in [
        (
            json!({ "name": "amount", "type": "nat", "value": { "kind": "duration", "unit": "ns" }, "describe": "How long" }),
            "'amount' is tagged duration",
        ),
        (
            json!({ "name": "amount", "type": "nat", "value": { "kind": "timestamp", "unit": "ns" }, "describe": "When" }),
            "'amount' is tagged timestamp",
        ),
        (
            json!({ "name": "amount", "type": "nat", "value": { "kind": "timestamp", "unit": "ns" }, "ui": { "hidden": true }, "auto": { "from": "query:icrc1_total_supply" } }),
            "'amount' is filled by the host from query:icrc1_total_supply",
        ),
        (
            json!({ "name": "amount", "type": "nat", "ui": { "hidden": true }, "auto": { "from": "query:icrc1_total_supply" } }),
            "'amount' is filled by the host from query:icrc1_total_supply",
        ),
        (
            json!({ "name": "fee", "type": "opt", "inner": { "type": "opt", "inner": { "type": "Tokens" } }, "ui": { "hidden": true }, "auto": { "from": "query:icrc1_total_supply" } }),
            "'fee' is filled by the host from query:icrc1_total_supply",
        ),
        (
            json!({ "name": "expires_at", "type": "opt", "inner": { "type": "Tokens" } }),
            "'expires_at' is tagged token_amount",
        ),
    ] {
        let why = skip_reason(&approve(amount.clone()), "icrc2_approve");
        assert!(why.contains(want), "{amount}: {why}");
    }
    // The standards' places keep their tags: the packs offer every tool (plan_rules), and a
    // time at a time field, an amount at an amount field, is planned.
    let ok = approve(json!({ "name": "amount", "type": "Tokens" }));
    assert!(
        ok.plans.contains_key("prepare_icrc2_approve"),
        "{:?}",
        ok.skipped
    );
    let ok =
        approve(json!({ "name": "expires_at", "type": "opt", "inner": { "type": "Timestamp" } }));
    assert!(
        ok.plans.contains_key("prepare_icrc2_approve"),
        "{:?}",
        ok.skipped
    );
    // An NFT's token id shown as a time: refused too.
    let p = plans(
        json!({ "icrc7_transfer": { "mode": "update", "intent": "Send NFTs", "args": [{ "type": "vec", "inner": { "type": "record", "fields": [
            { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
            { "name": "to", "type": "Account" },
            { "name": "token_id", "type": "nat", "value": { "kind": "timestamp", "unit": "ns" } }
        ] } }], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": [{ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }] }] }], "outcome": { "Ok": "success", "Err.Duplicate": "already_done" } } }),
        icrc_types(json!({})),
    );
    assert!(skip_reason(&p, "icrc7_transfer").contains("'token_id' is tagged timestamp"));
}

#[test]
fn custody_a_funds_methods_tag_is_checked_wherever_its_type_is_met_again() {
    // Found by the second review: a named type met first at a decoy field `amount` (inside
    // the spender, where the ledger ignores it) hid the duration tag of the real amount.
    let types = icrc_types(json!({ "A": { "type": "nat" } }));
    let p = plans(
        json!({ "icrc2_approve": { "mode": "update", "intent": "Approve", "args": [{ "type": "record", "fields": [
            { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
            { "name": "spender", "type": "record", "fields": [
                { "name": "owner", "type": "principal" },
                { "name": "amount", "type": "opt", "inner": { "type": "A" }, "ui": { "hidden": true } }
            ] },
            { "name": "amount", "type": "A", "value": { "kind": "duration", "unit": "ns" }, "describe": "How long" }
        ] }], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": [{ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }] }] }], "outcome": { "Ok": "success", "Err.Duplicate": "already_done" } } }),
        types,
    );
    assert!(skip_reason(&p, "icrc2_approve").contains("'amount' is tagged duration"));
}

#[test]
fn custody_a_funds_methods_times_are_nanoseconds_and_its_stamp_is_created_at_time() {
    let approve = |extra: Value, idempotency: Value| {
        let mut m = json!({ "mode": "update", "intent": "Approve", "args": [{ "type": "record", "fields": [
            { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
            { "name": "spender", "type": "Account" },
            { "name": "amount", "type": "Tokens" },
            { "name": "memo", "type": "opt", "inner": { "type": "blob" } },
            { "name": "created_at_time", "type": "opt", "inner": { "type": "Timestamp" } },
            extra
        ] }], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": [{ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }] }] }], "outcome": { "Ok": "success", "Err.Duplicate": "already_done" } });
        if !idempotency.is_null() {
            m["idempotency"] = idempotency;
        }
        plans(json!({ "icrc2_approve": m }), icrc_types(json!({})))
    };
    // An expiry in seconds is shown as one time and read by the ledger as another.
    let p = approve(
        json!({ "name": "expires_at", "type": "opt", "inner": { "type": "nat64", "value": { "kind": "timestamp", "unit": "s" } } }),
        Value::Null,
    );
    let why = skip_reason(&p, "icrc2_approve");
    assert!(why.contains("'expires_at' is a time in Seconds"), "{why}");
    // Found by the second review: a stamp the ledger does not read (an `opt nat64` fee is
    // none to it) leaves it nothing to deduplicate on, and a resend executes twice.
    let p = approve(
        json!({ "name": "fee", "type": "opt", "inner": { "type": "nat64" }, "describe": "A fee" }),
        json!({ "stamp": "fee", "memo": "memo" }),
    );
    let why = skip_reason(&p, "icrc2_approve");
    assert!(
        why.contains("its idempotency stamp is the ledger's created_at_time, not fee"),
        "{why}"
    );
    let p = approve(
        json!({ "name": "note", "type": "opt", "inner": { "type": "blob" } }),
        json!({ "stamp": "created_at_time", "memo": "note" }),
    );
    let why = skip_reason(&p, "icrc2_approve");
    assert!(
        why.contains("its idempotency memo is the ledger's memo, not note"),
        "{why}"
    );
    let p = approve(
        json!({ "name": "expires_at", "type": "opt", "inner": { "type": "Timestamp" } }),
        json!({ "stamp": "created_at_time", "memo": "memo" }),
    );
    assert!(
        p.plans.contains_key("prepare_icrc2_approve"),
        "{:?}",
        p.skipped
    );
}

#[test]
fn custody_a_funds_method_classes_its_replies_as_its_standard_does() {
    // Found by the fourth review of this stop: the form's outcome table decided what
    // "executed" meant. `Ok` as retry_new sent one intent twice; a case named so that its
    // hash is `Ok`'s settled an executed transfer as failed; no table made every reply a
    // success.
    let transfer = |ok_case: &str, outcome: Value| {
        let mut m = json!({ "mode": "update", "intent": "Send", "args": [{ "type": "record", "fields": [
            { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
            { "name": "to", "type": "Account" },
            { "name": "amount", "type": "Tokens" },
            { "name": "memo", "type": "opt", "inner": { "type": "blob" } },
            { "name": "created_at_time", "type": "opt", "inner": { "type": "Timestamp" } }
        ] }], "idempotency": { "stamp": "created_at_time", "memo": "memo" }, "results": [{ "type": "variant", "cases": [
            { "name": ok_case, "type": "nat" },
            { "name": "Err", "type": "variant", "cases": [
                { "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] },
                { "name": "TooOld", "type": "null" },
                { "name": "TemporarilyUnavailable", "type": "null" },
                { "name": "GenericError", "type": "null" }
            ] }
        ] }] });
        if !outcome.is_null() {
            m["outcome"] = outcome;
        }
        plans(json!({ "icrc1_transfer": m }), icrc_types(json!({})))
    };
    for (ok_case, outcome, want) in [
        (
            "Ok",
            json!({ "Ok": "retry_new" }),
            "outcome key 'Ok' is retry_new",
        ),
        (
            "Ok",
            json!({ "Ok": "success", "Err.GenericError": "success" }),
            "'Err.GenericError' is success",
        ),
        (
            "Ok",
            json!({ "Ok": "success", "Err.GenericError": "already_done" }),
            "'Err.GenericError' is already_done",
        ),
        (
            "Ok",
            json!({ "Ok": "success", "Err.Duplicate": "retry_new" }),
            "'Err.Duplicate' is retry_new",
        ),
        (
            "Ok",
            json!({ "Ok": "success", "Err.TooOld": "retry_same" }),
            "'Err.TooOld' is retry_same",
        ),
        (
            "Ok",
            json!({ "Err.Duplicate": "already_done", "default": "fail" }),
            "do not class Ok as a success",
        ),
        (
            "Ok",
            json!({ "Ok": "success", "default": "success" }),
            "its default class is success",
        ),
        ("Ok", Value::Null, "no outcome keys"),
        // Found by the fifth review: a duplicate (an earlier send executed) classed as not
        // executed, by its own key, by a key at Err, or by the default.
        (
            "Ok",
            json!({ "Ok": "success", "Err.Duplicate": "fail" }),
            "do not class Err.Duplicate as already_done",
        ),
        (
            "Ok",
            json!({ "Ok": "success", "Err": "fix_input" }),
            "do not class Err.Duplicate as already_done",
        ),
        (
            "Ok",
            json!({ "Ok": "success", "default": "fail" }),
            "do not class Err.Duplicate as already_done",
        ),
        (
            "Rejected_bsoBTK",
            json!({ "Rejected_bsoBTK": "fail" }),
            "'Rejected_bsoBTK', whose hash is a standard reply name's",
        ),
    ] {
        let why = skip_reason(&transfer(ok_case, outcome.clone()), "icrc1_transfer");
        assert!(why.contains(want), "{outcome}: {why}");
    }
    // `send_dfx` needs no keys only when it answers a bare block index.
    let send_dfx = |results: Value| {
        plans(
            json!({ "send_dfx": { "mode": "update", "intent": "Send", "args": [{ "type": "record", "fields": [
                { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
                { "name": "to", "type": "text" }
            ] }], "results": results } }),
            icrc_types(json!({})),
        )
    };
    assert!(send_dfx(json!([{ "type": "nat64" }]))
        .plans
        .contains_key("prepare_send_dfx"));
    let why = skip_reason(
        &send_dfx(
            json!([{ "type": "variant", "cases": [{ "name": "Ok", "type": "nat64" }, { "name": "Err", "type": "text" }] }]),
        ),
        "send_dfx",
    );
    assert!(why.contains("no outcome keys"), "{why}");
    let p = transfer(
        "Ok",
        json!({ "Ok": "success", "Err.Duplicate": "already_done", "Err.TooOld": "retry_new",
            "Err.TemporarilyUnavailable": "retry_same", "Err.GenericError": "fix_input", "default": "fail" }),
    );
    assert!(
        p.plans.contains_key("prepare_icrc1_transfer"),
        "{:?}",
        p.skipped
    );
}

#[test]
fn custody_a_funds_methods_duplicate_is_already_done_however_its_result_is_declared() {
    // Found by the last review of this stop: an `opt` result skipped the duplicate rule, only
    // the first of two duplicate cases was checked, and a key below the duplicate won as the
    // deepest.
    let transfer = |results: Value, outcome: Value| {
        plans(
            json!({ "icrc1_transfer": { "mode": "update", "intent": "Send", "args": [{ "type": "record", "fields": [
                { "name": "from_subaccount", "type": "opt", "inner": { "type": "Subaccount" }, "ui": { "hidden": true }, "auto": { "from": "owner:subaccount" } },
                { "name": "to", "type": "Account" },
                { "name": "amount", "type": "Tokens" }
            ] }], "results": [results], "outcome": outcome } }),
            icrc_types(json!({})),
        )
    };
    let dup = json!({ "name": "Duplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] });
    let reply = |errs: Value| json!({ "type": "variant", "cases": [{ "name": "Ok", "type": "nat" }, { "name": "Err", "type": "variant", "cases": errs }] });
    let both = json!([dup.clone(), { "name": "TxDuplicate", "type": "record", "fields": [{ "name": "duplicate_of", "type": "nat" }] }]);
    let deep = json!([{ "name": "Duplicate", "type": "variant", "cases": [{ "name": "X", "type": "null" }] }]);
    let std_keys = json!({ "Ok": "success", "Err.Duplicate": "already_done" });
    for (results, outcome, want) in [
        (
            json!({ "type": "opt", "inner": reply(json!([dup.clone()])) }),
            std_keys.clone(),
            "its result is an opt",
        ),
        (
            reply(both.clone()),
            json!({ "Ok": "success", "Err.Duplicate": "already_done", "Err.TxDuplicate": "fail" }),
            "do not class Err.TxDuplicate as already_done",
        ),
        (
            reply(deep),
            json!({ "Ok": "success", "Err.Duplicate": "already_done", "Err.Duplicate.X": "fail" }),
            "'Err.Duplicate.X' is fail",
        ),
    ] {
        let why = skip_reason(&transfer(results, outcome.clone()), "icrc1_transfer");
        assert!(why.contains(want), "{outcome}: {why}");
    }
    let p = transfer(
        reply(both),
        json!({ "Ok": "success", "Err.Duplicate": "already_done", "Err.TxDuplicate": "already_done" }),
    );
    assert!(
        p.plans.contains_key("prepare_icrc1_transfer"),
        "{:?}",
        p.skipped
    );
}
