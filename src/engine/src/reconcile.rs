//! Reconciling an unknown outcome by reading, never by sending. The original, if it executed, is
//! in the target's ICRC-3 log between the smallest log length journaled before any send of the
//! current bytes (`from`) and the log length answered by the first read after the latest send
//! (`end`: calls between two canisters are delivered in order, so by then the original has
//! executed or never will). The scan reads that range, continuing across runs from a cursor kept
//! in stable memory, and compares each block's whole transaction with the intent's exact
//! argument bytes (`matching`). Found → done; the whole range read without it → absent; a block
//! that reads as this intent's but differs → held, never settled on a guess.

use crate::model::TaskKind;
use crate::runtime::{CallOutcome, Runtime};
use crate::schedule;
use crate::send::settle;
use candid::{Nat, Principal};

/// Blocks asked for in one `icrc3_get_blocks` call (ledgers answer fewer; the scan takes what
/// comes), and calls (the ledger's and its archives') in one run; the cursor carries the rest.
const PAGE: u64 = 1_000;
pub const MAX_CALLS: usize = 20;

/// The ICRC-3 types, decoded as the standard defines them.
pub mod icrc3 {
    use candid::{CandidType, Deserialize, Int, Nat};
    use serde_bytes::ByteBuf;

    #[derive(CandidType, Deserialize, Clone, Debug, PartialEq)]
    pub enum Value {
        Blob(ByteBuf),
        Text(String),
        Nat(Nat),
        Int(Int),
        Array(Vec<Value>),
        Map(Vec<(String, Value)>),
        /// Not in ICRC-3's `Value`, but in the cycles ledger's (which never writes it): read, so
        /// that a ledger that did would not make a whole page undecodable.
        Nat64(u64),
    }

    impl Value {
        pub fn get(&self, key: &str) -> Option<&Value> {
            match self {
                Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
                _ => None,
            }
        }
    }

    #[derive(CandidType, Deserialize, Clone, Debug, PartialEq)]
    pub struct GetBlocksRequest {
        pub start: Nat,
        pub length: Nat,
    }

    #[derive(CandidType, Deserialize, Clone, Debug, PartialEq)]
    pub struct BlockWithId {
        pub id: Nat,
        pub block: Value,
    }

    candid::define_function!(pub ArchiveFn : (Vec<GetBlocksRequest>) -> (GetBlocksResult) query);

    #[derive(CandidType, Deserialize, Clone, Debug, PartialEq)]
    pub struct ArchivedBlocks {
        pub args: Vec<GetBlocksRequest>,
        pub callback: ArchiveFn,
    }

    #[derive(CandidType, Deserialize, Clone, Debug, PartialEq)]
    pub struct GetBlocksResult {
        pub log_length: Nat,
        pub blocks: Vec<BlockWithId>,
        pub archived_blocks: Vec<ArchivedBlocks>,
    }
}

use crate::matching::Tx;
use icrc3::{GetBlocksRequest, GetBlocksResult};

fn request(ranges: &[(u64, u64)]) -> Vec<u8> {
    let reqs: Vec<GetBlocksRequest> = ranges
        .iter()
        .map(|(s, l)| GetBlocksRequest {
            start: Nat::from(*s),
            length: Nat::from(*l),
        })
        .collect();
    candid::encode_one(reqs).unwrap_or_default()
}

/// An archive to ask: its canister, the method (the callback) and the ranges it holds.
pub type Archive = (Principal, String, Vec<(u64, u64)>);

/// One `icrc3_get_blocks` answer: the log length, each block's transaction by id (`None`: the
/// block has none), and archives to ask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub log_length: u64,
    pub blocks: Vec<(u64, Option<Tx>)>,
    pub archives: Vec<Archive>,
}

fn small(n: &Nat) -> Option<u64> {
    u64::try_from(n.0.clone()).ok()
}

/// A page as the scan reads it: straight off the wire (`wire::blocks`, about 20 000
/// instructions a block where the general decoder takes 165 000), or, when the reply is not
/// exactly the shape that reader knows (a page naming archives among others), by
/// [`decode_page`].
pub fn read_page(bytes: &[u8]) -> Result<Page, String> {
    match tool_host_core::wire::blocks::read_page(bytes) {
        Some(p) => Ok(Page {
            log_length: p.log_length,
            blocks: p.blocks,
            archives: vec![],
        }),
        None => decode_page(bytes),
    }
}

/// A page decoded whole with the ICRC-3 types by `candid`, each block's transaction then read
/// from its `Value` ([`matching::read_tx`]): the general path, and the fast reader's reference.
pub fn decode_page(bytes: &[u8]) -> Result<Page, String> {
    let mut config = candid::DecoderConfig::new();
    config.set_decoding_quota(50_000_000);
    let r: GetBlocksResult = candid::utils::decode_one_with_config(bytes, &config)
        .map_err(|e| format!("the blocks do not decode: {e}"))?;
    let log_length = small(&r.log_length).ok_or("the log length is out of range")?;
    let blocks = r
        .blocks
        .into_iter()
        .filter_map(|b| Some((small(&b.id)?, matching::read_tx(&b.block))))
        .collect();
    let archives = r
        .archived_blocks
        .into_iter()
        .map(|a| {
            let ranges = a
                .args
                .iter()
                .filter_map(|q| Some((small(&q.start)?, small(&q.length)?)))
                .collect();
            (a.callback.0.principal, a.callback.0.method, ranges)
        })
        .collect();
    Ok(Page {
        log_length,
        blocks,
        archives,
    })
}

async fn get_blocks<R: Runtime>(
    rt: &R,
    canister: Principal,
    method: &str,
    ranges: &[(u64, u64)],
    timeout: u32,
) -> Result<Page, String> {
    match rt.call(canister, method, request(ranges), timeout).await {
        CallOutcome::Replied(bytes) => read_page(&bytes),
        CallOutcome::Rejected { code, message } => Err(format!("rejected ({code}) {message}")),
        CallOutcome::NotSent(m) => Err(format!("not sent: {m}")),
    }
}

/// Only the log length of a `GetBlocksResult`: the other fields are skipped, not checked.
#[derive(candid::CandidType, candid::Deserialize)]
struct LogLength {
    log_length: Nat,
}

/// The target's log length now (an empty `icrc3_get_blocks` request); decodes only that field,
/// since this read sits on every send's path.
pub async fn read_log_length<R: Runtime>(
    rt: &R,
    canister: Principal,
    timeout: u32,
) -> Result<u64, String> {
    match rt
        .call(canister, "icrc3_get_blocks", request(&[]), timeout)
        .await
    {
        CallOutcome::Replied(bytes) => {
            if let Some(n) = crate::messages::log_length(&bytes) {
                return Ok(n);
            }
            let mut config = candid::DecoderConfig::new();
            config
                .set_decoding_quota(1_000_000)
                .set_skipping_quota(10_000);
            let r: LogLength = candid::utils::decode_one_with_config(&bytes, &config)
                .map_err(|e| format!("the log length does not decode: {e}"))?;
            small(&r.log_length).ok_or_else(|| "the log length is out of range".to_string())
        }
        CallOutcome::Rejected { code, message } => Err(format!("rejected ({code}) {message}")),
        CallOutcome::NotSent(m) => Err(format!("not sent: {m}")),
    }
}
use crate::matching::{self, Verdict};
use crate::model::{ScanState, Status};
use crate::runtime::{CallOutcome as Co, Runtime as Rt};

/// What one run reads for, taken before its awaits.
struct Job {
    canister: Principal,
    digest: [u8; 32],
    attempts: u32,
    from: u64,
    cursor: u64,
    /// An `end` read after the latest attempt, from an earlier run.
    end: Option<u64>,
    expected: matching::Expected,
    timeout: u32,
    icrc3: bool,
}

/// How one run's reading ended.
enum Scan {
    Found(u64),
    /// A block with this intent's operation, source, spender, memo and stamp that differs in
    /// another field: held for good, since guessing either way could be wrong.
    Conflict(u64, String),
    Absent {
        from: u64,
        to: u64,
    },
    /// Read as far as this run's calls allowed; nothing wrong.
    Progress {
        cursor: u64,
        end: Option<u64>,
    },
    /// The target could not be read (a reject, a reply that does not decode, no blocks).
    Incomplete {
        cursor: u64,
        end: Option<u64>,
        why: String,
    },
}

/// How long a run holds its task: every call it may make (the standards read, then the scan's
/// calls), and a margin. A run that never comes back (a trap, an upgrade) leaves the task due
/// again after this.
pub fn lease_ns(timeout_seconds: u32) -> u64 {
    ((MAX_CALLS as u64 + 1) * timeout_seconds as u64 + 60) * crate::send::SEC
}

fn shorter_log(length: u64, from: u64) -> String {
    format!(
        "the target's log length is {length}, below {from}, its length before the send: not the log the send was made against; the original cannot be looked for"
    )
}

async fn scan<R: Rt>(rt: &R, job: &Job) -> Scan {
    let mut cursor = job.cursor.max(job.from);
    let run_start = cursor;
    let mut end = job.end;
    let mut calls = 0;
    loop {
        if let Some(e) = end {
            // A log shorter than the length journaled before the send is not the log the send
            // was made against (reinstalled, rolled back, or misreported): nothing in it can
            // show the original absent.
            if e < job.from {
                return Scan::Incomplete {
                    cursor,
                    end,
                    why: shorter_log(e, job.from),
                };
            }
            if cursor >= e {
                return Scan::Absent {
                    from: job.from,
                    to: e,
                };
            }
        }
        if calls >= MAX_CALLS {
            return Scan::Progress { cursor, end };
        }
        let page = match get_blocks(
            rt,
            job.canister,
            "icrc3_get_blocks",
            &[(cursor, PAGE)],
            job.timeout,
        )
        .await
        {
            Ok(p) => p,
            Err(why) => return Scan::Incomplete { cursor, end, why },
        };
        calls += 1;
        if page.log_length < job.from {
            return Scan::Incomplete {
                cursor,
                end,
                why: shorter_log(page.log_length, job.from),
            };
        }
        // The first read after the latest attempt bounds where the original can be.
        let end_now = *end.get_or_insert(page.log_length);
        let mut seen = std::collections::BTreeSet::new();
        let mut blocks = page.blocks;
        let mut failure = None;
        let mut capped = false;
        for (archive, method, ranges) in &page.archives {
            if calls >= MAX_CALLS {
                capped = true;
                break;
            }
            // Only ever a read of blocks: a target cannot make the tool host call another
            // method (an update nobody confirmed) by naming it as its archive's.
            if method != "icrc3_get_blocks" {
                failure = Some(format!("the target names {archive}'s {method} as its archive's; only icrc3_get_blocks is called"));
                break;
            }
            match get_blocks(rt, *archive, method, ranges, job.timeout).await {
                Ok(p) => blocks.extend(p.blocks),
                Err(m) => {
                    failure = Some(format!("archive {archive}: {m}"));
                    break;
                }
            }
            calls += 1;
        }
        for (id, tx) in &blocks {
            match matching::compare_tx(tx.as_ref(), &job.expected) {
                Verdict::Same => return Scan::Found(*id),
                Verdict::Conflict(why) => return Scan::Conflict(*id, why),
                Verdict::Other => {}
            }
            seen.insert(*id);
        }
        // Only past blocks actually returned: an archive or a ledger may answer fewer.
        let before = cursor;
        while seen.contains(&cursor) {
            cursor += 1;
        }
        if cursor >= end_now {
            continue;
        }
        if let Some(why) = failure {
            return Scan::Incomplete { cursor, end, why };
        }
        if cursor == before {
            // The run's calls ran out before the archive that holds the cursor was asked: the
            // next run asks it first (not a failure of the target), if this run read anything.
            // A run that read nothing (a page naming more archives than a run can ask before
            // the cursor's) is a failed try, so that it backs off.
            if capped && cursor > run_start {
                return Scan::Progress { cursor, end };
            }
            if capped {
                return Scan::Incomplete {
                    cursor,
                    end,
                    why: format!(
                        "a run's {MAX_CALLS} calls read no block from {cursor}: the target names more archives than a run asks"
                    ),
                };
            }
            return Scan::Incomplete {
                cursor,
                end,
                why: format!(
                    "the target returned no block {cursor} (its log length is {})",
                    page.log_length
                ),
            };
        }
    }
}

/// Whether the target lists ICRC-3, read now: `Err` when it could not be read (not an answer).
async fn lists_icrc3_now<R: Rt>(rt: &R, canister: Principal, timeout: u32) -> Result<bool, String> {
    match rt
        .call(
            canister,
            "icrc1_supported_standards",
            crate::registry::NO_ARGS.to_vec(),
            timeout,
        )
        .await
    {
        Co::Replied(bytes) => crate::registry::lists_icrc3(&bytes)
            .ok_or_else(|| "its supported standards do not decode".to_string()),
        // The target answered that it has no such method (or does not exist): a definite no.
        Co::Rejected { code: 3..=5, .. } => Ok(false),
        Co::Rejected { code, message } => {
            Err(format!("supported standards: rejected ({code}) {message}"))
        }
        Co::NotSent(m) => Err(format!("supported standards: not sent: {m}")),
    }
}

/// Reconciles one intent that is unknown or held. Its task is leased for the run (moved past
/// every call it may make), so a trap or an upgrade never loses it; the run then settles the
/// intent or schedules its next run.
pub async fn run<R: Rt>(rt: &R, id: u64, task_at: u64) {
    let now = rt.now();
    let job = rt.with_state(|s| -> Option<Job> {
        // Taken by this run only if still due (another tick may have it).
        s.due.remove(&TaskKind::Reconcile.key(task_at, id))?;
        let mut i = s.intents.get(&id)?;
        // A send in flight finishes first; its outcome schedules what follows.
        if !i.needs_reconcile() || i.status == Status::InFlight {
            if i.reconcile_at == Some(task_at) {
                i.reconcile_at = None;
                if i.status != Status::InFlight {
                    s.put_intent(i);
                }
            }
            return None;
        }
        let timeout = s.limits().call_timeout_seconds;
        let expected = match matching::expected(&i.method, &i.arg, rt.self_id()) {
            Ok(e) => e,
            Err(why) => {
                i.held_for_good = true;
                i.reconcile_at = None;
                i.finding = Some(format!("unreadable: {why}"));
                i.updated_at = now;
                s.put_intent(i);
                return None;
            }
        };
        let icrc3 = s.targets.get(&i.canister).is_some_and(|t| t.icrc3);
        let scan = i.scan.clone().filter(|sc| sc.digest == i.digest);
        let attempts = i.attempts.len() as u32;
        let job = Job {
            canister: i.canister,
            digest: i.digest,
            attempts,
            from: i.scan_from(),
            cursor: scan.as_ref().map_or(0, |sc| sc.cursor),
            end: scan.and_then(|sc| (sc.end_attempts == attempts).then_some(sc.end).flatten()),
            expected,
            timeout,
            icrc3,
        };
        crate::send::schedule_reconcile_at(s, &mut i, now.saturating_add(lease_ns(timeout)));
        s.put_intent(i);
        Some(job)
    });
    let Some(job) = job else {
        schedule::rearm(rt);
        return;
    };
    let mut learned_icrc3 = false;
    let result = if job.icrc3 {
        scan(rt, &job).await
    } else {
        // A target not known to list ICRC-3 is asked again, now: only its answer counts.
        match lists_icrc3_now(rt, job.canister, job.timeout).await {
            Ok(true) => {
                learned_icrc3 = true;
                scan(rt, &job).await
            }
            Ok(false) => Scan::Incomplete {
                cursor: job.cursor,
                end: job.end,
                why: "unreadable: the target does not list ICRC-3, so its history cannot be read"
                    .into(),
            },
            Err(why) => Scan::Incomplete {
                cursor: job.cursor,
                end: job.end,
                why,
            },
        }
    };
    let now = rt.now();
    rt.with_state(|s| {
        if learned_icrc3 {
            if let Some(mut t) = s.targets.get(&job.canister).filter(|t| !t.icrc3) {
                t.icrc3 = true;
                s.targets.insert(job.canister, t);
                s.target_changed(job.canister);
            }
        }
        let Some(mut i) = s.intents.get(&id) else {
            return;
        };
        // A send in flight, or an intent settled meanwhile: its own path moves it on.
        if !i.needs_reconcile() || i.status == Status::InFlight {
            return;
        }
        if i.digest != job.digest {
            crate::send::schedule_reconcile(s, &mut i, now);
            s.put_intent(i);
            return;
        }
        let unchanged = i.attempts.len() as u32 == job.attempts;
        let keep = |i: &mut crate::model::Intent, cursor: u64, end: Option<u64>| {
            i.scan = Some(ScanState {
                digest: job.digest,
                cursor,
                end: if unchanged { end } else { None },
                end_attempts: job.attempts,
            });
        };
        match result {
            // A block with these exact bytes is the original, whatever happened since.
            Scan::Found(block) => {
                i.status = Status::Done;
                settle(s, &mut i, now, "success", Some(format!("reconciled: found in block {block}")));
            }
            Scan::Conflict(block, why) => {
                i.status = Status::Reconcile;
                i.held_for_good = true;
                if let Some(at) = i.reconcile_at.take() {
                    s.due.remove(&TaskKind::Reconcile.key(at, id));
                }
                i.finding = Some(format!("unreadable: block {block} has this intent's operation, account, memo and stamp but differs: {why}; held, never sent again"));
            }
            // Absent only if no send was made since the scan began (its end is then valid).
            Scan::Absent { from, to } if unchanged => settle(
                s,
                &mut i,
                now,
                "not_executed",
                Some(format!("reconciled: absent from blocks {from} to {to}")),
            ),
            Scan::Absent { from: _, to } => {
                keep(&mut i, to, None);
                i.finding = Some("reconciliation continues: the intent was sent again during the scan".into());
                crate::send::schedule_reconcile(s, &mut i, now);
            }
            Scan::Progress { cursor, end } => {
                keep(&mut i, cursor, end);
                i.finding = Some(format!("reconciliation continues: read up to block {cursor}"));
                let at = now.saturating_add(s.limits().reconcile_delay_seconds.saturating_mul(crate::send::SEC));
                crate::send::schedule_reconcile_at(s, &mut i, at);
            }
            Scan::Incomplete { cursor, end, why } => {
                keep(&mut i, cursor, end);
                i.reconcile_tries += 1;
                i.finding = Some(if why.starts_with("unreadable") { why } else { format!("reconciliation continues: {why}") });
                crate::send::schedule_reconcile(s, &mut i, now);
            }
        }
        i.updated_at = now;
        s.put_intent(i);
    });
    schedule::rearm(rt);
}
