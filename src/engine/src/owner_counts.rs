//! Per-owner counts in stable memory (intents kept; intents not settled).
//!
//! Why: a prepare reads its owner's counts to check the limits and writes them back, and a
//! send that settles writes the open count. Since stored layout 7 an owner's count is a record
//! of a hash table (`crate::owner_table`), found and written in one page whatever the number
//! of owners. Before, each count was an entry of a B-tree as deep as the owners were many
//! (~130 000 instructions an insert at 1 000 000 owners on the IC model), its owners written
//! lately held in write-back slots (`crate::write_back`).
//!
//! The B-tree stays, with its slots, for the counts it holds: an owner counted there before the
//! table existed stays there, and an owner whose bucket of the table is full goes there. So an
//! owner's count is in exactly one of the two, nothing is moved at an upgrade, and a count is
//! read from the table first and the B-tree when the table has none.

use crate::owner_table::OwnerTable;
use crate::write_back::WriteBack;
use candid::Principal;
use ic_stable_structures::Memory;

pub struct OwnerCounts<M: Memory> {
    /// owner → count, for owners counted since layout 7.
    table: OwnerTable<M>,
    /// owner → count, for the owners counted before and those the table has no room for; an
    /// owner with none has no entry in either.
    counts: WriteBack<Principal, u32, M>,
}

impl<M: Memory> OwnerCounts<M> {
    /// The counts' table in `table`, the B-tree in `memory` with its write-back slots at `base`
    /// of `slots`.
    pub fn init(table: M, memory: M, slots: M, base: u64) -> Self {
        OwnerCounts {
            table: OwnerTable::init(table),
            counts: WriteBack::init(memory, slots, base, Principal::MAX_LENGTH_IN_BYTES),
        }
    }

    /// The owner's count (0 when none).
    pub fn get(&self, owner: &Principal) -> u32 {
        self.table
            .get(owner)
            .or_else(|| self.counts.get(owner))
            .unwrap_or(0)
    }

    /// Sets the owner's count; 0 removes its record.
    pub fn set(&mut self, owner: Principal, n: u32) {
        if n == 0 {
            if !self.table.remove(&owner) {
                self.counts.remove(&owner);
            }
            return;
        }
        let counts = &self.counts;
        let in_table = self.table.put(&owner, n, || counts.get(&owner).is_none());
        if !in_table {
            self.counts.insert(owner, n);
        }
    }

    /// Adds `delta` to the owner's count (never below 0).
    pub fn add(&mut self, owner: Principal, delta: i64) {
        let n = (i64::from(self.get(&owner)) + delta).clamp(0, i64::from(u32::MAX));
        self.set(owner, n as u32);
    }

    /// Every count (checks; reads the whole table and B-tree). An owner in both is an error.
    pub fn stored(&self) -> Result<std::collections::BTreeMap<Principal, u32>, String> {
        let mut all = self.counts.stored();
        for (owner, n) in self.table.entries()? {
            if let Some(m) = all.insert(owner, n) {
                return Err(format!(
                    "owner {owner} has a count in the table ({n}) and in the B-tree ({m})"
                ));
            }
        }
        Ok(all)
    }

    /// Whether what the heap holds is what stable memory says (checks).
    pub fn check_remembered(&self) -> Result<(), String> {
        self.counts.check()
    }

    /// Owners counted in the table, and in the B-tree (benchmarks, tests).
    pub fn split(&self) -> (u64, u64) {
        (self.table.len(), self.counts.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ic_stable_structures::VectorMemory;

    /// The memories of a table, a B-tree and its write-back slots.
    fn memories() -> (VectorMemory, VectorMemory, VectorMemory) {
        Default::default()
    }

    /// Principals of 10 and of 29 bytes (the longest).
    fn p(n: u8) -> Principal {
        Principal::from_slice(&vec![n; if n.is_multiple_of(2) { 10 } else { 29 }])
    }

    #[test]
    fn counts_read_back_through_a_fresh_opening_and_what_the_heap_holds_is_stored() {
        let (table, mem, slots) = memories();
        let mut c = OwnerCounts::init(table.clone(), mem.clone(), slots.clone(), 0);
        for k in 0..40u8 {
            c.add(p(k), i64::from(k % 3) + 1);
        }
        c.add(p(1), -1);
        c.set(p(2), 0);
        c.add(p(3), -10);
        c.check_remembered().unwrap();
        let fresh = OwnerCounts::init(table, mem, slots, 0);
        for k in 0..40u8 {
            let want = match k {
                1 => 1,
                2 | 3 => 0,
                _ => u32::from(k % 3) + 1,
            };
            assert_eq!((c.get(&p(k)), fresh.get(&p(k))), (want, want), "owner {k}");
        }
        fresh.check_remembered().unwrap();
        assert!(!c.stored().unwrap().contains_key(&p(2)), "0 is no entry");
        assert!(!c.stored().unwrap().contains_key(&p(3)), "never below 0");
        assert_eq!(c.split(), (38, 0), "every owner in the table");
    }

    /// Counts a B-tree holds (as layout 6 left them, some in its slots) stay there and are
    /// read from there; owners new since go to the table; no owner is in both, through
    /// reopenings.
    #[test]
    fn owners_counted_in_the_b_tree_stay_there_and_new_ones_go_to_the_table() {
        let (table, mem, slots) = memories();
        {
            let mut old = WriteBack::<Principal, u32, _>::init(
                mem.clone(),
                slots.clone(),
                0,
                Principal::MAX_LENGTH_IN_BYTES,
            );
            for k in 0..30u8 {
                old.insert(p(k), 3);
            }
        }
        let mut c = OwnerCounts::init(table.clone(), mem.clone(), slots.clone(), 0);
        assert_eq!(c.split(), (0, 30));
        for k in 0..60u8 {
            c.add(p(k), 1);
        }
        c.set(p(5), 0);
        c.set(p(45), 0);
        assert_eq!(
            c.split(),
            (29, 29),
            "old owners in the B-tree, new in the table"
        );
        let c = OwnerCounts::init(table, mem, slots, 0);
        for k in 0..60u8 {
            let want = match k {
                5 | 45 => 0,
                0..30 => 4,
                _ => 1,
            };
            assert_eq!(c.get(&p(k)), want, "owner {k}");
        }
        assert_eq!(c.stored().unwrap().len(), 58);
        c.check_remembered().unwrap();
    }

    /// An owner in both places (which no write makes) is refused by the checks, whichever
    /// count reads would see.
    #[test]
    fn the_checks_refuse_an_owner_in_the_table_and_the_b_tree() {
        let (table, mem, slots) = memories();
        let mut c = OwnerCounts::init(table.clone(), mem.clone(), slots.clone(), 0);
        c.add(p(1), 2);
        c.add(p(2), 1);
        assert!(c.stored().is_ok());
        drop(c);
        ic_stable_structures::StableBTreeMap::<Principal, u32, _>::init(mem.clone())
            .insert(p(1), 5);
        let c = OwnerCounts::init(table, mem, slots, 0);
        let e = c.stored().unwrap_err();
        assert!(e.contains("in the table (2) and in the B-tree (5)"), "{e}");
    }

    /// An owner whose bucket is full is counted in the B-tree, and found there.
    #[test]
    fn an_owner_with_no_room_in_the_table_is_counted_in_the_b_tree() {
        let (table, mem, slots) = memories();
        let mut c = OwnerCounts::init(table, mem, slots, 0);
        let colliding = crate::owner_table::colliding_owners(crate::owner_table::PER_BUCKET + 3);
        for o in &colliding {
            c.add(*o, 2);
        }
        assert_eq!(c.split(), (crate::owner_table::PER_BUCKET as u64, 3));
        for o in &colliding {
            assert_eq!(c.get(o), 2);
        }
        let last = colliding[colliding.len() - 1];
        c.add(last, -2);
        assert_eq!(c.get(&last), 0);
        c.add(colliding[0], -2);
        c.add(last, 1);
        assert_eq!(
            c.split().0,
            crate::owner_table::PER_BUCKET as u64,
            "room again"
        );
        assert_eq!(
            c.stored().unwrap().len(),
            crate::owner_table::PER_BUCKET + 2
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
        /// Against a plain map, from layout 6's B-tree and through reopenings, with 170 owners
        /// that share a bucket of room for 120 (most cases fill it): every count reads back,
        /// and no owner is in both places.
        #[test]
        fn counts_read_what_a_map_holds_wherever_they_are(
            old in proptest::collection::vec((0usize..180, 1u32..4), 0..40),
            ops in proptest::collection::vec(
                (0usize..180, -1i64..4, proptest::prelude::any::<bool>()),
                1..2_000,
            ),
        ) {
            let owners = crate::owner_table::colliding_owners(170)
                .into_iter()
                .chain((0..10u8).map(p))
                .collect::<Vec<_>>();
            let (table, mem, slots) = memories();
            let mut want = std::collections::BTreeMap::new();
            {
                let mut b_tree = WriteBack::<Principal, u32, _>::init(
                    mem.clone(),
                    slots.clone(),
                    0,
                    Principal::MAX_LENGTH_IN_BYTES,
                );
                for (o, n) in &old {
                    b_tree.insert(owners[*o], *n);
                    want.insert(owners[*o], *n);
                }
            }
            let open = || OwnerCounts::init(table.clone(), mem.clone(), slots.clone(), 0);
            let mut c = open();
            for (i, (o, delta, reopen)) in ops.into_iter().enumerate() {
                let o = owners[o];
                if delta == 0 {
                    c.set(o, 0);
                    want.remove(&o);
                } else {
                    c.add(o, delta);
                    let n = (i64::from(want.get(&o).copied().unwrap_or(0)) + delta).max(0) as u32;
                    if n == 0 { want.remove(&o); } else { want.insert(o, n); }
                }
                proptest::prop_assert_eq!(c.get(&o), want.get(&o).copied().unwrap_or(0));
                if reopen && i % 25 == 0 {
                    c = open();
                }
            }
            proptest::prop_assert_eq!(c.stored().unwrap(), want);
            c.check_remembered().unwrap();
        }
    }
}
