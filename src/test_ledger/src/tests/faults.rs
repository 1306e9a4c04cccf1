//! The fault queue: validation at inject time and FIFO matching per method.

use crate::faults::{validate, FaultQueue, MAX_PENDING_FAULTS};
use crate::types::{ApproveError, Fault, FaultPlan, InjectedErr, TransferError, TransferFromError};
use ic_stable_structures::VectorMemory;

fn plan(method: &str, fault: Fault) -> FaultPlan {
    FaultPlan {
        method: method.into(),
        fault,
    }
}

fn queue() -> FaultQueue<ic_stable_structures::memory_manager::VirtualMemory<VectorMemory>> {
    FaultQueue::open(&super::memory_manager(VectorMemory::default()))
}

#[test]
fn errors_must_fit_the_method() {
    let t = Fault::Err(InjectedErr::Transfer(TransferError::TemporarilyUnavailable));
    let a = Fault::Err(InjectedErr::Approve(ApproveError::TooOld));
    let f = Fault::Err(InjectedErr::TransferFrom(TransferFromError::TooOld));
    assert!(validate(&plan("icrc1_transfer", t.clone())).is_ok());
    assert!(validate(&plan("icrc2_approve", a.clone())).is_ok());
    assert!(validate(&plan("icrc2_transfer_from", f.clone())).is_ok());
    assert!(validate(&plan("icrc1_transfer", a)).is_err());
    assert!(validate(&plan("icrc2_approve", f)).is_err());
    assert!(validate(&plan("icrc2_transfer_from", t)).is_err());
}

#[test]
fn unknown_methods_are_refused() {
    for m in ["icrc1_balance_of", "transfer", ""] {
        assert!(validate(&plan(m, Fault::Trap("x".into()))).is_err(), "{m}");
    }
    for m in ["icrc1_transfer", "icrc2_approve", "icrc2_transfer_from"] {
        for fault in [
            Fault::Trap("x".into()),
            Fault::Reject("y".into()),
            Fault::LoseReply { hold_ns: 1 },
        ] {
            assert!(validate(&plan(m, fault)).is_ok());
        }
    }
}

#[test]
fn each_call_takes_the_first_fault_of_its_method() {
    let mut q = queue();
    q.inject(vec![
        plan("icrc2_approve", Fault::Reject("a1".into())),
        plan("icrc1_transfer", Fault::Trap("t1".into())),
        plan("icrc1_transfer", Fault::LoseReply { hold_ns: 5 }),
        plan("icrc2_approve", Fault::Reject("a2".into())),
    ])
    .unwrap();
    assert_eq!(q.take("icrc2_transfer_from"), None);
    assert_eq!(q.take("icrc1_transfer"), Some(Fault::Trap("t1".into())));
    assert_eq!(q.take("icrc2_approve"), Some(Fault::Reject("a1".into())));
    assert_eq!(
        q.pending(),
        vec![
            plan("icrc1_transfer", Fault::LoseReply { hold_ns: 5 }),
            plan("icrc2_approve", Fault::Reject("a2".into())),
        ]
    );
    // Later injections queue behind the pending ones.
    q.inject(vec![plan("icrc1_transfer", Fault::Reject("t3".into()))])
        .unwrap();
    assert_eq!(
        q.take("icrc1_transfer"),
        Some(Fault::LoseReply { hold_ns: 5 })
    );
    assert_eq!(q.take("icrc1_transfer"), Some(Fault::Reject("t3".into())));
    assert_eq!(q.take("icrc1_transfer"), None);
}

#[test]
fn inject_is_all_or_nothing_and_clear_empties() {
    let mut q = queue();
    let err = q
        .inject(vec![
            plan("icrc1_transfer", Fault::Trap("ok".into())),
            plan("nope", Fault::Trap("bad".into())),
        ])
        .unwrap_err();
    assert!(err.contains("fault plan 1"), "{err}");
    assert!(q.pending().is_empty());
    q.inject(vec![plan("icrc1_transfer", Fault::Trap("ok".into()))])
        .unwrap();
    q.clear();
    assert!(q.pending().is_empty());
    assert_eq!(q.take("icrc1_transfer"), None);
}

#[test]
fn the_queue_is_bounded() {
    let mut q = queue();
    let many = vec![plan("icrc1_transfer", Fault::Reject("r".into())); MAX_PENDING_FAULTS as usize];
    q.inject(many).unwrap();
    assert!(q
        .inject(vec![plan("icrc1_transfer", Fault::Reject("r".into()))])
        .is_err());
}
