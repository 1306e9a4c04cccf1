//! Stable-memory layout: the one registry of `MemoryId`s and the encodings of stored records.
//!
//! Every piece of state lives in `ic-stable-structures`, so an upgrade keeps it without a
//! `pre_upgrade` copy. Small records are Candid (self-describing: a new `opt` field keeps old
//! records readable); the per-account values on the hot path use a compact binary form.

use crate::account::Acct;
use crate::hash::leb128;
use crate::types::{Account, FaultPlan};
use candid::{CandidType, Deserialize, Nat};
use ic_stable_structures::memory_manager::MemoryId;
use ic_stable_structures::storable::{Bound, Storable};
use serde_bytes::ByteBuf;
use std::borrow::Cow;

/// The registry of memories. Never reuse or renumber an id: upgrades read them back.
pub mod memory_ids {
    use super::MemoryId;

    /// `StableCell<Config>`: name, symbol, decimals, fee, minting account.
    pub const CONFIG: MemoryId = MemoryId::new(0);
    /// `StableCell<Tip>`: total supply and the hash of the last block.
    pub const TIP: MemoryId = MemoryId::new(1);
    /// `StableBTreeMap<Acct, Tokens>`: non-zero balances.
    pub const BALANCES: MemoryId = MemoryId::new(2);
    /// `StableBTreeMap<(from, spender), AllowanceEntry>`: non-zero allowances.
    pub const ALLOWANCES: MemoryId = MemoryId::new(3);
    /// `StableLog` index memory of the blocks.
    pub const BLOCKS_INDEX: MemoryId = MemoryId::new(4);
    /// `StableLog` data memory of the blocks (Candid-encoded ICRC-3 `Value`s).
    pub const BLOCKS_DATA: MemoryId = MemoryId::new(5);
    /// `StableBTreeMap<dedup key, (block index, created_at_time)>`.
    pub const DEDUP: MemoryId = MemoryId::new(6);
    /// `StableBTreeMap<(created_at_time, block index), dedup key>`: prunes the dedup map.
    pub const DEDUP_BY_TIME: MemoryId = MemoryId::new(7);
    /// `StableBTreeMap<sequence number, FaultPlan>`: the FIFO fault queue.
    pub const FAULTS: MemoryId = MemoryId::new(8);
}

/// Implements `Storable` (unbounded) through Candid for a record type.
macro_rules! candid_storable {
    ($t:ty) => {
        impl Storable for $t {
            fn to_bytes(&self) -> Cow<'_, [u8]> {
                Cow::Owned(candid::encode_one(self).expect(concat!("encoding ", stringify!($t))))
            }

            fn into_bytes(self) -> Vec<u8> {
                candid::encode_one(&self).expect(concat!("encoding ", stringify!($t)))
            }

            fn from_bytes(bytes: Cow<'_, [u8]>) -> Self {
                candid::decode_one(&bytes).expect(concat!("decoding stored ", stringify!($t)))
            }

            const BOUND: Bound = Bound::Unbounded;
        }
    };
}

/// The ledger's settings, fixed at init.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Config {
    pub name: String,
    pub symbol: String,
    pub decimals: u8,
    pub fee: Nat,
    /// Always set after init; `None` only in a memory that was never initialized.
    pub minting_account: Option<Account>,
}

candid_storable!(Config);

/// What changes with every block.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Tip {
    pub total_supply: Nat,
    /// Hash of the last block; `None` while the log is empty.
    pub last_hash: Option<ByteBuf>,
}

candid_storable!(Tip);

/// A queued fault.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct StoredFault(pub FaultPlan);

candid_storable!(StoredFault);

/// A token amount, stored as unsigned LEB128.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Tokens(pub Nat);

impl Storable for Tokens {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(leb128(&self.0))
    }

    fn into_bytes(self) -> Vec<u8> {
        leb128(&self.0)
    }

    fn from_bytes(bytes: Cow<'_, [u8]>) -> Self {
        Tokens(Nat::decode(&mut &bytes[..]).expect("decoding a stored amount"))
    }

    const BOUND: Bound = Bound::Unbounded;
}

/// An allowance: amount and optional expiry (ledger time, ns).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AllowanceEntry {
    pub amount: Nat,
    pub expires_at: Option<u64>,
}

impl AllowanceEntry {
    /// Whether the allowance can still be used at `now` (it expires at `expires_at`).
    pub fn is_active(&self, now: u64) -> bool {
        self.expires_at.is_none_or(|t| t > now)
    }
}

impl Storable for AllowanceEntry {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(self.clone().into_bytes())
    }

    /// `[0]` or `[1, expires_at as 8 bytes LE]`, then the amount in LEB128.
    fn into_bytes(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        match self.expires_at {
            None => out.push(0),
            Some(t) => {
                out.push(1);
                out.extend_from_slice(&t.to_le_bytes());
            }
        }
        out.extend_from_slice(&leb128(&self.amount));
        out
    }

    fn from_bytes(bytes: Cow<'_, [u8]>) -> Self {
        let (expires_at, rest) = match bytes[0] {
            0 => (None, &bytes[1..]),
            _ => {
                let mut t = [0u8; 8];
                t.copy_from_slice(&bytes[1..9]);
                (Some(u64::from_le_bytes(t)), &bytes[9..])
            }
        };
        let amount = Nat::decode(&mut &rest[..]).expect("decoding a stored allowance");
        Self { amount, expires_at }
    }

    const BOUND: Bound = Bound::Unbounded;
}

/// The allowance map's key.
pub type AllowanceKey = (Acct, Acct);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Fault;
    use candid::Principal;

    #[test]
    fn tokens_round_trip() {
        for n in [0u128, 1, 127, 128, u64::MAX as u128, u128::MAX] {
            let t = Tokens(Nat::from(n));
            assert_eq!(Tokens::from_bytes(t.to_bytes()), t);
        }
    }

    #[test]
    fn allowance_round_trip() {
        for e in [
            AllowanceEntry {
                amount: Nat::from(5u64),
                expires_at: None,
            },
            AllowanceEntry {
                amount: Nat::from(u128::MAX),
                expires_at: Some(u64::MAX),
            },
        ] {
            assert_eq!(AllowanceEntry::from_bytes(e.to_bytes()), e);
        }
    }

    #[test]
    fn allowance_expires_at_its_time() {
        let e = AllowanceEntry {
            amount: Nat::from(1u64),
            expires_at: Some(10),
        };
        assert!(e.is_active(9));
        assert!(!e.is_active(10));
    }

    #[test]
    fn candid_records_round_trip() {
        let c = Config {
            name: "Test".into(),
            symbol: "TST".into(),
            decimals: 8,
            fee: Nat::from(10u64),
            minting_account: Some(Account::of(Principal::anonymous())),
        };
        assert_eq!(Config::from_bytes(c.to_bytes()), c);
        let f = StoredFault(FaultPlan {
            method: "icrc1_transfer".into(),
            fault: Fault::LoseReply { hold_ns: 3 },
        });
        assert_eq!(StoredFault::from_bytes(f.to_bytes()), f);
    }

    #[test]
    fn memory_ids_are_distinct() {
        use memory_ids::*;
        let ids = [
            CONFIG,
            TIP,
            BALANCES,
            ALLOWANCES,
            BLOCKS_INDEX,
            BLOCKS_DATA,
            DEDUP,
            DEDUP_BY_TIME,
            FAULTS,
        ];
        let mut seen = std::collections::BTreeSet::new();
        for id in ids {
            assert!(seen.insert(format!("{id:?}")));
        }
    }
}
