//! [`LocalIc`]: the public face of the host (canisters, calls, time, fault injection, logs).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use candid::Principal;
use wasmi::{CompilationMode, Config, Engine, Linker};

use crate::canister::Canister;
use crate::code::Code;
use crate::errors::{HostError, Reject, RejectCode};
use crate::ids::{canister_id_from_counter, management_canister, MessageId};
use crate::messages::{Input, Origin, Queued, Request};
use crate::stable::StableMemory;
use crate::system_api::{build_linker, Env};

/// 2025-01-01T00:00:00Z: a fixed start time keeps tests deterministic.
pub const DEFAULT_START_TIME_NANOS: u64 = 1_735_689_600_000_000_000;

/// Per-execution instruction limits, as on the IC; they apply to the host's [`CostModel`] count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Update methods, callbacks, cleanups and timers.
    pub update_instructions: u64,
    /// Query methods (replicated or not).
    pub query_instructions: u64,
    /// `(start)` + `canister_init`, or `canister_pre_upgrade` + `(start)` + `canister_post_upgrade`.
    pub install_instructions: u64,
    /// `canister_inspect_message`.
    pub inspect_instructions: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            update_instructions: 40_000_000_000,
            query_instructions: 5_000_000_000,
            install_instructions: 300_000_000_000,
            inspect_instructions: 200_000_000,
        }
    }
}

/// How the host counts instructions (chosen per host, [`LocalIc::with_cost_model`]).
///
/// Both counts are recorded for every execution; the model decides which one
/// `last_instructions`, `instructions_total`, `ic0.performance_counter` and the instruction
/// limits use. The other is `last_fuel` / `fuel_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostModel {
    /// wasmi fuel (about 1 per operator; System API calls and payload bytes free; with wasmi's
    /// lazy translation, function bodies cost fuel on their first call). The default.
    WasmiFuel,
    /// The replica's count (`docs/local-ic.md`, "Counting instructions as the IC does"):
    /// operator costs charged per basic block by an instrumented module, System API
    /// overheads, payload bytes, stable memory bytes and dirty pages; eager compilation.
    /// The fuel beside it is the instrumented module's.
    Ic,
}

impl CostModel {
    /// `LOCAL_IC_COST_MODEL=ic` selects [`CostModel::Ic`], `fuel` (or unset) the default;
    /// anything else is refused, naming the value.
    ///
    /// # Panics
    /// If the variable holds another value.
    pub fn from_env() -> Self {
        match std::env::var("LOCAL_IC_COST_MODEL").as_deref() {
            Err(_) | Ok("fuel") => CostModel::WasmiFuel,
            Ok("ic") => CostModel::Ic,
            Ok(other) => panic!("LOCAL_IC_COST_MODEL={other:?}: expected \"ic\" or \"fuel\""),
        }
    }
}

/// How `install` treats existing code and state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallMode {
    /// First install on an empty canister; runs `canister_init`.
    Install,
    /// Replace code and wipe all state (heap and stable memory); runs `canister_init`.
    Reinstall,
    /// Keep stable memory; runs `canister_pre_upgrade` on the old code and
    /// `canister_post_upgrade` on the new code, atomically.
    Upgrade,
}

/// One line of canister output: `ic0.debug_print`, or a trap (prefixed `[TRAP]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub canister: Principal,
    /// Time of the execution that produced the line.
    pub time_nanos: u64,
    pub message: String,
}

/// A system-level fault to inject into the next matching inter-canister call.
#[derive(Clone, Debug)]
pub(crate) struct CallFault {
    pub callee: Principal,
    pub method: String,
    pub kind: FaultKind,
}

/// What an injected fault does to the call it matches.
#[derive(Clone, Debug)]
pub(crate) enum FaultKind {
    /// Answered with this system reject; the callee never sees the call.
    Reject { code: RejectCode, message: String },
    /// Answered with this reply; the callee never sees the call.
    Reply(Vec<u8>),
    /// The callee executes the call; its response is lost. Matches bounded-wait calls only.
    LoseReply,
}

#[derive(Debug)]
pub(crate) enum IngressState {
    Pending,
    Done {
        result: Result<Vec<u8>, Reject>,
        instructions: u64,
        fuel: u64,
    },
}

/// Rounds `await_message` runs before it gives up on a message.
const AWAIT_MAX_ROUNDS: u64 = 10_000_000;

/// A local, single-subnet Internet Computer that runs canister Wasm in wasmi.
///
/// Time only moves when the test says so (`advance_time`, `set_time`) and by 1 ns per
/// round; every message is delivered in a later round than the one that sent it.
pub struct LocalIc {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<Env>,
    pub(crate) time: u64,
    /// Number of completed rounds.
    pub(crate) round: u64,
    next_canister: u64,
    pub(crate) canisters: BTreeMap<Principal, Canister>,
    pub(crate) ingress: BTreeMap<MessageId, IngressState>,
    next_message: u64,
    pub(crate) faults: Vec<CallFault>,
    pub(crate) logs: Vec<LogEntry>,
    pub(crate) echo_logs: bool,
    pub(crate) rand_state: u64,
    pub(crate) limits: Limits,
    pub(crate) cost_model: CostModel,
    pub(crate) last_instructions: u64,
    pub(crate) last_fuel: u64,
    pub(crate) max_outstanding_calls: usize,
}

impl Default for LocalIc {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LocalIc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalIc")
            .field("time", &self.time)
            .field("round", &self.round)
            .field("canisters", &self.canisters.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl LocalIc {
    /// A new, empty local IC at [`DEFAULT_START_TIME_NANOS`].
    ///
    /// Canister output is echoed to stderr if the environment variable
    /// `LOCAL_IC_ECHO_LOGS` is set (see also [`LocalIc::set_echo_logs`]). Instructions are
    /// counted as [`CostModel::from_env`] says (wasmi fuel unless `LOCAL_IC_COST_MODEL=ic`).
    pub fn new() -> Self {
        Self::with_cost_model(CostModel::from_env())
    }

    /// A new, empty local IC that counts instructions with `cost_model`.
    pub fn with_cost_model(cost_model: CostModel) -> Self {
        let mut config = Config::default();
        config.consume_fuel(true);
        if cost_model == CostModel::Ic {
            // Nothing is translated during an execution, so nothing is charged for it.
            config.compilation_mode(CompilationMode::Eager);
        }
        let engine = Engine::new(&config);
        let linker = build_linker(&engine);
        Self {
            engine,
            linker,
            time: DEFAULT_START_TIME_NANOS,
            round: 0,
            next_canister: 0,
            canisters: BTreeMap::new(),
            ingress: BTreeMap::new(),
            next_message: 0,
            faults: Vec::new(),
            logs: Vec::new(),
            echo_logs: std::env::var_os("LOCAL_IC_ECHO_LOGS").is_some(),
            rand_state: 0,
            limits: Limits::default(),
            cost_model,
            last_instructions: 0,
            last_fuel: 0,
            max_outstanding_calls: 500,
        }
    }

    /// How this host counts instructions.
    pub fn cost_model(&self) -> CostModel {
        self.cost_model
    }

    /// The instruction limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Changes the instruction limits (e.g. to test the limit trap cheaply).
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    // ---- canisters -------------------------------------------------------------------

    /// Creates an empty canister with the given controllers and returns its id.
    ///
    /// Ids follow the IC scheme (8-byte big-endian counter + `0x01 0x01`), so the
    /// first canister is `rwlgt-iiaaa-aaaaa-aaaaa-cai`.
    pub fn create_canister(&mut self, controllers: Vec<Principal>) -> Principal {
        let id = canister_id_from_counter(self.next_canister);
        self.next_canister += 1;
        self.canisters.insert(id, Canister::new(controllers));
        id
    }

    /// Ids of all canisters, in creation order.
    pub fn canister_ids(&self) -> Vec<Principal> {
        self.canisters.keys().copied().collect()
    }

    /// Whether a canister with this id exists.
    pub fn canister_exists(&self, canister: Principal) -> bool {
        self.canisters.contains_key(&canister)
    }

    /// Whether the canister has code installed.
    pub fn has_code(&self, canister: Principal) -> bool {
        self.canisters
            .get(&canister)
            .is_some_and(|c| c.code.is_some())
    }

    fn canister(&self, canister: Principal) -> &Canister {
        self.canisters
            .get(&canister)
            .unwrap_or_else(|| panic!("canister {canister} does not exist on this LocalIc"))
    }

    /// The code a message or query to `canister` runs, refused as the IC refuses it when the
    /// canister does not exist or has no Wasm module; `what` is "a message" or "a query".
    pub(crate) fn installed_code(&self, canister: Principal, what: &str) -> Result<&Code, Reject> {
        let c = self.canisters.get(&canister).ok_or_else(|| {
            Reject::new(
                RejectCode::DestinationInvalid,
                format!("Canister {canister} not found"),
            )
        })?;
        c.code.as_ref().ok_or_else(|| {
            Reject::new(RejectCode::CanisterError, no_module_message(canister, what))
        })
    }

    fn canister_mut(&mut self, canister: Principal) -> &mut Canister {
        self.canisters
            .get_mut(&canister)
            .unwrap_or_else(|| panic!("canister {canister} does not exist on this LocalIc"))
    }

    /// The canister's controllers.
    ///
    /// # Panics
    /// If the canister does not exist (true of all per-canister accessors).
    pub fn controllers(&self, canister: Principal) -> Vec<Principal> {
        self.canister(canister).controllers.clone()
    }

    /// Replaces the canister's controllers.
    pub fn set_controllers(&mut self, canister: Principal, controllers: Vec<Principal>) {
        self.canister_mut(canister).controllers = controllers;
    }

    /// The canister version (`ic0.canister_version`).
    pub fn canister_version(&self, canister: Principal) -> u64 {
        self.canister(canister).version
    }

    /// The canister's cycle balance.
    pub fn cycle_balance(&self, canister: Principal) -> u128 {
        self.canister(canister).balance
    }

    /// Adds cycles to the canister's balance.
    pub fn add_cycles(&mut self, canister: Principal, amount: u128) {
        let c = self.canister_mut(canister);
        c.balance = c.balance.saturating_add(amount);
    }

    /// The canister's certified data (`ic0.certified_data_set`).
    pub fn certified_data(&self, canister: Principal) -> Vec<u8> {
        self.canister(canister).certified_data.clone()
    }

    /// The active global timer, if any.
    pub fn global_timer(&self, canister: Principal) -> Option<u64> {
        Some(self.canister(canister).global_timer).filter(|t| *t != 0)
    }

    /// Stable memory size in Wasm pages (0 for an empty canister).
    pub fn stable_memory_pages(&self, canister: Principal) -> u64 {
        self.canister(canister)
            .code
            .as_ref()
            .map_or(0, |c| c.stable().size_pages())
    }

    /// Reads committed stable memory (for assertions).
    ///
    /// # Panics
    /// If the canister has no code or the range is out of bounds.
    pub fn read_stable_memory(&self, canister: Principal, offset: u64, len: usize) -> Vec<u8> {
        let code = self
            .canister(canister)
            .code
            .as_ref()
            .expect("canister has no code");
        let mut buf = vec![0; len];
        code.stable()
            .read(offset, &mut buf)
            .expect("stable memory range out of bounds");
        buf
    }

    /// Replaces the canister's stable memory with `image`, zero-filled to whole pages, as
    /// PocketIC's `set_stable_memory` does: how a test starts from a saved stable-memory image
    /// (install any code, load the image, then upgrade into it). The installed code's heap is
    /// left as it is; an upgrade replaces it.
    ///
    /// # Panics
    /// If the canister has no code, or the image is over the stable memory limit.
    pub fn set_stable_memory(&mut self, canister: Principal, image: &[u8]) {
        let code = self
            .canister_mut(canister)
            .code
            .as_mut()
            .expect("canister has no code: install some before loading a stable image");
        code.put_stable(StableMemory::from_image(image));
    }

    /// Sets the canister's environment variables (`ic0.env_var_*`).
    pub fn set_env_vars(&mut self, canister: Principal, mut vars: Vec<(String, String)>) {
        vars.sort();
        vars.dedup_by(|a, b| a.0 == b.0);
        self.canister_mut(canister).env_vars = vars;
    }

    // ---- calls -----------------------------------------------------------------------

    /// Submits an ingress update call and runs rounds until it completes.
    pub fn update_call(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<Vec<u8>, Reject> {
        let id = self.submit_update(canister, sender, method, arg)?;
        self.await_message(id)
    }

    /// Submits an ingress update call without executing anything, so that several
    /// calls can be in flight at once.
    ///
    /// `canister_inspect_message` runs now (on the current state, never committing);
    /// if it traps or does not call `ic0.accept_message`, the call is refused here.
    pub fn submit_update(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<MessageId, Reject> {
        if canister == management_canister() {
            return Err(Reject::new(
                RejectCode::CanisterReject,
                format!(
                    "the local IC host does not accept ingress calls to the management canister \
                     (method '{method}'); use LocalIc::create_canister / install instead"
                ),
            ));
        }
        let code = self.installed_code(canister, "a message")?;
        if code.prepared.exports("canister_inspect_message") {
            self.inspect_message(canister, sender, method, &arg)?;
        }
        let id = MessageId(self.next_message);
        self.next_message += 1;
        let round = self.round;
        self.canister_mut(canister).queue.push_back(Queued {
            round,
            input: Input::Request(Request {
                origin: Origin::Ingress(id),
                caller: sender,
                method: method.to_string(),
                arg,
                cycles: 0,
                deadline: 0,
            }),
        });
        self.ingress.insert(id, IngressState::Pending);
        Ok(id)
    }

    /// Runs rounds until the ingress message completes and returns its result.
    ///
    /// # Panics
    /// If the id is unknown or was already awaited, or if the message cannot complete.
    pub fn await_message(&mut self, id: MessageId) -> Result<Vec<u8>, Reject> {
        let mut rounds = 0;
        loop {
            match self.ingress.get(&id) {
                None => panic!("{id} is unknown or was already awaited"),
                Some(IngressState::Done { .. }) => break,
                Some(IngressState::Pending) => {}
            }
            assert!(
                !self.is_quiet(),
                "{id} cannot complete: nothing is left to execute (this is a local IC bug)"
            );
            assert!(
                rounds < AWAIT_MAX_ROUNDS,
                "{id} did not complete within {AWAIT_MAX_ROUNDS} rounds"
            );
            self.tick();
            rounds += 1;
        }
        match self.ingress.remove(&id) {
            Some(IngressState::Done {
                result,
                instructions,
                fuel,
            }) => {
                self.last_instructions = instructions;
                self.last_fuel = fuel;
                result
            }
            _ => unreachable!("checked above"),
        }
    }

    /// The result of an ingress message if it has completed, without running rounds.
    pub fn message_result(&self, id: MessageId) -> Option<Result<Vec<u8>, Reject>> {
        match self.ingress.get(&id)? {
            IngressState::Pending => None,
            IngressState::Done { result, .. } => Some(result.clone()),
        }
    }

    /// Instructions a canister has used in all its replicated executions (updates, callbacks,
    /// cleanups, timers) since it was created; queries and installs are not counted. Counted
    /// by the host's [`CostModel`].
    pub fn instructions_total(&self, canister: Principal) -> u64 {
        self.canisters
            .get(&canister)
            .map_or(0, |c| c.instructions_total)
    }

    /// The wasmi fuel of the same executions as [`LocalIc::instructions_total`].
    pub fn fuel_total(&self, canister: Principal) -> u64 {
        self.canisters.get(&canister).map_or(0, |c| c.fuel_total)
    }

    /// Instructions used by the last completed `update_call`/`await_message` (all
    /// executions of its call context), `query_call` or `install`, counted by the host's
    /// [`CostModel`].
    pub fn last_instructions(&self) -> u64 {
        self.last_instructions
    }

    /// The wasmi fuel of the same executions as [`LocalIc::last_instructions`].
    pub fn last_fuel(&self) -> u64 {
        self.last_fuel
    }

    // ---- time and rounds -------------------------------------------------------------

    /// Current IC time.
    pub fn time(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_nanos(self.time)
    }

    /// Current IC time in nanoseconds since the Unix epoch.
    pub fn time_nanos(&self) -> u64 {
        self.time
    }

    /// Sets the IC time.
    ///
    /// # Panics
    /// If `time` is before the current time: IC time never goes backwards.
    pub fn set_time(&mut self, time: SystemTime) {
        let nanos = time
            .duration_since(UNIX_EPOCH)
            .expect("time before the Unix epoch")
            .as_nanos();
        self.set_time_nanos(u64::try_from(nanos).expect("time too far in the future"));
    }

    /// Sets the IC time in nanoseconds since the Unix epoch.
    ///
    /// # Panics
    /// If `nanos` is before the current time.
    pub fn set_time_nanos(&mut self, nanos: u64) {
        assert!(
            nanos >= self.time,
            "set_time: IC time cannot go backwards ({nanos} < {})",
            self.time
        );
        self.time = nanos;
    }

    /// Moves IC time forward. Due timers fire and expired bounded-wait calls are
    /// answered in the next round.
    pub fn advance_time(&mut self, by: Duration) {
        let by = u64::try_from(by.as_nanos()).expect("duration too long");
        self.time = self.time.checked_add(by).expect("time overflow");
    }

    /// Number of rounds executed so far.
    pub fn rounds(&self) -> u64 {
        self.round
    }

    /// Whether there is nothing to do at the current time: no queued messages, no
    /// due global timer and no bounded-wait deadline waiting to be expired.
    pub fn is_quiet(&self) -> bool {
        self.canisters.values().all(|c| {
            c.queue.is_empty()
                && !c.timer_due(self.time)
                && !c
                    .callbacks
                    .values()
                    .any(|cb| cb.deadline != 0 && !cb.expired && cb.deadline <= self.time)
        })
    }

    /// Runs rounds until the system is quiet; returns the number of rounds run.
    pub fn run_until_quiet(&mut self, max_rounds: u64) -> Result<u64, HostError> {
        let mut rounds = 0;
        while !self.is_quiet() {
            if rounds == max_rounds {
                return Err(HostError::NotQuiet { rounds });
            }
            self.tick();
            rounds += 1;
        }
        Ok(rounds)
    }

    // ---- fault injection -------------------------------------------------------------

    /// Makes the next inter-canister call to `callee.method` fail with a system
    /// reject, without the callee executing. Faults are matched in injection order.
    ///
    /// # Panics
    /// If `code` is `CanisterReject` or `CanisterError`: canisters produce those themselves.
    pub fn inject_call_fault(
        &mut self,
        callee: Principal,
        method: &str,
        code: RejectCode,
        message: &str,
    ) {
        assert!(
            code.is_system_code(),
            "inject_call_fault: {code} can be produced by the callee itself; inject 1, 2, 3 or 6"
        );
        self.faults.push(CallFault {
            callee,
            method: method.to_string(),
            kind: FaultKind::Reject {
                code,
                message: message.to_string(),
            },
        });
    }

    /// Makes the next **bounded-wait** call to `callee.method` lose its response: the callee
    /// executes the call and commits as usual, but what it answers never reaches the caller,
    /// which gets `SYS_UNKNOWN` (6) when the call's deadline passes, as on the IC when a
    /// best-effort response is dropped. Attached cycles the callee did not accept are lost with
    /// the response. Guaranteed-response (unbounded-wait) calls are not matched: the IC always
    /// delivers their responses.
    pub fn inject_lost_reply(&mut self, callee: Principal, method: &str) {
        self.faults.push(CallFault {
            callee,
            method: method.to_string(),
            kind: FaultKind::LoseReply,
        });
    }

    /// Answers the next inter-canister call to `callee.method` with `reply` (Candid bytes, not
    /// checked) without the callee executing; attached cycles are refunded. For replies a
    /// canister would give in another state (a stale value, an older version).
    pub fn inject_call_reply(&mut self, callee: Principal, method: &str, reply: Vec<u8>) {
        self.faults.push(CallFault {
            callee,
            method: method.to_string(),
            kind: FaultKind::Reply(reply),
        });
    }

    /// Makes `canister`'s clock run `ahead` in front of the host's (and of every other
    /// canister's): `ic0.time`, its global timer and its data certificates use host time +
    /// `ahead`. Models a canister on another subnet whose clock is ahead (the interface spec:
    /// "the times observed by different canisters are unrelated").
    ///
    /// # Panics
    /// If `ahead` is less than the current setting: a canister's time never goes backwards.
    pub fn set_clock_ahead(&mut self, canister: Principal, ahead: Duration) {
        let ahead = u64::try_from(ahead.as_nanos()).expect("duration too long");
        let c = self.canister_mut(canister);
        assert!(
            ahead >= c.clock_ahead,
            "set_clock_ahead: {canister}'s clock cannot go backwards ({ahead} ns < {} ns ahead)",
            c.clock_ahead
        );
        c.clock_ahead = ahead;
    }

    /// How far `canister`'s clock runs ahead of the host's.
    pub fn clock_ahead(&self, canister: Principal) -> Duration {
        Duration::from_nanos(self.canister(canister).clock_ahead)
    }

    /// Faults injected and not yet taken by a call, as `(callee, method, what)`.
    pub fn pending_call_faults(&self) -> Vec<(Principal, String, String)> {
        self.faults
            .iter()
            .map(|f| {
                let what = match &f.kind {
                    FaultKind::Reject { code, .. } => format!("reject {code}"),
                    FaultKind::Reply(_) => "reply".to_string(),
                    FaultKind::LoseReply => "lose reply".to_string(),
                };
                (f.callee, f.method.clone(), what)
            })
            .collect()
    }

    /// Makes the next `ic0.call_perform` of `canister` return 2 (`SYS_TRANSIENT`), as
    /// it does on the IC when the output queue is full.
    pub fn inject_call_perform_failure(&mut self, canister: Principal) {
        self.canister_mut(canister).fail_next_call_perform = true;
    }

    /// Maximum outstanding calls per canister before `ic0.call_perform` returns 2
    /// (default 500, the IC's output queue capacity).
    pub fn set_max_outstanding_calls(&mut self, max: usize) {
        self.max_outstanding_calls = max;
    }

    // ---- logs ------------------------------------------------------------------------

    /// All canister output so far.
    pub fn logs(&self) -> &[LogEntry] {
        &self.logs
    }

    /// Takes (and clears) the collected canister output.
    pub fn take_logs(&mut self) -> Vec<LogEntry> {
        std::mem::take(&mut self.logs)
    }

    /// Echo canister output to stderr as it is produced.
    pub fn set_echo_logs(&mut self, echo: bool) {
        self.echo_logs = echo;
    }

    pub(crate) fn log(&mut self, canister: Principal, message: String) {
        if self.echo_logs {
            eprintln!("[{canister}] {message}");
        }
        self.logs.push(LogEntry {
            canister,
            time_nanos: self.time,
            message,
        });
    }
}

/// The IC's refusal of a message or query to a canister without a Wasm module.
pub(crate) fn no_module_message(canister: Principal, what: &str) -> String {
    format!(
        "Error from Canister {canister}: Attempted to execute {what}, but the canister contains \
         no Wasm module."
    )
}
