//! The System API (`ic0.*`) as seen by canister code: the per-execution state the
//! host functions read and write, which functions are available in which context,
//! and the traps they raise.

mod call_fns;
mod canister_fns;
mod cost_env_fns;
mod heap;
mod imports;
mod message_fns;

use std::fmt;

use candid::Principal;
use std::collections::BTreeSet;

use wasmi::{Caller, Global, Memory, Val};

use crate::messages::Payload;
use crate::stable::StableMemory;

pub(crate) use imports::{build_linker, IMPORTS};

/// Maximum size of a reply and of an inter-canister call argument (2 MiB, as on the IC).
pub(crate) const MAX_PAYLOAD: usize = 2 * 1024 * 1024;
/// Upper bound for `ic0.call_with_best_effort_response` timeouts (`MAX_CALL_TIMEOUT`).
pub(crate) const MAX_CALL_TIMEOUT_SECONDS: u32 = 300;
/// Longest principal (in bytes) the IC accepts.
pub(crate) const MAX_PRINCIPAL_LEN: usize = 29;

/// The kind of execution, which determines the System API functions available
/// (the letters are the ones used in the interface specification).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExecKind {
    /// `(start)` (s).
    Start,
    /// `canister_init` (I).
    Init,
    /// `canister_pre_upgrade` (G).
    PreUpgrade,
    /// `canister_post_upgrade` (I).
    PostUpgrade,
    /// `canister_update <name>` (U).
    Update,
    /// `canister_query <name>` called by an update or a canister (RQ).
    ReplicatedQuery,
    /// `canister_query <name>` called as a query (NRQ).
    NonReplicatedQuery,
    /// Reply callback (Ry).
    ReplyCallback,
    /// Reject callback (Rt).
    RejectCallback,
    /// Cleanup callback (C).
    Cleanup,
    /// `canister_inspect_message` (F).
    InspectMessage,
    /// `canister_global_timer` (T).
    GlobalTimer,
}

/// Availability bits, one per spec context letter.
pub(crate) mod avail {
    pub const S: u16 = 1 << 0;
    pub const I: u16 = 1 << 1;
    pub const G: u16 = 1 << 2;
    pub const U: u16 = 1 << 3;
    pub const RQ: u16 = 1 << 4;
    pub const NRQ: u16 = 1 << 5;
    pub const RY: u16 = 1 << 6;
    pub const RT: u16 = 1 << 7;
    pub const C: u16 = 1 << 8;
    pub const F: u16 = 1 << 9;
    pub const T: u16 = 1 << 10;
    /// `*` in the spec: everywhere except `(start)`.
    pub const ALL: u16 = I | G | U | RQ | NRQ | RY | RT | C | F | T;
    /// `* s` in the spec.
    pub const ALL_S: u16 = ALL | S;
}

impl ExecKind {
    fn bit(self) -> u16 {
        use avail::*;
        match self {
            ExecKind::Start => S,
            ExecKind::Init | ExecKind::PostUpgrade => I,
            ExecKind::PreUpgrade => G,
            ExecKind::Update => U,
            ExecKind::ReplicatedQuery => RQ,
            ExecKind::NonReplicatedQuery => NRQ,
            ExecKind::ReplyCallback => RY,
            ExecKind::RejectCallback => RT,
            ExecKind::Cleanup => C,
            ExecKind::InspectMessage => F,
            ExecKind::GlobalTimer => T,
        }
    }

    /// Whether state changes of this execution are kept when it returns.
    pub fn commits(self) -> bool {
        !matches!(
            self,
            ExecKind::ReplicatedQuery | ExecKind::NonReplicatedQuery | ExecKind::InspectMessage
        )
    }

    /// Whether this execution may respond to its call context.
    pub fn may_respond(self) -> bool {
        matches!(
            self,
            ExecKind::Update
                | ExecKind::ReplicatedQuery
                | ExecKind::NonReplicatedQuery
                | ExecKind::ReplyCallback
                | ExecKind::RejectCallback
        )
    }

    pub fn replicated(self) -> bool {
        !matches!(
            self,
            ExecKind::NonReplicatedQuery | ExecKind::InspectMessage
        )
    }
}

impl fmt::Display for ExecKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ExecKind::Start => "start",
            ExecKind::Init => "init",
            ExecKind::PreUpgrade => "pre_upgrade",
            ExecKind::PostUpgrade => "post_upgrade",
            ExecKind::Update => "update",
            ExecKind::ReplicatedQuery => "replicated query",
            ExecKind::NonReplicatedQuery => "non-replicated query",
            ExecKind::ReplyCallback => "reply callback",
            ExecKind::RejectCallback => "reject callback",
            ExecKind::Cleanup => "cleanup",
            ExecKind::InspectMessage => "inspect message",
            ExecKind::GlobalTimer => "system task",
        };
        f.write_str(s)
    }
}

/// A trap raised by a System API function.
#[derive(Debug, Clone)]
pub(crate) enum HostTrap {
    /// The canister called `ic0.trap`.
    Explicit(String),
    /// The canister violated the System API contract (or hit a host limit).
    Contract(String),
    /// A System API charge took the IC cost model's counter below zero (the host reports
    /// the instruction limit).
    OutOfInstructions,
}

impl fmt::Display for HostTrap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostTrap::Explicit(m) => write!(f, "Canister called `ic0.trap` with message: '{m}'"),
            HostTrap::Contract(m) => write!(f, "Canister violated contract: {m}"),
            HostTrap::OutOfInstructions => f.write_str("Canister ran out of instructions"),
        }
    }
}

impl wasmi::errors::HostError for HostTrap {}

pub(crate) fn contract(msg: impl Into<String>) -> wasmi::Error {
    wasmi::Error::host(HostTrap::Contract(msg.into()))
}

/// A call being assembled with `ic0.call_new` … `ic0.call_perform`.
#[derive(Clone, Debug)]
pub(crate) struct NewCall {
    pub callee: Principal,
    pub method: String,
    pub arg: Vec<u8>,
    pub cycles: u128,
    /// `(table index, env)` of the reply callback.
    pub reply: (u32, u32),
    /// `(table index, env)` of the reject callback.
    pub reject: (u32, u32),
    /// `(table index, env)` of the cleanup callback.
    pub cleanup: Option<(u32, u32)>,
    /// Bounded-wait timeout in seconds (already capped).
    pub timeout_seconds: Option<u32>,
}

/// Everything an execution can observe and the effects it accumulates.
///
/// The host builds one per execution; when the execution returns, the scheduler
/// applies the effects (commit) or drops them (trap).
#[derive(Debug)]
pub(crate) struct ExecState {
    pub kind: ExecKind,
    pub canister_id: Principal,
    pub caller: Principal,
    /// `msg_arg_data`: the call argument, or the reply data in a reply callback.
    pub arg: Vec<u8>,
    /// `msg_method_name` (inspect message only).
    pub method_name: String,
    /// `(code, message)` in a reject callback.
    pub reject: Option<(u32, String)>,
    pub deadline: u64,
    pub time: u64,
    pub canister_version: u64,
    pub controllers: Vec<Principal>,
    pub env_vars: Vec<(String, String)>,
    /// Canister balance, already reduced by cycles attached to calls.
    pub balance: u128,
    /// Cycles available in the call context at the start of the execution.
    pub cycles_available: u128,
    pub cycles_accepted: u128,
    pub cycles_refunded: u128,
    /// Whether the call context still needs a response and this execution may give it.
    pub can_respond: bool,
    pub reply_buf: Vec<u8>,
    pub response: Option<Payload>,
    /// Cycles left in the call context when the response was produced (refunded).
    pub response_refund: u128,
    pub pending_call: Option<NewCall>,
    pub new_calls: Vec<NewCall>,
    /// Calls already outstanding from this canister (for the queue-capacity check).
    pub outstanding_calls: usize,
    pub max_outstanding_calls: usize,
    /// Fault injection: the next `call_perform` fails with code 2.
    pub fail_next_call_perform: bool,
    pub global_timer: u64,
    pub global_timer_changed: bool,
    pub certified_data: Option<Vec<u8>>,
    /// The data certificate (non-replicated queries only, see `certificate.rs`).
    pub data_certificate: Option<Vec<u8>>,
    pub accepted_message: bool,
    /// Instructions already spent in this call context by earlier executions.
    pub call_context_instructions: u64,
    /// The execution's instruction limit: the fuel given to it, or with the IC cost model
    /// the counter's start value (performance counter 0 = limit - what is left).
    pub fuel_limit: u64,
    /// 4 KiB stable-memory pages written in this execution (the IC model charges each new
    /// one [`crate::ic_cost::DIRTY_PAGE_OVERHEAD`]).
    pub dirty_pages: BTreeSet<u64>,
}

impl ExecState {
    /// A fresh state for `kind`; callers fill in what the context provides.
    pub fn new(kind: ExecKind, canister_id: Principal, time: u64, fuel_limit: u64) -> Self {
        Self {
            kind,
            canister_id,
            caller: crate::ids::management_canister(),
            arg: Vec::new(),
            method_name: String::new(),
            reject: None,
            deadline: 0,
            time,
            canister_version: 0,
            controllers: Vec::new(),
            env_vars: Vec::new(),
            balance: 0,
            cycles_available: 0,
            cycles_accepted: 0,
            cycles_refunded: 0,
            can_respond: false,
            reply_buf: Vec::new(),
            response: None,
            response_refund: 0,
            pending_call: None,
            new_calls: Vec::new(),
            outstanding_calls: 0,
            max_outstanding_calls: usize::MAX,
            fail_next_call_perform: false,
            global_timer: 0,
            global_timer_changed: false,
            certified_data: None,
            data_certificate: None,
            accepted_message: false,
            call_context_instructions: 0,
            fuel_limit,
            dirty_pages: BTreeSet::new(),
        }
    }

    /// Cycles still available to accept (0 once the call has been responded to).
    pub fn cycles_still_available(&self) -> u128 {
        if self.response.is_some() {
            0
        } else {
            self.cycles_available - self.cycles_accepted
        }
    }

    /// Returns cycles of a call that was started but never performed.
    pub fn discard_pending_call(&mut self) {
        if let Some(call) = self.pending_call.take() {
            self.balance += call.cycles;
        }
    }

    /// Records the response and the refund of unaccepted cycles.
    pub fn respond(&mut self, payload: Payload) {
        self.response_refund = self.cycles_available - self.cycles_accepted;
        self.response = Some(payload);
        self.reply_buf.clear();
    }
}

/// Store data for one canister instance.
#[derive(Debug, Default)]
pub(crate) struct Env {
    pub stable: StableMemory,
    /// Set while an execution runs; `None` between executions.
    pub exec: Option<ExecState>,
    /// The instance's memory (if it has one), for System API copies.
    pub memory: Option<Memory>,
    /// `ic0.debug_print` output of the current execution.
    pub logs: Vec<String>,
    /// The IC cost model's counter (instructions left), if the module is instrumented.
    pub ic_counter: Option<Global>,
}

/// Charges `amount` instructions to the IC cost model's counter (nothing without the model),
/// stopping the execution when the counter goes below zero, as the replica's
/// `charge_direct_fee` does.
pub(crate) fn charge(caller: &mut Caller<'_, Env>, amount: u64) -> Result<(), wasmi::Error> {
    let Some(counter) = caller.data().ic_counter else {
        return Ok(());
    };
    let left = counter.get(&*caller).i64().expect("the counter is an i64");
    let left = left.saturating_sub(i64::try_from(amount).unwrap_or(i64::MAX));
    counter
        .set(&mut *caller, Val::I64(left))
        .expect("the counter is a mutable i64");
    if left < 0 {
        return Err(wasmi::Error::host(HostTrap::OutOfInstructions));
    }
    Ok(())
}

/// The IC cost model's count so far in this execution, if the model is on.
pub(crate) fn ic_instructions_used(caller: &Caller<'_, Env>, limit: u64) -> Option<u64> {
    let counter = caller.data().ic_counter?;
    let left = counter.get(caller).i64().expect("the counter is an i64");
    Some(limit.saturating_sub(left.max(0) as u64))
}

/// Charges the fixed overhead of `ic0.<name>` (IC cost model) and fetches the execution
/// state, trapping if `name` is not available in this context. Every host function calls
/// this exactly once.
pub(crate) fn exec_for<'a>(
    caller: &'a mut Caller<'_, Env>,
    name: &str,
    allowed: u16,
) -> Result<&'a mut ExecState, wasmi::Error> {
    charge(caller, crate::ic_cost::system_api_overhead(name))?;
    available(caller, name, allowed)
}

/// [`exec_for`] without the charge: for a second look at the state in the same call.
pub(crate) fn available<'a>(
    caller: &'a mut Caller<'_, Env>,
    name: &str,
    allowed: u16,
) -> Result<&'a mut ExecState, wasmi::Error> {
    let exec = caller
        .data_mut()
        .exec
        .as_mut()
        .ok_or_else(|| contract(format!("ic0.{name} called outside of an execution")))?;
    if exec.kind.bit() & allowed == 0 {
        return Err(contract(format!(
            "\"ic0.{name}\" cannot be executed in {} mode",
            exec.kind
        )));
    }
    Ok(exec)
}
