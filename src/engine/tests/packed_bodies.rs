//! A settled intent's body is packed by the prune task that releases its floor (a day after
//! its stamp): what the owner and the agents read of it is what they read before, across an
//! upgrade, and its removal frees the packed chunks.

mod common;
use common::*;
use tool_host_engine::intent_store::BodySlab;
use tool_host_engine::types::ListIntentsArgs;
use tool_host_engine::views::{get_intent, list_intents};

fn listed(w: &World) -> tool_host_engine::types::IntentPage {
    let args = ListIntentsArgs {
        owner: None,
        start_after: None,
        limit: None,
    };
    list_intents(w, owner(), args).unwrap()
}

fn body_chunks(w: &World, id: u64) -> u32 {
    let r = w
        .state
        .borrow()
        .intents
        .get_head(&id)
        .and_then(|h| h.body());
    BodySlab::<ic_stable_structures::VectorMemory>::chunks(r.expect("a head").len)
}

#[test]
fn a_settled_transfers_body_is_packed_when_its_floor_goes_and_reads_the_same() {
    let w = World::new().setup();
    let (a, d) = w.prepare("1.5");
    assert_eq!(
        w.confirm(owner(), a, &d).unwrap().outcome.as_deref(),
        Some("success")
    );
    let view = get_intent(&*w, owner(), a).unwrap();
    let page = listed(&w);
    let whole = w.intent(a);
    assert_eq!(body_chunks(&w, a), 4, "written plain");
    w.run_for(23, HOUR);
    assert_eq!(body_chunks(&w, a), 4, "kept plain while its floor is kept");
    w.run_for(2, HOUR);
    assert_eq!(body_chunks(&w, a), 1, "packed with its floor's release");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    assert_eq!(w.intent(a), whole);
    assert_eq!(get_intent(&*w, owner(), a).unwrap(), view);
    w.upgrade();
    assert_eq!(
        get_intent(&*w, owner(), a).unwrap(),
        view,
        "read from memory"
    );
    assert_eq!(w.intent(a), whole);
    assert_eq!(listed(&w), page, "listed as before");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    // Its retention passes: removed, its chunk free for the next body.
    let (_, free) = w.state.borrow().intents.body_chunks();
    w.run_for(30 * 24, HOUR);
    assert!(!w.state.borrow().intents.contains_key(&a), "pruned");
    assert_eq!(w.state.borrow().intents.body_chunks().1, free + 1);
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
}

/// An intent whose prune is first scheduled after its floor's time (a 3-day preview: its
/// expiry task schedules it) is packed then; one not settled is never packed, and one that
/// settles after its floor's time (expired by the expiry task) is packed by its prune task, due
/// at once (the next tick).
#[test]
fn a_body_is_packed_whenever_its_floor_goes_and_never_before_it_settles() {
    let w = World::new().setup();
    w.with_limits(|l| l.preview_ttl_seconds = 3 * 86_400);
    let (a, d) = w.prepare("1.5");
    assert_eq!(
        w.confirm(owner(), a, &d).unwrap().outcome.as_deref(),
        Some("success")
    );
    let (b, _) = w.prepare("2");
    w.run_for(71, HOUR);
    assert_eq!((body_chunks(&w, a), body_chunks(&w, b)), (4, 4));
    assert!(!w.intent(b).status.is_final());
    w.run_for(2, HOUR);
    assert!(w.intent(b).status.is_final(), "expired");
    assert_eq!((body_chunks(&w, a), body_chunks(&w, b)), (1, 1));
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
}

/// A message that settles an intent after its floor's time (a confirm of a 3-day preview that
/// expired, before the expiry task ran) releases the floor but packs nothing; it arms the
/// timer for the prune task, due at once, which packs the body in the timer's next message.
#[test]
fn a_message_that_settles_an_intent_packs_nothing_and_the_prune_task_does() {
    let w = World::new().setup();
    w.with_limits(|l| l.preview_ttl_seconds = 3 * 86_400);
    let (a, d) = w.prepare("1.5");
    w.advance(73 * 3_600 * SEC);
    w.woke.borrow_mut().clear();
    let r = w.confirm(owner(), a, &d).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("expired"), "{}", r.content);
    let i = w.intent(a);
    assert_eq!(
        w.state.borrow().stamp_floor(i.owner, i.identity),
        None,
        "released"
    );
    assert_eq!(body_chunks(&w, a), 4, "not packed by the confirm");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    // Settled after its expiry, it has its prune task now (the expiry task will not make
    // one): the checks see it missing.
    {
        let mut s = w.state.borrow_mut();
        let prune = tool_host_engine::model::TaskKind::Prune.byte();
        let key = s
            .due
            .keys()
            .find(|(_, k, id)| *id == a && *k == prune)
            .expect("a prune task");
        s.due.remove(&key);
        let e = s.check_indexes().unwrap_err();
        assert!(e.contains("no prune task"), "{e}");
        s.due.insert(key, ());
    }
    let woke = w.woke.borrow().clone();
    assert!(
        woke.last().is_some_and(|t| *t <= w.now.get()),
        "the confirm asked for a wake-up by now: {woke:?}"
    );
    w.run_timers();
    assert_eq!(body_chunks(&w, a), 1, "packed by the prune task");
    assert!(w.state.borrow().intents.contains_key(&a), "and kept");
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
    assert_eq!(w.ledger.borrow().blocks().len(), 0, "nothing sent");
}
