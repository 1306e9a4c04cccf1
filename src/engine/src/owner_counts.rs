//! Per-owner counts in stable memory (intents kept; intents not settled), the owners written
//! lately held in write-back slots (`crate::write_back`).
//!
//! Why: a prepare reads its owner's counts to check the limits and writes them back, and a
//! send that settles writes the open count. With an entry per owner the map is as deep as the
//! owners are many (at 1 000 000 owners a read cost ~120 000 instructions on the IC model, a
//! write more); the owner who prepares is usually one who did lately, and reads and writes a
//! slot instead.

use crate::write_back::WriteBack;
use candid::Principal;
use ic_stable_structures::Memory;

pub struct OwnerCounts<M: Memory> {
    /// owner → count; an owner with none has no entry.
    counts: WriteBack<Principal, u32, M>,
}

impl<M: Memory> OwnerCounts<M> {
    /// The counts' map in `memory`, their write-back slots at `base` of `slots`.
    pub fn init(memory: M, slots: M, base: u64) -> Self {
        OwnerCounts {
            counts: WriteBack::init(memory, slots, base, Principal::MAX_LENGTH_IN_BYTES),
        }
    }

    /// The owner's count (0 when none).
    pub fn get(&self, owner: &Principal) -> u32 {
        self.counts.get(owner).unwrap_or(0)
    }

    /// Sets the owner's count; 0 removes its entry.
    pub fn set(&mut self, owner: Principal, n: u32) {
        if n == 0 {
            self.counts.remove(&owner);
        } else {
            self.counts.insert(owner, n);
        }
    }

    /// Adds `delta` to the owner's count (never below 0).
    pub fn add(&mut self, owner: Principal, delta: i64) {
        let n = (i64::from(self.get(&owner)) + delta).clamp(0, i64::from(u32::MAX));
        self.set(owner, n as u32);
    }

    /// Every count (checks; reads the whole map).
    pub fn stored(&self) -> std::collections::BTreeMap<Principal, u32> {
        self.counts.stored()
    }

    /// Whether what the heap holds is what stable memory says (checks).
    pub fn check_remembered(&self) -> Result<(), String> {
        self.counts.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ic_stable_structures::VectorMemory;

    /// Principals of 10 and of 29 bytes (the longest).
    fn p(n: u8) -> Principal {
        Principal::from_slice(&vec![n; if n.is_multiple_of(2) { 10 } else { 29 }])
    }

    #[test]
    fn counts_read_back_through_a_fresh_opening_and_what_the_heap_holds_is_stored() {
        let (mem, slots) = (VectorMemory::default(), VectorMemory::default());
        let mut c = OwnerCounts::init(mem.clone(), slots.clone(), 0);
        for k in 0..40u8 {
            c.add(p(k), i64::from(k % 3) + 1);
        }
        c.add(p(1), -1);
        c.set(p(2), 0);
        c.add(p(3), -10);
        c.check_remembered().unwrap();
        let fresh = OwnerCounts::init(mem, slots, 0);
        for k in 0..40u8 {
            let want = match k {
                1 => 1,
                2 | 3 => 0,
                _ => u32::from(k % 3) + 1,
            };
            assert_eq!((c.get(&p(k)), fresh.get(&p(k))), (want, want), "owner {k}");
        }
        fresh.check_remembered().unwrap();
        assert!(!c.stored().contains_key(&p(2)), "0 is no entry");
        assert!(!c.stored().contains_key(&p(3)), "never below 0");
    }
}
