//! Review: upgrading from the released version (everything in CHANGELOG's "Unreleased" is new).
//! The released version wrote version 1 records (intents, config, targets) and had none of the
//! structures added since: stamp floors (memory 12), the uses index (13), owner totals (14).
//! `post_upgrade` reads the old records but builds none of those indexes from them, so every
//! guard that reads an index does not see the intents that were there before the upgrade.

mod common;
use candid::IDLValue;
use common::*;
use ic_stable_structures::memory_manager::MemoryManager;
use ic_stable_structures::storable::Bound;
use ic_stable_structures::{Memory, StableBTreeMap, StableCell, Storable};
use std::borrow::Cow;
use std::rc::Rc;
use tool_host_engine::memory;
use tool_host_engine::model::{v1, ConfigV1, Intent, LimitsV1, OldLayout, Status, TargetV1};

/// Raw record bytes in a cell, to write a version 1 config as the released version did.
struct Raw(Vec<u8>);
impl Storable for Raw {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.0)
    }
    fn into_bytes(self) -> Vec<u8> {
        self.0
    }
    fn from_bytes(bytes: Cow<[u8]>) -> Self {
        Raw(bytes.into_owned())
    }
    const BOUND: Bound = Bound::Unbounded;
}

fn to_v1(i: &Intent) -> v1::Intent {
    v1::Intent {
        id: i.id,
        owner: i.owner,
        preparer: i.preparer,
        canister: i.canister,
        form_id: i.form_id.clone(),
        tool: i.tool.clone(),
        method: i.method.clone(),
        input_json: i.input_json.clone(),
        identity: i.identity,
        arg: i.arg.clone(),
        digest: i.digest,
        stamp_ns: i.stamp_ns,
        memo: i.memo.clone(),
        // As the released version wrote it: whole.
        preview_json: i.preview_text(),
        summary: i.summary.clone(),
        status: i.status,
        outcome: i.outcome.clone(),
        finding: i.finding.clone(),
        reply_json: i.reply_json.clone(),
        created_at: i.created_at,
        updated_at: i.updated_at,
        expires_at: i.expires_at,
        settled_at: i.settled_at,
        attempts: i
            .attempts
            .iter()
            .map(|a| v1::Attempt {
                at: a.at,
                digest: a.digest,
                result: a.result.clone(),
            })
            .collect(),
        generation: i.generation,
        retry_same: i.retry_same,
        rejects_4_5: i.rejects_4_5,
        had_unknown: i.had_unknown,
        log_length: i.attempts.last().and_then(|a| a.log_length),
        confirm_requested_at: i.confirm_requested_at,
        reconcile_tries: i.reconcile_tries,
        before_send: i.before_send,
    }
}

/// Rewrites the world's stable memory as the released version left it: version 1 intents,
/// config and targets, and no stamp floors, uses index or owner totals (those memories did not
/// exist). Then upgrades to this version.
fn as_released_then_upgrade(w: &World) {
    let intents: Vec<Intent> = w.state.borrow().intents.iter().map(|(_, i)| i).collect();
    let config = w.state.borrow().config.get().clone();
    let targets: Vec<_> = w
        .state
        .borrow()
        .targets
        .iter()
        .map(|e| e.into_pair())
        .collect();
    assert!(w.state.borrow().in_flight.is_empty());
    let open_counts = w.state.borrow().open_counts.stored().unwrap();
    {
        let mm = MemoryManager::init(w.memory.clone());
        let mut raw: StableBTreeMap<u64, Vec<u8>, _> =
            StableBTreeMap::init(mm.get(memory::INTENTS));
        for i in &intents {
            raw.insert(i.id, OldLayout::encode(&to_v1(i)));
        }
        // The released version had no body slab and no head table: their memories as a fresh
        // bucket leaves them.
        // Nor write-back slots or owner count tables: its open counts were all in their map. Nor
        // the stamp floor table: version 1 had no floors (built from its intents at the upgrade).
        for m in [
            memory::INTENT_BODIES,
            memory::HEAD_DIRECTORY,
            memory::HEAD_PAGES,
            memory::WRITE_BACK,
            memory::OWNER_TOTALS_TABLE,
            memory::OPEN_COUNTS_TABLE,
            memory::STAMP_FLOOR_TABLE,
        ] {
            let m = mm.get(m);
            m.write(0, &vec![0; m.size() as usize * 65_536]);
        }
        let l = config.limits.clone();
        let old = ConfigV1 {
            next_intent_id: config.next_intent_id,
            limits: LimitsV1 {
                max_open_intents_per_owner: l.max_open_intents_per_owner,
                max_agents_per_owner: l.max_agents_per_owner,
                max_forms: l.max_forms,
                max_canisters: l.max_canisters,
                max_form_bytes: l.max_form_bytes,
                max_input_bytes: l.max_input_bytes,
                preview_ttl_seconds: l.preview_ttl_seconds,
                retention_seconds: l.retention_seconds,
                reconcile_delay_seconds: l.reconcile_delay_seconds,
                refs_refresh_seconds: l.refs_refresh_seconds,
                call_timeout_seconds: l.call_timeout_seconds,
            },
            catalog_revision: config.catalog_revision,
            refresh_at: config.refresh_at,
        };
        let mut cell = StableCell::init(mm.get(memory::CONFIG), Raw(vec![]));
        cell.set(Raw(OldLayout::encode(&old)));
        let mut raw_targets: StableBTreeMap<candid::Principal, Vec<u8>, _> =
            StableBTreeMap::init(mm.get(memory::TARGETS));
        for (id, t) in &targets {
            let old = TargetV1 {
                label: t.label.clone(),
                forms: t.forms.clone(),
                refs_json: t.refs_json.clone(),
                refs_updated_at: t.refs_updated_at,
                refs_error: t.refs_error.clone(),
                icrc3: t.icrc3,
                registered_at: t.registered_at,
            };
            raw_targets.insert(*id, OldLayout::encode(&old));
        }
        // Structures the released version did not have.
        StableBTreeMap::<(candid::Principal, [u8; 32]), u64, _>::init(mm.get(memory::STAMP_FLOORS))
            .clear_new();
        StableBTreeMap::<tool_host_engine::state::UseEntry, (), _>::init(mm.get(memory::OPEN_USES))
            .clear_new();
        StableBTreeMap::<candid::Principal, u32, _>::init(mm.get(memory::OWNER_TOTALS)).clear_new();
        let mut raw_open: StableBTreeMap<candid::Principal, u32, _> =
            StableBTreeMap::init(mm.get(memory::OPEN_COUNTS));
        raw_open.clear_new();
        for (owner, n) in &open_counts {
            raw_open.insert(*owner, *n);
        }
    }
    *w.state.borrow_mut() = tool_host_engine::state::State::init(w.memory.clone());
    assert_eq!(
        w.intent(intents[0].id).status,
        intents[0].status,
        "read as version 1"
    );
    w.upgrade();
}

/// Before the upgrade: a transfer of 1 that executed (done) and an open transfer of 2.
fn released_world() -> (Rc<World>, u64, u64) {
    let w = World::new().setup();
    let (a, da) = w.prepare("1");
    assert_eq!(
        w.confirm(owner(), a, &da).unwrap().outcome.as_deref(),
        Some("success")
    );
    let (c, _) = w.prepare("2");
    as_released_then_upgrade(&w);
    (w, a, c)
}

/// FINDING: after the upgrade the indexes disagree with the intents (no floor for the stamps
/// handed out before, no uses, no owner totals).
#[test]
fn after_an_upgrade_from_the_released_version_the_indexes_agree_with_the_intents() {
    let (w, _, _) = released_world();
    let r = w.state.borrow().check_indexes();
    let kept = w.state.borrow().kept_count(&owner());
    assert_eq!(r, Ok(()));
    assert_eq!(kept, 2, "the owner keeps two intents");
}

/// FINDING: an intent open across the upgrade is not in the uses index: its canister can be
/// removed (and its form replaced) under it.
#[test]
fn a_canister_used_by_an_intent_open_across_the_upgrade_cannot_be_removed() {
    let (w, _, c) = released_world();
    assert_eq!(w.intent(c).status, Status::Open);
    let r = tool_host_engine::registry::remove_canister(&*w, controller(), ledger_id());
    assert_eq!(r.map_err(|e| e.code), Err("IN_USE".to_string()));
}

/// FINDING: no floor for a stamp handed out before the upgrade, so a `CreatedInFuture` re-stamp
/// of a later intent of the same arguments may land on it: the later intent then carries the
/// earlier one's very bytes, the ledger answers `Duplicate`, and it is reported done although
/// it never executed (one transfer for two confirmed intents).
#[test]
fn a_stamp_handed_out_before_the_upgrade_is_never_handed_out_again() {
    let (w, a, _) = released_world();
    let stamp_a = w.intent(a).stamp_ns.unwrap();
    w.advance(10 * SEC);
    let (b, db) = w.prepare("1");
    // The ledger's clock is behind ours (as in s11): its time is A's very stamp.
    w.script(err(
        "CreatedInFuture",
        record(&[("ledger_time", IDLValue::Nat64(stamp_a))]),
    ));
    let r = w.confirm(owner(), b, &db).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("retry_new"));
    let ib = w.intent(b);
    let same = ib.stamp_ns == Some(stamp_a);
    let r = w.confirm(owner(), b, &ib.digest).unwrap();
    let blocks = w.ledger.borrow().blocks().len();
    assert!(
        !same,
        "intent {b} was re-stamped onto intent {a}'s stamp {stamp_a}; its confirm answered {:?} with {blocks} block(s) on the ledger",
        r.outcome
    );
    assert_eq!(blocks, 2);
}

/// The released version let a canister drop a form that open intents used (its
/// `register_canister` had no guard). After the upgrade such an intent is in the uses index
/// with a tool no canister offers: that must not make every registration change `IN_USE`
/// (a held intent never settles, so the freeze would be for good); a change that would break
/// a use that still works is refused as before, and the form the intent uses stays.
#[test]
fn an_intent_the_released_version_orphaned_does_not_freeze_registrations() {
    let w = World::new().setup();
    let (c, _) = w.prepare("2");
    // What the released version allowed: the canister re-registered without `icrc1`.
    {
        let mut s = w.state.borrow_mut();
        let mut t = s.targets.get(&ledger_id()).unwrap();
        t.forms = vec!["icrc2".into()];
        s.targets.insert(ledger_id(), t);
        s.bump_catalog();
    }
    as_released_then_upgrade(&w);
    assert_eq!(w.intent(c).status, Status::Open);
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    let other = candid::Principal::from_slice(&[7; 10]);
    let r = futures::executor::block_on(tool_host_engine::registry::register_canister(
        &*w,
        controller(),
        tool_host_engine::types::RegisterCanisterArgs {
            id: other,
            label: Some("TKB".into()),
            forms: vec!["icrc2".into()],
            owner: None,
        },
    ));
    assert!(r.is_ok(), "an unrelated registration: {r:?}");
    // The intent's own form is still guarded.
    let r = tool_host_engine::registry::register_form(
        &*w,
        controller(),
        tool_host_engine::types::RegisterFormArgs {
            id: "icrc1".into(),
            json: tool_host_core::packs::ICRC1.into(),
        },
    );
    assert_eq!(r.map(|_| ()).map_err(|e| e.code), Err("IN_USE".to_string()));
    // A use that still works is still protected: with an approve prepared, swapping the
    // ledger's icrc2 for icrc1 is refused, naming it.
    let (id, _) = {
        let r = w
            .tool(
                agent(),
                "prepare_icrc2_approve",
                serde_json::json!({ "canister_id": ledger_id().to_text(), "spender": receiver().to_text(), "amount": "1" }),
                Some(owner()),
            )
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&r.structured).unwrap();
        (v["intent_id"].as_str().unwrap().to_string(), ())
    };
    let r = futures::executor::block_on(tool_host_engine::registry::register_canister(
        &*w,
        controller(),
        tool_host_engine::types::RegisterCanisterArgs {
            id: ledger_id(),
            label: Some("TKA".into()),
            forms: vec!["icrc1".into()],
            owner: None,
        },
    ));
    let e = r.unwrap_err();
    assert_eq!(e.code, "IN_USE");
    assert!(e.message.contains(&id), "{}", e.message);
}

/// A version-1 intent waiting for reconciliation has its task in the task index and no
/// `reconcile_at` (version 1 had none): the indexes agree across the upgrade, and the task runs
/// and settles it as before.
#[test]
fn an_unknown_intent_of_the_released_version_keeps_its_reconciliation() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    assert_eq!(w.intent(id).status, Status::Unknown);
    as_released_then_upgrade(&w);
    assert_eq!(w.intent(id).reconcile_at, None, "version 1 had none");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    w.advance(3_600 * SEC);
    w.run_timers();
    assert_eq!(w.intent(id).status, Status::Done, "reconciled: found");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
}
