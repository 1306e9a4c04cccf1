//! The management canister (`aaaaa-aa`) as seen by canisters: `raw_rand` and
//! `deposit_cycles`.
//!
//! Everything else a test needs (creating and installing canisters) goes through the
//! [`LocalIc`] API; other methods are refused with a reject that says so.

use candid::Principal;

use crate::errors::RejectCode;
use crate::host::LocalIc;
use crate::messages::Payload;

impl LocalIc {
    /// Handles a call from `caller` to the management canister with `cycles` attached; answers
    /// the response and the cycles refunded with it.
    pub(crate) fn management_call(
        &mut self,
        caller: Principal,
        method: &str,
        arg: &[u8],
        cycles: u128,
    ) -> (Payload, u128) {
        let payload = match method {
            "deposit_cycles" => {
                #[derive(candid::CandidType, serde::Deserialize)]
                struct DepositCyclesArgs {
                    canister_id: Principal,
                }
                let target = match candid::decode_one::<DepositCyclesArgs>(arg) {
                    Ok(a) => a.canister_id,
                    Err(e) => {
                        return (
                            Payload::reject(
                                RejectCode::CanisterReject,
                                format!(
                                    "management canister: deposit_cycles expects \
                                     `record {{ canister_id : principal }}`: {e}"
                                ),
                            ),
                            cycles,
                        )
                    }
                };
                match self.canisters.get_mut(&target) {
                    Some(c) => {
                        c.balance = c.balance.saturating_add(cycles);
                        return (Payload::Reply(candid::encode_args(()).expect("encodes")), 0);
                    }
                    None => Payload::reject(
                        RejectCode::DestinationInvalid,
                        format!("management canister: deposit_cycles: canister {target} not found"),
                    ),
                }
            }
            "raw_rand" => {
                if !arg.starts_with(b"DIDL") {
                    return (
                        Payload::reject(
                            RejectCode::CanisterReject,
                            "management canister: raw_rand expects a Candid-encoded `()` argument",
                        ),
                        cycles,
                    );
                }
                let mut bytes = Vec::with_capacity(32);
                for _ in 0..4 {
                    bytes.extend_from_slice(&self.next_random().to_le_bytes());
                }
                Payload::Reply(candid_blob(&bytes))
            }
            _ => Payload::reject(
                RejectCode::CanisterReject,
                format!(
                    "management canister: method '{method}' (called by {caller}) is not \
                     implemented by the local IC host; only raw_rand and deposit_cycles are"
                ),
            ),
        };
        (payload, cycles)
    }

    /// Deterministic pseudo-random numbers (splitmix64), so test runs are reproducible.
    fn next_random(&mut self) -> u64 {
        self.rand_state = self.rand_state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rand_state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Candid encoding of a single `blob` value.
fn candid_blob(bytes: &[u8]) -> Vec<u8> {
    // "DIDL", one type (vec nat8), one value of type 0, then the LEB128 length and bytes.
    let mut out = b"DIDL\x01\x6d\x7b\x01\x00".to_vec();
    crate::wasm_module::write_leb128(&mut out, bytes.len() as u64);
    out.extend_from_slice(bytes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candid_blob_decodes() {
        let encoded = candid_blob(&[7u8; 32]);
        let decoded: Vec<u8> = candid::decode_one(&encoded).unwrap();
        assert_eq!(decoded, vec![7u8; 32]);
    }
}
