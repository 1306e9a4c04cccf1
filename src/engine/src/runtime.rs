//! The boundary between the engine and the Internet Computer: time, the call to another
//! canister, the timer, controllers, and access to the state. The canister implements it with
//! ic-cdk; tests implement it with a scripted ledger, so every rule runs natively.

use crate::state::State;
use candid::Principal;
use ic_stable_structures::Memory;
use std::future::Future;

/// How an inter-canister call ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallOutcome {
    Replied(Vec<u8>),
    /// A reject with its code (1 SYS_FATAL, 2 SYS_TRANSIENT, 3 DESTINATION_INVALID,
    /// 4 CANISTER_REJECT, 5 CANISTER_ERROR, 6 SYS_UNKNOWN).
    Rejected {
        code: u32,
        message: String,
    },
    /// The call was never made (`call_perform` failed, or too few cycles): nothing was sent.
    NotSent(String),
}

pub trait Runtime {
    type M: Memory + Clone;

    /// The canister's clock, ns since the Unix epoch.
    fn now(&self) -> u64;
    fn self_id(&self) -> Principal;
    fn is_controller(&self, p: &Principal) -> bool;
    /// Runs `f` on the state. Never call across an await: take what you need, then await.
    fn with_state<T>(&self, f: impl FnOnce(&mut State<Self::M>) -> T) -> T;
    /// A bounded-wait call that sends `arg` exactly and answers its outcome; it never panics.
    fn call(
        &self,
        canister: Principal,
        method: &str,
        arg: Vec<u8>,
        timeout_seconds: u32,
    ) -> impl Future<Output = CallOutcome>;
    /// Asks for the timer tick to run at `at_ns` (replacing any earlier request).
    fn wake_at(&self, at_ns: u64);
    /// A point in a flow, for instruction profiles (the canister's `trace-instructions` feature
    /// prints the instruction counter there); nothing by default.
    fn mark(&self, _point: &str) {}
}
