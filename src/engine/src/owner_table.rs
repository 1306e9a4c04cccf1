//! owner → count in a [`HashTable`] (stored layout 7): the kept counts (memory 29) and the
//! open counts (30). See `crate::owner_counts` for why, and the B-tree beside it.
//!
//! A record: the key (the principal's length byte and its bytes, zero-padded to 29), then
//! the count (`u32`, little-endian); the whole key chooses the bucket. The header's magic is
//! `b"TOT\x01"`.

use crate::hash_table::{HashTable, Shape};
use candid::Principal;
use ic_stable_structures::Memory;

pub use crate::hash_table::PAGE;

pub const MAGIC: &[u8; 4] = b"TOT\x01";
/// A key: the principal's length and bytes, zero-padded.
pub const KEY: usize = 1 + Principal::MAX_LENGTH_IN_BYTES;
pub const SHAPE: Shape = Shape {
    magic: *MAGIC,
    key: KEY,
    value: 4,
    hashed: KEY,
    // A bucket of 120 waiting for its split holds ~96 at most on average (a full one is in the
    // tail: its owner is counted in the B-tree). 48, not 40: ~85 bytes per owner, not ~102.
    split_at: 48,
    what: "owner count table",
};
/// Records per bucket on average past which the next bucket is split.
pub const SPLIT_AT: u64 = SHAPE.split_at;
/// A record: the key, then the count.
pub const RECORD: usize = SHAPE.record();
/// Records a bucket holds at most.
pub const PER_BUCKET: usize = SHAPE.per_bucket();

/// The principal's key in the tables keyed by owner.
pub fn key_of(owner: &Principal) -> [u8; KEY] {
    let mut k = [0u8; KEY];
    let b = owner.as_slice();
    k[0] = b.len() as u8;
    k[1..1 + b.len()].copy_from_slice(b);
    k
}

/// The principal a key names, if it is a principal's key (the checks).
pub fn owner_of(key: &[u8]) -> Result<Principal, String> {
    let len = usize::from(*key.first().ok_or("an empty key")?);
    if len > Principal::MAX_LENGTH_IN_BYTES || key[1 + len..KEY].iter().any(|&x| x != 0) {
        return Err(format!("{:02x?} is not a principal's key", &key[..KEY]));
    }
    Ok(Principal::from_slice(&key[1..1 + len]))
}

/// `n` principals whose keys share the low 8 bits of their hash, so they are in one bucket
/// while a table keyed by owner has fewer than 256 buckets (tests).
#[doc(hidden)]
pub fn colliding_owners(n: usize) -> Vec<Principal> {
    crate::hash_table::colliding(
        n,
        &key_of(&Principal::from_slice(&[0])),
        (1u32..).map(|i| Principal::from_slice(&i.to_le_bytes())),
        |o| key_of(o).to_vec(),
    )
}

/// A count as a record stores it (`u32`, little-endian).
fn count_at(v: &[u8]) -> u32 {
    u32::from_le_bytes(v[..4].try_into().expect("4 bytes"))
}

/// owner → count, for owners with a count.
pub struct OwnerTable<M: Memory> {
    table: HashTable<M>,
}

impl<M: Memory> OwnerTable<M> {
    pub fn init(memory: M) -> Self {
        OwnerTable {
            table: HashTable::init(memory, SHAPE),
        }
    }

    /// The owner's count, if the table holds it.
    pub fn get(&self, owner: &Principal) -> Option<u32> {
        let v = self.table.get(&key_of(owner))?;
        Some(count_at(&v))
    }

    /// Writes the owner's count if the table holds the owner; else inserts it if `insert`
    /// says so and its bucket has room. Whether the table holds the owner's count now.
    pub fn put(&mut self, owner: &Principal, count: u32, insert: impl FnOnce() -> bool) -> bool {
        self.table.put(&key_of(owner), &count.to_le_bytes(), insert)
    }

    /// Removes the owner's record; whether the table held it.
    pub fn remove(&mut self, owner: &Principal) -> bool {
        self.table.remove(&key_of(owner))
    }

    /// Records held.
    pub fn len(&self) -> u64 {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Buckets in use.
    pub fn buckets(&self) -> u64 {
        self.table.buckets()
    }

    /// Every record, checked (see [`HashTable::entries`]; and each key a principal's).
    pub fn entries(&self) -> Result<Vec<(Principal, u32)>, String> {
        self.table
            .entries()?
            .into_iter()
            .map(|(k, v)| Ok((owner_of(&k)?, count_at(&v))))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ic_stable_structures::VectorMemory;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn p(n: u32) -> Principal {
        let mut b = n.to_be_bytes().to_vec();
        b.resize(
            if n.is_multiple_of(3) {
                29
            } else {
                4 + (n % 7) as usize
            },
            0xab,
        );
        Principal::from_slice(&b)
    }

    #[test]
    fn a_table_of_many_owners_reads_back_through_a_fresh_opening() {
        let mem = VectorMemory::default();
        let mut t = OwnerTable::init(mem.clone());
        assert_eq!(mem.size(), 0, "nothing written before the first record");
        for k in 0..5_000u32 {
            assert!(t.put(&p(k), k + 1, || true), "owner {k} has room");
        }
        for k in (0..5_000u32).step_by(3) {
            assert!(t.remove(&p(k)));
            assert!(!t.remove(&p(k)));
        }
        assert!(t.put(&p(1), 77, || panic!("an update asks nothing")));
        assert!(
            !t.put(&p(9_999), 1, || false),
            "not inserted when told not to"
        );
        let fresh = OwnerTable::init(mem.clone());
        for k in 0..5_000u32 {
            let want = match k {
                1 => Some(77),
                k if k % 3 == 0 => None,
                k => Some(k + 1),
            };
            assert_eq!(fresh.get(&p(k)), want, "owner {k}");
        }
        let entries = fresh.entries().unwrap();
        assert_eq!(entries.len() as u64, fresh.len());
        assert_eq!(fresh.len(), 5_000 - 1_667);
        let b = fresh.buckets();
        assert!(
            b * SPLIT_AT >= 5_000 && (b - 1) * SPLIT_AT < 5_000,
            "split one bucket per {SPLIT_AT} records: {b} buckets"
        );
        assert_eq!(
            mem.size(),
            (PAGE * (1 + b)).div_ceil(65_536),
            "a page per bucket"
        );
    }

    /// The split threshold is a policy, not the format (the header keeps no threshold): a
    /// table grown at 40 a bucket (layout 7's first builds) is read, grown and checked at 48.
    #[test]
    fn a_table_grown_at_another_split_threshold_reads_and_grows() {
        let mem = VectorMemory::default();
        let earlier = Shape {
            split_at: 40,
            ..SHAPE
        };
        let mut t = HashTable::init(mem.clone(), earlier);
        for k in 0..1_000u32 {
            assert!(t.put(&key_of(&p(k)), &(k + 1).to_le_bytes(), || true));
        }
        assert_eq!(t.buckets(), 25, "one bucket per 40");
        let mut now = OwnerTable::init(mem.clone());
        for k in 0..1_000u32 {
            assert_eq!(now.get(&p(k)), Some(k + 1), "owner {k}");
        }
        for k in 1_000..2_000u32 {
            assert!(now.put(&p(k), k + 1, || true));
        }
        for k in (0..2_000u32).step_by(5) {
            assert!(now.remove(&p(k)));
        }
        let entries = now.entries().unwrap();
        assert_eq!(entries.len(), 1_600);
        assert_eq!(
            now.buckets(),
            42,
            "split again past 48 a bucket: 2 000 / 48, rounded up"
        );
        for k in 0..2_000u32 {
            let want = (k % 5 != 0).then_some(k + 1);
            assert_eq!(OwnerTable::init(mem.clone()).get(&p(k)), want, "owner {k}");
        }
    }

    #[test]
    fn a_full_bucket_refuses_a_new_owner_and_keeps_the_others() {
        let same = colliding_owners(PER_BUCKET + 6);
        let mut t = OwnerTable::init(VectorMemory::default());
        assert!(t.put(&same[0], 1, || true));
        let same = &same[1..];
        let mut held = 1;
        for (i, o) in same.iter().enumerate() {
            let took = t.put(o, 5, || true);
            assert_eq!(took, held < PER_BUCKET, "owner {i}");
            held += usize::from(took);
        }
        assert_eq!(t.len(), PER_BUCKET as u64);
        assert_eq!(t.get(&same[PER_BUCKET]), None, "refused, not kept");
        assert!(t.remove(&same[0]));
        assert!(
            t.put(&same[PER_BUCKET], 6, || true),
            "room again after a removal"
        );
        t.entries().unwrap();
    }

    fn refusal(mem: &VectorMemory) -> String {
        let again = mem.clone();
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| OwnerTable::init(again)))
            .err()
            .expect("refused");
        e.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    #[test]
    fn a_header_of_another_table_or_shape_is_refused() {
        let mem = VectorMemory::default();
        let mut t = OwnerTable::init(mem.clone());
        t.put(&p(1), 1, || true);
        mem.write(0, b"TOT\x02");
        assert!(refusal(&mem).contains("owner count table: the header starts"));
        mem.write(0, crate::bus::usage_counts::MAGIC);
        assert!(refusal(&mem).contains("the header starts"));
        mem.write(0, MAGIC);
        mem.write(8, &35u16.to_le_bytes());
        let e = refusal(&mem);
        assert!(e.contains("records of 35"), "{e}");
    }

    #[test]
    fn the_checks_find_a_record_in_the_wrong_bucket_and_a_wrong_count() {
        let mem = VectorMemory::default();
        let mut t = OwnerTable::init(mem.clone());
        for k in 0..200 {
            t.put(&p(k), 1, || true);
        }
        t.entries().unwrap();
        // Swap the first records of buckets 0 and 1.
        let (a, b) = (PAGE + 2, 2 * PAGE + 2);
        let (mut ra, mut rb) = ([0u8; RECORD], [0u8; RECORD]);
        mem.read(a, &mut ra);
        mem.read(b, &mut rb);
        mem.write(a, &rb);
        mem.write(b, &ra);
        assert!(t
            .entries()
            .unwrap_err()
            .contains("belongs in another bucket"));
        mem.write(a, &ra);
        mem.write(b, &rb);
        mem.write(24, &7u64.to_le_bytes());
        let e = t.entries().unwrap_err();
        assert!(e.contains("the header on the heap"), "{e}");
        let e = OwnerTable::init(mem.clone()).entries().unwrap_err();
        assert!(e.contains("the header says 7 records"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Against a plain map, through reopenings: what is read is what was written, and the
        /// checks pass after every step.
        #[test]
        fn the_table_reads_what_a_map_holds(
            ops in proptest::collection::vec((0u32..400, 0u32..4, any::<bool>()), 1..1_500)
        ) {
            let mem = VectorMemory::default();
            let mut t = OwnerTable::init(mem.clone());
            let mut want: BTreeMap<Principal, u32> = BTreeMap::new();
            for (i, (k, n, reopen)) in ops.into_iter().enumerate() {
                let o = p(k);
                if n == 0 {
                    prop_assert_eq!(t.remove(&o), want.remove(&o).is_some());
                } else {
                    prop_assert!(t.put(&o, n, || true));
                    want.insert(o, n);
                }
                if reopen && i % 50 == 0 {
                    t = OwnerTable::init(mem.clone());
                }
                prop_assert_eq!(t.get(&o), want.get(&o).copied());
                prop_assert_eq!(t.len(), want.len() as u64);
                if let Err(e) = t.entries() {
                    prop_assert!(false, "step {}: {}", i, e);
                }
            }
            let mut got = t.entries().unwrap();
            got.sort();
            prop_assert_eq!(got, want.into_iter().collect::<Vec<_>>());
        }
    }
}
