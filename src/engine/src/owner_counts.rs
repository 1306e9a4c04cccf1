//! Per-owner counts in stable memory (intents kept; intents not settled), with the counts last
//! read or written kept on the heap.
//!
//! Why: a prepare reads its owner's counts to check the limits and writes them back, and a
//! send that settles writes the open count. With an entry per owner the tree is as deep as the
//! owners are many (at 1 000 000 owners a read cost ~120 000 instructions on the IC model); the
//! owner who prepares is usually one who did lately. Every write goes through here and updates
//! what is remembered in the same step, so a remembered count is the stored one; the heap is
//! empty after an upgrade and is rolled back with stable memory on a trap.

use candid::Principal;
use ic_stable_structures::{Memory, StableBTreeMap};
use std::cell::RefCell;

/// Owners whose counts are remembered.
const RECENT: usize = 16;

pub struct OwnerCounts<M: Memory> {
    map: StableBTreeMap<Principal, u32, M>,
    /// (owner, count) last read or written, newest last; a count of 0 is an owner with none
    /// (no entry in the map).
    recent: RefCell<Vec<(Principal, u32)>>,
}

impl<M: Memory> OwnerCounts<M> {
    pub fn init(memory: M) -> Self {
        OwnerCounts {
            map: StableBTreeMap::init(memory),
            recent: RefCell::new(Vec::with_capacity(RECENT)),
        }
    }

    fn remember(&self, owner: Principal, n: u32) {
        let mut r = self.recent.borrow_mut();
        r.retain(|(o, _)| *o != owner);
        if r.len() == RECENT {
            r.remove(0);
        }
        r.push((owner, n));
    }

    /// The owner's count (0 when none).
    pub fn get(&self, owner: &Principal) -> u32 {
        let known = self
            .recent
            .borrow()
            .iter()
            .find(|(o, _)| o == owner)
            .map(|(_, n)| *n);
        if let Some(n) = known {
            return n;
        }
        let n = self.map.get(owner).unwrap_or(0);
        self.remember(*owner, n);
        n
    }

    /// Sets the owner's count; 0 removes its entry.
    pub fn set(&mut self, owner: Principal, n: u32) {
        if n == 0 {
            self.map.remove(&owner);
        } else {
            self.map.insert(owner, n);
        }
        self.remember(owner, n);
    }

    /// Adds `delta` to the owner's count (never below 0).
    pub fn add(&mut self, owner: Principal, delta: i64) {
        let n = (i64::from(self.get(&owner)) + delta).clamp(0, i64::from(u32::MAX));
        self.set(owner, n as u32);
    }

    /// Every stored count (checks; reads the whole map).
    pub fn stored(&self) -> std::collections::BTreeMap<Principal, u32> {
        self.map.iter().map(|e| e.into_pair()).collect()
    }

    /// Whether every remembered count is the stored one (checks).
    pub fn check_remembered(&self) -> Result<(), String> {
        for (o, n) in self.recent.borrow().iter() {
            let stored = self.map.get(o).unwrap_or(0);
            if stored != *n {
                return Err(format!(
                    "the count remembered for {o} is {n}, the stored one {stored}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ic_stable_structures::VectorMemory;

    fn p(n: u8) -> Principal {
        Principal::from_slice(&[n; 10])
    }

    #[test]
    fn counts_read_back_through_a_fresh_map_and_what_is_remembered_is_stored() {
        let mem = VectorMemory::default();
        let mut c = OwnerCounts::init(mem.clone());
        for k in 0..40u8 {
            c.add(p(k), i64::from(k % 3) + 1);
        }
        c.add(p(1), -1);
        c.set(p(2), 0);
        c.add(p(3), -10);
        c.check_remembered().unwrap();
        let fresh = OwnerCounts::init(mem);
        for k in 0..40u8 {
            let want = match k {
                1 => 1,
                2 | 3 => 0,
                _ => u32::from(k % 3) + 1,
            };
            assert_eq!((c.get(&p(k)), fresh.get(&p(k))), (want, want), "owner {k}");
        }
        assert!(!c.stored().contains_key(&p(2)), "0 is no entry");
        assert!(!c.stored().contains_key(&p(3)), "never below 0");
    }
}
