//! The bus's rules by name: effect labels, declaration checks, overlap warnings, the score and
//! selection, `missing`, and what each provider shape keeps of the label.

mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tool_host_core::builtin::Builtin;
use tool_host_core::bus::*;
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;

const READ_ONLY: fn() -> Value =
    || json!({ "kind": "read", "irreversible": false, "replicated": true });
const WRITE: fn() -> Value =
    || json!({ "kind": "vote", "irreversible": false, "replicated": true });

fn stamped_update(effect: Option<Value>) -> Value {
    let mut m = json!({ "mode": "update", "intent": "Vote", "idempotency": { "stamp": "t" },
        "args": [{ "type": "record", "fields": [{ "name": "t", "type": "opt", "inner": { "type": "nat64" } }, { "name": "n", "type": "nat64", "describe": "The proposal." }] }],
        "results": [] });
    if let Some(e) = effect {
        m["effect"] = e;
    }
    m
}

fn unstamped_update(effect: Option<Value>) -> Value {
    let mut m = json!({ "mode": "update", "intent": "Vote", "args": [{ "type": "nat64", "describe": "The proposal." }], "results": [] });
    if let Some(e) = effect {
        m["effect"] = e;
    }
    m
}

fn decls_of(methods: Value) -> Vec<ToolDecl> {
    host_decls(&plans(methods, json!({})), &[])
}

fn label(methods: Value, tool: &str) -> Option<EffectLabel> {
    let d = decls_of(methods);
    effect_of(&d, tool).unwrap_or_else(|| panic!("no tool {tool}"))
}

fn icrc_decls() -> Vec<ToolDecl> {
    let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    host_decls(&plans, &[ledger()])
}

/// A declaration to vary: one string input `mode`.
fn decl(name: &str, description: &str) -> ToolDecl {
    ToolDecl {
        name: name.into(),
        title: format!("Title of {name}"),
        description: description.into(),
        effect: Some(EffectLabel::Readonly),
        input_schema: json!({ "type": "object", "properties": { "mode": { "type": "string" } }, "required": ["mode"], "additionalProperties": false }),
        output_schema: None,
        source: ToolSource::Builtin,
    }
}

fn with_schema(schema: Value) -> ToolDecl {
    ToolDecl {
        input_schema: schema,
        ..decl("t", "A tool.")
    }
}

fn refused(d: &ToolDecl) -> Vec<DeclIssue> {
    check_decl(d).expect_err("the declaration should be refused")
}

// ---- Effect labels ----

#[test]
fn a_query_is_readonly() {
    let m = json!({ "peek": { "mode": "query", "args": [], "results": [{ "type": "nat" }] } });
    assert_eq!(label(m, "peek"), Some(EffectLabel::Readonly));
}

#[test]
fn a_read_only_update_is_readonly() {
    let m = json!({ "peek": { "mode": "update", "effect": READ_ONLY(), "args": [], "results": [{ "type": "nat" }] } });
    assert_eq!(label(m, "peek"), Some(EffectLabel::Readonly));
}

#[test]
fn a_stamped_update_with_an_effect_is_idempotent() {
    let m = json!({ "vote": stamped_update(Some(WRITE())) });
    assert_eq!(label(m, "prepare_vote"), Some(EffectLabel::Idempotent));
}

#[test]
fn an_unstamped_update_with_an_effect_is_destructive() {
    let m = json!({ "vote": unstamped_update(Some(WRITE())) });
    assert_eq!(label(m, "prepare_vote"), Some(EffectLabel::Destructive));
}

#[test]
fn an_update_with_no_effect_tag_is_unlabelled_stamp_or_not() {
    assert_eq!(
        label(json!({ "vote": stamped_update(None) }), "prepare_vote"),
        None
    );
    assert_eq!(
        label(json!({ "vote": unstamped_update(None) }), "prepare_vote"),
        None
    );
}

#[test]
fn commit_is_idempotent_and_from_the_host() {
    let d = icrc_decls();
    let c = d.iter().find(|d| d.name == "commit").unwrap();
    assert_eq!(c.effect, Some(EffectLabel::Idempotent));
    assert_eq!(c.source, ToolSource::Host);
}

#[test]
fn destructive_and_unannotated_are_computed_from_the_decls() {
    let d = decls_of(json!({
        "a_peek": { "mode": "query", "args": [], "results": [{ "type": "nat" }] },
        "b_vote": unstamped_update(Some(WRITE())),
        "c_vote": unstamped_update(None),
        "d_vote": stamped_update(Some(WRITE())),
    }));
    assert_eq!(destructive(&d), vec!["prepare_b_vote"]);
    assert_eq!(unannotated(&d), vec!["prepare_c_vote"]);
    assert_eq!(effect_of(&d, "nope"), None);
}

#[test]
fn the_icrc_packs_label_every_tool() {
    let d = icrc_decls();
    assert!(unannotated(&d).is_empty(), "{:?}", unannotated(&d));
    assert_eq!(
        effect_of(&d, "prepare_icrc1_transfer"),
        Some(Some(EffectLabel::Idempotent))
    );
    assert_eq!(
        effect_of(&d, "icrc1_balance_of"),
        Some(Some(EffectLabel::Readonly))
    );
}

#[test]
fn host_decls_are_sorted_by_name_with_form_sources() {
    let d = icrc_decls();
    let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let t = d.iter().find(|d| d.name == "icrc1_balance_of").unwrap();
    assert_eq!(
        t.source,
        ToolSource::Form {
            form_id: "icrc1".into()
        }
    );
    assert!(t.output_schema.is_none());
}

// ---- Declaration checks ----

#[test]
fn the_icrc_packs_pass_every_declaration_check() {
    for d in icrc_decls() {
        assert_eq!(check_decl(&d), Ok(()), "{}", d.name);
    }
}

#[test]
fn a_name_with_a_space_is_refused_naming_each_provider() {
    let issues = refused(&decl("send money", "Sends."));
    let msgs: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(issues.len(), 3, "{msgs:?}");
    assert!(issues
        .iter()
        .all(|i| i.path == "name" && i.tool == "send money"));
    for p in ["OpenAI", "Anthropic", "MCP 2025-11-25"] {
        assert!(msgs.iter().any(|m| m.contains(p)), "{p}: {msgs:?}");
    }
}

#[test]
fn a_dotted_name_is_refused_by_openai_and_anthropic_only() {
    let issues = refused(&decl("ledger.balance", "Reads."));
    assert_eq!(issues.len(), 2);
    assert!(issues.iter().all(|i| !i.message.contains("MCP")));
}

#[test]
fn a_name_over_64_characters_is_refused_and_an_empty_one_too() {
    let long = "a".repeat(65);
    assert_eq!(refused(&decl(&long, "Reads.")).len(), 2);
    assert!(check_decl(&decl(&"a".repeat(64), "Reads.")).is_ok());
    assert_eq!(refused(&decl("", "Reads.")).len(), 3);
}

#[test]
fn an_empty_description_is_refused() {
    let issues = refused(&decl("t", "  "));
    assert_eq!(issues[0].path, "description");
    assert!(issues[0].message.contains("empty"));
}

#[test]
fn a_description_over_the_bound_is_refused() {
    let issues = refused(&decl("t", &"é".repeat(MAX_DESCRIPTION_CHARS + 1)));
    assert_eq!(issues[0].path, "description");
    assert!(
        issues[0].message.contains("OpenAI"),
        "{}",
        issues[0].message
    );
    assert!(check_decl(&decl("t", &"é".repeat(MAX_DESCRIPTION_CHARS))).is_ok());
}

#[test]
fn a_root_schema_that_is_not_an_object_is_refused() {
    let issues = refused(&with_schema(json!({ "type": "string" })));
    assert_eq!(issues[0].path, "inputSchema");
    assert!(issues[0].message.contains("type: object"));
}

#[test]
fn a_property_key_anthropic_will_not_take_is_refused() {
    let issues = refused(&with_schema(json!({ "type": "object", "properties": {
        "filter[id]": { "type": "string" }, "a.b-c_d": { "type": "string" } } })));
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].path, "inputSchema.properties");
    assert!(issues[0].message.contains("filter[id]") && issues[0].message.contains("Anthropic"));
}

#[test]
fn an_enum_that_is_not_a_non_empty_array_is_refused() {
    for e in [json!([]), json!("a")] {
        let issues = refused(&with_schema(
            json!({ "type": "object", "properties": { "mode": { "enum": e } } }),
        ));
        assert_eq!(issues[0].path, "inputSchema.properties.mode.enum");
        assert!(issues[0].message.contains("non-empty"));
    }
}

#[test]
fn a_blank_enum_option_is_refused() {
    let issues = refused(&with_schema(
        json!({ "type": "object", "properties": { "mode": { "enum": ["a", " "] } } }),
    ));
    assert_eq!(issues[0].path, "inputSchema.properties.mode.enum[1]");
    assert!(issues[0].message.contains("blank"));
    // In ascending order too (options so ordered are not kept to be compared).
    let issues = refused(&with_schema(
        json!({ "type": "object", "properties": { "mode": { "enum": ["", "a", "b"] } } }),
    ));
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].path, "inputSchema.properties.mode.enum[0]");
}

#[test]
fn a_duplicated_enum_option_is_refused() {
    let issues = refused(&with_schema(
        json!({ "type": "object", "properties": { "mode": { "enum": ["a", "b", "a"] } } }),
    ));
    assert_eq!(issues[0].path, "inputSchema.properties.mode.enum[2]");
    assert!(issues[0].message.contains("twice"));
}

/// Options are compared as JSON values: the same value twice is refused whatever its type, a
/// string and a number of the same text are two options.
#[test]
fn enum_options_are_compared_as_json_values() {
    for (e, at) in [
        (json!([1, 2, 1]), Some(2)),
        (json!([{ "a": 1 }, { "a": 1 }]), Some(1)),
        (json!([null, "null", null]), Some(2)),
        (json!(["a", "a"]), Some(1)),
        (json!(["a\"b", "c", "a\"b"]), Some(2)),
        (json!(["\u{1}\\", "\u{1}\\"]), Some(1)),
        (json!(["a", "b", "b", "c"]), Some(2)),
        (json!(["a", "b", "c", "a"]), Some(3)),
    ] {
        let issues = refused(&with_schema(
            json!({ "type": "object", "properties": { "mode": { "enum": e } } }),
        ));
        assert_eq!(issues.len(), 1, "{e}");
        assert_eq!(
            issues[0].path,
            format!("inputSchema.properties.mode.enum[{}]", at.unwrap())
        );
    }
    for e in [
        json!(["1", 1]),
        json!(["a\"b", "a\\\"b"]),
        json!([1.0, 1]),
        json!(["null", null]),
        json!([true, "true"]),
        json!(["a", "A"]),
    ] {
        let d = with_schema(json!({ "type": "object", "properties": { "mode": { "enum": e } } }));
        assert_eq!(check_decl(&d), Ok(()), "{e}");
    }
}

#[test]
fn a_property_description_over_the_bound_is_refused() {
    let long = "x".repeat(MAX_PROPERTY_DESCRIPTION_CHARS + 1);
    let issues = refused(&with_schema(
        json!({ "type": "object", "properties": { "mode": { "type": "string", "description": long } } }),
    ));
    assert_eq!(issues[0].path, "inputSchema.properties.mode.description");
}

#[test]
fn the_whole_schema_is_walked() {
    let issues = refused(&with_schema(json!({ "type": "object", "properties": {
        "list": { "type": "array", "items": { "type": "object", "properties": { "k": { "enum": [""] } } } },
        "opt": { "anyOf": [{ "type": "object", "properties": { "bad key": { "type": "string" } } }, { "type": "null" }] },
        "case": { "oneOf": [{ "properties": { "tag": { "enum": [] } } }] }
    } })));
    let paths: BTreeSet<&str> = issues.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(
        paths,
        BTreeSet::from([
            "inputSchema.properties.list.items.properties.k.enum[0]",
            "inputSchema.properties.opt.anyOf[0].properties",
            "inputSchema.properties.case.oneOf[0].properties.tag.enum",
        ])
    );
}

// ---- Overlap ----

#[test]
fn two_descriptions_that_share_most_words_are_a_warning() {
    let d = vec![
        decl(
            "b_pay",
            "Sends tokens from the owner's account to another account on the ledger.",
        ),
        decl(
            "a_send",
            "Sends tokens from the owner's account to another account on a ledger.",
        ),
        decl("c_fee", "Reads the fee of one transfer."),
    ];
    let w = overlap_warnings(&d);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].tools, ["a_send".to_string(), "b_pay".to_string()]);
    assert_eq!(w[0].similarity_permille, 1000);
    assert!(w[0].message.contains("a_send") && w[0].message.contains("b_pay"));
}

#[test]
fn the_similarity_is_the_jaccard_index_of_the_word_sets_in_permille() {
    // {reads, balance, account} against {reads, fee, account}: 2 shared of 4.
    assert_eq!(
        similarity_permille(
            "Reads the balance of an account",
            "Reads the fee of an account"
        ),
        500
    );
    assert_eq!(similarity_permille("", "the of"), 0);
    let w = overlap_warnings(&[
        decl("a", "Reads the balance of an account"),
        decl("b", "Reads the fee of an account"),
    ]);
    assert!(w.is_empty());
}

#[test]
fn the_icrc_packs_overlap_nowhere() {
    assert_eq!(overlap_warnings(&icrc_decls()), vec![]);
}

// ---- Score and selection ----

fn bus() -> Vec<ToolDecl> {
    vec![
        decl("escalate", "Hands the request to a person."),
        decl("balance", "Reads the balance of an account."),
        decl("transfer", "Sends tokens to an account."),
        decl("fee", "Reads the transfer fee."),
        decl("clock", "Says the time."),
    ]
}

#[test]
fn the_score_weighs_name_title_inputs_and_description() {
    let d = decl("fee", "Reads the transfer fee.");
    // "fee": name 8 + title 4 + description 2 = 14 points; "mode": input 3 points.
    assert_eq!(score("fee", &d, 0), 1400);
    assert_eq!(score("mode", &d, 0), 300);
    assert_eq!(score("the of", &d, 0), 0, "stop words count for nothing");
    assert_eq!(score("FEES!", &d, 0), 1400, "case and plural do not matter");
}

#[test]
fn usage_adds_a_bounded_log_term_below_one_keyword() {
    let d = decl("clock", "Says the time.");
    assert_eq!(score("zzz", &d, 0), 0);
    assert_eq!(score("zzz", &d, 1), 1);
    assert_eq!(score("zzz", &d, 8), 4);
    assert_eq!(score("zzz", &d, u64::MAX), 64);
    assert!(score("zzz", &d, u64::MAX) < score("time", &d, 0));
}

#[test]
fn select_puts_pinned_tools_first_and_counts_them() {
    let b = bus();
    let pinned = BTreeSet::from(["escalate".to_string()]);
    let got: Vec<&str> = select(&b, "transfer fee", 3, &pinned, &Usage::new())
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    // fee: name 8 + description 2 (fee) + description 2 (transfer) = 12; transfer: name 8.
    assert_eq!(got, vec!["escalate", "fee", "transfer"]);
}

#[test]
fn select_gives_all_pinned_and_nothing_else_when_they_exceed_the_limit() {
    let b = bus();
    let pinned = BTreeSet::from([
        "fee".to_string(),
        "escalate".to_string(),
        "absent".to_string(),
    ]);
    let got: Vec<&str> = select(&b, "transfer", 1, &pinned, &Usage::new())
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(got, vec!["escalate", "fee"]);
}

#[test]
fn select_breaks_ties_by_name_and_honours_the_limit() {
    let b = bus();
    let got: Vec<&str> = select(&b, "nothing matches", 4, &BTreeSet::new(), &Usage::new())
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(got, vec!["balance", "clock", "escalate", "fee"]);
    assert_eq!(select(&b, "", 0, &BTreeSet::new(), &Usage::new()).len(), 0);
    assert_eq!(select(&b, "", 99, &BTreeSet::new(), &Usage::new()).len(), 5);
}

#[test]
fn usage_breaks_a_tie_but_never_beats_a_keyword() {
    let b = bus();
    let usage = Usage::from([
        ("clock".to_string(), 1000),
        ("transfer".to_string(), 1_000_000),
    ]);
    let got: Vec<&str> = select(&b, "account", 3, &BTreeSet::new(), &usage)
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    // balance and transfer match "account" in their descriptions alike; transfer was called.
    assert_eq!(got, vec!["transfer", "balance", "clock"]);
}

#[test]
fn select_is_deterministic_whatever_the_order_of_the_decls() {
    let b = bus();
    let mut r = bus();
    r.reverse();
    let pinned = BTreeSet::from(["escalate".to_string()]);
    let names = |d: Vec<&ToolDecl>| d.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(select(&b, "reads tokens", 4, &pinned, &Usage::new())),
        names(select(&r, "reads tokens", 4, &pinned, &Usage::new()))
    );
}

#[test]
fn missing_lists_absent_names_in_the_callers_order_once() {
    let b = bus();
    let want = ["zeta", "fee", "alpha", "zeta"].map(String::from);
    assert_eq!(
        missing(&b, &want),
        vec!["zeta".to_string(), "alpha".to_string()]
    );
}

#[test]
fn the_label_survives_selection() {
    let d = icrc_decls();
    let got = select(
        &d,
        "transfer tokens",
        DEFAULT_LIMIT,
        &BTreeSet::new(),
        &Usage::new(),
    );
    let t = got
        .iter()
        .find(|d| d.name == "prepare_icrc1_transfer")
        .expect("offered");
    assert_eq!(t.effect, Some(EffectLabel::Idempotent));
}

// ---- Shapes and the label ----

#[test]
fn mcp_keeps_the_label_in_its_hints() {
    let hints = |effect: Option<EffectLabel>| {
        let d = ToolDecl {
            effect,
            ..decl("t", "A tool.")
        };
        let v: Value = serde_json::from_str(&render(&[&d], ToolFormat::Mcp)).unwrap();
        v[0]["annotations"].clone()
    };
    let h = hints(Some(EffectLabel::Readonly));
    assert_eq!(
        (
            h["readOnlyHint"].clone(),
            h["destructiveHint"].clone(),
            h["idempotentHint"].clone()
        ),
        (json!(true), json!(false), json!(true))
    );
    let h = hints(Some(EffectLabel::Idempotent));
    assert_eq!(
        (
            h["readOnlyHint"].clone(),
            h["destructiveHint"].clone(),
            h["idempotentHint"].clone()
        ),
        (json!(false), json!(true), json!(true))
    );
    let h = hints(Some(EffectLabel::Destructive));
    assert_eq!(
        (
            h["readOnlyHint"].clone(),
            h["destructiveHint"].clone(),
            h["idempotentHint"].clone()
        ),
        (json!(false), json!(true), json!(false))
    );
    let h = hints(None);
    let keys: Vec<&String> = h.as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["openWorldHint", "title"], "unset gives no hint");
    assert_eq!(
        h["openWorldHint"], false,
        "a tool no builtin is named as reaches nothing outside: a closed world"
    );
}

#[test]
fn form_tools_and_commit_are_open_world_in_mcp() {
    let d = icrc_decls();
    let refs: Vec<&ToolDecl> = d.iter().collect();
    let v: Value = serde_json::from_str(&render(&refs, ToolFormat::Mcp)).unwrap();
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["annotations"]["openWorldHint"] == true));
}

/// A builtin that reaches outside the tool host is open-world: `escalate` calls the handler
/// canister the owner configured; the others answer from the host alone.
#[test]
fn escalate_alone_of_the_builtins_is_open_world_in_mcp() {
    let decls: Vec<ToolDecl> = Builtin::ALL.map(|b| b.decl("UTC")).into();
    let refs: Vec<&ToolDecl> = decls.iter().collect();
    let v: Value = serde_json::from_str(&render(&refs, ToolFormat::Mcp)).unwrap();
    let open: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["annotations"]["openWorldHint"] == true)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(open, vec!["escalate"]);
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["annotations"]["openWorldHint"].is_boolean()));
}

#[test]
fn the_shapes_without_a_field_for_it_drop_the_label() {
    let d = icrc_decls();
    let refs: Vec<&ToolDecl> = d.iter().collect();
    for f in [
        ToolFormat::OpenAi,
        ToolFormat::OpenAiResponses,
        ToolFormat::Anthropic,
        ToolFormat::JsonSchema,
        ToolFormat::Markdown,
    ] {
        let text = render(&refs, f);
        for word in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "annotations",
            "\"effect\"",
            "idempotent\"",
            "destructive\"",
        ] {
            assert!(!text.contains(word), "{f:?} keeps {word}");
        }
    }
}

#[test]
fn every_format_has_a_name_and_round_trips() {
    for f in ToolFormat::ALL {
        assert_eq!(ToolFormat::from_name(f.as_str()), Some(f));
    }
    assert_eq!(ToolFormat::from_name("yaml"), None);
}

#[test]
fn the_docs_worked_example_scores_as_docs_bus_md_says() {
    let d = icrc_decls();
    let get = |n: &str| d.iter().find(|d| d.name == n).unwrap();
    // transfer: title 4 + description 2; fee: name 8 + title 4 + description 2; 5 calls: 3.
    assert_eq!(score("Transfer fee?", get("icrc1_fee"), 5), 2003);
    // transfer: name 8 + title 4; fee: nowhere.
    assert_eq!(
        score("Transfer fee?", get("prepare_icrc1_transfer"), 0),
        1200
    );
}

#[test]
fn review_checks_the_new_tools_and_compares_them_with_each_other_and_the_held_only() {
    let same = "Reads the number of open orders in the shop.";
    let held = [
        decl("held_a", same),
        decl("held_b", same),
        decl("replaced", same),
    ];
    let held_refs: Vec<&ToolDecl> = held.iter().collect();
    let new = [
        decl("new_one", same),
        decl("replaced", "Counts the parcels."),
        decl("bad name", "Counts the shops."),
    ];
    let r = review(&new, &held_refs);
    // Only the new tools are checked.
    assert_eq!(r.issues.len(), TOOL_NAME_RULES.len(), "{:?}", r.issues);
    assert!(r
        .issues
        .iter()
        .all(|i| i.tool == "bad name" && i.path == "name"));
    let pairs: Vec<[String; 2]> = r.overlaps.iter().map(|o| o.tools.clone()).collect();
    // The held pair (held_a, held_b) is not compared again, and a held tool a new one replaces
    // is not compared at all.
    assert_eq!(
        pairs,
        [
            ["held_a".to_string(), "new_one".to_string()],
            ["held_b".to_string(), "new_one".to_string()]
        ]
    );
}

#[test]
fn review_of_tools_with_nothing_held_is_the_checks_and_overlap_warnings() {
    let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let decls = host_decls(&plans, &[]);
    let r = review(&decls, &[]);
    let issues: Vec<DeclIssue> = decls
        .iter()
        .filter_map(|d| check_decl(d).err())
        .flatten()
        .collect();
    assert_eq!(r.issues, issues);
    assert_eq!(r.overlaps, overlap_warnings(&decls));
    let twins = [
        decl("a", "Reads the orders."),
        decl("b", "Reads the orders."),
    ];
    assert_eq!(review(&twins, &[]).overlaps, overlap_warnings(&twins));
    assert_eq!(review(&twins, &[]).overlaps.len(), 1);
}

/// `host_decls` works each form's canister part out once for all its tools; the declarations
/// are the ones each tool gives alone, whatever canisters apply to which forms and whether their
/// refs agree (a part kept across forms would give one form another's enum or symbol).
#[test]
fn host_decls_are_each_tools_own_declaration() {
    use candid::Principal;
    let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let canister = |n: u8, label: &str, decimals: u64, forms: Option<&[&str]>| {
        let mut c = ledger();
        c.id = Principal::from_slice(&[n, 1, 1]);
        c.label = Some(label.into());
        c.refs
            .insert("query:icrc1_decimals".into(), json!(decimals));
        c.refs.insert("query:icrc1_symbol".into(), json!(label));
        c.forms = forms.map(|f| f.iter().map(|s| s.to_string()).collect());
        c
    };
    let sets = [
        vec![],
        vec![ledger()],
        vec![
            canister(1, "TKA", 8, Some(&["icrc1"])),
            canister(2, "TKB", 6, Some(&["icrc1", "icrc2"])),
            canister(3, "TKA", 8, Some(&["icrc2"])),
        ],
        vec![
            canister(4, "TKC", 2, Some(&["icrc2"])),
            canister(5, "TKC", 2, None),
            canister(6, "TKD", 2, Some(&["icrc1"])),
        ],
    ];
    for cs in &sets {
        let mut alone: Vec<ToolDecl> = plans.plans.values().map(|p| decl_of_plan(p, cs)).collect();
        alone.push(commit_decl());
        alone.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(host_decls(&plans, cs), alone, "{} canisters", cs.len());
    }
    // The case the parts are for: the forms see different canisters.
    let d = host_decls(&plans, &sets[2]);
    let enum_of = |name: &str| {
        d.iter().find(|x| x.name == name).unwrap().input_schema["properties"]["canister_id"]["enum"]
            .clone()
    };
    assert_ne!(
        enum_of("prepare_icrc1_transfer"),
        enum_of("prepare_icrc2_approve")
    );
}

/// A builtin's declaration depends on the default zone only where it says so: the bus keeps
/// the others' declarations when the zone changes.
#[test]
fn only_a_builtin_that_reads_the_zone_declares_it() {
    for b in Builtin::ALL {
        let utc = b.decl("UTC");
        let zurich = b.decl("Europe/Zurich");
        assert_eq!(utc != zurich, b.decl_reads_zone(), "{}", b.name());
    }
}
