//! The bus's stored records: turns with their steps, inbox entries, and the keys of the usage
//! counts. Versioned as every record is (`crate::model::Versioned`), with golden fixtures.

use candid::Principal;
use ic_stable_structures::storable::Bound;
use ic_stable_structures::Storable;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One tool call made in a turn, written before the call's first await (outcome `None`) and
/// completed after it: a step still `None` was cut off (an upgrade at its await, say).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnStep {
    pub tool: String,
    /// SHA-256 of the input's bytes as the caller sent them.
    pub input_sha256: [u8; 32],
    /// The outcome word, `prepared`, `read`, `ok`, or the error code (`NOT_OFFERED`, ...).
    pub outcome: Option<String>,
    pub is_error: bool,
    pub at: u64,
    /// Who called: the owner or one of its agents.
    pub caller: Principal,
}

/// A turn: what was offered for one request, once, and every call made against it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    pub id: u64,
    pub owner: Principal,
    pub started_by: Principal,
    pub query: String,
    /// The tools offered, in the order the selection gave them.
    pub offered: Vec<String>,
    /// The format they were rendered in (`ToolFormat::as_str`).
    pub format: String,
    pub steps: Vec<TurnStep>,
    /// `finish`'s answer; the turn is finished once it is set.
    pub answer: Option<String>,
    pub finished_at: Option<u64>,
    pub created_at: u64,
    /// When its prune task is due (kept so that an eviction removes exactly that task).
    pub prune_at: u64,
}

impl Turn {
    pub fn finished(&self) -> bool {
        self.finished_at.is_some()
    }
}

/// How an escalation's delivery to the owner's handler went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Delivery {
    /// The owner configured no handler: recorded in the inbox only.
    NoHandler,
    /// Written before the handler's call; stays so if the call never came back (an upgrade).
    Pending,
    /// The handler answered `Ok`.
    Delivered,
    /// The handler rejected the call, answered `Err`, or answered something else: why.
    Failed(String),
}

/// One escalation in an owner's inbox.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxEntry {
    pub id: u64,
    pub owner: Principal,
    /// Who escalated: the owner itself or one of its agents.
    pub from: Principal,
    pub turn: Option<u64>,
    pub reason: String,
    pub summary: Option<String>,
    pub at: u64,
    /// The handler called, if the owner configured one then.
    pub handler: Option<Principal>,
    pub delivery: Delivery,
}

impl InboxEntry {
    pub fn delivered(&self) -> bool {
        self.delivery == Delivery::Delivered
    }
}

crate::model::single_version!(Turn, "turn");
crate::model::single_version!(InboxEntry, "inbox entry");

/// A key of the usage counts: the owner's length byte and bytes, then the tool's name; so an
/// owner's counts are one range, in name order. No version byte: a key's bytes are its order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UsageKey(Vec<u8>);

impl UsageKey {
    /// The longest key: the owner's length byte and bytes, a name of `bus::MAX_NAME_BYTES`.
    pub const MAX_BYTES: usize = 1 + Principal::MAX_LENGTH_IN_BYTES + super::MAX_NAME_BYTES;

    pub fn new(owner: &Principal, tool: &str) -> UsageKey {
        let mut b = Self::owner_prefix(owner);
        b.extend_from_slice(tool.as_bytes());
        UsageKey(b)
    }
    fn owner_prefix(owner: &Principal) -> Vec<u8> {
        let o = owner.as_slice();
        let mut b = Vec::with_capacity(1 + o.len() + 32);
        b.push(o.len() as u8);
        b.extend_from_slice(o);
        b
    }
    /// The first key of `owner`'s counts.
    pub fn start(owner: &Principal) -> UsageKey {
        UsageKey(Self::owner_prefix(owner))
    }
    pub fn is_of(&self, owner: &Principal) -> bool {
        self.0.starts_with(&Self::owner_prefix(owner))
    }
    /// The tool's name (after the owner's bytes).
    pub fn tool(&self) -> &str {
        let n = 1 + *self.0.first().unwrap_or(&0) as usize;
        std::str::from_utf8(self.0.get(n..).unwrap_or(&[])).unwrap_or("")
    }
}

impl Storable for UsageKey {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.0)
    }
    fn into_bytes(self) -> Vec<u8> {
        self.0
    }
    fn from_bytes(bytes: Cow<[u8]>) -> Self {
        UsageKey(bytes.into_owned())
    }
    const BOUND: Bound = Bound::Unbounded;
}
