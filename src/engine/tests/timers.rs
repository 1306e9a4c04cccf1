//! The timer's tasks: reconcile unknown outcomes (found, absent, unreadable), expire previews,
//! prune settled intents, refresh refs; all re-armed from stable state.

mod common;
use common::*;
use tool_host_engine::model::Status;

#[test]
fn reconcile_finds_the_original_and_settles_done() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    assert_eq!(w.intent(id).status, Status::Unknown);
    assert!(
        w.woke.borrow().contains(&(T0 + 10 * SEC)),
        "a reconcile wake-up after the delay"
    );
    w.advance(10 * SEC);
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done);
    assert_eq!(i.outcome.as_deref(), Some("success"));
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 0"));
    assert_eq!(
        w.sends("icrc1_transfer"),
        1,
        "reconciling reads, never sends"
    );
}

#[test]
fn reconcile_reports_absent_and_settles() {
    let w = World::new().setup();
    let (other, od) = w.prepare("5");
    w.confirm(owner(), other, &od).unwrap();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(4));
    w.confirm(owner(), id, &d).unwrap();
    w.advance(10 * SEC);
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Settled);
    assert_eq!(i.outcome.as_deref(), Some("not_executed"));
    assert_eq!(
        i.finding.as_deref(),
        Some("reconciled: absent from blocks 1 to 1")
    );
}

/// Scenario 4: a block with the intent's memo, stamp, amount and recipient, made by someone else
/// with the intent's very argument bytes (only its source account differs), is not the original.
#[test]
fn a_decoy_block_with_the_same_memo_stamp_and_amount_is_not_the_original() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    let arg = w.intent(id).arg.clone();
    {
        let mut l = w.ledger.borrow_mut();
        let attacker = (
            stranger(),
            tool_host_core::funds::deposit_subaccount(&owner()),
        );
        l.chain.credit(attacker, 10 * 100_000_000);
        let decoy = l.chain.execute(stranger(), "icrc1_transfer", &arg, T0);
        assert!(decoy.block.is_some(), "the decoy executed");
    }
    w.advance(10 * SEC);
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(
        i.outcome.as_deref(),
        Some("not_executed"),
        "{:?}",
        i.finding
    );
    assert_eq!(
        i.finding.as_deref(),
        Some("reconciled: absent from blocks 0 to 1")
    );
}

#[test]
fn reconcile_retries_when_the_target_cannot_be_read() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    w.ledger.borrow_mut().blocks_down = true;
    w.advance(10 * SEC);
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Unknown);
    assert!(i.finding.unwrap().starts_with("reconciliation continues"));
    w.ledger.borrow_mut().blocks_down = false;
    w.advance(20 * SEC);
    w.run_timers();
    assert_eq!(w.intent(id).status, Status::Done);
}

#[test]
fn reconcile_is_unreadable_without_icrc3() {
    let w = World::new();
    w.ledger.borrow_mut().icrc3 = false;
    let w = w.setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    w.advance(10 * SEC);
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Unknown);
    assert!(i.finding.unwrap().starts_with("unreadable"));
}

#[test]
fn previews_never_confirmed_expire() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.advance(3_600 * SEC + 1);
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Settled);
    assert_eq!(i.outcome.as_deref(), Some("expired"));
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("expired"));
    assert_eq!(w.sends("icrc1_transfer"), 0);
}

#[test]
fn settled_intents_are_pruned_after_the_retention_period() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.confirm(owner(), id, &d).unwrap();
    w.advance(30 * 86_400 * SEC - SEC);
    w.run_timers();
    assert!(w.state.borrow().intents.get(&id).is_some());
    w.advance(2 * SEC);
    w.run_timers();
    let s = w.state.borrow();
    assert!(s.intents.get(&id).is_none());
    assert!(s.owner_intents.is_empty());
}

#[test]
fn refs_are_refreshed_on_the_timer() {
    let w = World::new().setup();
    w.calls.borrow_mut().clear();
    w.advance(6 * 3_600 * SEC);
    w.run_timers();
    assert!(w.sends("icrc1_decimals") >= 1, "refs read again");
    let next = w.state.borrow().config.get().refresh_at.unwrap();
    assert_eq!(next, w.now.get() + 6 * 3_600 * SEC);
}

#[test]
fn timers_are_re_armed_after_an_upgrade() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    w.woke.borrow_mut().clear();
    w.upgrade();
    assert_eq!(
        w.woke.borrow().first().copied(),
        Some(T0 + 10 * SEC),
        "armed at the earliest due task"
    );
    w.advance(10 * SEC);
    w.run_timers();
    assert_eq!(w.intent(id).status, Status::Done);
}

#[test]
fn a_longer_retention_set_after_settling_is_waited_for() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.confirm(owner(), id, &d).unwrap();
    let l = tool_host_engine::types::Limits {
        retention_seconds: 60 * 86_400,
        ..w.state.borrow().limits()
    };
    tool_host_engine::registry::set_limits(&*w, controller(), l).unwrap();
    w.advance(31 * 86_400 * SEC);
    w.run_timers();
    assert!(
        w.state.borrow().intents.get(&id).is_some(),
        "kept: 60 days now"
    );
    w.advance(30 * 86_400 * SEC);
    w.run_timers();
    assert!(
        w.state.borrow().intents.get(&id).is_none(),
        "pruned after 60 days"
    );
}

#[test]
fn an_intent_settled_after_its_preview_expired_is_pruned_too() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    // Executes, but the reply is lost: unknown, reconciled on the timer after the expiry.
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    w.advance(2 * 3_600 * SEC);
    w.run_timers();
    let settled_at = {
        let s = w.state.borrow();
        let i = s.intents.get(&id).expect("kept");
        assert!(i.status.is_final(), "reconciled: {:?}", i.status);
        i.settled_at.expect("settled")
    };
    assert!(settled_at >= w.state.borrow().intents.get(&id).unwrap().expires_at);
    w.advance(30 * 86_400 * SEC);
    w.run_timers();
    assert!(w.state.borrow().intents.get(&id).is_none());
}

#[test]
fn a_new_task_arms_the_timer_only_when_it_is_earlier() {
    let w = World::new().setup();
    w.woke.borrow_mut().clear();
    let (_, _) = w.prepare("1");
    let expiry = w.now.get() + 3_600 * SEC;
    assert_eq!(
        *w.woke.borrow(),
        vec![expiry],
        "the expiry is before the refs refresh"
    );
    w.prepare("2");
    assert_eq!(
        w.woke.borrow().len(),
        1,
        "a later task leaves the wake-up as it is"
    );
}

/// A preview's expiry is kept in an index of its own (written by a prepare, not the task index
/// that holds every settled intent's prune); an expiry that earlier code wrote to the task index
/// still runs from there, and a re-stamp removes the old expiry wherever it is.
#[test]
fn expiries_run_from_their_own_index_and_from_the_task_index_earlier_code_used() {
    use tool_host_engine::model::TaskKind;
    let w = World::new().setup();
    let (id, _) = w.prepare("1");
    let at = w.intent(id).expires_at;
    {
        let s = w.state.borrow();
        assert!(s.has_expiry(at, id));
        assert!(
            !s.due.contains_key(&TaskKind::Expire.key(at, id)),
            "not in the task index"
        );
        assert!(s.next_due().is_some_and(|t| t <= at), "the timer sees it");
    }
    // As earlier code left it: the expiry in the task index only.
    let (old, _) = w.prepare("2");
    let old_at = w.intent(old).expires_at;
    {
        let mut s = w.state.borrow_mut();
        s.remove_expiry(old_at, old);
        s.schedule(old_at, TaskKind::Expire, old);
        assert!(s.has_expiry(old_at, old));
    }
    w.advance(3_601 * SEC);
    w.run_timers();
    for i in [id, old] {
        assert_eq!(
            w.intent(i).outcome.as_deref(),
            Some("expired"),
            "intent {i}"
        );
    }
    let s = w.state.borrow();
    assert!(!s.has_expiry(at, id) && !s.has_expiry(old_at, old));
    assert!(s.due_expiries(u64::MAX, 10).is_empty());
}

/// A fresh state does not open the expiry index; the first preview does, and an upgrade opens
/// it again from its memory.
#[test]
fn the_expiry_index_is_opened_by_the_first_preview() {
    use ic_stable_structures::Memory;
    let w = World::new().setup();
    let size = || {
        let mm = ic_stable_structures::memory_manager::MemoryManager::init(w.memory.clone());
        mm.get(tool_host_engine::memory::EXPIRIES).size()
    };
    assert_eq!(size(), 0);
    let (id, _) = w.prepare("1");
    assert!(size() > 0);
    let at = w.intent(id).expires_at;
    w.upgrade();
    assert!(w.state.borrow().has_expiry(at, id));
}

/// A re-stamp (the target asked for a new stamp: `retry_new`) moves the preview's expiry: the
/// old one is removed from whichever index holds it (the task index, for an intent prepared by
/// earlier code), the new one is in the expiry index, and the intent expires at the new time.
#[test]
fn a_re_stamp_moves_the_expiry_out_of_either_index() {
    use tool_host_engine::model::TaskKind;
    for earlier_code in [false, true] {
        let w = World::new().setup();
        let (id, d) = w.prepare("1");
        let old_at = w.intent(id).expires_at;
        if earlier_code {
            let mut s = w.state.borrow_mut();
            s.remove_expiry(old_at, id);
            s.schedule(old_at, TaskKind::Expire, id);
        }
        w.advance(5 * SEC);
        w.script(err("TooOld", candid::types::value::IDLValue::Null));
        let r = w.confirm(owner(), id, &d).unwrap();
        assert_eq!(r.outcome.as_deref(), Some("retry_new"));
        let new_at = w.intent(id).expires_at;
        assert!(new_at > old_at);
        {
            let s = w.state.borrow();
            assert!(!s.has_expiry(old_at, id), "earlier code: {earlier_code}");
            assert!(s.has_expiry(new_at, id));
            assert!(!s.due.contains_key(&TaskKind::Expire.key(new_at, id)));
        }
        w.advance(new_at - old_at - 1);
        w.run_timers();
        assert_eq!(w.intent(id).status, Status::Open, "not before its new time");
        w.advance(3_601 * SEC);
        w.run_timers();
        assert_eq!(w.intent(id).outcome.as_deref(), Some("expired"));
    }
}

/// A preview confirmed after its expiry (before the timer took the expiry) settles as expired
/// and its prune is scheduled then; the expiry task that runs later must not schedule a second
/// one (with the retention changed meanwhile it would be at another time, and outlive the
/// intent: `check_indexes` refuses a prune that names a missing intent).
#[test]
fn an_expiry_after_a_late_confirm_schedules_no_second_prune() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.advance(3_600 * SEC + 1);
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("expired"));
    let mut l = w.state.borrow().limits();
    l.retention_seconds /= 2;
    tool_host_engine::registry::set_limits(&*w, controller(), l).unwrap();
    w.run_timers();
    let prunes = |w: &World| {
        let s = w.state.borrow();
        let n = s.due.keys().filter(|(_, k, i)| *k == 3 && *i == id).count();
        n
    };
    assert_eq!(prunes(&w), 1, "one prune task");
    w.state.borrow().check_indexes().unwrap();
    w.advance(30 * 86_400 * SEC);
    w.run_timers();
    assert!(w.state.borrow().intents.get(&id).is_none(), "pruned");
    assert_eq!(prunes(&w), 0, "nothing left behind");
    w.state.borrow().check_indexes().unwrap();
}

/// A tick takes at most a batch of expiries and a batch of tasks: a preview settled after its
/// expiry can have its prune run while its expiry waits behind a batch of others. The prune
/// takes the expiry with the intent (`check_indexes` refuses an expiry naming a missing one).
#[test]
fn a_prune_that_runs_before_its_intents_expiry_takes_the_expiry_too() {
    let w = World::new().setup();
    let mut l = w.state.borrow().limits();
    l.max_open_intents_per_owner = 100;
    tool_host_engine::registry::set_limits(&*w, controller(), l).unwrap();
    for k in 0..=tool_host_engine::schedule::BATCH {
        w.prepare(&format!("{}", k + 1));
    }
    let (id, d) = w.prepare("999");
    w.advance(3_600 * SEC + 1);
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("expired"));
    w.advance(60 * 86_400 * SEC);
    futures::executor::block_on(tool_host_engine::schedule::tick(&*w));
    assert!(
        w.state.borrow().intents.get(&id).is_none(),
        "pruned in the first tick"
    );
    w.state.borrow().check_indexes().unwrap();
    w.run_timers();
    w.state.borrow().check_indexes().unwrap();
}
