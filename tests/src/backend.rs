//! One interface over the places a canister can run in a test: the local IC host (wasmi, here
//! and in CI) and PocketIC (wherever a server binary exists). Scenarios are written against
//! [`Backend`] once and run on both.

use candid::utils::{ArgumentDecoder, ArgumentEncoder};
use candid::Principal;
use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

/// Which backend runs a scenario; part of every trial's name (`<scenario>::<backend>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Local,
    PocketIc,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Local => "local",
            BackendKind::PocketIc => "pocketic",
        }
    }
}

/// How a backend call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendError {
    /// The system or the canister refused the call (reject codes 1 to 6, as in the IC spec).
    Reject { code: u32, message: String },
    /// The backend cannot do this at all; a scenario that needs it is reported as ignored with
    /// this reason, never as passed.
    Unsupported {
        backend: &'static str,
        reason: String,
    },
    /// The host failed or was misused: an install that failed, a reply that does not decode,
    /// a system that does not become quiet.
    Host(String),
}

impl BackendError {
    pub fn unsupported(kind: BackendKind, reason: impl Into<String>) -> Self {
        BackendError::Unsupported {
            backend: kind.name(),
            reason: reason.into(),
        }
    }

    /// The reject code, if the call was rejected.
    pub fn reject_code(&self) -> Option<u32> {
        match self {
            BackendError::Reject { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::Reject { code, message } => write!(f, "rejected ({code}): {message}"),
            BackendError::Unsupported { backend, reason } => {
                write!(f, "unsupported on {backend}: {reason}")
            }
            BackendError::Host(m) => write!(f, "host error: {m}"),
        }
    }
}

impl std::error::Error for BackendError {}

pub type Result<T> = std::result::Result<T, BackendError>;

/// How `install` treats the canister's code and state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallMode {
    Install,
    Reinstall,
    /// Keeps stable memory; runs `pre_upgrade` and `post_upgrade`.
    Upgrade,
}

/// An ingress update submitted with [`Backend::submit`], awaited later with [`Backend::await_reply`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Submitted(pub u64);

/// The updates a backend submitted and a test has not awaited yet, by their [`Submitted`]
/// handle: the bookkeeping every backend shares, whatever its own message id is.
#[derive(Debug)]
pub struct PendingMessages<M> {
    messages: HashMap<u64, M>,
    next: u64,
}

impl<M> Default for PendingMessages<M> {
    fn default() -> Self {
        PendingMessages {
            messages: HashMap::new(),
            next: 0,
        }
    }
}

impl<M> PendingMessages<M> {
    /// Keeps a submitted message; the handle is new for each one.
    pub fn submitted(&mut self, message: M) -> Submitted {
        self.next += 1;
        self.messages.insert(self.next, message);
        Submitted(self.next)
    }

    /// The message of a handle, once: awaiting it again is an error, never another reply.
    pub fn take(&mut self, id: Submitted) -> Result<M> {
        self.messages
            .remove(&id.0)
            .ok_or_else(|| BackendError::Host(format!("no submitted message {}", id.0)))
    }
}

/// Rounds `run_until_quiet` runs at most by default.
pub const QUIET_ROUNDS: u64 = 10_000;

/// A single-subnet IC a test drives: canisters, ingress calls as any principal, time, rounds.
pub trait Backend {
    fn kind(&self) -> BackendKind;

    /// A new empty canister with these controllers.
    fn create_canister(&mut self, controllers: &[Principal]) -> Result<Principal>;
    /// Installs, reinstalls or upgrades `wasm` (plain or gzipped) as `sender`, a controller.
    fn install(
        &mut self,
        canister: Principal,
        wasm: &[u8],
        arg: Vec<u8>,
        mode: InstallMode,
        sender: Principal,
    ) -> Result<()>;
    fn controllers(&mut self, canister: Principal) -> Result<Vec<Principal>>;
    /// Removes a canister, so that calls to it are rejected with DESTINATION_INVALID (3).
    fn delete_canister(&mut self, canister: Principal, sender: Principal) -> Result<()>;

    /// An ingress update call; runs rounds until it completes.
    fn update(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<Vec<u8>>;
    /// A query call; never commits.
    fn query(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<Vec<u8>>;
    /// Submits an ingress update without executing it, so that several can race.
    fn submit(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<Submitted>;
    /// Runs rounds until a submitted update completes.
    fn await_reply(&mut self, id: Submitted) -> Result<Vec<u8>>;

    /// The IC's time, ns since the Unix epoch.
    fn time_nanos(&mut self) -> u64;
    /// Moves time forward; due timers and expired bounded-wait calls act in the next rounds.
    fn advance_time(&mut self, by: Duration);
    /// Runs one round.
    fn tick(&mut self);
    /// Runs rounds until nothing is left to do (timers due, messages queued), at most
    /// `max_rounds`; answers the rounds run.
    fn run_until_quiet(&mut self, max_rounds: u64) -> Result<u64>;

    /// Instructions used by the last completed update, query or install.
    fn last_instructions(&mut self) -> Result<u64>;
    /// Instructions `canister` has used in all its replicated executions so far (updates,
    /// callbacks, timers); the difference around a flow is that canister's share of it.
    fn canister_instructions(&mut self, canister: Principal) -> Result<u64>;
    /// Wasmi fuel of the same executions as [`Backend::canister_instructions`] (the local
    /// host's other count: beside the IC cost model, the instrumented module's fuel).
    fn canister_fuel(&mut self, _canister: Principal) -> Result<u64> {
        Err(BackendError::unsupported(
            self.kind(),
            "no wasmi fuel on this backend",
        ))
    }
    /// Wasmi fuel of the last completed update, query or install.
    fn last_fuel(&mut self) -> Result<u64> {
        Err(BackendError::unsupported(
            self.kind(),
            "no wasmi fuel on this backend",
        ))
    }
    /// Makes the next inter-canister call to `callee.method` fail with the system reject
    /// `code` (1, 2, 3 or 6) without `callee` executing.
    fn inject_reject(&mut self, callee: Principal, method: &str, code: u32) -> Result<()>;
    /// Canister output collected since the last call (debug prints, traps), for diagnostics.
    fn take_logs(&mut self) -> Result<Vec<String>>;

    /// Makes the next bounded-wait inter-canister call to `callee.method` lose its response:
    /// `callee` executes it, the caller gets SYS_UNKNOWN (6) when its deadline passes. Works
    /// with any callee (no cooperation from the canister).
    fn lose_reply(&mut self, callee: Principal, method: &str) -> Result<()>;
    /// Answers the next inter-canister call to `callee.method` with `reply` (Candid bytes)
    /// without `callee` executing: an answer from another state (e.g. a stale ref).
    fn inject_reply(&mut self, callee: Principal, method: &str, reply: Vec<u8>) -> Result<()>;
    /// Runs `canister`'s clock `ahead` of everyone else's (a canister on a subnet whose clock
    /// is ahead); it can only grow.
    fn set_clock_ahead(&mut self, canister: Principal, ahead: Duration) -> Result<()>;
    /// Adds cycles to a canister's balance.
    fn add_cycles(&mut self, canister: Principal, amount: u128) -> Result<()>;
    /// A canister's cycle balance.
    fn cycle_balance(&mut self, canister: Principal) -> Result<u128>;
    /// A canister's whole stable memory (a saved image).
    fn stable_memory(&mut self, canister: Principal) -> Result<Vec<u8>>;
    /// Replaces an installed canister's stable memory with `image` (then upgrade into it).
    fn set_stable_memory(&mut self, canister: Principal, image: &[u8]) -> Result<()>;
}

/// Typed calls and waiting helpers over any backend.
pub trait BackendExt: Backend {
    /// An update with Candid arguments and results.
    fn update_typed<A, R>(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        args: A,
    ) -> Result<R>
    where
        A: ArgumentEncoder,
        R: for<'a> ArgumentDecoder<'a>,
    {
        let arg = encode(method, args)?;
        let reply = self.update(canister, sender, method, arg)?;
        decode(method, &reply)
    }

    /// A query with Candid arguments and results.
    fn query_typed<A, R>(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        args: A,
    ) -> Result<R>
    where
        A: ArgumentEncoder,
        R: for<'a> ArgumentDecoder<'a>,
    {
        let arg = encode(method, args)?;
        let reply = self.query(canister, sender, method, arg)?;
        decode(method, &reply)
    }

    /// Submits an update with Candid arguments.
    fn submit_typed<A: ArgumentEncoder>(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        args: A,
    ) -> Result<Submitted> {
        let arg = encode(method, args)?;
        self.submit(canister, sender, method, arg)
    }

    /// Ticks one round at a time until `done` holds; fails after `max_rounds`.
    fn tick_until(
        &mut self,
        max_rounds: u64,
        mut done: impl FnMut(&mut Self) -> Result<bool>,
    ) -> Result<u64> {
        for round in 0..=max_rounds {
            if done(self)? {
                return Ok(round);
            }
            if round < max_rounds {
                self.tick();
            }
        }
        Err(BackendError::Host(format!(
            "the condition did not hold within {max_rounds} rounds"
        )))
    }
}

impl<T: Backend + ?Sized> BackendExt for T {}

pub fn encode<A: ArgumentEncoder>(method: &str, args: A) -> Result<Vec<u8>> {
    candid::encode_args(args)
        .map_err(|e| BackendError::Host(format!("the arguments of {method} do not encode: {e}")))
}

pub fn decode<R: for<'a> ArgumentDecoder<'a>>(method: &str, reply: &[u8]) -> Result<R> {
    candid::decode_args(reply)
        .map_err(|e| BackendError::Host(format!("the reply of {method} does not decode: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_names_the_backend_and_the_reason() {
        let e = BackendError::unsupported(BackendKind::PocketIc, "no fault injection");
        assert_eq!(e.to_string(), "unsupported on pocketic: no fault injection");
        assert_eq!(e.reject_code(), None);
        let r = BackendError::Reject {
            code: 4,
            message: "no".into(),
        };
        assert_eq!(r.reject_code(), Some(4));
    }

    #[test]
    fn typed_calls_report_undecodable_replies() {
        let e = decode::<(u64,)>("m", b"DIDL\x00\x01\x71\x01x").unwrap_err();
        assert!(
            matches!(&e, BackendError::Host(m) if m.starts_with("the reply of m does not decode")),
            "{e}"
        );
    }
}
