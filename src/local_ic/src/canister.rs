//! Per-canister state: code, system state, input queue, call contexts and callbacks.

use std::collections::{BTreeMap, VecDeque};

use candid::Principal;

use crate::code::Code;
use crate::messages::{Origin, Queued};

/// Cycles every canister starts with. Execution, messages and storage are never charged;
/// outgoing calls are (their `ic0.cost_call` price), and attached cycles move.
pub const DEFAULT_CYCLES: u128 = 1_000_000_000_000_000_000;

/// Bookkeeping for one incoming call (or system task) being processed.
#[derive(Debug)]
pub(crate) struct CallContext {
    pub origin: Origin,
    pub caller: Principal,
    /// Deadline of the incoming bounded-wait call (0 if none), seen by `msg_deadline`.
    pub deadline: u64,
    /// Cycles attached by the caller that have not been accepted.
    pub available_cycles: u128,
    pub responded: bool,
    /// Calls made in this context whose callbacks have not run yet.
    pub outstanding: usize,
    /// Instructions spent in this context (performance counter 1).
    pub instructions: u64,
    /// wasmi fuel spent in this context (beside `instructions` when the IC model is on).
    pub fuel: u64,
}

/// A callback registered by `call_new` … `call_perform`, waiting for the response.
#[derive(Debug)]
pub(crate) struct Callback {
    pub call_context: u64,
    pub reply: (u32, u32),
    pub reject: (u32, u32),
    pub cleanup: Option<(u32, u32)>,
    /// Bounded-wait deadline (0 for unbounded calls).
    pub deadline: u64,
    /// The deadline passed: a `SYS_UNKNOWN` reject is on its way, the real response
    /// (if any) will be dropped.
    pub expired: bool,
}

/// A canister on the local IC.
#[derive(Debug)]
pub(crate) struct Canister {
    pub controllers: Vec<Principal>,
    pub code: Option<Code>,
    pub version: u64,
    /// 0 = deactivated.
    pub global_timer: u64,
    pub certified_data: Vec<u8>,
    pub balance: u128,
    pub env_vars: Vec<(String, String)>,
    pub queue: VecDeque<Queued>,
    pub call_contexts: BTreeMap<u64, CallContext>,
    pub callbacks: BTreeMap<u64, Callback>,
    next_id: u64,
    /// The last execution was the global timer (used to interleave timer and messages).
    pub last_was_timer: bool,
    /// Instructions of every update, callback, cleanup and timer execution so far (benchmarks
    /// read the difference around a flow to count one canister's share of it).
    pub instructions_total: u64,
    /// wasmi fuel of the same executions.
    pub fuel_total: u64,
    /// Fault injection: the next `ic0.call_perform` returns 2.
    pub fail_next_call_perform: bool,
    /// How far (ns) this canister's clock runs ahead of the host's (`set_clock_ahead`).
    pub clock_ahead: u64,
}

impl Canister {
    pub fn new(controllers: Vec<Principal>) -> Self {
        Self {
            controllers,
            code: None,
            version: 0,
            global_timer: 0,
            certified_data: Vec::new(),
            balance: DEFAULT_CYCLES,
            env_vars: Vec::new(),
            queue: VecDeque::new(),
            call_contexts: BTreeMap::new(),
            callbacks: BTreeMap::new(),
            next_id: 0,
            last_was_timer: false,
            instructions_total: 0,
            fuel_total: 0,
            fail_next_call_perform: false,
            clock_ahead: 0,
        }
    }

    /// The time this canister observes when the host's clock reads `host_time`.
    pub fn now(&self, host_time: u64) -> u64 {
        host_time.saturating_add(self.clock_ahead)
    }

    /// A fresh id for a call context or callback.
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Whether the global timer should fire when the host's clock reads `host_time` (the timer
    /// is set in the canister's own time).
    pub fn timer_due(&self, host_time: u64) -> bool {
        self.global_timer != 0
            && self.now(host_time) >= self.global_timer
            && self
                .code
                .as_ref()
                .is_some_and(|c| c.prepared.exports("canister_global_timer"))
    }

    /// Whether the oldest queued input may execute in `round`.
    pub fn head_eligible(&self, round: u64) -> bool {
        self.queue.front().is_some_and(|q| q.round < round)
    }
}
