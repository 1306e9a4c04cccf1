//! A test ICRC-1/ICRC-2/ICRC-3 ledger canister with fault injection.
//!
//! Layers:
//! - pure ledger logic, native-testable, no ic-cdk calls: [`account`], [`hash`], [`block`],
//!   [`dedup`], [`errors`], [`storage`] (stable-memory layout), [`ledger`], [`faults`],
//!   [`certification`];
//! - the canister layer (`canister.rs`): `#[init]`, `#[query]`, `#[update]`, the thread-local
//!   stable memories, certified data and the fault actions.
//!
//! The interface is `candid/test_ledger.did`; `docs/test-ledger.md` describes the behaviour.

pub mod account;
pub mod block;
pub mod certification;
pub mod dedup;
pub mod errors;
pub mod faults;
pub mod hash;
pub mod ledger;
pub mod storage;
pub mod types;

mod canister;

pub use canister::MAX_HOLD_TICKS;

#[cfg(test)]
mod tests;

// The names `export_candid!` resolves the endpoint signatures with.
#[allow(unused_imports)]
use crate::types::*;
#[allow(unused_imports)]
use candid::Nat;
#[allow(unused_imports)]
use std::marker::PhantomData;

ic_cdk::export_candid!();
