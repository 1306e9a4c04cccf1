//! Exactly once: every way the last review found to send one transfer twice or to report an
//! executed transfer as never sent, one test each (issue 8's scenarios, numbered as there).
//! Each failed on the code before the fix; the randomized model test (`model.rs`) looks for
//! the ones nobody has thought of yet.

mod common;
use candid::IDLValue;
use common::*;
use serde_json::json;
use std::rc::Rc;
use tool_host_engine::model::Status;

fn outcome(r: &tool_host_engine::types::ToolResult) -> String {
    r.outcome.clone().unwrap_or_default()
}

/// Polls a future until it finishes (each poll lets one yield pass).
fn finish<F: std::future::Future + ?Sized>(mut f: std::pin::Pin<Box<F>>) -> F::Output {
    for _ in 0..100 {
        if let std::task::Poll::Ready(v) = poll_once(f.as_mut()) {
            return v;
        }
    }
    panic!("the future does not finish");
}

type Send<'a> = std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = tool_host_engine::types::ApiResult<tool_host_engine::types::ToolResult>,
            > + 'a,
    >,
>;

fn confirm_future<'a>(w: &'a Rc<World>, id: u64, d: &[u8]) -> Send<'a> {
    Box::pin(tool_host_engine::send::confirm(
        &**w,
        owner(),
        tool_host_engine::types::ConfirmArgs {
            intent_id: id,
            digest: serde_bytes::ByteBuf::from(d.to_vec()),
        },
    ))
}

/// Other users' transfers: `n` mint blocks to someone else.
fn noise(w: &World, n: usize) {
    let mut l = w.ledger.borrow_mut();
    for _ in 0..n {
        l.chain.mint((stranger(), [7; 32]), 1, T0);
    }
}

// 1. The reconcile range starts at the smallest log length journaled for the current bytes.

#[test]
fn s01_a_second_lost_attempt_does_not_move_the_reconcile_start_past_the_first() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    // Attempt 1 executes at block 0; its reply is lost.
    w.script(Script::ExecuteThenLose);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    // Attempt 2: the ledger deduplicates (no new block), and that reply is lost too. Its
    // journaled log length is 1, past the original.
    w.script(Script::ExecuteThenLose);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    assert_eq!(w.ledger.borrow().blocks().len(), 1);
    assert_eq!(w.intent(id).attempts[1].log_length, Some(1));
    w.run_for(5, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 0"));
    // Reported done, not absent: nobody is told to send it again.
    assert_eq!(w.sends("icrc1_transfer"), 2);
}

#[test]
fn s01_re_confirming_after_24_hours_too_old_still_scans_from_the_first_attempt() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    noise(&w, 3);
    // A day later the owner confirms again: the same bytes are too old now (held), journaled
    // at log length 4.
    w.advance(25 * 3_600 * SEC);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "reconcile");
    assert_eq!(w.intent(id).attempts[1].log_length, Some(4));
    w.run_for(5, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 0"));
}

// 2. A scan's result applies only if no send was made since it began.

#[test]
fn s02_a_stale_absent_never_settles_an_intent_sent_again_meanwhile() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    // Not executed, and the reply lost: unknown.
    w.script(Script::Reject(6));
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    w.advance(10 * SEC);
    // The scan reads the log (nothing there) and its answer waits...
    w.yield_after.borrow_mut().insert("icrc3_get_blocks".into());
    let mut tick = Box::pin(tool_host_engine::schedule::tick(&*w));
    assert!(poll_once(tick.as_mut()).is_pending());
    w.yield_after.borrow_mut().clear();
    // ...while the owner confirms again: that send executes and its reply is lost.
    w.script(Script::ExecuteThenLose);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    assert_eq!(w.ledger.borrow().blocks().len(), 1);
    // The old "absent" arrives: dropped.
    finish(tick);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Unknown, "{:?}", i.finding);
    w.run_for(5, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 0"));
}

// 3. Archives that answer short pages: the scan advances only past blocks returned.

#[test]
fn s03_an_archive_short_answer_is_not_counted_as_read() {
    let w = World::new().setup();
    noise(&w, 30);
    let (id, d) = w.prepare("1");
    // Other users' transfers land between the journal read (30) and the send: the original
    // is block 45.
    let w2 = w.clone();
    *w.during_call.borrow_mut() = Some(Box::new(move |_| noise(&w2, 15)));
    w.script(Script::ExecuteThenLose);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    *w.during_call.borrow_mut() = None;
    noise(&w, 20);
    {
        // The ledger archives its first 50 blocks; the archive answers 10 per call.
        let mut l = w.ledger.borrow_mut();
        l.chain.archived_below = 50;
        l.chain.archive_page_limit = 10;
    }
    w.run_for(5, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 45"));
}

// 4. A decoy: the whole transaction is compared, not memo, stamp and amount.

#[test]
fn s04_a_decoy_with_the_intents_own_argument_bytes_from_another_account_is_not_the_original() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    let arg = w.intent(id).arg.clone();
    {
        // Anyone who read the intent (its memo, stamp, amount and recipient) sends its very
        // bytes from an account of their own.
        let mut l = w.ledger.borrow_mut();
        let attacker = (
            stranger(),
            tool_host_core::funds::deposit_subaccount(&owner()),
        );
        l.chain.credit(attacker, 10 * 100_000_000);
        assert!(l
            .chain
            .execute(stranger(), "icrc1_transfer", &arg, T0)
            .block
            .is_some());
    }
    w.run_for(2, MINUTE);
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
fn s04_a_block_that_reads_as_the_intents_but_differs_holds_it_instead_of_guessing() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    // The ledger writes the block with another amount (a reading we do not share).
    w.ledger.borrow_mut().chain.blocks[0].amount += 1;
    w.run_for(2, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Reconcile);
    assert!(i.held_for_good);
    assert!(
        i.finding
            .as_deref()
            .unwrap()
            .contains("amount 100000001 where the intent has 100000000"),
        "{:?}",
        i.finding
    );
    assert_eq!(w.confirm(owner(), id, &d).unwrap_err().code, "HELD");
}

// 5. A busy ledger: the scan continues from a cursor kept in stable memory.

#[test]
fn s05_a_gap_of_thousands_of_blocks_on_a_ledger_that_answers_100_per_call_settles() {
    let w = World::new().setup();
    w.ledger.borrow_mut().chain.page_limit = 100;
    let (id, d) = w.prepare("1");
    let w2 = w.clone();
    *w.during_call.borrow_mut() = Some(Box::new(move |_| noise(&w2, 2_500)));
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    *w.during_call.borrow_mut() = None;
    noise(&w, 1_000);
    w.run_for(10, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(
        i.finding.as_deref(),
        Some("reconciled: found in block 2500")
    );
}

#[test]
fn s05_absent_is_reported_once_the_range_up_to_the_first_read_after_the_send_is_read() {
    let w = World::new().setup();
    w.ledger.borrow_mut().chain.page_limit = 100;
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    // The ledger keeps growing faster than one run reads; the range ends at the first read.
    let w2 = w.clone();
    for _ in 0..10 {
        noise(&w2, 3_000);
        w.advance(60 * SEC);
        w.run_timers();
    }
    let i = w.intent(id);
    assert_eq!(
        i.outcome.as_deref(),
        Some("not_executed"),
        "{:?}",
        i.finding
    );
}

// 6. A transient failure never downgrades what a target supports.

#[test]
fn s06_a_failed_standards_read_during_a_refresh_keeps_icrc3_and_reconciliation_goes_on() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    w.standards_down.set(true);
    futures::executor::block_on(tool_host_engine::registry::refresh_refs(
        &*w,
        controller(),
        None,
    ))
    .unwrap();
    assert!(w.state.borrow().targets.get(&ledger_id()).unwrap().icrc3);
    w.run_for(2, MINUTE);
    let i = w.intent(id);
    assert_eq!(
        i.outcome.as_deref(),
        Some("not_executed"),
        "{:?}",
        i.finding
    );
}

#[test]
fn s06_unreadable_is_retried_until_a_definite_answer() {
    let w = World::new();
    w.ledger.borrow_mut().icrc3 = false;
    let w = w.setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    w.run_for(30, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Unknown);
    assert!(
        i.finding.as_deref().unwrap().starts_with("unreadable"),
        "{:?}",
        i.finding
    );
    // The target starts listing ICRC-3: the next retry reads it and finds the original.
    w.ledger.borrow_mut().icrc3 = true;
    w.run_for(120, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
}

// 7. A tick's batch survives an upgrade or a trap at any await.

fn two_unknown(w: &Rc<World>) -> (u64, u64) {
    let (a, da) = w.prepare("1");
    let (b, db) = w.prepare("2");
    w.script(Script::Reject(6));
    w.confirm(owner(), a, &da).unwrap();
    w.script(Script::Reject(6));
    w.confirm(owner(), b, &db).unwrap();
    w.advance(10 * SEC);
    (a, b)
}

#[test]
fn s07_an_upgrade_during_a_tick_loses_none_of_its_tasks() {
    let w = World::new().setup();
    let (a, b) = two_unknown(&w);
    w.yield_after.borrow_mut().insert("icrc3_get_blocks".into());
    let mut tick = Box::pin(tool_host_engine::schedule::tick(&*w));
    assert!(poll_once(tick.as_mut()).is_pending());
    drop(tick);
    w.yield_after.borrow_mut().clear();
    w.upgrade();
    let lease = tool_host_engine::reconcile::lease_ns(60);
    w.advance(lease);
    w.run_timers();
    for id in [a, b] {
        let i = w.intent(id);
        assert_eq!(
            i.outcome.as_deref(),
            Some("not_executed"),
            "intent {id}: {:?}",
            i.finding
        );
    }
}

#[test]
fn s07_a_trap_during_a_tick_loses_none_of_its_tasks() {
    let w = World::new().setup();
    let (a, b) = two_unknown(&w);
    w.yield_after.borrow_mut().insert("icrc3_get_blocks".into());
    let mut tick = Box::pin(tool_host_engine::schedule::tick(&*w));
    assert!(poll_once(tick.as_mut()).is_pending());
    // The callback traps: the tick never resumes (the heap keeps what it had).
    drop(tick);
    w.yield_after.borrow_mut().clear();
    // The other task is still due now; the leased one after its lease.
    w.run_timers();
    assert_eq!(w.intent(b).outcome.as_deref(), Some("not_executed"));
    w.advance(tool_host_engine::reconcile::lease_ns(60));
    w.run_timers();
    assert_eq!(w.intent(a).outcome.as_deref(), Some("not_executed"));
}

// 8. A reconcile task that fires during a re-send is not lost.

fn reconcile_during_a_resend(answer: Script) {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    w.advance(10 * SEC);
    w.yield_calls.set(true);
    w.script(answer);
    let mut send = confirm_future(&w, id, &d);
    assert!(poll_once(send.as_mut()).is_pending());
    // The reconcile task fires while the re-send is in flight.
    w.run_timers();
    assert_eq!(w.intent(id).status, Status::InFlight);
    let r = finish(send).unwrap();
    assert!(
        matches!(outcome(&r).as_str(), "retry_same" | "not_executed"),
        "{r:?}"
    );
    w.yield_calls.set(false);
    assert_eq!(w.intent(id).status, Status::Unknown);
    w.run_for(3, MINUTE);
    let i = w.intent(id);
    assert_eq!(
        i.outcome.as_deref(),
        Some("not_executed"),
        "{:?}",
        i.finding
    );
    assert!(i
        .finding
        .as_deref()
        .unwrap()
        .starts_with("reconciled: absent"));
}

#[test]
fn s08_a_reconcile_consumed_during_a_resend_that_answers_retry_same_is_scheduled_again() {
    reconcile_during_a_resend(err("TemporarilyUnavailable", IDLValue::Null));
}

#[test]
fn s08_a_reconcile_consumed_during_a_resend_that_answers_not_executed_is_scheduled_again() {
    reconcile_during_a_resend(Script::Reject(2));
}

// 9. Every open intent has its expiry.

#[test]
fn s09_a_send_in_flight_across_its_previews_expiry_that_was_not_executed_expires() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.advance(3_590 * SEC);
    w.yield_calls.set(true);
    w.script(Script::Reject(2));
    let mut send = confirm_future(&w, id, &d);
    assert!(poll_once(send.as_mut()).is_pending());
    // The expiry passes while the send is in flight.
    w.advance(20 * SEC);
    w.run_timers();
    let r = finish(send).unwrap();
    assert_eq!(outcome(&r), "expired", "{r:?}");
    let i = w.intent(id);
    assert_eq!(i.status, Status::Settled);
    assert_eq!(
        w.state.borrow().open_count(&owner()),
        0,
        "its open slot is free"
    );
}

#[test]
fn s09_an_intent_a_decline_leaves_open_still_expires() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(2));
    assert_eq!(
        outcome(&w.confirm(owner(), id, &d).unwrap()),
        "not_executed"
    );
    let r = tool_host_engine::send::decline(&*w, owner(), id, None).unwrap();
    assert_eq!(structured(&r)["status"], json!("open"));
    let expires = w.intent(id).expires_at;
    assert!(w.state.borrow().has_expiry(expires, id));
    w.advance(3_601 * SEC);
    w.run_timers();
    assert_eq!(w.intent(id).outcome.as_deref(), Some("expired"));
}

// 10. A trap after the send's await: the watchdog.

#[test]
fn s10_a_trap_in_the_sends_callback_is_caught_by_the_watchdog_and_reconciled() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    // The ledger executes; our callback then traps (the send never resumes).
    w.yield_after.borrow_mut().insert("icrc1_transfer".into());
    let mut send = confirm_future(&w, id, &d);
    assert!(poll_once(send.as_mut()).is_pending());
    drop(send);
    w.yield_after.borrow_mut().clear();
    assert_eq!(w.intent(id).status, Status::InFlight);
    assert_eq!(w.ledger.borrow().blocks().len(), 1);
    w.advance(tool_host_engine::send::watchdog_delay(60));
    w.run_timers();
    assert_eq!(w.intent(id).status, Status::Unknown);
    w.run_for(2, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(w.ledger.borrow().blocks().len(), 1, "sent once");
}

#[test]
fn s10_a_trap_in_the_journal_reads_callback_sent_nothing() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.yield_after.borrow_mut().insert("icrc3_get_blocks".into());
    let mut send = confirm_future(&w, id, &d);
    assert!(poll_once(send.as_mut()).is_pending());
    drop(send);
    w.yield_after.borrow_mut().clear();
    w.advance(tool_host_engine::send::watchdog_delay(60));
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(
        i.outcome.as_deref(),
        Some("not_executed"),
        "{:?}",
        i.attempts
    );
    assert_eq!(w.sends("icrc1_transfer"), 0);
}

// 11. Stamps are never handed out again for the same arguments.

#[test]
fn s11_a_stamp_declined_before_any_send_is_never_handed_out_again() {
    let w = World::new().setup();
    let (a, _) = w.prepare("1");
    tool_host_engine::send::decline(&*w, owner(), a, None).unwrap();
    // The clock has not moved.
    let (b, _) = w.prepare("1");
    let (ia, ib) = (w.intent(a), w.intent(b));
    assert_ne!(a, b);
    assert!(
        ib.stamp_ns > ia.stamp_ns,
        "{:?} {:?}",
        ib.stamp_ns,
        ia.stamp_ns
    );
    assert_ne!(ib.memo, ia.memo);
    assert_ne!(ib.digest, ia.digest);
    // The second prepare wrote its stamp over the floor, found the first stamp there (at or
    // above its own), put it back and stamped above it: the floor is the second stamp, and
    // the floor before it the first.
    assert_eq!(ib.prior_floor, ia.stamp_ns);
    let floor = w.state.borrow().stamp_floor(owner(), ib.identity);
    assert_eq!(floor, ib.stamp_ns);
    // A third in the same instant finds a floor above the clock: put back, stamped above.
    tool_host_engine::send::decline(&*w, owner(), b, None).unwrap();
    let (c, _) = w.prepare("1");
    let ic = w.intent(c);
    assert_eq!(ic.prior_floor, ib.stamp_ns);
    assert_eq!(ic.stamp_ns, ib.stamp_ns.map(|s| s + 1));
    assert_eq!(
        w.state.borrow().stamp_floor(owner(), ic.identity),
        ic.stamp_ns
    );
    let ib = ic;
    // A fourth, the clock moved: stamped at the clock over the third's floor.
    tool_host_engine::send::decline(&*w, owner(), c, None).unwrap();
    w.advance(SEC);
    let (c, _) = w.prepare("1");
    let ic = w.intent(c);
    assert_eq!(ic.prior_floor, ib.stamp_ns);
    assert!(ic.stamp_ns > ib.stamp_ns);
    assert_eq!(
        w.state.borrow().stamp_floor(owner(), ic.identity),
        ic.stamp_ns
    );
}

#[test]
fn s11_a_stamp_once_sent_is_never_handed_out_again() {
    let w = World::new().setup();
    let (a, da) = w.prepare("1");
    assert_eq!(outcome(&w.confirm(owner(), a, &da).unwrap()), "success");
    // The owner asks for the same transfer again, in the same instant.
    let (b, db) = w.prepare("1");
    assert!(w.intent(b).stamp_ns > w.intent(a).stamp_ns);
    assert_eq!(
        outcome(&w.confirm(owner(), b, &db).unwrap()),
        "success",
        "a transfer this intent never made is not answered already_done"
    );
    assert_eq!(w.ledger.borrow().blocks().len(), 2);
}

#[test]
fn s11_a_created_in_future_cap_never_lands_on_an_earlier_sent_stamp() {
    let w = World::new().setup();
    let (a, da) = w.prepare("1");
    assert_eq!(outcome(&w.confirm(owner(), a, &da).unwrap()), "success");
    let stamp_a = w.intent(a).stamp_ns.unwrap();
    w.advance(10 * SEC);
    let (b, db) = w.prepare("1");
    // The ledger's clock is behind ours: it answers with its time, A's very stamp.
    w.script(err(
        "CreatedInFuture",
        record(&[("ledger_time", IDLValue::Nat64(stamp_a))]),
    ));
    assert_eq!(outcome(&w.confirm(owner(), b, &db).unwrap()), "retry_new");
    let ib = w.intent(b);
    // Just above A's stamp (the floor of the intents before B): B's own refused stamp, far
    // ahead of the ledger, does not hold the cap back.
    assert_eq!(ib.stamp_ns, Some(stamp_a + 1));
    assert_eq!(
        outcome(&w.confirm(owner(), b, &ib.digest).unwrap()),
        "success"
    );
    assert_eq!(w.ledger.borrow().blocks().len(), 2);
}

#[test]
fn s11_a_cap_that_would_go_to_or_below_the_floor_sends_nothing_and_says_why() {
    let w = World::new().setup();
    let (a, da) = w.prepare("1");
    assert_eq!(outcome(&w.confirm(owner(), a, &da).unwrap()), "success");
    let stamp_a = w.intent(a).stamp_ns.unwrap();
    w.advance(100 * SEC);
    let (b, db) = w.prepare("1");
    w.script(err(
        "CreatedInFuture",
        record(&[("ledger_time", IDLValue::Nat64(stamp_a - 50 * SEC))]),
    ));
    let r = w.confirm(owner(), b, &db).unwrap();
    assert_eq!(outcome(&r), "fail", "{r:?}");
    let i = w.intent(b);
    assert_eq!(i.status, Status::Settled);
    assert!(
        i.finding
            .as_deref()
            .unwrap()
            .contains("not yet past the last stamp"),
        "{:?}",
        i.finding
    );
    assert_eq!(
        w.sends("icrc1_transfer"),
        2,
        "nothing sent after the refusal"
    );
}

// 12. Names are read once per intent and kept for its re-stamps.

fn contacts_world() -> Rc<World> {
    let w = World::new();
    let mut form: serde_json::Value = serde_json::from_str(tool_host_core::packs::ICRC1).unwrap();
    form["names"] = json!({ "contacts": { "method": "list_contacts", "list": "(0)", "name": "name", "value": "account" } });
    form["methods"]["list_contacts"] = json!({ "mode": "query", "args": [], "results": [{ "type": "vec", "inner": { "type": "record", "fields": [
        { "name": "name", "type": "text" }, { "name": "account", "type": "Account" }
    ] } }] });
    let fields = form["types"]["TransferArg"]["fields"]
        .as_array_mut()
        .unwrap();
    let to = fields.iter_mut().find(|f| f["name"] == "to").unwrap();
    to["named"] = json!("contacts");
    tool_host_engine::registry::register_form(
        &*w,
        controller(),
        tool_host_engine::types::RegisterFormArgs {
            id: "icrc1".into(),
            json: form.to_string(),
        },
    )
    .unwrap();
    futures::executor::block_on(tool_host_engine::registry::register_canister(
        &*w,
        controller(),
        tool_host_engine::types::RegisterCanisterArgs {
            id: ledger_id(),
            label: Some("TKA".into()),
            forms: vec!["icrc1".into()],
            // Its name set's method is not a read the engine knows: read on a canister
            // registered for a single owner only.
            owner: Some(owner()),
        },
    ))
    .unwrap();
    let deposit = (
        host_id(),
        tool_host_core::funds::deposit_subaccount(&owner()),
    );
    w.ledger
        .borrow_mut()
        .chain
        .credit(deposit, 1_000 * 100_000_000);
    w.contacts.borrow_mut().push(("bob".into(), receiver()));
    w
}

#[test]
fn s12_a_name_input_reads_again_after_too_old_with_the_names_it_was_prepared_with() {
    let w = contacts_world();
    let r = w
        .tool(
            owner(),
            "prepare_icrc1_transfer",
            json!({ "canister_id": ledger_id().to_text(), "to": "bob", "amount": "1" }),
            None,
        )
        .unwrap();
    let v = structured(&r);
    let id: u64 = v["intent_id"].as_str().unwrap().parse().unwrap();
    let d = hex::decode(v["digest"].as_str().unwrap()).unwrap();
    // The name set is gone by the time of the re-stamp: the intent keeps what it read.
    w.contacts.borrow_mut().clear();
    w.script(err("TooOld", IDLValue::Null));
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(outcome(&r), "retry_new", "{r:?}");
    let i = w.intent(id);
    assert_eq!(i.status, Status::Open);
    assert_eq!(i.generation, 1);
    assert!(i.preview_json.contains("bob"), "{}", i.preview_json);
    assert_eq!(
        outcome(&w.confirm(owner(), id, &i.digest).unwrap()),
        "success"
    );
    let to = w.ledger.borrow().blocks()[0].to;
    assert_eq!(to, Some((receiver(), [0; 32])));
}

// 13. The reference's words.

#[test]
fn s13_preparing_again_an_intent_held_for_reconciliation_answers_unknown() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    w.script(err("TooOld", IDLValue::Null));
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "reconcile");
    let again = w
        .tool(agent(), "prepare_icrc1_transfer", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "1" }), Some(owner()))
        .unwrap();
    assert_eq!(again.outcome.as_deref(), Some("unknown"));
    assert_eq!(structured(&again)["status"], json!("reconcile"));
}

#[test]
fn s13_declining_after_retry_new_says_a_later_confirm_sends_the_new_stamps_bytes() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(err("TooOld", IDLValue::Null));
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "retry_new");
    let r = tool_host_engine::send::decline(&*w, owner(), id, None).unwrap();
    assert!(
        r.content.contains("the bytes of its current preview"),
        "{}",
        r.content
    );
    assert!(!r.content.contains("the same bytes"), "{}", r.content);
}
