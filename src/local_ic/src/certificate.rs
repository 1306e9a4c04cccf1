//! The data certificate a canister sees in a non-replicated query (`ic0.data_certificate_*`).
//!
//! The form follows the interface specification's *Certification* section: a CBOR map with the
//! self-describing tag (55799) holding
//!
//! ```text
//! { "tree": fork(labeled("canister", labeled(<canister id>, labeled("certified_data", leaf(<data>)))),
//!                labeled("time", leaf(<LEB128 of the canister's time in ns>))),
//!   "signature": <48 zero bytes> }
//! ```
//!
//! with the hash tree encoded as the specification says (`[0]` empty, `[1, l, r]` fork,
//! `[2, label, t]` labeled, `[3, blob]` leaf, `[4, hash]` pruned) and no `delegation` (the
//! local host is one subnet, which plays the root subnet). **The signature is not a BLS
//! signature**: it is 48 zero bytes, and nothing in the host signs or verifies anything (there is
//! no root key either). A client that checks the tree — the lookup of
//! `/canister/<id>/certified_data` and of `/time`, the root hash — works; one that checks the
//! signature against a root key must be told not to.

use candid::Principal;

/// The CBOR self-describing tag (RFC 8949 §3.4.6) real certificates carry.
pub const SELF_DESCRIBE_TAG: u64 = 55_799;
/// Length of a BLS signature on the IC; the host's certificates carry this many zero bytes.
pub const SIGNATURE_LEN: usize = 48;

/// A CBOR data item head: major type and argument, shortest form (RFC 8949 §3).
fn head(out: &mut Vec<u8>, major: u8, n: u64) {
    let m = major << 5;
    match n {
        0..=23 => out.push(m | n as u8),
        24..=0xff => out.extend([m | 24, n as u8]),
        0x100..=0xffff => {
            out.push(m | 25);
            out.extend((n as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(m | 26);
            out.extend((n as u32).to_be_bytes());
        }
        _ => {
            out.push(m | 27);
            out.extend(n.to_be_bytes());
        }
    }
}

fn uint(out: &mut Vec<u8>, n: u64) {
    head(out, 0, n);
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    head(out, 2, b.len() as u64);
    out.extend_from_slice(b);
}

fn text(out: &mut Vec<u8>, t: &str) {
    head(out, 3, t.len() as u64);
    out.extend_from_slice(t.as_bytes());
}

fn array(out: &mut Vec<u8>, len: u64) {
    head(out, 4, len);
}

/// Unsigned LEB128, as the state tree encodes natural numbers.
pub fn leb128(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

fn labeled(out: &mut Vec<u8>, label: &[u8]) {
    array(out, 3);
    uint(out, 2);
    bytes(out, label);
}

fn leaf(out: &mut Vec<u8>, value: &[u8]) {
    array(out, 2);
    uint(out, 3);
    bytes(out, value);
}

/// The CBOR hash tree with `/canister/<canister>/certified_data` and `/time`.
pub fn data_tree(canister: Principal, certified_data: &[u8], time_nanos: u64) -> Vec<u8> {
    let mut out = Vec::new();
    array(&mut out, 3);
    uint(&mut out, 1); // fork: "canister" sorts before "time"
    labeled(&mut out, b"canister");
    labeled(&mut out, canister.as_slice());
    labeled(&mut out, b"certified_data");
    leaf(&mut out, certified_data);
    labeled(&mut out, b"time");
    leaf(&mut out, &leb128(time_nanos));
    out
}

/// The whole certificate (tagged CBOR map `{ tree, signature }`), as described in the module
/// documentation.
pub fn data_certificate(canister: Principal, certified_data: &[u8], time_nanos: u64) -> Vec<u8> {
    let mut out = Vec::new();
    head(&mut out, 6, SELF_DESCRIBE_TAG);
    head(&mut out, 5, 2);
    text(&mut out, "tree");
    out.extend(data_tree(canister, certified_data, time_nanos));
    text(&mut out, "signature");
    bytes(&mut out, &[0; SIGNATURE_LEN]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_use_the_shortest_form() {
        for (n, want) in [
            (0u64, vec![0x00]),
            (23, vec![0x17]),
            (24, vec![0x18, 24]),
            (255, vec![0x18, 0xff]),
            (256, vec![0x19, 0x01, 0x00]),
            (65_536, vec![0x1a, 0, 1, 0, 0]),
            (1 << 32, vec![0x1b, 0, 0, 0, 1, 0, 0, 0, 0]),
        ] {
            let mut out = vec![];
            uint(&mut out, n);
            assert_eq!(out, want, "{n}");
        }
        let mut out = vec![];
        head(&mut out, 6, SELF_DESCRIBE_TAG);
        assert_eq!(out, [0xd9, 0xd9, 0xf7], "the self-describing tag");
    }

    #[test]
    fn leb128_matches_the_standard_examples() {
        assert_eq!(leb128(0), [0]);
        assert_eq!(leb128(127), [0x7f]);
        assert_eq!(leb128(128), [0x80, 0x01]);
        assert_eq!(leb128(624_485), [0xe5, 0x8e, 0x26]);
    }
}
