//! The ICRC-3 representation-independent hash of a `Value`.
//!
//! Blocks link to their parent through this hash (`phash`), the dedup index is keyed by it, and
//! the tip certificate certifies it, so it must match what clients compute bit for bit.

use crate::types::Value;
use candid::{Int, Nat};
use sha2::{Digest, Sha256};

/// A SHA-256 digest.
pub type Hash = [u8; 32];

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

/// Unsigned LEB128 encoding of a `Nat`.
pub fn leb128(n: &Nat) -> Vec<u8> {
    let mut out = Vec::new();
    n.encode(&mut out)
        .expect("writing LEB128 into a Vec cannot fail");
    out
}

/// Signed LEB128 encoding of an `Int`.
pub fn sleb128(i: &Int) -> Vec<u8> {
    let mut out = Vec::new();
    i.encode(&mut out)
        .expect("writing SLEB128 into a Vec cannot fail");
    out
}

/// Hash of a `Value` as the ICRC-3 standard (HASHINGVALUES.md) specifies:
/// Nat → sha256(leb128), Int → sha256(sleb128), Text → sha256(utf8), Blob → sha256(bytes),
/// Array → sha256 of the concatenated element hashes, Map → sha256 of the concatenated
/// (key hash ‖ value hash) pairs sorted lexicographically.
pub fn hash_value(value: &Value) -> Hash {
    match value {
        Value::Nat(n) => sha256(&leb128(n)),
        Value::Int(i) => sha256(&sleb128(i)),
        Value::Text(t) => sha256(t.as_bytes()),
        Value::Blob(b) => sha256(b),
        Value::Array(items) => {
            let mut hasher = Sha256::new();
            for item in items {
                hasher.update(hash_value(item));
            }
            hasher.finalize().into()
        }
        Value::Map(entries) => {
            let mut pairs: Vec<(Hash, Hash)> = entries
                .iter()
                .map(|(k, v)| (sha256(k.as_bytes()), hash_value(v)))
                .collect();
            pairs.sort();
            let mut hasher = Sha256::new();
            for (k, v) in pairs {
                hasher.update(k);
                hasher.update(v);
            }
            hasher.finalize().into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex_of(h: Hash) -> String {
        h.iter().map(|b| format!("{b:02x}")).collect()
    }

    // The test vectors of the ICRC-3 standard (standards/ICRC-3/HASHINGVALUES.md).
    #[test]
    fn spec_vectors_scalars() {
        assert_eq!(
            hex_of(hash_value(&Value::nat(42u64))),
            "684888c0ebb17f374298b65ee2807526c066094c701bcc7ebbe1c1095f494fc1"
        );
        assert_eq!(
            hex_of(hash_value(&Value::Int(Int::from(-42i64)))),
            "de5a6f78116eca62d7fc5ce159d23ae6b889b365a1739ad2cf36f925a140d0cc"
        );
        assert_eq!(
            hex_of(hash_value(&Value::text("Hello, World!"))),
            "dffd6021bb2bd5b0af676290809ec3a53191dd81c7f70a4b28688a362182986f"
        );
        assert_eq!(
            hex_of(hash_value(&Value::blob(vec![1, 2, 3, 4]))),
            "9f64a747e1b97f131fabb6b447296c9b6f0201e79fb3c5356e6c77e89b6a806a"
        );
    }

    #[test]
    fn spec_vector_array() {
        let v = Value::Array(vec![
            Value::nat(3u64),
            Value::text("foo"),
            Value::blob(vec![5, 6]),
        ]);
        assert_eq!(
            hex_of(hash_value(&v)),
            "514a04011caa503990d446b7dec5d79e19c221ae607fb08b2848c67734d468d6"
        );
    }

    #[test]
    fn spec_vector_map() {
        let from = b"\x00\xab\xcd\xef\x00\x12\x34\x00\x56\x78\x9a\x00\xbc\xde\xf0\x00\x01\x23\x45\x67\x89\x00\xab\xcd\xef\x01";
        let to = b"\x00\xab\x0d\xef\x00\x12\x34\x00\x56\x78\x9a\x00\xbc\xde\xf0\x00\x01\x23\x45\x67\x89\x00\xab\xcd\xef\x01";
        let v = Value::Map(vec![
            ("from".into(), Value::blob(from.to_vec())),
            ("to".into(), Value::blob(to.to_vec())),
            ("amount".into(), Value::nat(42u64)),
            ("created_at".into(), Value::nat(1_699_218_263u64)),
            ("memo".into(), Value::nat(0u64)),
        ]);
        assert_eq!(
            hex_of(hash_value(&v)),
            "c56ece650e1de4269c5bdeff7875949e3e2033f85b2d193c2ff4f7f78bdcfc75"
        );
    }

    #[test]
    fn map_hash_ignores_entry_order() {
        let a = Value::Map(vec![
            ("a".into(), Value::nat(1u64)),
            ("b".into(), Value::text("x")),
        ]);
        let b = Value::Map(vec![
            ("b".into(), Value::text("x")),
            ("a".into(), Value::nat(1u64)),
        ]);
        assert_eq!(hash_value(&a), hash_value(&b));
    }

    #[test]
    fn leb128_encodings() {
        assert_eq!(leb128(&Nat::from(0u64)), vec![0x00]);
        assert_eq!(leb128(&Nat::from(127u64)), vec![0x7f]);
        assert_eq!(leb128(&Nat::from(624_485u64)), vec![0xe5, 0x8e, 0x26]);
        assert_eq!(sleb128(&Int::from(-123_456i64)), vec![0xc0, 0xbb, 0x78]);
    }
}
