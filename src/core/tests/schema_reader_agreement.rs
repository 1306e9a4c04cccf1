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

// ---- Each rule settled, by name: the schema and the reader answer alike ----

/// (the schema allows it, the reader reads it) for one tool's input, with the ledger.
fn both(plans: &ToolPlans, tool: &str, input: Value) -> (bool, bool) {
    let plan = &plans.plans[tool];
    let input = with_ledger(input);
    let def = tool_definition(plan, &[ledger()]);
    (
        common::schema_gen::satisfies(&def["inputSchema"], &input),
        read(plan, input).is_ok(),
    )
}

fn transfer(amount: Value) -> Value {
    json!({ "to": OWNER, "amount": amount })
}

#[test]
fn an_amount_unit_is_read_in_either_case() {
    let p = icrc();
    for a in ["1.5 TKA", "1.5 tka", "1.5 TkA", "1.5tka"] {
        assert_eq!(
            both(&p, "prepare_icrc1_transfer", transfer(json!(a))),
            (true, true),
            "{a}"
        );
        let out = read(
            &p.plans["prepare_icrc1_transfer"],
            with_ledger(transfer(json!(a))),
        )
        .unwrap();
        let same = read(
            &p.plans["prepare_icrc1_transfer"],
            with_ledger(transfer(json!("1.5"))),
        )
        .unwrap();
        assert_eq!(out.args, same.args, "{a} is 1.5 TKA");
    }
    assert_eq!(
        both(&p, "prepare_icrc1_transfer", transfer(json!("1.5 TKB"))),
        (false, false)
    );
}

#[test]
fn surrounding_spaces_are_read_by_both() {
    let p = icrc();
    for a in [" 1.5 TKA ", "\t1.5\n", "1.5   TKA", "\r\n7 \u{c}"] {
        assert_eq!(
            both(&p, "prepare_icrc1_transfer", transfer(json!(a))),
            (true, true),
            "{a:?}"
        );
    }
    let spaced = json!({ "to": format!("  {OWNER}\n"), "amount": "1" });
    assert_eq!(both(&p, "prepare_icrc1_transfer", spaced), (true, true));
    let later = json!({ "spender": OWNER, "amount": "1", "expires_at": " in 1h30m " });
    assert_eq!(both(&p, "prepare_icrc2_approve", later), (true, true));
}

#[test]
fn spaces_beyond_ascii_are_refused_by_both() {
    // U+00A0, U+2003 and U+FEFF are spaces to some readers and not to others: neither takes them.
    let p = icrc();
    for a in [
        "\u{a0}1.5 TKA",
        "1.5\u{2003}TKA",
        "\u{feff}1.5",
        "1.5\u{85}",
    ] {
        assert_eq!(
            both(&p, "prepare_icrc1_transfer", transfer(json!(a))),
            (false, false),
            "{a:?}"
        );
    }
    let to = json!({ "to": format!("\u{a0}{OWNER}"), "amount": "1" });
    assert_eq!(both(&p, "prepare_icrc1_transfer", to), (false, false));
}

#[test]
fn a_null_optional_input_means_absent() {
    let p = icrc();
    let plan = &p.plans["prepare_icrc2_approve"];
    let nulls =
        json!({ "spender": OWNER, "amount": "1", "expected_allowance": null, "expires_at": null });
    assert_eq!(
        both(&p, "prepare_icrc2_approve", nulls.clone()),
        (true, true)
    );
    let left_out = json!({ "spender": OWNER, "amount": "1" });
    let a = read(plan, with_ledger(nulls)).unwrap();
    let b = read(plan, with_ledger(left_out)).unwrap();
    assert_eq!(a.args, b.args);
    assert_eq!(a.identity, b.identity, "one intent");
    let def = tool_definition(plan, &[ledger()]);
    let words = def["inputSchema"]["properties"]["expires_at"]["description"]
        .as_str()
        .unwrap();
    assert!(words.contains("give null for none"), "{words}");
}

#[test]
fn a_null_required_input_is_refused_by_both() {
    let p = icrc();
    assert_eq!(
        both(&p, "prepare_icrc1_transfer", transfer(Value::Null)),
        (false, false)
    );
}

#[test]
fn a_number_for_an_amount_is_refused_by_both() {
    // Amounts and integers are text: a JSON number is a float to most clients (0.1, 2^53).
    let p = icrc();
    assert_eq!(
        both(&p, "prepare_icrc1_transfer", transfer(json!(1.5))),
        (false, false)
    );
    assert_eq!(
        both(&p, "prepare_icrc1_transfer", transfer(json!(2))),
        (false, false)
    );
}

#[test]
fn an_amount_over_its_length_is_refused_by_both() {
    let p = icrc();
    let long = format!("1{}", "0".repeat(100));
    assert_eq!(
        both(&p, "prepare_icrc1_transfer", transfer(json!(long))),
        (false, false)
    );
    let padded = format!("1{}", " ".repeat(100));
    assert_eq!(
        both(&p, "prepare_icrc1_transfer", transfer(json!(padded))),
        (false, false)
    );
}

fn kinds(extra: Value) -> Value {
    let mut v = json!({ "i16": "1", "ids": [{ "id": "1" }] });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

#[test]
fn an_integer_outside_its_type_or_range_is_refused_by_both() {
    let p = every_kind();
    for (k, ok, bad) in [
        ("n8", "255", "256"),
        ("n8", "0", "-1"),
        ("i16", "-300", "-301"),
        ("i16", "20000", "20001"),
        ("n64", "18446744073709551615", "18446744073709551616"),
        ("big", "-99999999999999999999999", "-0"),
        ("n8", " 7 ", "+7"),
        ("n8", "7", "07"),
    ] {
        assert_eq!(
            both(&p, "t", kinds(json!({ k: ok }))),
            (true, true),
            "{k} {ok}"
        );
        assert_eq!(
            both(&p, "t", kinds(json!({ k: bad }))),
            (false, false),
            "{k} {bad}"
        );
    }
}

#[test]
fn a_vec_outside_its_bounds_is_refused_by_both() {
    let p = every_kind();
    let id = json!({ "id": "1" });
    assert_eq!(
        both(&p, "t", kinds(json!({ "ids": [id, id, id] }))),
        (true, true)
    );
    assert_eq!(both(&p, "t", kinds(json!({ "ids": [] }))), (false, false));
    assert_eq!(
        both(&p, "t", kinds(json!({ "ids": [id, id, id, id] }))),
        (false, false)
    );
}

#[test]
fn a_text_length_is_the_smaller_bound_in_code_points_in_both() {
    // max_len 6 and a range of 2 to 4: 4 binds, and "äöüß" is 4 code points (8 bytes).
    let p = every_kind();
    let def = tool_definition(&p.plans["t"], &[ledger()]);
    let sized = &def["inputSchema"]["properties"]["sized"];
    assert!(sized.to_string().contains("\"maxLength\":4"), "{sized}");
    assert_eq!(
        both(&p, "t", kinds(json!({ "sized": "äöüß" }))),
        (true, true)
    );
    assert_eq!(
        both(&p, "t", kinds(json!({ "sized": "😀😀😀😀" }))),
        (true, true)
    );
    assert_eq!(
        both(&p, "t", kinds(json!({ "sized": "abcde" }))),
        (false, false)
    );
    assert_eq!(
        both(&p, "t", kinds(json!({ "sized": "a" }))),
        (false, false)
    );
}

#[test]
fn variant_tags_and_bools_are_case_sensitive_in_both() {
    let p = every_kind();
    assert_eq!(
        both(&p, "t", kinds(json!({ "command": { "tag": "Refresh" } }))),
        (true, true)
    );
    assert_eq!(
        both(&p, "t", kinds(json!({ "command": { "tag": "refresh" } }))),
        (false, false)
    );
    assert_eq!(
        both(&p, "t", kinds(json!({ "flag": "true" }))),
        (true, true)
    );
    assert_eq!(
        both(&p, "t", kinds(json!({ "flag": "True" }))),
        (false, false)
    );
    assert_eq!(
        both(&p, "t", kinds(json!({ "flag": true }))),
        (false, false)
    );
}

#[test]
fn a_time_finer_than_its_unit_is_refused_by_both() {
    // `wait` is kept in whole seconds: the schema names only s, m, h, d, w.
    let p = every_kind();
    assert_eq!(
        both(&p, "t", kinds(json!({ "wait": "1h30m" }))),
        (true, true)
    );
    assert_eq!(
        both(&p, "t", kinds(json!({ "wait": "1ns" }))),
        (false, false)
    );
    assert_eq!(
        both(
            &p,
            "t",
            kinds(json!({ "at": "2026-12-01t10:00:00.123456789z" }))
        ),
        (true, true)
    );
    assert_eq!(
        both(
            &p,
            "t",
            kinds(json!({ "at": "2026-12-01T10:00:00.1234567891Z" }))
        ),
        (false, false)
    );
    assert_eq!(
        both(&p, "t", kinds(json!({ "at": "2026-12-01_10:00:00Z" }))),
        (false, false)
    );
}

#[test]
fn a_day_the_calendar_lacks_is_a_range_issue() {
    // Well formed for the schema; the calendar is the reader's: E_RANGE, not E_SYNTAX.
    let p = every_kind();
    assert_eq!(
        both(&p, "t", kinds(json!({ "at": "2026-02-30T00:00:00Z" }))),
        (true, false)
    );
    let issues = read(
        &p.plans["t"],
        with_ledger(kinds(json!({ "at": "2026-02-30T00:00:00Z" }))),
    )
    .unwrap_err();
    assert_eq!(issues[0].code, Code::Range);
}

#[test]
fn every_pattern_in_these_schemas_is_ecmascript_the_host_runs() {
    let p = every_kind();
    let mut all = vec![tool_definition(&p.plans["t"], &[ledger()])];
    all.extend(
        icrc()
            .plans
            .values()
            .map(|plan| tool_definition(plan, &[ledger(), other_ledger()])),
    );
    fn patterns(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, x)| match (k.as_str(), x) {
                ("pattern", Value::String(s)) => out.push(s.clone()),
                _ => patterns(x, out),
            }),
            Value::Array(a) => a.iter().for_each(|x| patterns(x, out)),
            _ => {}
        }
    }
    let mut found = vec![];
    all.iter().for_each(|d| patterns(d, &mut found));
    assert!(found.len() > 15);
    for pat in found {
        assert!(regress::Regex::with_flags(&pat, "u").is_ok(), "{pat}");
        let host = tool_host_core::text::ecma::ecmascript_to_host(&pat)
            .unwrap_or_else(|e| panic!("{pat}: {e}"));
        assert!(regex_lite::Regex::new(&host).is_ok(), "{pat}");
    }
}

/// The builtins: each one's input schema (as `Builtin::decl` gives it) against its reader
/// (`run_pure`, `read_finish`, `read_escalate`), with what each may refuse a schema-valid input
/// for that no schema could state.
mod builtins {
    use super::common::schema_gen::check_tool;
    use serde_json::Value;
    use tool_host_core::builtin::{read_escalate, read_finish, run_pure, Builtin};
    use tool_host_core::issue::{Code, Issue};

    /// The clock the pure builtins read (2026-12-01T10:00:00Z).
    const NOW_NS: u64 = 1_796_119_200_000_000_000;
    const ZONE: &str = "UTC";

    fn read(b: Builtin) -> impl Fn(&Value) -> Result<(), Vec<Issue>> {
        move |v: &Value| match b {
            Builtin::Finish => read_finish(v).map(|_| ()),
            Builtin::Escalate => read_escalate(v).map(|_| ()),
            _ => run_pure(b, v, NOW_NS, ZONE).map(|_| ()),
        }
    }

    /// Whether an issue is a semantic refusal of builtin `b`: a fact of the input's meaning,
    /// which no schema states. Everything else (a length, a shape, a missing input, a blank
    /// text) the schema states, so the reader may never refuse a schema-valid input for it.
    pub(super) fn semantic(b: Builtin) -> impl Fn(&Issue) -> bool {
        move |i: &Issue| {
            let (p, c, m) = (i.param.as_str(), i.code, i.message.as_str());
            match b {
                // An expression that does not parse, or has no value (a division by zero, a
                // root of a negative, a result past the bound, no digit certain), or nests past
                // the parser's depth. Its length is stated (maxLength), so E_TOO_LARGE for
                // characters is not semantic.
                Builtin::Calculate => {
                    p == "expression"
                        && (matches!(c, Code::Syntax | Code::Range | Code::Precision)
                            || (c == Code::TooLarge && m.contains("nests deeper")))
                }
                // A name of the zone's shape that the compiled-in database lacks.
                Builtin::CurrentTime => {
                    p == "timezone"
                        && c == Code::Format
                        && m.contains("is not an IANA time zone of the compiled-in database")
                }
                Builtin::DateMath => date_math_semantic(p, c, m),
                // A document that is not JSON (or nests past the reader's depth), a path that
                // does not parse. A path matching nothing is an answer (found: false), never a
                // refusal.
                Builtin::JsonQuery => match p {
                    "document" => {
                        c == Code::Syntax || (c == Code::TooLarge && !m.contains("characters long"))
                    }
                    "path" => c == Code::Syntax,
                    _ => false,
                },
                // Texts bounded, required and not blank: all stated by their schemas.
                Builtin::Think | Builtin::Finish | Builtin::Escalate => false,
            }
        }
    }

    /// `date_math`: the calendar (a day its month lacks), a result past the years 0000-9999,
    /// and the rules across inputs, which no provider's schema subset can state (a rule across
    /// properties needs `oneOf` / `if` at the root, which Anthropic's and OpenAI's tool
    /// schemas refuse): add and subtract take `amount`, not `to`; difference takes `to`, not
    /// `amount`; `date` and `to` are both dates or both date-times; a time unit needs a time.
    fn date_math_semantic(p: &str, c: Code, m: &str) -> bool {
        match (p, c) {
            ("date" | "to", Code::Format) => {
                m.contains("is not a calendar date")
                    || (p == "to" && m.contains("both dates or both date-times"))
            }
            ("amount" | "to", Code::Missing | Code::UnknownParam) => {
                m.contains("needs") || m.contains(" is for ")
            }
            ("amount" | "unit", Code::Range) => {
                m.contains("outside the years") || m.contains("time of day")
            }
            _ => false,
        }
    }

    fn check(b: Builtin) -> Result<(), String> {
        let decl = b.decl(ZONE);
        check_tool(&decl.name, &decl.input_schema, &read(b), &semantic(b))
    }

    #[test]
    fn every_builtin_reads_what_its_schema_allows_and_refuses_what_it_forbids() {
        let failures: Vec<String> = Builtin::ALL
            .into_iter()
            .filter_map(|b| check(b).err())
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    fn refusal(b: Builtin, input: Value) -> Vec<Issue> {
        read(b)(&input).expect_err("refused")
    }

    fn schema_allows(b: Builtin, input: &Value) -> bool {
        super::common::schema_gen::satisfies(&b.decl(ZONE).input_schema, input)
    }

    #[test]
    fn semantic_refusals_are_told_from_what_the_schema_states() {
        use serde_json::json;
        let cases = [
            // What no schema states: semantic.
            (Builtin::Calculate, json!({ "expression": "1 / 0" }), true),
            (Builtin::Calculate, json!({ "expression": "2 +* 3" }), true),
            (
                Builtin::CurrentTime,
                json!({ "timezone": "Mars/Olympus" }),
                true,
            ),
            (
                Builtin::DateMath,
                json!({ "operation": "add", "date": "2026-02-30", "unit": "days", "amount": 1 }),
                true,
            ),
            (
                Builtin::DateMath,
                json!({ "operation": "add", "date": "2026-01-31", "unit": "days" }),
                true,
            ),
            (
                Builtin::JsonQuery,
                json!({ "document": "{\"a\": ", "path": "a" }),
                true,
            ),
            (
                Builtin::JsonQuery,
                json!({ "document": "{}", "path": "a[" }),
                true,
            ),
            // What the schema states: never semantic, and the schema refuses it too.
            (
                Builtin::Calculate,
                json!({ "expression": "1".repeat(501) }),
                false,
            ),
            (
                Builtin::CurrentTime,
                json!({ "timezone": "x".repeat(65) }),
                false,
            ),
            (Builtin::CurrentTime, json!({ "timezone": " UTC" }), false),
            (
                Builtin::DateMath,
                json!({ "operation": "add", "date": "2026-13-01", "unit": "days", "amount": 1 }),
                false,
            ),
            (
                Builtin::DateMath,
                json!({ "operation": "add", "date": "2026-03-01T24:00:00Z", "unit": "days", "amount": 1 }),
                false,
            ),
            (Builtin::Finish, json!({ "answer": " \u{feff}" }), false),
            (Builtin::Escalate, json!({ "reason": "" }), false),
            (Builtin::Think, json!({ "thought": 7 }), false),
        ];
        for (b, input, semantic_case) in cases {
            let issues = refusal(b, input.clone());
            let all = issues.iter().all(semantic(b));
            assert_eq!(all, semantic_case, "{} {input}: {issues:?}", b.name());
            assert_eq!(
                schema_allows(b, &input),
                semantic_case,
                "{} {input}",
                b.name()
            );
        }
    }

    #[test]
    fn a_path_matching_nothing_is_an_answer_not_a_refusal() {
        let v = run_pure(
            Builtin::JsonQuery,
            &serde_json::json!({ "document": "{\"invoices\": []}", "path": "invoices[0].total" }),
            NOW_NS,
            ZONE,
        )
        .unwrap();
        assert_eq!(v, serde_json::json!({ "found": false }));
    }
}
