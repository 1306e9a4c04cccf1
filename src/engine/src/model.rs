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
    /// Intents the host keeps, open and settled, all owners together.
    pub max_intents: u64,
    /// Intents one owner keeps, open and settled (settled ones leave with the retention).
    pub max_intents_per_owner: u32,
    /// Bytes of stored tool inputs (canonical JSON), all intents together.
    pub max_stored_input_bytes: u64,
    /// Read tool calls one owner makes in a minute.
    pub max_reads_per_owner_per_minute: u32,
    /// Agent authorizations, all owners together.
    pub max_agents_total: u64,
}

/// The first layout of the limits (in version 1 of the config).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitsV1 {
    pub max_open_intents_per_owner: u32,
    pub max_agents_per_owner: u32,
    pub max_forms: u32,
    pub max_canisters: u32,
    pub max_form_bytes: u32,
    pub max_input_bytes: u32,
    pub preview_ttl_seconds: u64,
    pub retention_seconds: u64,
    pub reconcile_delay_seconds: u64,
    pub refs_refresh_seconds: u64,
    pub call_timeout_seconds: u32,
}

impl From<LimitsV1> for Limits {
    fn from(o: LimitsV1) -> Limits {
        let d = Limits::default();
        Limits {
            max_open_intents_per_owner: o.max_open_intents_per_owner,
            max_agents_per_owner: o.max_agents_per_owner,
            max_forms: o.max_forms,
            max_canisters: o.max_canisters,
            max_form_bytes: o.max_form_bytes,
            max_input_bytes: o.max_input_bytes,
            preview_ttl_seconds: o.preview_ttl_seconds,
            retention_seconds: o.retention_seconds,
            reconcile_delay_seconds: o.reconcile_delay_seconds,
            refs_refresh_seconds: o.refs_refresh_seconds,
            call_timeout_seconds: o.call_timeout_seconds,
            max_intents_per_owner: d.max_intents_per_owner.max(o.max_open_intents_per_owner),
            ..d
        }
    }
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
            max_intents: 100_000,
            max_intents_per_owner: 200,
            max_stored_input_bytes: 256 * 1024 * 1024,
            max_reads_per_owner_per_minute: 60,
            max_agents_total: 100_000,
        }
    }
}

/// Counters and settings kept in one cell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    pub next_intent_id: u64,
    pub limits: Limits,
    /// Bumped whenever forms or targets change, so cached tool plans are rebuilt.
    pub catalog_revision: u64,
    /// When the next refs refresh is scheduled (one at a time).
    pub refresh_at: Option<u64>,
    /// Bytes of the tool inputs of the intents kept.
    pub stored_input_bytes: u64,
    /// The indexes that came with version 2 (stamp floors, uses, owners' counts) were built
    /// from the intents of an earlier version: false after an upgrade from version 1, until
    /// `post_upgrade` has built them (once).
    pub indexes_built: bool,
}

impl Default for Config {
    /// A fresh install: nothing to build from an earlier version.
    fn default() -> Self {
        Config {
            next_intent_id: 0,
            limits: Limits::default(),
            catalog_revision: 0,
            refresh_at: None,
            stored_input_bytes: 0,
            indexes_built: true,
        }
    }
}

impl Storable for Config {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(encode(2, self))
    }
    fn into_bytes(self) -> Vec<u8> {
        encode(2, &self)
    }
    fn from_bytes(bytes: Cow<[u8]>) -> Self {
        match bytes.first() {
            Some(1) => {
                let o: ConfigV1 = decode(&bytes, "config", 1);
                Config {
                    next_intent_id: o.next_intent_id,
                    limits: o.limits.into(),
                    catalog_revision: o.catalog_revision,
                    refresh_at: o.refresh_at,
                    // Counted, with the other new indexes, by the upgrade's migration.
                    stored_input_bytes: 0,
                    indexes_built: false,
                }
            }
            _ => decode(&bytes, "config", 2),
        }
    }
    const BOUND: Bound = Bound::Unbounded;
}

/// The first layout of the config.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigV1 {
    pub next_intent_id: u64,
    pub limits: LimitsV1,
    pub catalog_revision: u64,
    pub refresh_at: Option<u64>,
}
versioned!(ConfigV1, 1, "config");

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredForm {
    pub json: String,
    pub registered_at: u64,
    pub registered_by: Principal,
}
versioned!(StoredForm, 1, "form");

/// A target canister: its label, the forms that apply to it, its refs, and the one owner it
/// is registered for, if any.
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
    /// Registered for this owner alone: only it may use the canister's tools, and update
    /// methods with no position bound to the owner are offered (the canister cannot tell the
    /// tool host's owners apart, but there is only one).
    pub owner: Option<Principal>,
}

impl Storable for Target {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(encode(2, self))
    }
    fn into_bytes(self) -> Vec<u8> {
        encode(2, &self)
    }
    fn from_bytes(bytes: Cow<[u8]>) -> Self {
        match bytes.first() {
            Some(1) => {
                let o: TargetV1 = decode(&bytes, "target", 1);
                Target {
                    label: o.label,
                    forms: o.forms,
                    refs_json: o.refs_json,
                    refs_updated_at: o.refs_updated_at,
                    refs_error: o.refs_error,
                    icrc3: o.icrc3,
                    registered_at: o.registered_at,
                    owner: None,
                }
            }
            _ => decode(&bytes, "target", 2),
        }
    }
    const BOUND: Bound = Bound::Unbounded;
}

/// The first layout of a target (shared by every owner).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetV1 {
    pub label: Option<String>,
    pub forms: Vec<String>,
    pub refs_json: String,
    pub refs_updated_at: Option<u64>,
    pub refs_error: Option<String>,
    pub icrc3: bool,
    pub registered_at: u64,
}
versioned!(TargetV1, 1, "target");

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

impl AttemptResult {
    /// Whether this attempt's request may have reached the target (everything but "not sent").
    pub fn may_have_executed(&self) -> bool {
        !matches!(self, AttemptResult::NotSent { .. })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub at: u64,
    pub digest: [u8; 32],
    pub result: AttemptResult,
    /// The target's log length read just before this send (ICRC-3 targets): the original, if
    /// it executed, is at this index or later.
    pub log_length: Option<u64>,
}

/// How far reconciliation has read the target's log for the intent's current bytes. Blocks are
/// never changed once appended, so what was read and did not match never has to be read again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanState {
    /// The bytes this scan is for: a re-stamp (new bytes) starts a new range.
    pub digest: [u8; 32],
    /// Blocks below this index (from the range's start) were read and none was the original.
    pub cursor: u64,
    /// The log length answered by the first read after the latest attempt: the original, if it
    /// executed, is below it (calls between two canisters are delivered in order).
    pub end: Option<u64>,
    /// How many attempts the intent had when `end` was read (a later attempt needs a new end).
    pub end_attempts: u32,
}

/// One name set entry an input used, kept with the intent so that a re-stamp reads the input
/// again exactly as the owner saw it (names are read once per intent).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredName {
    pub set: String,
    pub name: String,
    pub value: crate::stored_value::StoredValue,
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
    /// The tool input in canonical compact JSON, read again when the intent is stamped again.
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
    /// When an agent last asked for this intent to be sent.
    pub confirm_requested_at: Option<u64>,
    pub reconcile_tries: u32,
    /// The status before the send in flight, to return to when nothing was executed.
    pub before_send: Option<Status>,
    /// The due time of its reconcile task, so that it has exactly one.
    pub reconcile_at: Option<u64>,
    /// Reconciliation's progress through the target's log for the current bytes.
    pub scan: Option<ScanState>,
    /// Held with nothing left to try (no stamp to match, or a block that reads as this
    /// intent's but differs): no reconcile task; an admin reads the finding.
    pub held_for_good: bool,
    /// The name set entries the input used.
    pub names: Vec<StoredName>,
    /// The highest stamp this intent was ever given (a `CreatedInFuture` re-stamp can go below
    /// its first): its floor goes with it, and it is kept until that stamp is past the window.
    pub max_stamp: Option<u64>,
    /// The highest stamp handed out for the same arguments before this intent took its first:
    /// the floor a `CreatedInFuture` cap must stay above (this intent's own earlier stamps were
    /// all refused as created in the future, and a cap is far below them).
    pub prior_floor: Option<u64>,
}

impl Intent {
    pub fn has_stamp(&self) -> bool {
        self.stamp_ns.is_some()
    }

    /// Where a scan for the current bytes starts: the smallest log length journaled before any
    /// send of these bytes that may have executed (0 when one was sent without a journal).
    pub fn scan_from(&self) -> u64 {
        let mut from: Option<u64> = None;
        for a in self
            .attempts
            .iter()
            .filter(|a| a.digest == self.digest && a.result.may_have_executed())
        {
            let n = a.log_length.unwrap_or(0);
            from = Some(from.map_or(n, |f| f.min(n)));
        }
        from.unwrap_or(0)
    }

    /// Whether it waits for a reconcile task: unknown or held, with a stamp to match.
    pub fn needs_reconcile(&self) -> bool {
        matches!(self.status, Status::Unknown | Status::Reconcile)
            && self.has_stamp()
            && !self.held_for_good
    }
}

impl Storable for Intent {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(encode(2, self))
    }
    fn into_bytes(self) -> Vec<u8> {
        encode(2, &self)
    }
    fn from_bytes(bytes: Cow<[u8]>) -> Self {
        match bytes.first() {
            Some(1) => decode::<v1::Intent>(&bytes, "intent", 1).into(),
            _ => decode(&bytes, "intent", 2),
        }
    }
    const BOUND: Bound = Bound::Unbounded;
}

/// The first layout of an intent, still read: it kept only the latest send's log length.
pub mod v1 {
    use super::{AttemptResult, Status};
    use candid::Principal;
    use serde::{Deserialize, Serialize};

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
        pub preparer: Principal,
        pub canister: Principal,
        pub form_id: String,
        pub tool: String,
        pub method: String,
        pub input_json: String,
        pub identity: [u8; 32],
        #[serde(with = "serde_bytes")]
        pub arg: Vec<u8>,
        pub digest: [u8; 32],
        pub stamp_ns: Option<u64>,
        pub memo: Option<Vec<u8>>,
        pub preview_json: String,
        pub summary: String,
        pub status: Status,
        pub outcome: Option<String>,
        pub finding: Option<String>,
        pub reply_json: Option<String>,
        pub created_at: u64,
        pub updated_at: u64,
        pub expires_at: u64,
        pub settled_at: Option<u64>,
        pub attempts: Vec<Attempt>,
        pub generation: u32,
        pub retry_same: u8,
        pub rejects_4_5: u8,
        pub had_unknown: bool,
        pub log_length: Option<u64>,
        pub confirm_requested_at: Option<u64>,
        pub reconcile_tries: u32,
        pub before_send: Option<Status>,
    }

    impl ic_stable_structures::Storable for Intent {
        fn to_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
            std::borrow::Cow::Owned(super::encode(1, self))
        }
        fn into_bytes(self) -> Vec<u8> {
            super::encode(1, &self)
        }
        fn from_bytes(bytes: std::borrow::Cow<[u8]>) -> Self {
            super::decode(&bytes, "intent", 1)
        }
        const BOUND: ic_stable_structures::storable::Bound =
            ic_stable_structures::storable::Bound::Unbounded;
    }

    impl From<Intent> for super::Intent {
        /// Version 1 journaled only the latest send's log length: it is kept on the latest
        /// attempt, and earlier attempts of the same bytes get none, so a scan starts at 0
        /// (safe, and continued across runs by the cursor).
        fn from(o: Intent) -> Self {
            let n = o.attempts.len();
            let attempts = o
                .attempts
                .into_iter()
                .enumerate()
                .map(|(k, a)| super::Attempt {
                    at: a.at,
                    digest: a.digest,
                    result: a.result,
                    log_length: if k + 1 == n { o.log_length } else { None },
                })
                .collect();
            super::Intent {
                id: o.id,
                owner: o.owner,
                preparer: o.preparer,
                canister: o.canister,
                form_id: o.form_id,
                tool: o.tool,
                method: o.method,
                input_json: o.input_json,
                identity: o.identity,
                arg: o.arg,
                digest: o.digest,
                stamp_ns: o.stamp_ns,
                memo: o.memo,
                preview_json: o.preview_json,
                summary: o.summary,
                status: o.status,
                outcome: o.outcome,
                finding: o.finding.clone(),
                reply_json: o.reply_json,
                created_at: o.created_at,
                updated_at: o.updated_at,
                expires_at: o.expires_at,
                settled_at: o.settled_at,
                attempts,
                generation: o.generation,
                retry_same: o.retry_same,
                rejects_4_5: o.rejects_4_5,
                had_unknown: o.had_unknown,
                confirm_requested_at: o.confirm_requested_at,
                reconcile_tries: o.reconcile_tries,
                before_send: o.before_send,
                // Version 1 kept no reference to its reconcile task; the task itself is in the
                // due index and runs as before (a later reschedule adds the reference).
                reconcile_at: None,
                scan: None,
                held_for_good: o.status == Status::Reconcile && o.stamp_ns.is_none(),
                names: vec![],
                // Unknown for version 1: its own stamp is the safe floor (a cap then only moves
                // above it if the target would still accept that).
                prior_floor: o.stamp_ns,
                max_stamp: o.stamp_ns,
            }
        }
    }
}

/// A send in flight: which attempt it is, and what was journaled before its await.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    /// The attempt's number (the intent's attempt count once it was marked): a reply is
    /// applied only by the send that made this attempt.
    pub attempt: u32,
    /// The target's log length read before the send.
    pub log_length: Option<u64>,
    /// Whether the send reads the log length first: then, while none is journaled, the call
    /// itself was not made yet.
    pub journals: bool,
    /// When the watchdog moves it to unknown if no reply was applied by then.
    pub watchdog_at: u64,
}
versioned!(InFlight, 1, "in-flight send");

/// Kinds of scheduled work in the due index.
pub mod task {
    pub const EXPIRE: u8 = 1;
    pub const RECONCILE: u8 = 2;
    pub const PRUNE: u8 = 3;
    /// Refresh every target's refs (id 0).
    pub const REFRESH: u8 = 4;
    // 5 is not used: watchdogs have their own index (memory::WATCHDOGS).
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
            stored_input_bytes: 9,
            indexes_built: true,
        };
        let bytes = c.to_bytes().into_owned();
        assert_eq!(bytes[0], 2);
        assert_eq!(Config::from_bytes(Cow::Owned(bytes)), c);
    }

    #[test]
    fn a_version_1_config_reads_with_the_new_limits_defaulted() {
        let d = Limits::default();
        let old = ConfigV1 {
            next_intent_id: 5,
            limits: LimitsV1 {
                max_open_intents_per_owner: d.max_open_intents_per_owner,
                max_agents_per_owner: 3,
                max_forms: d.max_forms,
                max_canisters: d.max_canisters,
                max_form_bytes: d.max_form_bytes,
                max_input_bytes: d.max_input_bytes,
                preview_ttl_seconds: 120,
                retention_seconds: d.retention_seconds,
                reconcile_delay_seconds: d.reconcile_delay_seconds,
                refs_refresh_seconds: d.refs_refresh_seconds,
                call_timeout_seconds: d.call_timeout_seconds,
            },
            catalog_revision: 2,
            refresh_at: Some(1),
        };
        let bytes = old.to_bytes().into_owned();
        assert_eq!(bytes[0], 1);
        let c = Config::from_bytes(Cow::Owned(bytes));
        assert_eq!(c.next_intent_id, 5);
        assert_eq!(c.limits.max_agents_per_owner, 3);
        assert_eq!(c.limits.preview_ttl_seconds, 120);
        assert_eq!(c.limits.max_intents, d.max_intents);
        assert_eq!(c.stored_input_bytes, 0);
        assert!(!c.indexes_built, "built by the upgrade");
    }

    #[test]
    fn a_version_1_target_reads_as_shared() {
        let old = TargetV1 {
            label: Some("TKA".into()),
            forms: vec!["icrc1".into()],
            refs_json: "{}".into(),
            refs_updated_at: None,
            refs_error: None,
            icrc3: true,
            registered_at: 4,
        };
        let t = Target::from_bytes(Cow::Owned(old.to_bytes().into_owned()));
        assert_eq!((t.owner, t.icrc3, t.forms.len()), (None, true, 1));
    }

    #[test]
    #[should_panic(expected = "version 9")]
    fn an_unknown_version_is_refused() {
        let _ = Config::from_bytes(Cow::Owned(vec![9, 0]));
    }
}
