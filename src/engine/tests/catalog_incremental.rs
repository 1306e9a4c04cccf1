//! The catalog is rebuilt incrementally (a changed form read again alone, a change of targets
//! leaving the forms' plans alone): after any sequence of registrations, removals, refs
//! refreshes, builtin settings changes and upgrades it equals the catalog built from scratch
//! from the same stored state, bus included.

mod common;
use common::*;
use serde_json::{json, Value};
use tool_host_engine::catalog;
use tool_host_engine::registry;
use tool_host_engine::types::*;

/// A small deterministic generator (xorshift64*), so that a failing sequence is found again
/// from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

fn pack(id: &str) -> Value {
    let json = tool_host_core::packs::PACKS
        .iter()
        .find(|(i, _)| *i == id)
        .unwrap()
        .1;
    serde_json::from_str(json).unwrap()
}

/// A pack under another name, its methods renamed with `prefix` (tools of its own).
fn renamed(id: &str, prefix: &str) -> Value {
    let mut form = pack(id);
    form["name"] = json!(prefix);
    let methods = form["methods"].as_object().unwrap().clone();
    form["methods"] = methods
        .into_iter()
        .map(|(m, v)| {
            let rest = m
                .strip_prefix("icrc1_")
                .or_else(|| m.strip_prefix("icrc2_"))
                .unwrap_or(&m)
                .to_string();
            (format!("{prefix}_{rest}"), v)
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    form
}

/// A form with an update that binds no position to the owner (offered only on a canister
/// registered for a single owner).
fn vault() -> Value {
    let mut form = pack("icrc1");
    form["name"] = json!("vault");
    form["methods"] = json!({ "withdraw_all": { "mode": "update", "intent": "Withdraw everything", "args": [
        { "type": "record", "fields": [{ "name": "to", "type": "Account" }] }
    ], "results": [] } });
    form
}

/// A form with reads named as the icrc1 pack's transfer tool and the vault's withdrawal tool
/// (`prepare_icrc1_transfer`, `prepare_withdraw_all`: methods the engine does not know as
/// reads, so they bind no owner) and a form that confirms methods of those names: combining
/// them skips the reads, and the other forms' tools of those names are the only ones left.
/// The rule on tools that bind no owner must neither take them away nor list them for the
/// reads' form.
fn shadow_read() -> Value {
    let mut form = pack("icrc1");
    form["name"] = json!("shadow_read");
    let read = json!({ "mode": "query", "args": [], "results": [{ "type": "nat" }] });
    form["methods"] = json!({ "prepare_icrc1_transfer": read, "prepare_withdraw_all": read });
    form
}

fn shadow_send() -> Value {
    let mut form = vault();
    form["name"] = json!("shadow_send");
    let m = form["methods"]["withdraw_all"].clone();
    form["methods"] = json!({ "prepare_icrc1_transfer": m, "prepare_withdraw_all": m });
    form
}

/// The forms an id may be registered with: two contents each for some ids, so that a form is
/// replaced by another version of itself.
fn versions(id: &str) -> Vec<Value> {
    match id {
        "icrc1" => vec![pack("icrc1")],
        "icrc2" => vec![pack("icrc2")],
        // The third keeps the first's tool names with other descriptions: a bus that kept the
        // first's declarations (as it may while a form is unchanged) would show the old ones.
        "copy_a" => vec![
            renamed("icrc1", "xa"),
            renamed("icrc2", "xa"),
            redescribed(renamed("icrc1", "xa")),
        ],
        "copy_b" => vec![renamed("icrc2", "xb"), renamed("icrc1", "xc")],
        "vault" => vec![vault()],
        // The same tool names as icrc1's: refused while icrc1 holds them.
        "clash" => vec![pack("icrc1")],
        "shadow_read" => vec![shadow_read()],
        "shadow_send" => vec![shadow_send()],
        _ => unreachable!(),
    }
}

/// Every `describe` in a form with " (described again)" added.
fn redescribed(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match x {
                        Value::String(t) if k == "describe" => t.push_str(" (described again)"),
                        _ => walk(x),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

const FORM_IDS: [&str; 8] = [
    "icrc1",
    "icrc2",
    "copy_a",
    "copy_b",
    "vault",
    "clash",
    "shadow_read",
    "shadow_send",
];

fn canister_ids() -> [candid::Principal; 5] {
    [
        ledger_id(),
        candid::Principal::from_slice(&[41; 10]),
        // Longer than a canister id: the principals' order (length first) is not their
        // bytes' order, and a target changed alone is put where reading them all puts it.
        candid::Principal::from_slice(&[3; 29]),
        candid::Principal::from_slice(&[200; 29]),
        candid::Principal::from_slice(&[7; 12]),
    ]
}

/// The rule on tools that bind no owner, worked out as it reads from every combined plan: a
/// prepare tool of a method without a custody rule, a read tool of a read the engine does not
/// know. Such a tool is `unbound` (said for every target, listed for its forms), and among the
/// plans only when a canister of its form is registered for a single owner; every other
/// combined plan is among them.
fn check_unbound(c: &catalog::Catalog) {
    use tool_host_core::plan::ToolKind;
    use tool_host_engine::custody;
    let pairs: Vec<_> = c.entries.values().map(|e| (&e.form, &*e.tools)).collect();
    let combined = tool_host_core::plan::combine_tool_plans(&pairs);
    let mut expected = vec![];
    for (name, p) in &combined.plans {
        let unbound = match p.kind {
            ToolKind::Prepare => !custody::covers(&p.method),
            ToolKind::Read => !custody::known_read(&p.method),
        };
        let said = c.unbound(name);
        assert_eq!(said.is_some(), unbound, "{name}: unbound");
        if let Some(u) = said {
            assert_eq!(u.form, p.form.id, "{name}: its form");
            expected.push(name.clone());
        }
        let on_single = c
            .canisters
            .iter()
            .any(|k| k.applies_to(&p.form.id) && c.single_owner.contains_key(&k.id));
        assert_eq!(
            c.plans.plans.contains_key(name),
            !unbound || on_single,
            "{name}: offered"
        );
        if let Some(offered) = c.plans.plans.get(name) {
            assert!(std::sync::Arc::ptr_eq(offered, p), "{name}: the very plan");
        }
    }
    // A name no combined plan has (skipped by the rules across forms) is no unbound tool.
    for e in c.entries.values() {
        for p in &e.tools.candidates {
            if !combined.plans.contains_key(&p.name) {
                assert!(c.unbound(&p.name).is_none(), "{}: skipped", p.name);
            }
        }
    }
    // Their reasons are said when shown, and the catalog's plans keep no skips at all (the
    // rules across forms are kept form by form; `list_forms` says a form's own skips).
    assert!(
        c.plans.skipped.is_empty(),
        "no skips among the catalog's plans"
    );
    assert!(
        c.plans.plans.keys().all(|n| combined.plans.contains_key(n)),
        "no plan but a combined one"
    );
    let listed: Vec<String> = c
        .unbound_tools(|_| true)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(listed, expected, "every unbound tool listed, by name");
    for e in c.entries.values() {
        let of_form: Vec<String> = c
            .unbound_tools(|f| f == e.form.id)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let want: Vec<String> = expected
            .iter()
            .filter(|n| combined.plans[*n].form.id == e.form.id)
            .cloned()
            .collect();
        assert_eq!(of_form, want, "form {}: its unbound tools", e.form.id);
    }
}

/// Everything a catalog holds that a caller reads, as text (method types without the header
/// made on a first encoding, which a catalog reused across rebuilds may hold).
fn fingerprint(c: &catalog::Catalog) -> String {
    let types: Vec<String> = c
        .plans
        .plans
        .keys()
        .map(|n| (n, c.types(n).expect("every tool offered has its types")))
        .map(|(n, t)| format!("{n}: {:?} {:?} {:?}", t.env, t.args, t.results))
        .collect();
    let entries: Vec<String> = c
        .entries
        .values()
        .map(|e| format!("{:?} {:?} {:?}", e.form.id, e.ref_sources, e.ref_queries))
        .collect();
    check_unbound(c);
    // Each canister's principal text beside it (a catalog keeps them apart).
    assert_eq!(c.canisters.len(), c.canister_texts.len());
    for (k, t) in c.canisters.iter().zip(c.canister_texts.iter()) {
        assert_eq!(*t, k.id.to_text());
    }
    format!(
        "revision {}\nentries {entries:?}\nplans {:?}\ntypes {types:?}\ncanisters {:?}\nicrc3 {:?}\nsingle {:?} {:?}\nunbound {:?}",
        c.revision,
        c.plans,
        c.canisters,
        c.icrc3,
        c.single_owner,
        c.single_owner_forms(),
        c.unbound_tools(|_| true)
    )
}

fn bus_fingerprint(b: &catalog::Bus) -> String {
    // The fingerprint, made of the hashes kept with the texts, is that of the texts now.
    assert_eq!(b.fingerprint, {
        let texts: Vec<_> = b.items.iter().map(|t| t.mcp().as_str()).collect();
        tool_host_core::bus::page::fingerprint(texts.iter().map(|t| t.as_ref()))
    });
    // Each declaration whole (a spliced tool's part put in its hole).
    let whole: Vec<_> = (0..b.decls.len()).map(|i| b.whole(i)).collect();
    format!(
        "{:?}\n{:?}\n{:?}\n{}\n{:?}\n{:?}\n{:?}\n{}",
        whole,
        b.pinned,
        b.builtins,
        b.zone,
        b.decls
            .iter()
            .filter(|d| b.is_prepare(d))
            .map(|d| &d.name)
            .collect::<Vec<_>>(),
        b.items,
        b.words,
        b.fingerprint
    )
}

/// The catalog and bus as kept (incrementally) equal the ones built from scratch; the kept
/// ones stay in place, so that the next step rebuilds from them.
fn check_against_scratch(w: &World, step: &str) {
    let mut s = w.state.borrow_mut();
    let kept = fingerprint(catalog::current(&mut s));
    let kept_bus = bus_fingerprint(&catalog::bus(&mut s));
    let incremental = s.catalog.take();
    let scratch = fingerprint(catalog::current(&mut s));
    let scratch_bus = bus_fingerprint(&catalog::bus(&mut s));
    s.catalog = incremental;
    assert_eq!(kept, scratch, "after {step}: the catalog differs");
    assert_eq!(kept_bus, scratch_bus, "after {step}: the bus differs");
    drop(s);
    check_whole(w, step);
    check_review(w, step);
}

/// Each form's declaration issues as a registration's review finds them (each tool's kept
/// from its last review where the canisters agree on the refs it read) are those of a review
/// that keeps nothing, on the catalog as kept and on one built from scratch.
fn check_review(w: &World, step: &str) {
    use tool_host_engine::form_review;
    let mut s = w.state.borrow_mut();
    let fresh = |cat: &catalog::Catalog| -> Vec<(String, Vec<IssueView>)> {
        cat.entries
            .iter()
            .map(|(id, e)| {
                let decls = form_review::form_decls(id, &e.form.form, cat);
                (
                    id.clone(),
                    form_review::issue_views(decls.review(&[]).issues),
                )
            })
            .collect()
    };
    let kept = |cat: &catalog::Catalog| -> Vec<(String, Vec<IssueView>)> {
        cat.entries
            .keys()
            .map(|id| (id.clone(), form_review::form_issues(cat, id)))
            .collect()
    };
    let cat = catalog::current(&mut s);
    let (want, got) = (fresh(cat), kept(cat));
    assert_eq!(got, want, "after {step}: the review's issues");
    let incremental = s.catalog.take();
    let scratch = catalog::current(&mut s);
    assert_eq!(
        kept(scratch),
        want,
        "after {step}: the review's issues from scratch"
    );
    s.catalog = incremental;
}

/// Each form tool whole (`Bus::whole`: a spliced tool's declaration holds a hole where its
/// canister part goes) is the tool declared whole for the canisters now, and the whole list
/// in every format is theirs rendered.
fn check_whole(w: &World, step: &str) {
    let wholes = {
        let mut s = w.state.borrow_mut();
        let bus = catalog::bus(&mut s);
        let cat = catalog::current(&mut s);
        (0..bus.decls.len())
            .map(|i| {
                let whole = bus.whole(i).into_owned();
                if let Some(p) = cat.plans.plans.get(&whole.name) {
                    let part =
                        tool_host_core::schema::FormCanisters::new(&p.form.id, &cat.canisters);
                    let want = tool_host_core::bus::decl_of_plan_for(p, &part);
                    assert_eq!(whole, want, "after {step}: {} whole", whole.name);
                }
                whole
            })
            .collect::<Vec<_>>()
    };
    let refs: Vec<&tool_host_core::bus::ToolDecl> = wholes.iter().collect();
    // A turn's tools: a few of the bus's (spliced, `commit`, builtins alike), each whole.
    let bus = catalog::bus(&mut w.state.borrow_mut());
    let some: Vec<usize> = (0..bus.decls.len()).step_by(3).collect();
    let offered: Vec<&tool_host_core::bus::ToolDecl> =
        some.iter().map(|&i| &*bus.decls[i]).collect();
    let turn: Vec<&tool_host_core::bus::ToolDecl> = some.iter().map(|&i| refs[i]).collect();
    for f in [
        ToolFormat::Mcp,
        ToolFormat::OpenAi,
        ToolFormat::OpenAiResponses,
        ToolFormat::Anthropic,
        ToolFormat::Markdown,
        ToolFormat::JsonSchema,
    ] {
        assert_eq!(
            bus.render(&offered, f.into()),
            tool_host_core::bus::render(&turn, f.into()),
            "after {step}: a turn's tools as {f:?}"
        );
        let listed = tool_host_engine::bus::list_tools(w, Some(f));
        let want = tool_host_core::bus::render(&refs, f.into());
        if f == ToolFormat::Mcp {
            // MCP's list is compact, the texts kept with the catalog.
            let listed: Value = serde_json::from_str(&listed).unwrap();
            let want: Value = serde_json::from_str(&want).unwrap();
            assert_eq!(listed, want, "after {step}: the MCP list");
        } else {
            assert_eq!(listed, want, "after {step}: the list as {f:?}");
        }
        // Its pages, byte for byte those of the tools rendered whole (texts kept around a
        // shared part are copied in pieces; the bound counts their bytes).
        for max in [1024usize, 6 * 1024] {
            let mut cursor = None;
            let mut after: Option<String> = None;
            loop {
                let args = ListToolsArgs {
                    format: Some(f),
                    cursor: cursor.clone(),
                    max_bytes: Some(max as u32),
                };
                let got = tool_host_engine::bus::list_tools_page(w, args).unwrap();
                let want = tool_host_core::bus::page::page(
                    &refs,
                    after.as_deref(),
                    f.into(),
                    max,
                    |_, d| {
                        std::borrow::Cow::Owned(
                            tool_host_core::bus::page::render_one(d, f.into()).into(),
                        )
                    },
                );
                assert_eq!(
                    got.tools, want.text,
                    "after {step}: a page as {f:?} of {max}"
                );
                assert_eq!(got.count as usize, want.count);
                match (got.next, want.next_after) {
                    (Some(c), Some(a)) => {
                        cursor = Some(c);
                        after = Some(a);
                    }
                    (None, None) => break,
                    (g, w) => panic!("after {step}: next {g:?} against {w:?}"),
                }
            }
        }
    }
}

fn step(w: &std::rc::Rc<World>, rng: &mut Rng) -> String {
    let forms_now: Vec<String> = w.state.borrow().forms.keys().collect();
    match rng.below(9) {
        0 | 1 => {
            let id = FORM_IDS[rng.below(FORM_IDS.len())];
            let v = versions(id);
            let k = rng.below(v.len());
            let r = registry::register_form(
                &**w,
                controller(),
                RegisterFormArgs {
                    id: id.into(),
                    json: v[k].to_string(),
                },
            );
            format!("register form {id} v{k}: {:?}", r.map(|_| ()))
        }
        2 => {
            let id = FORM_IDS[rng.below(FORM_IDS.len())];
            let r = registry::remove_form(&**w, controller(), id.into());
            format!("remove form {id}: {r:?}")
        }
        3 | 4 => {
            let id = canister_ids()[rng.below(5)];
            let label = [Some("TK"), Some("TKB"), None][rng.below(3)];
            let mut forms: Vec<String> = forms_now.iter().filter(|_| rng.coin()).cloned().collect();
            if forms.is_empty() {
                forms = forms_now.first().cloned().into_iter().collect();
            }
            let owner = rng.coin().then(owner);
            let r = futures::executor::block_on(registry::register_canister(
                &**w,
                controller(),
                RegisterCanisterArgs {
                    id,
                    label: label.map(Into::into),
                    forms: forms.clone(),
                    owner,
                },
            ));
            format!(
                "register canister {id} {forms:?} owner {owner:?}: {:?}",
                r.map(|_| ())
            )
        }
        5 => {
            let id = canister_ids()[rng.below(5)];
            let r = registry::remove_canister(&**w, controller(), id);
            format!("remove canister {id}: {r:?}")
        }
        6 => {
            // The ledger's refs forgotten, or its ICRC-3 listing turned, then a refresh that
            // finds them changed.
            if rng.coin() {
                let mut s = w.state.borrow_mut();
                if let Some(mut t) = s.targets.get(&ledger_id()) {
                    t.refs_json = "{}".into();
                    s.targets.insert(ledger_id(), t);
                    // Told as every change is (the one target), or as all targets.
                    if rng.coin() {
                        s.target_changed(ledger_id());
                    } else {
                        s.targets_changed();
                    }
                }
            } else {
                let mut l = w.ledger.borrow_mut();
                l.icrc3 = !l.icrc3;
            }
            let r = futures::executor::block_on(registry::refresh_refs(&**w, controller(), None));
            format!("refresh refs: {:?}", r.map(|_| ()))
        }
        7 => {
            let all = ["current_time", "calculate", "escalate"];
            let enabled: Vec<&str> = all.iter().copied().filter(|_| rng.coin()).collect();
            // Now and then another default zone (`current_time` names it).
            let zone = rng.coin().then(|| "Europe/Zurich".to_string());
            let r = tool_host_engine::bus::settings::set_builtins(
                &**w,
                controller(),
                tool_host_engine::types::BuiltinSettings {
                    enabled: enabled.iter().map(|s| s.to_string()).collect(),
                    pinned: vec![],
                    unpinned: None,
                    default_time_zone: zone.clone(),
                },
            );
            format!("builtins {enabled:?} zone {zone:?}: {:?}", r.map(|_| ()))
        }
        _ => {
            w.upgrade();
            "upgrade".into()
        }
    }
}

#[test]
fn the_catalog_kept_across_changes_equals_one_built_from_scratch() {
    for seed in 1..=12u64 {
        let w = World::new().setup();
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut done = vec![];
        for _ in 0..40 {
            // Now and then the canisters held across the step, as a call holds them across an
            // await: the catalog then copies them rather than changing them in place.
            let held = rng.coin().then(|| {
                let mut s = w.state.borrow_mut();
                catalog::current(&mut s).canisters.clone()
            });
            let before = held.as_deref().cloned();
            // And a tool, as a prepare holds it: the plans it holds do not change under it
            // (the catalog's rules change theirs in place only when no one else holds them; the
            // first tool by name, which steps take away and give back).
            let held_tool = rng.coin().then(|| {
                let mut s = w.state.borrow_mut();
                let cat = catalog::current(&mut s);
                let name = cat.plans.plans.keys().next().cloned()?;
                let tool = cat.tool(&name)?;
                let at = tool.plan() as *const tool_host_core::plan::ToolPlan;
                Some((tool, at))
            });
            let what = step(&w, &mut rng);
            assert_eq!(
                held.as_deref().cloned(),
                before,
                "held canisters changed under a call"
            );
            if let Some(Some((tool, at))) = held_tool {
                // Still there, the very plan (a map changed under it would have lost or moved it).
                assert!(
                    std::ptr::eq(tool.plan(), at),
                    "held plans changed under a call"
                );
            }
            done.push(what);
            let label = format!("seed {seed}, steps:\n  {}", done.join("\n  "));
            check_against_scratch(&w, &label);
        }
    }
}

/// A refs refresh that changes refs moves the revision and makes the canisters again, but
/// keeps every form's parse and plans (the same entries, not copies).
#[test]
fn a_refs_change_keeps_the_forms_plans() {
    let w = World::new().setup();
    let before: Vec<std::rc::Rc<catalog::FormEntry>> = {
        let mut s = w.state.borrow_mut();
        catalog::current(&mut s).entries.values().cloned().collect()
    };
    let revision = w.state.borrow().config.get().catalog_revision;
    {
        let mut s = w.state.borrow_mut();
        let mut t = s.targets.get(&ledger_id()).unwrap();
        t.refs_json = "{}".into();
        s.targets.insert(ledger_id(), t);
        s.targets_changed();
    }
    futures::executor::block_on(registry::refresh_refs(&*w, controller(), None)).unwrap();
    let mut s = w.state.borrow_mut();
    assert!(s.config.get().catalog_revision > revision);
    let cat = catalog::current(&mut s);
    assert!(cat.canisters[0].refs.contains_key("query:icrc1_fee"));
    let after: Vec<&std::rc::Rc<catalog::FormEntry>> = cat.entries.values().collect();
    assert_eq!(before.len(), after.len());
    for (a, b) in before.iter().zip(after) {
        assert!(
            std::rc::Rc::ptr_eq(a, b),
            "form {} was planned again",
            a.form.id
        );
    }
}

/// A refresh that changes nothing leaves the revision (and so prepares awaiting name sets)
/// alone.
#[test]
fn a_refresh_that_changes_nothing_keeps_the_revision() {
    let w = World::new().setup();
    let revision = w.state.borrow().config.get().catalog_revision;
    futures::executor::block_on(registry::refresh_refs(&*w, controller(), None)).unwrap();
    assert_eq!(w.state.borrow().config.get().catalog_revision, revision);
}

/// Registering a form plans that form alone: every other form's entry is kept as it was.
#[test]
fn registering_a_form_keeps_the_other_forms_entries() {
    let w = World::new().setup();
    let before: Vec<std::rc::Rc<catalog::FormEntry>> = {
        let mut s = w.state.borrow_mut();
        catalog::current(&mut s).entries.values().cloned().collect()
    };
    registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "copy_a".into(),
            json: renamed("icrc1", "xa").to_string(),
        },
    )
    .unwrap();
    let mut s = w.state.borrow_mut();
    // The bus is built by the registration (an update), not left to each query to build and drop.
    let built = s.catalog.as_ref().and_then(|c| c.bus.clone());
    let built = built.expect("the registration built the bus");
    // Planned; but a renamed read is not a read the engine knows, so on the ledgers several
    // owners share it is not offered (`unbound`, with its reason), and the bus has no tool of it.
    assert!(built.decl("xa_balance_of").is_none());
    let cat = catalog::current(&mut s);
    assert!(!cat.plans.plans.contains_key("xa_balance_of"));
    assert!(cat.unbound("xa_balance_of").is_some());
    for e in &before {
        assert!(
            std::rc::Rc::ptr_eq(e, &cat.entries[&e.form.id]),
            "form {} was planned again",
            e.form.id
        );
    }
}

/// The forms registered, in order (each must be accepted).
fn register_forms(w: &World, forms: Vec<(&str, Value)>) {
    for (id, form) in forms {
        registry::register_form(
            w,
            controller(),
            RegisterFormArgs {
                id: id.into(),
                json: form.to_string(),
            },
        )
        .unwrap();
    }
}

/// The ledger registered (or registered again) under label TKA with `forms`, for `owner` alone
/// or shared.
fn register_ledger(w: &World, forms: &[&str], owner: Option<candid::Principal>) {
    futures::executor::block_on(registry::register_canister(
        w,
        controller(),
        RegisterCanisterArgs {
            id: ledger_id(),
            label: Some("TKA".into()),
            forms: forms.iter().map(|f| f.to_string()).collect(),
            owner,
        },
    ))
    .unwrap();
}

/// A form whose tools bind no owner, on a canister several owners share, loses only its own
/// tools: not another form's tool of a name it also planned (which combining forms gave to
/// the other).
#[test]
fn the_rule_on_unbound_tools_takes_away_only_the_forms_own() {
    let w = World::new();
    register_forms(
        &w,
        vec![
            ("shadow_send", shadow_send()),
            ("shadow_read", shadow_read()),
            ("icrc1", pack("icrc1")),
            ("vault", vault()),
        ],
    );
    let forms = ["icrc1", "shadow_read", "shadow_send", "vault"];
    register_ledger(&w, &forms, None);
    let mut s = w.state.borrow_mut();
    let cat = catalog::current(&mut s);
    check_unbound(cat);
    let transfer = &cat.plans.plans["prepare_icrc1_transfer"];
    assert_eq!(transfer.form.id, "icrc1");
    assert!(cat.unbound("prepare_icrc1_transfer").is_none());
    // The read's form planned a tool of that name, which binds no owner: not offered, and
    // not listed among the canister's tools offered only for a single owner either.
    let shadow_read_entry = &cat.entries["shadow_read"];
    assert!(shadow_read_entry
        .tools
        .candidates
        .iter()
        .any(|p| p.name == "prepare_icrc1_transfer"));
    let listed: Vec<String> = cat
        .unbound_tools(|_| true)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        listed,
        [
            "prepare_prepare_icrc1_transfer",
            "prepare_prepare_withdraw_all",
            "prepare_withdraw_all"
        ]
        .map(String::from)
    );
    assert!(cat.unbound_tools(|f| f == "shadow_read").is_empty());
    assert_eq!(cat.unbound("prepare_withdraw_all").unwrap().form, "vault");
    let bus = {
        drop(s);
        bus(&w)
    };
    assert!(bus.decl("prepare_icrc1_transfer").is_some());
    // Registered for a single owner, the canister offers the forms' tools that bind no owner
    // (the reads' names still the other forms' tools); shared again, it takes them away.
    for (single, offered) in [(true, true), (false, false)] {
        register_ledger(&w, &forms, single.then(owner));
        let mut s = w.state.borrow_mut();
        let cat = catalog::current(&mut s);
        check_unbound(cat);
        assert_eq!(cat.plans.plans["prepare_icrc1_transfer"].form.id, "icrc1");
        for (name, form) in [
            ("prepare_prepare_icrc1_transfer", "shadow_send"),
            ("prepare_prepare_withdraw_all", "shadow_send"),
            ("prepare_withdraw_all", "vault"),
        ] {
            let plan = cat.plans.plans.get(name);
            assert_eq!(plan.is_some(), offered, "{name}, single owner {single}");
            assert!(plan.is_none_or(|p| p.form.id == form), "{name}: its form");
        }
    }
}

/// Which tools of the bus (form tools, `commit`, builtins) are the very ones of `before` (kept,
/// not made again), and which kept their words only.
fn kept(before: &catalog::Bus, after: &catalog::Bus) -> (Vec<String>, Vec<String>) {
    let mut whole = vec![];
    let mut words = vec![];
    for (i, d) in after.decls.iter().enumerate() {
        let Some(j) = before.decls.iter().position(|b| b.name == d.name) else {
            continue;
        };
        if std::rc::Rc::ptr_eq(&before.items[j], &after.items[i]) {
            whole.push(d.name.clone());
        } else if std::rc::Rc::ptr_eq(&before.words[j], &after.words[i]) {
            words.push(d.name.clone());
        }
    }
    (whole, words)
}

fn bus(w: &World) -> std::rc::Rc<catalog::Bus> {
    catalog::bus(&mut w.state.borrow_mut())
}

/// What a change makes again: a builtin setting or a flag of a target (ICRC-3, the owner)
/// nothing of the form tools, and of the host's own tools only the builtins it enables or
/// whose declaration it changes (the zone, `current_time`'s); a canister's label the form
/// tools' declarations and texts, not their words.
#[test]
fn a_change_makes_again_only_the_tools_it_changes() {
    let w = World::new().setup();
    let form_tools = |b: &catalog::Bus| -> Vec<String> {
        b.decls
            .iter()
            .filter(|d| matches!(d.source, tool_host_core::bus::ToolSource::Form { .. }))
            .map(|d| d.name.clone())
            .collect()
    };
    let b0 = bus(&w);
    let all = form_tools(&b0);
    assert!(all.len() > 4, "{all:?}");

    // A builtin setting: every tool there before is kept (the form tools, `commit`, the
    // builtins still enabled), only the builtin enabled is made.
    w.builtins(&["current_time", "calculate"], &[]).unwrap();
    let b1 = bus(&w);
    let before: Vec<String> = b1
        .names()
        .into_iter()
        .filter(|n| b0.decl(n).is_some())
        .map(String::from)
        .collect();
    assert!(before.iter().any(|n| n == "commit"), "{before:?}");
    assert_eq!(kept(&b0, &b1).0, before, "a builtin setting");
    w.builtins(&["current_time", "calculate", "think"], &[])
        .unwrap();
    let b1z = bus(&w);
    assert!(b1.decl("think").is_none() && b1z.decl("think").is_some());
    assert_eq!(kept(&b1, &b1z).0, b1.names(), "another builtin enabled");
    // Another default zone: `current_time` is declared again (it names the zone), nothing
    // else.
    tool_host_engine::bus::settings::set_builtins(
        &*w,
        controller(),
        tool_host_engine::types::BuiltinSettings {
            enabled: ["current_time", "calculate", "think"]
                .map(String::from)
                .to_vec(),
            pinned: vec![],
            unpinned: None,
            default_time_zone: Some("Europe/Zurich".into()),
        },
    )
    .unwrap();
    let b1 = bus(&w);
    let mut was = b1z.names();
    was.retain(|n| *n != "current_time");
    assert_eq!(kept(&b1z, &b1).0, was, "another zone");
    assert!(b1
        .decl("current_time")
        .unwrap()
        .description
        .contains("Europe/Zurich"));
    check_against_scratch(&w, "another zone");

    {
        let mut s = w.state.borrow_mut();
        let mut t = s.targets.get(&ledger_id()).unwrap();
        t.icrc3 = !t.icrc3;
        s.targets.insert(ledger_id(), t);
        s.target_changed(ledger_id());
    }
    let b2 = bus(&w);
    assert_eq!(kept(&b1, &b2).0, b1.names(), "the ICRC-3 flag");

    {
        let mut s = w.state.borrow_mut();
        let mut t = s.targets.get(&ledger_id()).unwrap();
        t.label = Some("OTHER".into());
        s.targets.insert(ledger_id(), t);
        s.target_changed(ledger_id());
    }
    let b3 = bus(&w);
    let (whole, words) = kept(&b2, &b3);
    let host: Vec<&str> = b2
        .names()
        .into_iter()
        .filter(|n| !all.iter().any(|f| f == n))
        .collect();
    assert_eq!(host, ["calculate", "commit", "current_time", "think"]);
    assert_eq!(whole, host, "a label: only the host's own tools stay whole");
    assert_eq!(words, all, "a label: the words stay");
    assert!(b3
        .items
        .iter()
        .any(|t| t.mcp().as_str().contains("(OTHER)")));
    check_against_scratch(&w, "a label");
}

/// The bus is usually built again after each change; a change made without it (or several)
/// must still not lend a form's tool another form's declaration of the same name. Here
/// `shadow_read`'s read `prepare_icrc1_transfer` (skipped while `shadow_send` confirms that
/// method) becomes the tool of that name once `icrc1` and `shadow_send` are gone, while the
/// bus last built holds `icrc1`'s tool of that name and `shadow_read` is unchanged.
#[test]
fn a_bus_built_after_several_changes_lends_no_form_another_forms_tool() {
    // With the canister changed too (only the tool's words could be lent), and without (its
    // declaration and texts could).
    for change_target in [true, false] {
        several_changes_then_the_bus(change_target);
    }
}

fn several_changes_then_the_bus(change_target: bool) {
    let w = World::new();
    register_forms(
        &w,
        vec![
            ("shadow_send", shadow_send()),
            ("shadow_read", shadow_read()),
            ("icrc1", pack("icrc1")),
        ],
    );
    register_ledger(&w, &["icrc1", "shadow_read", "shadow_send"], Some(owner()));
    let before = bus(&w);
    let held = before.decl("prepare_icrc1_transfer").expect("icrc1's tool");
    assert!(
        matches!(&held.source, tool_host_core::bus::ToolSource::Form { form_id } if form_id == "icrc1")
    );
    {
        let mut s = w.state.borrow_mut();
        if change_target {
            let mut t = s.targets.get(&ledger_id()).unwrap();
            t.forms = vec!["shadow_read".into()];
            s.targets.insert(ledger_id(), t);
            s.target_changed(ledger_id());
        }
        for id in ["icrc1", "shadow_send"] {
            s.forms.remove(&id.to_string());
            s.form_changed(id, None);
        }
    }
    let after = bus(&w);
    let now = after
        .decl("prepare_icrc1_transfer")
        .expect("shadow_read's read");
    assert!(
        matches!(&now.source, tool_host_core::bus::ToolSource::Form { form_id } if form_id == "shadow_read")
    );
    check_against_scratch(
        &w,
        &format!("two forms removed (the canister changed: {change_target}), then the bus"),
    );
}

/// A change of a canister makes again the tools of the forms it applies to (before or after),
/// and only theirs; a tool made again on canisters that agree as before on the refs its
/// declaration read is the same tool filled with the new canister part (its hole kept), one
/// whose refs changed is declared again. Each step equals the catalog built from scratch.
#[test]
fn a_canister_changes_only_its_forms_tools() {
    let w = World::new().setup();
    let ids = canister_ids();
    let refs = w
        .state
        .borrow()
        .targets
        .get(&ledger_id())
        .unwrap()
        .refs_json;
    assert!(refs.contains("icrc1_decimals"), "{refs}");
    // Four canisters more: three for both packs, one for `icrc1` alone (five and four
    // canisters: both parts spliced), each with the ledger's refs.
    let register = |id: candid::Principal, label: &str, forms: &[&str]| {
        futures::executor::block_on(registry::register_canister(
            &*w,
            controller(),
            RegisterCanisterArgs {
                id,
                label: Some(label.into()),
                forms: forms.iter().map(|f| f.to_string()).collect(),
                owner: None,
            },
        ))
        .unwrap();
    };
    let set_refs = |id: candid::Principal, refs: &str| {
        let mut s = w.state.borrow_mut();
        let mut t = s.targets.get(&id).unwrap();
        t.refs_json = refs.to_string();
        s.targets.insert(id, t);
        s.target_changed(id);
    };
    for (i, id) in ids[1..].iter().enumerate() {
        let forms: &[&str] = if i < 3 {
            &["icrc1", "icrc2"]
        } else {
            &["icrc1"]
        };
        register(*id, &format!("T{i}"), forms);
        set_refs(*id, &refs);
    }
    let of_form = |b: &catalog::Bus, form: &str| -> Vec<usize> {
        (0..b.decls.len())
            .filter(|i| {
                matches!(&b.decls[*i].source, tool_host_core::bus::ToolSource::Form { form_id } if form_id == form)
            })
            .collect()
    };
    let b0 = bus(&w);
    check_against_scratch(&w, "five canisters");
    let (one, two) = (of_form(&b0, "icrc1"), of_form(&b0, "icrc2"));
    assert!(one.len() > 3 && two.len() > 2, "{one:?} {two:?}");
    assert!(one.iter().chain(&two).all(|i| b0.holed(*i).is_some()));
    let same = |a: &catalog::Bus, b: &catalog::Bus, i: usize| {
        assert_eq!(a.decls[i].name, b.decls[i].name);
        std::rc::Rc::ptr_eq(&a.items[i], &b.items[i])
    };
    let same_hole = |a: &catalog::Bus, b: &catalog::Bus, i: usize| {
        std::rc::Rc::ptr_eq(a.holed(i).unwrap(), b.holed(i).unwrap())
    };
    let kept_whole = |a: &catalog::Bus, b: &catalog::Bus, tools: &[usize]| {
        for &i in tools {
            assert!(same(a, b, i), "{}: kept whole", b.decls[i].name);
        }
    };
    let filled = |a: &catalog::Bus, b: &catalog::Bus, tools: &[usize]| {
        for &i in tools {
            assert!(!same(a, b, i), "{}: made again", b.decls[i].name);
            assert!(same_hole(a, b, i), "{}: filled", b.decls[i].name);
        }
    };

    // Another label for the canister of `icrc1` alone: `icrc2`'s tools stay whole, `icrc1`'s
    // are filled with the new part (their holes and words kept).
    register(ids[4], "RELABELLED", &["icrc1"]);
    set_refs(ids[4], &refs);
    let b1 = bus(&w);
    check_against_scratch(&w, "a label of icrc1's canister");
    kept_whole(&b0, &b1, &two);
    filled(&b0, &b1, &one);
    for &i in &one {
        assert!(std::rc::Rc::ptr_eq(&b0.words[i], &b1.words[i]));
        assert!(b1.items[i].mcp().as_str().contains("RELABELLED"));
    }

    // Its refs changed (other decimals): `icrc1`'s tools that read them are declared again,
    // the others filled; `icrc2`'s still whole.
    set_refs(
        ids[4],
        &refs.replace("icrc1_decimals\":8", "icrc1_decimals\":6"),
    );
    let b2 = bus(&w);
    check_against_scratch(&w, "other decimals on icrc1's canister");
    kept_whole(&b1, &b2, &two);
    let declared: Vec<&str> = one
        .iter()
        .filter(|&&i| !same_hole(&b1, &b2, i))
        .map(|&i| b2.decls[i].name.as_str())
        .collect();
    assert!(
        declared.contains(&"prepare_icrc1_transfer") && declared.len() < one.len(),
        "declared again: {declared:?}"
    );

    // Moved from `icrc1` to `icrc2`, its refs as the others' again: both forms' tools made
    // again.
    register(ids[4], "MOVED", &["icrc2"]);
    set_refs(ids[4], &refs);
    let b3 = bus(&w);
    check_against_scratch(&w, "icrc1's canister moved to icrc2");
    for &i in one.iter().chain(&two) {
        assert!(!same(&b2, &b3, i), "{}: made again", b3.decls[i].name);
    }

    // Removed: `icrc2`'s tools filled again (four canisters, refs agreeing as before),
    // `icrc1`'s kept whole.
    registry::remove_canister(&*w, controller(), ids[4]).unwrap();
    let b4 = bus(&w);
    check_against_scratch(&w, "the moved canister removed");
    kept_whole(&b3, &b4, &one);
    filled(&b3, &b4, &two);
    // Registered anew for `icrc1` (its refs not read at first: the tools that read them
    // declared again, twice, the others filled): `icrc2`'s kept whole.
    register(ids[4], "NEW", &["icrc1"]);
    set_refs(ids[4], &refs);
    let b5 = bus(&w);
    check_against_scratch(&w, "registered anew");
    kept_whole(&b4, &b5, &two);
    for &i in &one {
        assert!(!same(&b4, &b5, i) && b5.items[i].mcp().as_str().contains("(NEW)"));
    }
    let refilled = one.iter().filter(|&&i| same_hole(&b4, &b5, i)).count();
    assert!(
        refilled > 0 && refilled < one.len(),
        "{refilled} of {}",
        one.len()
    );
    // Every target read again: every form tool filled again, none declared again.
    w.state.borrow_mut().targets_changed();
    let b6 = bus(&w);
    check_against_scratch(&w, "every target read again");
    filled(&b5, &b6, &one);
    filled(&b5, &b6, &two);
}
