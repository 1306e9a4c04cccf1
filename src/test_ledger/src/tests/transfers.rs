//! `icrc1_transfer`: transfers, mints, burns, fees and every error it can give.

use super::*;
use crate::errors::code;
use crate::types::Value;

#[test]
fn init_mints_the_initial_balances() {
    let l = ledger();
    assert_eq!(balance(&l, alice()), nat(1_000));
    assert_eq!(balance(&l, bob()), nat(500));
    assert_eq!(l.total_supply(), nat(1_500));
    assert_eq!(l.log_length(), 2);
    let b0 = l.block(0).unwrap();
    assert_eq!(b0.get("btype"), Some(&Value::text("1mint")));
    assert_eq!(b0.get("phash"), None);
    assert_eq!(b0.get("ts"), Some(&Value::nat(T0)));
    assert_eq!(
        b0.get("tx").unwrap().get("to"),
        Some(&acct(alice()).to_value())
    );
    assert_eq!(l.config().symbol, "TST");
    assert_eq!(l.minting_account(), Some(acct(minter())));
}

#[test]
fn init_refuses_a_balance_on_the_minting_account_and_a_second_init() {
    let memory = VectorMemory::default();
    let mut l: TestLedger = Ledger::open(&memory_manager(memory));
    assert!(l
        .initialize(init_args(vec![(Account::of(minter()), 1)]), T0)
        .is_err());
    let (mut l, _) = ledger_with(vec![]);
    assert!(l.initialize(init_args(vec![]), T0).is_err());
}

#[test]
fn transfer_moves_the_amount_and_burns_the_fee() {
    let mut l = ledger();
    let index = l
        .transfer(alice(), &transfer_arg(Account::of(bob()), 100), T0 + 1)
        .unwrap();
    assert_eq!(index, 2);
    assert_eq!(balance(&l, alice()), nat(1_000 - 100 - FEE));
    assert_eq!(balance(&l, bob()), nat(600));
    assert_eq!(l.total_supply(), nat(1_500 - FEE));
    let block = l.block(index).unwrap();
    assert_eq!(block.get("btype"), Some(&Value::text("1xfer")));
    // The caller stated no fee: the ledger's fee is recorded at block level.
    assert_eq!(block.get("fee"), Some(&Value::nat(FEE)));
    assert_eq!(block.get("ts"), Some(&Value::nat(T0 + 1)));
    let tx = block.get("tx").unwrap();
    assert_eq!(tx.get("amt"), Some(&Value::nat(100u64)));
    assert_eq!(tx.get("from"), Some(&acct(alice()).to_value()));
    assert_eq!(tx.get("to"), Some(&acct(bob()).to_value()));
    assert_eq!(tx.get("fee"), None);
}

#[test]
fn a_stated_fee_is_recorded_in_tx() {
    let mut l = ledger();
    let arg = TransferArg {
        fee: Some(nat(FEE)),
        memo: Some(ByteBuf::from(b"order-7".to_vec())),
        ..transfer_arg(Account::of(bob()), 1)
    };
    let index = l.transfer(alice(), &arg, T0).unwrap();
    let block = l.block(index).unwrap();
    assert_eq!(block.get("fee"), None);
    let tx = block.get("tx").unwrap();
    assert_eq!(tx.get("fee"), Some(&Value::nat(FEE)));
    assert_eq!(tx.get("memo"), Some(&Value::blob(b"order-7".to_vec())));
}

#[test]
fn transfer_between_subaccounts() {
    let mut l = ledger();
    let to = Account {
        owner: alice(),
        subaccount: sub(7),
    };
    l.transfer(alice(), &transfer_arg(to.clone(), 50), T0)
        .unwrap();
    assert_eq!(l.balance_of(&to), nat(50));
    let back = TransferArg {
        from_subaccount: sub(7),
        ..transfer_arg(Account::of(alice()), 40)
    };
    let index = l.transfer(alice(), &back, T0).unwrap();
    assert_eq!(l.balance_of(&to), nat(0));
    let tx = l.block(index).unwrap().get("tx").cloned().unwrap();
    assert_eq!(
        tx.get("from"),
        Some(&Value::Array(vec![
            Value::blob(alice().as_slice()),
            Value::blob(vec![7u8; 32])
        ]))
    );
}

#[test]
fn bad_fee() {
    let mut l = ledger();
    let arg = TransferArg {
        fee: Some(nat(FEE + 1)),
        ..transfer_arg(Account::of(bob()), 1)
    };
    assert_eq!(
        l.transfer(alice(), &arg, T0),
        Err(TxError::BadFee {
            expected_fee: nat(FEE)
        })
    );
    assert_eq!(l.log_length(), 2);
    assert_eq!(balance(&l, alice()), nat(1_000));
}

#[test]
fn insufficient_funds_counts_amount_and_fee() {
    let mut l = ledger();
    assert_eq!(
        l.transfer(
            bob(),
            &transfer_arg(Account::of(alice()), 500 - FEE + 1),
            T0
        ),
        Err(TxError::InsufficientFunds { balance: nat(500) })
    );
    // Exactly amount + fee empties the account.
    l.transfer(bob(), &transfer_arg(Account::of(alice()), 500 - FEE), T0)
        .unwrap();
    assert_eq!(balance(&l, bob()), nat(0));
    assert_eq!(
        l.transfer(bob(), &transfer_arg(Account::of(alice()), 0), T0),
        Err(TxError::InsufficientFunds { balance: nat(0) })
    );
}

#[test]
fn mint_from_the_minting_account() {
    let mut l = ledger();
    let index = l
        .transfer(minter(), &transfer_arg(Account::of(carol()), 300), T0)
        .unwrap();
    assert_eq!(balance(&l, carol()), nat(300));
    assert_eq!(l.total_supply(), nat(1_800));
    let block = l.block(index).unwrap();
    assert_eq!(block.get("btype"), Some(&Value::text("1mint")));
    assert_eq!(block.get("fee"), None);
    let tx = block.get("tx").unwrap();
    assert_eq!(tx.get("from"), None);
    assert_eq!(tx.get("to"), Some(&acct(carol()).to_value()));
    // A mint is free: a stated fee must be 0.
    let with_fee = TransferArg {
        fee: Some(nat(FEE)),
        ..transfer_arg(Account::of(carol()), 1)
    };
    assert_eq!(
        l.transfer(minter(), &with_fee, T0),
        Err(TxError::BadFee {
            expected_fee: nat(0)
        })
    );
    let zero_fee = TransferArg {
        fee: Some(nat(0)),
        ..with_fee
    };
    assert!(l.transfer(minter(), &zero_fee, T0).is_ok());
}

#[test]
fn burn_to_the_minting_account() {
    let mut l = ledger();
    let index = l
        .transfer(alice(), &transfer_arg(Account::of(minter()), FEE), T0)
        .unwrap();
    // No fee on a burn.
    assert_eq!(balance(&l, alice()), nat(1_000 - FEE));
    assert_eq!(l.total_supply(), nat(1_500 - FEE));
    let block = l.block(index).unwrap();
    assert_eq!(block.get("btype"), Some(&Value::text("1burn")));
    assert_eq!(block.get("fee"), None);
    let tx = block.get("tx").unwrap();
    assert_eq!(tx.get("to"), None);
    assert_eq!(tx.get("from"), Some(&acct(alice()).to_value()));
    assert_eq!(
        l.transfer(alice(), &transfer_arg(Account::of(minter()), FEE - 1), T0),
        Err(TxError::BadBurn {
            min_burn_amount: nat(FEE)
        })
    );
    let with_fee = TransferArg {
        fee: Some(nat(FEE)),
        ..transfer_arg(Account::of(minter()), 100)
    };
    assert_eq!(
        l.transfer(alice(), &with_fee, T0),
        Err(TxError::BadFee {
            expected_fee: nat(0)
        })
    );
    assert_eq!(
        l.transfer(bob(), &transfer_arg(Account::of(minter()), 501), T0),
        Err(TxError::InsufficientFunds { balance: nat(500) })
    );
}

#[test]
fn the_minting_account_cannot_send_to_itself() {
    let mut l = ledger();
    let e = l
        .transfer(minter(), &transfer_arg(Account::of(minter()), 1), T0)
        .unwrap_err();
    assert_eq!(generic_code(&e), code::MINTING_ACCOUNT);
}

#[test]
fn the_anonymous_principal_cannot_send() {
    let mut l = ledger();
    let e = l
        .transfer(
            Principal::anonymous(),
            &transfer_arg(Account::of(bob()), 0),
            T0,
        )
        .unwrap_err();
    assert_eq!(generic_code(&e), code::ANONYMOUS_CALLER);
}

#[test]
fn memo_of_at_most_32_bytes() {
    let mut l = ledger();
    let ok = TransferArg {
        memo: Some(ByteBuf::from(vec![1u8; 32])),
        ..transfer_arg(Account::of(bob()), 1)
    };
    assert!(l.transfer(alice(), &ok, T0).is_ok());
    let long = TransferArg {
        memo: Some(ByteBuf::from(vec![1u8; 33])),
        ..ok
    };
    let e = l.transfer(alice(), &long, T0).unwrap_err();
    assert_eq!(generic_code(&e), code::MEMO_TOO_LONG);
}

#[test]
fn a_subaccount_must_be_32_bytes() {
    let mut l = ledger();
    let arg = TransferArg {
        from_subaccount: Some(ByteBuf::from(vec![1u8; 5])),
        ..transfer_arg(Account::of(bob()), 1)
    };
    assert_eq!(
        generic_code(&l.transfer(alice(), &arg, T0).unwrap_err()),
        code::BAD_SUBACCOUNT
    );
    let bad_to = Account {
        owner: bob(),
        subaccount: Some(ByteBuf::from(vec![0u8; 33])),
    };
    assert_eq!(
        generic_code(
            &l.transfer(alice(), &transfer_arg(bad_to.clone(), 1), T0)
                .unwrap_err()
        ),
        code::BAD_SUBACCOUNT
    );
    assert_eq!(l.balance_of(&bad_to), nat(0));
}

#[test]
fn default_subaccount_given_explicitly_is_the_default_account() {
    let mut l = ledger();
    let to = Account {
        owner: carol(),
        subaccount: Some(ByteBuf::from(vec![0u8; 32])),
    };
    l.transfer(alice(), &transfer_arg(to, 5), T0).unwrap();
    assert_eq!(balance(&l, carol()), nat(5));
}

#[test]
fn metadata_and_standards() {
    use crate::types::MetadataValue;
    let l = ledger();
    let md = l.metadata();
    let get = |k: &str| md.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    assert_eq!(
        get("icrc1:name"),
        Some(MetadataValue::Text("Test Token".into()))
    );
    assert_eq!(get("icrc1:symbol"), Some(MetadataValue::Text("TST".into())));
    assert_eq!(get("icrc1:decimals"), Some(MetadataValue::Nat(nat(8))));
    assert_eq!(get("icrc1:fee"), Some(MetadataValue::Nat(nat(FEE))));
    let names: Vec<String> = crate::ledger::supported_standards()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["ICRC-1", "ICRC-2", "ICRC-3"]);
}

#[test]
fn total_supply_is_the_sum_of_balances() {
    let mut l = ledger();
    l.transfer(alice(), &transfer_arg(Account::of(carol()), 123), T0)
        .unwrap();
    l.transfer(minter(), &transfer_arg(Account::of(bob()), 77), T0)
        .unwrap();
    l.transfer(bob(), &transfer_arg(Account::of(minter()), 50), T0)
        .unwrap();
    l.approve(carol(), &approve_arg(Account::of(alice()), 1_000), T0)
        .unwrap();
    let sum = balance(&l, alice()) + balance(&l, bob()) + balance(&l, carol());
    assert_eq!(l.total_supply(), sum);
}
