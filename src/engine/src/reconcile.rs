//! Reconciling an unknown outcome by reading, never by sending: a fresh call to the same target
//! first (calls between two canisters are delivered in order, so the original has executed or
//! never will), then a scan of its ICRC-3 blocks from the log length journaled before the send,
//! matching the memo, the stamp (`created_at_time`) and the amount.

use crate::catalog;
use crate::model::Status;
use crate::runtime::{CallOutcome, Runtime};
use crate::schedule;
use crate::send::{schedule_reconcile, settle};
use candid::types::value::IDLValue;
use candid::{IDLArgs, Nat, Principal};
use num_bigint::BigUint;

/// Blocks asked for in one `icrc3_get_blocks` call, and calls in one reconciliation.
const PAGE: u64 = 1_000;
const MAX_PAGES: usize = 20;

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

use icrc3::{GetBlocksRequest, GetBlocksResult, Value};

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
type Archive = (Principal, String, Vec<(u64, u64)>);

/// One `icrc3_get_blocks` answer: the log length, blocks by id, and archives to ask.
struct Page {
    log_length: u64,
    blocks: Vec<(u64, Value)>,
    archives: Vec<Archive>,
}

fn small(n: &Nat) -> Option<u64> {
    u64::try_from(n.0.clone()).ok()
}

fn parse_page(bytes: &[u8]) -> Result<Page, String> {
    let mut config = candid::DecoderConfig::new();
    config.set_decoding_quota(50_000_000);
    let r: GetBlocksResult = candid::utils::decode_one_with_config(bytes, &config)
        .map_err(|e| format!("the blocks do not decode: {e}"))?;
    let log_length = small(&r.log_length).ok_or("the log length is out of range")?;
    let blocks = r
        .blocks
        .into_iter()
        .filter_map(|b| Some((small(&b.id)?, b.block)))
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
        CallOutcome::Replied(bytes) => parse_page(&bytes),
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
/// What identifies the original transaction in a block.
pub struct Expected {
    pub memo: Option<Vec<u8>>,
    pub stamp: u64,
    pub amount: Option<BigUint>,
}

/// Whether a block holds the original: its `tx` has the memo, the stamp as `ts` and the amount.
pub fn matches(block: &Value, e: &Expected) -> bool {
    let Some(tx) = block.get("tx") else {
        return false;
    };
    if let Some(memo) = &e.memo {
        match tx.get("memo") {
            Some(Value::Blob(b)) if b.as_slice() == memo.as_slice() => {}
            _ => return false,
        }
    }
    match tx.get("ts") {
        Some(Value::Nat(ts)) if ts.0 == BigUint::from(e.stamp) => {}
        _ => return false,
    }
    match (&e.amount, tx.get("amt")) {
        (None, _) => true,
        (Some(a), Some(Value::Nat(amt))) => &amt.0 == a,
        _ => false,
    }
}

/// The amount in an intent's argument record, if it has one.
fn expected_amount(args: &IDLArgs) -> Option<BigUint> {
    let IDLValue::Record(fields) = args.args.first()? else {
        return None;
    };
    let amount = fields
        .iter()
        .find(|f| crate::names::is_label(&f.id, "amount"))?;
    tool_host_core::read::value::value_uint(&amount.val)
}

enum Scan {
    Found(u64),
    Absent { from: u64, to: u64 },
    Incomplete(String),
}

async fn scan<R: Runtime>(
    rt: &R,
    canister: Principal,
    from: u64,
    e: &Expected,
    timeout: u32,
) -> Scan {
    let mut start = from;
    for _ in 0..MAX_PAGES {
        let page =
            match get_blocks(rt, canister, "icrc3_get_blocks", &[(start, PAGE)], timeout).await {
                Ok(p) => p,
                Err(m) => return Scan::Incomplete(m),
            };
        if let Some((id, _)) = page.blocks.iter().find(|(_, b)| matches(b, e)) {
            return Scan::Found(*id);
        }
        let mut next = page
            .blocks
            .iter()
            .map(|(id, _)| id + 1)
            .max()
            .unwrap_or(start);
        for (archive, method, ranges) in &page.archives {
            match get_blocks(rt, *archive, method, ranges, timeout).await {
                Ok(p) => {
                    if let Some((id, _)) = p.blocks.iter().find(|(_, b)| matches(b, e)) {
                        return Scan::Found(*id);
                    }
                }
                Err(m) => return Scan::Incomplete(format!("archive {archive}: {m}")),
            }
            next = next.max(ranges.iter().map(|(s, l)| s + l).max().unwrap_or(next));
        }
        if next >= page.log_length {
            return Scan::Absent {
                from,
                to: page.log_length,
            };
        }
        if next == start {
            return Scan::Incomplete(format!(
                "the target returned no blocks from {start} below its log length {}",
                page.log_length
            ));
        }
        start = next;
    }
    Scan::Incomplete(format!(
        "more than {} blocks to read; continues later",
        PAGE * MAX_PAGES as u64
    ))
}

/// Reconciles one intent held or unknown; reschedules itself when the target cannot be read.
pub async fn run<R: Runtime>(rt: &R, id: u64) {
    let job = rt.with_state(|s| {
        let i = s.intents.get(&id)?;
        if !matches!(i.status, Status::Unknown | Status::Reconcile) {
            return None;
        }
        let stamp = i.stamp_ns?;
        let icrc3 = s.targets.get(&i.canister).is_some_and(|t| t.icrc3);
        if !icrc3 {
            let mut i = i;
            i.finding = Some(
                "unreadable: the target does not list ICRC-3, so its history cannot be read".into(),
            );
            s.put_intent(i);
            return None;
        }
        let tool = catalog::current(s).tool(&i.tool)?;
        let amount = tool_host_core::codec::decode_args_with(tool.plan(), &tool.types, &i.arg)
            .ok()
            .and_then(|a| expected_amount(&a));
        Some((
            i.canister,
            i.log_length.unwrap_or(0),
            Expected {
                memo: i.memo.clone(),
                stamp,
                amount,
            },
            s.limits().call_timeout_seconds,
        ))
    });
    let Some((canister, from, expected, timeout)) = job else {
        return;
    };
    let result = scan(rt, canister, from, &expected, timeout).await;
    let now = rt.now();
    rt.with_state(|s| {
        let Some(mut i) = s.intents.get(&id) else {
            return;
        };
        if !matches!(i.status, Status::Unknown | Status::Reconcile) {
            return;
        }
        match result {
            Scan::Found(block) => {
                i.status = Status::Done;
                settle(
                    s,
                    &mut i,
                    now,
                    "success",
                    Some(format!("reconciled: found in block {block}")),
                );
            }
            Scan::Absent { from, to } => settle(
                s,
                &mut i,
                now,
                "not_executed",
                Some(format!("reconciled: absent from blocks {from} to {to}")),
            ),
            Scan::Incomplete(why) => {
                i.reconcile_tries += 1;
                i.finding = Some(format!("reconciliation continues: {why}"));
                schedule_reconcile(s, &mut i, now);
            }
        }
        i.updated_at = now;
        s.put_intent(i);
    });
    schedule::rearm(rt);
}
