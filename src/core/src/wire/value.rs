//! Values: a cursor over the bytes, typed readers for the shapes the hot paths need, and a
//! skipper for everything else in a message.

use super::op;
use super::table::{Entry, Table, Ty};
use candid::Principal;

/// Nesting the skipper follows before it gives the message to `candid`.
const MAX_DEPTH: usize = 64;
/// Values the skipper passes over before it gives the message to `candid`.
const MAX_SKIPPED: usize = 100_000;

#[derive(Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    skipped: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            skipped: 0,
        }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    /// True when every byte was read (`candid` refuses trailing bytes).
    pub fn at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    pub fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    /// An unsigned LEB128 that fits 64 bits.
    pub fn leb(&mut self) -> Option<u64> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            let low = u64::from(b & 0x7f);
            if shift == 63 && low > 1 {
                return None;
            }
            out |= low << shift;
            if b & 0x80 == 0 {
                return Some(out);
            }
        }
        None
    }

    /// A signed LEB128 that fits 64 bits.
    pub fn sleb(&mut self) -> Option<i64> {
        let mut out = 0i64;
        let mut shift = 0u32;
        loop {
            let b = self.u8()?;
            if shift >= 63 && !matches!(b, 0x00 | 0x7f) {
                return None;
            }
            out |= i64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    out |= -1i64 << shift;
                }
                return Some(out);
            }
            if shift > 63 {
                return None;
            }
        }
    }

    /// A length or a variant's index: at most 9 LEB128 bytes, as `candid` reads them (it
    /// refuses a tenth, where a `nat` value may have one).
    pub fn length(&mut self) -> Option<usize> {
        let mut out = 0u64;
        for shift in (0..63).step_by(7) {
            let b = self.u8()?;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return usize::try_from(out).ok();
            }
        }
        None
    }

    /// The bytes of a `text` value of wire type `t`, not yet checked as UTF-8.
    fn text_bytes(&mut self, t: Ty) -> Option<&'a [u8]> {
        if t != Ty::Prim(op::TEXT) {
            return None;
        }
        let n = self.length()?;
        self.take(n)
    }

    /// A `text` value of wire type `t`.
    pub fn text(&mut self, t: Ty) -> Option<String> {
        std::str::from_utf8(self.text_bytes(t)?)
            .ok()
            .map(str::to_owned)
    }

    /// A `text` value that holds JSON (a tool input): [`Self::text`], with the whitespace a
    /// model pads it with read at a fraction of the cost (`read::json_ws::text`).
    pub fn json_text(&mut self, t: Ty) -> Option<String> {
        crate::read::json_ws::text(self.text_bytes(t)?)
    }

    /// A `nat64` value of wire type `t`.
    pub fn nat64(&mut self, t: Ty) -> Option<u64> {
        if t != Ty::Prim(op::NAT64) {
            return None;
        }
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A `nat` value of wire type `t` that fits 64 bits (larger ones go to `candid`).
    pub fn nat_u64(&mut self, t: Ty) -> Option<u64> {
        if t != Ty::Prim(op::NAT) {
            return None;
        }
        self.leb()
    }

    /// A `bool` value of wire type `t`.
    pub fn bool(&mut self, t: Ty) -> Option<bool> {
        if t != Ty::Prim(op::BOOL) {
            return None;
        }
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    /// A `blob` (`vec nat8`) value of wire type `t`.
    pub fn blob(&mut self, table: &Table, t: Ty) -> Option<Vec<u8>> {
        if !table.is_blob(t) {
            return None;
        }
        let n = self.length()?;
        Some(self.take(n)?.to_vec())
    }

    /// A `principal` value (never an opaque reference).
    pub fn principal(&mut self, t: Ty) -> Option<Principal> {
        if t != Ty::Prim(op::PRINCIPAL) {
            return None;
        }
        if self.u8()? != 1 {
            return None;
        }
        let n = self.length()?;
        if n > 29 {
            return None;
        }
        Principal::try_from_slice(self.take(n)?).ok()
    }

    /// An `opt principal` field value: absent fields, `null` and `reserved` read as none, as
    /// `candid` reads them; any other wire type goes to `candid`.
    pub fn opt_principal(&mut self, table: &Table, t: Option<Ty>) -> Option<Option<Principal>> {
        match t {
            None | Some(Ty::Prim(op::NULL)) | Some(Ty::Prim(op::RESERVED)) => Some(None),
            Some(t) if table.is_opt_of(t, Ty::Prim(op::PRINCIPAL)) => match self.u8()? {
                0 => Some(None),
                1 => Some(Some(self.principal(Ty::Prim(op::PRINCIPAL))?)),
                _ => None,
            },
            Some(_) => None,
        }
    }

    /// An `opt nat64` field value, read as [`Reader::opt_principal`] reads its type: absent
    /// fields, `null` and `reserved` are none; any other wire type goes to `candid`.
    pub fn opt_nat64(&mut self, table: &Table, t: Option<Ty>) -> Option<Option<u64>> {
        match t {
            None | Some(Ty::Prim(op::NULL)) | Some(Ty::Prim(op::RESERVED)) => Some(None),
            Some(t) if table.is_opt_of(t, Ty::Prim(op::NAT64)) => match self.u8()? {
                0 => Some(None),
                1 => Some(Some(self.nat64(Ty::Prim(op::NAT64))?)),
                _ => None,
            },
            Some(_) => None,
        }
    }

    /// Reads a record of wire type `t`: `field` is called with each field's id and type and
    /// answers whether it read the value (`Some(true)`), leaves it to be skipped
    /// (`Some(false)`), or gives up (`None`).
    pub fn record(
        &mut self,
        table: &Table,
        t: Ty,
        mut field: impl FnMut(&mut Self, u32, Ty) -> Option<bool>,
    ) -> Option<()> {
        let fields = table.record(t)?;
        for &(id, ft) in fields {
            if !field(self, id, ft)? {
                self.skip(table, ft, 0)?;
            }
        }
        Some(())
    }

    /// Passes over one value of type `t`, checking it as `candid` would.
    pub fn skip(&mut self, table: &Table, t: Ty, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skipped += 1;
        if self.skipped > MAX_SKIPPED {
            return None;
        }
        match t {
            Ty::Prim(p) => self.skip_prim(p),
            Ty::Entry(i) => match table.entries.get(i)? {
                Entry::Opt(inner) => match self.u8()? {
                    0 => Some(()),
                    1 => self.skip(table, *inner, depth + 1),
                    _ => None,
                },
                Entry::Vec(Ty::Prim(op::NAT8)) => {
                    let n = self.length()?;
                    self.take(n).map(|_| ())
                }
                Entry::Vec(inner) => {
                    let n = self.length()?;
                    if n > MAX_SKIPPED {
                        return None;
                    }
                    for _ in 0..n {
                        self.skip(table, *inner, depth + 1)?;
                    }
                    Some(())
                }
                Entry::Record(fields) => {
                    for &(_, ft) in fields {
                        self.skip(table, ft, depth + 1)?;
                    }
                    Some(())
                }
                Entry::Variant(cases) => {
                    let k = self.length()?;
                    let &(_, ct) = cases.get(k)?;
                    self.skip(table, ct, depth + 1)
                }
                Entry::Func => None,
            },
        }
    }

    fn skip_prim(&mut self, p: i64) -> Option<()> {
        let fixed = match p {
            op::NULL | op::RESERVED => 0,
            op::BOOL => return self.bool(Ty::Prim(op::BOOL)).map(|_| ()),
            op::NAT8 | op::INT8 => 1,
            op::NAT16 | op::INT16 => 2,
            op::NAT32 | op::INT32 | op::FLOAT32 => 4,
            op::NAT64 | op::INT64 | op::FLOAT64 => 8,
            op::NAT | op::INT => {
                // Any length: bytes with the high bit set, then one without.
                while self.u8()? & 0x80 != 0 {}
                return Some(());
            }
            op::TEXT => return self.text(Ty::Prim(op::TEXT)).map(|_| ()),
            op::PRINCIPAL => return self.principal(Ty::Prim(op::PRINCIPAL)).map(|_| ()),
            _ => return None,
        };
        self.take(fixed).map(|_| ())
    }
}
