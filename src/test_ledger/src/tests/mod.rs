//! Behaviour tests of the ledger logic, the fault queue and the interface.

mod approvals;
mod blocks;
mod dedup;
mod faults;
#[cfg(not(target_family = "wasm"))]
mod interface;
mod transfers;
mod upgrade;
#[cfg(not(target_family = "wasm"))]
use crate::account::Acct;
use crate::errors::TxError;
use crate::ledger::Ledger;
use crate::types::{Account, ApproveArgs, InitArgs, TransferArg, TransferFromArgs};
use candid::{Nat, Principal};
use ic_stable_structures::memory_manager::{MemoryManager, VirtualMemory};
use ic_stable_structures::VectorMemory;
use serde_bytes::ByteBuf;

pub type TestLedger = Ledger<VirtualMemory<VectorMemory>>;

/// The ledger fee in the tests.
pub const FEE: u64 = 10;
/// A plausible "now" (Nov 2023), ns.
pub const T0: u64 = 1_700_000_000_000_000_000;

pub fn principal(n: u8) -> Principal {
    Principal::from_slice(&[n; 29])
}

pub fn alice() -> Principal {
    principal(1)
}

pub fn bob() -> Principal {
    principal(2)
}

pub fn carol() -> Principal {
    principal(3)
}

pub fn minter() -> Principal {
    principal(0xAA)
}

pub fn nat(n: u64) -> Nat {
    Nat::from(n)
}

pub fn sub(n: u8) -> Option<ByteBuf> {
    Some(ByteBuf::from(vec![n; 32]))
}

pub fn init_args(balances: Vec<(Account, u64)>) -> InitArgs {
    InitArgs {
        name: "Test Token".into(),
        symbol: "TST".into(),
        decimals: 8,
        fee: nat(FEE),
        minting_account: Account::of(minter()),
        initial_balances: balances.into_iter().map(|(a, n)| (a, nat(n))).collect(),
    }
}

/// A memory manager over `memory` with one-page buckets: the default 8 MiB buckets make
/// every test zero tens of MiB in debug builds.
pub fn memory_manager(memory: VectorMemory) -> MemoryManager<VectorMemory> {
    MemoryManager::init_with_bucket_size(memory, 1)
}

/// A ledger on fresh vector memory, plus the memory (to reopen it as after an upgrade).
pub fn ledger_with(balances: Vec<(Account, u64)>) -> (TestLedger, VectorMemory) {
    let memory = VectorMemory::default();
    let mut ledger = Ledger::open(&memory_manager(memory.clone()));
    ledger.initialize(init_args(balances), T0).unwrap();
    (ledger, memory)
}

/// Alice holds 1000, Bob 500.
pub fn ledger() -> TestLedger {
    ledger_with(vec![
        (Account::of(alice()), 1_000),
        (Account::of(bob()), 500),
    ])
    .0
}

pub fn transfer_arg(to: Account, amount: u64) -> TransferArg {
    TransferArg {
        from_subaccount: None,
        to,
        amount: nat(amount),
        fee: None,
        memo: None,
        created_at_time: None,
    }
}

pub fn approve_arg(spender: Account, amount: u64) -> ApproveArgs {
    ApproveArgs {
        from_subaccount: None,
        spender,
        amount: nat(amount),
        expected_allowance: None,
        expires_at: None,
        fee: None,
        memo: None,
        created_at_time: None,
    }
}

pub fn transfer_from_arg(from: Account, to: Account, amount: u64) -> TransferFromArgs {
    TransferFromArgs {
        spender_subaccount: None,
        from,
        to,
        amount: nat(amount),
        fee: None,
        memo: None,
        created_at_time: None,
    }
}

pub fn balance(l: &TestLedger, owner: Principal) -> Nat {
    l.balance_of(&Account::of(owner))
}

pub fn generic_code(e: &TxError) -> u64 {
    match e {
        TxError::Generic { code, .. } => *code,
        other => panic!("expected a GenericError, got {other:?}"),
    }
}

pub fn acct(owner: Principal) -> Acct {
    Acct::default_of(owner)
}
