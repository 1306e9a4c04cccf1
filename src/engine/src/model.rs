//! Records kept in stable memory, each with a versioned encoding: a version byte, then the
//! record in postcard. A new layout is a new version; old versions stay readable.

use candid::Principal;
use ic_stable_structures::storable::Bound;
use ic_stable_structures::Storable;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::borrow::Cow;

/// Encodes a record behind its version byte.
fn encode<T: Serialize>(version: u8, v: &T) -> Vec<u8> {
    let mut out = vec![version];
    // Serializing our own records into a Vec cannot fail (no maps with non-string keys, no I/O).
    out.extend(postcard::to_allocvec(v).expect("records serialize"));
    out
}

/// Decodes a record written by [`encode`]; a version this code does not know is a bug.
fn decode<T: DeserializeOwned>(bytes: &[u8], what: &str, known: u8) -> T {
    match bytes.split_first() {
        Some((v, rest)) if *v == known => postcard::from_bytes(rest)
            .unwrap_or_else(|e| panic!("stored {what} does not decode: {e}")),
        Some((v, _)) => panic!("stored {what} has version {v}; this code reads {known}"),
        None => panic!("stored {what} is empty"),
    }
}

macro_rules! versioned {
    ($t:ty, $version:expr, $what:expr) => {
        impl Storable for $t {
            fn to_bytes(&self) -> Cow<'_, [u8]> {
                Cow::Owned(encode($version, self))
            }
            fn into_bytes(self) -> Vec<u8> {
                encode($version, &self)
            }
            fn from_bytes(bytes: Cow<[u8]>) -> Self {
                decode(&bytes, $what, $version)
            }
            const BOUND: Bound = Bound::Unbounded;
        }
    };
}

/// Limits an admin sets; every one is documented in docs/canister.md.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, candid::CandidType)]
pub struct Limits {
    /// Intents not settled that one owner may hold.
    pub max_open_intents_per_owner: u32,
    /// Agents one owner may authorize.
    pub max_agents_per_owner: u32,
    /// Forms and target canisters the host keeps.
    pub max_forms: u32,
    pub max_canisters: u32,
    /// Bytes of one form's JSON (at most the format's own 256 KiB).
    pub max_form_bytes: u32,
    /// Bytes of one tool input's JSON (at most 64 KiB).
    pub max_input_bytes: u32,
    /// A preview never confirmed is settled as expired after this long.
    pub preview_ttl_seconds: u64,
    /// Settled intents are removed after this long.
    pub retention_seconds: u64,
    /// The first reconciliation after an unknown outcome waits this long (then backs off).
    pub reconcile_delay_seconds: u64,
    /// Refs (decimals, symbol, fee) are read again this often.
    pub refs_refresh_seconds: u64,
    /// The deadline of a bounded-wait call to a target canister.
    pub call_timeout_seconds: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_open_intents_per_owner: 20,
            max_agents_per_owner: 16,
            max_forms: 32,
            max_canisters: 64,
            max_form_bytes: tool_host_core::form::limits::MAX_FORM_BYTES as u32,
            max_input_bytes: tool_host_core::read::MAX_INPUT_BYTES as u32,
            preview_ttl_seconds: 3_600,
            retention_seconds: 30 * 86_400,
            reconcile_delay_seconds: 10,
            refs_refresh_seconds: 6 * 3_600,
            call_timeout_seconds: 60,
        }
    }
}

/// Counters and settings kept in one cell.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    pub next_intent_id: u64,
    pub limits: Limits,
    /// Bumped whenever forms or targets change, so cached tool plans are rebuilt.
    pub catalog_revision: u64,
    /// When the next refs refresh is scheduled (one at a time).
    pub refresh_at: Option<u64>,
}
versioned!(Config, 1, "config");

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredForm {
    pub json: String,
    pub registered_at: u64,
    pub registered_by: Principal,
}
versioned!(StoredForm, 1, "form");

/// A target canister: its label, the forms that apply to it, and its refs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub label: Option<String>,
    pub forms: Vec<String>,
    /// The refs as JSON text, `{ "query:icrc1_decimals": 8, ... }`.
    pub refs_json: String,
    pub refs_updated_at: Option<u64>,
    pub refs_error: Option<String>,
    /// The canister lists ICRC-3: unknown outcomes are reconciled from its blocks.
    pub icrc3: bool,
    pub registered_at: u64,
}
versioned!(Target, 1, "target");

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    /// Prepared: waiting for the owner's confirmation.
    Open,
    /// A send is under way: the lock against a second send.
    InFlight,
    /// The last send's outcome is unknown; a confirmed commit sends the same bytes again.
    Unknown,
    /// Held until reconciliation finds the original (done) or reports it absent (settled).
    Reconcile,
    Done,
    Settled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::InFlight => "in_flight",
            Status::Unknown => "unknown",
            Status::Reconcile => "reconcile",
            Status::Done => "done",
            Status::Settled => "settled",
        }
    }
    /// Settled for good: the key is free and the intent counts against no cap.
    pub fn is_final(self) -> bool {
        matches!(self, Status::Done | Status::Settled)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttemptResult {
    /// Marked before the await; replaced when the call returns.
    Pending,
    Replied {
        class: String,
        path: Vec<String>,
    },
    Rejected {
        code: u32,
        message: String,
    },
    /// A reply that does not decode with the form's types.
    Undecodable {
        message: String,
    },
    /// The call could not be made (nothing was sent).
    NotSent {
        message: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub at: u64,
    pub digest: [u8; 32],
    pub result: AttemptResult,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    pub id: u64,
    pub owner: Principal,
    /// Who prepared it: the owner, or an agent the owner authorized.
    pub preparer: Principal,
    pub canister: Principal,
    pub form_id: String,
    pub tool: String,
    pub method: String,
    /// The tool input as given, read again when the intent is stamped again.
    pub input_json: String,
    pub identity: [u8; 32],
    /// The exact argument bytes: every send sends these.
    #[serde(with = "serde_bytes")]
    pub arg: Vec<u8>,
    pub digest: [u8; 32],
    pub stamp_ns: Option<u64>,
    pub memo: Option<Vec<u8>>,
    /// What the owner is shown (JSON).
    pub preview_json: String,
    /// The preview's title and main arguments in one line.
    pub summary: String,
    pub status: Status,
    /// The outcome-table word of the last event (`success`, `unknown`, `declined`, ...).
    pub outcome: Option<String>,
    /// Why it is held or settled beyond the outcome (`retries_spent`, `absent`, `unreadable: ...`).
    pub finding: Option<String>,
    /// The last reply as a person reads it (JSON).
    pub reply_json: Option<String>,
    pub created_at: u64,
    pub updated_at: u64,
    pub expires_at: u64,
    pub settled_at: Option<u64>,
    pub attempts: Vec<Attempt>,
    /// How many times the intent was stamped again (retry_new).
    pub generation: u32,
    pub retry_same: u8,
    /// Rejects with code 4 or 5; the third holds the intent for reconciliation.
    pub rejects_4_5: u8,
    pub had_unknown: bool,
    /// The target's log length journaled before the latest send (ICRC-3 reconciliation starts there).
    pub log_length: Option<u64>,
    /// When an agent last asked for this intent to be sent.
    pub confirm_requested_at: Option<u64>,
    pub reconcile_tries: u32,
    /// The status before the send in flight, to return to when nothing was executed.
    pub before_send: Option<Status>,
}
versioned!(Intent, 1, "intent");

impl Intent {
    pub fn has_stamp(&self) -> bool {
        self.stamp_ns.is_some()
    }
}

/// Kinds of scheduled work in the due index.
pub mod task {
    pub const EXPIRE: u8 = 1;
    pub const RECONCILE: u8 = 2;
    pub const PRUNE: u8 = 3;
    /// Refresh every target's refs (id 0).
    pub const REFRESH: u8 = 4;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_with_their_version() {
        let c = Config {
            next_intent_id: 7,
            limits: Limits::default(),
            catalog_revision: 3,
            refresh_at: None,
        };
        let bytes = c.to_bytes().into_owned();
        assert_eq!(bytes[0], 1);
        assert_eq!(Config::from_bytes(Cow::Owned(bytes)), c);
    }

    #[test]
    #[should_panic(expected = "version 9")]
    fn an_unknown_version_is_refused() {
        let _ = Config::from_bytes(Cow::Owned(vec![9, 0]));
    }
}
