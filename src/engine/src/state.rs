//! The tool host's state: stable structures (all data) and heap caches (rebuilt on demand).

use crate::catalog::Catalog;
use crate::memory;
use crate::model::*;
use crate::owner_counts::OwnerCounts;
use crate::types::Limits;
use candid::Principal;
use ic_stable_structures::memory_manager::{MemoryManager, VirtualMemory};
use ic_stable_structures::{Memory, StableBTreeMap, StableCell};

pub type VM<M> = VirtualMemory<M>;

fn intents_open_uses<M: Memory>(s: &State<M>) -> std::collections::BTreeSet<(String, u64)> {
    s.intents
        .iter()
        .map(|(_, i)| i)
        .filter(|i| !i.status.is_final())
        .map(|i| (use_key(&i.form_id, &i.canister, &i.tool), i.id))
        .collect()
}

/// An entry of the uses index: the use key's bytes, `0xff` (never in UTF-8), the intent id
/// big-endian; so entries sort by use, then id, and a use's entries are one range.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UseEntry(Vec<u8>);

impl UseEntry {
    pub fn new(key: &str, id: u64) -> UseEntry {
        let mut b = Vec::with_capacity(key.len() + 9);
        b.extend_from_slice(key.as_bytes());
        b.push(0xff);
        b.extend_from_slice(&id.to_be_bytes());
        UseEntry(b)
    }
    /// The first entry of any use starting with `prefix`.
    fn start(prefix: &str) -> UseEntry {
        UseEntry(prefix.as_bytes().to_vec())
    }
    /// An entry past every entry of use `key`.
    fn after(key: &str) -> UseEntry {
        let mut b = key.as_bytes().to_vec();
        b.extend_from_slice(&[0xff; 10]);
        UseEntry(b)
    }
    pub fn key(&self) -> &str {
        std::str::from_utf8(&self.0[..self.0.len().saturating_sub(9)]).unwrap_or("")
    }
    pub fn id(&self) -> u64 {
        let n = self.0.len();
        u64::from_be_bytes(self.0[n.saturating_sub(8)..].try_into().unwrap_or([0; 8]))
    }
}

impl ic_stable_structures::Storable for UseEntry {
    fn to_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(&self.0)
    }
    fn into_bytes(self) -> Vec<u8> {
        self.0
    }
    fn from_bytes(bytes: std::borrow::Cow<[u8]>) -> Self {
        UseEntry(bytes.into_owned())
    }
    const BOUND: ic_stable_structures::storable::Bound =
        ic_stable_structures::storable::Bound::Unbounded;
}

/// Decodes every record of a raw map; the first that fails is returned with its key.
fn each_record<K, T, M>(map: StableBTreeMap<K, RawRecord, VM<M>>) -> Result<usize, DecodeError>
where
    K: ic_stable_structures::Storable + Ord + Clone + std::fmt::Debug,
    T: Versioned,
    M: Memory,
{
    let mut read = 0;
    for e in map.iter() {
        T::decode(&e.value().0).map_err(|err| with_key(err, e.key()))?;
        read += 1;
    }
    Ok(read)
}

fn with_key(e: DecodeError, key: &impl std::fmt::Debug) -> DecodeError {
    DecodeError {
        reason: format!("key {key:?}: {}", e.reason),
        ..e
    }
}

/// What an intent not settled uses: its form, its canister and its tool, in one key whose
/// prefixes (`form\0`, `form\0canister\0`) select the intents using a form, or a form on a
/// canister (form ids, principals and tool names never contain `\0`).
pub fn use_key(form: &str, canister: &Principal, tool: &str) -> String {
    format!("{form}\0{canister}\0{tool}")
}

pub struct State<M: Memory> {
    pub config: StableCell<Config, VM<M>>,
    pub forms: StableBTreeMap<String, StoredForm, VM<M>>,
    pub targets: StableBTreeMap<Principal, Target, VM<M>>,
    pub admins: StableBTreeMap<Principal, u64, VM<M>>,
    /// (owner, agent) → when it was authorized.
    pub agents: StableBTreeMap<(Principal, Principal), u64, VM<M>>,
    /// Intents: heads in a B-tree, bodies in a slab (`crate::intent_store`).
    pub intents: crate::intent_store::IntentStore<VM<M>>,
    pub intent_keys: StableBTreeMap<(Principal, [u8; 32]), u64, VM<M>>,
    pub owner_intents: StableBTreeMap<(Principal, u64), (), VM<M>>,
    pub open_counts: OwnerCounts<VM<M>>,
    pub due: StableBTreeMap<(u64, u8, u64), (), VM<M>>,
    /// Intents in flight → the attempt, its journal and its watchdog.
    pub in_flight: StableBTreeMap<u64, InFlight, VM<M>>,
    /// Version 1's in-flight journal, opened only when it holds data (see `lifecycle`).
    pub in_flight_v1: Option<StableBTreeMap<u64, u64, VM<M>>>,
    /// (owner, identity) → the highest stamp handed out for those arguments.
    pub stamp_floors: crate::stamp_floors::StampFloors<VM<M>>,
    /// (use key, intent id) of intents not settled: see [`use_key`].
    pub open_uses: StableBTreeMap<UseEntry, (), VM<M>>,
    /// owner → intents kept.
    pub owner_totals: OwnerCounts<VM<M>>,
    /// (watchdog time, intent id) of sends in flight.
    pub watchdogs: StableBTreeMap<(u64, u64), (), VM<M>>,
    /// (expiry time, intent id) of previews (`memory::EXPIRIES`); `None` until the first one
    /// is scheduled (the memory is not opened before: no bucket on a fresh install).
    expiries: Option<StableBTreeMap<(u64, u64), (), VM<M>>>,
    /// The bus's turns, owners' turn index, usage counts, inboxes and escalation handlers.
    pub turns: StableBTreeMap<u64, crate::bus::records::Turn, VM<M>>,
    pub owner_turns: StableBTreeMap<(Principal, u64), bool, VM<M>>,
    pub usage: crate::bus::usage_counts::UsageCounts<VM<M>>,
    pub inbox: StableBTreeMap<(Principal, u64), crate::bus::records::InboxEntry, VM<M>>,
    pub handlers: StableBTreeMap<Principal, Principal, VM<M>>,
    /// Inbox entry id → (owner, prune task's time), for the inbox's prune tasks.
    pub inbox_ids: StableBTreeMap<u64, (Principal, u64), VM<M>>,
    /// Agent tokens by id, and (owner, id) of each (`crate::tokens`).
    pub agent_tokens: StableBTreeMap<u64, crate::tokens::AgentToken, VM<M>>,
    pub owner_tokens: StableBTreeMap<(Principal, u64), (), VM<M>>,
    /// Tool plans and definitions, rebuilt when the catalog revision moves (never stored).
    pub catalog: Option<Catalog>,
    /// The wake-up the runtime was last asked for.
    pub armed_at: Option<u64>,
    /// The earliest task scheduled since the timer was last armed (see `schedule::arm_new`).
    pub scheduled_since: Option<u64>,
    /// Read tool calls per owner in the current minute: (minute, count). Heap only: a limit on
    /// a rate, kept small (see `tools::count_read`).
    pub reads: std::collections::BTreeMap<Principal, (u64, u32)>,
    /// The manager the structures were opened from: the fallible checks open raw views of them.
    mm: MemoryManager<M>,
}

/// The memory manager's bucket size for a fresh install, in 64 KiB pages: 8 pages = 512 KiB.
///
/// Every structure takes at least one bucket as soon as it is opened, so a fresh install takes
/// one header page plus a bucket per structure: 23 structures (the retired `IN_FLIGHT_V1` is
/// never opened on a fresh memory, the intent body slab takes its first with the first intent,
/// and the expiry index with the first preview) × 512 KiB + 64 KiB = 11.56 MiB, where the
/// crate's default 128-page (8 MiB) buckets took 160 MiB. The manager has at most 32 768
/// buckets in all, so the bucket size caps the stable memory the state can ever use:
/// 32 768 × 512 KiB = 16 GiB. A settled transfer with its index entries takes about 1 830
/// bytes (docs/perf.md), so 1 000 000 intents take about 1.8 GB, and with every form at its
/// bound (32 × 256 KiB) and the indexes' last partly filled bucket each (16 × 512 KiB) still
/// under 2 GB: the cap is eight times that. Smaller buckets would save little more (a 4-page bucket: 3.8 MiB fresh, a cap
/// of 8 GiB) and halve the headroom; larger ones fail the 12 MiB budget of a fresh install.
///
/// The size is written in the manager's header at the first install and read from it on every
/// later open (`MemoryManager::init_with_bucket_size` loads an existing header as it is): a
/// canister created with the old default keeps its 8 MiB buckets, and nothing here can change
/// them.
pub const BUCKET_SIZE_IN_PAGES: u16 = 8;

impl<M: Memory + Clone> State<M> {
    /// Opens the state over a memory: empty structures on a fresh memory, the kept data after an upgrade.
    pub fn init(memory: M) -> Self {
        let mm = MemoryManager::init_with_bucket_size(memory, BUCKET_SIZE_IN_PAGES);
        let v1 = mm.get(memory::IN_FLIGHT_V1);
        // A retired structure is opened only to read what an older version left in it.
        let in_flight_v1 = (v1.size() > 0).then(|| StableBTreeMap::load(v1));
        let e = mm.get(memory::EXPIRIES);
        let expiries = (e.size() > 0).then(|| StableBTreeMap::load(e));
        State {
            config: StableCell::init(mm.get(memory::CONFIG), Config::default()),
            forms: StableBTreeMap::init(mm.get(memory::FORMS)),
            targets: StableBTreeMap::init(mm.get(memory::TARGETS)),
            admins: StableBTreeMap::init(mm.get(memory::ADMINS)),
            agents: StableBTreeMap::init(mm.get(memory::AGENTS)),
            intents: crate::intent_store::IntentStore::init(
                mm.get(memory::INTENTS),
                mm.get(memory::INTENT_BODIES),
                mm.get(memory::HEAD_DIRECTORY),
                mm.get(memory::HEAD_PAGES),
            ),
            intent_keys: StableBTreeMap::init(mm.get(memory::INTENT_KEYS)),
            owner_intents: StableBTreeMap::init(mm.get(memory::OWNER_INTENTS)),
            open_counts: OwnerCounts::init(
                mm.get(memory::OPEN_COUNTS_TABLE),
                mm.get(memory::OPEN_COUNTS),
                mm.get(memory::WRITE_BACK),
                memory::WRITE_BACK_OPEN,
            ),
            due: StableBTreeMap::init(mm.get(memory::DUE)),
            in_flight: StableBTreeMap::init(mm.get(memory::IN_FLIGHT)),
            in_flight_v1,
            expiries,
            stamp_floors: crate::stamp_floors::StampFloors::init(
                mm.get(memory::STAMP_FLOOR_TABLE),
                mm.get(memory::STAMP_FLOORS),
            ),
            open_uses: StableBTreeMap::init(mm.get(memory::OPEN_USES)),
            owner_totals: OwnerCounts::init(
                mm.get(memory::OWNER_TOTALS_TABLE),
                mm.get(memory::OWNER_TOTALS),
                mm.get(memory::WRITE_BACK),
                memory::WRITE_BACK_KEPT,
            ),
            watchdogs: StableBTreeMap::init(mm.get(memory::WATCHDOGS)),
            turns: StableBTreeMap::init(mm.get(memory::TURNS)),
            owner_turns: StableBTreeMap::init(mm.get(memory::OWNER_TURNS)),
            usage: crate::bus::usage_counts::UsageCounts::init(
                mm.get(memory::USAGE_TABLE),
                mm.get(memory::TOOL_NAMES),
                mm.get(memory::TOOL_USAGE),
                mm.get(memory::WRITE_BACK),
                memory::WRITE_BACK_USAGE,
            ),
            inbox: StableBTreeMap::init(mm.get(memory::INBOX)),
            handlers: StableBTreeMap::init(mm.get(memory::ESCALATION_HANDLERS)),
            inbox_ids: StableBTreeMap::init(mm.get(memory::INBOX_IDS)),
            agent_tokens: StableBTreeMap::init(mm.get(memory::AGENT_TOKENS)),
            owner_tokens: StableBTreeMap::init(mm.get(memory::OWNER_TOKENS)),
            catalog: None,
            armed_at: None,
            scheduled_since: None,
            reads: Default::default(),
            mm,
        }
    }
}

impl<M: Memory> State<M> {
    pub fn limits(&self) -> Limits {
        (&self.config.get().limits).into()
    }

    pub fn set_limits(&mut self, limits: &Limits) {
        self.update_config(|c| c.limits = limits.into());
    }

    /// Reads, without trapping, what an upgrade must be able to read before it goes ahead: the
    /// config, whose layout number says which record versions the memory holds (a downgrade
    /// below the layout that wrote them is refused here), every send in flight, and the newest
    /// intent and turn. Forms and targets are read whole only when the number is not known
    /// (a memory last run by code older than the config's version 4), once: a record whose
    /// body does not fit its version cannot come from code that stored its layout number, as
    /// every version's layout is pinned by a fixture (`stored_layout`). So the upgrade reads a
    /// bounded set whatever forms, canisters and intents are held.
    pub fn check_layout(&self) -> Result<(), DecodeError> {
        let config = Config::decode(&self.raw_cell(memory::CONFIG))?;
        if config.layout > LAYOUT {
            return Err(DecodeError {
                what: Config::WHAT,
                reason: format!(
                    "the memory was written by stored layout {}, and this release reads layouts up to {LAYOUT}",
                    config.layout
                ),
            });
        }
        if config.layout == 0 {
            self.check_catalog_records()?;
        }
        each_record::<u64, InFlight, M>(self.raw_map(memory::IN_FLIGHT))?;
        self.intents.check_newest()?;
        // The newest turn likewise (turns are many; inbox entries are read when asked for).
        let turns: StableBTreeMap<u64, RawRecord, VM<M>> = self.raw_map(memory::TURNS);
        if let Some(e) = turns.last_key_value() {
            crate::bus::records::Turn::decode(&e.1 .0).map_err(|err| with_key(err, &e.0))?;
        }
        Ok(())
    }

    /// Every form and target read whole.
    fn check_catalog_records(&self) -> Result<(), DecodeError> {
        each_record::<String, StoredForm, M>(self.raw_map(memory::FORMS))?;
        each_record::<Principal, Target, M>(self.raw_map(memory::TARGETS))?;
        Ok(())
    }

    /// After an upgrade's checks passed: the memory is now run by this code, of [`LAYOUT`].
    pub fn record_layout(&mut self) {
        if self.config.get().layout != LAYOUT {
            self.update_config(|c| c.layout = LAYOUT);
        }
    }

    /// Reads every stored record through [`Versioned::decode`]: an unknown version or a body
    /// that does not fit its version is reported, with its key, instead of trapping.
    pub fn check_records(&self) -> Result<(), DecodeError> {
        self.check_layout()?;
        // (A memory of layout 0 had them read by `check_layout` already.)
        if self.config.get().layout != 0 {
            self.check_catalog_records()?;
        }
        each_record::<u64, StoredIntent, M>(self.raw_map(memory::INTENTS))?;
        self.intents.check_records()?;
        each_record::<u64, crate::bus::records::Turn, M>(self.raw_map(memory::TURNS))?;
        each_record::<(Principal, u64), crate::bus::records::InboxEntry, M>(
            self.raw_map(memory::INBOX),
        )?;
        each_record::<u64, crate::tokens::AgentToken, M>(self.raw_map(memory::AGENT_TOKENS))?;
        Ok(())
    }

    /// The config cell's record as stored.
    fn raw_cell(&self, id: ic_stable_structures::memory_manager::MemoryId) -> Vec<u8> {
        StableCell::init(self.mm.get(id), RawRecord(vec![]))
            .get()
            .0
            .clone()
    }

    /// A map's entries with their records as stored (the map exists: `init` opened it).
    fn raw_map<K: ic_stable_structures::Storable + Ord + Clone>(
        &self,
        id: ic_stable_structures::memory_manager::MemoryId,
    ) -> StableBTreeMap<K, RawRecord, VM<M>> {
        StableBTreeMap::load(self.mm.get(id))
    }

    pub fn update_config(&mut self, f: impl FnOnce(&mut Config)) {
        let mut c = self.config.get().clone();
        f(&mut c);
        self.config.set(c);
    }

    /// Anything the catalog reads may have changed (stored records written directly): the
    /// catalog is built again whole. The registry names what changed instead
    /// ([`State::form_changed`], [`State::targets_changed`]).
    pub fn bump_catalog(&mut self) {
        self.update_config(|c| c.catalog_revision += 1);
        self.catalog = None;
    }

    /// Form `id` was stored, replaced or removed (`parsed`: the form just stored, parsed): the
    /// catalog revision moves, and the next build reads that form alone again.
    pub fn form_changed(&mut self, id: &str, parsed: Option<crate::catalog::FormEntry>) {
        self.update_config(|c| c.catalog_revision += 1);
        if let Some(c) = self.catalog.as_mut() {
            crate::catalog::form_changed(c, id, parsed);
        }
    }

    /// A target was registered or removed, or its refs or ICRC-3 flag changed: the catalog
    /// revision moves (a prepare that read the canisters before an await answers RETRY), and
    /// the next build makes the canisters again, not the forms' plans.
    pub fn targets_changed(&mut self) {
        self.update_config(|c| c.catalog_revision += 1);
        if let Some(c) = self.catalog.as_mut() {
            crate::catalog::targets_changed(c);
        }
    }

    /// Target `id` was registered, replaced or removed, or its refs or ICRC-3 flag changed:
    /// as [`State::targets_changed`], the next build making that canister alone again.
    pub fn target_changed(&mut self, id: candid::Principal) {
        self.update_config(|c| c.catalog_revision += 1);
        if let Some(c) = self.catalog.as_mut() {
            crate::catalog::target_changed(c, id);
        }
    }

    /// A new intent's id, and its input's bytes counted as stored (one write of the config:
    /// it is on every prepare).
    pub fn next_intent_id(&mut self, input_bytes: u64) -> u64 {
        let mut id = 0;
        self.update_config(|c| {
            c.next_intent_id += 1;
            c.stored_input_bytes = c.stored_input_bytes.saturating_add(input_bytes);
            id = c.next_intent_id;
        });
        id
    }

    pub fn schedule(&mut self, at: u64, kind: TaskKind, id: u64) {
        self.due.insert(kind.key(at, id), ());
        self.scheduled_at(at);
    }

    /// Something was scheduled at `at`: the timer is armed for it (`schedule::arm_new`).
    fn scheduled_at(&mut self, at: u64) {
        self.scheduled_since = Some(self.scheduled_since.map_or(at, |t| t.min(at)));
    }

    /// The earliest task, watchdog or expiry.
    pub fn next_due(&self) -> Option<u64> {
        let task = self.due.first_key_value().map(|((at, _, _), _)| at);
        let watchdog = self.watchdogs.first_key_value().map(|((at, _), _)| at);
        let expiry = self.first_expiry();
        [task, watchdog, expiry].into_iter().flatten().min()
    }

    fn first_expiry(&self) -> Option<u64> {
        self.expiries
            .as_ref()?
            .first_key_value()
            .map(|((at, _), _)| at)
    }

    /// A preview's expiry (see `schedule::tick`); `wake`: the timer is to be armed for it.
    pub fn schedule_expiry(&mut self, at: u64, id: u64, wake: bool) {
        let mm = &self.mm;
        self.expiries
            .get_or_insert_with(|| StableBTreeMap::init(mm.get(memory::EXPIRIES)))
            .insert((at, id), ());
        if wake {
            self.scheduled_at(at);
        }
    }

    /// Removes a preview's expiry, wherever it was scheduled (here, or in the task index by
    /// earlier code).
    pub fn remove_expiry(&mut self, at: u64, id: u64) {
        if let Some(e) = self.expiries.as_mut() {
            e.remove(&(at, id));
        }
        self.due.remove(&TaskKind::Expire.key(at, id));
    }

    /// Whether intent `id` has its expiry at `at`, in either index.
    pub fn has_expiry(&self, at: u64, id: u64) -> bool {
        self.expiries
            .as_ref()
            .is_some_and(|e| e.contains_key(&(at, id)))
            || self.due.contains_key(&TaskKind::Expire.key(at, id))
    }

    /// Up to `n` expiries due at `now`, earliest first.
    pub fn due_expiries(&self, now: u64, n: usize) -> Vec<(u64, u64)> {
        self.expiries.as_ref().map_or(vec![], |e| {
            e.keys().take_while(|(at, _)| *at <= now).take(n).collect()
        })
    }

    /// Takes an expiry out of its index: whether it was there.
    pub fn take_expiry(&mut self, at: u64, id: u64) -> bool {
        self.expiries
            .as_mut()
            .is_some_and(|e| e.remove(&(at, id)).is_some())
    }

    /// Previews waiting for their expiry in this index.
    pub fn expiries_len(&self) -> u64 {
        self.expiries.as_ref().map_or(0, |e| e.len())
    }

    /// A send's watchdog (see `schedule::tick`).
    pub fn schedule_watchdog(&mut self, at: u64, id: u64) {
        self.watchdogs.insert((at, id), ());
        self.scheduled_at(at);
    }

    /// Stores a new, open intent when its owner's kept and open counts were read in the same
    /// execution (a prepare checks them against the limits): the counts are written without
    /// being read again, two B-tree operations fewer than [`State::put_intent`].
    pub fn put_new_intent(&mut self, intent: Intent, kept: u32, open: u32) {
        let (owner, id, identity) = (intent.owner, intent.id, intent.identity);
        debug_assert!(!intent.status.is_final(), "a new intent is open");
        debug_assert_eq!(kept, self.kept_count(&owner), "a stale kept count");
        debug_assert_eq!(open, self.open_count(&owner), "a stale open count");
        let uses = use_key(&intent.form_id, &intent.canister, &intent.tool);
        let before = self.intents.insert(intent);
        debug_assert!(before.is_none(), "intent ids are never reused");
        self.owner_intents.insert((owner, id), ());
        self.owner_totals.set(owner, kept + 1);
        self.intent_keys.insert((owner, identity), id);
        self.open_uses.insert(UseEntry::new(&uses, id), ());
        self.open_counts.set(owner, open + 1);
    }

    /// Writes an intent, keeping the indexes and counts in step with its status. What it was
    /// before comes from the store's insert (the replaced record, decoded unless it is byte for
    /// byte the one the store remembers); so an update costs the writes it needs and no lookups.
    pub fn put_intent(&mut self, intent: Intent) {
        let (owner, id, identity, status) =
            (intent.owner, intent.id, intent.identity, intent.status);
        let uses = use_key(&intent.form_id, &intent.canister, &intent.tool);
        let before = self
            .intents
            .insert(intent)
            .map(|old| (old.status, old.identity));
        let now_open = !status.is_final();
        match before {
            None => {
                self.owner_intents.insert((owner, id), ());
                self.owner_totals.add(owner, 1);
                if now_open {
                    self.intent_keys.insert((owner, identity), id);
                    self.open_uses.insert(UseEntry::new(&uses, id), ());
                    self.open_counts.add(owner, 1);
                }
            }
            Some((was, old_identity)) => {
                let was_open = !was.is_final();
                if was_open && (!now_open || old_identity != identity) {
                    self.release_key(owner, old_identity, id);
                }
                if now_open && (!was_open || old_identity != identity) {
                    self.intent_keys.insert((owner, identity), id);
                }
                match (was_open, now_open) {
                    (true, false) => {
                        self.open_counts.add(owner, -1);
                        self.open_uses.remove(&UseEntry::new(&uses, id));
                    }
                    (false, true) => {
                        self.open_counts.add(owner, 1);
                        self.open_uses.insert(UseEntry::new(&uses, id), ());
                    }
                    _ => {}
                }
            }
        }
        // The in-flight entry is written by the send that marks the intent (`send`), and
        // goes with the status.
        if status != Status::InFlight && matches!(before, Some((Status::InFlight, _))) {
            if let Some(e) = self.in_flight.remove(&id) {
                self.watchdogs.remove(&(e.watchdog_at, id));
            }
        }
    }

    /// Recounts every index from the intents and says where they disagree, and checks that
    /// every intent has the task that moves it on: an open preview its expiry, a send in flight
    /// its watchdog, an unknown or held intent with a stamp its reconciliation, a settled one
    /// its prune (or the expiry that schedules it), and that every stamp is at or below its
    /// arguments' floor; and the other way, that every expiry, reconciliation and prune names
    /// an intent that waits for it. Tests call it after every step; it reads everything, so
    /// never on a hot path.
    pub fn check_indexes(&self) -> Result<(), String> {
        use std::collections::{BTreeMap, BTreeSet};
        self.check_records().map_err(|e| e.to_string())?;
        self.intents.check()?;
        self.usage.check()?;
        // The floors' table read whole (its records checked), none in both places.
        self.stamp_floors.stored()?;
        let mut owners = BTreeSet::new();
        let mut open: BTreeMap<Principal, u32> = Default::default();
        let tasks: BTreeSet<(u64, u8, u64)> = self.due.keys().collect();
        let kinds: BTreeSet<(u64, u8)> = tasks.iter().map(|(_, k, id)| (*id, *k)).collect();
        let expiries: BTreeSet<(u64, u64)> = self
            .expiries
            .as_ref()
            .map_or(Default::default(), |e| e.keys().collect());
        for (id, i) in self.intents.iter() {
            owners.insert((i.owner, id));
            let key = self.intent_keys.get(&(i.owner, i.identity));
            if !i.status.is_final() {
                *open.entry(i.owner).or_default() += 1;
                if key != Some(id) {
                    return Err(format!("open intent {id}: its identity key names {key:?}"));
                }
            }
            let journal = self.in_flight.get(&id);
            if (i.status == Status::InFlight) != journal.is_some() {
                return Err(format!(
                    "intent {id} ({:?}): the in-flight journal disagrees",
                    i.status
                ));
            }
            if let Some(j) = journal {
                if j.attempt as usize != i.attempts.len()
                    || i.attempts.last().map(|a| &a.result) != Some(&AttemptResult::Pending)
                {
                    return Err(format!(
                        "intent {id}: in flight as attempt {}, but it has {} attempts",
                        j.attempt,
                        i.attempts.len()
                    ));
                }
                if !self.watchdogs.contains_key(&(j.watchdog_at, id)) {
                    return Err(format!("intent {id} is in flight without its watchdog"));
                }
            }
            let expiry = tasks.contains(&TaskKind::Expire.key(i.expires_at, id))
                || expiries.contains(&(i.expires_at, id));
            if i.status == Status::Open && !expiry {
                return Err(format!(
                    "open intent {id} has no expiry task at {}",
                    i.expires_at
                ));
            }
            if i.needs_reconcile() && !kinds.contains(&(id, TaskKind::Reconcile.byte())) {
                return Err(format!(
                    "intent {id} ({:?}, {:?}) waits for reconciliation without a task",
                    i.status, i.finding
                ));
            }
            // A settled intent has its prune task; one settled before its expiry may wait for
            // the expiry task to schedule it (`schedule::expire`), one settled at or after it
            // had it scheduled as it settled (`send::settle`).
            let before_expiry = i.settled_at.is_none_or(|t| t < i.expires_at);
            if i.status.is_final()
                && !kinds.contains(&(id, TaskKind::Prune.byte()))
                && !(expiry && before_expiry)
            {
                return Err(format!("settled intent {id} has no prune task"));
            }
            // A floor is kept while any intent of its arguments may still be sent, and at least
            // until its stamp is past every ledger's window; a settled intent may outlive it
            // (released a day after its stamp, by it or by a later one of the same arguments),
            // but never below it.
            if let Some(stamp) = i.stamp_ns {
                let floor = self.stamp_floor(i.owner, i.identity);
                let missing_ok = i.status.is_final() && floor.is_none();
                if !missing_ok && floor.is_none_or(|f| f < stamp) {
                    return Err(format!(
                        "intent {id}: its stamp {stamp} is above its arguments' floor {floor:?}"
                    ));
                }
            }
        }
        // And the other way: every expiry names an intent whose preview expires then (one a
        // re-stamp or a prune left behind wakes the timer for nothing).
        for (at, id) in &expiries {
            match self.intents.get_head(id) {
                Some(h) if h.expires_at() == *at => {}
                Some(h) => {
                    return Err(format!(
                        "an expiry at {at} names intent {id}, whose preview expires at {}",
                        h.expires_at()
                    ))
                }
                None => return Err(format!("an expiry at {at} names a missing intent {id}")),
            }
        }
        // Every reconciliation names an intent that waits for it then; every prune a settled
        // intent.
        for (at, kind, id) in &tasks {
            let intent = || self.intents.get(id);
            // (A version-1 intent has no `reconcile_at`: its task is in this index, and the
            // first run leases it under a reference.)
            let waits = |i: Intent| match i.reconcile_at {
                Some(t) => t == *at,
                None => i.needs_reconcile(),
            };
            if *kind == TaskKind::Reconcile.byte() && !intent().is_some_and(waits) {
                return Err(format!(
                    "a reconciliation at {at} names intent {id}, which does not wait for it"
                ));
            }
            if *kind == TaskKind::Prune.byte() {
                match intent() {
                    Some(i) if i.status.is_final() => {}
                    Some(i) => {
                        return Err(format!(
                            "a prune at {at} names intent {id}, which is {:?}",
                            i.status
                        ))
                    }
                    None => return Err(format!("a prune at {at} names a missing intent {id}")),
                }
            }
        }
        let uses: BTreeSet<(String, u64)> = intents_open_uses(self);
        let stored: BTreeSet<(String, u64)> = self
            .open_uses
            .keys()
            .map(|e| (e.key().to_string(), e.id()))
            .collect();
        if uses != stored {
            return Err(format!(
                "the uses index {stored:?} disagrees with the intents {uses:?}"
            ));
        }
        let mut kept: BTreeMap<Principal, u32> = Default::default();
        for (o, _) in &owners {
            *kept.entry(*o).or_default() += 1;
        }
        let totals = self.owner_totals.stored()?;
        if totals != kept {
            return Err(format!("owner totals {totals:?}, recounted {kept:?}"));
        }
        let indexed: BTreeSet<_> = self.owner_intents.iter().map(|e| *e.key()).collect();
        if indexed != owners {
            return Err("the owner index does not list exactly the intents".into());
        }
        let counts = self.open_counts.stored()?;
        if counts != open {
            return Err(format!("open counts {counts:?}, recounted {open:?}"));
        }
        self.owner_totals.check_remembered()?;
        self.open_counts.check_remembered()?;
        for e in self.intent_keys.iter() {
            let ((owner, _), id) = e.into_pair();
            match self.intents.get(&id) {
                Some(i) if i.owner == owner && !i.status.is_final() => {}
                _ => {
                    return Err(format!(
                        "an identity key names intent {id}, which is not open"
                    ))
                }
            }
        }
        for e in self.watchdogs.iter() {
            let (at, id) = *e.key();
            if self.in_flight.get(&id).is_none_or(|j| j.watchdog_at != at) {
                return Err(format!(
                    "a watchdog at {at} names intent {id}, which is not in flight"
                ));
            }
        }
        for e in self.in_flight.iter() {
            if !self.intents.contains_key(e.key()) {
                return Err(format!(
                    "the in-flight journal names a missing intent {}",
                    e.key()
                ));
            }
        }
        crate::bus::check_indexes(self)
    }

    /// Removes an identity's key if it still names intent `id`.
    fn release_key(&mut self, owner: Principal, identity: [u8; 32], id: u64) {
        if let Some(other) = self.intent_keys.remove(&(owner, identity)) {
            if other != id {
                self.intent_keys.insert((owner, identity), other);
            }
        }
    }

    /// Journals the target's log length of a send in flight, if that send (attempt) is still
    /// the one in flight (kept beside the intent, so the intent is not rewritten before the send).
    pub fn journal_log_length(&mut self, id: u64, attempt: u32, log_length: u64) -> bool {
        match self.in_flight.get(&id) {
            Some(mut e) if e.attempt == attempt => {
                e.log_length = Some(log_length);
                self.in_flight.insert(id, e);
                true
            }
            _ => false,
        }
    }

    /// The log length journaled for a send in flight.
    pub fn journaled_log_length(&self, id: u64) -> Option<u64> {
        self.in_flight.get(&id).and_then(|e| e.log_length)
    }

    /// The highest stamp handed out for these arguments.
    pub fn stamp_floor(&self, owner: Principal, identity: [u8; 32]) -> Option<u64> {
        self.stamp_floors.get(owner, identity)
    }

    /// Records a stamp handed out: every later stamp for these arguments is above it. Returns
    /// the floor before (read and written in one lookup).
    pub fn raise_stamp_floor(
        &mut self,
        owner: Principal,
        identity: [u8; 32],
        stamp: u64,
    ) -> Option<u64> {
        self.stamp_floors.raise(owner, identity, stamp)
    }

    /// [`State::raise_stamp_floor`] when the floor was read in the same execution (a prepare
    /// that had to stamp above it): no write when the stamp is not above it.
    pub fn raise_stamp_floor_from(
        &mut self,
        owner: Principal,
        identity: [u8; 32],
        stamp: u64,
        floor: Option<u64>,
    ) {
        debug_assert_eq!(floor, self.stamp_floor(owner, identity), "a stale floor");
        if floor.is_none_or(|f| f < stamp) {
            self.stamp_floors.raise(owner, identity, stamp);
        }
    }

    /// Removes the arguments' floor if `stamp` (an intent's highest) set it: called once that
    /// stamp is past every ledger's window (`send::FLOOR_KEEP_NS`), when every stamp handed out
    /// later is above it by the clock alone. A floor a later stamp raised stays for that one.
    pub fn release_floor(&mut self, owner: Principal, identity: [u8; 32], stamp: Option<u64>) {
        if let Some(stamp) = stamp {
            self.stamp_floors.release(owner, identity, stamp);
        }
    }

    /// Removes a settled intent and its index entries (retention has passed).
    pub fn remove_intent(&mut self, id: u64) {
        if let Some(i) = self.intents.remove(&id) {
            self.owner_intents.remove(&(i.owner, id));
            self.in_flight.remove(&id);
            // An expiry the timer has not taken yet (a preview settled after its expiry, and a
            // tick that reached the prune first): it would name a missing intent.
            self.remove_expiry(i.expires_at, id);
            // Its stamp no longer needs a floor once it is past any ledger's window (the prune
            // waits for that: send::prune_due).
            self.release_floor(i.owner, i.identity, i.highest_stamp());
            let len = i.input_json.len() as u64;
            self.update_config(|c| c.stored_input_bytes = c.stored_input_bytes.saturating_sub(len));
            self.owner_totals.add(i.owner, -1);
            if !i.status.is_final() {
                if self.intent_keys.get(&(i.owner, i.identity)) == Some(id) {
                    self.intent_keys.remove(&(i.owner, i.identity));
                }
                self.open_uses.remove(&UseEntry::new(
                    &use_key(&i.form_id, &i.canister, &i.tool),
                    id,
                ));
                self.open_counts.add(i.owner, -1);
            }
        }
    }

    /// Intents an owner has kept (open and settled).
    pub fn kept_count(&self, owner: &Principal) -> u32 {
        self.owner_totals.get(owner)
    }

    /// Up to `n` intents not settled whose use key starts with `prefix`.
    pub fn open_uses_with(&self, prefix: &str, n: usize) -> Vec<u64> {
        self.open_uses
            .keys_range(UseEntry::start(prefix)..)
            .take_while(|e| e.key().starts_with(prefix))
            .take(n)
            .map(|e| e.id())
            .collect()
    }

    /// Every distinct (form, canister, tool) that intents not settled use: one range read per
    /// distinct use.
    pub fn uses_in_use(&self) -> Vec<String> {
        let mut out = vec![];
        let mut from = UseEntry::start("");
        while let Some(e) = self.open_uses.keys_range(from..).next() {
            let k = e.key().to_string();
            from = UseEntry::after(&k);
            out.push(k);
        }
        out
    }

    pub fn open_count(&self, owner: &Principal) -> u32 {
        self.open_counts.get(owner)
    }

    /// Whether `agent` acts for `owner`: an agent the owner authorized, or the principal of one
    /// of the owner's agent tokens that is not revoked (`crate::tokens::token_principal`; a
    /// token's principal is never in the authorizations, and acts for its owner alone).
    pub fn is_agent_of(&self, owner: &Principal, agent: &Principal) -> bool {
        if let Some(id) = crate::tokens::token_id_of(agent) {
            return crate::tokens::acts_for(self, owner, agent, id);
        }
        self.agents.contains_key(&(*owner, *agent))
    }
}
