//! A hash table of fixed records in stable memory, grown one bucket at a time (stored layout 7
//! on; the owner count tables, the usage table and, from layout 8, the stamp floors are its
//! instances).
//!
//! Why: the maps keyed by owner were B-trees as deep as the owners are many, and a key new to
//! one cost an insert of ~100 000 to 200 000 instructions on the IC model. Here a record is
//! found by its key's hash in one bucket of one 4 KiB page: a lookup reads the bucket (its
//! count, then its records), an update writes the value, an insert the record, the bucket's
//! count and the header, whatever the number of records.
//!
//! Linear hashing: the table has `2^level + split` buckets, and when the records outnumber
//! the shape's `split_at` per bucket one more bucket is split off the bucket `split` (its
//! records divided by one more bit of their hash). So no message moves more than one bucket's
//! records, however many the table holds. It never shrinks.
//!
//! A bucket holds at most `per_bucket` records. An insert into a full bucket is refused
//! ([`Upsert::Full`]), and the caller keeps the record elsewhere (a B-tree), where it costs
//! what a B-tree costs: nothing is refused and nothing is lost. A bucket not yet split holds
//! up to ~2 × `split_at` records on average at the end of a round, so `split_at` is chosen
//! for a full bucket to be in the tail (rare, not impossible: the shapes say how rare); keys
//! chosen to collide (the hash is not keyed) fill one all the same.
//!
//! Only the first `hashed` bytes of a key choose its bucket, so keys that share them (an
//! owner's usage counts) are in one bucket and read together ([`HashTable::with_prefix`]).
//!
//! Layout (version 1), in a memory of its own: the header page, then bucket `b` at
//! `PAGE × (1 + b)`. The header: the table's magic (4 bytes, its version the last), the
//! bucket's bytes (`u32`), the record's bytes (`u16`), records per bucket (`u16`), `level`
//! (`u32`), `split` (`u64`), records held (`u64`). A bucket: its record count (`u16`), then its
//! records, each the key then the value. All little-endian. Nothing is written before the
//! first record, so a fresh install takes no bucket for it.

use crate::memory::grow_to;
use ic_stable_structures::Memory;
use std::cell::{Cell, RefCell};

/// A bucket's bytes: one 4 KiB page, so a record's write dirties one page.
pub const PAGE: u64 = 4096;
const HEADER: usize = 32;
/// Records remembered on the heap (see [`HashTable::locate`]).
const LATELY: usize = 16;

/// What a table's records are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The header's first bytes: which table, and its version.
    pub magic: [u8; 4],
    /// A key's bytes.
    pub key: usize,
    /// A value's bytes (a record of zeros is no record: the checks refuse it).
    pub value: usize,
    /// The key's first bytes that choose its bucket.
    pub hashed: usize,
    /// Records per bucket on average past which the next bucket is split: under half of a
    /// bucket's room, as a bucket about to be split holds twice the records of a split one.
    pub split_at: u64,
    /// What the table is, in messages.
    pub what: &'static str,
}

impl Shape {
    pub const fn record(&self) -> usize {
        self.key + self.value
    }

    pub const fn per_bucket(&self) -> usize {
        (PAGE as usize - 2) / self.record()
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Header {
    level: u32,
    split: u64,
    count: u64,
}

impl Header {
    fn buckets(&self) -> u64 {
        (1u64 << self.level) + self.split
    }

    /// The bucket a hash lives in.
    fn bucket(&self, h: u64) -> u64 {
        let low = h & ((1u64 << self.level) - 1);
        if low < self.split {
            h & ((1u64 << (self.level + 1)) - 1)
        } else {
            low
        }
    }
}

/// FNV-1a over the bytes, then SplitMix64's finalizer, so the low bits that choose a bucket
/// depend on every byte. Not keyed: keys made to collide fill their bucket and go elsewhere
/// (see the module's comment); they cannot make a lookup read more than a page.
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A `u64` as records store it (little-endian): a count, a stamp, a digest.
pub fn u64_at(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
}

/// The first `n` of `candidates` whose keys share the low 8 bits of their hash with the key
/// `like`, so they are in one bucket while a table has fewer than 256 buckets (tests).
#[doc(hidden)]
pub fn colliding<T>(
    n: usize,
    like: &[u8],
    candidates: impl Iterator<Item = T>,
    key: impl Fn(&T) -> Vec<u8>,
) -> Vec<T> {
    let want = hash(like) & 0xff;
    candidates
        .filter(|c| hash(&key(c)) & 0xff == want)
        .take(n)
        .collect()
}

/// A record's key and value bytes.
pub type Record = (Vec<u8>, Vec<u8>);

/// A key remembered on the heap: its bucket, and its record's index there and value, or
/// `None` when the bucket does not hold it.
struct Remembered {
    key: Vec<u8>,
    bucket: u64,
    index: usize,
    value: Option<Vec<u8>>,
}

/// What [`HashTable::upsert`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upsert {
    /// The key was held: its value was written.
    Updated,
    /// The key was new: inserted.
    Inserted,
    /// The key was new, and the caller gave no value: nothing written.
    Declined,
    /// The key was new, and its bucket is full: nothing written (the caller was not asked).
    Full,
}

/// Where a key is in its bucket.
enum Place {
    Held {
        i: usize,
        value: Vec<u8>,
    },
    /// Not there; the bucket holds `n` records.
    Absent {
        n: usize,
    },
}

/// Records held in stable memory; see the module's comment.
pub struct HashTable<M: Memory> {
    memory: M,
    shape: Shape,
    /// The header as stable memory has it (read when opened, written with it; a trap rolls
    /// both back).
    head: Cell<Option<Header>>,
    /// Keys read or written lately, newest last, each as stable memory has it: its record, or
    /// that its bucket has none. Written through (a write writes stable memory and the copy
    /// in the same step, and a trap rolls both back); a record moved (by a removal or a
    /// split) is forgotten. So a key read or written lately is found without reading its
    /// bucket.
    lately: RefCell<Vec<Remembered>>,
}

impl<M: Memory> HashTable<M> {
    /// Opens the table in `memory`. A header of another table, shape or version traps (so an
    /// upgrade into it is refused): nothing is read as something else.
    pub fn init(memory: M, shape: Shape) -> Self {
        assert!(shape.hashed <= shape.key && 2 * shape.split_at < shape.per_bucket() as u64);
        let mut t = HashTable {
            memory,
            shape,
            head: Cell::new(None),
            lately: RefCell::new(Vec::with_capacity(LATELY)),
        };
        let h = t.or_trap(t.header());
        t.head = Cell::new(h);
        t
    }

    /// What a read that cannot go on says when it traps (the message is rolled back; the
    /// checks report the same).
    fn or_trap<T>(&self, r: Result<T, String>) -> T {
        r.unwrap_or_else(|e| panic!("{}: {e}", self.shape.what))
    }

    fn header(&self) -> Result<Option<Header>, String> {
        if self.memory.size() == 0 {
            return Ok(None);
        }
        let mut b = [0u8; HEADER];
        self.memory.read(0, &mut b);
        if b.iter().all(|&x| x == 0) {
            return Ok(None);
        }
        let magic = self.shape.magic;
        if b[..4] != magic[..] {
            return Err(format!(
                "the header starts {:02x?}, not {magic:02x?}",
                &b[..4]
            ));
        }
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let (page, record, per) = (u32_at(4), u16_at(8), u16_at(10));
        let (want_record, want_per) = (self.shape.record(), self.shape.per_bucket());
        if (u64::from(page), usize::from(record), usize::from(per)) != (PAGE, want_record, want_per)
        {
            return Err(format!(
                "buckets of {page} bytes with {per} records of {record}; this code reads {PAGE}, {want_per} and {want_record}"
            ));
        }
        let h = Header {
            level: u32_at(12),
            split: u64_at(16),
            count: u64_at(24),
        };
        if h.level >= 48 || h.split >= 1u64 << h.level {
            return Err(format!(
                "level {} and split {} do not fit",
                h.level, h.split
            ));
        }
        Ok(Some(h))
    }

    fn set_header(&mut self, h: Header) {
        let mut b = [0u8; HEADER];
        b[..4].copy_from_slice(&self.shape.magic);
        b[4..8].copy_from_slice(&(PAGE as u32).to_le_bytes());
        b[8..10].copy_from_slice(&(self.shape.record() as u16).to_le_bytes());
        b[10..12].copy_from_slice(&(self.shape.per_bucket() as u16).to_le_bytes());
        b[12..16].copy_from_slice(&h.level.to_le_bytes());
        b[16..24].copy_from_slice(&h.split.to_le_bytes());
        b[24..32].copy_from_slice(&h.count.to_le_bytes());
        self.memory.write(0, &b);
        self.head.set(Some(h));
    }

    fn bucket_at(b: u64) -> u64 {
        PAGE * (1 + b)
    }

    fn hash_of(&self, key: &[u8]) -> u64 {
        hash(&key[..self.shape.hashed])
    }

    /// A bucket's record count, refused past its room (nothing is read or written past it).
    fn count_of(&self, b: u64) -> Result<usize, String> {
        let mut n = [0u8; 2];
        self.memory.read(Self::bucket_at(b), &mut n);
        let n = usize::from(u16::from_le_bytes(n));
        let per = self.shape.per_bucket();
        if n > per {
            return Err(format!(
                "bucket {b} says it holds {n} records, more than {per}"
            ));
        }
        Ok(n)
    }

    /// A bucket's records, as stored.
    fn read_bucket(&self, b: u64) -> Result<Vec<u8>, String> {
        let n = self.count_of(b)?;
        let mut records = vec![0u8; n * self.shape.record()];
        self.memory.read(Self::bucket_at(b) + 2, &mut records);
        Ok(records)
    }

    fn find(&self, records: &[u8], key: &[u8]) -> Option<usize> {
        records
            .chunks_exact(self.shape.record())
            .position(|r| r[..self.shape.key] == *key)
    }

    /// Remembers a key as stable memory now has it (`value` `None`: bucket `b` holds none).
    fn remember(&self, key: &[u8], b: u64, i: usize, value: Option<&[u8]>) {
        let mut lately = self.lately.borrow_mut();
        if let Some(at) = lately.iter().position(|r| r.key == key) {
            let mut e = lately.remove(at);
            (e.bucket, e.index) = (b, i);
            match (&mut e.value, value) {
                (Some(v), Some(new)) => v.copy_from_slice(new),
                (v, new) => *v = new.map(<[u8]>::to_vec),
            }
            lately.push(e);
            return;
        }
        if lately.len() == LATELY {
            lately.remove(0);
        }
        lately.push(Remembered {
            key: key.to_vec(),
            bucket: b,
            index: i,
            value: value.map(<[u8]>::to_vec),
        });
    }

    fn forget(&self, key: &[u8]) {
        self.lately.borrow_mut().retain(|r| r.key != key);
    }

    /// The key's bucket and its place there (none before the first record): from the heap
    /// for a key read or written lately, else from its bucket, read whole.
    fn locate(&self, key: &[u8]) -> Option<(Header, u64, Place)> {
        assert_eq!(key.len(), self.shape.key, "a key of the table's shape");
        let h = self.head.get()?;
        let known = self
            .lately
            .borrow()
            .iter()
            .find(|r| r.key == key)
            .map(|r| (r.bucket, r.index, r.value.clone()));
        if let Some((b, i, value)) = known {
            return Some(match value {
                Some(value) => (h, b, Place::Held { i, value }),
                None => (
                    h,
                    b,
                    Place::Absent {
                        n: self.or_trap(self.count_of(b)),
                    },
                ),
            });
        }
        let b = h.bucket(self.hash_of(key));
        let (k, r) = (self.shape.key, self.shape.record());
        let records = self.or_trap(self.read_bucket(b));
        let place = match self.find(&records, key) {
            Some(i) => {
                let value = records[i * r + k..(i + 1) * r].to_vec();
                self.remember(key, b, i, Some(&value));
                Place::Held { i, value }
            }
            None => {
                self.remember(key, b, 0, None);
                Place::Absent {
                    n: records.len() / r,
                }
            }
        };
        Some((h, b, place))
    }

    /// The key's value, if the table holds it.
    pub fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        match self.locate(key)? {
            (_, _, Place::Held { value, .. }) => Some(value),
            (_, _, Place::Absent { .. }) => None,
        }
    }

    /// The records whose keys begin with `prefix`, of at least the bytes that choose the
    /// bucket (so they are all in one bucket), in the bucket's order.
    pub fn with_prefix(&self, prefix: &[u8]) -> Vec<Record> {
        assert!(
            prefix.len() >= self.shape.hashed,
            "a prefix names one bucket"
        );
        let Some(h) = self.head.get() else {
            return Vec::new();
        };
        let records = self.or_trap(self.read_bucket(h.bucket(hash(&prefix[..self.shape.hashed]))));
        records
            .chunks_exact(self.shape.record())
            .filter(|r| r.starts_with(prefix))
            .map(|r| (r[..self.shape.key].to_vec(), r[self.shape.key..].to_vec()))
            .collect()
    }

    /// Writes the key's value if the table holds the key; else inserts it if `insert` says
    /// so and its bucket has room. Whether the table holds the key now.
    pub fn put(&mut self, key: &[u8], value: &[u8], insert: impl FnOnce() -> bool) -> bool {
        matches!(
            self.upsert(key, |_| value.to_vec(), || insert().then(|| value.to_vec())),
            Upsert::Updated | Upsert::Inserted
        )
    }

    /// Writes `held(value)` if the table holds the key; else, if its bucket has room, the
    /// value `insert` gives (none: nothing written). One lookup for both.
    pub fn upsert(
        &mut self,
        key: &[u8],
        held: impl FnOnce(&[u8]) -> Vec<u8>,
        insert: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Upsert {
        // Before the first record: an empty table of one bucket, grown when it takes one.
        let (h, b, place) =
            self.locate(key)
                .unwrap_or((Header::default(), 0, Place::Absent { n: 0 }));
        let n = match place {
            Place::Held { i, value } => {
                let value = held(&value);
                self.check_value(&value);
                let at = Self::bucket_at(b) + 2 + (i * self.shape.record() + self.shape.key) as u64;
                self.memory.write(at, &value);
                self.remember(key, b, i, Some(&value));
                return Upsert::Updated;
            }
            Place::Absent { n } => n,
        };
        if n == self.shape.per_bucket() {
            return Upsert::Full;
        }
        let Some(value) = insert() else {
            return Upsert::Declined;
        };
        self.check_value(&value);
        if self.head.get().is_none() {
            grow_to(&self.memory, Self::bucket_at(1), self.shape.what);
        }
        self.append(b, n, key, &value);
        self.remember(key, b, n, Some(&value));
        let h = Header {
            count: h.count + 1,
            ..h
        };
        self.set_header(h);
        if h.count > self.shape.split_at * h.buckets() {
            self.split(h);
        }
        Upsert::Inserted
    }

    fn check_value(&self, value: &[u8]) {
        assert_eq!(
            value.len(),
            self.shape.value,
            "a value of the table's shape"
        );
    }

    fn append(&mut self, b: u64, n: usize, key: &[u8], value: &[u8]) {
        let at = Self::bucket_at(b) + 2 + (n * self.shape.record()) as u64;
        self.memory.write(at, key);
        self.memory.write(at + key.len() as u64, value);
        self.memory
            .write(Self::bucket_at(b), &(n as u16 + 1).to_le_bytes());
    }

    /// Removes the key's record; whether the table held it. The bucket's last record takes
    /// its place, so a bucket's records are always its first ones.
    pub fn remove(&mut self, key: &[u8]) -> bool {
        let Some((h, b, Place::Held { i, .. })) = self.locate(key) else {
            return false;
        };
        let r = self.shape.record();
        let n = self.or_trap(self.count_of(b));
        let at = Self::bucket_at(b);
        self.remember(key, b, 0, None);
        if i + 1 < n {
            let mut last = vec![0u8; r];
            self.memory.read(at + 2 + ((n - 1) * r) as u64, &mut last);
            self.memory.write(at + 2 + (i * r) as u64, &last);
            self.forget(&last[..self.shape.key]);
        }
        self.memory.write(at, &(n as u16 - 1).to_le_bytes());
        self.set_header(Header {
            count: h.count - 1,
            ..h
        });
        true
    }

    /// Splits bucket `split` into itself and a new last bucket by one more bit of the hash.
    fn split(&mut self, h: Header) {
        self.lately.borrow_mut().clear();
        let (from, to) = (h.split, h.buckets());
        let records = self.or_trap(self.read_bucket(from));
        let (mut stay, mut go) = (Vec::new(), Vec::new());
        for r in records.chunks_exact(self.shape.record()) {
            if self.hash_of(r) & ((1u64 << (h.level + 1)) - 1) == from {
                stay.extend_from_slice(r);
            } else {
                go.extend_from_slice(r);
            }
        }
        grow_to(&self.memory, Self::bucket_at(to + 1), self.shape.what);
        let r = self.shape.record();
        for (b, rs) in [(from, &stay), (to, &go)] {
            let at = Self::bucket_at(b);
            self.memory.write(at + 2, rs);
            self.memory
                .write(at, &((rs.len() / r) as u16).to_le_bytes());
        }
        let next = if h.split + 1 == 1u64 << h.level {
            Header {
                level: h.level + 1,
                split: 0,
                ..h
            }
        } else {
            Header {
                split: h.split + 1,
                ..h
            }
        };
        self.set_header(next);
    }

    /// Records held.
    pub fn len(&self) -> u64 {
        self.head.get().map_or(0, |h| h.count)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Buckets in use (the table's size: `PAGE` bytes each, and the header's page).
    pub fn buckets(&self) -> u64 {
        self.head.get().map_or(0, |h| h.buckets())
    }

    /// Every record (key, value), checked: each in the bucket its hash names, once, no value
    /// of zeros, and the header's count their number.
    pub fn entries(&self) -> Result<Vec<Record>, String> {
        let stored = self.header()?;
        if stored != self.head.get() {
            return Err(format!(
                "the header on the heap is {:?}, stable memory's {stored:?}",
                self.head.get()
            ));
        }
        let Some(h) = stored else {
            return Ok(Vec::new());
        };
        let (k, r) = (self.shape.key, self.shape.record());
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for b in 0..h.buckets() {
            let records = self.read_bucket(b)?;
            for (i, rec) in records.chunks_exact(r).enumerate() {
                if h.bucket(self.hash_of(rec)) != b {
                    return Err(format!("bucket {b} record {i} belongs in another bucket"));
                }
                if !seen.insert(rec[..k].to_vec()) {
                    return Err(format!("bucket {b} record {i} holds a key twice"));
                }
                if rec[k..].iter().all(|&x| x == 0) {
                    return Err(format!("bucket {b} record {i} holds a value of 0"));
                }
                out.push((rec[..k].to_vec(), rec[k..].to_vec()));
            }
        }
        if out.len() as u64 != h.count {
            return Err(format!(
                "the header says {} records, the buckets hold {}",
                h.count,
                out.len()
            ));
        }
        for Remembered {
            key,
            bucket: b,
            index: i,
            value,
        } in self.lately.borrow().iter()
        {
            if h.bucket(self.hash_of(key)) != *b {
                return Err(format!(
                    "a key remembered on the heap in bucket {b} belongs in another"
                ));
            }
            let stored = self.read_bucket(*b)?;
            let found = self.find(&stored, key);
            let same = match (value, found) {
                (Some(v), Some(j)) => j == *i && stored[j * r + k..(j + 1) * r] == v[..],
                (None, None) => true,
                _ => false,
            };
            if !same {
                return Err(format!(
                    "a key remembered on the heap in bucket {b} is not as stored there"
                ));
            }
        }
        Ok(out)
    }
}
