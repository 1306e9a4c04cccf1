//! Review: smaller findings (a lease shorter than a run, refusals that spend a rate limit, an
//! answer's text that names the wrong outcome).

mod common;
use candid::IDLValue;
use common::*;
use serde_json::json;
use tool_host_engine::model::Status;

/// FINDING (low): a reconciliation of a target not known to list ICRC-3 makes one call more
/// than its lease covers (the standards read, then up to MAX_CALLS block reads), so with
/// `call_timeout_seconds` above 60 a run whose calls each take their deadline is still running
/// when its lease falls due, and a second tick takes the same task: two scans of one intent at
/// once ("a second tick never takes it twice", docs/canister.md).
#[test]
fn a_reconcile_task_is_never_taken_by_a_second_tick_while_its_run_is_within_its_calls() {
    let w = World::new();
    w.ledger.borrow_mut().icrc3 = false;
    let w = w.setup();
    w.with_limits(|l| l.call_timeout_seconds = 300);
    w.ledger.borrow_mut().chain.page_limit = 3;
    let (id, d) = w.prepare("1");
    {
        let mut l = w.ledger.borrow_mut();
        for _ in 0..200 {
            l.chain.mint((stranger(), [7; 32]), 1, T0);
        }
    }
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    assert_eq!(w.intent(id).status, Status::Unknown);
    // The ledger lists ICRC-3 now; the target is not known to.
    w.ledger.borrow_mut().icrc3 = true;
    w.advance(10 * SEC);
    w.calls.borrow_mut().clear();
    {
        let mut y = w.yield_after.borrow_mut();
        y.insert("icrc1_supported_standards".into());
        y.insert("icrc3_get_blocks".into());
    }
    let mut tick = Box::pin(tool_host_engine::schedule::tick(&*w));
    assert!(poll_once(tick.as_mut()).is_pending());
    let lease_at = w.intent(id).reconcile_at.unwrap();
    // Every call of the run takes its full deadline (a slow, not a silent, target).
    let mut second_taken = false;
    for _ in 0..30 {
        w.advance(300 * SEC);
        if w.now.get() >= lease_at && !second_taken {
            w.run_timers();
            second_taken = true;
        }
        if poll_once(tick.as_mut()).is_ready() {
            break;
        }
    }
    w.yield_after.borrow_mut().clear();
    let runs = w.sends("icrc1_supported_standards");
    let calls_per_run = 1 + tool_host_engine::reconcile::MAX_CALLS as u64;
    assert_eq!(
        runs,
        1,
        "reconciliation runs started for one task: a run makes up to {calls_per_run} calls of 300 s; its lease is {} s",
        tool_host_engine::reconcile::lease_ns(300) / SEC
    );
}

/// FINDING (low): read tool calls refused before any call is made (an input that does not
/// read) spend the owner's reads of the minute: "every refusal changes nothing", and the limit
/// is on "read tool calls, each an inter-canister call".
#[test]
fn a_refused_read_spends_none_of_the_owners_reads() {
    let w = World::new().setup();
    let max = 5;
    w.with_limits(|l| l.max_reads_per_owner_per_minute = max);
    for _ in 0..max {
        let e = w
            .tool(
                owner(),
                "icrc1_balance_of",
                json!({ "canister_id": ledger_id().to_text(), "account": "not an account" }),
                None,
            )
            .unwrap_err();
        assert_eq!(e.code, "INVALID_INPUT");
    }
    assert_eq!(w.sends("icrc1_balance_of"), 0, "no call was made");
    let r = w.tool(
        owner(),
        "icrc1_balance_of",
        json!({ "canister_id": ledger_id().to_text(), "account": receiver().to_text() }),
        None,
    );
    assert!(r.is_ok(), "{r:?}");
}

/// FINDING (cosmetic): when a re-stamp fails, confirm's text still names `retry_new` while the
/// outcome (and the intent) say `fail`.
#[test]
fn a_failed_restamp_is_answered_with_its_outcome_in_the_text() {
    let w = World::new().setup();
    let (a, da) = w.prepare("1");
    w.confirm(owner(), a, &da).unwrap();
    let stamp_a = w.intent(a).stamp_ns.unwrap();
    w.advance(100 * SEC);
    let (b, db) = w.prepare("1");
    w.script(err(
        "CreatedInFuture",
        record(&[("ledger_time", IDLValue::Nat64(stamp_a - 50 * SEC))]),
    ));
    let r = w.confirm(owner(), b, &db).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("fail"));
    assert!(!r.content.contains("retry_new"), "{}", r.content);
}
