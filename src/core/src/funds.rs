//! Whose funds move: the tool host holds a deposit subaccount per owner, derived from the
//! owner's principal, so that no input can pick another owner's funds.

use candid::Principal;
use sha2::{Digest, Sha256};

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
