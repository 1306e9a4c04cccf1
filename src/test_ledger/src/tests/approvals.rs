//! ICRC-2: approve, allowance, expiry and transfer_from.

use super::*;
use crate::errors::code;
use crate::types::{AllowanceArgs, Value};

fn allowance_of(l: &TestLedger, from: Account, spender: Account, now: u64) -> (Nat, Option<u64>) {
    let a = l.allowance(
        &AllowanceArgs {
            account: from,
            spender,
        },
        now,
    );
    (a.allowance, a.expires_at)
}

#[test]
fn approve_sets_the_allowance_and_charges_the_approver() {
    let mut l = ledger();
    let arg = ApproveArgs {
        expires_at: Some(T0 + 100),
        memo: Some(ByteBuf::from(b"m".to_vec())),
        ..approve_arg(Account::of(carol()), 5_000)
    };
    let index = l.approve(alice(), &arg, T0).unwrap();
    // The approver needs only the fee, not the approved amount.
    assert_eq!(balance(&l, alice()), nat(1_000 - FEE));
    assert_eq!(l.total_supply(), nat(1_500 - FEE));
    assert_eq!(
        allowance_of(&l, Account::of(alice()), Account::of(carol()), T0),
        (nat(5_000), Some(T0 + 100))
    );
    let block = l.block(index).unwrap();
    assert_eq!(block.get("btype"), Some(&Value::text("2approve")));
    assert_eq!(block.get("fee"), Some(&Value::nat(FEE)));
    let tx = block.get("tx").unwrap();
    assert_eq!(tx.get("from"), Some(&acct(alice()).to_value()));
    assert_eq!(tx.get("spender"), Some(&acct(carol()).to_value()));
    assert_eq!(tx.get("amt"), Some(&Value::nat(5_000u64)));
    assert_eq!(tx.get("expires_at"), Some(&Value::nat(T0 + 100)));
    assert_eq!(tx.get("expected_allowance"), None);
}

#[test]
fn an_expired_allowance_reads_as_zero() {
    let mut l = ledger();
    let arg = ApproveArgs {
        expires_at: Some(T0 + 100),
        ..approve_arg(Account::of(carol()), 5_000)
    };
    l.approve(alice(), &arg, T0).unwrap();
    let read = |now| allowance_of(&l, Account::of(alice()), Account::of(carol()), now);
    assert_eq!(read(T0 + 99), (nat(5_000), Some(T0 + 100)));
    assert_eq!(read(T0 + 100), (nat(0), None));
}

#[test]
fn expires_at_in_the_past_is_expired() {
    let mut l = ledger();
    for expires_at in [T0 - 1, T0] {
        let arg = ApproveArgs {
            expires_at: Some(expires_at),
            ..approve_arg(Account::of(carol()), 1)
        };
        assert_eq!(
            l.approve(alice(), &arg, T0),
            Err(TxError::Expired { ledger_time: T0 })
        );
    }
}

#[test]
fn expected_allowance_must_match() {
    let mut l = ledger();
    l.approve(alice(), &approve_arg(Account::of(carol()), 300), T0)
        .unwrap();
    let arg = ApproveArgs {
        expected_allowance: Some(nat(200)),
        ..approve_arg(Account::of(carol()), 0)
    };
    assert_eq!(
        l.approve(alice(), &arg, T0),
        Err(TxError::AllowanceChanged {
            current_allowance: nat(300)
        })
    );
    let arg = ApproveArgs {
        expected_allowance: Some(nat(300)),
        ..arg
    };
    let index = l.approve(alice(), &arg, T0).unwrap();
    assert_eq!(
        l.block(index)
            .unwrap()
            .get("tx")
            .unwrap()
            .get("expected_allowance"),
        Some(&Value::nat(300u64))
    );
    // Approving 0 removes the allowance.
    assert_eq!(
        allowance_of(&l, Account::of(alice()), Account::of(carol()), T0),
        (nat(0), None)
    );
}

#[test]
fn expected_allowance_of_an_expired_approval_is_zero() {
    let mut l = ledger();
    let arg = ApproveArgs {
        expires_at: Some(T0 + 10),
        ..approve_arg(Account::of(carol()), 300)
    };
    l.approve(alice(), &arg, T0).unwrap();
    let arg = ApproveArgs {
        expected_allowance: Some(nat(0)),
        ..approve_arg(Account::of(carol()), 50)
    };
    assert!(l.approve(alice(), &arg, T0 + 10).is_ok());
}

#[test]
fn approve_errors() {
    let mut l = ledger();
    let bad_fee = ApproveArgs {
        fee: Some(nat(FEE - 1)),
        ..approve_arg(Account::of(carol()), 1)
    };
    assert_eq!(
        l.approve(alice(), &bad_fee, T0),
        Err(TxError::BadFee {
            expected_fee: nat(FEE)
        })
    );
    // Carol holds nothing: she cannot pay the approval fee.
    assert_eq!(
        l.approve(carol(), &approve_arg(Account::of(alice()), 1), T0),
        Err(TxError::InsufficientFunds { balance: nat(0) })
    );
    // Self approval is refused, also towards another subaccount of the same owner.
    let own = Account {
        owner: alice(),
        subaccount: sub(3),
    };
    assert_eq!(
        generic_code(&l.approve(alice(), &approve_arg(own, 1), T0).unwrap_err()),
        code::SELF_APPROVAL
    );
    assert_eq!(
        generic_code(
            &l.approve(minter(), &approve_arg(Account::of(alice()), 1), T0)
                .unwrap_err()
        ),
        code::MINTING_ACCOUNT
    );
    assert_eq!(
        generic_code(
            &l.approve(
                Principal::anonymous(),
                &approve_arg(Account::of(alice()), 1),
                T0
            )
            .unwrap_err()
        ),
        code::ANONYMOUS_CALLER
    );
    let long_memo = ApproveArgs {
        memo: Some(ByteBuf::from(vec![0u8; 40])),
        ..approve_arg(Account::of(carol()), 1)
    };
    assert_eq!(
        generic_code(&l.approve(alice(), &long_memo, T0).unwrap_err()),
        code::MEMO_TOO_LONG
    );
    // None of these wrote a block.
    assert_eq!(l.log_length(), 2);
}

#[test]
fn transfer_from_spends_the_allowance() {
    let mut l = ledger();
    l.approve(alice(), &approve_arg(Account::of(carol()), 200), T0)
        .unwrap();
    let index = l
        .transfer_from(
            carol(),
            &transfer_from_arg(Account::of(alice()), Account::of(bob()), 100),
            T0,
        )
        .unwrap();
    assert_eq!(balance(&l, alice()), nat(1_000 - FEE - 100 - FEE));
    assert_eq!(balance(&l, bob()), nat(600));
    assert_eq!(balance(&l, carol()), nat(0));
    // The allowance shrinks by amount + fee.
    assert_eq!(
        allowance_of(&l, Account::of(alice()), Account::of(carol()), T0).0,
        nat(200 - 100 - FEE)
    );
    let block = l.block(index).unwrap();
    assert_eq!(block.get("btype"), Some(&Value::text("2xfer")));
    assert_eq!(block.get("fee"), Some(&Value::nat(FEE)));
    let tx = block.get("tx").unwrap();
    assert_eq!(tx.get("from"), Some(&acct(alice()).to_value()));
    assert_eq!(tx.get("to"), Some(&acct(bob()).to_value()));
    assert_eq!(tx.get("spender"), Some(&acct(carol()).to_value()));
}

#[test]
fn the_allowance_must_cover_amount_and_fee() {
    let mut l = ledger();
    l.approve(alice(), &approve_arg(Account::of(carol()), 100 + FEE), T0)
        .unwrap();
    let over = transfer_from_arg(Account::of(alice()), Account::of(bob()), 101);
    assert_eq!(
        l.transfer_from(carol(), &over, T0),
        Err(TxError::InsufficientAllowance {
            allowance: nat(100 + FEE)
        })
    );
    let exact = transfer_from_arg(Account::of(alice()), Account::of(bob()), 100);
    l.transfer_from(carol(), &exact, T0).unwrap();
    assert_eq!(
        allowance_of(&l, Account::of(alice()), Account::of(carol()), T0),
        (nat(0), None)
    );
    assert_eq!(
        l.transfer_from(carol(), &exact, T0),
        Err(TxError::InsufficientAllowance { allowance: nat(0) })
    );
}

#[test]
fn the_spender_subaccount_is_part_of_the_spender() {
    let mut l = ledger();
    let spender = Account {
        owner: carol(),
        subaccount: sub(9),
    };
    l.approve(alice(), &approve_arg(spender, 100), T0).unwrap();
    let arg = transfer_from_arg(Account::of(alice()), Account::of(bob()), 10);
    assert_eq!(
        l.transfer_from(carol(), &arg, T0),
        Err(TxError::InsufficientAllowance { allowance: nat(0) })
    );
    let arg = TransferFromArgs {
        spender_subaccount: sub(9),
        ..arg
    };
    let index = l.transfer_from(carol(), &arg, T0).unwrap();
    assert_eq!(
        l.block(index).unwrap().get("tx").unwrap().get("spender"),
        Some(&Value::Array(vec![
            Value::blob(carol().as_slice()),
            Value::blob(vec![9u8; 32])
        ]))
    );
}

#[test]
fn an_expired_allowance_cannot_be_spent() {
    let mut l = ledger();
    let arg = ApproveArgs {
        expires_at: Some(T0 + 50),
        ..approve_arg(Account::of(carol()), 100)
    };
    l.approve(alice(), &arg, T0).unwrap();
    let spend = transfer_from_arg(Account::of(alice()), Account::of(bob()), 10);
    assert!(l.transfer_from(carol(), &spend, T0 + 49).is_ok());
    assert_eq!(
        l.transfer_from(carol(), &spend, T0 + 50),
        Err(TxError::InsufficientAllowance { allowance: nat(0) })
    );
}

#[test]
fn transfer_from_needs_funds_in_from() {
    let mut l = ledger();
    l.approve(bob(), &approve_arg(Account::of(carol()), 10_000), T0)
        .unwrap();
    let arg = transfer_from_arg(Account::of(bob()), Account::of(alice()), 500);
    assert_eq!(
        l.transfer_from(carol(), &arg, T0),
        Err(TxError::InsufficientFunds {
            balance: nat(500 - FEE)
        })
    );
    // The failed call left the allowance alone.
    assert_eq!(
        allowance_of(&l, Account::of(bob()), Account::of(carol()), T0).0,
        nat(10_000)
    );
}

#[test]
fn transfer_from_errors() {
    let mut l = ledger();
    l.approve(alice(), &approve_arg(Account::of(carol()), 10_000), T0)
        .unwrap();
    let base = transfer_from_arg(Account::of(alice()), Account::of(bob()), 10);
    assert_eq!(
        l.transfer_from(
            carol(),
            &TransferFromArgs {
                fee: Some(nat(1)),
                ..base.clone()
            },
            T0
        ),
        Err(TxError::BadFee {
            expected_fee: nat(FEE)
        })
    );
    assert_eq!(
        generic_code(
            &l.transfer_from(Principal::anonymous(), &base, T0)
                .unwrap_err()
        ),
        code::ANONYMOUS_CALLER
    );
    let from_minter = transfer_from_arg(Account::of(minter()), Account::of(bob()), 10);
    assert_eq!(
        generic_code(&l.transfer_from(carol(), &from_minter, T0).unwrap_err()),
        code::MINTING_ACCOUNT
    );
    let burn_too_small = transfer_from_arg(Account::of(alice()), Account::of(minter()), FEE - 1);
    assert_eq!(
        l.transfer_from(carol(), &burn_too_small, T0),
        Err(TxError::BadBurn {
            min_burn_amount: nat(FEE)
        })
    );
}

#[test]
fn transfer_from_to_the_minting_account_burns() {
    let mut l = ledger();
    l.approve(alice(), &approve_arg(Account::of(carol()), 100), T0)
        .unwrap();
    let arg = transfer_from_arg(Account::of(alice()), Account::of(minter()), 60);
    let index = l.transfer_from(carol(), &arg, T0).unwrap();
    // No fee on a burn: the allowance and the balance drop by the amount only.
    assert_eq!(balance(&l, alice()), nat(1_000 - FEE - 60));
    assert_eq!(
        allowance_of(&l, Account::of(alice()), Account::of(carol()), T0).0,
        nat(40)
    );
    let block = l.block(index).unwrap();
    assert_eq!(block.get("btype"), Some(&Value::text("1burn")));
    assert_eq!(block.get("fee"), None);
    let tx = block.get("tx").unwrap();
    assert_eq!(tx.get("spender"), Some(&acct(carol()).to_value()));
    assert_eq!(tx.get("to"), None);
}

#[test]
fn spending_from_ones_own_account_needs_no_allowance() {
    let mut l = ledger();
    let arg = transfer_from_arg(Account::of(alice()), Account::of(bob()), 10);
    l.transfer_from(alice(), &arg, T0).unwrap();
    assert_eq!(balance(&l, alice()), nat(1_000 - 10 - FEE));
}
