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
    /// 32 random bytes from the management canister's `raw_rand` (through [`Runtime::call`],
    /// so tests script it as any other call).
    fn raw_rand(&self) -> impl Future<Output = Result<[u8; 32], String>> {
        async move {
            let arg = candid::encode_args(()).map_err(|e| e.to_string())?;
            match self
                .call(Principal::management_canister(), "raw_rand", arg, 60)
                .await
            {
                CallOutcome::Replied(bytes) => {
                    let v: Vec<u8> = candid::decode_one(&bytes)
                        .map_err(|e| format!("raw_rand's reply does not decode: {e}"))?;
                    <[u8; 32]>::try_from(v.as_slice())
                        .map_err(|_| format!("raw_rand answered {} bytes, not 32", v.len()))
                }
                CallOutcome::Rejected { code, message } => {
                    Err(format!("raw_rand was rejected ({code}): {message}"))
                }
                CallOutcome::NotSent(why) => Err(format!("raw_rand was not sent: {why}")),
            }
        }
    }
    /// Builds the catalog in a message of its own, soon (after an upgrade, which leaves it out
    /// so that its cost does not grow with forms and canisters). A message that needs it first
    /// builds it then, as after any change. By default (tests) it is built at once.
    fn build_catalog_soon(&self) {
        self.with_state(|s| {
            crate::catalog::bus(s);
        });
    }
    /// A point in a flow, for instruction profiles (the canister's `trace-instructions` feature
    /// prints the instruction counter there); nothing by default.
    fn mark(&self, _point: &str) {}
}
