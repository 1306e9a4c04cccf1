//! The one registry of stable-memory ids. An id is never reused: a retired structure keeps its
//! id reserved here, so that old data is never read as new.

use ic_stable_structures::memory_manager::MemoryId;
use ic_stable_structures::Memory;

/// Bytes of a page of stable memory, the unit a memory's size and growth are counted in.
pub const WASM_PAGE: u64 = 65_536;

/// Grows `memory` (the structure `what`) to hold `end` bytes, for the structures that address
/// their memory themselves (the intent body slab, the head table). Stable memory exhausted is a
/// trap, as a B-tree's insert traps then: the message is rolled back and nothing is half
/// written.
pub fn grow_to<M: Memory>(memory: &M, end: u64, what: &str) {
    let pages = end.div_ceil(WASM_PAGE);
    let size = memory.size();
    if pages > size && memory.grow(pages - size) < 0 {
        panic!("stable memory is full: the {what} cannot grow to {end} bytes");
    }
}

pub const CONFIG: MemoryId = MemoryId::new(0);
pub const FORMS: MemoryId = MemoryId::new(1);
pub const TARGETS: MemoryId = MemoryId::new(2);
pub const ADMINS: MemoryId = MemoryId::new(3);
pub const AGENTS: MemoryId = MemoryId::new(4);
pub const INTENTS: MemoryId = MemoryId::new(5);
/// (owner, identity digest) → intent id, for intents that are not settled.
pub const INTENT_KEYS: MemoryId = MemoryId::new(6);
/// (owner, intent id), to list an owner's intents in pages.
pub const OWNER_INTENTS: MemoryId = MemoryId::new(7);
/// owner → intents not settled, for the per-owner cap.
pub const OPEN_COUNTS: MemoryId = MemoryId::new(8);
/// (due time, task kind, id): what the timer does next.
pub const DUE: MemoryId = MemoryId::new(9);
/// Retired: intents in flight → the log length journaled (version 1's journal, a bare u64).
/// Read once by `post_upgrade` to carry its entries over, then left empty; never reused.
pub const IN_FLIGHT_V1: MemoryId = MemoryId::new(10);
/// Intents with a send in flight → which attempt, its journal and its watchdog, found again
/// after an upgrade without scanning all intents.
pub const IN_FLIGHT: MemoryId = MemoryId::new(11);
/// (owner, identity digest) → the highest stamp ever handed out for those arguments: a stamp
/// once handed out (sent, declined or expired) is never handed out again.
pub const STAMP_FLOORS: MemoryId = MemoryId::new(12);

/// ("form \0 canister \0 tool", intent id) for intents not settled: which forms, canisters and
/// tools are in use (registration changes that would orphan them are refused).
pub const OPEN_USES: MemoryId = MemoryId::new(13);
/// owner → intents kept (open and settled), for the per-owner bound.
pub const OWNER_TOTALS: MemoryId = MemoryId::new(14);

/// (watchdog time, intent id) of sends in flight: a small index of its own, so a send writes
/// nothing to the large task index (which holds every settled intent's prune).
pub const WATCHDOGS: MemoryId = MemoryId::new(15);

/// Turns by id (each with its offered tools and steps).
pub const TURNS: MemoryId = MemoryId::new(16);
/// (owner, turn id) → whether the turn is finished: an owner's turns for its bound, and the
/// oldest finished one that makes room, without reading the turns.
pub const OWNER_TURNS: MemoryId = MemoryId::new(17);
/// (owner, tool) → calls made: what selection weighs besides the words.
pub const TOOL_USAGE: MemoryId = MemoryId::new(18);
/// (owner, entry id) → an escalation in the owner's inbox.
pub const INBOX: MemoryId = MemoryId::new(19);
/// owner → the canister its escalations are delivered to.
pub const ESCALATION_HANDLERS: MemoryId = MemoryId::new(20);
/// inbox entry id → (its owner, when its prune task is due): the timer finds an entry by id
/// and removes it once the retention passed, whether or not its owner escalates again.
pub const INBOX_IDS: MemoryId = MemoryId::new(21);
/// Agent token id → the token: its owner, the SHA-256 of its secret (never the secret), label,
/// expiry, revocation and last use (`crate::tokens`).
pub const AGENT_TOKENS: MemoryId = MemoryId::new(22);
/// (owner, token id): an owner's tokens, for its bound and its list.
pub const OWNER_TOKENS: MemoryId = MemoryId::new(23);
/// Intent bodies (input, argument bytes, preview, summary, names) in chunks, addressed from
/// the intents' heads (`crate::intent_store`); written from the first intent on, so a fresh
/// install takes no bucket for it.
pub const INTENT_BODIES: MemoryId = MemoryId::new(24);
/// (expiry time, intent id) of intents whose preview time has not come (open ones, and ones
/// settled before it, whose prune waits for it): a small index of its own, so a prepare writes
/// nothing to the large task index (which holds every settled intent's prune). Opened with the
/// first preview, so a fresh install takes no bucket for it.
/// Expiry tasks written to the task index by earlier code still run from there.
pub const EXPIRIES: MemoryId = MemoryId::new(25);

/// Intent heads by id (stored layout 3 on, `crate::head_table`): the directory, one entry per
/// group of ids. Heads written by layouts 1 and 2 stay in `INTENTS` until they are written
/// again or pruned. Written from the first intent on, so a fresh install takes no bucket.
pub const HEAD_DIRECTORY: MemoryId = MemoryId::new(26);
/// The head table's pages of slots.
pub const HEAD_PAGES: MemoryId = MemoryId::new(27);
/// Write-back slots (stored layout 6 on, `crate::write_back`): the keys written lately of the
/// kept counts, the open counts and the usage counts, a region of `write_back::REGION_BYTES`
/// each (`WRITE_BACK_*`). Written from the first count on, so a fresh install takes no bucket.
pub const WRITE_BACK: MemoryId = MemoryId::new(28);
/// The regions of `WRITE_BACK`, by the map whose keys they hold.
pub const WRITE_BACK_KEPT: u64 = 0;
pub const WRITE_BACK_OPEN: u64 = crate::write_back::REGION_BYTES;
pub const WRITE_BACK_USAGE: u64 = 2 * crate::write_back::REGION_BYTES;

/// Intents kept per owner (stored layout 7 on, `crate::owner_table`): a hash table of a record
/// per owner, the B-tree of `OWNER_TOTALS` keeping only the owners it held before and those
/// whose bucket is full. Written from the first count on, so a fresh install takes no bucket.
pub const OWNER_TOTALS_TABLE: MemoryId = MemoryId::new(29);
/// Intents not settled per owner, as `OWNER_TOTALS_TABLE` beside `OPEN_COUNTS`.
pub const OPEN_COUNTS_TABLE: MemoryId = MemoryId::new(30);

/// (owner, tool) → calls made (stored layout 7 on, `crate::bus::usage_counts`): a hash table
/// whose buckets are chosen by owner, the B-tree of `TOOL_USAGE` keeping only the pairs it held
/// before and those the table has no room or no name for. Written from the first count on.
pub const USAGE_TABLE: MemoryId = MemoryId::new(31);
/// A tool name's digest → the name, for the usage table's records. Opened with the first name.
pub const TOOL_NAMES: MemoryId = MemoryId::new(32);

/// (owner, identity digest) → the highest stamp handed out for those arguments (stored layout 8
/// on, `crate::stamp_floors`): a hash table, the B-tree of `STAMP_FLOORS` keeping only the
/// floors it held before and those the table has no room for. Written from the first floor on.
pub const STAMP_FLOOR_TABLE: MemoryId = MemoryId::new(33);

/// Every id in use or retired, for the test that no two structures share one.
pub const ALL: [MemoryId; 34] = [
    CONFIG,
    FORMS,
    TARGETS,
    ADMINS,
    AGENTS,
    INTENTS,
    INTENT_KEYS,
    OWNER_INTENTS,
    OPEN_COUNTS,
    DUE,
    IN_FLIGHT_V1,
    IN_FLIGHT,
    STAMP_FLOORS,
    OPEN_USES,
    OWNER_TOTALS,
    WATCHDOGS,
    TURNS,
    OWNER_TURNS,
    TOOL_USAGE,
    INBOX,
    ESCALATION_HANDLERS,
    INBOX_IDS,
    AGENT_TOKENS,
    OWNER_TOKENS,
    INTENT_BODIES,
    EXPIRIES,
    HEAD_DIRECTORY,
    HEAD_PAGES,
    WRITE_BACK,
    OWNER_TOTALS_TABLE,
    OPEN_COUNTS_TABLE,
    USAGE_TABLE,
    TOOL_NAMES,
    STAMP_FLOOR_TABLE,
];
