//! Identifiers: IC-style canister ids, the management canister, the host's subnet id
//! and ingress message ids.

use std::fmt;

use candid::Principal;

/// The canister id the IC assigns for a given counter: 8-byte big-endian counter
/// followed by `0x01 0x01` (an "opaque id" as the spec calls it).
pub fn canister_id_from_counter(counter: u64) -> Principal {
    let mut bytes = [0u8; 10];
    bytes[..8].copy_from_slice(&counter.to_be_bytes());
    bytes[8] = 0x01;
    bytes[9] = 0x01;
    Principal::from_slice(&bytes)
}

/// The management canister `aaaaa-aa` (the empty principal).
pub fn management_canister() -> Principal {
    Principal::management_canister()
}

/// The id of the single (simulated) subnet all canisters live on.
///
/// Subnet ids on the IC are self-authenticating-style ids (29 bytes ending in `0x02`);
/// this one is a fixed, recognisable value so that `ic0.subnet_self_*` is deterministic.
pub fn subnet_id() -> Principal {
    let mut bytes = [0x10u8; 29];
    bytes[28] = 0x02;
    Principal::from_slice(&bytes)
}

/// Identifies an ingress message submitted with [`crate::LocalIc::submit_update`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MessageId(pub(crate) u64);

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ingress#{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_canister_ids_match_the_ic_scheme() {
        assert_eq!(
            canister_id_from_counter(0).to_text(),
            "rwlgt-iiaaa-aaaaa-aaaaa-cai"
        );
        assert_eq!(
            canister_id_from_counter(1).to_text(),
            "rrkah-fqaaa-aaaaa-aaaaq-cai"
        );
    }

    #[test]
    fn subnet_id_is_a_valid_principal() {
        assert_eq!(subnet_id().as_slice().len(), 29);
    }
}
