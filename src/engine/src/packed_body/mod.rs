//! A settled intent's body packed: the body record's bytes rewritten once its intent is
//! settled and its stamp's floor has gone (the prune task's first run, a day after the stamp;
//! `send::schedule_prune`), so no prepare or confirm pays for it; a packed body reads as any
//! other (`Versioned::decode`).
//!
//! Version 3 (written since layout 5): the bytes of version 1's record body with the hex and
//! the principals' text it spells put back as bytes ([`spelling`]), then compressed as one
//! LZ4 block (`lz4_flex`) against [`DICTIONARY`]: sample bodies of the ICRC packs. A
//! transfer's body (~990 bytes plain, four 256-byte chunks of the body slab) packs to ~200
//! bytes, one chunk: its spelled bytes are found in the argument that holds them, its keys,
//! names and types in the sample, and what is left is its values. Version 2 (layout 4: the
//! plain bytes against a dictionary of text, ~450 bytes, two chunks) is still read ([`lz4`]).
//!
//! LZ4 rather than deflate: deflate (zlib-rs, level 1) packs a transfer ~15 % shorter, but
//! costs ~3 times the instructions (its 160 KiB of tables are made and cleared for each body),
//! and LZ4's ~200 bytes already fit one chunk.
//!
//! The layout: the unpacked length (`u32`, little-endian), then the LZ4 block of the tokens.
//! Each version's dictionary is part of the stored layout: it is read with exactly those bytes
//! for as long as it is read (fixtures pin them); another dictionary would be a new version.

pub mod lz4;
pub mod spelling;

/// The most bytes a packed body unpacks to. A body holds an input (at most 64 KiB), the
/// argument's bytes, the preview and the summary: a few KiB in practice. A longer one is not
/// packed, and a stored length above it is refused before anything is allocated.
pub const MAX_UNPACKED: usize = 1 << 20;

/// Three bodies as a prepare writes them, spelled bytes put back ([`spelling::unspell`]): an
/// `icrc2_transfer_from`, an `icrc2_approve` and an `icrc1_transfer` (the commonest, last:
/// nearest), as the engine's test world prepared them on 2026-12-06. A body of the ICRC packs
/// is found in them but for its values (its principals, subaccount, memo, amount, times), so it
/// packs to ~200 bytes. Never changed (see the module's note; `stored_layout` pins its
/// digest).
pub const DICTIONARY: &[u8] = include_bytes!("dictionary_v3.bin");

/// Version 1's record body packed as version 3, or `None` when it is longer than
/// [`MAX_UNPACKED`], packed it would be no shorter, or it would not read back as itself.
pub fn pack(plain: &[u8]) -> Option<Vec<u8>> {
    if plain.len() > MAX_UNPACKED {
        return None;
    }
    let tokens = spelling::unspell(plain);
    let mut out = vec![0u8; 4 + lz4_flex::block::get_maximum_output_size(tokens.len())];
    out[..4].copy_from_slice(&(plain.len() as u32).to_le_bytes());
    let n = lz4_flex::block::compress_into_with_dict(&tokens, &mut out[4..], DICTIONARY).ok()?;
    out.truncate(4 + n);
    // Read back before the plain body is freed: should spelling or the compressor ever not
    // give back these bytes, the body stays plain rather than unreadable.
    (out.len() < 4 + plain.len() && unpack(&out).is_ok_and(|back| back == plain)).then_some(out)
}

/// A packed body's stated unpacked length and the bytes after it (versions 2 and 3 alike),
/// refused before anything is allocated when it is missing or past [`MAX_UNPACKED`].
fn stated_length(packed: &[u8]) -> Result<(usize, &[u8]), String> {
    let (len, rest) = packed
        .split_first_chunk::<4>()
        .ok_or_else(|| format!("a packed body of {} bytes has no length", packed.len()))?;
    let len = u32::from_le_bytes(*len) as usize;
    if len > MAX_UNPACKED {
        return Err(format!(
            "a packed body says it unpacks to {len} bytes, more than the {MAX_UNPACKED} allowed"
        ));
    }
    Ok((len, rest))
}

/// The record body a packed one (version 3) holds, or why it cannot be read (a length past
/// the bound, a block that does not unpack, tokens that do not spell exactly its length).
pub fn unpack(packed: &[u8]) -> Result<Vec<u8>, String> {
    let (len, block) = stated_length(packed)?;
    // Tokens are never longer than what they spell, but for `MARK` itself (two bytes for one).
    let mut tokens = vec![0u8; 2 * len];
    let n = lz4_flex::block::decompress_into_with_dict(block, &mut tokens, DICTIONARY)
        .map_err(|e| format!("a packed body does not unpack: {e}"))?;
    tokens.truncate(n);
    let plain = spelling::respell(&tokens, len)?;
    if plain.len() != len {
        return Err(format!(
            "a packed body unpacks to {} bytes, its length says {len}",
            plain.len()
        ));
    }
    Ok(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_packed_unpacks_to_itself_at_every_length() {
        let text: Vec<u8> = DICTIONARY
            .iter()
            .chain(
                b"0123456789abcdef k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae",
            )
            .copied()
            .collect();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let random: Vec<u8> = (0..5_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        let mut packed_some = 0;
        for n in [0, 1, 3, 4, 5, 12, 13, 64, 300, text.len()] {
            let plain = &text[..n];
            if let Some(packed) = pack(plain) {
                assert!(
                    packed.len() < 4 + n,
                    "{n} bytes packed into {}",
                    packed.len()
                );
                assert_eq!(unpack(&packed).unwrap(), plain, "{n} bytes");
                packed_some += 1;
            }
        }
        assert!(packed_some >= 4, "only {packed_some} packed");
        assert!(pack(&random).is_none(), "random bytes do not shorten");
        let mostly_random = [&random[..], &[0xfe; 3000][..]].concat();
        assert_eq!(
            unpack(&pack(&mostly_random).unwrap()).unwrap(),
            mostly_random
        );
    }

    #[test]
    fn a_packed_body_that_does_not_unpack_is_refused_by_name() {
        let packed = pack(b"a body of some length, long enough to repeat: a body, a body").unwrap();
        let cases: [(Vec<u8>, &str); 6] = [
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
                [&40u32.to_le_bytes()[..], &packed[4..]].concat(),
                "spells out more than the 40 bytes",
            ),
            (packed[..packed.len() - 2].to_vec(), "does not unpack"),
        ];
        for (bytes, says) in cases {
            let e = unpack(&bytes).unwrap_err();
            assert!(e.contains(says), "{bytes:?}: {e}");
        }
        let longer = [&500u32.to_le_bytes()[..], &packed[4..]].concat();
        assert!(unpack(&longer).unwrap_err().contains("its length says 500"));
        let mut garbled = packed.clone();
        garbled[4] ^= 0xff;
        assert!(unpack(&garbled).is_err());
        assert!(
            pack(&vec![0; MAX_UNPACKED + 1]).is_none(),
            "too long to pack"
        );
    }
}
