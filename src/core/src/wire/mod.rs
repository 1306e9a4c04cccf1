//! Candid on the wire for the canister's hot paths, without the general decoder.
//!
//! One decoding by the `candid` crate costs 200 000 – 700 000 instructions in a canister (type
//! table to a type environment, subtype checks, serde); a confirm does three. These readers
//! parse the type table once into a flat list, follow only the fields asked for and skip the
//! rest. They are strict: any message they do not recognize exactly (another type than the one
//! expected, an opaque reference, a duplicate or unsorted field id, trailing bytes, ...) answers
//! `None`, and the caller decodes it with the `candid` crate. So the fast path never reads a
//! message differently from `candid`; it only reads the common ones cheaper. The writer emits the
//! bytes `candid` would, with the type table `candid` made once.

pub mod blocks;
mod table;
mod value;
mod write;

pub use table::{Entry, Table, Ty};
pub use value::Reader;
pub use write::Writer;

/// Candid's type opcodes (the Candid specification, "Binary Format").
pub mod op {
    pub const NULL: i64 = -1;
    pub const BOOL: i64 = -2;
    pub const NAT: i64 = -3;
    pub const INT: i64 = -4;
    pub const NAT8: i64 = -5;
    pub const NAT16: i64 = -6;
    pub const NAT32: i64 = -7;
    pub const NAT64: i64 = -8;
    pub const INT8: i64 = -9;
    pub const INT16: i64 = -10;
    pub const INT32: i64 = -11;
    pub const INT64: i64 = -12;
    pub const FLOAT32: i64 = -13;
    pub const FLOAT64: i64 = -14;
    pub const TEXT: i64 = -15;
    pub const RESERVED: i64 = -16;
    pub const EMPTY: i64 = -17;
    pub const OPT: i64 = -18;
    pub const VEC: i64 = -19;
    pub const RECORD: i64 = -20;
    pub const VARIANT: i64 = -21;
    pub const FUNC: i64 = -22;
    pub const SERVICE: i64 = -23;
    pub const PRINCIPAL: i64 = -24;
}

/// The id of a record field or variant case named `name` (Candid's label hash).
pub fn label(name: &str) -> u32 {
    candid::idl_hash(name)
}

/// `candid::idl_hash` at compile time (the engine's custody tests check it against candid's),
/// so that the standards' field and case lists cost nothing to look up.
pub const fn field_hash(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut h: u32 = 0;
    let mut i = 0;
    while i < b.len() {
        h = h.wrapping_mul(223).wrapping_add(b[i] as u32);
        i += 1;
    }
    h
}

/// `candid`'s bound on a message's header (`DEFAULT_MAX_HEADER_LEN`).
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// A message: its type table and the position of its values.
pub fn parse(bytes: &[u8]) -> Option<(Table, Reader<'_>)> {
    let mut r = Reader::new(bytes);
    if r.take(4)? != b"DIDL" {
        return None;
    }
    let table = Table::read(&mut r)?;
    // `candid` reads the header ("DIDL", the type table and the argument types) from the first
    // 64 KiB only and refuses a longer one.
    if r.position() > MAX_HEADER_BYTES {
        return None;
    }
    Some((table, r))
}

/// The bytes of `bytes` before its values ("DIDL", the type table and the argument types) and
/// the table they hold: what a writer keeps to write more messages of the same types.
pub fn header_of(bytes: &[u8]) -> Option<(&[u8], Table)> {
    let (table, r) = parse(bytes)?;
    Some((&bytes[..r.position()], table))
}

mod typed;
pub use typed::{decode_with_types, encode_with_header};
