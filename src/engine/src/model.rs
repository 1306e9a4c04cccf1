//! Records kept in stable memory, each with a versioned encoding: a version byte, then the
//! record in postcard. A new layout is a new version; every version ever written stays
//! readable, and one this code does not know is refused with a [`DecodeError`], never read as
//! another. Postcard is positional (no field names, no lengths of structs): a field inserted
//! or reordered reads old bytes as garbage without any error, so every layout is pinned by the
//! golden byte fixtures in `tests/fixtures/stored` (`tests/stored_layout.rs`). How to add a
//! version: docs/stable-layout.md.

use crate::types::Limits;
use candid::Principal;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::fmt;

/// Why a stored record could not be read: which record, and what was wrong with its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// The record type as docs/stable-layout.md names it (`intent`, `config`, ...).
    pub what: &'static str,
    pub reason: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stored {}: {}", self.what, self.reason)
    }
}

impl std::error::Error for DecodeError {}

/// A record type kept in stable memory, with every layout it was ever written in.
pub trait Versioned: Sized {
    /// Its name in errors and docs.
    const WHAT: &'static str;
    /// The newest version this code writes (`encode` writes it; the intent body also writes
    /// version 1, see there).
    const CURRENT: u8;
    /// Every version this code reads, oldest first (the last is [`Versioned::CURRENT`]).
    const READS: &'static [u8];
    /// Reads the record body of one version (the byte after the version on).
    fn decode_version(version: u8, body: &[u8]) -> Result<Self, DecodeError>;
    /// Bytes a record usually takes, for the buffer it is written into.
    const TYPICAL_BYTES: usize = RECORD_BYTES;
    /// Appends the current version's body to `out` (which holds the version byte).
    fn encode_body(&self, out: Vec<u8>) -> Vec<u8>;

    /// The record with its version byte.
    fn encode(&self) -> Vec<u8> {
        self.encode_body(record_buffer(Self::CURRENT, Self::TYPICAL_BYTES))
    }

    /// Dispatches on the version byte; a version this code does not know (one written by a
    /// later release, say, before a downgrade) is an error naming it.
    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (version, body) = bytes.split_first().ok_or(DecodeError {
            what: Self::WHAT,
            reason: "the record is empty (no version byte)".into(),
        })?;
        if !Self::READS.contains(version) {
            return Err(DecodeError {
                what: Self::WHAT,
                reason: format!(
                    "version {version} is not one this code reads ({:?}); was it written by a later release?",
                    Self::READS
                ),
            });
        }
        Self::decode_version(*version, body)
    }
}

/// A record body appended to `out`, for record types defined outside this module (the bus's).
pub(crate) fn record_body<T: Serialize>(v: &T, out: Vec<u8>) -> Vec<u8> {
    body_into(v, out)
}

/// One version's body, for record types defined outside this module (the bus's).
pub(crate) fn read_record_body<T: DeserializeOwned>(
    what: &'static str,
    version: u8,
    body: &[u8],
) -> Result<T, DecodeError> {
    read_body(what, version, body)
}

/// The buffer a record is first written into, unless its type says otherwise.
const RECORD_BYTES: usize = 128;

/// A record's bytes as stored, read and written without decoding: the checks that read records
/// without trapping, and the intent heads (`crate::intent_store`), decoded when read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawRecord(pub Vec<u8>);

impl ic_stable_structures::Storable for RawRecord {
    fn to_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(&self.0)
    }
    fn into_bytes(self) -> Vec<u8> {
        self.0
    }
    fn from_bytes(bytes: std::borrow::Cow<[u8]>) -> Self {
        RawRecord(bytes.into_owned())
    }
    const BOUND: ic_stable_structures::storable::Bound =
        ic_stable_structures::storable::Bound::Unbounded;
}

impl RawRecord {
    /// The record, decoded; a record that does not decode traps ([`decode_or_trap`]).
    pub fn decode<T: Versioned>(&self) -> T {
        decode_or_trap(&self.0)
    }
}

/// A buffer for one record: its version byte, room for the rest.
fn record_buffer(version: u8, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    out.push(version);
    out
}

/// Serializes a record body after what `out` holds, the same bytes as `postcard::to_allocvec`
/// but into one buffer: growing an empty Vec from nothing, then copying it behind the version
/// byte, cost ~4 000 instructions per intent head on the IC model. Serializing our own records
/// into a Vec cannot fail (no maps with non-string keys, no I/O).
fn body_into<T: Serialize>(v: &T, out: Vec<u8>) -> Vec<u8> {
    struct Append(Vec<u8>);
    impl postcard::ser_flavors::Flavor for Append {
        type Output = Vec<u8>;
        fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
            self.0.extend_from_slice(data);
            Ok(())
        }
        fn try_push(&mut self, data: u8) -> postcard::Result<()> {
            self.0.push(data);
            Ok(())
        }
        fn finalize(self) -> postcard::Result<Vec<u8>> {
            Ok(self.0)
        }
    }
    postcard::serialize_with_flavor(v, Append(out)).expect("records serialize")
}

/// Serializes a record body on its own (old layouts in tests, and the check that
/// [`body_into`] writes postcard's bytes).
#[cfg(test)]
fn body_of<T: Serialize>(v: &T) -> Vec<u8> {
    postcard::to_allocvec(v).expect("records serialize")
}

/// Reads one version's body; every byte must be used (a longer body is another layout).
fn read_body<T: DeserializeOwned>(
    what: &'static str,
    version: u8,
    body: &[u8],
) -> Result<T, DecodeError> {
    match postcard::take_from_bytes(body) {
        Ok((v, [])) => Ok(v),
        Ok((_, rest)) => Err(DecodeError {
            what,
            reason: format!("version {version} leaves {} byte(s) unread", rest.len()),
        }),
        Err(e) => Err(DecodeError {
            what,
            reason: format!("version {version} does not decode: {e}"),
        }),
    }
}

/// The one place a stored record that does not decode traps. `Storable::from_bytes` (which
/// every stable structure calls on a read) cannot return an error, and a record that cannot be
/// read must not be taken for another value or skipped: the trap rolls the message (or the
/// upgrade) back and names the record and the version. Callers that can report instead read
/// through [`Versioned::decode`]: `State::check_layout` (before an upgrade goes ahead) and
/// `State::check_records` (`check_indexes`).
pub fn decode_or_trap<T: Versioned>(bytes: &[u8]) -> T {
    T::decode(bytes).unwrap_or_else(|e| panic!("{e}"))
}

/// `Storable` over [`Versioned`]: writes the current version, reads every known one.
macro_rules! storable {
    ($t:ty) => {
        impl ::ic_stable_structures::Storable for $t {
            fn to_bytes(&self) -> ::std::borrow::Cow<'_, [u8]> {
                ::std::borrow::Cow::Owned($crate::model::Versioned::encode(self))
            }
            fn into_bytes(self) -> Vec<u8> {
                $crate::model::Versioned::encode(&self)
            }
            fn from_bytes(bytes: ::std::borrow::Cow<[u8]>) -> Self {
                $crate::model::decode_or_trap(&bytes)
            }
            const BOUND: ::ic_stable_structures::storable::Bound =
                ::ic_stable_structures::storable::Bound::Unbounded;
        }
    };
}
pub(crate) use storable;

/// A record type with one layout so far: version 1, its body the struct itself. Every record
/// type of the engine with one layout uses it, wherever it is defined.
macro_rules! single_version {
    ($t:ty, $what:expr $(, $typical:expr)?) => {
        impl $crate::model::Versioned for $t {
            const WHAT: &'static str = $what;
            $(const TYPICAL_BYTES: usize = $typical;)?
            const CURRENT: u8 = 1;
            const READS: &'static [u8] = &[1];
            fn decode_version(
                version: u8,
                body: &[u8],
            ) -> Result<Self, $crate::model::DecodeError> {
                $crate::model::read_record_body($what, version, body)
            }
            fn encode_body(&self, out: Vec<u8>) -> Vec<u8> {
                $crate::model::record_body(self, out)
            }
        }
        $crate::model::storable!($t);
    };
}
pub(crate) use single_version;

/// An old layout, kept to read what earlier versions wrote and (in tests) to write it: its
/// version byte is its own, and it is never a record type of a stable structure.
pub trait OldLayout: Serialize + DeserializeOwned {
    const WHAT: &'static str;
    const VERSION: u8;
    /// The record as that version wrote it.
    fn encode(&self) -> Vec<u8> {
        body_into(self, record_buffer(Self::VERSION, RECORD_BYTES))
    }
    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        match bytes.split_first() {
            Some((v, body)) if *v == Self::VERSION => read_body(Self::WHAT, *v, body),
            _ => Err(DecodeError {
                what: Self::WHAT,
                reason: format!("not a version {} record", Self::VERSION),
            }),
        }
    }
}

/// The limits as the config stores them (version 2 of the config on): the API's [`Limits`]
/// is a Candid type that may change with the interface; this layout changes only with a new
/// config version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredLimits {
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
    pub max_intents: u64,
    pub max_intents_per_owner: u32,
    pub max_stored_input_bytes: u64,
    pub max_reads_per_owner_per_minute: u32,
    pub max_agents_total: u64,
}

impl From<&Limits> for StoredLimits {
    fn from(l: &Limits) -> Self {
        StoredLimits {
            max_open_intents_per_owner: l.max_open_intents_per_owner,
            max_agents_per_owner: l.max_agents_per_owner,
            max_forms: l.max_forms,
            max_canisters: l.max_canisters,
            max_form_bytes: l.max_form_bytes,
            max_input_bytes: l.max_input_bytes,
            preview_ttl_seconds: l.preview_ttl_seconds,
            retention_seconds: l.retention_seconds,
            reconcile_delay_seconds: l.reconcile_delay_seconds,
            refs_refresh_seconds: l.refs_refresh_seconds,
            call_timeout_seconds: l.call_timeout_seconds,
            max_intents: l.max_intents,
            max_intents_per_owner: l.max_intents_per_owner,
            max_stored_input_bytes: l.max_stored_input_bytes,
            max_reads_per_owner_per_minute: l.max_reads_per_owner_per_minute,
            max_agents_total: l.max_agents_total,
        }
    }
}

impl From<&StoredLimits> for Limits {
    fn from(l: &StoredLimits) -> Self {
        Limits {
            max_open_intents_per_owner: l.max_open_intents_per_owner,
            max_agents_per_owner: l.max_agents_per_owner,
            max_forms: l.max_forms,
            max_canisters: l.max_canisters,
            max_form_bytes: l.max_form_bytes,
            max_input_bytes: l.max_input_bytes,
            preview_ttl_seconds: l.preview_ttl_seconds,
            retention_seconds: l.retention_seconds,
            reconcile_delay_seconds: l.reconcile_delay_seconds,
            refs_refresh_seconds: l.refs_refresh_seconds,
            call_timeout_seconds: l.call_timeout_seconds,
            max_intents: l.max_intents,
            max_intents_per_owner: l.max_intents_per_owner,
            max_stored_input_bytes: l.max_stored_input_bytes,
            max_reads_per_owner_per_minute: l.max_reads_per_owner_per_minute,
            max_agents_total: l.max_agents_total,
        }
    }
}

impl Default for StoredLimits {
    fn default() -> Self {
        (&Limits::default()).into()
    }
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

impl From<LimitsV1> for StoredLimits {
    fn from(o: LimitsV1) -> StoredLimits {
        let d = StoredLimits::default();
        StoredLimits {
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

/// Counters and settings kept in one cell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    pub next_intent_id: u64,
    pub limits: StoredLimits,
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
    /// The tool bus's settings and counters (version 3 on).
    pub bus: BusConfig,
    /// The highest [`LAYOUT`] of any code that ran on this memory (version 4 on); 0 when read
    /// from an older config, which did not say.
    pub layout: u32,
}

/// The stored layout this code writes: one number for the versions of every record it writes,
/// raised with any record's `CURRENT` (the test
/// `stored_layout::the_layout_names_every_current_version` pins the number with the versions,
/// so one cannot change without the other). Every release
/// reads every version of every record (`READS` is `1..=CURRENT`, tested), so a memory written
/// by layout `n` is readable by code of layout `n` or later, and only by that: an upgrade
/// compares this number instead of reading every record (`State::check_layout`).
pub const LAYOUT: u32 = 8;

/// What an admin set for the builtin tools, and the bus's id counters: small, and read with
/// the config anyway (a cell of its own would take a 512 KiB bucket).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusConfig {
    /// Builtins an admin enabled, by name (none by default).
    pub enabled: Vec<String>,
    /// Tools an admin pinned besides the default pins.
    pub pinned: Vec<String>,
    /// Default pins (`escalate`) an admin removed.
    pub unpinned: Vec<String>,
    /// The IANA zone `current_time` answers in when the caller names none (UTC when absent).
    pub default_time_zone: Option<String>,
    pub next_turn_id: u64,
    pub next_inbox_id: u64,
    /// Turns kept, all owners together (for the host-wide bound).
    pub turns_kept: u64,
    /// Inbox entries kept, all owners together (likewise).
    pub inbox_kept: u64,
}

impl Default for Config {
    /// A fresh install: nothing to build from an earlier version.
    fn default() -> Self {
        Config {
            next_intent_id: 0,
            limits: StoredLimits::default(),
            catalog_revision: 0,
            refresh_at: None,
            stored_input_bytes: 0,
            indexes_built: true,
            bus: BusConfig::default(),
            layout: LAYOUT,
        }
    }
}

/// Version 1: [`ConfigV1`]; version 2 ([`ConfigV2`]) added the stored input bytes, the build
/// flag of the indexes version 2 added, and five limits; version 3 ([`ConfigV3`]) the bus's
/// settings; version 4 the layout number.
impl Versioned for Config {
    const WHAT: &'static str = "config";
    const CURRENT: u8 = 4;
    const READS: &'static [u8] = &[1, 2, 3, 4];
    fn decode_version(version: u8, body: &[u8]) -> Result<Self, DecodeError> {
        match version {
            1 => {
                let o: ConfigV1 = read_body(Self::WHAT, 1, body)?;
                Ok(Config {
                    next_intent_id: o.next_intent_id,
                    limits: o.limits.into(),
                    catalog_revision: o.catalog_revision,
                    refresh_at: o.refresh_at,
                    // Counted, with the other new indexes, by the upgrade's migration.
                    stored_input_bytes: 0,
                    indexes_built: false,
                    bus: BusConfig::default(),
                    layout: 0,
                })
            }
            2 => read_body::<ConfigV2>(Self::WHAT, 2, body).map(|o| ConfigV3::from(o).into()),
            3 => read_body::<ConfigV3>(Self::WHAT, 3, body).map(Into::into),
            _ => read_body(Self::WHAT, version, body),
        }
    }
    fn encode_body(&self, out: Vec<u8>) -> Vec<u8> {
        body_into(self, out)
    }
}
storable!(Config);

/// The first layout of the config.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigV1 {
    pub next_intent_id: u64,
    pub limits: LimitsV1,
    pub catalog_revision: u64,
    pub refresh_at: Option<u64>,
}
impl OldLayout for ConfigV1 {
    const WHAT: &'static str = "config";
    const VERSION: u8 = 1;
}

/// The second layout of the config (the first release's): no bus.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigV2 {
    pub next_intent_id: u64,
    pub limits: StoredLimits,
    pub catalog_revision: u64,
    pub refresh_at: Option<u64>,
    pub stored_input_bytes: u64,
    pub indexes_built: bool,
}
impl OldLayout for ConfigV2 {
    const WHAT: &'static str = "config";
    const VERSION: u8 = 2;
}

impl From<ConfigV2> for ConfigV3 {
    /// No builtin enabled and no turn or inbox entry yet: what the bus is before any admin
    /// touched it.
    fn from(o: ConfigV2) -> ConfigV3 {
        ConfigV3 {
            next_intent_id: o.next_intent_id,
            limits: o.limits,
            catalog_revision: o.catalog_revision,
            refresh_at: o.refresh_at,
            stored_input_bytes: o.stored_input_bytes,
            indexes_built: o.indexes_built,
            bus: BusConfig::default(),
        }
    }
}

/// The third layout of the config: no layout number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigV3 {
    pub next_intent_id: u64,
    pub limits: StoredLimits,
    pub catalog_revision: u64,
    pub refresh_at: Option<u64>,
    pub stored_input_bytes: u64,
    pub indexes_built: bool,
    pub bus: BusConfig,
}
impl OldLayout for ConfigV3 {
    const WHAT: &'static str = "config";
    const VERSION: u8 = 3;
}

impl From<ConfigV3> for Config {
    /// Layout 0: not known, so the next upgrade reads every form and target.
    fn from(o: ConfigV3) -> Config {
        Config {
            next_intent_id: o.next_intent_id,
            limits: o.limits,
            catalog_revision: o.catalog_revision,
            refresh_at: o.refresh_at,
            stored_input_bytes: o.stored_input_bytes,
            indexes_built: o.indexes_built,
            bus: o.bus,
            layout: 0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredForm {
    pub json: String,
    pub registered_at: u64,
    pub registered_by: Principal,
}
single_version!(StoredForm, "form");

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

/// Version 1: [`TargetV1`] (shared by every owner); version 2 added the owner.
impl Versioned for Target {
    const WHAT: &'static str = "target";
    const CURRENT: u8 = 2;
    const READS: &'static [u8] = &[1, 2];
    fn decode_version(version: u8, body: &[u8]) -> Result<Self, DecodeError> {
        if version == 1 {
            let o: TargetV1 = read_body(Self::WHAT, 1, body)?;
            return Ok(Target {
                label: o.label,
                forms: o.forms,
                refs_json: o.refs_json,
                refs_updated_at: o.refs_updated_at,
                refs_error: o.refs_error,
                icrc3: o.icrc3,
                registered_at: o.registered_at,
                owner: None,
            });
        }
        read_body(Self::WHAT, version, body)
    }
    fn encode_body(&self, out: Vec<u8>) -> Vec<u8> {
        body_into(self, out)
    }
}
storable!(Target);

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
impl OldLayout for TargetV1 {
    const WHAT: &'static str = "target";
    const VERSION: u8 = 1;
}

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
    /// The preview's JSON as stored (version 3 on): without its `arg_hex`. What the owner is
    /// shown is [`Intent::preview_text`]; never show this field.
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
    /// The highest stamp it was ever given (`max_stamp`, or its one stamp for an intent of a
    /// version that did not record it): the one its floor and its prune wait for.
    pub fn highest_stamp(&self) -> Option<u64> {
        self.max_stamp.or(self.stamp_ns)
    }

    pub fn has_stamp(&self) -> bool {
        self.stamp_ns.is_some()
    }

    /// Records the log length journaled before the latest send. A scan's cursor above it was
    /// read on a log that has since shrunk (a ledger reinstalled or rolled back): blocks it
    /// passed over may now be this send's, so the scan reads again from there. (A log that
    /// only grows never journals below a cursor: the cursor is below a length read earlier.)
    pub fn record_log_length(&mut self, log_length: Option<u64>) {
        if let Some(last) = self.attempts.last_mut() {
            last.log_length = log_length;
        }
        if let Some(scan) = self.scan.as_mut() {
            scan.cursor = scan.cursor.min(log_length.unwrap_or(0));
        }
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

    /// The preview's JSON as shown (answers, `get_intent`, consent messages): the stored text
    /// with `arg_hex`, the argument bytes in hex, put back at its end ([`stored_preview`]).
    pub fn preview_text(&self) -> String {
        // Kept whole (a text `stored_preview` did not shorten, its `arg_hex` last): shown as
        // stored, never with a second `arg_hex`.
        if ends_with_an_arg_hex(&self.preview_json) {
            return self.preview_json.clone();
        }
        let body = match self.preview_json.strip_suffix('}') {
            // Not an object (never written so; shown as stored).
            None => return self.preview_json.clone(),
            Some(body) => body,
        };
        let mut out = String::with_capacity(body.len() + 2 * self.arg.len() + 14);
        out.push_str(body);
        out.push_str(if body == "{" {
            &ARG_HEX_KEY[1..]
        } else {
            ARG_HEX_KEY
        });
        for b in &self.arg {
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
        out.push_str("\"}");
        out
    }

    /// Whether it waits for a reconcile task: unknown or held, with a stamp to match.
    pub fn needs_reconcile(&self) -> bool {
        matches!(self.status, Status::Unknown | Status::Reconcile)
            && self.has_stamp()
            && !self.held_for_good
    }
}

/// A preview's JSON as an intent stores it (version 3 on): without the `arg_hex` that ends
/// every preview the engine makes, the argument bytes in hex, which the record keeps once, in
/// `arg` (about a fifth of a transfer's record). [`Intent::preview_text`] puts it back. A text that
/// does not end so is kept whole.
pub fn stored_preview(mut full: String, arg: &[u8]) -> String {
    if let Some(start) = arg_hex_at_end(&full, arg) {
        full.truncate(start);
        full.push('}');
    }
    full
}

/// Whether a text ends with `"arg_hex":"<hex digits>"}` (of any bytes) as its last member.
fn ends_with_an_arg_hex(text: &str) -> bool {
    let Some(body) = text.strip_suffix("\"}") else {
        return false;
    };
    // The key without its comma: the only member (`{"arg_hex":"…"}`) counts too.
    let key = &ARG_HEX_KEY[1..];
    match body.rfind(key) {
        Some(i) if i > 0 && matches!(body.as_bytes()[i - 1], b',' | b'{') => {
            body[i + key.len()..].bytes().all(|b| HEX.contains(&b))
        }
        _ => false,
    }
}

/// Where `,"arg_hex":"<hex of arg>"}` starts when a text ends with it after something more
/// than `{` (a character boundary: it starts with an ASCII `,`).
fn arg_hex_at_end(text: &str, arg: &[u8]) -> Option<usize> {
    let tail = ARG_HEX_KEY.len() + 2 * arg.len() + 2;
    if text.len() <= tail + 1 {
        return None;
    }
    let start = text.len() - tail;
    let t = &text.as_bytes()[start..];
    let hex = &t[ARG_HEX_KEY.len()..tail - 2];
    let same = hex
        .chunks_exact(2)
        .zip(arg)
        .all(|(h, b)| h[0] == HEX[usize::from(b >> 4)] && h[1] == HEX[usize::from(b & 15)]);
    (t.starts_with(ARG_HEX_KEY.as_bytes()) && t.ends_with(b"\"}") && same).then_some(start)
}

const ARG_HEX_KEY: &str = ",\"arg_hex\":\"";
const HEX: &[u8; 16] = b"0123456789abcdef";

/// Version 2 of an intent: the fields of version 3, its preview whole (`arg_hex` included).
/// Read, and written by tests.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(transparent)]
pub struct IntentV2(pub Intent);

impl OldLayout for IntentV2 {
    const WHAT: &'static str = "intent";
    const VERSION: u8 = 2;
}

/// Version 1: [`v1::Intent`]; version 2 keeps a log length per attempt, the reconcile task's
/// time, the scan, the names the input used and the stamp floors' bounds; version 3 stores
/// the preview without its `arg_hex` ([`stored_preview`]).
impl Versioned for Intent {
    const WHAT: &'static str = "intent";
    const CURRENT: u8 = 3;
    const READS: &'static [u8] = &[1, 2, 3];
    fn decode_version(version: u8, body: &[u8]) -> Result<Self, DecodeError> {
        let mut i: Intent = match version {
            1 => read_body::<v1::Intent>(Self::WHAT, 1, body)?.into(),
            2 => read_body::<IntentV2>(Self::WHAT, 2, body)?.0,
            _ => return read_body(Self::WHAT, version, body),
        };
        i.preview_json = stored_preview(std::mem::take(&mut i.preview_json), &i.arg);
        Ok(i)
    }
    fn encode_body(&self, out: Vec<u8>) -> Vec<u8> {
        body_into(self, out)
    }
}

/// The parts of an intent written when it is prepared and again only when it is stamped again:
/// kept in the body slab (`crate::intent_store`), out of the intents map's B-tree nodes, which
/// are saved whole on every write (ic-stable-structures 0.7): a send then rewrites nodes of
/// small heads, not of whole records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntentBody {
    pub form_id: String,
    pub tool: String,
    pub method: String,
    pub input_json: String,
    #[serde(with = "serde_bytes")]
    pub arg: Vec<u8>,
    pub memo: Option<Vec<u8>>,
    pub preview_json: String,
    pub summary: String,
    pub names: Vec<StoredName>,
}

/// Version 1 is the body as written (postcard); versions 2 and 3 the same bytes packed
/// (`crate::packed_body`: 2 against a dictionary of text, written by layout 4 and still read;
/// 3 with its spelled bytes put back, against sample bodies), which a settled intent's body
/// becomes once its floor has gone (`IntentStore::pack`). `encode` writes version 1 (a
/// prepare's, a re-stamp's), `encode_packed` version 3, the newest (`CURRENT`); packing is
/// done once, by a task of the timer.
impl Versioned for IntentBody {
    const WHAT: &'static str = "intent body";
    const TYPICAL_BYTES: usize = 2048;
    const CURRENT: u8 = 3;
    const READS: &'static [u8] = &[1, 2, 3];
    fn decode_version(version: u8, body: &[u8]) -> Result<Self, DecodeError> {
        let unpacked = match version {
            2 => crate::packed_body::lz4::unpack(body),
            3 => crate::packed_body::unpack(body),
            _ => return read_body(Self::WHAT, version, body),
        };
        let plain = unpacked.map_err(|reason| DecodeError {
            what: Self::WHAT,
            reason: format!("version {version}: {reason}"),
        })?;
        read_body(Self::WHAT, version, &plain)
    }
    fn encode(&self) -> Vec<u8> {
        self.encode_body(record_buffer(Self::PLAIN, Self::TYPICAL_BYTES))
    }
    fn encode_body(&self, out: Vec<u8>) -> Vec<u8> {
        body_into(self, out)
    }
}
storable!(IntentBody);

impl IntentBody {
    /// The version `encode` writes: the body as a prepare or a re-stamp writes it.
    pub const PLAIN: u8 = 1;

    /// The record packed (version 3), or `None` when packing would not make it smaller, it is
    /// past `packed_body::MAX_UNPACKED`, or it would not read back as itself.
    pub fn encode_packed(&self) -> Option<Vec<u8>> {
        let plain = body_into(self, Vec::with_capacity(Self::TYPICAL_BYTES));
        let packed = crate::packed_body::pack(&plain)?;
        if packed.len() >= plain.len() {
            return None;
        }
        let mut out = record_buffer(Self::CURRENT, packed.len() + 1);
        out.extend_from_slice(&packed);
        Some(out)
    }
}

/// Where an intent's body is in the body slab: its first chunk and its length in bytes, and
/// the slab's count of writes when it was written (no two bodies ever have the same: chunks
/// freed and taken again by a body of the same length are still another body).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BodyRef {
    pub first: u32,
    pub len: u32,
    pub write: u64,
}

/// An intent without its body (version 4 of the intent record): what changes as it moves on
/// (status, attempts, outcome, times), the keys its indexes are kept by, and where its body is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntentHead {
    pub id: u64,
    pub owner: Principal,
    pub preparer: Principal,
    pub canister: Principal,
    pub identity: [u8; 32],
    pub digest: [u8; 32],
    pub stamp_ns: Option<u64>,
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
    pub confirm_requested_at: Option<u64>,
    pub reconcile_tries: u32,
    pub before_send: Option<Status>,
    pub reconcile_at: Option<u64>,
    pub scan: Option<ScanState>,
    pub held_for_good: bool,
    pub max_stamp: Option<u64>,
    pub prior_floor: Option<u64>,
    pub body: BodyRef,
}

impl Intent {
    /// The head (with `body` for where its body goes) and the body.
    pub fn split(self, body: BodyRef) -> (IntentHead, IntentBody) {
        let head = IntentHead {
            id: self.id,
            owner: self.owner,
            preparer: self.preparer,
            canister: self.canister,
            identity: self.identity,
            digest: self.digest,
            stamp_ns: self.stamp_ns,
            status: self.status,
            outcome: self.outcome,
            finding: self.finding,
            reply_json: self.reply_json,
            created_at: self.created_at,
            updated_at: self.updated_at,
            expires_at: self.expires_at,
            settled_at: self.settled_at,
            attempts: self.attempts,
            generation: self.generation,
            retry_same: self.retry_same,
            rejects_4_5: self.rejects_4_5,
            had_unknown: self.had_unknown,
            confirm_requested_at: self.confirm_requested_at,
            reconcile_tries: self.reconcile_tries,
            before_send: self.before_send,
            reconcile_at: self.reconcile_at,
            scan: self.scan,
            held_for_good: self.held_for_good,
            max_stamp: self.max_stamp,
            prior_floor: self.prior_floor,
            body,
        };
        let body = IntentBody {
            form_id: self.form_id,
            tool: self.tool,
            method: self.method,
            input_json: self.input_json,
            arg: self.arg,
            memo: self.memo,
            preview_json: self.preview_json,
            summary: self.summary,
            names: self.names,
        };
        (head, body)
    }
}

impl IntentHead {
    /// The whole intent, with the body read from where the head says it is.
    pub fn join(self, b: IntentBody) -> Intent {
        Intent {
            id: self.id,
            owner: self.owner,
            preparer: self.preparer,
            canister: self.canister,
            form_id: b.form_id,
            tool: b.tool,
            method: b.method,
            input_json: b.input_json,
            identity: self.identity,
            arg: b.arg,
            digest: self.digest,
            stamp_ns: self.stamp_ns,
            memo: b.memo,
            preview_json: b.preview_json,
            summary: b.summary,
            status: self.status,
            outcome: self.outcome,
            finding: self.finding,
            reply_json: self.reply_json,
            created_at: self.created_at,
            updated_at: self.updated_at,
            expires_at: self.expires_at,
            settled_at: self.settled_at,
            attempts: self.attempts,
            generation: self.generation,
            retry_same: self.retry_same,
            rejects_4_5: self.rejects_4_5,
            had_unknown: self.had_unknown,
            confirm_requested_at: self.confirm_requested_at,
            reconcile_tries: self.reconcile_tries,
            before_send: self.before_send,
            reconcile_at: self.reconcile_at,
            scan: self.scan,
            held_for_good: self.held_for_good,
            names: b.names,
            max_stamp: self.max_stamp,
            prior_floor: self.prior_floor,
        }
    }
}

/// An intents map record: versions 1 to 3 hold the whole intent (still read: they are moved
/// to a head and a body when next written), version 4 its head, the body in the slab.
#[derive(Clone, Debug, PartialEq, Eq)]
// Heads are every record written from version 4 on; whole intents are the old ones, boxed.
#[allow(clippy::large_enum_variant)]
pub enum StoredIntent {
    Whole(Box<Intent>),
    Head(IntentHead),
}

impl StoredIntent {
    /// When its preview expires.
    pub fn expires_at(&self) -> u64 {
        match self {
            StoredIntent::Whole(i) => i.expires_at,
            StoredIntent::Head(h) => h.expires_at,
        }
    }

    pub fn status(&self) -> Status {
        match self {
            StoredIntent::Whole(i) => i.status,
            StoredIntent::Head(h) => h.status,
        }
    }
    pub fn identity(&self) -> [u8; 32] {
        match self {
            StoredIntent::Whole(i) => i.identity,
            StoredIntent::Head(h) => h.identity,
        }
    }
    /// Where its body is, when it has one in the slab.
    pub fn body(&self) -> Option<BodyRef> {
        match self {
            StoredIntent::Whole(_) => None,
            StoredIntent::Head(h) => Some(h.body),
        }
    }
}

impl Versioned for StoredIntent {
    const WHAT: &'static str = "intent";
    const TYPICAL_BYTES: usize = 512;
    const CURRENT: u8 = 4;
    const READS: &'static [u8] = &[1, 2, 3, 4];
    fn decode_version(version: u8, body: &[u8]) -> Result<Self, DecodeError> {
        match version {
            1..=3 => {
                Intent::decode_version(version, body).map(|i| StoredIntent::Whole(Box::new(i)))
            }
            _ => read_body(Self::WHAT, version, body).map(StoredIntent::Head),
        }
    }
    /// Only [`StoredIntent::encode`] calls it, for a head.
    fn encode_body(&self, out: Vec<u8>) -> Vec<u8> {
        match self {
            StoredIntent::Whole(i) => i.encode_body(out),
            StoredIntent::Head(h) => body_into(h, out),
        }
    }
    /// A head as version 4; a whole intent (never written by the store, which splits every
    /// intent it writes; tests plant them) as version 3, the layout that holds it.
    fn encode(&self) -> Vec<u8> {
        match self {
            StoredIntent::Whole(i) => Versioned::encode(i.as_ref()),
            StoredIntent::Head(h) => head_record(h),
        }
    }
}
storable!(StoredIntent);

/// A head's record (version 4), written without wrapping it in a [`StoredIntent`].
pub fn head_record(h: &IntentHead) -> Vec<u8> {
    body_into(
        h,
        record_buffer(StoredIntent::CURRENT, StoredIntent::TYPICAL_BYTES),
    )
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

    impl super::OldLayout for Intent {
        const WHAT: &'static str = "intent";
        const VERSION: u8 = 1;
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
single_version!(InFlight, "in-flight send");

/// Kinds of scheduled work in the due index, whose keys are `(at, kind, id)` with the kind as
/// one byte: these numbers are the stored encoding and never change (a new kind takes a new one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum TaskKind {
    /// A preview not confirmed by its expiry settles as expired.
    Expire = 1,
    /// Reconcile an unknown outcome against the ledger.
    Reconcile = 2,
    /// Remove a settled intent once its retention passed.
    Prune = 3,
    /// Refresh every target's refs (id 0).
    Refresh = 4,
    // 5 is not used: watchdogs have their own index (memory::WATCHDOGS); never given to a
    // new kind, in case an unreleased build wrote it.
    /// Remove a turn once the retention passed since it began (id: the turn's).
    PruneTurn = 6,
    /// Remove an inbox entry once the retention passed since it was made (id: the entry's).
    PruneInbox = 7,
}

impl TaskKind {
    pub const ALL: [TaskKind; 6] = [
        TaskKind::Expire,
        TaskKind::Reconcile,
        TaskKind::Prune,
        TaskKind::Refresh,
        TaskKind::PruneTurn,
        TaskKind::PruneInbox,
    ];

    /// The byte the due index stores.
    pub const fn byte(self) -> u8 {
        self as u8
    }

    /// The kind a stored byte names; `None` for a byte no kind has.
    pub const fn from_byte(b: u8) -> Option<TaskKind> {
        match b {
            1 => Some(TaskKind::Expire),
            2 => Some(TaskKind::Reconcile),
            3 => Some(TaskKind::Prune),
            4 => Some(TaskKind::Refresh),
            6 => Some(TaskKind::PruneTurn),
            7 => Some(TaskKind::PruneInbox),
            _ => None,
        }
    }

    /// The due-index key of this task.
    pub const fn key(self, at: u64, id: u64) -> (u64, u8, u64) {
        (at, self.byte(), id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ic_stable_structures::Storable;
    use std::borrow::Cow;

    /// The due index stores the kind as its byte: the bytes of a key never change, so an
    /// upgrade finds every task a previous version scheduled.
    #[test]
    fn task_kinds_keep_their_stored_bytes() {
        // A new kind fails to compile here until it is in ALL.
        let listed = |k: TaskKind| match k {
            TaskKind::Expire
            | TaskKind::Reconcile
            | TaskKind::Prune
            | TaskKind::Refresh
            | TaskKind::PruneTurn
            | TaskKind::PruneInbox => TaskKind::ALL.contains(&k),
        };
        assert!(TaskKind::ALL.into_iter().all(listed));
        assert_eq!(TaskKind::ALL.map(TaskKind::byte), [1, 2, 3, 4, 6, 7]);
        for k in TaskKind::ALL {
            assert_eq!(TaskKind::from_byte(k.byte()), Some(k));
        }
        assert_eq!(TaskKind::from_byte(0), None);
        assert_eq!(TaskKind::from_byte(5), None);
        let key = TaskKind::Reconcile.key(0x0102_0304_0506_0708, 9);
        assert_eq!(key, (0x0102_0304_0506_0708, 2u8, 9));
        // at (big-endian), the kind's byte, id (big-endian): as stored before the enum.
        assert_eq!(
            key.to_bytes().as_ref(),
            [1, 2, 3, 4, 5, 6, 7, 8, 2, 0, 0, 0, 0, 0, 0, 0, 9].as_slice(),
        );
    }

    #[test]
    fn records_round_trip_with_their_version() {
        let c = Config {
            next_intent_id: 7,
            limits: StoredLimits::default(),
            catalog_revision: 3,
            refresh_at: None,
            stored_input_bytes: 9,
            indexes_built: true,
            bus: BusConfig {
                enabled: vec!["calculate".into()],
                next_turn_id: 4,
                ..Default::default()
            },
            layout: LAYOUT,
        };
        let bytes = c.to_bytes().into_owned();
        assert_eq!(bytes[0], 4);
        assert_eq!(Config::from_bytes(Cow::Owned(bytes)), c);
    }

    /// A record is its version byte and postcard's bytes, whatever buffer it is written into:
    /// shorter and longer than the buffer's first size.
    #[test]
    fn records_are_their_version_and_postcards_bytes() {
        for n in [0usize, 100, 126, 127, 128, 129, 5_000] {
            let form = StoredForm {
                json: "f".repeat(n),
                registered_at: 1,
                registered_by: Principal::anonymous(),
            };
            let mut want = vec![1];
            want.extend(body_of(&form));
            assert_eq!(Versioned::encode(&form), want, "{n}");
            let old = TargetV1 {
                label: Some("t".repeat(n)),
                forms: vec![],
                refs_json: "{}".into(),
                refs_updated_at: None,
                refs_error: None,
                icrc3: true,
                registered_at: 4,
            };
            let mut want = vec![1];
            want.extend(body_of(&old));
            assert_eq!(OldLayout::encode(&old), want, "{n}");
        }
    }

    #[test]
    fn a_version_1_config_reads_with_the_new_limits_defaulted() {
        let d = StoredLimits::default();
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
        let bytes = OldLayout::encode(&old);
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
        let t = Target::from_bytes(Cow::Owned(OldLayout::encode(&old)));
        assert_eq!((t.owner, t.icrc3, t.forms.len()), (None, true, 1));
    }

    #[test]
    fn an_unknown_version_is_refused_with_its_number() {
        let e = Config::decode(&[9, 0]).unwrap_err();
        assert_eq!(e.what, "config");
        assert!(
            e.reason
                .contains("version 9 is not one this code reads ([1, 2, 3, 4])"),
            "{e}"
        );
        let e = Intent::decode(&[3]).unwrap_err();
        assert!(e.reason.contains("version 3"), "{e}");
        let e = StoredForm::decode(&[]).unwrap_err();
        assert!(e.reason.contains("empty"), "{e}");
    }

    #[test]
    fn a_body_that_does_not_fit_its_version_is_refused() {
        let form = StoredForm {
            json: "{}".into(),
            registered_at: 1,
            registered_by: Principal::anonymous(),
        };
        let mut bytes = Versioned::encode(&form);
        bytes.push(0);
        let e = StoredForm::decode(&bytes).unwrap_err();
        assert!(e.reason.contains("leaves 1 byte(s) unread"), "{e}");
        let e = StoredForm::decode(&bytes[..3]).unwrap_err();
        assert!(e.reason.contains("does not decode"), "{e}");
    }

    #[test]
    #[should_panic(expected = "stored config: version 9 is not one this code reads")]
    fn a_stable_structure_read_of_an_unknown_version_traps_naming_it() {
        let _ = Config::from_bytes(Cow::Owned(vec![9, 0]));
    }
}
