//! Rounds: delivering messages, firing timers, expiring bounded-wait calls, and
//! committing or rolling back each execution with its effects.
//!
//! In one round every canister executes at most one message (or its global timer),
//! so the time a canister observes strictly increases between its executions.
//! Messages produced in a round are delivered in a later round.

use candid::Principal;

use crate::canister::{CallContext, Callback};
use crate::code::{method_export, Entry, RunOutcome};
use crate::errors::RejectCode;
use crate::host::{FaultKind, IngressState, LocalIc};
use crate::ids::management_canister;
use crate::messages::{Input, Origin, Payload, Queued, Request, Response};
use crate::system_api::{ExecKind, ExecState, NewCall};
use crate::wasm_module::MethodKind;

const NANOS_PER_SECOND: u64 = 1_000_000_000;

impl LocalIc {
    /// Runs one round at the current time, then advances time by 1 ns.
    pub fn tick(&mut self) {
        let round = self.round + 1;
        self.expire_calls(round);
        let ids: Vec<Principal> = self.canisters.keys().copied().collect();
        for id in ids {
            self.step(id, round);
        }
        self.round = round;
        self.time += 1;
    }

    /// Answers bounded-wait calls whose deadline passed with `SYS_UNKNOWN`, and drops
    /// their requests that are still queued (the callee never sees them).
    fn expire_calls(&mut self, round: u64) {
        let now = self.time;
        for (id, canister) in self.canisters.iter_mut() {
            let mut expired = Vec::new();
            for (cb_id, cb) in canister.callbacks.iter_mut() {
                if cb.deadline != 0 && !cb.expired && cb.deadline <= now {
                    cb.expired = true;
                    expired.push(*cb_id);
                }
            }
            for callback in expired {
                canister.queue.push_back(Queued {
                    round: round - 1,
                    input: Input::Response(Response {
                        callback,
                        payload: Payload::reject(
                            RejectCode::SysUnknown,
                            format!(
                                "Call from canister {id} timed out: the deadline of the \
                                 bounded-wait call passed before a response arrived"
                            ),
                        ),
                        refund: 0,
                        expiry: true,
                    }),
                });
            }
            canister.queue.retain(
                |q| !matches!(&q.input, Input::Request(r) if r.deadline != 0 && r.deadline <= now),
            );
        }
    }

    /// One execution for canister `id` in `round`, if it has something to do.
    fn step(&mut self, id: Principal, round: u64) {
        let now = self.time;
        let canister = self.canisters.get_mut(&id).expect("listed");
        let head_eligible = canister.head_eligible(round);
        if canister.timer_due(now) && !(canister.last_was_timer && head_eligible) {
            canister.last_was_timer = true;
            self.run_global_timer(id, round);
            return;
        }
        canister.last_was_timer = false;
        if !head_eligible {
            return;
        }
        match canister.queue.pop_front().expect("eligible").input {
            Input::Request(request) => self.handle_request(id, request, round),
            Input::Response(response) => self.handle_response(id, response, round),
        }
    }

    fn run_global_timer(&mut self, id: Principal, round: u64) {
        let canister = self.canisters.get_mut(&id).expect("exists");
        // The timer is deactivated when the execution is scheduled, trap or not.
        canister.global_timer = 0;
        let ctx = canister.next_id();
        canister.call_contexts.insert(
            ctx,
            CallContext {
                origin: Origin::System,
                caller: management_canister(),
                deadline: 0,
                available_cycles: 0,
                responded: false,
                outstanding: 0,
                instructions: 0,
                fuel: 0,
            },
        );
        let exec = self.exec_state(id, ExecKind::GlobalTimer, Some(ctx));
        let outcome = self.execute(id, Entry::Export("canister_global_timer"), exec);
        let failure = self.apply(id, Some(ctx), outcome, round);
        self.finalize(id, ctx, failure, round);
    }

    fn handle_request(&mut self, id: Principal, request: Request, round: u64) {
        let method_kind = self.canisters[&id]
            .code
            .as_ref()
            .map(|code| code.prepared.methods.get(&request.method).copied());
        let refuse = |message: String| Payload::reject(RejectCode::CanisterError, message);
        let (kind, method_kind) = match method_kind {
            None => {
                let payload = refuse(crate::host::no_module_message(id, "a message"));
                self.deliver(request.origin, payload, request.cycles, (0, 0), round);
                return;
            }
            Some(Some(MethodKind::Update)) => (ExecKind::Update, MethodKind::Update),
            Some(Some(MethodKind::Query)) => (ExecKind::ReplicatedQuery, MethodKind::Query),
            Some(Some(MethodKind::CompositeQuery)) => {
                let payload = refuse(format!(
                    "Error from Canister {id}: Composite query method '{}' cannot be called in \
                     replicated mode",
                    request.method
                ));
                self.deliver(request.origin, payload, request.cycles, (0, 0), round);
                return;
            }
            Some(None) => {
                let payload = refuse(format!(
                    "Error from Canister {id}: Canister has no update method '{}'",
                    request.method
                ));
                self.deliver(request.origin, payload, request.cycles, (0, 0), round);
                return;
            }
        };
        let canister = self.canisters.get_mut(&id).expect("exists");
        let ctx = canister.next_id();
        canister.call_contexts.insert(
            ctx,
            CallContext {
                origin: request.origin,
                caller: request.caller,
                deadline: request.deadline,
                available_cycles: request.cycles,
                responded: false,
                outstanding: 0,
                instructions: 0,
                fuel: 0,
            },
        );
        let mut exec = self.exec_state(id, kind, Some(ctx));
        exec.arg = request.arg;
        let export = method_export(&request.method, method_kind);
        let outcome = self.execute(id, Entry::Export(&export), exec);
        let failure = self.apply(id, Some(ctx), outcome, round);
        self.finalize(id, ctx, failure, round);
    }

    fn handle_response(&mut self, id: Principal, response: Response, round: u64) {
        let canister = self.canisters.get_mut(&id).expect("exists");
        let late = canister
            .callbacks
            .get(&response.callback)
            .is_none_or(|cb| cb.expired && !response.expiry);
        if late {
            // Unknown callback (state was reinstalled) or the response to an expired
            // bounded-wait call: dropped, as the spec says.
            return;
        }
        let callback = canister
            .callbacks
            .remove(&response.callback)
            .expect("checked");
        canister.balance += response.refund;
        let ctx_id = callback.call_context;
        if let Some(ctx) = canister.call_contexts.get_mut(&ctx_id) {
            ctx.outstanding -= 1;
        }
        if canister.code.is_none() || !canister.call_contexts.contains_key(&ctx_id) {
            return;
        }
        let (kind, (fun, env)) = match &response.payload {
            Payload::Reply(_) => (ExecKind::ReplyCallback, callback.reply),
            Payload::Reject(..) => (ExecKind::RejectCallback, callback.reject),
        };
        let mut exec = self.exec_state(id, kind, Some(ctx_id));
        exec.cycles_refunded = response.refund;
        match response.payload {
            Payload::Reply(data) => exec.arg = data,
            Payload::Reject(code, message) => exec.reject = Some((code.as_u32(), message)),
        }
        let outcome = self.execute(id, Entry::Callback { fun, env }, exec);
        let failure = self.apply(id, Some(ctx_id), outcome, round);
        if let (Some(_), Some((fun, env))) = (&failure, callback.cleanup) {
            let exec = self.exec_state(id, ExecKind::Cleanup, Some(ctx_id));
            let outcome = self.execute(id, Entry::Callback { fun, env }, exec);
            self.apply(id, Some(ctx_id), outcome, round);
        }
        self.finalize(id, ctx_id, failure, round);
    }

    /// The System API state for an execution of `kind` in call context `ctx`.
    pub(crate) fn exec_state(&self, id: Principal, kind: ExecKind, ctx: Option<u64>) -> ExecState {
        let canister = &self.canisters[&id];
        let limit = match kind {
            ExecKind::ReplicatedQuery | ExecKind::NonReplicatedQuery => {
                self.limits.query_instructions
            }
            ExecKind::InspectMessage => self.limits.inspect_instructions,
            ExecKind::Start | ExecKind::Init | ExecKind::PreUpgrade | ExecKind::PostUpgrade => {
                self.limits.install_instructions
            }
            _ => self.limits.update_instructions,
        };
        let mut exec = ExecState::new(kind, id, canister.now(self.time), limit);
        exec.canister_version = canister.version;
        exec.controllers = canister.controllers.clone();
        exec.env_vars = canister.env_vars.clone();
        exec.balance = canister.balance;
        exec.global_timer = canister.global_timer;
        exec.outstanding_calls = canister.callbacks.len();
        exec.max_outstanding_calls = self.max_outstanding_calls;
        exec.fail_next_call_perform = canister.fail_next_call_perform;
        if let Some(ctx) = ctx.and_then(|c| canister.call_contexts.get(&c)) {
            exec.caller = ctx.caller;
            exec.deadline = ctx.deadline;
            exec.cycles_available = ctx.available_cycles;
            exec.can_respond =
                kind.may_respond() && !ctx.responded && !matches!(ctx.origin, Origin::System);
            exec.call_context_instructions = ctx.instructions;
        }
        exec
    }

    /// Runs one execution and commits or rolls back its state changes.
    pub(crate) fn execute(
        &mut self,
        id: Principal,
        entry: Entry<'_>,
        exec: ExecState,
    ) -> RunOutcome {
        let canister = self.canisters.get_mut(&id).expect("exists");
        let code = canister.code.as_mut().expect("has code");
        let snapshot = code.begin();
        let outcome = code.run(entry, exec);
        if outcome.result.is_ok() && outcome.exec.kind.commits() {
            code.commit();
        } else {
            code.rollback(&self.linker, snapshot);
        }
        // Fault injection is system state: a consumed fault stays consumed.
        canister.fail_next_call_perform = outcome.exec.fail_next_call_perform;
        for line in &outcome.logs {
            self.log(id, line.clone());
        }
        if let Err(trap) = &outcome.result {
            self.log(id, format!("[TRAP]: {trap}"));
        }
        outcome
    }

    /// Applies the effects of an execution (system state, calls, response).
    /// Returns the trap message if it trapped.
    pub(crate) fn apply(
        &mut self,
        id: Principal,
        ctx_id: Option<u64>,
        outcome: RunOutcome,
        round: u64,
    ) -> Option<String> {
        let RunOutcome {
            mut exec,
            result,
            instructions,
            fuel,
            ..
        } = outcome;
        let canister = self.canisters.get_mut(&id).expect("exists");
        canister.instructions_total += instructions;
        canister.fuel_total += fuel;
        if let Some(ctx) = ctx_id.and_then(|c| canister.call_contexts.get_mut(&c)) {
            ctx.instructions += instructions;
            ctx.fuel += fuel;
        }
        if let Err(trap) = result {
            return Some(trap);
        }
        if exec.kind.commits() {
            canister.version += 1;
            if exec.global_timer_changed {
                canister.global_timer = exec.global_timer;
            }
            if let Some(data) = exec.certified_data.take() {
                canister.certified_data = data;
            }
        }
        // A call left under construction is discarded (its cycles return).
        exec.discard_pending_call();
        canister.balance = exec.balance;
        let mut calls = Vec::new();
        if let Some(ctx) = ctx_id.and_then(|c| canister.call_contexts.get_mut(&c)) {
            ctx.available_cycles -= exec.cycles_accepted;
            ctx.outstanding += exec.new_calls.len();
        }
        for call in std::mem::take(&mut exec.new_calls) {
            let callback = canister.next_id();
            let deadline = call
                .timeout_seconds
                .map_or(0, |t| self.time + u64::from(t) * NANOS_PER_SECOND);
            canister.callbacks.insert(
                callback,
                Callback {
                    call_context: ctx_id.expect("calls are only made in call contexts"),
                    reply: call.reply,
                    reject: call.reject,
                    cleanup: call.cleanup,
                    deadline,
                    expired: false,
                },
            );
            calls.push((call, callback, deadline));
        }
        if let Some(payload) = exec.response.take() {
            let ctx_id = ctx_id.expect("responses are only made in call contexts");
            let ctx = canister
                .call_contexts
                .get_mut(&ctx_id)
                .expect("call context exists");
            ctx.responded = true;
            let refund = std::mem::take(&mut ctx.available_cycles);
            let (origin, total) = (ctx.origin.clone(), (ctx.instructions, ctx.fuel));
            self.deliver(origin, payload, refund, total, round);
        }
        for (call, callback, deadline) in calls {
            self.route_call(id, call, callback, deadline, round);
        }
        None
    }

    /// Closes the call context once nothing is outstanding, synthesizing a reject if
    /// it never responded (trap or "did not reply").
    pub(crate) fn finalize(
        &mut self,
        id: Principal,
        ctx_id: u64,
        failure: Option<String>,
        round: u64,
    ) {
        let canister = self.canisters.get_mut(&id).expect("exists");
        let Some(ctx) = canister.call_contexts.get(&ctx_id) else {
            return;
        };
        if ctx.outstanding > 0 {
            return;
        }
        let ctx = canister.call_contexts.remove(&ctx_id).expect("checked");
        if ctx.responded || ctx.origin == Origin::System {
            return;
        }
        let message = match failure {
            Some(trap) => format!("Error from Canister {id}: {trap}"),
            None => format!("Error from Canister {id}: Canister did not reply to the call"),
        };
        let payload = Payload::reject(RejectCode::CanisterError, message);
        self.deliver(
            ctx.origin,
            payload,
            ctx.available_cycles,
            (ctx.instructions, ctx.fuel),
            round,
        );
    }

    /// Sends a response to whoever waits for it.
    pub(crate) fn deliver(
        &mut self,
        origin: Origin,
        payload: Payload,
        refund: u128,
        (instructions, fuel): (u64, u64),
        round: u64,
    ) {
        match origin {
            Origin::Ingress(message) => {
                self.ingress.insert(
                    message,
                    IngressState::Done {
                        result: payload.into_result(),
                        instructions,
                        fuel,
                    },
                );
            }
            Origin::Canister { canister, callback } => {
                if let Some(caller) = self.canisters.get_mut(&canister) {
                    caller.queue.push_back(Queued {
                        round,
                        input: Input::Response(Response {
                            callback,
                            payload,
                            refund,
                            expiry: false,
                        }),
                    });
                }
            }
            // A response the system loses (an injected lost reply); the caller's bounded-wait
            // call ends with SYS_UNKNOWN at its deadline.
            Origin::System | Origin::Lost { .. } => {}
        }
    }

    /// Delivers a new inter-canister call: to the callee's queue, to the management
    /// canister, or straight back as a reject (injected fault, unknown callee).
    fn route_call(
        &mut self,
        caller: Principal,
        call: NewCall,
        callback: u64,
        deadline: u64,
        round: u64,
    ) {
        let origin = Origin::Canister {
            canister: caller,
            callback,
        };
        let fault = self
            .faults
            .iter()
            .position(|f| {
                f.callee == call.callee
                    && f.method == call.method
                    && (deadline != 0 || !matches!(f.kind, FaultKind::LoseReply))
            })
            .map(|i| self.faults.remove(i).kind);
        let origin = match fault {
            Some(FaultKind::LoseReply) => Origin::Lost {
                canister: caller,
                callback,
            },
            _ => origin,
        };
        let mut refund = call.cycles;
        let payload = match fault {
            Some(FaultKind::Reject { code, message }) => Payload::Reject(code, message),
            Some(FaultKind::Reply(bytes)) => Payload::Reply(bytes),
            None | Some(FaultKind::LoseReply) if call.callee == management_canister() => {
                let (payload, left) =
                    self.management_call(caller, &call.method, &call.arg, call.cycles);
                refund = left;
                payload
            }
            None | Some(FaultKind::LoseReply) => {
                if let Some(callee) = self.canisters.get_mut(&call.callee) {
                    callee.queue.push_back(Queued {
                        round,
                        input: Input::Request(Request {
                            origin,
                            caller,
                            method: call.method,
                            arg: call.arg,
                            cycles: call.cycles,
                            deadline,
                        }),
                    });
                    return;
                }
                Payload::reject(
                    RejectCode::DestinationInvalid,
                    format!("Canister {} not found", call.callee),
                )
            }
        };
        self.deliver(origin, payload, refund, (0, 0), round);
    }
}
