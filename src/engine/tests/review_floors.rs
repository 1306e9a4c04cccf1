//! Review: stamp floors and prunes. A floor (owner, identity) → highest stamp handed out is
//! released (by the intent's prune task a day after its stamp, when it settles later than that,
//! or by `State::remove_intent`) only when the intent's highest stamp is at or above it.

mod common;
use candid::IDLValue;
use common::*;

/// FINDING: an intent re-stamped below its own first stamp (a `CreatedInFuture` cap) leaves
/// that first stamp as its arguments' floor; when the intent is pruned the floor stays (it is
/// above the intent's current stamp), for good. "A floor is removed with the last intent that
/// set it" and the bound "one stamp floor per intent kept" (docs/canister.md, Limits) do not hold.
#[test]
fn a_floor_leaves_with_the_last_intent_that_set_it_after_a_created_in_future_restamp() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    let first = w.intent(id).stamp_ns.unwrap();
    // The ledger's clock is 90 s behind: the first stamp is refused as created in the future.
    w.script(err(
        "CreatedInFuture",
        record(&[("ledger_time", IDLValue::Nat64(first - 90 * SEC))]),
    ));
    assert_eq!(
        w.confirm(owner(), id, &d).unwrap().outcome.as_deref(),
        Some("retry_new")
    );
    let i = w.intent(id);
    assert_eq!(
        i.stamp_ns,
        Some(first - 90 * SEC),
        "capped by the ledger's time"
    );
    assert_eq!(
        w.confirm(owner(), id, &i.digest)
            .unwrap()
            .outcome
            .as_deref(),
        Some("success")
    );
    // Retention (30 days) and the stamp's window pass: the intent is pruned.
    w.run_for(31 * 24, HOUR);
    assert!(!w.state.borrow().intents.contains_key(&id), "pruned");
    let floors: Vec<_> = w
        .state
        .borrow()
        .stamp_floors
        .stored()
        .unwrap()
        .into_iter()
        .collect();
    assert!(
        floors.is_empty(),
        "floors with no intent left: {floors:?} (the intent's first stamp was {first})"
    );
}

/// A shorter retention set after two intents of the same arguments settled: each is removed a
/// day after its stamp (its window), the earlier first, with the indexes agreeing throughout
/// (an earlier finding: the later one, pruned first, took the floor of the earlier one still
/// kept, and `check_indexes` failed; a settled intent may now outlive its floor by design).
#[test]
fn a_shorter_retention_prunes_each_intent_after_its_window_in_order() {
    let w = World::new().setup();
    let (a, _) = w.prepare("1");
    tool_host_engine::send::decline(&*w, owner(), a, None).unwrap();
    // A's expiry runs with the 30-day retention: its task is at its floor's release.
    w.run_for(2, HOUR);
    w.with_limits(|l| l.retention_seconds = 3_600);
    let (b, _) = w.prepare("1");
    assert!(w.intent(b).stamp_ns > w.intent(a).stamp_ns);
    tool_host_engine::send::decline(&*w, owner(), b, None).unwrap();
    // Each goes a day after its stamp (its window; the retention is shorter now): A first,
    // its task moved to its floor's release by the expiry, then B. The indexes agree throughout.
    for _ in 0..27 {
        w.run_for(1, HOUR);
        assert_eq!(w.state.borrow().check_indexes(), Ok(()));
        let s = w.state.borrow();
        assert!(
            s.intents.contains_key(&b) || !s.intents.contains_key(&a),
            "B outlives A"
        );
    }
    assert!(!w.state.borrow().intents.contains_key(&a));
    assert!(!w.state.borrow().intents.contains_key(&b));
    assert!(w.state.borrow().stamp_floors.is_empty());
}

fn floor_of(w: &World, id: u64) -> Option<u64> {
    let i = w.intent(id);
    w.state.borrow().stamp_floor(i.owner, i.identity)
}

/// A floor is kept about a day (its stamp's window at every ledger), not the retention period:
/// the intent stays, its floor goes, and the same arguments prepared again are stamped at the
/// clock, above it, and executed (not taken by the ledger for the first transfer again).
#[test]
fn a_settled_intents_floor_goes_after_its_stamps_window_and_the_intent_stays() {
    let w = World::new().setup();
    let (a, d) = w.prepare("1");
    let first = w.intent(a).stamp_ns.unwrap();
    assert_eq!(
        w.confirm(owner(), a, &d).unwrap().outcome.as_deref(),
        Some("success")
    );
    for _ in 0..23 {
        w.run_for(1, HOUR);
        assert_eq!(floor_of(&w, a), Some(first), "kept inside the window");
        assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    }
    w.run_for(2, HOUR);
    assert_eq!(floor_of(&w, a), None, "released once the window passed");
    assert!(w.intent(a).status.is_final(), "the intent is kept");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    let (b, d) = w.prepare("1");
    assert_ne!(a, b);
    let second = w.intent(b).stamp_ns.unwrap();
    assert!(second > first + tool_host_engine::send::FLOOR_KEEP_NS);
    assert_eq!(
        w.confirm(owner(), b, &d).unwrap().outcome.as_deref(),
        Some("success")
    );
    assert_eq!(
        w.ledger.borrow().blocks().len(),
        2,
        "two transfers, each once"
    );
    // The retention period ends: the intent goes (its task was moved to then).
    w.run_for(30 * 24, HOUR);
    assert!(!w.state.borrow().intents.contains_key(&a), "pruned");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
}

/// An earlier intent's release leaves a floor a later stamp of the same arguments raised: it
/// goes with the later one, a window after that stamp.
#[test]
fn a_floor_a_later_stamp_raised_outlives_the_earlier_intents_release() {
    let w = World::new().setup();
    let (a, d) = w.prepare("1");
    assert_eq!(
        w.confirm(owner(), a, &d).unwrap().outcome.as_deref(),
        Some("success")
    );
    w.run_for(12, HOUR);
    let (b, _) = w.prepare("1");
    let later = w.intent(b).stamp_ns.unwrap();
    tool_host_engine::send::decline(&*w, owner(), b, None).unwrap();
    w.run_for(14, HOUR);
    assert_eq!(
        floor_of(&w, a),
        Some(later),
        "a's window passed, b's did not"
    );
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    w.run_for(12, HOUR);
    assert_eq!(floor_of(&w, b), None, "b's window passed");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
}

/// An intent that settles after its floor's time (here a 3-day preview that expires) releases
/// the floor as it settles, and is kept for its retention period.
#[test]
fn an_intent_settled_after_its_floors_time_releases_it_as_it_settles() {
    let w = World::new().setup();
    w.with_limits(|l| l.preview_ttl_seconds = 3 * 86_400);
    let (a, _) = w.prepare("1");
    let stamp = w.intent(a).stamp_ns.unwrap();
    w.run_for(71, HOUR);
    assert_eq!(floor_of(&w, a), Some(stamp), "not settled: kept");
    w.run_for(2, HOUR);
    assert!(w.intent(a).status.is_final(), "expired");
    assert_eq!(floor_of(&w, a), None, "released as it settled");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    w.run_for(29 * 24, HOUR);
    assert!(w.state.borrow().intents.contains_key(&a), "kept");
    w.run_for(2 * 24, HOUR);
    assert!(!w.state.borrow().intents.contains_key(&a), "pruned");
}

/// Floors written by layout 7 (in the B-tree, memory 12) hold across the upgrade into layout 8:
/// read from there, raised there by a later prepare of the same arguments (whose stamp is above
/// them), released from there; floors of new arguments go to the table; none is in both.
#[test]
fn floors_left_in_the_b_tree_by_layout_7_hold_across_the_upgrade() {
    let w = World::new().setup();
    let (a, _) = w.prepare("1");
    tool_host_engine::send::decline(&*w, owner(), a, None).unwrap();
    let (b, _) = w.prepare("2");
    {
        // As layout 7 left them: every floor in the B-tree, the table's memory never written,
        // the config saying layout 7.
        let mut s = w.state.borrow_mut();
        let floors = s.stamp_floors.stored().unwrap();
        assert_eq!(floors.len(), 2);
        for ((o, identity), stamp) in floors {
            s.stamp_floors.tree_mut().insert((o, identity), stamp);
        }
        s.update_config(|c| c.layout = 7);
    }
    {
        use ic_stable_structures::memory_manager::MemoryManager;
        use ic_stable_structures::Memory;
        let mm = MemoryManager::init(w.memory.clone());
        let m = mm.get(tool_host_engine::memory::STAMP_FLOOR_TABLE);
        m.write(0, &vec![0; m.size() as usize * 65_536]);
    }
    w.upgrade();
    assert_eq!(
        w.state.borrow().config.get().layout,
        8,
        "recorded at the upgrade"
    );
    assert_eq!(w.state.borrow().stamp_floors.split(), (0, 2));
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    assert_eq!(floor_of(&w, a), w.intent(a).stamp_ns);
    // The same arguments again: stamped above the floor kept in the B-tree, raised there.
    let (c, _) = w.prepare("1");
    assert!(w.intent(c).stamp_ns > w.intent(a).stamp_ns);
    assert_eq!(floor_of(&w, c), w.intent(c).stamp_ns);
    let (d, _) = w.prepare("3");
    assert_eq!(floor_of(&w, d), w.intent(d).stamp_ns);
    assert_eq!(w.state.borrow().stamp_floors.split(), (1, 2));
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    for id in [b, c, d] {
        tool_host_engine::send::decline(&*w, owner(), id, None).unwrap();
    }
    // Retention (30 days) and the stamps' window pass: every intent pruned, every floor gone,
    // from both places.
    w.run_for(31 * 24, HOUR);
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    assert!(!w.state.borrow().intents.contains_key(&c));
    assert_eq!(w.state.borrow().stamp_floors.split(), (0, 0));
}

/// The intents' checks read the floor table: a floor planted in the table and the B-tree (no
/// write makes one) is refused by `check_indexes`.
#[test]
fn the_checks_refuse_a_floor_in_both_places() {
    let w = World::new().setup();
    let (a, _) = w.prepare("1");
    let i = w.intent(a);
    let stamp = i.stamp_ns.unwrap();
    assert_eq!(w.state.borrow().stamp_floors.split(), (1, 0));
    w.state
        .borrow_mut()
        .stamp_floors
        .tree_mut()
        .insert((i.owner, i.identity), stamp);
    let e = w.state.borrow().check_indexes().unwrap_err();
    assert!(
        e.contains("in the table") && e.contains("in the B-tree"),
        "{e}"
    );
    // Taken out again, for the scenario's own checks at its end.
    w.state
        .borrow_mut()
        .stamp_floors
        .tree_mut()
        .remove(&(i.owner, i.identity));
}
