//! Deduplication: the 24 h + 60 s window, its edges, and what makes two calls identical.

use super::*;
use crate::dedup::{PERMITTED_DRIFT_NS, TX_WINDOW_NS};

fn stamped(created_at_time: u64) -> TransferArg {
    TransferArg {
        memo: Some(ByteBuf::from(b"intent-1".to_vec())),
        created_at_time: Some(created_at_time),
        ..transfer_arg(Account::of(bob()), 10)
    }
}

#[test]
fn an_identical_call_is_a_duplicate_of_the_first_block() {
    let mut l = ledger();
    let first = l.transfer(alice(), &stamped(T0), T0).unwrap();
    let before = balance(&l, alice());
    assert_eq!(
        l.transfer(alice(), &stamped(T0), T0 + 5_000_000_000),
        Err(TxError::Duplicate {
            duplicate_of: first
        })
    );
    assert_eq!(balance(&l, alice()), before);
    assert_eq!(l.log_length(), first + 1);
}

#[test]
fn any_difference_makes_a_new_transaction() {
    let mut l = ledger();
    let first = l.transfer(alice(), &stamped(T0), T0).unwrap();
    let variants = [
        TransferArg {
            memo: Some(ByteBuf::from(b"intent-2".to_vec())),
            ..stamped(T0)
        },
        TransferArg {
            memo: None,
            ..stamped(T0)
        },
        stamped(T0 + 1),
        TransferArg {
            amount: nat(11),
            ..stamped(T0)
        },
        TransferArg {
            fee: Some(nat(FEE)),
            ..stamped(T0)
        },
        TransferArg {
            to: Account::of(carol()),
            ..stamped(T0)
        },
        TransferArg {
            from_subaccount: sub(1),
            ..stamped(T0)
        },
    ];
    // The subaccount variant has no funds: it must fail on funds, not on dedup.
    for (i, v) in variants.iter().enumerate() {
        match l.transfer(alice(), v, T0) {
            Ok(index) => assert!(index > first, "variant {i}"),
            Err(TxError::InsufficientFunds { .. }) => assert_eq!(i, 6),
            Err(e) => panic!("variant {i}: {e:?}"),
        }
    }
    // Another caller with the same arguments is a different payload too.
    assert!(l.transfer(bob(), &stamped(T0), T0).is_ok());
}

#[test]
fn without_created_at_time_there_is_no_deduplication() {
    let mut l = ledger();
    let arg = transfer_arg(Account::of(bob()), 10);
    let a = l.transfer(alice(), &arg, T0).unwrap();
    let b = l.transfer(alice(), &arg, T0).unwrap();
    assert_ne!(a, b);
    assert_eq!(l.dedup_len(), 0);
}

#[test]
fn too_old_edge() {
    let mut l = ledger();
    let edge = T0 - TX_WINDOW_NS - PERMITTED_DRIFT_NS;
    assert_eq!(
        l.transfer(alice(), &stamped(edge - 1), T0),
        Err(TxError::TooOld)
    );
    assert!(l.transfer(alice(), &stamped(edge), T0).is_ok());
}

#[test]
fn created_in_future_edge() {
    let mut l = ledger();
    let edge = T0 + PERMITTED_DRIFT_NS;
    assert_eq!(
        l.transfer(alice(), &stamped(edge + 1), T0),
        Err(TxError::CreatedInFuture { ledger_time: T0 })
    );
    assert!(l.transfer(alice(), &stamped(edge), T0).is_ok());
}

#[test]
fn duplicate_until_the_window_closes_then_too_old() {
    let mut l = ledger();
    let first = l.transfer(alice(), &stamped(T0), T0).unwrap();
    let last_moment = T0 + TX_WINDOW_NS + PERMITTED_DRIFT_NS;
    assert_eq!(
        l.transfer(alice(), &stamped(T0), last_moment),
        Err(TxError::Duplicate {
            duplicate_of: first
        })
    );
    assert_eq!(
        l.transfer(alice(), &stamped(T0), last_moment + 1),
        Err(TxError::TooOld)
    );
}

#[test]
fn stale_entries_are_pruned() {
    let mut l = ledger();
    l.transfer(alice(), &stamped(T0), T0).unwrap();
    l.transfer(alice(), &stamped(T0 + 1), T0).unwrap();
    assert_eq!(l.dedup_len(), 2);
    let later = T0 + TX_WINDOW_NS + PERMITTED_DRIFT_NS + 1;
    // Any committed transaction prunes what left the window.
    l.transfer(alice(), &stamped(later), later).unwrap();
    assert_eq!(l.dedup_len(), 2);
    let much_later = later + 2;
    l.transfer(alice(), &transfer_arg(Account::of(bob()), 1), much_later)
        .unwrap();
    assert_eq!(l.dedup_len(), 1);
}

#[test]
fn approve_and_transfer_from_deduplicate_too() {
    let mut l = ledger();
    let approve = ApproveArgs {
        created_at_time: Some(T0),
        ..approve_arg(Account::of(carol()), 100)
    };
    let a = l.approve(alice(), &approve, T0).unwrap();
    assert_eq!(
        l.approve(alice(), &approve, T0),
        Err(TxError::Duplicate { duplicate_of: a })
    );
    // expires_at is part of the call: a different one is a new approval.
    let other = ApproveArgs {
        expires_at: Some(T0 + 1_000),
        ..approve.clone()
    };
    assert!(l.approve(alice(), &other, T0).is_ok());

    let spend = TransferFromArgs {
        created_at_time: Some(T0),
        ..transfer_from_arg(Account::of(alice()), Account::of(carol()), 10)
    };
    let s = l.transfer_from(carol(), &spend, T0).unwrap();
    assert_eq!(
        l.transfer_from(carol(), &spend, T0),
        Err(TxError::Duplicate { duplicate_of: s })
    );
    assert_eq!(
        l.transfer_from(
            carol(),
            &TransferFromArgs {
                created_at_time: Some(T0 + PERMITTED_DRIFT_NS + 1),
                ..spend.clone()
            },
            T0
        ),
        Err(TxError::CreatedInFuture { ledger_time: T0 })
    );
}

/// `null` and 32 zero bytes name one account but two transactions (the ICRC-1 conformance
/// suite's `icrc1:tx_deduplication` checks it; DFINITY's ledgers agree): both execute, credit
/// the same balance, and the second block writes the zero subaccount.
#[test]
fn a_default_subaccount_given_is_not_a_duplicate_of_null() {
    let mut l = ledger();
    let bob0 = balance(&l, bob());
    let first = l.transfer(alice(), &stamped(T0), T0).unwrap();
    let explicit = TransferArg {
        to: Account {
            owner: bob(),
            subaccount: Some(ByteBuf::from(vec![0; 32])),
        },
        ..stamped(T0)
    };
    let second = l.transfer(alice(), &explicit, T0).unwrap();
    assert_eq!(second, first + 1);
    assert_eq!(balance(&l, bob()), bob0 + nat(20));
    // From the caller's side too: `from_subaccount = opt (32 zero bytes)`.
    let from_zero = TransferArg {
        from_subaccount: Some(ByteBuf::from(vec![0; 32])),
        ..stamped(T0)
    };
    assert_eq!(l.transfer(alice(), &from_zero, T0).unwrap(), second + 1);
    assert_eq!(
        l.transfer(alice(), &explicit, T0),
        Err(TxError::Duplicate {
            duplicate_of: second
        })
    );
}
