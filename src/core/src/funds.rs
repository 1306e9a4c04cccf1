//! Whose funds move: the tool host holds a deposit subaccount per owner, derived from the
//! owner's principal, so that no input can pick another owner's funds.

use crate::form::Dyn;
use candid::Principal;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The refs that say a ledger's own decimals, symbol and fee (as the ICRC packs name them).
pub const REF_DECIMALS: &str = "query:icrc1_decimals";
pub const REF_SYMBOL: &str = "query:icrc1_symbol";
pub const REF_FEE: &str = "query:icrc1_fee";

/// Why an amount's unit (its decimals or its symbol) is not the ledger's own.
#[derive(Debug, PartialEq)]
pub enum UnitFault {
    /// A method that moves funds takes its units from another ref than the ledger's own.
    OtherSource(String),
    /// A form's fixed unit is not the one the ledger's ref says.
    Disagrees(String, Value),
    /// A method that moves funds has a fixed unit while the ledger's is not known.
    NotKnown,
}

/// Whether an amount's unit is the ledger's own (its ref `src`): an amount read or shown in
/// units that are not would preview one amount and send another, whatever the form says. For
/// a method that moves funds the unit comes only from that ref, or is fixed by the form as
/// exactly what the ref says; elsewhere a fixed unit must not contradict a known ref.
pub fn ledger_unit<T: std::fmt::Debug>(
    unit: &Dyn<T>,
    src: &str,
    refs: &BTreeMap<String, Value>,
    funds: bool,
    equal: impl Fn(&T, &Value) -> bool,
) -> Result<(), UnitFault> {
    match unit {
        Dyn::From(f) if funds && f.as_str() != src => Err(UnitFault::OtherSource(f.clone())),
        Dyn::From(_) => Ok(()),
        Dyn::Fixed(fixed) => match refs.get(src) {
            Some(v) if !equal(fixed, v) => {
                Err(UnitFault::Disagrees(format!("{fixed:?}"), v.clone()))
            }
            None if funds => Err(UnitFault::NotKnown),
            _ => Ok(()),
        },
    }
}

/// Both units of a token amount checked by [`ledger_unit`], the decimals first.
pub fn ledger_units(
    decimals: &Dyn<u8>,
    symbol: &Dyn<String>,
    refs: &BTreeMap<String, Value>,
    funds: bool,
) -> Result<(), (&'static str, &'static str, UnitFault)> {
    ledger_unit(decimals, REF_DECIMALS, refs, funds, |d, v| {
        v.as_u64() == Some(u64::from(*d))
    })
    .map_err(|f| ("decimals", REF_DECIMALS, f))?;
    ledger_unit(symbol, REF_SYMBOL, refs, funds, |s, v| {
        v.as_str() == Some(s.as_str())
    })
    .map_err(|f| ("symbol", REF_SYMBOL, f))
}

/// Domain separator of deposit subaccounts; changing it moves every owner's deposit account.
const DEPOSIT_DOMAIN: &[u8] = b"\x0ctool-host:deposit";

/// `sha256(domain || len(owner) || owner)`: 32 bytes, distinct per owner, never all zero.
pub fn deposit_subaccount(owner: &Principal) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(DEPOSIT_DOMAIN);
    h.update([owner.as_slice().len() as u8]);
    h.update(owner.as_slice());
    let mut out: [u8; 32] = h.finalize().into();
    if out == [0; 32] {
        out[31] = 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_per_owner_and_stable() {
        let a = deposit_subaccount(&Principal::from_slice(&[1]));
        let b = deposit_subaccount(&Principal::from_slice(&[2]));
        assert_ne!(a, b);
        assert_eq!(a, deposit_subaccount(&Principal::from_slice(&[1])));
        assert_ne!(a, [0; 32]);
    }
}
