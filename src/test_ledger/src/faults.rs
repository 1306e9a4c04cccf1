//! The fault queue: controllers queue `FaultPlan`s; each call of a faultable method takes the
//! first queued plan for that method (FIFO per method) and the canister layer acts it out.
//!
//! The queue lives in stable memory, so pending faults survive upgrades.

use crate::storage::{memory_ids, StoredFault};
use crate::types::{Fault, FaultPlan, InjectedErr};
use ic_stable_structures::memory_manager::{MemoryManager, VirtualMemory};
use ic_stable_structures::{Memory, StableBTreeMap};

/// The methods a fault can be injected into.
pub const FAULTABLE_METHODS: [&str; 3] = ["icrc1_transfer", "icrc2_approve", "icrc2_transfer_from"];

/// At most this many faults wait in the queue.
pub const MAX_PENDING_FAULTS: u64 = 1_000;

/// Refuses a plan for an unknown method, or an `Err` whose kind is not the method's.
pub fn validate(plan: &FaultPlan) -> Result<(), String> {
    if !FAULTABLE_METHODS.contains(&plan.method.as_str()) {
        return Err(format!(
            "unknown method {:?}: faults apply to {}",
            plan.method,
            FAULTABLE_METHODS.join(", ")
        ));
    }
    if let Fault::Err(err) = &plan.fault {
        let expected = match err {
            InjectedErr::Transfer(_) => "icrc1_transfer",
            InjectedErr::Approve(_) => "icrc2_approve",
            InjectedErr::TransferFrom(_) => "icrc2_transfer_from",
        };
        if plan.method != expected {
            return Err(format!(
                "an injected error of kind {} cannot answer {}",
                match err {
                    InjectedErr::Transfer(_) => "Transfer",
                    InjectedErr::Approve(_) => "Approve",
                    InjectedErr::TransferFrom(_) => "TransferFrom",
                },
                plan.method
            ));
        }
    }
    Ok(())
}

/// The queued faults, keyed by an increasing sequence number.
pub struct FaultQueue<M: Memory> {
    plans: StableBTreeMap<u64, StoredFault, M>,
}

impl<B: Memory> FaultQueue<VirtualMemory<B>> {
    /// Opens the queue in its memory of `mm`.
    pub fn open(mm: &MemoryManager<B>) -> Self {
        Self {
            plans: StableBTreeMap::init(mm.get(memory_ids::FAULTS)),
        }
    }
}

impl<M: Memory> FaultQueue<M> {
    /// Queues `plans` in order, all or none.
    pub fn inject(&mut self, plans: Vec<FaultPlan>) -> Result<(), String> {
        for (i, plan) in plans.iter().enumerate() {
            validate(plan).map_err(|e| format!("fault plan {i}: {e}"))?;
        }
        if self.plans.len() + plans.len() as u64 > MAX_PENDING_FAULTS {
            return Err(format!(
                "at most {MAX_PENDING_FAULTS} faults can be pending ({} are)",
                self.plans.len()
            ));
        }
        let next = self.plans.last_key_value().map_or(0, |(k, _)| k + 1);
        for (seq, plan) in (next..).zip(plans) {
            self.plans.insert(seq, StoredFault(plan));
        }
        Ok(())
    }

    /// Removes and returns the first queued fault for `method`.
    pub fn take(&mut self, method: &str) -> Option<Fault> {
        let key = self
            .plans
            .iter()
            .find(|e| e.value().0.method == method)
            .map(|e| *e.key())?;
        self.plans.remove(&key).map(|p| p.0.fault)
    }

    /// Drops every queued fault.
    pub fn clear(&mut self) {
        self.plans.clear_new();
    }

    /// The queued faults, oldest first.
    pub fn pending(&self) -> Vec<FaultPlan> {
        self.plans.iter().map(|e| e.value().0).collect()
    }
}
