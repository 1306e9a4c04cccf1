//! Accounts with the default subaccount made explicit, so `None` and 32 zero bytes are one account.

use crate::types::{Account, Value};
use candid::Principal;
use ic_stable_structures::storable::{Bound, Storable};
use serde_bytes::ByteBuf;
use std::borrow::Cow;

/// The default subaccount: 32 zero bytes.
pub const DEFAULT_SUBACCOUNT: [u8; 32] = [0; 32];

/// A normalized ICRC-1 account: the subaccount is always present.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Acct {
    pub owner: Principal,
    pub subaccount: [u8; 32],
}

impl Acct {
    /// An account from an owner and an optional subaccount, which must be 32 bytes if given.
    pub fn new(owner: Principal, subaccount: Option<&[u8]>) -> Result<Self, String> {
        let subaccount = match subaccount {
            None => DEFAULT_SUBACCOUNT,
            Some(bytes) => <[u8; 32]>::try_from(bytes).map_err(|_| {
                format!(
                    "a subaccount must be 32 bytes long, got {} bytes",
                    bytes.len()
                )
            })?,
        };
        Ok(Self { owner, subaccount })
    }

    /// The owner's default account.
    pub fn default_of(owner: Principal) -> Self {
        Self {
            owner,
            subaccount: DEFAULT_SUBACCOUNT,
        }
    }

    /// Normalizes a wire `Account`.
    pub fn from_account(account: &Account) -> Result<Self, String> {
        Self::new(account.owner, account.subaccount.as_deref().map(|s| &s[..]))
    }

    /// The wire form, with the default subaccount left out.
    pub fn to_account(&self) -> Account {
        Account {
            owner: self.owner,
            subaccount: self.explicit_subaccount().map(ByteBuf::from),
        }
    }

    /// The subaccount unless it is the default one.
    fn explicit_subaccount(&self) -> Option<Vec<u8>> {
        (self.subaccount != DEFAULT_SUBACCOUNT).then(|| self.subaccount.to_vec())
    }

    /// ICRC-3 form: `Array [Blob owner, Blob subaccount]`, the subaccount omitted when default.
    pub fn to_value(&self) -> Value {
        Party::inferred(*self).to_value()
    }
}

/// An account as a caller named it in a transaction: the normalized account, and whether the
/// caller gave its subaccount (`opt` 32 bytes, the default ones included) or left it `null`.
/// `null` and 32 zero bytes are one account (one balance) but two different transactions: the
/// block writes the subaccount the caller gave, and deduplication tells them apart (as the
/// ICRC-1 conformance suite checks and DFINITY's ledgers do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Party {
    pub acct: Acct,
    pub subaccount_given: bool,
}

impl Party {
    /// An account from the caller's `opt subaccount`.
    pub fn given(acct: Acct, subaccount: Option<&[u8]>) -> Self {
        Self {
            acct,
            subaccount_given: subaccount.is_some(),
        }
    }

    /// An account whose subaccount is given exactly when it is not the default one (accounts the
    /// ledger names itself, e.g. initial balances).
    pub fn inferred(acct: Acct) -> Self {
        Self {
            acct,
            subaccount_given: acct.subaccount != DEFAULT_SUBACCOUNT,
        }
    }

    /// ICRC-3 form: `Array [Blob owner, Blob subaccount]`, the subaccount present when the
    /// caller gave one (even the default one) or it is not the default.
    pub fn to_value(&self) -> Value {
        let mut parts = vec![Value::blob(self.acct.owner.as_slice())];
        if self.subaccount_given || self.acct.subaccount != DEFAULT_SUBACCOUNT {
            parts.push(Value::blob(self.acct.subaccount.to_vec()));
        }
        Value::Array(parts)
    }
}

impl From<Acct> for Party {
    fn from(acct: Acct) -> Self {
        Party::inferred(acct)
    }
}

/// Principals are at most 29 bytes: length byte + owner + subaccount.
const ACCT_MAX_SIZE: u32 = 1 + 29 + 32;

impl Storable for Acct {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned((*self).into_bytes())
    }

    fn into_bytes(self) -> Vec<u8> {
        let owner = self.owner.as_slice();
        let mut out = Vec::with_capacity(1 + owner.len() + 32);
        out.push(owner.len() as u8);
        out.extend_from_slice(owner);
        out.extend_from_slice(&self.subaccount);
        out
    }

    fn from_bytes(bytes: Cow<'_, [u8]>) -> Self {
        let len = bytes[0] as usize;
        let owner = Principal::from_slice(&bytes[1..1 + len]);
        let mut subaccount = [0u8; 32];
        subaccount.copy_from_slice(&bytes[1 + len..1 + len + 32]);
        Self { owner, subaccount }
    }

    const BOUND: Bound = Bound::Bounded {
        max_size: ACCT_MAX_SIZE,
        is_fixed_size: false,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(n: u8) -> Principal {
        Principal::from_slice(&[n; 29])
    }

    #[test]
    fn none_and_zero_subaccount_are_one_account() {
        let a = Acct::new(principal(1), None).unwrap();
        let b = Acct::new(principal(1), Some(&[0u8; 32])).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_account().subaccount, None);
    }

    #[test]
    fn subaccount_must_be_32_bytes() {
        assert!(Acct::new(principal(1), Some(&[1u8; 31])).is_err());
        assert!(Acct::new(principal(1), Some(&[1u8; 33])).is_err());
    }

    #[test]
    fn value_form_omits_default_subaccount() {
        let a = Acct::default_of(principal(2));
        assert_eq!(a.to_value(), Value::Array(vec![Value::blob(vec![2u8; 29])]));
        let b = Acct::new(principal(2), Some(&[7u8; 32])).unwrap();
        assert_eq!(
            b.to_value(),
            Value::Array(vec![Value::blob(vec![2u8; 29]), Value::blob(vec![7u8; 32])])
        );
    }

    #[test]
    fn storable_round_trip() {
        for a in [
            Acct::default_of(Principal::anonymous()),
            Acct::new(principal(3), Some(&[9u8; 32])).unwrap(),
            Acct::default_of(Principal::management_canister()),
        ] {
            let bytes = a.to_bytes().into_owned();
            assert!(bytes.len() <= ACCT_MAX_SIZE as usize);
            assert_eq!(Acct::from_bytes(Cow::Owned(bytes)), a);
        }
    }
}
