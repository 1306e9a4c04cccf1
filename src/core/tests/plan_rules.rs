//! The tool rules (reference "Tools" section and CHANGELOG): which tools a form gives, with a
//! test per rule and per skip reason.

mod common;
use common::*;
use serde_json::json;
use tool_host_core::plan::{ArgPlan, Fill, Reader, ToolKind};

fn q(args: serde_json::Value, results: serde_json::Value) -> serde_json::Value {
    json!({ "mode": "query", "args": args, "results": results })
}
fn u(args: serde_json::Value) -> serde_json::Value {
    json!({ "mode": "update", "intent": "Do it", "args": args, "results": [] })
}

#[test]
fn a_read_tool_per_query_a_prepare_tool_per_update_and_commit() {
    let p = plans(
        json!({ "get": q(json!([]), json!([{ "type": "text" }])), "set": u(json!([])) }),
        json!({}),
    );
    assert_eq!(p.tool_names(), vec!["commit", "get", "prepare_set"]);
    assert_eq!(p.plans["get"].kind, ToolKind::Read);
    assert_eq!(p.plans["prepare_set"].kind, ToolKind::Prepare);
    let reads = plans(json!({ "get": q(json!([]), json!([])) }), json!({}));
    assert_eq!(
        reads.tool_names(),
        vec!["get"],
        "no commit without anything to prepare"
    );
}

#[test]
fn composite_queries_are_read_tools() {
    let p = plans(
        json!({ "c": { "mode": "composite_query", "args": [], "results": [] } }),
        json!({}),
    );
    assert_eq!(p.plans["c"].kind, ToolKind::Read);
}

#[test]
fn b2_a_principal_position_is_a_text_input() {
    let p = plans(
        json!({ "who": q(json!([{ "type": "record", "fields": [{ "name": "user", "type": "principal" }] }]), json!([])) }),
        json!({}),
    );
    let param = &p.plans["who"].params[0];
    assert_eq!(param.name, "user");
    assert!(matches!(param.reader, Reader::Principal));
}

#[test]
fn b2_an_integer_with_describe_is_an_input_and_without_is_skipped() {
    let with = plans(
        json!({ "page": q(json!([{ "type": "nat64", "describe": "The page size." }]), json!([])) }),
        json!({}),
    );
    assert_eq!(with.plans["page"].params[0].name, "integer");
    let without = plans(
        json!({ "page": q(json!([{ "type": "nat64" }]), json!([])) }),
        json!({}),
    );
    assert!(skip_reason(&without, "page").contains("integer without a value tag or a describe"));
}

#[test]
fn b2_a_read_only_update_is_a_read_tool_sent_as_an_update() {
    let m = json!({ "mode": "update", "effect": { "kind": "read", "irreversible": false, "replicated": true }, "args": [], "results": [{ "type": "nat" }] });
    let p = plans(json!({ "certified_balance": m }), json!({}));
    let plan = &p.plans["certified_balance"];
    assert_eq!(plan.kind, ToolKind::Read);
    assert!(plan.replicated);
    assert_eq!(plan.mode.as_str(), "update");
    assert!(plan.description.contains("certified"));
}

#[test]
fn b2_an_update_without_idempotency_gets_a_prepare_tool_that_says_so() {
    let p = plans(json!({ "vote": u(json!([])) }), json!({}));
    let plan = &p.plans["prepare_vote"];
    assert!(!plan.has_stamp);
    assert!(
        plan.description.contains("no idempotency stamp"),
        "{}",
        plan.description
    );
}

#[test]
fn b2_several_arguments_are_inputs_arg0_arg1() {
    let p = plans(
        json!({ "pair": q(json!([{ "type": "principal" }, { "type": "text" }]), json!([])) }),
        json!({}),
    );
    let names: Vec<&str> = p.plans["pair"]
        .params
        .iter()
        .map(|x| x.name.as_str())
        .collect();
    assert_eq!(names, vec!["arg0", "arg1"]);
    assert_eq!(p.plans["pair"].params[1].path, "$args[1]");
}

#[test]
fn b2_outcome_keys_through_record_fields() {
    let result = json!([{ "type": "variant", "cases": [
        { "name": "Ok", "type": "record", "fields": [{ "name": "state", "type": "variant", "cases": [{ "name": "Done", "type": "null" }, { "name": "Failed", "type": "null" }] }] },
        { "name": "Err", "type": "text" }
    ] }]);
    let m = json!({ "mode": "update", "intent": "x", "args": [], "results": result, "outcome": { "Ok.state.Done": "success", "Ok.state.Failed": "fail", "Err": "fix_input" } });
    let p = plans(json!({ "run": m }), json!({}));
    assert!(p.plans.contains_key("prepare_run"));
}

#[test]
fn a_value_tagged_whole_argument_is_one_input_named_by_kind() {
    let p =
        tool_host_core::plan::build_tool_plans(&[tool_host_core::packs::pack("icrc1").unwrap()]);
    let params = &p.plans["icrc1_balance_of"].params;
    assert_eq!(params.len(), 1);
    assert_eq!(params[0].name, "account");
    assert_eq!(params[0].path, "$args[0]");
    assert!(matches!(params[0].reader, Reader::Account));
}

#[test]
fn stamp_auto_hidden_and_memo_positions_are_filled_not_asked() {
    let p =
        tool_host_core::plan::build_tool_plans(&[tool_host_core::packs::pack("icrc1").unwrap()]);
    let plan = &p.plans["prepare_icrc1_transfer"];
    let names: Vec<&str> = plan.params.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, vec!["to", "amount"]);
    let ArgPlan::Fields(slots) = &plan.args[0] else {
        panic!("a record argument")
    };
    let fill = |n: &str| {
        &slots
            .iter()
            .find(|s| s.label.as_ref().map(|l| l.to_string()) == Some(n.to_string()))
            .unwrap()
            .fill
    };
    assert!(matches!(fill("created_at_time"), Fill::Stamp));
    assert!(matches!(fill("memo"), Fill::Memo));
    assert!(matches!(fill("fee"), Fill::Auto(_)));
    assert!(matches!(fill("from_subaccount"), Fill::Auto(_)));
}

#[test]
fn d050_text_and_bool_readers() {
    let p = plans(
        json!({ "t": q(json!([{ "type": "record", "fields": [
        { "name": "note", "type": "text", "text": { "max_len": 10, "pattern": "^[a-z]+$" } },
        { "name": "site", "type": "text", "text": { "format": "url" } },
        { "name": "flag", "type": "bool" }
    ] }]), json!([])) }),
        json!({}),
    );
    let params = &p.plans["t"].params;
    assert!(matches!(params[0].reader, Reader::Text { .. }));
    assert!(matches!(params[2].reader, Reader::Bool));
}

#[test]
fn d050_nested_arguments_are_one_json_input() {
    let p = plans(
        json!({ "n": q(json!([{ "type": "record", "fields": [
        { "name": "cmd", "type": "variant", "cases": [{ "name": "A", "type": "null" }, { "name": "B", "type": "principal" }] },
        { "name": "list", "type": "vec", "inner": { "type": "principal" } },
        { "name": "inner", "type": "record", "fields": [{ "name": "who", "type": "principal" }] }
    ] }]), json!([])) }),
        json!({}),
    );
    let params = &p.plans["n"].params;
    assert!(matches!(params[0].reader, Reader::Variant(_)));
    assert!(matches!(params[1].reader, Reader::Vec { .. }));
    assert!(matches!(params[2].reader, Reader::Record(_)));
    assert!(params.iter().all(|x| x.reader.is_json()));
}

#[test]
fn d050_null_and_reserved_positions_take_no_input() {
    let p = plans(
        json!({ "n": q(json!([{ "type": "record", "fields": [
        { "name": "a", "type": "null" }, { "name": "b", "type": "reserved" }, { "name": "c", "type": "principal" }
    ] }]), json!([])), "lone": q(json!([{ "type": "null" }]), json!([])) }),
        json!({}),
    );
    assert_eq!(p.plans["n"].params.len(), 1);
    assert!(p.plans["lone"].params.is_empty());
}

#[test]
fn d049_an_outcome_with_default_alone() {
    let m = json!({ "mode": "update", "intent": "x", "args": [], "results": [{ "type": "nat" }, { "type": "text" }], "outcome": { "default": "success" } });
    let p = plans(json!({ "any": m }), json!({}));
    assert!(
        p.plans.contains_key("prepare_any"),
        "default alone works with any results"
    );
}

fn case_form(mode: &str, stamp: bool) -> tool_host_core::plan::ToolPlans {
    let mut m = json!({ "mode": mode, "args": [{ "type": "variant", "cases": [
        { "name": "Follow", "type": "record", "intent": "Follow a neuron", "fields": [{ "name": "neuron", "type": "nat64", "describe": "The neuron id." }] },
        { "name": "Refresh", "type": "null", "effect": { "kind": "read", "irreversible": false, "replicated": true } },
        { "name": "Split", "type": "nat64", "describe": "Amount." },
        { "name": "Weird", "type": "float64", "intent": "Weird" },
        { "id": 7, "type": "null", "intent": "Numbered" }
    ] }], "results": [] });
    if stamp {
        m["args"] = json!([{ "type": "record", "fields": [{ "name": "t", "type": "opt", "inner": { "type": "nat64" } }, { "name": "c", "type": "variant", "cases": [{ "name": "A", "type": "null", "intent": "A" }] }] }]);
        m["idempotency"] = json!({ "stamp": "t" });
    }
    plans(json!({ "manage": m }), json!({}))
}

#[test]
fn d053_one_tool_per_case_with_names_titles_and_payloads() {
    let p = case_form("update", false);
    let follow = &p.plans["prepare_manage_Follow"];
    assert_eq!(follow.case.as_deref(), Some("Follow"));
    assert_eq!(follow.title, "Follow a neuron");
    assert_eq!(follow.params[0].name, "neuron");
    // A read-only case is a read tool named without prepare_.
    let refresh = &p.plans["manage_Refresh"];
    assert_eq!(refresh.kind, ToolKind::Read);
    assert!(refresh.params.is_empty(), "a null case takes no input");
    assert_eq!(refresh.title, "manage Refresh");
    assert!(
        !p.plans.contains_key("prepare_manage"),
        "no tool for the method itself"
    );
}

#[test]
fn d053_a_prepare_case_tool_needs_an_intent() {
    let p = case_form("update", false);
    assert!(skip_reason(&p, "manage").contains("case Split: a prepare tool needs an intent"));
}

#[test]
fn d053_a_case_without_a_rule_is_skipped_alone() {
    let p = case_form("update", false);
    let r = skip_reason(&p, "manage");
    assert!(r.contains("case Weird:"), "{r}");
    assert!(r.contains("case #7:"), "{r}");
    assert!(p.plans.contains_key("prepare_manage_Follow"));
}

#[test]
fn d053_every_case_of_a_query_is_a_read() {
    let p = case_form("query", false);
    assert!(p.plans.contains_key("manage_Follow"));
    assert!(p.plans.contains_key("manage_Split"));
}

#[test]
fn skip_stamped_case_tools() {
    let m = json!({ "mode": "update", "intent": "x", "idempotency": { "stamp": "A.t" }, "args": [{ "type": "variant", "cases": [
        { "name": "A", "type": "record", "intent": "A", "fields": [{ "name": "t", "type": "nat64" }] }
    ] }], "results": [] });
    let p = plans(json!({ "m": m }), json!({}));
    assert!(skip_reason(&p, "m").contains("stamped case tools"));
}

#[test]
fn skip_a_recursive_position() {
    let types = json!({ "List": { "type": "opt", "inner": { "type": "record", "fields": [{ "name": "head", "type": "principal" }, { "name": "tail", "type": "List" }] } } });
    let p = plans(
        json!({ "walk": q(json!([{ "type": "List" }]), json!([])), "give": q(json!([]), json!([{ "type": "List" }])) }),
        types,
    );
    assert!(skip_reason(&p, "walk").contains("recursive position"));
    assert!(p.plans.contains_key("give"), "a recursive result is fine");
}

#[test]
fn skip_a_number_named_position() {
    let p = plans(
        json!({ "tup": q(json!([{ "type": "record", "fields": [{ "id": 0, "type": "principal" }] }]), json!([])) }),
        json!({}),
    );
    assert!(skip_reason(&p, "tup").contains("named by a number"));
}

#[test]
fn skip_a_name_clash_with_commit() {
    let p = plans(
        json!({ "commit": q(json!([]), json!([])), "x": u(json!([])) }),
        json!({}),
    );
    assert!(skip_reason(&p, "commit").contains("commit tool"));
}

/// Every builtin's name is reserved, enabled or not: an admin enabling `calculate` later must
/// not change what a form's `calculate` tool was.
#[test]
fn skip_a_name_clash_with_a_builtin() {
    for b in tool_host_core::builtin::Builtin::ALL {
        let p = plans(
            json!({ b.name(): q(json!([]), json!([])), "other": q(json!([]), json!([])) }),
            json!({}),
        );
        assert!(
            skip_reason(&p, b.name()).contains("reserved for the builtin tool"),
            "{}",
            b.name()
        );
        assert_eq!(p.tool_names(), vec!["other"], "{}", b.name());
    }
}

#[test]
fn skip_a_name_clash_between_methods() {
    let p = plans(
        json!({ "prepare_x": q(json!([]), json!([])), "x": u(json!([])) }),
        json!({}),
    );
    assert!(skip_reason(&p, "prepare_x").contains("another method's tool name"));
    assert!(skip_reason(&p, "x").contains("another method's tool name"));
}

#[test]
fn skip_a_clash_of_the_same_method_in_two_forms() {
    let a = form(json!({ "get": q(json!([]), json!([])) }), json!({}));
    let b = form(json!({ "get": q(json!([]), json!([])) }), json!({}));
    let p = tool_host_core::plan::build_tool_plans(&[a, b]);
    assert!(skip_reason(&p, "get").contains("another method's tool name"));
}

#[test]
fn skip_a_canister_id_field() {
    let p = plans(
        json!({ "c": q(json!([{ "type": "record", "fields": [{ "name": "canister_id", "type": "principal" }] }]), json!([])) }),
        json!({}),
    );
    assert!(skip_reason(&p, "c").contains("canister_id"));
}

#[test]
fn skip_a_whole_argument_stamp() {
    let m = json!({ "mode": "update", "intent": "x", "idempotency": { "stamp": "(0)" }, "args": [{ "type": "nat64" }], "results": [] });
    let p = plans(json!({ "m": m }), json!({}));
    assert!(skip_reason(&p, "m").contains("whole argument"));
}

#[test]
fn skip_retry_new_without_a_stamp() {
    let m = json!({ "mode": "update", "intent": "x", "args": [], "results": [{ "type": "variant", "cases": [{ "name": "Ok", "type": "null" }, { "name": "Old", "type": "null" }] }], "outcome": { "Ok": "success", "Old": "retry_new" } });
    let p = plans(json!({ "m": m }), json!({}));
    assert!(skip_reason(&p, "m").contains("retry_new"));
}

#[test]
fn skip_a_stamped_read() {
    let m = json!({ "mode": "query", "idempotency": { "stamp": "t" }, "args": [{ "type": "record", "fields": [{ "name": "t", "type": "nat64" }] }], "results": [] });
    let p = plans(json!({ "m": m }), json!({}));
    assert!(skip_reason(&p, "m").contains("stamped read"));
    let ro = json!({ "mode": "update", "effect": { "kind": "read", "irreversible": false, "replicated": true }, "idempotency": { "stamp": "t" }, "args": [{ "type": "record", "fields": [{ "name": "t", "type": "nat64" }] }], "results": [] });
    let p = plans(json!({ "ro": ro }), json!({}));
    assert!(skip_reason(&p, "ro").contains("stamped read"));
}

#[test]
fn skip_a_refused_pattern() {
    let p = plans(
        json!({ "t": q(json!([{ "type": "text", "text": { "pattern": "(a+)+$" } }]), json!([])) }),
        json!({}),
    );
    assert!(skip_reason(&p, "t").contains("repeating group inside a repeating group"));
}

#[test]
fn skip_a_query_with_more_than_one_result() {
    let p = plans(
        json!({ "two": q(json!([]), json!([{ "type": "nat" }, { "type": "nat" }])) }),
        json!({}),
    );
    assert!(skip_reason(&p, "two").contains("more than one result"));
}

#[test]
fn skip_a_position_with_no_rule() {
    let p = plans(
        json!({ "f": q(json!([{ "type": "float64" }]), json!([])) }),
        json!({}),
    );
    assert!(skip_reason(&p, "f").contains("float64 has no rule"));
}

#[test]
fn skip_a_hidden_position_without_a_default() {
    let p = plans(
        json!({ "h": q(json!([{ "type": "record", "fields": [{ "name": "x", "type": "principal", "ui": { "hidden": true } }] }]), json!([])) }),
        json!({}),
    );
    assert!(skip_reason(&p, "h").contains("hidden position"));
}

fn outcome_method(outcome: serde_json::Value) -> serde_json::Value {
    json!({ "mode": "update", "intent": "x", "args": [], "results": [{ "type": "variant", "cases": [
        { "name": "Ok", "type": "record", "fields": [{ "name": "a", "type": "variant", "cases": [{ "name": "X", "type": "null" }] }, { "name": "b", "type": "nat" }] },
        { "name": "Err", "type": "null" }
    ] }], "outcome": outcome })
}

#[test]
fn skip_an_outcome_key_that_names_no_case() {
    let p = plans(
        json!({ "m": outcome_method(json!({ "Nope": "success" })) }),
        json!({}),
    );
    assert!(skip_reason(&p, "m").contains("'Nope' is not a case"));
}

#[test]
fn skip_an_outcome_key_that_ends_on_a_field() {
    let p = plans(
        json!({ "m": outcome_method(json!({ "Ok.a": "success" })) }),
        json!({}),
    );
    assert!(skip_reason(&p, "m").contains("ends on a record field"));
}

#[test]
fn skip_outcome_keys_that_read_two_fields_of_one_record() {
    let m = json!({ "mode": "update", "intent": "x", "args": [], "results": [{ "type": "record", "fields": [
        { "name": "a", "type": "variant", "cases": [{ "name": "X", "type": "null" }] },
        { "name": "b", "type": "variant", "cases": [{ "name": "Y", "type": "null" }] }
    ] }], "outcome": { "a.X": "success", "b.Y": "fail" } });
    let p = plans(json!({ "m": m }), json!({}));
    assert!(skip_reason(&p, "m").contains("another key reads"));
}

#[test]
fn skip_outcome_keys_on_a_method_with_two_results() {
    let m = json!({ "mode": "update", "intent": "x", "args": [], "results": [{ "type": "nat" }, { "type": "nat" }], "outcome": { "Ok": "success" } });
    let p = plans(json!({ "m": m }), json!({}));
    assert!(skip_reason(&p, "m").contains("one result"));
}

#[test]
fn skip_a_method_whose_name_is_not_a_tool_name() {
    let p = plans(
        json!({ "héllo": q(json!([]), json!([])), &"x".repeat(70): q(json!([]), json!([])) }),
        json!({}),
    );
    assert!(skip_reason(&p, "héllo").contains("not a valid tool name"));
}

#[test]
fn skips_are_reported_never_thrown_and_the_rest_still_gives_tools() {
    let p = plans(
        json!({ "ok": q(json!([]), json!([])), "bad": q(json!([{ "type": "float32" }]), json!([])) }),
        json!({}),
    );
    assert_eq!(p.tool_names(), vec!["ok"]);
    assert_eq!(p.skipped.len(), 1);
}

#[test]
fn icrc_packs_give_every_standard_tool_and_skip_nothing() {
    let forms = [
        tool_host_core::packs::pack("icrc1").unwrap(),
        tool_host_core::packs::pack("icrc2").unwrap(),
    ];
    let p = tool_host_core::plan::build_tool_plans(&forms);
    assert!(p.skipped.is_empty(), "{:?}", p.skipped);
    assert_eq!(
        p.tool_names(),
        vec![
            "commit",
            "icrc1_balance_of",
            "icrc1_decimals",
            "icrc1_fee",
            "icrc1_metadata",
            "icrc1_minting_account",
            "icrc1_name",
            "icrc1_supported_standards",
            "icrc1_symbol",
            "icrc1_total_supply",
            "icrc2_allowance",
            "prepare_icrc1_transfer",
            "prepare_icrc2_approve",
            "prepare_icrc2_transfer_from"
        ]
    );
}

/// A record of two fields of one named type, each a record of two fields of another, and so
/// on: the input doubles at each level while the form grows by a line. Planning stops at
/// `MAX_POSITIONS` (a named type counted at each use) and skips the method with the reason,
/// rather than writing out a schema of 2^16 positions (13 MB) in a registration or in the
/// catalog's build after an upgrade.
#[test]
fn inputs_are_bounded_however_named_types_are_shared() {
    use tool_host_core::plan::MAX_POSITIONS;
    let doubling = |levels: usize| {
        let mut types = serde_json::Map::new();
        types.insert("T0".into(), json!({ "type": "text" }));
        for k in 1..=levels {
            let prev = format!("T{}", k - 1);
            types.insert(
                format!("T{k}"),
                json!({ "type": "record", "fields": [
                    { "name": "a", "type": prev }, { "name": "b", "type": prev } ] }),
            );
        }
        let top = format!("T{levels}");
        plans(
            json!({ "m": { "mode": "update", "args": [{ "type": top }], "results": [] } }),
            serde_json::Value::Object(types),
        )
    };
    // 2^9 - 1 positions: planned.
    let p = doubling(8);
    assert_eq!(p.tool_names(), vec!["commit", "prepare_m"]);
    let positions: usize = p.plans["prepare_m"]
        .params
        .iter()
        .map(|q| q.positions)
        .sum();
    assert_eq!(
        positions,
        (1 << 9) - 2,
        "the top record is split into its two fields"
    );
    for levels in [10, 16, 22] {
        let p = doubling(levels);
        assert!(p.tool_names().is_empty(), "{levels} levels");
        let reason = skip_reason(&p, "m");
        assert!(
            reason.contains(&format!("more than {MAX_POSITIONS} positions")),
            "{reason}"
        );
    }
    // The bound is the method's, across its inputs: four fields of 250 positions each (a
    // record and its 249 fields) are planned; a fifth field, one position more, is not.
    let wide = |more: bool| {
        let leaves: Vec<_> = (0..249)
            .map(|i| json!({ "name": format!("f{i}"), "type": "text" }))
            .collect();
        let mut fields: Vec<_> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| json!({ "name": n, "type": "R" }))
            .collect();
        if more {
            fields.push(json!({ "name": "e", "type": "text" }));
        }
        plans(
            json!({ "m": { "mode": "update", "args": [{ "type": "record", "fields": fields }], "results": [] } }),
            json!({ "R": { "type": "record", "fields": leaves } }),
        )
    };
    assert_eq!(MAX_POSITIONS, 4 * 250);
    assert_eq!(wide(false).tool_names(), vec!["commit", "prepare_m"]);
    let reason = skip_reason(&wide(true), "m");
    assert!(reason.starts_with("$args[0].e: "), "{reason}");
}

/// A literal `auto` default is read by its rule within the method's bound and its named types
/// on the way down: a default whose type holds itself is a recursive position (it was a walk
/// without end), and defaults inside defaults of shared types are counted (they doubled at
/// each level, uncounted). Positions the host fills count too, and a method's case tools
/// share its bound.
#[test]
fn defaults_and_cases_are_within_the_bound() {
    use tool_host_core::plan::MAX_POSITIONS;
    let over = format!("more than {MAX_POSITIONS} positions");
    // A default whose type holds itself.
    let p = plans(
        json!({ "m": { "mode": "update", "args": [{ "type": "record", "fields": [
            { "name": "x", "type": "T" }, { "name": "y", "type": "text" } ] }], "results": [] } }),
        json!({ "T": { "type": "record", "auto": { "value": "{}" }, "fields": [
            { "name": "a", "type": "opt", "inner": { "type": "T" } } ] } }),
    );
    let reason = skip_reason(&p, "m");
    assert!(reason.contains("recursive position"), "{reason}");
    // Defaults inside defaults of types that each use the one before twice.
    let mut types = serde_json::Map::new();
    types.insert(
        "T0".into(),
        json!({ "type": "text", "auto": { "value": "x" } }),
    );
    for k in 1..=20 {
        let prev = format!("T{}", k - 1);
        types.insert(
            format!("T{k}"),
            json!({ "type": "record", "auto": { "value": "{}" }, "fields": [
                { "name": "a", "type": prev }, { "name": "b", "type": prev } ] }),
        );
    }
    let p = plans(
        json!({ "m": { "mode": "update", "args": [{ "type": "record", "fields": [
            { "name": "x", "type": "T20" }, { "name": "y", "type": "text" } ] }], "results": [] } }),
        serde_json::Value::Object(types),
    );
    let reason = skip_reason(&p, "m");
    assert!(reason.contains(&over), "{reason}");
    // Hidden positions, filled by the host, count.
    let hidden: Vec<_> = (0..250)
        .map(|i| json!({ "name": format!("h{i}"), "type": "opt", "ui": { "hidden": true }, "inner": { "type": "text" } }))
        .collect();
    let p = plans(
        json!({ "m": { "mode": "update", "args": [{ "type": "record", "fields": [
            { "name": "a", "type": "H" }, { "name": "b", "type": "H" },
            { "name": "c", "type": "H" }, { "name": "d", "type": "H" } ] }], "results": [] } }),
        json!({ "H": { "type": "record", "fields": hidden } }),
    );
    let reason = skip_reason(&p, "m");
    assert!(reason.contains(&over), "{reason}");
    // Case tools: five cases of 250 positions; the first four are planned, the fifth is not.
    let leaves: Vec<_> = (0..249)
        .map(|i| json!({ "name": format!("f{i}"), "type": "text" }))
        .collect();
    let cases: Vec<_> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|n| json!({ "name": n, "type": "record", "intent": "do it", "fields": [{ "name": "r", "type": "R" }] }))
        .collect();
    let p = plans(
        json!({ "m": { "mode": "update", "intent": "do it", "args": [{ "type": "variant", "cases": cases }], "results": [] } }),
        json!({ "R": { "type": "record", "fields": leaves } }),
    );
    assert_eq!(
        p.tool_names(),
        vec![
            "commit",
            "prepare_m_a",
            "prepare_m_b",
            "prepare_m_c",
            "prepare_m_d"
        ]
    );
    let reason = skip_reason(&p, "m");
    assert!(reason.starts_with("case e: $args[0].e.r: "), "{reason}");
    assert!(reason.contains(&over), "{reason}");
}

/// A form's methods share a bound on the positions their inputs read (a skipped method's
/// counted as far as it read): 25 methods of 956 positions each, then a read without inputs.
/// Twenty are planned (19 120 positions); the 21st reads the 880 left and is skipped with the
/// form's reason, and so is every later one that has an input; the read is planned.
#[test]
fn a_forms_methods_share_a_bound_on_positions() {
    use tool_host_core::plan::{plan_form, MAX_FORM_POSITIONS};
    let mut types = serde_json::Map::new();
    types.insert("T0".into(), json!({ "type": "text" }));
    for k in 1..=8 {
        let prev = format!("T{}", k - 1);
        types.insert(
            format!("T{k}"),
            json!({ "type": "record", "fields": [
                { "name": "a", "type": prev }, { "name": "b", "type": prev } ] }),
        );
    }
    let mut methods = serde_json::Map::new();
    for m in 0..25 {
        methods.insert(
            format!("m{m:02}"),
            json!({ "mode": "update", "args": [
                { "type": "T8" }, { "type": "T7" }, { "type": "T6" }, { "type": "T5" } ], "results": [] }),
        );
    }
    methods.insert(
        "z_peek".into(),
        json!({ "mode": "query", "args": [], "results": [{ "type": "text" }] }),
    );
    let types = serde_json::Value::Object(types);
    let f = form(serde_json::Value::Object(methods), types.clone());
    let tools = plan_form(&f);
    assert_eq!(MAX_FORM_POSITIONS, 20_000);
    assert_eq!(tools.positions, MAX_FORM_POSITIONS);
    let names: Vec<&str> = tools.candidates.iter().map(|p| p.name.as_str()).collect();
    let mut want: Vec<String> = (0..20).map(|m| format!("prepare_m{m:02}")).collect();
    want.push("z_peek".into());
    assert_eq!(names, want);
    let per: usize = tools.candidates[0].params.iter().map(|p| p.positions).sum();
    assert_eq!(per, 956);
    assert_eq!(tools.skipped.len(), 5);
    for (s, m) in tools.skipped.iter().zip(20..) {
        assert_eq!(s.method, format!("m{m:02}"));
        assert!(
            s.reason
                .contains("the form's inputs have more than 20000 positions"),
            "{}",
            s.reason
        );
    }
    // Alone, such a method is planned: the bound is the form's.
    let p = plans(
        json!({ "m20": { "mode": "update", "args": [
            { "type": "T8" }, { "type": "T7" }, { "type": "T6" }, { "type": "T5" } ], "results": [] } }),
        types,
    );
    assert_eq!(p.tool_names(), vec!["commit", "prepare_m20"]);
}

/// A whole argument is named by its reader (`text`, `amount`, …, or `input`), read only as deep
/// as a name is: a leaf under a few options is named by the leaf, a deeper one is an `input`
/// (the reader read in full, uncounted, was up to a method's bound again per argument).
#[test]
fn a_whole_arguments_name_is_read_within_a_few_positions() {
    let nested = |k: usize| {
        let mut t = json!({ "type": "text" });
        for _ in 0..k {
            t = json!({ "type": "opt", "inner": t });
        }
        let p = plans(
            json!({ "m": { "mode": "update", "args": [t], "results": [] } }),
            json!({}),
        );
        let names: Vec<String> = p.plans["prepare_m"]
            .params
            .iter()
            .map(|q| q.name.clone())
            .collect();
        names
    };
    assert_eq!(nested(0), ["text"]);
    assert_eq!(nested(3), ["text"]);
    assert_eq!(nested(12), ["input"]);
}
