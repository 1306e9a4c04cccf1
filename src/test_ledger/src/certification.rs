//! The ICRC-3 tip certificate's hash tree.
//!
//! The ledger certifies `fork(label("last_block_hash", leaf(hash)),
//! label("last_block_index", leaf(leb128(index))))` (the empty tree while the log is empty):
//! its root hash is the canister's certified data, and the tree itself, CBOR-encoded with the
//! self-describing tag, is returned next to the system's certificate.

use crate::hash::{leb128, Hash};
use candid::Nat;
use ic_certification::hash_tree::{empty, fork, label, leaf, HashTree};

/// The tree type: owned byte storage.
pub type Tree = HashTree<Vec<u8>>;
use serde::Serialize;

/// The tree that certifies the last block (index and hash), or the empty tree.
pub fn tip_tree(tip: Option<(u64, Hash)>) -> Tree {
    match tip {
        None => empty(),
        Some((index, hash)) => fork(
            label("last_block_hash", leaf(hash.to_vec())),
            label("last_block_index", leaf(leb128(&Nat::from(index)))),
        ),
    }
}

/// The 32 bytes to pass to `certified_data_set`.
pub fn certified_data(tip: Option<(u64, Hash)>) -> Hash {
    tip_tree(tip).digest()
}

/// The CBOR encoding of the tree (with the self-describing tag 55799), as the IC spec's
/// certificates encode trees.
pub fn encode_tree(tree: &Tree) -> Vec<u8> {
    let mut out = Vec::new();
    let mut serializer = serde_cbor::Serializer::new(&mut out);
    serializer
        .self_describe()
        .expect("writing CBOR into a Vec cannot fail");
    tree.serialize(&mut serializer)
        .expect("writing CBOR into a Vec cannot fail");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::sha256;

    /// Domain-separated hashing of the IC interface spec, written out independently.
    fn domain(sep: &str) -> Vec<u8> {
        let mut v = vec![sep.len() as u8];
        v.extend_from_slice(sep.as_bytes());
        v
    }

    fn h_leaf(bytes: &[u8]) -> Hash {
        sha256(&[domain("ic-hashtree-leaf"), bytes.to_vec()].concat())
    }

    fn h_labeled(l: &str, sub: Hash) -> Hash {
        sha256(
            &[
                domain("ic-hashtree-labeled"),
                l.as_bytes().to_vec(),
                sub.to_vec(),
            ]
            .concat(),
        )
    }

    fn h_fork(a: Hash, b: Hash) -> Hash {
        sha256(&[domain("ic-hashtree-fork"), a.to_vec(), b.to_vec()].concat())
    }

    #[test]
    fn root_hash_matches_the_spec_formula() {
        let hash = [7u8; 32];
        let expected = h_fork(
            h_labeled("last_block_hash", h_leaf(&hash)),
            h_labeled("last_block_index", h_leaf(&[0xac, 0x02])), // 300 in LEB128
        );
        assert_eq!(certified_data(Some((300, hash))), expected);
    }

    #[test]
    fn empty_log_certifies_the_empty_tree() {
        assert_eq!(certified_data(None), sha256(&domain("ic-hashtree-empty")));
    }

    #[test]
    fn cbor_shape() {
        let bytes = encode_tree(&tip_tree(Some((0, [1u8; 32]))));
        // Self-describing tag, then [1, [2, "last_block_hash", [3, hash]], [2, ...]].
        assert_eq!(&bytes[..3], &[0xd9, 0xd9, 0xf7]);
        let v: serde_cbor::Value = serde_cbor::from_slice(&bytes).unwrap();
        let serde_cbor::Value::Array(fork) = v else {
            panic!("not an array: {v:?}")
        };
        assert_eq!(fork[0], serde_cbor::Value::Integer(1));
        let serde_cbor::Value::Array(left) = &fork[1] else {
            panic!("left is not an array")
        };
        assert_eq!(left[0], serde_cbor::Value::Integer(2));
        assert_eq!(
            left[1],
            serde_cbor::Value::Bytes(b"last_block_hash".to_vec())
        );
        assert_eq!(
            left[2],
            serde_cbor::Value::Array(vec![
                serde_cbor::Value::Integer(3),
                serde_cbor::Value::Bytes(vec![1u8; 32])
            ])
        );
    }
}
