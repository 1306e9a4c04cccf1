//! Version 2 of the body record, read and no longer written: the bytes of version 1's record
//! body compressed as one LZ4 block (`lz4_flex`) against [`DICTIONARY`]. Layout 4 wrote it;
//! layout 5 packs as version 3 (`super`), and a version 2 body is read until its intent is
//! pruned.
//!
//! The layout: the unpacked length (`u32`, little-endian), then the LZ4 block.

#[cfg(test)]
use super::MAX_UNPACKED;

/// What bodies repeat, least common first: a match is found anywhere in it, and the end is
/// nearest the body's first bytes. Never changed: version 2 is read with exactly these bytes
/// (its fixture pins them).
pub const DICTIONARY: &[u8] = b"\
    \x13icrc2_transfer_from\x1bprepare_icrc2_transfer_from\
    {\"preview_id\":\"\",\"tool\":\"prepare_icrc2_transfer_from\",\"method\":\"icrc2_transfer_from\",\
    \"title\":\"Transfer tokens from the owner's account\",\"effect\":{\"kind\":\"transfer\",\
    \"arguments\":{\"amount\":\"\",\"created_at_time\":\"\",\"fee\":\"\",\"from\":\"\",\"memo\":\"\",\
    \"spender_subaccount\":\"\",\"to\":\"\"}}\
    Transfer tokens from the owner's account (amount , from , to \
    \x0dicrc2_approve\x15prepare_icrc2_approve\
    {\"amount\":\"\",\"canister_id\":\"\",\"spender\":\"\"}\
    {\"preview_id\":\"\",\"tool\":\"prepare_icrc2_approve\",\"method\":\"icrc2_approve\",\
    \"title\":\"Approve a spender\",\"effect\":{\"kind\":\"approve\",\"irreversible\":true,\"replicated\":true},\
    \"arguments\":{\"amount\":\"\",\"created_at_time\":\"\",\"expected_allowance\":\"\",\"expires_at\":\"\",\
    \"fee\":\"\",\"from_subaccount\":\"\",\"memo\":\"\",\"spender\":\"\"}}\
    Approve a spender (amount , spender \
    \x05icrc1\x16prepare_icrc1_transfer\x0eicrc1_transfer\
    {\"amount\":\"\",\"canister_id\":\"-cai\",\"to\":\"\"}\
    DIDL\x06l\x06\xfb\xca\x01\x01\xc6\xfc\xb6\x02\x04\xba\x89\xe5\xc2\x04\x02\xa2\xde\x94\xeb\x06\x02\
    \x82\xf3\xf3\x91\x0c\x05\xd8\xa3\x8c\xa8\x0d}l\x02\xb3\xb0\xda\xc3\x03h\xad\x86\xca\x83\x05\x02n\x03m{n}nx\x01\x00\
    {\"preview_id\":\"\",\"tool\":\"prepare_icrc1_transfer\",\"method\":\"icrc1_transfer\",\"canister\":\"-cai\",\
    \"canister_label\":\"\",\"title\":\"Transfer tokens\",\"effect\":{\"kind\":\"transfer\",\"irreversible\":true,\
    \"replicated\":true},\"arguments\":{\"amount\":\"\",\"created_at_time\":\"\",\"fee\":\"\",\
    \"from_subaccount\":\"\",\"memo\":\"\",\"to\":\"\"}}\
    Transfer tokens (amount , to ";

#[cfg(test)]
/// Version 1's record body packed as version 2 wrote it (the fixture's and the tests' only).
pub fn pack(plain: &[u8]) -> Option<Vec<u8>> {
    if plain.len() > MAX_UNPACKED {
        return None;
    }
    Some(lz4_flex::block::compress_prepend_size_with_dict(
        plain, DICTIONARY,
    ))
}

/// The record body a packed one holds, or why it cannot be read (a length past the bound, a
/// block that does not unpack to exactly its length).
pub fn unpack(packed: &[u8]) -> Result<Vec<u8>, String> {
    let (len, block) = super::stated_length(packed)?;
    let mut out = vec![0u8; len];
    let n = lz4_flex::block::decompress_into_with_dict(block, &mut out, DICTIONARY)
        .map_err(|e| format!("a packed body does not unpack: {e}"))?;
    if n != len {
        return Err(format!(
            "a packed body unpacks to {n} bytes, its length says {len}"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_packed_unpacks_to_itself_at_every_length() {
        let text: Vec<u8> = DICTIONARY
            .iter()
            .chain(b"0123456789abcdef")
            .copied()
            .collect();
        for n in [0, 1, 3, 4, 5, 12, 13, 64, 300, text.len()] {
            let plain = &text[..n];
            assert_eq!(unpack(&pack(plain).unwrap()).unwrap(), plain, "{n} bytes");
        }
        let random: Vec<u8> = (0..5_000u32)
            .map(|k| (k.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert_eq!(unpack(&pack(&random).unwrap()).unwrap(), random);
    }

    #[test]
    fn the_dictionary_is_what_shortens_a_body() {
        let body = br#"{"preview_id":"7","tool":"prepare_icrc1_transfer","method":"icrc1_transfer","canister":"ryjl3-tyaaa-aaaaa-aaaba-cai","arguments":{"amount":"1.5 TKA"}}"#;
        let with = pack(body).unwrap().len();
        let without = lz4_flex::block::compress_prepend_size(body).len();
        assert!(
            with * 2 < without,
            "{with} bytes packed, {without} without the dictionary"
        );
    }

    #[test]
    fn a_packed_body_that_does_not_unpack_is_refused_by_name() {
        let packed = pack(b"a body of some length, long enough to repeat: a body").unwrap();
        let cases: [(Vec<u8>, &str); 5] = [
            (vec![], "has no length"),
            (vec![1, 0], "has no length"),
            (
                (MAX_UNPACKED as u32 + 1).to_le_bytes().to_vec(),
                "more than the",
            ),
            (
                [&9u32.to_le_bytes()[..], &packed[4..]].concat(),
                "does not unpack",
            ),
            (
                [&500u32.to_le_bytes()[..], &packed[4..]].concat(),
                "unpacks to",
            ),
        ];
        for (bytes, says) in cases {
            let e = unpack(&bytes).unwrap_err();
            assert!(e.contains(says), "{bytes:?}: {e}");
        }
        assert!(
            pack(&vec![0; MAX_UNPACKED + 1]).is_none(),
            "too long to pack"
        );
    }
}
