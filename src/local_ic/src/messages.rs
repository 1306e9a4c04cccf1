//! Messages in flight between the test, canisters and the management canister.

use candid::Principal;

use crate::errors::{Reject, RejectCode};
use crate::ids::MessageId;

/// The outcome carried by a response: reply data or a reject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    Reply(Vec<u8>),
    Reject(RejectCode, String),
}

impl Payload {
    pub fn into_result(self) -> Result<Vec<u8>, Reject> {
        match self {
            Payload::Reply(data) => Ok(data),
            Payload::Reject(code, message) => Err(Reject::new(code, message)),
        }
    }

    pub fn reject(code: RejectCode, message: impl Into<String>) -> Self {
        Payload::Reject(code, message.into())
    }
}

/// Who is waiting for the response to a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// An ingress message from the test.
    Ingress(MessageId),
    /// A call from a canister; the response goes to `callback` in `canister`.
    Canister { canister: Principal, callback: u64 },
    /// A system task (the global timer); nobody waits for a response.
    System,
    /// A call whose response the system loses (`inject_lost_reply`): the callee executes and
    /// may respond, but the response is dropped.
    Lost { canister: Principal, callback: u64 },
}

/// A call to a canister method.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub origin: Origin,
    pub caller: Principal,
    pub method: String,
    pub arg: Vec<u8>,
    pub cycles: u128,
    /// Deadline of a bounded-wait call (0 for unbounded calls and ingress).
    pub deadline: u64,
}

/// A response to a call made by a canister.
#[derive(Clone, Debug)]
pub(crate) struct Response {
    pub callback: u64,
    pub payload: Payload,
    pub refund: u128,
    /// Synthesized by the system because the call's deadline expired.
    pub expiry: bool,
}

/// An entry in a canister's input queue.
#[derive(Clone, Debug)]
pub(crate) enum Input {
    Request(Request),
    Response(Response),
}

/// A queued input with the round in which it was enqueued; inputs become eligible
/// for execution in the round after that, so one round is one step of delivery.
#[derive(Clone, Debug)]
pub(crate) struct Queued {
    pub round: u64,
    pub input: Input,
}
