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
