//! ICRC-3 block pages (`icrc3_get_blocks` replies) read straight off the wire, for the
//! reconciliation's scan: per block only what matching an intent needs (its id; `btype` or
//! `tx.op`; the `from`, `to` and `spender` accounts; `amt`; `tx.fee` and the block's `fee`;
//! `memo`; `tx.ts`; `expected_allowance`; `expires_at`), every other value passed over without
//! being allocated.
//!
//! The reading is the one the general path makes (the whole reply decoded into ICRC-3 `Value`s,
//! then each block's transaction read from its maps): a map's key counts at its first
//! occurrence, a value of another kind than the field takes reads as absent, an account is
//! `[owner blob, subaccount blob?]`. It declines (`None`, and the caller decodes the reply with
//! `candid`) whenever the reply is not exactly of the expected shape: another type for the
//! result, a block or a `Value` case (extra record fields are passed over), a `Value` with a
//! case the standard does not have, a log length beyond 64 bits, trailing bytes, a page that
//! names archives (their callbacks' function types are `candid`'s to check), ...

use super::label;
use super::op;
use super::table::{Entry, Table, Ty};
use super::value::Reader;
use candid::Principal;
use num_bigint::BigUint;

/// Nesting of `Value`s the reader passes over before it leaves the reply to `candid`.
const MAX_DEPTH: usize = 64;

/// An ICRC-1 account with its subaccount made explicit (none is 32 zero bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub owner: Principal,
    pub subaccount: [u8; 32],
}

impl std::fmt::Display for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.owner, hex::encode(self.subaccount))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Transfer,
    Approve,
    Mint,
    Burn,
}

/// The operation a block's `btype` (`1xfer`, `2approve`, ...) or its `tx.op` (`xfer`,
/// `approve`, ...) names.
pub fn op_of(name: &str) -> Option<Op> {
    Some(match name {
        "1xfer" | "2xfer" | "xfer" => Op::Transfer,
        "2approve" | "approve" => Op::Approve,
        "1mint" | "mint" => Op::Mint,
        "1burn" | "burn" => Op::Burn,
        _ => return None,
    })
}

/// A block's transaction as matching reads it; `None` where a field is absent or does not read
/// (a value of another kind, an account that is not `[owner, subaccount?]`, a negative `Int`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tx {
    pub op: Option<Op>,
    pub from: Option<Account>,
    pub to: Option<Account>,
    pub spender: Option<Account>,
    pub amount: Option<BigUint>,
    pub fee: Option<BigUint>,
    /// The block's own `fee` (what was charged, where the caller stated none).
    pub block_fee: Option<BigUint>,
    pub memo: Option<Vec<u8>>,
    pub created_at_time: Option<BigUint>,
    pub expected_allowance: Option<BigUint>,
    pub expires_at: Option<BigUint>,
}

/// One `icrc3_get_blocks` reply without archives: its log length and its blocks in order, each
/// with its transaction (`None` when the block is not a map with a `tx` map). A block whose id
/// does not fit 64 bits is left out, as the general path leaves it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockPage {
    pub log_length: u64,
    pub blocks: Vec<(u64, Option<Tx>)>,
}

/// The cases of ICRC-3's `Value` (and the cycles ledger's `Nat64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Blob,
    Text,
    Nat,
    Int,
    Nat64,
    Array,
    Map,
}

/// The page's `Value` type: its kind for each case index on the wire.
fn value_kinds(table: &Table, value: Ty) -> Option<Vec<Kind>> {
    let cases = table.variant(value)?;
    let mut kinds = Vec::with_capacity(cases.len());
    for &(id, t) in cases {
        let kind = if id == label("Blob") && table.is_blob(t) {
            Kind::Blob
        } else if id == label("Text") && t == Ty::Prim(op::TEXT) {
            Kind::Text
        } else if id == label("Nat") && t == Ty::Prim(op::NAT) {
            Kind::Nat
        } else if id == label("Int") && t == Ty::Prim(op::INT) {
            Kind::Int
        } else if id == label("Nat64") && t == Ty::Prim(op::NAT64) {
            Kind::Nat64
        } else if id == label("Array") && table.entry(t) == Some(&Entry::Vec(value)) {
            Kind::Array
        } else if id == label("Map") && is_map_of(table, t, value) {
            Kind::Map
        } else {
            return None;
        };
        kinds.push(kind);
    }
    Some(kinds)
}

/// True when `t` is `vec record { text; value }`, exactly.
fn is_map_of(table: &Table, t: Ty, value: Ty) -> bool {
    let Some(Entry::Vec(entry)) = table.entry(t) else {
        return false;
    };
    matches!(table.record(*entry), Some([(0, Ty::Prim(op::TEXT)), (1, v)]) if *v == value)
}

/// The fields of a record type, with the ids `required` all present.
fn record_with<'t>(table: &'t Table, t: Ty, required: &[u32]) -> Option<&'t [(u32, Ty)]> {
    let fields = table.record(t)?;
    required
        .iter()
        .all(|id| fields.iter().any(|(f, _)| f == id))
        .then_some(fields)
}

/// Reads a whole `icrc3_get_blocks` reply, or `None` to leave it to `candid`.
pub fn read_page(bytes: &[u8]) -> Option<BlockPage> {
    let (table, r) = super::parse(bytes)?;
    let [result] = table.args[..] else {
        return None;
    };
    let (log_length, blocks, archived) = (
        label("log_length"),
        label("blocks"),
        label("archived_blocks"),
    );
    let fields = record_with(&table, result, &[log_length, blocks, archived])?;
    let block_type = fields.iter().find(|(id, _)| *id == blocks)?.1;
    let Some(Entry::Vec(block_with_id)) = table.entry(block_type) else {
        return None;
    };
    let (id, block) = (label("id"), label("block"));
    let block_fields = record_with(&table, *block_with_id, &[id, block])?;
    let value = block_fields.iter().find(|(f, _)| *f == block)?.1;
    let mut p = Page {
        bytes,
        table: &table,
        kinds: value_kinds(&table, value)?,
        r,
    };
    let mut page = BlockPage {
        log_length: 0,
        blocks: vec![],
    };
    for &(f, t) in fields {
        if f == log_length {
            if t != Ty::Prim(op::NAT) {
                return None;
            }
            page.log_length = small(p.leb_bytes()?)?;
        } else if f == blocks {
            let n = p.len()?;
            page.blocks.reserve(n.min(1_000));
            for _ in 0..n {
                if let Some(b) = p.block_with_id(block_fields, id, block)? {
                    page.blocks.push(b);
                }
            }
        } else if f == archived {
            // Only a page without archives; the element type does not matter then.
            if !matches!(p.table.entry(t), Some(Entry::Vec(_))) || p.len()? != 0 {
                return None;
            }
        } else {
            p.r.skip(p.table, t, 1)?;
        }
    }
    p.r.at_end().then_some(page)
}

struct Page<'a, 't> {
    bytes: &'a [u8],
    table: &'t Table,
    kinds: Vec<Kind>,
    r: Reader<'a>,
}

impl<'a> Page<'a, '_> {
    fn len(&mut self) -> Option<usize> {
        self.r.length()
    }

    /// A `text` value, borrowed.
    fn str(&mut self) -> Option<&'a str> {
        let n = self.len()?;
        std::str::from_utf8(self.r.take(n)?).ok()
    }

    fn blob(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        self.r.take(n)
    }

    /// The bytes of a LEB128 number of any length.
    fn leb_bytes(&mut self) -> Option<&'a [u8]> {
        let start = self.r.position();
        while self.r.u8()? & 0x80 != 0 {}
        self.bytes.get(start..self.r.position())
    }

    /// The case of the next `Value`.
    fn kind(&mut self) -> Option<Kind> {
        let k = self.r.length()?;
        self.kinds.get(k).copied()
    }

    /// Passes over a `Value` of case `kind`, checking it as `candid` would.
    fn skip_case(&mut self, kind: Kind, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match kind {
            Kind::Blob => {
                self.blob()?;
            }
            Kind::Text => {
                self.str()?;
            }
            Kind::Nat | Kind::Int => {
                self.leb_bytes()?;
            }
            Kind::Nat64 => {
                self.r.take(8)?;
            }
            Kind::Array => {
                for _ in 0..self.len()? {
                    let k = self.kind()?;
                    self.skip_case(k, depth + 1)?;
                }
            }
            Kind::Map => {
                for _ in 0..self.len()? {
                    self.str()?;
                    let k = self.kind()?;
                    self.skip_case(k, depth + 1)?;
                }
            }
        }
        Some(())
    }

    /// A `Value` read as a natural number (`Nat`, a non-negative `Int`, `Nat64`); any other
    /// reads as none.
    fn nat(&mut self, kind: Kind) -> Option<Option<BigUint>> {
        Some(match kind {
            Kind::Nat => Some(unsigned(self.leb_bytes()?)),
            Kind::Int => {
                let b = self.leb_bytes()?;
                // A signed LEB128 is negative when its last byte's sign bit is set.
                (b.last()? & 0x40 == 0).then(|| unsigned(b))
            }
            Kind::Nat64 => Some(BigUint::from(u64::from_le_bytes(
                self.r.take(8)?.try_into().ok()?,
            ))),
            other => {
                self.skip_case(other, 1)?;
                None
            }
        })
    }

    fn text(&mut self, kind: Kind) -> Option<Option<&'a str>> {
        if kind == Kind::Text {
            return self.str().map(Some);
        }
        self.skip_case(kind, 1)?;
        Some(None)
    }

    fn memo(&mut self, kind: Kind) -> Option<Option<Vec<u8>>> {
        if kind == Kind::Blob {
            return self.blob().map(|b| Some(b.to_vec()));
        }
        self.skip_case(kind, 1)?;
        Some(None)
    }

    /// An `Array [Blob owner, Blob subaccount?]`.
    fn account(&mut self, kind: Kind) -> Option<Option<Account>> {
        if kind != Kind::Array {
            self.skip_case(kind, 1)?;
            return Some(None);
        }
        let n = self.len()?;
        let mut ok = matches!(n, 1 | 2);
        let mut owner = None;
        let mut subaccount = [0; 32];
        for i in 0..n {
            match (i, self.kind()?) {
                (0, Kind::Blob) => owner = Principal::try_from_slice(self.blob()?).ok(),
                (1, Kind::Blob) => match <[u8; 32]>::try_from(self.blob()?) {
                    Ok(s) => subaccount = s,
                    Err(_) => ok = false,
                },
                (_, k) => {
                    self.skip_case(k, 2)?;
                    ok = false;
                }
            }
        }
        Some(
            owner
                .filter(|_| ok)
                .map(|owner| Account { owner, subaccount }),
        )
    }

    /// One element of `blocks`: its id (`None` beyond 64 bits) and transaction.
    fn block_with_id(
        &mut self,
        fields: &[(u32, Ty)],
        id: u32,
        block: u32,
    ) -> Option<Option<(u64, Option<Tx>)>> {
        let mut block_id = None;
        let mut tx = None;
        for &(f, t) in fields {
            if f == id {
                if t != Ty::Prim(op::NAT) {
                    return None;
                }
                block_id = Some(small(self.leb_bytes()?));
            } else if f == block {
                let k = self.kind()?;
                tx = Some(self.block(k)?);
            } else {
                self.r.skip(self.table, t, 1)?;
            }
        }
        Some(block_id?.map(|i| (i, tx.flatten())))
    }

    /// A block's transaction: `None` unless the block is a map with a `tx` map.
    fn block(&mut self, kind: Kind) -> Option<Option<Tx>> {
        if kind != Kind::Map {
            self.skip_case(kind, 1)?;
            return Some(None);
        }
        let mut btype = None;
        let mut block_fee = None;
        let mut tx = None;
        for _ in 0..self.len()? {
            let key = self.str()?;
            let k = self.kind()?;
            match key {
                "btype" if btype.is_none() => btype = Some(self.text(k)?),
                "fee" if block_fee.is_none() => block_fee = Some(self.nat(k)?),
                "tx" if tx.is_none() => tx = Some(self.tx(k)?),
                _ => self.skip_case(k, 1)?,
            }
        }
        let Some(Some((op, mut tx))) = tx else {
            return Some(None);
        };
        tx.op = match (btype.flatten(), op) {
            (Some(b), _) => op_of(b),
            (None, Some(o)) => op_of(o),
            (None, None) => None,
        };
        tx.block_fee = block_fee.flatten();
        Some(Some(tx))
    }

    /// A block's `tx` map (`None` when it is not a map), with its `op` text.
    fn tx(&mut self, kind: Kind) -> Option<Option<(Option<&'a str>, Tx)>> {
        if kind != Kind::Map {
            self.skip_case(kind, 1)?;
            return Some(None);
        }
        let mut op = None;
        let (mut from, mut to, mut spender) = (None, None, None);
        let (mut amount, mut fee, mut ts) = (None, None, None);
        let (mut expected_allowance, mut expires_at, mut memo) = (None, None, None);
        for _ in 0..self.len()? {
            let key = self.str()?;
            let k = self.kind()?;
            match key {
                "op" if op.is_none() => op = Some(self.text(k)?),
                "from" if from.is_none() => from = Some(self.account(k)?),
                "to" if to.is_none() => to = Some(self.account(k)?),
                "spender" if spender.is_none() => spender = Some(self.account(k)?),
                "amt" if amount.is_none() => amount = Some(self.nat(k)?),
                "fee" if fee.is_none() => fee = Some(self.nat(k)?),
                "memo" if memo.is_none() => memo = Some(self.memo(k)?),
                "ts" if ts.is_none() => ts = Some(self.nat(k)?),
                "expected_allowance" if expected_allowance.is_none() => {
                    expected_allowance = Some(self.nat(k)?)
                }
                "expires_at" if expires_at.is_none() => expires_at = Some(self.nat(k)?),
                _ => self.skip_case(k, 1)?,
            }
        }
        Some(Some((
            op.flatten(),
            Tx {
                op: None,
                from: from.flatten(),
                to: to.flatten(),
                spender: spender.flatten(),
                amount: amount.flatten(),
                fee: fee.flatten(),
                block_fee: None,
                memo: memo.flatten(),
                created_at_time: ts.flatten(),
                expected_allowance: expected_allowance.flatten(),
                expires_at: expires_at.flatten(),
            },
        )))
    }
}

/// The number an unsigned LEB128 writes, when it fits 64 bits.
fn small(leb: &[u8]) -> Option<u64> {
    if leb.len() <= 9 {
        return Some(
            leb.iter()
                .enumerate()
                .fold(0u64, |v, (i, b)| v | (u64::from(b & 0x7f) << (7 * i))),
        );
    }
    u64::try_from(unsigned(leb)).ok()
}

/// The number an unsigned LEB128 (or a non-negative signed one) writes, any length.
fn unsigned(leb: &[u8]) -> BigUint {
    if leb.len() <= 9 {
        return BigUint::from(small(leb).unwrap_or_default());
    }
    let digits: Vec<u8> = leb.iter().map(|b| b & 0x7f).collect();
    BigUint::from_radix_le(&digits, 128).unwrap_or_default()
}
