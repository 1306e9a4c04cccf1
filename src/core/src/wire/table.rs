//! The type table of a message, flat: entries refer to each other by index.

use super::op;
use super::value::Reader;

/// Entries a message may declare (`candid` refuses more too).
const MAX_ENTRIES: u64 = 10_000;

/// A type as the wire names it: a primitive opcode or an entry of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ty {
    Prim(i64),
    Entry(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Opt(Ty),
    Vec(Ty),
    /// Fields by id, ids strictly increasing.
    Record(Vec<(u32, Ty)>),
    Variant(Vec<(u32, Ty)>),
    /// Function references are never read on the fast path; their types are checked and kept
    /// opaque. (A message with a service type is left to `candid` whole.)
    Func,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub entries: Vec<Entry>,
    /// The types of the message's arguments.
    pub args: Vec<Ty>,
}

impl Table {
    pub(super) fn read(r: &mut Reader) -> Option<Table> {
        let len = r.leb()?;
        if len > MAX_ENTRIES {
            return None;
        }
        let len = len as usize;
        let mut entries = Vec::with_capacity(len.min(64));
        for _ in 0..len {
            entries.push(entry(r, len)?);
        }
        let n = r.leb()?;
        if n > MAX_ENTRIES {
            return None;
        }
        let mut args = Vec::with_capacity(n as usize);
        for _ in 0..n {
            args.push(index(r, len)?);
        }
        Some(Table { entries, args })
    }

    /// What `t` is, when it is an entry.
    pub fn entry(&self, t: Ty) -> Option<&Entry> {
        match t {
            Ty::Entry(i) => self.entries.get(i),
            Ty::Prim(_) => None,
        }
    }

    /// The fields of a record type.
    pub fn record(&self, t: Ty) -> Option<&[(u32, Ty)]> {
        match self.entry(t)? {
            Entry::Record(f) => Some(f),
            _ => None,
        }
    }

    /// The cases of a variant type.
    pub fn variant(&self, t: Ty) -> Option<&[(u32, Ty)]> {
        match self.entry(t)? {
            Entry::Variant(f) => Some(f),
            _ => None,
        }
    }

    /// True when `t` is `opt inner`.
    pub fn is_opt_of(&self, t: Ty, inner: Ty) -> bool {
        matches!(self.entry(t), Some(Entry::Opt(x)) if *x == inner)
    }

    /// True when `t` is `vec nat8` (`blob`).
    pub fn is_blob(&self, t: Ty) -> bool {
        matches!(self.entry(t), Some(Entry::Vec(Ty::Prim(op::NAT8))))
    }
}

/// A type reference inside the table or in the argument list.
fn index(r: &mut Reader, len: usize) -> Option<Ty> {
    let i = r.sleb()?;
    if i >= 0 {
        return ((i as u64) < len as u64).then_some(Ty::Entry(i as usize));
    }
    (i >= op::EMPTY || i == op::PRINCIPAL).then_some(Ty::Prim(i))
}

fn fields(r: &mut Reader, len: usize) -> Option<Vec<(u32, Ty)>> {
    let n = r.leb()?;
    if n > u32::MAX as u64 {
        return None;
    }
    let mut out: Vec<(u32, Ty)> = Vec::with_capacity((n as usize).min(64));
    for _ in 0..n {
        let id = u32::try_from(r.leb()?).ok()?;
        if out.last().is_some_and(|(prev, _)| *prev >= id) {
            return None;
        }
        out.push((id, index(r, len)?));
    }
    Some(out)
}

/// An entry: its constructor is one byte (`candid` reads the opcode as a magic byte, and any
/// other bytes as a future type, so an opcode written in more bytes than one is not read here).
fn entry(r: &mut Reader, len: usize) -> Option<Entry> {
    match r.u8()? {
        0x6e => Some(Entry::Opt(index(r, len)?)),
        0x6d => Some(Entry::Vec(index(r, len)?)),
        0x6c => Some(Entry::Record(fields(r, len)?)),
        0x6b => Some(Entry::Variant(fields(r, len)?)),
        0x6a => {
            for _ in 0..2 {
                let n = r.leb()?;
                for _ in 0..n {
                    index(r, len)?;
                }
            }
            let annotations = r.u8()?;
            if annotations > 1 {
                return None;
            }
            if annotations == 1 && !matches!(r.u8()?, 1..=3) {
                return None;
            }
            Some(Entry::Func)
        }
        // Services (method names and their function types) and future types are left to `candid`.
        _ => None,
    }
}
