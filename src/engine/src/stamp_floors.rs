//! (owner, identity) → the highest stamp handed out for those arguments (stored layout 8 on).
//!
//! Why: a prepare of a stamped method raises its arguments' floor, and the floors were a B-tree
//! as deep as the floors are many (one per arguments prepared within a day): at 100 000 intents
//! ~65 000 to 215 000 instructions an insert on the IC model, the most of any index a prepare
//! writes. Here a floor is a record of a [`HashTable`] (`memory::STAMP_FLOOR_TABLE`), found
//! and written in one page whatever the number of floors.
//!
//! The B-tree (`memory::STAMP_FLOORS`) stays for the floors it holds (written by layout 7 or
//! earlier: each released a day or so after the last stamp of its arguments, as every floor
//! is) and for the floors the table has no room for (a full bucket, keys chosen to collide) or
//! no record for (a stamp of 0: a record of zeros is no record). So a floor is in exactly one
//! of the two, nothing is moved at an upgrade, and a floor is read from the table first and
//! the B-tree only while it holds any (which costs a B-tree read for arguments new to the
//! table).
//!
//! A record: the owner's key (`owner_table::key_of`), the identity digest (32 bytes), then the
//! stamp (`u64`, little-endian); the whole key chooses the bucket. The header's magic is
//! `b"TSF\x01"`.

use crate::hash_table::{u64_at, HashTable, Shape, Upsert};
use crate::owner_table;
use candid::Principal;
use ic_stable_structures::{Memory, StableBTreeMap};
use std::collections::BTreeMap;

pub use crate::hash_table::PAGE;

pub const MAGIC: &[u8; 4] = b"TSF\x01";
/// A key: the owner's key, then the identity digest.
pub const KEY: usize = owner_table::KEY + 32;
pub const SHAPE: Shape = Shape {
    magic: *MAGIC,
    key: KEY,
    value: 8,
    hashed: KEY,
    // A bucket of 58 waiting for its split holds ~40 at most on average.
    split_at: 20,
    what: "stamp floor table",
};
/// Records per bucket on average past which the next bucket is split.
pub const SPLIT_AT: u64 = SHAPE.split_at;
/// A record: the key, then the stamp.
pub const RECORD: usize = SHAPE.record();
/// Records a bucket holds at most.
pub const PER_BUCKET: usize = SHAPE.per_bucket();

/// The arguments' key in the table.
pub fn key_of(owner: &Principal, identity: &[u8; 32]) -> [u8; KEY] {
    let mut k = [0u8; KEY];
    k[..owner_table::KEY].copy_from_slice(&owner_table::key_of(owner));
    k[owner_table::KEY..].copy_from_slice(identity);
    k
}

/// The owner and identity a key names (the checks).
fn arguments_of(key: &[u8]) -> Result<(Principal, [u8; 32]), String> {
    let owner = owner_table::owner_of(&key[..owner_table::KEY])?;
    let identity = key[owner_table::KEY..KEY]
        .try_into()
        .map_err(|_| "a key of the wrong length".to_string())?;
    Ok((owner, identity))
}

/// Identity digests whose keys with `owner` share the low 8 bits of their hash, so they are in
/// one bucket while the table has fewer than 256 buckets (tests).
#[doc(hidden)]
pub fn colliding_identities(owner: &Principal, n: usize) -> Vec<[u8; 32]> {
    let identity = |i: u32| {
        let mut d = [0u8; 32];
        d[..4].copy_from_slice(&i.to_le_bytes());
        d
    };
    crate::hash_table::colliding(n, &key_of(owner, &[0; 32]), (0u32..).map(identity), |d| {
        key_of(owner, d).to_vec()
    })
}

/// The floors: see the module's comment.
pub struct StampFloors<M: Memory> {
    table: HashTable<M>,
    /// The floors of layout 7 and before, and those the table has no room or record for.
    tree: StableBTreeMap<(Principal, [u8; 32]), u64, M>,
}

impl<M: Memory> StampFloors<M> {
    /// The table in `table`, the B-tree in `tree`.
    pub fn init(table: M, tree: M) -> Self {
        StampFloors {
            table: HashTable::init(table, SHAPE),
            tree: StableBTreeMap::init(tree),
        }
    }

    /// The highest stamp handed out for these arguments.
    pub fn get(&self, owner: Principal, identity: [u8; 32]) -> Option<u64> {
        // (An empty B-tree answers at once: it reads nothing.)
        match self.table.get(&key_of(&owner, &identity)) {
            Some(v) => Some(u64_at(&v)),
            None => self.tree.get(&(owner, identity)),
        }
    }

    /// Raises the floor to `stamp` (never lowers it); the floor before. One lookup in the
    /// table; the B-tree is read only when it holds floors and the table has none of these.
    pub fn raise(&mut self, owner: Principal, identity: [u8; 32], stamp: u64) -> Option<u64> {
        let key = key_of(&owner, &identity);
        let tree = &self.tree;
        let mut before = None;
        let done = self.table.upsert(
            &key,
            |v| {
                let floor = u64_at(v);
                before = Some(floor);
                floor.max(stamp).to_le_bytes().to_vec()
            },
            // A floor the B-tree holds stays there; a stamp of 0 has no record.
            || {
                (stamp != 0 && !tree.contains_key(&(owner, identity)))
                    .then(|| stamp.to_le_bytes().to_vec())
            },
        );
        match done {
            Upsert::Updated => before,
            Upsert::Inserted => None,
            Upsert::Declined | Upsert::Full => {
                let before = self.tree.insert((owner, identity), stamp);
                if let Some(f) = before.filter(|f| *f > stamp) {
                    self.tree.insert((owner, identity), f);
                }
                before
            }
        }
    }

    /// Removes the floor if it is at or below `stamp`.
    pub fn release(&mut self, owner: Principal, identity: [u8; 32], stamp: u64) {
        if self.get(owner, identity).is_some_and(|f| f <= stamp)
            && !self.table.remove(&key_of(&owner, &identity))
        {
            self.tree.remove(&(owner, identity));
        }
    }

    /// Floors held.
    pub fn len(&self) -> u64 {
        self.table.len() + self.tree.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Floors in the table, and in the B-tree (benchmarks, tests).
    pub fn split(&self) -> (u64, u64) {
        (self.table.len(), self.tree.len())
    }

    /// Buckets of the table in use.
    pub fn buckets(&self) -> u64 {
        self.table.buckets()
    }

    /// Every floor (checks; reads the whole table and B-tree), each checked as the table's
    /// records are ([`HashTable::entries`]); arguments with a floor in both places are an error.
    pub fn stored(&self) -> Result<BTreeMap<(Principal, [u8; 32]), u64>, String> {
        let mut all: BTreeMap<_, _> = self.tree.iter().map(|e| e.into_pair()).collect();
        for (k, v) in self.table.entries()? {
            let args = arguments_of(&k)?;
            let stamp = u64_at(&v);
            if let Some(other) = all.insert(args, stamp) {
                return Err(format!(
                    "owner {} has a stamp floor in the table ({stamp}) and in the B-tree ({other})",
                    args.0
                ));
            }
        }
        Ok(all)
    }

    /// The B-tree, as layout 7 and before wrote it (tests of an upgraded memory).
    #[doc(hidden)]
    pub fn tree_mut(&mut self) -> &mut StableBTreeMap<(Principal, [u8; 32]), u64, M> {
        &mut self.tree
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ic_stable_structures::VectorMemory;
    use proptest::prelude::*;

    fn p(n: u8) -> Principal {
        Principal::from_slice(&vec![n; if n.is_multiple_of(2) { 10 } else { 29 }])
    }

    fn d(n: u32) -> [u8; 32] {
        let mut d = [0x5a; 32];
        d[..4].copy_from_slice(&n.to_be_bytes());
        d
    }

    fn open(table: &VectorMemory, tree: &VectorMemory) -> StampFloors<VectorMemory> {
        StampFloors::init(table.clone(), tree.clone())
    }

    #[test]
    fn floors_only_rise_and_read_back_through_a_fresh_opening() {
        let (table, tree) = (VectorMemory::default(), VectorMemory::default());
        let mut f = open(&table, &tree);
        assert_eq!(f.raise(p(1), d(1), 100), None);
        assert_eq!(f.raise(p(1), d(1), 50), Some(100), "the floor before");
        assert_eq!(f.get(p(1), d(1)), Some(100), "never lowered");
        assert_eq!(f.raise(p(1), d(1), 150), Some(100));
        assert_eq!(f.get(p(1), d(1)), Some(150));
        assert_eq!(f.get(p(2), d(1)), None, "another owner's arguments");
        for k in 0..300u32 {
            f.raise(p((k % 7) as u8), d(k), 1_000 + u64::from(k));
        }
        assert_eq!(
            f.split(),
            (300, 0),
            "every floor in the table (one raised again)"
        );
        assert!(f.buckets() > 1, "split as it grew");
        let fresh = open(&table, &tree);
        for k in 0..300u32 {
            assert_eq!(
                fresh.get(p((k % 7) as u8), d(k)),
                Some(1_000 + u64::from(k))
            );
        }
        fresh.stored().unwrap();
    }

    #[test]
    fn a_floor_is_released_only_by_a_stamp_at_or_above_it() {
        let (table, tree) = (VectorMemory::default(), VectorMemory::default());
        let mut f = open(&table, &tree);
        f.raise(p(1), d(1), 100);
        f.release(p(1), d(1), 99);
        assert_eq!(f.get(p(1), d(1)), Some(100), "a later stamp raised it");
        f.release(p(1), d(1), 100);
        assert_eq!(f.get(p(1), d(1)), None);
        assert!(f.is_empty());
        f.release(p(1), d(1), 100);
        assert!(f.is_empty(), "releasing nothing changes nothing");
    }

    /// Floors the B-tree holds (as layout 7 left them) stay there and are raised and released
    /// there; new arguments go to the table; none is in both.
    #[test]
    fn floors_in_the_b_tree_stay_there_and_new_ones_go_to_the_table() {
        let (table, tree) = (VectorMemory::default(), VectorMemory::default());
        {
            let mut old: StableBTreeMap<(Principal, [u8; 32]), u64, _> =
                StableBTreeMap::init(tree.clone());
            old.insert((p(1), d(1)), 100);
            old.insert((p(2), d(2)), 200);
        }
        let mut f = open(&table, &tree);
        assert_eq!(f.get(p(1), d(1)), Some(100));
        assert_eq!(f.raise(p(1), d(1), 150), Some(100));
        assert_eq!(f.raise(p(3), d(3), 300), None);
        assert_eq!(f.split(), (1, 2), "the old floor raised in the B-tree");
        f.release(p(2), d(2), 200);
        assert_eq!(f.split(), (1, 1));
        let all = f.stored().unwrap();
        assert_eq!(
            all.into_iter().collect::<Vec<_>>(),
            vec![((p(1), d(1)), 150), ((p(3), d(3)), 300)]
        );
    }

    /// A bucket with no room, and a stamp of 0 (no record of zeros), send the floor to the
    /// B-tree, where it is read, raised and released as any.
    #[test]
    fn floors_with_no_room_or_a_stamp_of_0_go_to_the_b_tree() {
        let (table, tree) = (VectorMemory::default(), VectorMemory::default());
        let mut f = open(&table, &tree);
        let same = colliding_identities(&p(1), PER_BUCKET + 3);
        for (k, id) in same.iter().enumerate() {
            assert_eq!(f.raise(p(1), *id, 10 + k as u64), None);
        }
        let (in_table, in_tree) = f.split();
        assert_eq!(in_table + in_tree, same.len() as u64);
        assert!(in_tree >= 3, "the full bucket's floors went to the B-tree");
        for (k, id) in same.iter().enumerate() {
            assert_eq!(f.raise(p(1), *id, 5), Some(10 + k as u64));
        }
        assert_eq!(f.split(), (in_table, in_tree), "raised where they are");
        assert_eq!(f.raise(p(2), d(9), 0), None);
        assert_eq!(f.get(p(2), d(9)), Some(0));
        assert_eq!(f.split(), (in_table, in_tree + 1), "0 in the B-tree");
        assert_eq!(f.raise(p(2), d(9), 7), Some(0));
        assert_eq!(f.get(p(2), d(9)), Some(7));
        f.stored().unwrap();
        for (k, id) in same.iter().enumerate() {
            f.release(p(1), *id, 10 + k as u64);
        }
        f.release(p(2), d(9), 7);
        assert!(f.is_empty());
        f.stored().unwrap();
    }

    /// A full bucket that regains room (a release) takes new floors again, while the floors
    /// sent to the B-tree when it was full stay there, raised and read there.
    #[test]
    fn a_bucket_with_room_again_takes_new_floors_and_the_b_tree_keeps_its_own() {
        let (table, tree) = (VectorMemory::default(), VectorMemory::default());
        let mut f = open(&table, &tree);
        let same = colliding_identities(&p(1), PER_BUCKET + 4);
        let (fit, spill) = same.split_at(PER_BUCKET);
        for id in &same {
            f.raise(p(1), *id, 10);
        }
        // One owner's keys in one bucket while the table is small: the first 58 fit.
        assert_eq!(f.split(), (PER_BUCKET as u64, 4));
        f.release(p(1), fit[0], 10);
        assert_eq!(f.split(), (PER_BUCKET as u64 - 1, 4));
        assert_eq!(
            f.raise(p(1), spill[0], 20),
            Some(10),
            "raised in the B-tree"
        );
        assert_eq!(f.split(), (PER_BUCKET as u64 - 1, 4));
        assert_eq!(
            f.raise(p(1), fit[0], 30),
            None,
            "a new floor, in the room made"
        );
        assert_eq!(f.split(), (PER_BUCKET as u64, 4));
        let fresh = open(&table, &tree);
        assert_eq!(
            (fresh.get(p(1), spill[0]), fresh.get(p(1), fit[0])),
            (Some(20), Some(30))
        );
        fresh.stored().unwrap();
    }

    /// A floor planted in both places (no write makes one) is refused by the checks.
    #[test]
    fn the_checks_refuse_a_floor_in_the_table_and_the_b_tree() {
        let (table, tree) = (VectorMemory::default(), VectorMemory::default());
        let mut f = open(&table, &tree);
        f.raise(p(1), d(1), 100);
        f.tree_mut().insert((p(1), d(1)), 100);
        let e = f.stored().unwrap_err();
        assert!(
            e.contains("in the table (100) and in the B-tree (100)"),
            "{e}"
        );
    }

    #[derive(Clone, Debug)]
    enum Op {
        Raise(u8, u8, u64),
        Release(u8, u8, u64),
        Reopen,
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        // Few owners and identities, so floors are raised, released and raised again; owner
        // 1's identities collide into one bucket, past its room in most cases (the unit test
        // above fills it for certain).
        let op = prop_oneof![
            5 => (0u8..4, 0u8..80, 0u64..40).prop_map(|(o, i, s)| Op::Raise(o, i, s)),
            3 => (0u8..80, 1u64..40).prop_map(|(i, s)| Op::Raise(1, i, s)),
            2 => (0u8..4, 0u8..80, 0u64..40).prop_map(|(o, i, s)| Op::Release(o, i, s)),
            1 => Just(Op::Reopen),
        ];
        proptest::collection::vec(op, 150..500)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Against a map, from a B-tree holding layout 7's floors: every read as the map's,
        /// through reopenings, the checks after every step.
        #[test]
        fn floors_read_what_a_map_holds(ops in ops(), legacy in proptest::collection::vec((0u8..4, 0u8..80, 1u64..40), 0..20)) {
            let colliding = colliding_identities(&p(1), 80);
            let ident = |o: u8, i: u8| if o == 1 { colliding[usize::from(i)] } else { d(u32::from(i)) };
            let (table, tree) = (VectorMemory::default(), VectorMemory::default());
            let mut model: BTreeMap<(Principal, [u8; 32]), u64> = BTreeMap::new();
            {
                let mut old: StableBTreeMap<(Principal, [u8; 32]), u64, _> = StableBTreeMap::init(tree.clone());
                for (o, i, s) in legacy {
                    old.insert((p(o), ident(o, i)), s);
                    model.insert((p(o), ident(o, i)), s);
                }
            }
            let mut f = open(&table, &tree);
            for op in ops {
                match op {
                    Op::Raise(o, i, s) => {
                        let k = (p(o), ident(o, i));
                        let before = model.get(&k).copied();
                        prop_assert_eq!(f.raise(k.0, k.1, s), before);
                        model.insert(k, before.map_or(s, |b| b.max(s)));
                    }
                    Op::Release(o, i, s) => {
                        let k = (p(o), ident(o, i));
                        f.release(k.0, k.1, s);
                        if model.get(&k).is_some_and(|f| *f <= s) {
                            model.remove(&k);
                        }
                    }
                    Op::Reopen => f = open(&table, &tree),
                }
                prop_assert_eq!(&f.stored().unwrap(), &model);
                prop_assert_eq!(f.len(), model.len() as u64);
            }
            for (k, v) in &model {
                prop_assert_eq!(f.get(k.0, k.1), Some(*v));
            }
        }
    }
}
