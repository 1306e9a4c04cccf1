//! Intents in stable memory: a small head per intent (status, attempts, times, the keys of its
//! indexes) in a table addressed by id (`crate::head_table`), and its body (input, argument
//! bytes, preview, summary, names) in a slab of fixed-size chunks.
//!
//! Why: ic-stable-structures 0.7 saves a B-tree node whole on every write, values included, so
//! a map of ~1.5 KiB records rewrote ~10–17 KiB for any change of one intent, and every read or
//! write of a head searched a tree as deep as the intents were many. The body is written when
//! an intent is prepared and again only when it is stamped again; every other write (a send,
//! its outcome, a confirm request) rewrites its head in place. Layouts 1 and 2 kept heads (and
//! versions 1 to 3 of the record, the whole intent) in a B-tree: they are read from there and
//! moved to the table when written.

use crate::head_table::{or_trap, HeadTable, INLINE};
use crate::memory::{grow_to, WASM_PAGE};
use crate::model::{
    decode_or_trap, head_record, BodyRef, DecodeError, Intent, IntentBody, IntentHead, RawRecord,
    Status, StoredIntent, Versioned,
};
use ic_stable_structures::{Memory, StableBTreeMap};
use std::cell::RefCell;

/// A head table slot's first byte when the head's record is in the body slab (a record's
/// first byte is its version, never this): then the slot holds where, as a [`BodyRef`]'s
/// 16 bytes.
pub const SPILLED: u8 = 0xff;

/// A head table slot: the head's record, or where a record longer than a slot is in the body
/// slab ([`SPILLED`], then the [`BodyRef`]'s 16 bytes).
enum Slot {
    Inline(Vec<u8>),
    Spilled(BodyRef),
}

impl Slot {
    fn parse(slot: Vec<u8>) -> Result<Slot, String> {
        if slot.first() != Some(&SPILLED) {
            return Ok(Slot::Inline(slot));
        }
        let b: [u8; 16] = slot
            .get(1..17)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| format!("a spilled head's slot of {} bytes", slot.len()))?;
        Ok(Slot::Spilled(BodyRef {
            first: u32::from_le_bytes(b[..4].try_into().expect("4 bytes")),
            len: u32::from_le_bytes(b[4..8].try_into().expect("4 bytes")),
            write: u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
        }))
    }

    /// The slot of a record written to the body slab at `r`.
    fn spilled(r: BodyRef) -> Vec<u8> {
        let mut b = Vec::with_capacity(17);
        b.push(SPILLED);
        b.extend_from_slice(&r.first.to_le_bytes());
        b.extend_from_slice(&r.len.to_le_bytes());
        b.extend_from_slice(&r.write.to_le_bytes());
        b
    }
}

/// Bytes of a chunk: the next chunk's index + 1 (0: none), then payload.
pub const CHUNK: u64 = 256;
const NEXT: u64 = 4;
/// Payload bytes of a chunk.
pub const PAYLOAD: u64 = CHUNK - NEXT;
/// The slab, as stable memory's exhaustion names it.
const SLAB: &str = "intent body slab";
/// The slab's header; chunks follow it.
const HEADER: u64 = 64;
pub const MAGIC: &[u8; 4] = b"TBS\x01";

/// The slab's header: chunks handed out so far and the free list (a chain through freed
/// chunks' next fields). Absent on a memory never written: an empty slab.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Header {
    /// Chunks ever handed out: chunk indexes below it exist.
    high: u32,
    /// The first free chunk's index + 1; 0 when none is free.
    free_head: u32,
    /// Chunks in the free list.
    free_len: u32,
    /// Bodies ever written: the next body's [`BodyRef::write`].
    writes: u64,
}

/// Variable-length bodies in chunks of [`CHUNK`] bytes, each body a chain of chunks; freed
/// chunks are reused before the slab grows. Reads and writes cost the body's bytes, not a
/// node's.
pub struct BodySlab<M: Memory> {
    memory: M,
}

impl<M: Memory> BodySlab<M> {
    /// Opens a slab: nothing is written until the first body (a fresh install takes no bucket).
    pub fn init(memory: M) -> Self {
        BodySlab { memory }
    }

    /// Chunks a body of `len` bytes takes (one at least).
    pub fn chunks(len: u32) -> u32 {
        (u64::from(len).div_ceil(PAYLOAD)).max(1) as u32
    }

    fn header(&self) -> Result<Header, String> {
        if self.memory.size() == 0 {
            return Ok(Header::default());
        }
        let mut b = [0u8; 28];
        self.memory.read(0, &mut b);
        // Grown but never written (the memory manager hands out zeroed buckets): empty.
        if b.iter().all(|&x| x == 0) {
            return Ok(Header::default());
        }
        if b[..4] != MAGIC[..] {
            return Err(format!(
                "the intent body slab's header starts {:02x?}, not {MAGIC:02x?}",
                &b[..4]
            ));
        }
        let chunk = u32::from_le_bytes(b[4..8].try_into().expect("4 bytes"));
        if u64::from(chunk) != CHUNK {
            return Err(format!(
                "the intent body slab's chunks are {chunk} bytes, this code reads {CHUNK}"
            ));
        }
        let u = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Ok(Header {
            high: u(8),
            free_head: u(12),
            free_len: u(16),
            writes: u64::from(u(20)) | (u64::from(u(24)) << 32),
        })
    }

    /// The header, or a trap naming what is wrong: like a record that does not decode
    /// (`model::decode_or_trap`), a slab this code cannot read is never read as another.
    fn header_or_trap(&self) -> Header {
        self.header()
            .unwrap_or_else(|e| panic!("stored intent body: {e}"))
    }

    fn set_header(&mut self, h: Header) {
        let mut b = [0u8; 28];
        b[..4].copy_from_slice(MAGIC);
        b[4..8].copy_from_slice(&(CHUNK as u32).to_le_bytes());
        b[8..12].copy_from_slice(&h.high.to_le_bytes());
        b[12..16].copy_from_slice(&h.free_head.to_le_bytes());
        b[16..20].copy_from_slice(&h.free_len.to_le_bytes());
        b[20..28].copy_from_slice(&h.writes.to_le_bytes());
        grow_to(&self.memory, HEADER, SLAB);
        self.memory.write(0, &b);
    }

    fn at(chunk: u32) -> u64 {
        HEADER + u64::from(chunk) * CHUNK
    }

    fn next_of(&self, chunk: u32) -> u32 {
        let mut b = [0u8; NEXT as usize];
        self.memory.read(Self::at(chunk), &mut b);
        u32::from_le_bytes(b)
    }

    /// Writes a body into chunks taken from the free list first, then new ones.
    pub fn write(&mut self, bytes: &[u8]) -> BodyRef {
        let len = u32::try_from(bytes.len()).expect("an intent body is far below 4 GiB");
        let n = Self::chunks(len);
        let mut h = self.header_or_trap();
        let mut chunks = Vec::with_capacity(n as usize);
        while chunks.len() < n as usize && h.free_head != 0 {
            let c = h.free_head - 1;
            h.free_head = self.next_of(c);
            h.free_len = h.free_len.checked_sub(1).unwrap_or_else(|| {
                panic!("stored intent body: the free list is longer than its count")
            });
            chunks.push(c);
        }
        let fresh = n - chunks.len() as u32;
        if fresh > 0 {
            let first = h.high;
            h.high = h
                .high
                .checked_add(fresh)
                .expect("the intent body slab has fewer than 2^32 chunks");
            grow_to(&self.memory, Self::at(h.high), SLAB);
            chunks.extend(first..h.high);
        }
        let mut buf = Vec::with_capacity(CHUNK as usize);
        for (k, part) in bytes
            .chunks(PAYLOAD as usize)
            .chain(bytes.is_empty().then_some(&[][..]))
            .enumerate()
        {
            let next = chunks.get(k + 1).map_or(0, |c| c + 1);
            buf.clear();
            buf.extend_from_slice(&next.to_le_bytes());
            buf.extend_from_slice(part);
            self.memory.write(Self::at(chunks[k]), &buf);
        }
        let write = h.writes;
        h.writes += 1;
        self.set_header(h);
        BodyRef {
            first: chunks[0],
            len,
            write,
        }
    }

    /// The body's bytes, or why its chain cannot be read (a chunk past the slab's end, a
    /// chain shorter than its length).
    pub fn read_checked(&self, r: BodyRef) -> Result<Vec<u8>, String> {
        self.read_within(r, self.header_checked()?.high)
    }

    /// The header, its chunk count checked against the memory (a corrupt count is reported,
    /// never read past or allocated for).
    fn header_checked(&self) -> Result<Header, String> {
        let h = self.header()?;
        if h.high > 0 && Self::at(h.high) > self.memory.size() * WASM_PAGE {
            return Err(format!(
                "the intent body slab's header counts {} chunks, more than its memory holds",
                h.high
            ));
        }
        Ok(h)
    }

    fn read_within(&self, r: BodyRef, high: u32) -> Result<Vec<u8>, String> {
        // A length no chain of the slab's chunks can hold is refused before any allocation.
        if Self::chunks(r.len) > high {
            return Err(format!(
                "the body at chunk {} says {} bytes, more than the slab's {high} chunks hold",
                r.first, r.len
            ));
        }
        let mut out = Vec::with_capacity(r.len as usize);
        let mut chunk = r.first;
        let mut left = u64::from(r.len);
        let mut buf = vec![0u8; CHUNK as usize];
        for k in 0..Self::chunks(r.len) {
            if chunk >= high {
                return Err(format!(
                    "the body at chunk {} has its chunk {k} at {chunk}, past the slab's {high}",
                    r.first
                ));
            }
            let take = left.min(PAYLOAD);
            let b = &mut buf[..(NEXT + take) as usize];
            self.memory.read(Self::at(chunk), b);
            out.extend_from_slice(&b[NEXT as usize..]);
            left -= take;
            let next = u32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
            if k + 1 < Self::chunks(r.len) {
                if next == 0 {
                    return Err(format!(
                        "the body at chunk {} ({} bytes) ends after {} chunk(s)",
                        r.first,
                        r.len,
                        k + 1
                    ));
                }
                chunk = next - 1;
            }
        }
        Ok(out)
    }

    /// The body's bytes; a chain that cannot be read traps, naming why.
    pub fn read(&self, r: BodyRef) -> Vec<u8> {
        // Bounded by the memory's size rather than the header's count: no header read on the
        // hot path (`check` compares chains with the count).
        let room = (self.memory.size() * WASM_PAGE).saturating_sub(HEADER) / CHUNK;
        self.read_within(r, u32::try_from(room).unwrap_or(u32::MAX))
            .unwrap_or_else(|e| panic!("stored intent body: {e}"))
    }

    /// A body's first byte (its record's version), read alone; `None` for an empty body.
    pub fn first_byte(&self, r: BodyRef) -> Option<u8> {
        if r.len == 0 {
            return None;
        }
        let mut b = [0u8; 1];
        self.memory.read(Self::at(r.first) + NEXT, &mut b);
        Some(b[0])
    }

    /// Returns a body's chunks to the free list.
    pub fn free(&mut self, r: BodyRef) {
        let mut h = self.header_or_trap();
        let n = Self::chunks(r.len);
        let mut last = r.first;
        // A chain that ends early or leaves the slab traps, naming it, rather than linking
        // the free list into chunks that are not this body's.
        for k in 1..n {
            last = match self.next_of(last).checked_sub(1) {
                Some(c) if c < h.high => c,
                _ => panic!(
                    "stored intent body: the body at chunk {} ({} bytes) breaks after {k} chunk(s)",
                    r.first, r.len
                ),
            };
        }
        self.memory
            .write(Self::at(last), &h.free_head.to_le_bytes());
        h.free_head = r.first + 1;
        h.free_len += n;
        self.set_header(h);
    }

    /// Every chunk is in exactly one of the bodies `live` or in the free list, and the free
    /// list's count is its length: no chunk shared, lost or past the end.
    pub fn check(&self, live: impl Iterator<Item = (u64, BodyRef)>) -> Result<(), String> {
        let h = self.header_checked()?;
        let mut owner: Vec<Option<u64>> = vec![None; h.high as usize];
        let take = |chunk: u32, who: u64, owner: &mut Vec<Option<u64>>| match owner
            .get_mut(chunk as usize)
        {
            None => Err(format!(
                "chunk {chunk} ({}) is past the slab's {} chunks",
                name(who),
                h.high
            )),
            Some(Some(other)) => Err(format!(
                "chunk {chunk} is in {} and in {}",
                name(*other),
                name(who)
            )),
            Some(slot) => {
                *slot = Some(who);
                Ok(())
            }
        };
        for (id, r) in live {
            let mut chunk = r.first;
            for k in 0..Self::chunks(r.len) {
                take(chunk, id, &mut owner)?;
                if k + 1 < Self::chunks(r.len) {
                    match self.next_of(chunk) {
                        0 => return Err(format!("intent {id}'s body ends early at chunk {chunk}")),
                        n => chunk = n - 1,
                    }
                }
            }
        }
        let mut free = 0u32;
        let mut next = h.free_head;
        while next != 0 {
            take(next - 1, FREE, &mut owner)?;
            free += 1;
            next = self.next_of(next - 1);
        }
        if free != h.free_len {
            return Err(format!(
                "the free list holds {free} chunks, its count says {}",
                h.free_len
            ));
        }
        if let Some(k) = owner.iter().position(Option::is_none) {
            return Err(format!("chunk {k} is neither in a body nor free"));
        }
        Ok(())
    }

    /// Chunks handed out and chunks free.
    pub fn usage(&self) -> (u32, u32) {
        let h = self.header_or_trap();
        (h.high, h.free_len)
    }
}

const FREE: u64 = u64::MAX;
fn name(who: u64) -> String {
    if who == FREE {
        "the free list".into()
    } else {
        format!("intent {who}'s body")
    }
}

/// The intents: heads in a [`HeadTable`] by id (or, written by layouts 1 and 2, a B-tree),
/// bodies in a [`BodySlab`]. Reads and writes whole
/// [`Intent`]s; a write stores the body again only when it changed.
pub struct IntentStore<M: Memory> {
    /// Heads and whole intents written by stored layouts 1 and 2 (a B-tree keyed by id): read
    /// where the table does not hold an id below its first, and emptied as they are written
    /// again (into the table) or pruned. Nothing is inserted here any more.
    heads: StableBTreeMap<u64, RawRecord, M>,
    /// Each head as its record's bytes, by id (`crate::head_table`): decoded when read; a write
    /// compares the one it replaces with the one it remembers instead of decoding it (~19 000
    /// instructions on the IC model for a transfer's head). A record longer than a slot is
    /// written to the body slab and the slot holds where ([`SPILLED`]).
    table: HeadTable<M>,
    bodies: BodySlab<M>,
    /// The intents last got or written (at most [`RECENT`]), head and body, as stored: a get
    /// of one of them reads nothing (a confirm reads its intent twice, once in each of its
    /// executions), and a
    /// write of the same intent with the same body keeps its chunks without reading or
    /// encoding anything. It is right because every write and free of these memories goes
    /// through this store (the state opens one), and every write and removal here updates it
    /// in the same step; heap only (empty after an upgrade; rolled back with the stable memory
    /// on a trap). A write still takes it only as a hint for the body: the head the write
    /// replaces must name the same body (chunks, length and write number, which no two bodies
    /// share), or the body is written anew. A body not remembered is written anew too
    /// (correct; it costs a write and a free). Each keeps its head's record bytes too: a write
    /// whose replaced record has exactly those bytes knows what it replaced without decoding
    /// it (any other is decoded).
    recent: RefCell<Vec<Recent>>,
}

/// An intent last got or written: its head, body and head record as stored.
struct Recent {
    head: IntentHead,
    body: IntentBody,
    record: Vec<u8>,
}

/// What a write replaced, for the indexes: its status and identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replaced {
    pub status: Status,
    pub identity: [u8; 32],
    /// It was a whole intent (versions 1 to 3), not a head.
    pub whole: bool,
}

/// Whether two bodies are equal (as `==` says), their bytes compared eight at a time. The
/// hint check compares a transfer's body (~1 KB) on every write of an intent, and `==` on
/// strings is a byte-at-a-time `memcmp` in wasm (~30 000 instructions on the IC cost model).
/// Every field is named: a field added to the body cannot be left out.
fn same_body(a: &IntentBody, b: &IntentBody) -> bool {
    let IntentBody {
        form_id,
        tool,
        method,
        input_json,
        arg,
        memo,
        preview_json,
        summary,
        names,
    } = a;
    same_bytes(preview_json.as_bytes(), b.preview_json.as_bytes())
        && same_bytes(arg, &b.arg)
        && same_bytes(input_json.as_bytes(), b.input_json.as_bytes())
        && same_bytes(summary.as_bytes(), b.summary.as_bytes())
        && same_bytes(form_id.as_bytes(), b.form_id.as_bytes())
        && same_bytes(tool.as_bytes(), b.tool.as_bytes())
        && same_bytes(method.as_bytes(), b.method.as_bytes())
        && match (memo, &b.memo) {
            (Some(x), Some(y)) => same_bytes(x, y),
            (None, None) => true,
            _ => false,
        }
        && *names == b.names
}

/// `a == b` for byte slices, eight bytes at a time.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (wa, wb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (wa.remainder(), wb.remainder());
    let word = |c: &[u8]| u64::from_le_bytes(c.try_into().expect("8 bytes"));
    wa.zip(wb).all(|(x, y)| word(x) == word(y)) && ra == rb
}

/// Intents kept in [`IntentStore::recent`]: a flow reads one intent or two, and a send's reply
/// arrives after other messages have read theirs.
const RECENT: usize = 16;

impl<M: Memory> IntentStore<M> {
    pub fn init(heads: M, bodies: M, directory: M, pages: M) -> Self {
        IntentStore {
            heads: StableBTreeMap::init(heads),
            table: HeadTable::init(directory, pages),
            bodies: BodySlab::init(bodies),
            recent: RefCell::new(Vec::with_capacity(RECENT)),
        }
    }

    /// Whether the B-tree of layouts 1 and 2 may hold `id`: always before the table is
    /// started, below its first id after.
    fn legacy_may_hold(&self, id: u64) -> bool {
        self.table.first_id().is_none_or(|first| id < first)
    }

    /// A slot's record: itself, or the bytes it points to in the body slab.
    fn resolve(&self, slot: Vec<u8>) -> Vec<u8> {
        match or_trap(Slot::parse(slot)) {
            Slot::Inline(record) => record,
            Slot::Spilled(r) => self.bodies.read(r),
        }
    }

    /// The head record of `id` as stored: from the table, or from the B-tree of layouts 1
    /// and 2.
    fn raw(&self, id: u64) -> Option<Vec<u8>> {
        if let Some(slot) = self.table.get(id) {
            return Some(self.resolve(slot));
        }
        if self.legacy_may_hold(id) {
            return self.heads.get(&id).map(|r| r.0);
        }
        None
    }

    /// Writes the head record of `id` to the table (started on its first write) and answers
    /// the record it replaced there or in the B-tree of layouts 1 and 2 (removed from it).
    fn write_raw(&mut self, id: u64, record: &[u8]) -> Option<Vec<u8>> {
        let first = match self.table.first_id() {
            Some(first) => first,
            None => {
                let first = self.heads.last_key_value().map_or(0, |(k, _)| k + 1);
                self.table.start(first);
                first
            }
        };
        let spill;
        let slot: &[u8] = if record.len() <= INLINE {
            record
        } else {
            spill = Slot::spilled(self.bodies.write(record));
            &spill
        };
        match self.table.put(id, slot) {
            Some(old) => Some(self.release_slot(old)),
            None if id < first => self.heads.remove(&id).map(|r| r.0),
            None => None,
        }
    }

    /// A replaced or removed slot's record; a spilled one's chunks are freed.
    fn release_slot(&mut self, slot: Vec<u8>) -> Vec<u8> {
        match or_trap(Slot::parse(slot)) {
            Slot::Inline(record) => record,
            Slot::Spilled(r) => {
                let record = self.bodies.read(r);
                self.bodies.free(r);
                record
            }
        }
    }

    /// Removes the head record of `id` wherever it is.
    fn remove_raw(&mut self, id: u64) -> Option<Vec<u8>> {
        if let Some(slot) = self.table.remove(id) {
            return Some(self.release_slot(slot));
        }
        if self.legacy_may_hold(id) {
            return self.heads.remove(&id).map(|r| r.0);
        }
        None
    }

    fn remember(&self, head: IntentHead, body: IntentBody, record: Vec<u8>) {
        let mut r = self.recent.borrow_mut();
        r.retain(|e| e.head.id != head.id);
        if r.len() == RECENT {
            r.remove(0);
        }
        r.push(Recent { head, body, record });
    }

    /// The head and body remembered for intent `id`, as stored (see `recent`).
    fn remembered(&self, id: u64) -> Option<(IntentHead, IntentBody)> {
        self.recent
            .borrow()
            .iter()
            .find(|e| e.head.id == id)
            .map(|e| (e.head.clone(), e.body.clone()))
    }

    fn forget(&self, id: u64) {
        self.recent.borrow_mut().retain(|e| e.head.id != id);
    }

    /// The intent a record holds, its body read from the slab.
    fn whole(&self, s: StoredIntent) -> Intent {
        match s {
            StoredIntent::Whole(i) => *i,
            StoredIntent::Head(h) => {
                let body: IntentBody = decode_or_trap(&self.bodies.read(h.body));
                h.join(body)
            }
        }
    }

    /// One intent, whole: from [`IntentStore::recent`] when it was written or read lately
    /// (trusted without a check: see there), else read and remembered for the write that
    /// usually follows.
    pub fn get(&self, id: &u64) -> Option<Intent> {
        if let Some((head, body)) = self.remembered(*id) {
            return Some(head.join(body));
        }
        let raw = RawRecord(self.raw(*id)?);
        match raw.decode::<StoredIntent>() {
            StoredIntent::Whole(i) => Some(*i),
            StoredIntent::Head(h) => {
                let body: IntentBody = decode_or_trap(&self.bodies.read(h.body));
                self.remember(h.clone(), body.clone(), raw.0);
                Some(h.join(body))
            }
        }
    }

    /// The stored record without its body: status and identity for the indexes.
    pub fn get_head(&self, id: &u64) -> Option<StoredIntent> {
        self.raw(*id).map(|r| RawRecord(r).decode())
    }

    pub fn contains_key(&self, id: &u64) -> bool {
        self.table.contains(*id) || (self.legacy_may_hold(*id) && self.heads.contains_key(id))
    }

    pub fn len(&self) -> u64 {
        self.table.len() + self.heads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every id, ascending: the table's and the B-tree's merged (reads every head: checks
    /// and upgrades, never a hot path).
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        let mut table = self.table.ids().peekable();
        let mut legacy = self.heads.keys().peekable();
        std::iter::from_fn(move || match (table.peek(), legacy.peek()) {
            (Some(a), Some(b)) if b < a => legacy.next(),
            (Some(_), _) => table.next(),
            (None, _) => legacy.next(),
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = (u64, Intent)> + '_ {
        self.keys().map(|id| {
            let raw = RawRecord(self.raw(id).expect("a key listed is held"));
            (id, self.whole(raw.decode()))
        })
    }

    /// Writes an intent under its id and says what it replaced. Its body keeps its chunks when
    /// it is the body last read or written for this intent (the replaced head must name those
    /// chunks too); otherwise it is written anew and the replaced head's chunks are freed.
    pub fn insert(&mut self, intent: Intent) -> Option<Replaced> {
        let id = intent.id;
        let (head, body) = intent.split(BodyRef {
            first: 0,
            len: 0,
            write: 0,
        });
        let hint = self
            .recent
            .borrow()
            .iter()
            .find(|e| e.head.id == id && same_body(&e.body, &body))
            .map(|e| e.head.body);
        let at = match hint {
            Some(at) => at,
            None => self.bodies.write(&Versioned::encode(&body)),
        };
        let mut head = IntentHead { body: at, ..head };
        let mut record = head_record(&head);
        let (before, old) = match self.write_raw(id, &record) {
            None => (None, None),
            Some(raw) => {
                let (replaced, body) = self.replaced(id, RawRecord(raw));
                (Some(replaced), body)
            }
        };
        if hint.is_some() && old != Some(at) {
            // The hint did not name the chunks the replaced head had (never expected: every
            // write goes through here): the body is written anew, the hinted chunks untouched.
            head.body = self.bodies.write(&Versioned::encode(&body));
            record = head_record(&head);
            self.write_raw(id, &record);
        }
        if let Some(old) = old.filter(|o| *o != head.body) {
            self.bodies.free(old);
        }
        self.remember(head, body, record);
        before
    }

    /// What a write of intent `id` replaced and the body its head named: the intent remembered
    /// for it when `raw` is, byte for byte, the remembered record; otherwise `raw` decoded.
    fn replaced(&self, id: u64, raw: RawRecord) -> (Replaced, Option<BodyRef>) {
        if let Some(e) = self
            .recent
            .borrow()
            .iter()
            .find(|e| e.head.id == id && same_bytes(&e.record, &raw.0))
        {
            let (status, identity, whole) = (e.head.status, e.head.identity, false);
            let replaced = Replaced {
                status,
                identity,
                whole,
            };
            return (replaced, Some(e.head.body));
        }
        let s: StoredIntent = raw.decode();
        let whole = matches!(s, StoredIntent::Whole(_));
        let (status, identity) = (s.status(), s.identity());
        let replaced = Replaced {
            status,
            identity,
            whole,
        };
        (replaced, s.body())
    }

    /// Packs intent `id`'s body (`crate::packed_body`) when that takes fewer chunks: the plain
    /// body's chunks are freed, the packed body written (into those chunks first), then the
    /// head rewritten to name it. Answers whether it did; a body packed already, a whole record
    /// of layouts 1 and 2, a body packing would not shorten or one that would not read back is
    /// left as it is. For settled intents, by a task of the timer only
    /// (`send::schedule_prune`): a body is encoded and compressed here, costlier than a prepare
    /// or a reply should pay.
    pub fn pack(&mut self, id: u64) -> bool {
        // Usually the intent was just read (the prune task): what the store remembers of it is
        // what is stored (see `recent`), so its body is neither read nor decoded.
        let (head, kept) = match self.remembered(id) {
            Some((head, body)) => (head, Some(body)),
            None => {
                let Some(raw) = self.raw(id) else {
                    return false;
                };
                let StoredIntent::Head(head) = RawRecord(raw).decode::<StoredIntent>() else {
                    return false;
                };
                (head, None)
            }
        };
        if self.bodies.first_byte(head.body) != Some(IntentBody::PLAIN) {
            return false;
        }
        let body = kept.unwrap_or_else(|| decode_or_trap(&self.bodies.read(head.body)));
        let Some(packed) = body.encode_packed() else {
            return false;
        };
        if BodySlab::<M>::chunks(packed.len() as u32) >= BodySlab::<M>::chunks(head.body.len) {
            return false;
        }
        // The plain body's chunks are freed first (it is decoded above, and nothing can see
        // the slab between here and the head's write): the packed body takes them back, so
        // packing never grows the slab.
        self.bodies.free(head.body);
        let head = IntentHead {
            body: self.bodies.write(&packed),
            ..head
        };
        let record = head_record(&head);
        self.write_raw(id, &record);
        self.remember(head, body, record);
        true
    }

    /// Removes an intent and frees its body.
    pub fn remove(&mut self, id: &u64) -> Option<Intent> {
        let s: StoredIntent = RawRecord(self.remove_raw(*id)?).decode();
        let r = s.body();
        let i = self.whole(s);
        self.forget(*id);
        if let Some(r) = r {
            self.bodies.free(r);
        }
        Some(i)
    }

    /// The newest intents' records and bodies, read without trapping (`State::check_layout`):
    /// the B-tree's newest (layouts 1 and 2) and the table's newest among its newest groups
    /// (`HeadTable::newest`: a bounded read).
    pub fn check_newest(&self) -> Result<(), DecodeError> {
        let slot = |e: String| DecodeError {
            what: "intent head",
            reason: e,
        };
        if let Some(id) = self.table.newest().map_err(slot)? {
            self.check_record(Some((id, self.table_record_checked(id)?)))?;
        }
        self.check_record(self.heads.last_key_value().map(|(k, v)| (k, v.0)))
    }

    /// A head of the table as stored (a spilled one read from the slab), without trapping.
    fn table_record_checked(&self, id: u64) -> Result<Vec<u8>, DecodeError> {
        let fault = |e: String| DecodeError {
            what: "intent head",
            reason: format!("key {id}: {e}"),
        };
        let raw = self
            .table
            .get_checked(id)
            .map_err(fault)?
            .ok_or_else(|| fault("listed but not held".into()))?;
        match Slot::parse(raw).map_err(fault)? {
            Slot::Inline(record) => Ok(record),
            Slot::Spilled(r) => self.bodies.read_checked(r).map_err(fault),
        }
    }

    /// Every head of the table and its body read through [`Versioned::decode`], reporting
    /// instead of trapping (`State::check_records`; the B-tree's are read there).
    pub fn check_records(&self) -> Result<(), DecodeError> {
        let ids = self.table.ids_checked().map_err(|e| DecodeError {
            what: "intent head",
            reason: e,
        })?;
        for id in ids {
            self.check_record(Some((id, self.table_record_checked(id)?)))?;
        }
        Ok(())
    }

    fn check_record(&self, raw: Option<(u64, Vec<u8>)>) -> Result<(), DecodeError> {
        let Some((id, bytes)) = raw else {
            return Ok(());
        };
        let key = |e: DecodeError| DecodeError {
            reason: format!("key {id:?}: {}", e.reason),
            ..e
        };
        if let StoredIntent::Head(h) = StoredIntent::decode(&bytes).map_err(key)? {
            let body = self
                .bodies
                .read_checked(h.body)
                .map_err(|reason| DecodeError {
                    what: "intent body",
                    reason,
                });
            IntentBody::decode(&body.map_err(key)?).map_err(key)?;
        }
        Ok(())
    }

    /// Every head's body reads and decodes, and the slab's chunks are each in one body or
    /// free. Reads everything: tests and checks, never a hot path.
    pub fn check(&self) -> Result<(), String> {
        self.table.check()?;
        let mut live = vec![];
        for id in self.table.ids() {
            if self.heads.contains_key(&id) {
                return Err(format!(
                    "intent {id} is in the head table and in the B-tree"
                ));
            }
            let slot = self.table.get(id).expect("an id listed is held");
            let slot = Slot::parse(slot).map_err(|e| format!("intent {id}'s head: {e}"))?;
            if let Slot::Spilled(r) = slot {
                self.bodies
                    .read_checked(r)
                    .map_err(|e| format!("intent {id}'s head: {e}"))?;
                live.push((id, r));
            }
        }
        if let Some(first) = self.table.first_id() {
            if let Some(id) = self.heads.range(first..).next().map(|e| *e.key()) {
                return Err(format!(
                    "intent {id} is in the B-tree, at or above the table's first id {first}"
                ));
            }
        }
        for id in self.keys() {
            let s = RawRecord(self.raw(id).expect("a key listed is held"));
            if let Some(r) = s.decode::<StoredIntent>().body() {
                let bytes = self
                    .bodies
                    .read_checked(r)
                    .map_err(|e| format!("intent {id}: {e}"))?;
                IntentBody::decode(&bytes).map_err(|e| format!("intent {id}: {e}"))?;
                live.push((id, r));
            }
        }
        self.bodies.check(live.into_iter())
    }

    /// Chunks handed out and chunks free in the body slab.
    pub fn body_chunks(&self) -> (u32, u32) {
        self.bodies.usage()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StoredName;
    use crate::stored_value::StoredValue;

    fn body() -> IntentBody {
        IntentBody {
            form_id: "icrc1".into(),
            tool: "prepare_icrc1_transfer".into(),
            method: "icrc1_transfer".into(),
            input_json: r#"{"amount":"1.5 TKA","to":"aaaaa-aa"}"#.into(),
            arg: (0..164u8).collect(),
            memo: Some(vec![7; 32]),
            preview_json: "p".repeat(517),
            summary: "Transfer 1.5 TKA to aaaaa-aa".into(),
            names: vec![StoredName {
                set: "contacts".into(),
                name: "alice".into(),
                value: StoredValue::Text("aaaaa-aa".into()),
            }],
        }
    }

    /// The store writes bodies as their version byte and postcard's bytes (the layout every
    /// earlier release wrote and reads); heads: tests/intent_store.rs.
    #[test]
    fn bodies_are_their_version_and_postcards_bytes() {
        let b = body();
        let mut want = vec![1];
        want.extend(postcard::to_allocvec(&b).unwrap());
        assert_eq!(Versioned::encode(&b), want);
    }

    #[test]
    fn same_bytes_is_equality_at_every_length_and_position() {
        for len in 0..40usize {
            let a: Vec<u8> = (0..len as u8).collect();
            assert!(same_bytes(&a, &a.clone()));
            for i in 0..len {
                let mut b = a.clone();
                b[i] ^= 0x80;
                assert!(!same_bytes(&a, &b), "len {len}, byte {i}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!same_bytes(&a, &longer));
        }
    }

    #[test]
    fn same_body_is_equality_for_a_change_in_any_field() {
        let a = body();
        assert!(same_body(&a, &a.clone()));
        let changes: Vec<fn(&mut IntentBody)> = vec![
            |b| b.form_id.push('x'),
            |b| b.tool = "prepare_icrc2_approve".into(),
            |b| b.method.pop().map(drop).unwrap_or(()),
            |b| b.input_json = b.input_json.replace("1.5", "1.6"),
            |b| b.arg[163] ^= 1,
            |b| b.arg.push(0),
            |b| b.memo = None,
            |b| b.memo.as_mut().expect("a memo")[31] = 8,
            |b| b.preview_json.replace_range(516..517, "q"),
            |b| b.summary.push(' '),
            |b| b.names.clear(),
            |b| b.names[0].value = StoredValue::Text("bbbbb-bb".into()),
        ];
        for (n, change) in changes.into_iter().enumerate() {
            let mut b = a.clone();
            change(&mut b);
            assert_ne!(a, b, "change {n} changes the body");
            assert!(!same_body(&a, &b), "change {n} is seen");
            assert!(!same_body(&b, &a), "change {n} is seen either way");
        }
    }
}
