//! (owner, tool) → calls made, in a [`HashTable`] (stored layout 7): memory 31, with the tool
//! names in memory 32.
//!
//! Why: the usage counts were a B-tree of (owner, tool name) keys of up to 158 bytes, as deep
//! as the pairs are many, and a pair new to it (every tool's first call by an owner new to the
//! canister) cost an insert of ~150 000 to 250 000 instructions on the IC model. Here a pair is
//! a record of a hash table whose bucket is chosen by the owner alone: an owner's counts are
//! read together from one page (selection reads them for every turn), and a pair is found and
//! written in that page.
//!
//! A record: the owner's key (as `crate::owner_table`'s), the tool name's digest (the first 8
//! bytes of `hash_table::hash` of its bytes, little-endian), then the count (`u64`,
//! little-endian). The digests' names are in a B-tree of their own (32), written when a pair
//! of the name is first inserted into the table, read when an owner's counts are listed, and
//! remembered on the heap. A
//! name whose digest another name has (names are not chosen to be unique under it), a name
//! past [`MAX_NAMES`], and a pair whose bucket is full are counted in the B-tree of layout 6
//! (18, with its write-back slots) instead, as every pair was before; the pairs that B-tree
//! held stay there. So a pair is in exactly one of the two.

use super::records::UsageKey;
use crate::hash_table::{u64_at, HashTable, Shape, Upsert};
use crate::owner_table::{key_of, owner_of, KEY as OWNER_KEY};
use crate::write_back::WriteBack;
use candid::Principal;
use ic_stable_structures::{Memory, StableBTreeMap};
use std::cell::RefCell;
use std::collections::BTreeMap;

pub const MAGIC: &[u8; 4] = b"TUC\x01";
/// A key: the owner's key, then the name's digest.
pub const KEY: usize = OWNER_KEY + 8;
pub const SHAPE: Shape = Shape {
    magic: *MAGIC,
    key: KEY,
    value: 8,
    hashed: OWNER_KEY,
    // An owner's pairs are in one bucket, so buckets vary more than the records' number says:
    // a bucket of 89 waiting for its split holds ~48 at most on average (~10 owners of 5 tools).
    split_at: 24,
    what: "usage count table",
};
/// Tool names given a digest at most; a name past it is counted in the B-tree. It bounds the
/// names kept (and remembered on the heap: 4 096 names of up to 128 bytes) whatever forms
/// admins register over time; a host offers far fewer tools at once.
pub const MAX_NAMES: u64 = 4_096;

fn digest(tool: &str) -> u64 {
    crate::hash_table::hash(tool.as_bytes())
}

fn key(owner: &Principal, d: u64) -> [u8; KEY] {
    let mut k = [0u8; KEY];
    k[..OWNER_KEY].copy_from_slice(&key_of(owner));
    k[OWNER_KEY..].copy_from_slice(&d.to_le_bytes());
    k
}

pub struct UsageCounts<M: Memory> {
    table: HashTable<M>,
    /// digest → tool name; `None` until the first name (a fresh install takes no bucket).
    names: Option<StableBTreeMap<u64, String, M>>,
    names_memory: M,
    /// Names read or written lately: digest → name (each as the B-tree has it).
    known: RefCell<BTreeMap<u64, String>>,
    /// The pairs of layout 6, and those the table has no room or no digest for.
    legacy: WriteBack<UsageKey, u64, M>,
}

impl<M: Memory + Clone> UsageCounts<M> {
    /// The table in `table`, the names in `names`, layout 6's B-tree in `memory` with its
    /// write-back slots at `base` of `slots`.
    pub fn init(table: M, names: M, memory: M, slots: M, base: u64) -> Self {
        UsageCounts {
            table: HashTable::init(table, SHAPE),
            names: (names.size() > 0).then(|| StableBTreeMap::init(names.clone())),
            names_memory: names,
            known: RefCell::new(BTreeMap::new()),
            legacy: WriteBack::init(memory, slots, base, UsageKey::MAX_BYTES),
        }
    }
}

impl<M: Memory> UsageCounts<M> {
    /// The name the B-tree of names has for a digest.
    fn name_of(&self, d: u64) -> Option<String> {
        if let Some(n) = self.known.borrow().get(&d) {
            return Some(n.clone());
        }
        let n = self.names.as_ref()?.get(&d)?;
        self.known.borrow_mut().insert(d, n.clone());
        Some(n)
    }

    /// Whether the digest names `tool` (`None`: it names nothing yet).
    fn names(&self, d: u64, tool: &str) -> Option<bool> {
        if let Some(n) = self.known.borrow().get(&d) {
            return Some(n == tool);
        }
        self.name_of(d).map(|n| n == tool)
    }

    /// Gives digest `d` to `tool`, which no name has yet: whether there was room.
    fn give_name(&mut self, d: u64, tool: &str) -> bool
    where
        M: Clone,
    {
        let mem = &self.names_memory;
        let names = self
            .names
            .get_or_insert_with(|| StableBTreeMap::init(mem.clone()));
        if names.len() >= MAX_NAMES {
            return false;
        }
        names.insert(d, tool.to_string());
        self.known.borrow_mut().insert(d, tool.to_string());
        true
    }

    /// Pairs counted, both places together.
    pub fn len(&self) -> u64 {
        self.table.len() + self.legacy.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The owner's count for a tool, if it has one.
    pub fn get(&self, owner: &Principal, tool: &str) -> Option<u64> {
        let d = digest(tool);
        if self.names(d, tool) == Some(true) {
            if let Some(v) = self.table.get(&key(owner, d)) {
                return Some(u64_at(&v));
            }
        }
        self.legacy.get(&UsageKey::new(owner, tool))
    }

    /// One more call of `tool` by `owner`: counted unless the pair is new and `max_pairs`
    /// are counted already. One lookup in the table whether the pair is new or not; a name is
    /// given its digest only when a pair of it is inserted into the table.
    pub fn bump(&mut self, owner: &Principal, tool: &str, max_pairs: u64)
    where
        M: Clone,
    {
        let old = UsageKey::new(owner, tool);
        let d = digest(tool);
        match self.names(d, tool) {
            Some(true) => {}
            // The digest names another name: this name's pairs are in the B-tree.
            Some(false) => return self.bump_in_b_tree(old, max_pairs),
            // No pair of this name is in the table yet.
            None => {
                let in_b_tree = self.legacy.get(&old).is_some();
                if in_b_tree || self.len() >= max_pairs || !self.give_name(d, tool) {
                    return self.bump_in_b_tree(old, max_pairs);
                }
            }
        }
        let len = self.len();
        let legacy = &mut self.legacy;
        let done = self.table.upsert(
            &key(owner, d),
            |v| {
                let n = u64_at(v);
                n.saturating_add(1).to_le_bytes().to_vec()
            },
            || {
                // New to the table: the B-tree may hold it (counted before layout 7).
                if let Some(n) = legacy.get(&old) {
                    legacy.insert(old.clone(), n.saturating_add(1));
                    return None;
                }
                (len < max_pairs).then(|| 1u64.to_le_bytes().to_vec())
            },
        );
        if done == Upsert::Full {
            self.bump_in_b_tree(old, max_pairs);
        }
    }

    /// One more call of a pair the table does not count.
    fn bump_in_b_tree(&mut self, key: UsageKey, max_pairs: u64) {
        let n = match self.legacy.get(&key) {
            Some(n) => n,
            None if self.len() >= max_pairs => return,
            None => 0,
        };
        self.legacy.insert(key, n.saturating_add(1));
    }

    /// An owner's counts, by tool name.
    pub fn counts(&self, owner: &Principal) -> BTreeMap<String, u64> {
        let mut out: BTreeMap<String, u64> = self
            .legacy
            .range_while(UsageKey::start(owner), |k| k.is_of(owner))
            .into_iter()
            .map(|(k, n)| (k.tool().to_string(), n))
            .collect();
        for (k, v) in self.table.with_prefix(&key_of(owner)) {
            let d = u64_at(&k[OWNER_KEY..]);
            let name = self
                .name_of(d)
                .unwrap_or_else(|| panic!("usage count table: digest {d:016x} names no tool"));
            out.insert(name, u64_at(&v));
        }
        out
    }

    /// The pairs of the table and of the B-tree, checked: the table's records (see
    /// [`HashTable::entries`]), each key an owner's and a digest that names a tool whose own
    /// digest it is, no pair in both places, and the B-tree's slots as stored.
    pub fn check(&self) -> Result<(), String> {
        self.legacy.check()?;
        let names: BTreeMap<u64, String> = match &self.names {
            Some(n) => n.iter().map(|e| e.into_pair()).collect(),
            None => BTreeMap::new(),
        };
        for (d, n) in &names {
            if digest(n) != *d {
                return Err(format!(
                    "tool name {n:?} is kept under digest {d:016x}, not its own"
                ));
            }
        }
        for (d, n) in self.known.borrow().iter() {
            if names.get(d) != Some(n) {
                return Err(format!(
                    "tool name {n:?} is remembered, not stored, under {d:016x}"
                ));
            }
        }
        for (k, _) in self.table.entries()? {
            let owner = owner_of(&k)?;
            let d = u64_at(&k[OWNER_KEY..]);
            let name = names
                .get(&d)
                .ok_or_else(|| format!("usage of {owner}: digest {d:016x} names no tool"))?;
            if self.legacy.get(&UsageKey::new(&owner, name)).is_some() {
                return Err(format!(
                    "usage of {owner} for {name} is in the table and the B-tree"
                ));
            }
        }
        Ok(())
    }

    /// Pairs in the table, and in the B-tree (benchmarks, tests).
    pub fn split(&self) -> (u64, u64) {
        (self.table.len(), self.legacy.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ic_stable_structures::VectorMemory;
    use proptest::prelude::*;

    #[derive(Clone, Default)]
    struct Mems {
        table: VectorMemory,
        names: VectorMemory,
        map: VectorMemory,
        slots: VectorMemory,
    }

    impl Mems {
        fn open(&self) -> UsageCounts<VectorMemory> {
            UsageCounts::init(
                self.table.clone(),
                self.names.clone(),
                self.map.clone(),
                self.slots.clone(),
                0,
            )
        }

        /// Layout 6's B-tree with `pairs` counted in it (some held in its slots).
        fn with_layout_6(pairs: &[(Principal, &str, u64)]) -> Self {
            let m = Mems::default();
            let mut old = WriteBack::<UsageKey, u64, _>::init(
                m.map.clone(),
                m.slots.clone(),
                0,
                UsageKey::MAX_BYTES,
            );
            for (o, t, n) in pairs {
                old.insert(UsageKey::new(o, t), *n);
            }
            m
        }
    }

    fn p(n: u8) -> Principal {
        Principal::from_slice(&vec![n; 1 + usize::from(n) % 29])
    }

    #[test]
    fn counts_read_back_by_name_through_a_fresh_opening() {
        let m = Mems::default();
        let mut u = m.open();
        assert_eq!(m.names.size(), 0, "no name before the first count");
        for k in 0..50u8 {
            for _ in 0..=k % 3 {
                u.bump(&p(k), "icrc1_transfer", 1_000);
            }
            u.bump(&p(k), &format!("tool_{}", k % 5), 1_000);
        }
        u.check().unwrap();
        let again = m.open();
        for k in 0..50u8 {
            let want: BTreeMap<String, u64> = [
                ("icrc1_transfer".to_string(), u64::from(k % 3) + 1),
                (format!("tool_{}", k % 5), 1),
            ]
            .into();
            assert_eq!(again.counts(&p(k)), want, "owner {k}");
            assert_eq!(
                again.get(&p(k), "icrc1_transfer"),
                Some(u64::from(k % 3) + 1)
            );
        }
        assert_eq!(again.split(), (100, 0));
        assert!(again.counts(&p(200)).is_empty());
        again.check().unwrap();
    }

    #[test]
    fn pairs_counted_in_the_b_tree_stay_there_and_new_ones_go_to_the_table() {
        let m = Mems::with_layout_6(&[(p(1), "a", 5), (p(2), "a", 1), (p(1), "b", 2)]);
        let mut u = m.open();
        assert_eq!(u.split(), (0, 3));
        u.bump(&p(1), "a", 1_000);
        u.bump(&p(1), "c", 1_000);
        u.bump(&p(2), "b", 1_000);
        assert_eq!(u.split(), (2, 3));
        let again = m.open();
        assert_eq!(
            again.counts(&p(1)),
            [("a".into(), 6), ("b".into(), 2), ("c".into(), 1)].into()
        );
        assert_eq!(
            again.counts(&p(2)),
            [("a".into(), 1), ("b".into(), 1)].into()
        );
        again.check().unwrap();
    }

    #[test]
    fn the_bound_on_pairs_counts_both_places() {
        let m = Mems::with_layout_6(&[(p(1), "a", 5)]);
        let mut u = m.open();
        u.bump(&p(2), "a", 2);
        u.bump(&p(3), "a", 2);
        assert_eq!(u.split(), (1, 1), "the third pair is past the bound of 2");
        assert_eq!(u.get(&p(3), "a"), None);
        u.bump(&p(1), "a", 2);
        u.bump(&p(2), "a", 2);
        assert_eq!((u.get(&p(1), "a"), u.get(&p(2), "a")), (Some(6), Some(2)));
        // A name whose pair is not counted is given no digest: the names stay bounded by
        // what is counted.
        u.bump(&p(2), "b", 2);
        assert_eq!(u.get(&p(2), "b"), None);
        let names = u.names.as_ref().unwrap();
        assert_eq!((names.len(), names.get(&digest("b"))), (1, None));
        u.check().unwrap();
    }

    /// An owner with more tools than its bucket holds has the rest counted in the B-tree; a
    /// name past `MAX_NAMES` is counted there too; and a name whose digest names another tool.
    #[test]
    fn pairs_with_no_room_or_no_digest_go_to_the_b_tree() {
        let m = Mems::default();
        let mut u = m.open();
        let per = SHAPE.per_bucket();
        for t in 0..per + 4 {
            u.bump(&p(1), &format!("t{t}"), 1_000_000);
        }
        assert_eq!(u.split(), (per as u64, 4));
        assert_eq!(u.counts(&p(1)).len(), per + 4);
        for t in per + 4..MAX_NAMES as usize + 2 {
            u.bump(&p(2), &format!("t{t}"), 1_000_000);
        }
        assert_eq!(u.names.as_ref().unwrap().len(), MAX_NAMES);
        let (table, b_tree) = u.split();
        assert_eq!(table + b_tree, MAX_NAMES + 2);
        assert!(u.get(&p(2), &format!("t{}", MAX_NAMES + 1)).is_some());
        u.check().unwrap();
        // A digest that names another tool (as a collision would have it).
        let m = Mems::default();
        let mut u = m.open();
        u.bump(&p(1), "first", 10);
        u.names
            .as_mut()
            .unwrap()
            .insert(digest("second"), "not second".into());
        u.bump(&p(1), "second", 10);
        u.bump(&p(1), "second", 10);
        assert_eq!(u.split(), (1, 1));
        assert_eq!(u.get(&p(1), "second"), Some(2));
        assert_eq!(
            u.counts(&p(1)),
            [("first".into(), 1), ("second".into(), 2)].into()
        );
        let e = u.check().unwrap_err();
        assert!(e.contains("not its own"), "{e}");
    }

    /// A pair in both places (which no write makes) is refused by the checks.
    #[test]
    fn the_checks_refuse_a_pair_in_the_table_and_the_b_tree() {
        let m = Mems::default();
        let mut u = m.open();
        u.bump(&p(1), "a", 10);
        u.bump(&p(1), "b", 10);
        u.check().unwrap();
        drop(u);
        ic_stable_structures::StableBTreeMap::<UsageKey, u64, _>::init(m.map.clone())
            .insert(UsageKey::new(&p(1), "a"), 3);
        let e = m.open().check().unwrap_err();
        assert!(e.contains("for a is in the table and the B-tree"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Against a plain map, from a B-tree of layout 6 and through reopenings: every owner's
        /// counts are what was bumped, no pair is in both places, the bound holds.
        #[test]
        fn usage_counts_read_what_a_map_holds(
            old in proptest::collection::vec((0u8..12, 0u8..6, 1u64..4), 0..20),
            ops in proptest::collection::vec((0u8..12, 0u8..8, any::<bool>()), 1..400),
            bound in 10u64..80,
        ) {
            let name = |t: u8| format!("tool_{t}");
            let mut want: BTreeMap<(Principal, String), u64> = BTreeMap::new();
            let pairs: Vec<(Principal, String, u64)> =
                old.iter().map(|(o, t, n)| (p(*o), name(*t), *n)).collect();
            for (o, t, n) in &pairs {
                want.insert((*o, t.clone()), *n);
            }
            let refs: Vec<(Principal, &str, u64)> =
                pairs.iter().map(|(o, t, n)| (*o, t.as_str(), *n)).collect();
            let m = Mems::with_layout_6(&refs);
            let mut u = m.open();
            for (i, (o, t, reopen)) in ops.into_iter().enumerate() {
                let (o, t) = (p(o), name(t));
                let counted = want.contains_key(&(o, t.clone())) || (want.len() as u64) < bound;
                u.bump(&o, &t, bound);
                if counted {
                    *want.entry((o, t.clone())).or_default() += 1;
                }
                if reopen && i % 20 == 0 {
                    u = m.open();
                }
                prop_assert_eq!(u.len(), want.len() as u64);
                let mine: BTreeMap<String, u64> = want
                    .iter()
                    .filter(|((w, _), _)| *w == o)
                    .map(|((_, t), n)| (t.clone(), *n))
                    .collect();
                prop_assert_eq!(u.counts(&o), mine);
            }
            u.check().unwrap();
        }
    }
}
