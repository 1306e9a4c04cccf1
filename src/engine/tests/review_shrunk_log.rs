//! A ledger whose log is shorter than the length journaled before a send (reinstalled, rolled
//! back, or misreporting) cannot show the send absent: reconciliation does not settle the
//! intent as not executed (its owner could then send it again), it keeps it held.

mod common;
use common::*;
use tool_host_engine::model::Status;

const SEC: u64 = 1_000_000_000;

#[test]
fn a_log_shorter_than_before_the_send_never_settles_absent() {
    let w = World::new().setup();
    {
        let mut l = w.ledger.borrow_mut();
        for _ in 0..5 {
            l.chain.mint((stranger(), [7; 32]), 1, 0);
        }
    }
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    assert_eq!(w.intent(id).attempts[0].log_length, Some(5));
    // The ledger now answers a log of 2 blocks: the send's block (at 5) is not in it.
    w.ledger.borrow_mut().chain.blocks.truncate(2);
    for _ in 0..5 {
        w.advance(60 * SEC);
        w.run_timers();
        let i = w.intent(id);
        assert!(
            !i.status.is_final(),
            "settled on a shorter log: {:?}",
            i.finding
        );
    }
    let i = w.intent(id);
    assert!(
        matches!(i.status, Status::Unknown | Status::Reconcile),
        "{:?}",
        i.status
    );
    let finding = i.finding.unwrap_or_default();
    assert!(finding.contains("below 5"), "{finding}");
}

/// Found by the third review: a scan's cursor kept across a new send of the same bytes, read on
/// the log before it shrank (reinstalled or rolled back), passed over the block the new send
/// made there: `not_executed` while the transfer is on the ledger. The new send's journaled
/// length now brings the cursor back.
#[test]
fn a_cursor_from_the_old_log_skips_the_resend_on_a_shrunk_log() {
    let w = World::new().setup();
    {
        let mut l = w.ledger.borrow_mut();
        for _ in 0..10 {
            l.chain.mint((stranger(), [7; 32]), 1, 0);
        }
    }
    let (id, d) = w.prepare("1");
    // First send: not executed, outcome unknown (journaled log length 10).
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    assert_eq!(w.intent(id).attempts[0].log_length, Some(10));
    // Others' blocks after it; the ledger answers 2 blocks a page, so one run (20 calls) reads
    // 40 of them and keeps its cursor.
    {
        let mut l = w.ledger.borrow_mut();
        for _ in 0..100 {
            l.chain.mint((stranger(), [7; 32]), 1, 0);
        }
        l.chain.page_limit = 2;
    }
    w.advance(11 * SEC);
    w.run_timers();
    let i = w.intent(id);
    let cursor = i.scan.as_ref().map(|s| s.cursor).unwrap_or(0);
    assert!(
        cursor >= 40,
        "the scan kept its cursor: {cursor} {:?}",
        i.finding
    );
    assert!(!i.status.is_final());

    // The ledger is reinstalled / rolled back: its log is 3 blocks, its dedup state gone.
    {
        let mut l = w.ledger.borrow_mut();
        l.chain.blocks.truncate(3);
        l.chain.seen.clear();
        l.chain.page_limit = 1_000;
    }
    // The owner confirms the unknown intent again (allowed for `unknown`): it executes at block
    // 3, and its reply is lost.
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    assert_eq!(w.intent(id).attempts[1].log_length, Some(3));
    assert_eq!(
        w.ledger.borrow().blocks().len(),
        4,
        "the resend executed at block 3"
    );

    for _ in 0..5 {
        w.advance(60 * SEC);
        w.run_timers();
    }
    let i = w.intent(id);
    assert!(
        i.outcome.as_deref() != Some("not_executed"),
        "settled not_executed while block 3 is its transfer: {:?} / {:?}",
        i.outcome,
        i.finding
    );
}
