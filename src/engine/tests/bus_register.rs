//! Registration runs the bus's declaration checks and overlap warnings (`bus::review`, as
//! `tool-host lint` does): a form any of whose tools a provider would refuse is refused, naming
//! each tool and issue, and nothing changes; overlaps are warnings in the answer. A tool name a
//! builtin has, or another form's tool has, never becomes a form's tool.

mod common;
use common::*;
use serde_json::{json, Value};
use tool_host_engine::registry::{list_forms, register_canister, register_form};
use tool_host_engine::types::*;

fn form(name: &str, methods: Value) -> Value {
    json!({
        "format": "candid-profile-resolved",
        "format_version": 0,
        "name": name,
        "types": {},
        "methods": methods
    })
}

fn query(describe: &str) -> Value {
    json!({ "mode": "query", "describe": describe, "args": [], "results": [{ "type": "nat" }] })
}

fn register(w: &World, id: &str, form: &Value) -> ApiResult<FormInfo> {
    register_form(
        w,
        controller(),
        RegisterFormArgs {
            id: id.into(),
            json: form.to_string(),
        },
    )
}

/// A canister of form `id` for a single owner: its reads (queries the engine does not know as
/// reads) are offered there only.
fn single_owner_target(w: &World, id: &str) {
    futures::executor::block_on(register_canister(
        w,
        controller(),
        RegisterCanisterArgs {
            id: p(90),
            label: Some("Shop".into()),
            forms: vec![id.into()],
            owner: Some(owner()),
        },
    ))
    .unwrap();
}

fn form_ids(w: &World) -> Vec<String> {
    list_forms(w, controller())
        .unwrap()
        .into_iter()
        .map(|f| f.id)
        .collect()
}

fn tool_names(w: &World) -> Vec<String> {
    let v: Value = serde_json::from_str(&tool_host_engine::tools::list_tools(w)).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// A `describe` the form layer takes (1 024 characters) that the host's own sentence takes
/// over OpenAI's bound for a tool description.
fn longest_describe() -> String {
    format!("{}.", "Counts the orders. ".repeat(60)[..1023].trim_end())
}

#[test]
fn a_tool_description_over_the_providers_bound_refuses_the_form_naming_the_tool() {
    let w = World::new().setup();
    let forms_before = form_ids(&w);
    let tools_before = tool_names(&w);
    let f = form(
        "wordy",
        json!({ "count_orders": query(&longest_describe()), "count_shops": query("Counts the shops.") }),
    );
    let e = register(&w, "wordy", &f).unwrap_err();
    assert_eq!(e.code, "INVALID_FORM", "{e:?}");
    assert_eq!(e.issues.len(), 1, "{e:?}");
    let i = &e.issues[0];
    assert_eq!(
        (i.param.as_str(), i.path.as_str(), i.code.as_str()),
        ("count_orders", "description", "E_DECL")
    );
    assert!(i.message.contains("OpenAI"), "{}", i.message);
    // Nothing changed: the form is not stored and no tool came or went.
    assert_eq!(form_ids(&w), forms_before);
    assert_eq!(tool_names(&w), tools_before);
}

#[test]
fn a_record_field_a_provider_takes_no_property_key_for_refuses_the_form() {
    let w = World::new().setup();
    let f = form(
        "keys",
        json!({ "find": { "mode": "query", "describe": "Finds an order.", "args": [
            { "type": "record", "fields": [{ "name": "order number", "type": "text" }] }
        ], "results": [{ "type": "nat" }] } }),
    );
    let e = register(&w, "keys", &f).unwrap_err();
    assert_eq!(e.code, "INVALID_FORM", "{e:?}");
    assert!(
        e.issues.iter().any(|i| i.param == "find"
            && i.code == "E_DECL"
            && i.path.ends_with(".properties")
            && i.message.contains("\"order number\"")
            && i.message.contains("Anthropic")),
        "{:?}",
        e.issues
    );
    assert!(!form_ids(&w).contains(&"keys".to_string()));
}

#[test]
fn every_tool_and_issue_is_named_in_the_one_refusal() {
    let w = World::new().setup();
    let long = longest_describe();
    let f = form(
        "many",
        json!({
            "count_orders": query(&long),
            "count_shops": query(&long),
            "fine": query("Counts the parcels.")
        }),
    );
    let e = register(&w, "many", &f).unwrap_err();
    let named: Vec<(&str, &str)> = e
        .issues
        .iter()
        .map(|i| (i.param.as_str(), i.path.as_str()))
        .collect();
    assert_eq!(
        named,
        [
            ("count_orders", "description"),
            ("count_shops", "description")
        ]
    );
    assert!(e.message.contains("2 problems"), "{}", e.message);
}

#[test]
fn a_replaced_form_that_now_fails_is_refused_and_the_old_version_stays() {
    let w = World::new().setup();
    let good = form(
        "shop",
        json!({ "count_orders": query("Counts the orders.") }),
    );
    register(&w, "shop", &good).unwrap();
    single_owner_target(&w, "shop");
    let bad = form(
        "shop",
        json!({ "count_orders": query(&longest_describe()) }),
    );
    let e = register(&w, "shop", &bad).unwrap_err();
    assert_eq!(e.code, "INVALID_FORM");
    let v: Value = serde_json::from_str(&tool_host_engine::tools::list_tools(&*w)).unwrap();
    let tool = v
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "count_orders")
        .unwrap();
    assert!(tool["description"]
        .as_str()
        .unwrap()
        .starts_with("Counts the orders."));
}

#[test]
fn overlapping_descriptions_are_warnings_in_register_forms_answer_not_refusals() {
    let w = World::new().setup();
    let same = "Reads the number of open orders in the shop.";
    let f = form(
        "twins",
        json!({ "peek_twin": query(same), "peek_other": query(same), "count_shops": query("Counts the shops and their parcels.") }),
    );
    let info = register(&w, "twins", &f).unwrap();
    assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
    let o = &info.warnings[0];
    assert_eq!(o.tools, ["peek_other", "peek_twin"]);
    assert_eq!(o.similarity_permille, 1000);
    assert!(o.message.contains("peek_other") && o.message.contains("peek_twin"));
    assert!(info.declaration_issues.is_empty());
    assert!(info.tools.contains(&"peek_twin".to_string()));
}

/// A form of many tools described alike makes a warning per pair (here 1 225): the answer lists
/// the first 100 and says the review stopped there, rather than a reply past 2 MiB (a form of
/// 256 such tools made the registration trap). A form under the bound lists every pair.
#[test]
fn a_forms_overlap_warnings_stop_at_100_and_say_so() {
    let w = World::new().setup();
    let same = "Reads the number of open orders in the shop.";
    let tools = |n: usize| {
        let methods: serde_json::Map<String, Value> = (0..n)
            .map(|i| (format!("peek_{i:02}"), query(same)))
            .collect();
        Value::Object(methods)
    };
    let info = register(&w, "fifty", &form("fifty", tools(50))).unwrap();
    assert_eq!(info.tools.len(), 50);
    assert_eq!(info.warnings.len(), 100);
    assert!(info.more_warnings);
    // The first found: each tool in name order against those after it.
    assert_eq!(info.warnings[0].tools, ["peek_00", "peek_01"]);
    assert_eq!(info.warnings[99].tools, ["peek_02", "peek_05"]);
    let info = register(&w, "fourteen", &form("fourteen", tools(14))).unwrap_err();
    assert_eq!(info.code, "INVALID_FORM", "the names are the first form's");
    let w = World::new().setup();
    let info = register(&w, "fourteen", &form("fourteen", tools(14))).unwrap();
    assert_eq!(info.warnings.len(), 91);
    assert!(!info.more_warnings);
}

#[test]
fn a_new_tool_is_compared_with_the_tools_already_held() {
    let w = World::new().setup();
    // The icrc1 pack's fee tool, described again by another form's tool.
    let v: Value = serde_json::from_str(&tool_host_engine::tools::list_tools(&*w)).unwrap();
    let fee = v
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "icrc1_fee")
        .unwrap()["description"]
        .as_str()
        .unwrap()
        .to_string();
    let describe = fee.trim_end_matches(" Reads only; nothing changes.");
    let info = register(
        &w,
        "copy",
        &form("copy", json!({ "ledger_fee": query(describe) })),
    )
    .unwrap();
    assert_eq!(
        info.warnings.iter().map(|o| &o.tools).collect::<Vec<_>>(),
        [&vec!["icrc1_fee".to_string(), "ledger_fee".to_string()]]
    );
    // Held tools are not compared with each other, and the warning is not a stored fact.
    let listed = list_forms(&*w, controller()).unwrap();
    assert!(listed.iter().all(|f| f.warnings.is_empty()));
}

#[test]
fn the_icrc_packs_register_with_no_warnings_and_no_issues() {
    let w = World::new();
    for (id, json) in tool_host_core::packs::PACKS {
        let info = register_form(
            &*w,
            controller(),
            RegisterFormArgs {
                id: id.into(),
                json: json.into(),
            },
        )
        .unwrap();
        assert!(info.warnings.is_empty(), "{id}: {:?}", info.warnings);
        assert!(info.declaration_issues.is_empty());
    }
}

#[test]
fn a_tool_name_another_form_has_is_refused_and_the_other_form_keeps_its_tool() {
    let w = World::new().setup();
    let tools_before = tool_names(&w);
    let e = register(
        &w,
        "dup",
        &form(
            "dup",
            json!({ "icrc1_fee": query("The fee of this other ledger.") }),
        ),
    )
    .unwrap_err();
    assert_eq!(e.code, "INVALID_FORM");
    assert_eq!(e.issues.len(), 1, "{e:?}");
    let i = &e.issues[0];
    assert_eq!(
        (i.param.as_str(), i.path.as_str(), i.code.as_str()),
        ("icrc1_fee", "name", "E_TOOL_NAME_TAKEN")
    );
    assert!(i.message.contains("form 'icrc1'"), "{}", i.message);
    assert_eq!(tool_names(&w), tools_before);
    // A form registered again under its own id keeps its names.
    register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "icrc1".into(),
            json: tool_host_core::packs::PACKS[0].1.into(),
        },
    )
    .unwrap();
    assert_eq!(tool_names(&w), tools_before);
}

#[test]
fn a_builtins_name_is_never_a_form_tool_enabled_or_not() {
    let w = World::new().setup();
    let reserved = [
        "calculate",
        "think",
        "finish",
        "escalate",
        "current_time",
        "date_math",
        "json_query",
        "http_request",
    ];
    let methods: serde_json::Map<String, Value> = reserved
        .iter()
        .map(|n| (n.to_string(), query("Answers a number.")))
        .collect();
    let info = register(&w, "named", &form("named", Value::Object(methods))).unwrap();
    assert!(info.tools.is_empty(), "{:?}", info.tools);
    for n in reserved {
        let skip = info.skipped.iter().find(|s| s.method == n).unwrap();
        assert!(skip.reason.contains("reserved"), "{n}: {}", skip.reason);
    }
    w.builtins(&["calculate", "current_time"], &[]).unwrap();
    let listed = tool_names(&w);
    assert!(!listed.contains(&"http_request".to_string()));
    let described = tool_host_engine::bus::describe_tools(&*w);
    for t in described
        .iter()
        .filter(|t| reserved.contains(&t.name.as_str()))
    {
        assert_eq!(t.source, ToolSourceView::Builtin, "{}", t.name);
    }
}

/// A label of the most characters a label may have.
fn label(n: u8) -> String {
    format!("{:0>32}", n)
}

fn target(w: &World, id: candid::Principal, label: &str, forms: &[&str]) -> ApiResult<TargetView> {
    futures::executor::block_on(register_canister(
        w,
        controller(),
        RegisterCanisterArgs {
            id,
            label: Some(label.into()),
            forms: forms.iter().map(|f| f.to_string()).collect(),
            owner: Some(owner()),
        },
    ))
}

#[test]
fn many_canisters_of_one_form_register_and_its_canister_description_stays_within_the_bound() {
    let w = World::new().setup();
    register(
        &w,
        "shop",
        &form(
            "shop",
            json!({ "count_orders": query("Counts the orders.") }),
        ),
    )
    .unwrap();
    // Each target of the form used to be listed whole in `canister_id`'s description, which
    // passed the providers' 1 024 characters at about a dozen labelled targets and refused the
    // next registration: the ICRC packs could not serve more than a dozen ledgers.
    for n in 100..140u8 {
        target(&w, p(n), &label(n), &["shop"])
            .unwrap_or_else(|e| panic!("target {n} refused: {e:?}"));
    }
    let list: Value = serde_json::from_str(&tool_host_engine::bus::list_tools(&*w, None)).unwrap();
    let tool = list
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "count_orders")
        .unwrap();
    let canister = &tool["inputSchema"]["properties"]["canister_id"];
    let d = canister["description"].as_str().unwrap();
    assert!(d.chars().count() <= 1024, "{d}");
    assert_eq!(canister["enum"].as_array().unwrap().len(), 40);
    let named = (100..140u8)
        .filter(|n| d.contains(&p(*n).to_text()))
        .count();
    assert!((1..40).contains(&named), "{d}");
    assert!(
        d.ends_with(&format!(" and {} more: any value of the enum.", 40 - named)),
        "{d}"
    );
    let forms = list_forms(&*w, controller()).unwrap();
    let shop = forms.iter().find(|f| f.id == "shop").unwrap();
    assert!(
        shop.declaration_issues.is_empty(),
        "{:?}",
        shop.declaration_issues
    );
}

#[test]
fn a_form_stored_before_the_checks_stays_offered_and_list_forms_reports_it() {
    let w = World::new().setup();
    // As a version before the checks stored it.
    let old = form("old", json!({ "count_orders": query(&longest_describe()) }));
    {
        let mut s = w.state.borrow_mut();
        s.forms.insert(
            "old".into(),
            tool_host_engine::model::StoredForm {
                json: old.to_string(),
                registered_at: T0,
                registered_by: controller(),
            },
        );
        s.bump_catalog();
    }
    w.upgrade();
    single_owner_target(&w, "old");
    assert!(tool_names(&w).contains(&"count_orders".to_string()));
    let forms = list_forms(&*w, controller()).unwrap();
    let info = forms.iter().find(|f| f.id == "old").unwrap();
    assert_eq!(
        info.declaration_issues.len(),
        1,
        "{:?}",
        info.declaration_issues
    );
    let i = &info.declaration_issues[0];
    assert_eq!(
        (i.param.as_str(), i.path.as_str()),
        ("count_orders", "description")
    );
    // The other forms report nothing, and the canister keeps working.
    assert!(forms
        .iter()
        .filter(|f| f.id != "old")
        .all(|f| f.declaration_issues.is_empty()));
    let r = w.tool(
        agent(),
        "icrc1_fee",
        json!({ "canister_id": ledger_id().to_text() }),
        None,
    );
    assert!(r.is_ok(), "{r:?}");
}

fn shared_target(w: &World, id: candid::Principal, forms: &[&str]) -> ApiResult<TargetView> {
    futures::executor::block_on(register_canister(
        w,
        controller(),
        RegisterCanisterArgs {
            id,
            label: None,
            forms: forms.iter().map(|f| f.to_string()).collect(),
            owner: None,
        },
    ))
}

/// A canister whose refs would make the tools of a form newly named for it fail a provider's
/// checks is refused, naming those tools, and keeps its forms; the issues its forms had
/// before are not this registration's doing (a registration with the same forms is taken).
#[test]
fn a_canister_whose_refs_break_a_newly_named_forms_tools_is_refused_and_keeps_its_forms() {
    let w = World::new();
    for (id, json) in tool_host_core::packs::PACKS {
        register(&w, id, &serde_json::from_str(json).unwrap()).unwrap();
    }
    // Its refs as a refresh read them: a symbol that puts every amount's description past the
    // providers' bound (the canister is the only one of its forms, so its refs are the words).
    let id = p(50);
    {
        let mut s = w.state.borrow_mut();
        s.targets.insert(
            id,
            tool_host_engine::model::Target {
                label: None,
                forms: vec!["icrc1".into()],
                refs_json:
                    json!({ "query:icrc1_symbol": "X".repeat(990), "query:icrc1_decimals": 8 })
                        .to_string(),
                refs_updated_at: Some(T0),
                refs_error: None,
                icrc3: false,
                registered_at: T0,
                owner: None,
            },
        );
        s.targets_changed();
    }
    let before = list_forms(&*w, controller()).unwrap();
    let icrc1 = before.iter().find(|f| f.id == "icrc1").unwrap();
    assert!(
        !icrc1.declaration_issues.is_empty(),
        "the planted refs break icrc1's amounts"
    );
    shared_target(&w, id, &["icrc1"]).expect("nothing new fails");
    let tools = tool_names(&w);
    let forms = list_forms(&*w, controller()).unwrap();
    let e = shared_target(&w, id, &["icrc1", "icrc2"]).unwrap_err();
    assert_eq!(e.code, "INVALID_ARGUMENT", "{e:?}");
    assert!(e.message.contains("would make"), "{}", e.message);
    assert!(!e.issues.is_empty());
    assert!(
        e.issues.iter().all(|i| i.param.contains("icrc2")),
        "only icrc2's tools are new: {:?}",
        e.issues
    );
    let t = w.state.borrow().targets.get(&id).unwrap();
    assert_eq!(t.forms, vec!["icrc1".to_string()]);
    // And the catalog is the one before the refusal (not a target's change it missed).
    assert_eq!(tool_names(&w), tools);
    assert_eq!(list_forms(&*w, controller()).unwrap(), forms);
}

/// The forms held share a bound on the input positions their methods read
/// (`registry::MAX_HOST_POSITIONS`, the catalog's build after an upgrade planning them all in
/// one message): two forms of 19 120 positions each register beside the packs' 11; a third
/// is refused with the count, and nothing changes; a form registered again counts once, a form
/// replaced by a smaller one is taken, and removing one makes room.
#[test]
fn the_forms_held_share_a_bound_on_input_positions() {
    use tool_host_engine::registry::{remove_form, MAX_HOST_POSITIONS};
    let w = World::new().setup();
    w.with_limits(|l| l.max_forms = 64);
    let heavy = |k: usize| {
        let mut types = serde_json::Map::new();
        types.insert("T0".into(), json!({ "type": "text" }));
        for n in 1..=8 {
            let prev = format!("T{}", n - 1);
            types.insert(
                format!("T{n}"),
                json!({ "type": "record", "fields": [
                    { "name": "a", "type": prev }, { "name": "b", "type": prev } ] }),
            );
        }
        let methods: serde_json::Map<String, Value> = (0..20)
            .map(|m| {
                (
                    format!("f{k}_m{m:02}"),
                    json!({ "mode": "update", "args": [
                        { "type": "T8" }, { "type": "T7" }, { "type": "T6" }, { "type": "T5" } ],
                        "results": [] }),
                )
            })
            .collect();
        let mut f = form(&format!("heavy{k}"), Value::Object(methods));
        f["types"] = Value::Object(types);
        f
    };
    assert_eq!(MAX_HOST_POSITIONS, 50_000);
    for k in 0..2 {
        let info = register(&w, &format!("heavy{k}"), &heavy(k)).unwrap();
        assert!(info.skipped.is_empty(), "{:?}", info.skipped);
        assert_eq!(
            info.tools
                .iter()
                .filter(|t| t.starts_with("prepare_"))
                .count(),
            20,
            "{:?}",
            info.tools
        );
    }
    let e = register(&w, "heavy2", &heavy(2)).unwrap_err();
    assert_eq!(e.code, "LIMIT");
    assert_eq!(
        e.message,
        "the forms held would read 57371 input positions together, over the tool host's 50000 (this form's methods read 19120, a named type counted at each use): remove a form, or register one whose inputs are smaller"
    );
    let held = list_forms(&*w, controller()).unwrap();
    assert_eq!(held.len(), 4);
    assert!(held.iter().all(|f| f.id != "heavy2"));
    register(&w, "heavy1", &heavy(1)).unwrap();
    remove_form(&*w, controller(), "heavy0".into()).unwrap();
    register(&w, "heavy2", &heavy(2)).unwrap();
    // Past the bound (as forms stored before it may be), a form replaced by a smaller one is
    // taken, and a larger one is not.
    w.state.borrow_mut().forms.insert(
        "heavy0".into(),
        tool_host_engine::model::StoredForm {
            json: heavy(0).to_string(),
            registered_at: 0,
            registered_by: controller(),
        },
    );
    w.state.borrow_mut().bump_catalog();
    let mut smaller = heavy(1);
    smaller["methods"]
        .as_object_mut()
        .unwrap()
        .retain(|m, _| m.as_str() < "f1_m19");
    register(&w, "heavy1", &smaller).unwrap();
    let e = register(&w, "heavy1", &heavy(1)).unwrap_err();
    assert_eq!(e.code, "LIMIT");
}
