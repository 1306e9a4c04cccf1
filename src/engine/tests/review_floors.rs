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
        .iter()
        .map(|e| e.into_pair())
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
