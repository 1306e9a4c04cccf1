//! Schemas and readers agree: what a tool's JSON Schema accepts, its reader reads (but for what
//! no schema can state: a checksum, a canister not registered, a name set), and what the schema
//! forbids, the reader refuses. Inputs are generated from the schemas themselves
//! (`common::schema_gen`); `SCHEMA_AGREEMENT_CASES` raises the cases per tool.

mod common;
use candid::Principal;
use common::schema_gen::{check_tool, SEMANTIC_CODES};
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tool_host_core::issue::{Code, Issue};
use tool_host_core::packs::pack;
use tool_host_core::plan::{build_tool_plans, Reader, ToolPlan, ToolPlans};
use tool_host_core::read::{read_tool_input, Canister, ReadContext};
use tool_host_core::schema::tool_definition;

fn icrc() -> ToolPlans {
    build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()])
}

fn other_ledger() -> Canister {
    Canister {
        id: Principal::from_text("mxzaz-hqaaa-aaaar-qaada-cai").unwrap(),
        label: Some("ckBTC".into()),
        refs: BTreeMap::from([
            ("query:icrc1_decimals".to_string(), json!(6)),
            ("query:icrc1_symbol".to_string(), json!("ckBTC")),
            ("query:icrc1_fee".to_string(), json!(10)),
        ]),
        forms: None,
    }
}

fn reader_of<'p>(plan: &'p ToolPlan, param: &str) -> Option<&'p Reader> {
    plan.params
        .iter()
        .find(|p| p.name == param)
        .map(|p| &p.reader)
}

/// Whether an issue is one the schema could not have stated, for this tool and these canisters.
/// Besides [`SEMANTIC_CODES`]: `E_RANGE` for an amount (its bounds are in base units, through
/// the decimals), a time (the calendar's days and leap seconds, the years its type holds) or a
/// duration (the span its type holds); and, when the canisters disagree on the token,
/// `E_PRECISION` and `E_UNIT` (the schema cannot name one token's decimals or symbol).
fn semantic_for(plan: &ToolPlan, canisters_agree: bool) -> impl Fn(&Issue) -> bool + '_ {
    move |i: &Issue| {
        if SEMANTIC_CODES.contains(&i.code) {
            return true;
        }
        let reader = reader_of(plan, &i.param);
        match (i.code, reader) {
            (
                Code::Range,
                Some(Reader::Amount { .. } | Reader::Timestamp { .. } | Reader::Duration { .. }),
            ) => true,
            (Code::Precision | Code::Unit, Some(Reader::Amount { .. })) => !canisters_agree,
            _ => false,
        }
    }
}

fn check_plans(plans: &ToolPlans, canisters: &[Canister], agree: bool) {
    let owner = Principal::from_text(OWNER).unwrap();
    let mut failures = vec![];
    for plan in plans.plans.values() {
        let def = tool_definition(plan, canisters);
        let schema = &def["inputSchema"];
        let read = |v: &Value| {
            let ctx = ReadContext {
                canisters,
                now_ns: Some(NOW),
                owner: Some(owner),
                names: None,
                memo: None,
            };
            read_tool_input(plan, v, &ctx).map(|_| ())
        };
        if let Err(e) = check_tool(&plan.name, schema, &read, &semantic_for(plan, agree)) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_icrc_tool_reads_what_its_schema_allows() {
    check_plans(&icrc(), &[ledger()], true);
}

#[test]
fn every_icrc_tool_reads_what_its_schema_allows_when_ledgers_disagree() {
    check_plans(&icrc(), &[ledger(), other_ledger()], false);
}

/// A form with a position of every reader kind, inside a record, a vec, a variant and `opt`s.
fn every_kind() -> ToolPlans {
    plans(
        json!({ "t": { "mode": "query", "args": [{ "type": "record", "fields": [
            { "name": "note", "type": "opt", "inner": { "type": "text", "text": { "max_len": 5, "pattern": "^[a-z]+$" } } },
            { "name": "sized", "type": "opt", "inner": { "type": "text", "text": { "max_len": 6 }, "range": { "min": 2, "max": 4 } } },
            { "name": "site", "type": "opt", "inner": { "type": "text", "text": { "format": "url" } } },
            { "name": "mail", "type": "opt", "inner": { "type": "text", "text": { "format": "email" } } },
            { "name": "flag", "type": "opt", "inner": { "type": "bool" } },
            { "name": "n8", "type": "opt", "inner": { "type": "nat8", "describe": "A count." } },
            { "name": "i16", "type": "int16", "describe": "A shift.", "range": { "min": -300, "max": 20000 } },
            { "name": "big", "type": "opt", "inner": { "type": "int", "describe": "Any whole number." } },
            { "name": "n64", "type": "opt", "inner": { "type": "nat64", "describe": "A nat64." } },
            { "name": "who", "type": "opt", "inner": { "type": "principal" } },
            { "name": "sub", "type": "opt", "inner": { "type": "blob", "value": { "kind": "subaccount" } } },
            { "name": "bytes", "type": "opt", "inner": { "type": "blob", "range": { "min": 1, "max": 3 } } },
            { "name": "wait", "type": "opt", "inner": { "type": "nat64", "value": { "kind": "duration", "unit": "s" } } },
            { "name": "at", "type": "opt", "inner": { "type": "nat64", "value": { "kind": "timestamp", "unit": "ns" } } },
            { "name": "ids", "type": "vec", "inner": { "type": "NeuronId" }, "range": { "min": 1, "max": 3 } },
            { "name": "command", "type": "opt", "inner": { "type": "Command" } }
        ] }], "results": [] } }),
        json!({
            "NeuronId": { "type": "record", "fields": [{ "name": "id", "type": "nat64", "describe": "A neuron id." }] },
            "Command": { "type": "variant", "cases": [
                { "name": "Follow", "type": "record", "fields": [
                    { "name": "topic", "type": "int32", "describe": "The topic." },
                    { "name": "note", "type": "opt", "inner": { "type": "text", "text": { "max_len": 3 } } }
                ] },
                { "name": "Refresh", "type": "null" }
            ] }
        }),
    )
}

#[test]
fn a_tool_of_every_reader_kind_reads_what_its_schema_allows() {
    let p = every_kind();
    assert!(p.skipped.is_empty(), "{:?}", p.skipped);
    check_plans(&p, &[ledger()], true);
}
