//! Review: a run whose calls run out right after a ledger page that sends the cursor to an
//! archive reported "the target returned no block N", a failure of the target (counted as a
//! try, with backoff), where the run had only not asked the archive yet.

mod common;
use candid::{Nat, Principal};
use common::*;
use serde_bytes::ByteBuf;
use std::cell::Cell;
use tool_host_engine::reconcile::icrc3::{
    ArchiveFn, ArchivedBlocks, BlockWithId, GetBlocksRequest, GetBlocksResult, Value,
};
use tool_host_engine::reconcile::MAX_CALLS;
use tool_host_engine::runtime::CallOutcome;

fn archive_id() -> Principal {
    Principal::from_slice(&[0xa7, 1])
}

/// A transfer between two accounts that are not the intent's.
fn someone_elses(id: u64) -> BlockWithId {
    let acct = |b: u8| Value::Array(vec![Value::Blob(ByteBuf::from(vec![b, 1]))]);
    let tx = Value::Map(vec![
        ("op".into(), Value::Text("xfer".into())),
        ("from".into(), acct(0x51)),
        ("to".into(), acct(0x52)),
        ("amt".into(), Value::Nat(Nat::from(5u8))),
    ]);
    BlockWithId {
        id: Nat::from(id),
        block: Value::Map(vec![
            ("ts".into(), Value::Nat(Nat::from(1u8))),
            ("fee".into(), Value::Nat(Nat::from(10u8))),
            ("tx".into(), tx),
        ]),
    }
}

/// A ledger that answers one block per page and, on the run's last call (`pages` counts
/// them), sends the cursor to an archive; the archive's calls are counted in `archive_calls`.
fn one_block_pages(
    canister: Principal,
    method: &str,
    arg: &[u8],
    pages: &Cell<usize>,
    archive_calls: &Cell<usize>,
) -> Option<CallOutcome> {
    if method != "icrc3_get_blocks" {
        return None;
    }
    let reqs: Vec<GetBlocksRequest> = candid::decode_one(arg).unwrap();
    let start = u64::try_from(reqs[0].start.0.clone()).unwrap();
    if canister == archive_id() {
        archive_calls.set(archive_calls.get() + 1);
        let r = GetBlocksResult {
            log_length: Nat::from(start + 1),
            blocks: vec![someone_elses(start)],
            archived_blocks: vec![],
        };
        return Some(CallOutcome::Replied(candid::encode_one(r).unwrap()));
    }
    let n = pages.get() + 1;
    pages.set(n);
    let (blocks, archived_blocks) = if n == MAX_CALLS {
        let range = GetBlocksRequest {
            start: Nat::from(start),
            length: Nat::from(1u8),
        };
        let callback = ArchiveFn::new(archive_id(), "icrc3_get_blocks".into());
        (
            vec![],
            vec![ArchivedBlocks {
                args: vec![range],
                callback,
            }],
        )
    } else {
        (vec![someone_elses(start)], vec![])
    };
    let r = GetBlocksResult {
        log_length: Nat::from(start + 1_000),
        blocks,
        archived_blocks,
    };
    Some(CallOutcome::Replied(candid::encode_one(r).unwrap()))
}

#[test]
fn a_run_out_of_calls_before_the_archive_continues_and_is_not_a_failed_try() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    assert_eq!(
        w.confirm(owner(), id, &d).unwrap().outcome.as_deref(),
        Some("unknown")
    );
    let (pages, archive_calls) = (Cell::new(0), Cell::new(0));
    let ledger = Intercept {
        w: w.clone(),
        answer: |c: Principal, m: &str, a: &[u8]| one_block_pages(c, m, a, &pages, &archive_calls),
    };
    let tries = w.intent(id).reconcile_tries;
    w.advance(11 * SEC);
    futures::executor::block_on(tool_host_engine::schedule::tick(&ledger));
    assert_eq!(pages.get(), MAX_CALLS, "the run used its calls");
    assert_eq!(archive_calls.get(), 0, "no call past the cap");
    let i = w.intent(id);
    let finding = i.finding.clone().unwrap_or_default();
    assert!(
        finding.starts_with("reconciliation continues: read up to block"),
        "{finding}"
    );
    assert_eq!(i.reconcile_tries, tries, "not counted as a failed try");
    assert_eq!(i.outcome.as_deref(), Some("unknown"));
}

/// Found by the third review: a page naming more archives than a run can ask before the
/// cursor's made every run "continue" with nothing read, 20 calls every 10 s without back-off.
/// A run that read nothing is a failed try.
/// A ledger whose every page names `MAX_CALLS` archives for the cursor, none of which has it
/// (`calls` counts the block reads).
fn many_archives(
    canister: Principal,
    method: &str,
    arg: &[u8],
    calls: &Cell<usize>,
) -> Option<CallOutcome> {
    if method != "icrc3_get_blocks" {
        return None;
    }
    calls.set(calls.get() + 1);
    let reqs: Vec<GetBlocksRequest> = candid::decode_one(arg).unwrap();
    let start = u64::try_from(reqs[0].start.0.clone()).unwrap();
    if canister != ledger_id() {
        // An archive with nothing at the cursor.
        let r = GetBlocksResult {
            log_length: Nat::from(0u8),
            blocks: vec![],
            archived_blocks: vec![],
        };
        return Some(CallOutcome::Replied(candid::encode_one(r).unwrap()));
    }
    let archived_blocks = (0..MAX_CALLS as u8)
        .map(|k| ArchivedBlocks {
            args: vec![GetBlocksRequest {
                start: Nat::from(start),
                length: Nat::from(1u8),
            }],
            callback: ArchiveFn::new(Principal::from_slice(&[0xa9, k]), "icrc3_get_blocks".into()),
        })
        .collect();
    let r = GetBlocksResult {
        log_length: Nat::from(start + 1_000),
        blocks: vec![],
        archived_blocks,
    };
    Some(CallOutcome::Replied(candid::encode_one(r).unwrap()))
}

#[test]
fn a_run_that_reads_nothing_before_its_cap_is_a_failed_try() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    let calls = Cell::new(0);
    let rt = Intercept {
        w: w.clone(),
        answer: |c: Principal, m: &str, a: &[u8]| many_archives(c, m, a, &calls),
    };
    let mut cursors = vec![];
    for _ in 0..6 {
        w.advance(11 * SEC);
        futures::executor::block_on(tool_host_engine::schedule::tick(&rt));
        let i = w.intent(id);
        cursors.push((i.scan.as_ref().map(|s| s.cursor), i.reconcile_tries));
    }
    let i = w.intent(id);
    // Counted as tries, so the runs back off (10 s, 20 s, 40 s ...): fewer than one a tick.
    assert!(i.reconcile_tries >= 1, "runs (cursor, tries): {cursors:?}");
    assert!(
        calls.get() < 6 * MAX_CALLS,
        "{} calls, runs (cursor, tries): {cursors:?}",
        calls.get()
    );
    let finding = i.finding.clone().unwrap_or_default();
    assert!(finding.contains("read no block"), "{finding}");
    assert_eq!(i.outcome.as_deref(), Some("unknown"));
}
