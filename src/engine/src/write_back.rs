//! A stable B-tree map whose entries written lately are held in a few slots of stable memory
//! beside it, and written back to the map only when their slot is taken by another key.
//!
//! Why: an insert into a B-tree searches and rewrites a node per level, and the maps keyed by
//! owner are as deep as the owners are many (~130 000 instructions an insert on the IC model at
//! 1 000 000 owners). A prepare wrote two of them (its owner's kept count, its usage count) and
//! the open count beside them. An owner who writes again before `SLOTS` other keys were written
//! writes a slot in place instead, whatever the map holds; a key new to the slots costs the
//! insert it cost before (the key it displaces is written back).
//!
//! The slots are the truth for the keys they hold: a held key's entry in the map is stale or
//! absent until it is written back, and every read looks at the held keys first. Nothing is
//! kept only on the heap: the heap mirrors the slots (read again when the state is opened, as
//! after an upgrade), and a trap rolls both back.
//!
//! The slot region (version 1), at `base` in its memory, at most `REGION_BYTES`:
//! `b"WB"`, version, slot count, slot size (u16 LE), key bytes at most (u16 LE); then each slot:
//! state (0 free; else `HELD` | `HAS_VALUE` if it holds a value, not a removal | `IN_MAP` if the
//! map has an entry for the key), the key's length, its bytes (padded to the most), the value's
//! bytes (zeros for a removal), and the number of the write that wrote the slot (u64 LE), so
//! the key written least lately is known again after an upgrade.

use crate::memory::grow_to;
use ic_stable_structures::storable::Bound;
use ic_stable_structures::{Memory, StableBTreeMap, Storable};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

/// Keys held in slots.
pub const SLOTS: usize = 16;
/// Bytes a region may take in its memory (regions of one memory are this far apart).
pub const REGION_BYTES: u64 = 4096;
pub const MAGIC: &[u8; 2] = b"WB";
pub const VERSION: u8 = 1;
const HEADER: usize = 8;
const HELD: u8 = 0x80;
const HAS_VALUE: u8 = 0x02;
const IN_MAP: u8 = 0x01;
/// Values of keys read from the map lately (heap only), so a read then a write searches once.
const READ_CACHE: usize = 16;

struct Held<K, V> {
    slot: usize,
    key: K,
    /// `None`: the key was removed (the map's entry, if any, goes when it is written back).
    value: Option<V>,
    /// Whether the map has an entry for the key (stale while it is held).
    in_map: bool,
    /// The write's number (higher is later).
    written: u64,
}

pub struct WriteBack<K: Storable + Ord + Clone, V: Storable + Clone, M: Memory> {
    map: StableBTreeMap<K, V, M>,
    slots: M,
    base: u64,
    key_max: usize,
    value_size: usize,
    /// The held keys, least recently written first.
    held: Vec<Held<K, V>>,
    /// (key, the map's value) of keys not held, newest last.
    read: RefCell<Vec<(K, Option<V>)>>,
    /// Whether the region and its header are in stable memory (once true, always).
    ready: Cell<bool>,
    /// The next write's number: one above the highest a slot holds.
    next_write: u64,
}

impl<K: Storable + Ord + Clone, V: Storable + Clone, M: Memory> WriteBack<K, V, M> {
    /// Opens the map and its slots (at `base` of `slots`; keys of more than `key_max` bytes are
    /// never held, they are written to the map directly). A region of another shape or version
    /// than this code writes, or one that holds a key twice, traps (so an upgrade into it is
    /// refused): nothing is read as something else.
    pub fn init(map: M, slots: M, base: u64, key_max: usize) -> Self {
        let value_size = match V::BOUND {
            Bound::Bounded {
                max_size,
                is_fixed_size: true,
            } => max_size as usize,
            _ => panic!("write-back values are of a fixed size"),
        };
        assert!(key_max <= u8::MAX as usize, "a held key's length is a byte");
        let w = WriteBack {
            map: StableBTreeMap::init(map),
            slots,
            base,
            key_max,
            value_size,
            held: Vec::with_capacity(SLOTS),
            read: RefCell::new(Vec::with_capacity(READ_CACHE)),
            ready: Cell::new(false),
            next_write: 0,
        };
        assert!(
            (HEADER + SLOTS * w.slot_size()) as u64 <= REGION_BYTES,
            "the slots fit their region"
        );
        w.load()
    }

    fn slot_size(&self) -> usize {
        2 + self.key_max + self.value_size + 8
    }

    fn slot_at(&self, slot: usize) -> u64 {
        self.base + (HEADER + slot * self.slot_size()) as u64
    }

    fn header(&self) -> [u8; HEADER] {
        let mut h = [0u8; HEADER];
        h[..2].copy_from_slice(MAGIC);
        h[2] = VERSION;
        h[3] = SLOTS as u8;
        h[4..6].copy_from_slice(&(self.slot_size() as u16).to_le_bytes());
        h[6..8].copy_from_slice(&(self.key_max as u16).to_le_bytes());
        h
    }

    fn region_exists(&self) -> bool {
        self.slots.size() * crate::memory::WASM_PAGE >= self.base + REGION_BYTES
    }

    fn load(mut self) -> Self {
        self.held = self.read_held();
        self.held.sort_by_key(|h| h.written);
        if let Err(why) = self.order() {
            panic!("{why}");
        }
        self.next_write = self.held.last().map_or(0, |h| {
            h.written
                .checked_add(1)
                .expect("a write number below the most")
        });
        self
    }

    /// Whether the held keys are each held once and in strictly increasing write order.
    fn order(&self) -> Result<(), String> {
        for (i, h) in self.held.iter().enumerate() {
            if self.held[..i].iter().any(|o| o.key == h.key) {
                return Err(format!(
                    "write-back slot {} at {} holds a key another slot holds",
                    h.slot, self.base
                ));
            }
            if i > 0 && self.held[i - 1].written >= h.written {
                return Err(format!(
                    "write-back slot {} at {} carries another slot's write number",
                    h.slot, self.base
                ));
            }
        }
        Ok(())
    }

    /// The held keys as stable memory has them, in slot order.
    fn read_held(&self) -> Vec<Held<K, V>> {
        let mut held = vec![];
        if !self.region_exists() {
            return held;
        }
        let mut h = [0u8; HEADER];
        self.slots.read(self.base, &mut h);
        if h == [0u8; HEADER] {
            return held;
        }
        assert!(
            h == self.header(),
            "the write-back slots at {} were written in another shape ({h:?}) than this code reads",
            self.base
        );
        let mut buf = vec![0u8; self.slot_size()];
        for slot in 0..SLOTS {
            self.slots.read(self.slot_at(slot), &mut buf);
            let state = buf[0];
            if state == 0 {
                continue;
            }
            let len = buf[1] as usize;
            assert!(
                state & !(HELD | HAS_VALUE | IN_MAP) == 0
                    && state & HELD != 0
                    && len <= self.key_max,
                "write-back slot {slot} at {} is not one this code writes",
                self.base
            );
            let key = K::from_bytes(Cow::Borrowed(&buf[2..2 + len]));
            let at = 2 + self.key_max;
            let value = (state & HAS_VALUE != 0)
                .then(|| V::from_bytes(Cow::Borrowed(&buf[at..at + self.value_size])));
            let at = at + self.value_size;
            let written = u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
            held.push(Held {
                slot,
                key,
                value,
                in_map: state & IN_MAP != 0,
                written,
            });
        }
        held
    }

    fn write_slot(&self, h: &Held<K, V>, key_bytes: &[u8]) {
        if !self.ready.get() {
            if !self.region_exists() {
                grow_to(&self.slots, self.base + REGION_BYTES, "write-back slots");
            }
            self.slots.write(self.base, &self.header());
            self.ready.set(true);
        }
        let mut buf = vec![0u8; self.slot_size()];
        buf[0] = HELD | if h.in_map { IN_MAP } else { 0 };
        buf[1] = key_bytes.len() as u8;
        buf[2..2 + key_bytes.len()].copy_from_slice(key_bytes);
        if let Some(v) = &h.value {
            buf[0] |= HAS_VALUE;
            let at = 2 + self.key_max;
            let bytes = v.to_bytes();
            debug_assert_eq!(bytes.len(), self.value_size, "a fixed-size value");
            buf[at..at + bytes.len()].copy_from_slice(&bytes);
        }
        let at = 2 + self.key_max + self.value_size;
        buf[at..].copy_from_slice(&h.written.to_le_bytes());
        self.slots.write(self.slot_at(h.slot), &buf);
    }

    fn remember_read(&self, key: &K, value: Option<V>) {
        let mut r = self.read.borrow_mut();
        r.retain(|(k, _)| k != key);
        if r.len() == READ_CACHE {
            r.remove(0);
        }
        r.push((key.clone(), value));
    }

    fn forget_read(&self, key: &K) {
        self.read.borrow_mut().retain(|(k, _)| k != key);
    }

    /// The map's value for a key read lately (`Some(None)`: the map has none).
    fn read_lately(&self, key: &K) -> Option<Option<V>> {
        self.read
            .borrow()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// The key's value: held, read lately, or the map's (none when nothing is held or kept,
    /// as for the B-trees of layout 6 that the count tables took over on a fresh install).
    pub fn get(&self, key: &K) -> Option<V> {
        if self.is_empty() {
            return None;
        }
        if let Some(h) = self.held.iter().find(|h| h.key == *key) {
            return h.value.clone();
        }
        if let Some(v) = self.read_lately(key) {
            return v;
        }
        let v = self.map.get(key);
        self.remember_read(key, v.clone());
        v
    }

    pub fn insert(&mut self, key: K, value: V) {
        self.put(key, Some(value));
    }

    pub fn remove(&mut self, key: &K) {
        if self.is_empty() {
            return;
        }
        self.put(key.clone(), None);
    }

    fn put(&mut self, key: K, value: Option<V>) {
        let key_bytes = key.to_bytes().into_owned();
        if let Some(i) = self.held.iter().position(|h| h.key == key) {
            let mut h = self.held.remove(i);
            h.value = value;
            h.written = self.take_write();
            self.write_slot(&h, &key_bytes);
            self.held.push(h);
            return;
        }
        if key_bytes.len() > self.key_max {
            match &value {
                Some(v) => self.map.insert(key.clone(), v.clone()),
                None => self.map.remove(&key),
            };
            self.remember_read(&key, value);
            return;
        }
        let in_map = self
            .read_lately(&key)
            .map_or_else(|| self.map.contains_key(&key), |v| v.is_some());
        if value.is_none() && !in_map {
            // Nothing to remove, and nothing to hold.
            self.remember_read(&key, None);
            return;
        }
        let slot = self.take_slot();
        let h = Held {
            slot,
            key,
            value,
            in_map,
            written: self.take_write(),
        };
        self.write_slot(&h, &key_bytes);
        self.forget_read(&h.key);
        self.held.push(h);
    }

    fn take_write(&mut self) -> u64 {
        let n = self.next_write;
        self.next_write += 1;
        n
    }

    /// A free slot, or the least recently written key's, written back to the map first.
    fn take_slot(&mut self) -> usize {
        if self.held.len() < SLOTS {
            return (0..SLOTS)
                .find(|s| self.held.iter().all(|h| h.slot != *s))
                .expect("fewer keys held than slots");
        }
        let oldest = self.held.remove(0);
        match &oldest.value {
            Some(v) => {
                self.map.insert(oldest.key.clone(), v.clone());
            }
            None if oldest.in_map => {
                self.map.remove(&oldest.key);
            }
            None => {}
        }
        self.remember_read(&oldest.key, oldest.value);
        // The slot is written over by its new key in the same message.
        oldest.slot
    }

    /// Entries, as reads see them.
    pub fn len(&self) -> u64 {
        let mut n = self.map.len();
        for h in &self.held {
            match (h.value.is_some(), h.in_map) {
                (true, false) => n = n.saturating_add(1),
                (false, true) => n = n.saturating_sub(1),
                _ => {}
            }
        }
        n
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries from `start` on while `keep` holds, in key order, as reads see them: `keep`
    /// holds on one run of keys from `start` (the keys with a prefix, from the prefix).
    pub fn range_while(&self, start: K, keep: impl Fn(&K) -> bool) -> Vec<(K, V)> {
        let mut out: BTreeMap<K, V> = self
            .map
            .range(start.clone()..)
            .map(|e| e.into_pair())
            .take_while(|(k, _)| keep(k))
            .collect();
        self.overlay(&mut out, |k| *k >= start && keep(k));
        out.into_iter().collect()
    }

    /// Puts the held keys `over` picks over `out` (a value, or a removal).
    fn overlay(&self, out: &mut BTreeMap<K, V>, over: impl Fn(&K) -> bool) {
        for h in self.held.iter().filter(|h| over(&h.key)) {
            match &h.value {
                Some(v) => out.insert(h.key.clone(), v.clone()),
                None => out.remove(&h.key),
            };
        }
    }

    /// Every entry as reads see them (checks; reads the whole map).
    pub fn stored(&self) -> BTreeMap<K, V> {
        let mut out: BTreeMap<K, V> = self.map.iter().map(|e| e.into_pair()).collect();
        self.overlay(&mut out, |_| true);
        out
    }

    /// Whether the heap is what stable memory says (checks): the slots read back are the held
    /// keys, each held once, their map flags true, and every value read lately the map's.
    pub fn check(&self) -> Result<(), String>
    where
        K: std::fmt::Debug,
        V: PartialEq + std::fmt::Debug,
    {
        let mut mine: Vec<_> = self
            .held
            .iter()
            .map(|h| (h.slot, h.key.clone(), h.value.clone(), h.in_map, h.written))
            .collect();
        mine.sort_by_key(|e| e.0);
        let read: Vec<_> = self
            .read_held()
            .into_iter()
            .map(|h| (h.slot, h.key, h.value, h.in_map, h.written))
            .collect();
        if mine != read {
            return Err(format!(
                "write-back slots at {}: held {mine:?}, stable memory {read:?}",
                self.base
            ));
        }
        self.order()?;
        for h in &self.held {
            if h.written >= self.next_write {
                return Err(format!("{:?} is out of its write order", h.key));
            }
            if self.map.contains_key(&h.key) != h.in_map {
                return Err(format!(
                    "{:?}: held as in_map {}, the map disagrees",
                    h.key, h.in_map
                ));
            }
        }
        for (k, v) in self.read.borrow().iter() {
            if self.held.iter().any(|h| h.key == *k) || self.map.get(k) != *v {
                return Err(format!("the value read lately for {k:?} is not the map's"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ic_stable_structures::VectorMemory;
    use proptest::prelude::*;

    type Map = WriteBack<Vec<u8>, u64, VectorMemory>;

    fn open(map: &VectorMemory, slots: &VectorMemory) -> Map {
        WriteBack::init(map.clone(), slots.clone(), REGION_BYTES, 8)
    }

    fn key(n: u8) -> Vec<u8> {
        vec![n; 1 + (n % 4) as usize]
    }

    #[test]
    fn a_held_key_is_written_in_its_slot_and_the_map_only_when_the_slot_is_taken() {
        let (map, slots) = (VectorMemory::default(), VectorMemory::default());
        let mut w = open(&map, &slots);
        assert_eq!(slots.size(), 0, "no page before the first write");
        w.insert(key(1), 10);
        w.insert(key(1), 11);
        assert_eq!(w.map.len(), 0, "held, not in the map");
        assert_eq!((w.get(&key(1)), w.len()), (Some(11), 1));
        for n in 2..=SLOTS as u8 {
            w.insert(key(n), u64::from(n));
        }
        assert_eq!(w.map.len(), 0, "every key has a slot");
        w.insert(key(100), 100);
        assert_eq!(
            w.map.get(&key(1)),
            Some(11),
            "the oldest key is written back"
        );
        assert_eq!(w.map.len(), 1);
        assert_eq!(w.len(), SLOTS as u64 + 1);
        w.check().unwrap();
        let again = open(&map, &slots);
        assert_eq!(
            again.stored(),
            w.stored(),
            "an upgrade reads the slots back"
        );
        again.check().unwrap();
    }

    #[test]
    fn a_removal_is_held_until_written_back_and_len_counts_it() {
        let (map, slots) = (VectorMemory::default(), VectorMemory::default());
        let mut w = open(&map, &slots);
        for n in 0..(SLOTS as u8 + 4) {
            w.insert(key(n), 1);
        }
        let in_map = key(0);
        assert!(w.map.contains_key(&in_map));
        w.remove(&in_map);
        assert_eq!((w.get(&in_map), w.len()), (None, SLOTS as u64 + 3));
        assert!(w.map.contains_key(&in_map), "the removal is held");
        assert!(!w.stored().contains_key(&in_map));
        let written_back = w.map.len();
        w.remove(&key(200));
        assert_eq!(
            (w.map.len(), w.get(&key(200))),
            (written_back, None),
            "removing a key that is nowhere holds nothing (and writes no other key back)"
        );
        for n in 50..(50 + SLOTS as u8) {
            w.insert(key(n), 2);
        }
        assert!(!w.map.contains_key(&in_map), "written back as a removal");
        w.check().unwrap();
    }

    #[test]
    fn the_key_written_least_lately_gives_its_slot_after_a_reopening_too() {
        let (map, slots) = (VectorMemory::default(), VectorMemory::default());
        let mut w = open(&map, &slots);
        for n in 0..SLOTS as u8 {
            w.insert(key(n), 1);
        }
        // Key 0 holds slot 0 and is now the newest; key 1 the oldest.
        w.insert(key(0), 2);
        let mut w = open(&map, &slots);
        w.check().unwrap();
        w.insert(key(100), 3);
        assert_eq!(
            (w.map.get(&key(0)), w.map.get(&key(1))),
            (None, Some(1)),
            "key 1 is written back, key 0 stays held"
        );
        w.check().unwrap();
    }

    #[test]
    fn regions_of_one_memory_keep_to_their_own_bytes() {
        let (m1, m2, slots) = (
            VectorMemory::default(),
            VectorMemory::default(),
            VectorMemory::default(),
        );
        let mut a: Map = WriteBack::init(m1.clone(), slots.clone(), 0, 8);
        let mut b: Map = WriteBack::init(m2.clone(), slots.clone(), REGION_BYTES, 8);
        for n in 0..40u8 {
            a.insert(key(n), u64::from(n));
            b.insert(key(n), 1000 + u64::from(n));
            if n % 3 == 0 {
                a.remove(&key(n / 2));
            }
        }
        a.check().unwrap();
        b.check().unwrap();
        let (a2, b2): (Map, Map) = (
            WriteBack::init(m1, slots.clone(), 0, 8),
            WriteBack::init(m2, slots, REGION_BYTES, 8),
        );
        assert_eq!((a2.stored(), b2.stored()), (a.stored(), b.stored()));
    }

    #[test]
    fn check_finds_a_slot_that_is_not_what_the_heap_holds() {
        let (map, slots) = (VectorMemory::default(), VectorMemory::default());
        let mut w = open(&map, &slots);
        w.insert(key(1), 7);
        w.check().unwrap();
        let state = REGION_BYTES + HEADER as u64;
        slots.write(state, &[HELD | HAS_VALUE | IN_MAP]);
        assert!(w.check().is_err(), "a map flag flipped");
        slots.write(state, &[HELD | HAS_VALUE]);
        w.check().unwrap();
        slots.write(state + 2 + 8, &[8]);
        assert!(w.check().is_err(), "a value changed");
    }

    #[test]
    fn a_key_held_in_two_slots_is_refused_when_read() {
        let (map, slots) = (VectorMemory::default(), VectorMemory::default());
        let mut w = open(&map, &slots);
        w.insert(key(1), 1);
        w.insert(key(2), 2);
        let size = w.slot_size();
        let mut first = vec![0u8; size];
        slots.read(REGION_BYTES + HEADER as u64, &mut first);
        slots.write(REGION_BYTES + (HEADER + size) as u64, &first);
        let twice = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| open(&map, &slots)));
        let why = twice
            .err()
            .and_then(|e| e.downcast::<String>().ok())
            .unwrap();
        assert!(why.contains("holds a key another slot holds"), "{why}");
    }

    #[test]
    fn a_key_longer_than_a_slot_holds_goes_to_the_map() {
        let (map, slots) = (VectorMemory::default(), VectorMemory::default());
        let mut w = open(&map, &slots);
        let long = vec![7u8; 9];
        w.insert(long.clone(), 5);
        assert_eq!((w.map.get(&long), w.held.len()), (Some(5), 0));
        w.remove(&long);
        assert_eq!((w.get(&long), w.len()), (None, 0));
        w.check().unwrap();
    }

    #[test]
    fn slots_of_another_shape_are_refused_by_name() {
        let (map, slots) = (VectorMemory::default(), VectorMemory::default());
        open(&map, &slots).insert(key(1), 1);
        let wider = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            WriteBack::<Vec<u8>, u64, _>::init(map.clone(), slots.clone(), REGION_BYTES, 9)
        }));
        let why = wider
            .err()
            .and_then(|e| e.downcast::<String>().ok())
            .unwrap();
        assert!(why.contains("another shape"), "{why}");
        slots.write(REGION_BYTES + HEADER as u64, &[0x40]);
        let odd = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| open(&map, &slots)));
        let why = odd.err().and_then(|e| e.downcast::<String>().ok()).unwrap();
        assert!(why.contains("not one this code writes"), "{why}");
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u8, u64),
        Remove(u8),
        Get(u8),
        Reopen,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u8..40, any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
            3 => (0u8..40).prop_map(Op::Remove),
            2 => (0u8..40).prop_map(Op::Get),
            1 => Just(Op::Reopen),
        ]
    }

    /// Keys of 1 to 11 bytes: some longer than the 8 a slot holds (written to the map).
    fn pkey(n: u8) -> Vec<u8> {
        vec![n; 1 + (n % 11) as usize]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// Against a plain map: every read, the length and the whole contents agree after
        /// every step, through reopenings (upgrades), and the heap is what stable memory says.
        #[test]
        fn reads_are_a_plain_maps_through_any_writes_and_reopenings(
            ops in proptest::collection::vec(op(), 1..200)
        ) {
            let (map, slots) = (VectorMemory::default(), VectorMemory::default());
            let mut w = open(&map, &slots);
            let mut model: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        w.insert(pkey(k), v);
                        model.insert(pkey(k), v);
                    }
                    Op::Remove(k) => {
                        w.remove(&pkey(k));
                        model.remove(&pkey(k));
                    }
                    Op::Get(k) => prop_assert_eq!(w.get(&pkey(k)), model.get(&pkey(k)).copied()),
                    Op::Reopen => w = open(&map, &slots),
                }
                prop_assert_eq!(w.len(), model.len() as u64);
                prop_assert_eq!(&w.stored(), &model);
                let from = pkey(10);
                let want: Vec<_> = model
                    .range(from.clone()..)
                    .take_while(|(k, _)| k[0] < 30)
                    .map(|(k, v)| (k.clone(), *v))
                    .collect();
                prop_assert_eq!(w.range_while(from, |k| k[0] < 30), want);
                if let Err(e) = w.check() {
                    return Err(TestCaseError::fail(e));
                }
            }
        }
    }
}
