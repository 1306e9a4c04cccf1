//! The outcome table's rows for rejects and unknown outcomes: system rejects 1 to 3 (not
//! executed), 4, 5 and 6 and a reply that does not decode (unknown), the log length unreadable
//! before a send, and the holds that follow an unknown outcome (`reconcile`, `HELD`).

use crate::outcome::rows;
use crate::steps::*;
use crate::Scenario;
use std::time::Duration;
use test_ledger::types::{Fault, TransferError};
use tool_host_tests::backend::BackendError;
use tool_host_tests::check::{ApiOk, Check};
use tool_host_tests::ledgers::LedgerKind;
use tool_host_tests::world::World;
use tool_host_tests::{ensure, ensure_eq};

pub fn scenarios() -> Vec<Scenario> {
    rows![
        "reject_4_unknown_ledger_fault" => reject_4_unknown,
        "trap_5_unknown_ledger_fault" => trap_5_unknown,
        "lose_reply_6_unknown_ledger_fault" => lose_reply_6_unknown,
        "system_reject_1_not_executed" => system_reject_1_not_executed,
        "system_reject_2_not_executed" => system_reject_2_not_executed,
        "system_reject_3_not_executed" => system_reject_3_not_executed,
        "system_reject_6_unknown_then_absent" => system_reject_6_unknown_then_absent,
        "journal_read_fails_not_executed" => journal_read_fails_not_executed,
        "undecodable_reply_unknown" => undecodable_reply_unknown,
        "unknown_then_prepare_again_ledger_fault" => unknown_then_prepare_again,
        "unknown_then_fix_input_holds_ledger_fault" => unknown_then_fix_input_holds,
        "unknown_then_retry_same_thrice_holds_ledger_fault" => unknown_then_retry_same_thrice_holds,
        "third_reject_holds_ledger_fault" => third_reject_holds,
    ]
}

fn reject_4_unknown(w: &mut World) -> Check {
    unknown_with(w, Fault::Reject("injected reject".into()), 4).map(|_| ())
}

fn trap_5_unknown(w: &mut World) -> Check {
    unknown_with(w, Fault::Trap("injected trap".into()), 5).map(|_| ())
}

fn lose_reply_6_unknown(w: &mut World) -> Check {
    let (p, r, log) = confirm_lost_reply(w, &w.amt("1"))?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "unknown");
    ensure_eq!(last_attempt(&i)?.reject_code, Some(6));
    ensure_eq!(w.log_length()?, log + 1, "the transfer did execute");
    end_hold(w)?;
    // Sending the same bytes again: the ledger deduplicates, the outcome becomes known.
    let again = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&again), "already_done", "{}", again.content);
    ensure_eq!(w.intent(p.id)?.status, "done");
    ensure_eq!(w.log_length()?, log + 1, "deduplicated");
    Ok(())
}

/// A system reject before the target executed: not executed, the intent is open again and a
/// later confirm sends it.
fn not_executed_by_system(w: &mut World, code: u32) -> Check {
    let p = w.prepare_transfer(&w.amt("1"))?;
    let ledger = w.ledger.0;
    w.b.inject_reject(ledger, TRANSFER, code)?;
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "not_executed", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "open");
    ensure_eq!(last_attempt(&i)?.reject_code, Some(code));
    nothing_sent(w, log)?;
    let r2 = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r2), "success", "{}", r2.content);
    ensure_eq!(w.log_length()?, log + 1);
    Ok(())
}

fn system_reject_1_not_executed(w: &mut World) -> Check {
    not_executed_by_system(w, 1)
}

fn system_reject_2_not_executed(w: &mut World) -> Check {
    not_executed_by_system(w, 2)
}

/// SYS_UNKNOWN (6) from the system without the ledger executing: unknown, then the
/// reconciler reports it absent.
fn system_reject_6_unknown_then_absent(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("1"))?;
    let ledger = w.ledger.0;
    w.b.inject_reject(ledger, TRANSFER, 6)?;
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "unknown");
    ensure_eq!(last_attempt(&i)?.reject_code, Some(6));
    nothing_sent(w, log)?;
    crate::reconcile::run_reconciliation(w)?;
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "settled");
    ensure_eq!(i.outcome.as_deref(), Some("not_executed"));
    Ok(())
}

/// The ledger's log length cannot be read before the send: nothing is sent (the transfer is
/// never called), not_executed, and the intent is open again.
fn journal_read_fails_not_executed(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("1"))?;
    let ledger = w.ledger.0;
    w.b.inject_reject(ledger, "icrc3_get_blocks", 2)?;
    // Were the transfer called, this fault would answer it; it stays queued. (On the test
    // ledger a ledger fault is the witness; on any ledger a host fault is.)
    if w.kind == LedgerKind::Test {
        w.fault(
            TRANSFER,
            transfer_err(TransferError::TemporarilyUnavailable),
        )?;
    }
    w.b.inject_reject(ledger, TRANSFER, 1)?;
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "not_executed", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "open");
    ensure_eq!(last_attempt(&i)?.kind, "not_sent");
    nothing_sent(w, log)?;
    if w.kind == LedgerKind::Test {
        let c = w.p.controller;
        let pending = w.ledger.pending_faults(w.b.as_mut(), c)?;
        ensure_eq!(pending.len(), 1, "the transfer was never called");
    }
    // The host's fault for the transfer is still there: the next confirm takes it (reject 1,
    // not executed), and the one after sends.
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "not_executed", "{}", r.content);
    ensure_eq!(last_attempt(&w.intent(p.id)?)?.reject_code, Some(1));
    if w.kind == LedgerKind::Test {
        let c = w.p.controller;
        w.ledger.clear_faults(w.b.as_mut(), c)?;
    }
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "success", "{}", r.content);
    ensure_eq!(w.log_length()?, log + 1);
    Ok(())
}

/// Code 3 (DESTINATION_INVALID): injected where the backend can, else the target is deleted.
fn system_reject_3_not_executed(w: &mut World) -> Check {
    let (odd, p) = prepare_odd(w)?;
    match w.b.inject_reject(odd, TRANSFER, 3) {
        Ok(()) => {}
        Err(BackendError::Unsupported { .. }) => {
            let c = w.p.controller;
            w.b.delete_canister(odd, c)?;
        }
        Err(e) => return Err(e.into()),
    }
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "not_executed", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "open");
    ensure_eq!(last_attempt(&i)?.reject_code, Some(3));
    Ok(())
}

fn undecodable_reply_unknown(w: &mut World) -> Check {
    let (_, p) = prepare_odd(w)?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "unknown");
    ensure_eq!(last_attempt(&i)?.kind, "undecodable");
    // Its reconciliation cannot read a history the target does not keep; it says so.
    let delay = w.limits()?.reconcile_delay_seconds;
    w.b.advance_time(Duration::from_secs(delay + 1));
    w.b.run_until_quiet(tool_host_tests::backend::QUIET_ROUNDS)?;
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "unknown");
    ensure!(
        i.finding.as_deref().unwrap_or("").starts_with("unreadable"),
        "{:?}",
        i.finding
    );
    Ok(())
}

/// After an unknown outcome, preparing the same inputs answers the same preview with the
/// outcome `unknown`; confirming again sends the same bytes.
fn unknown_then_prepare_again(w: &mut World) -> Check {
    let p = unknown_with(w, Fault::Reject("injected reject".into()), 4)?;
    let input = w.transfer_input(&w.amt("1"));
    let (agent, owner) = (w.p.agent, w.p.owner);
    let r = w
        .tool(agent, Some(owner), "prepare_icrc1_transfer", &input)?
        .ok_or_fail("prepare again")?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    let again = tool_host_tests::world::prepared_of(&r)?;
    ensure_eq!(again.id, p.id);
    ensure_eq!(again.digest, p.digest, "the same bytes");
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "success", "{}", r.content);
    ensure_eq!(w.log_length()?, log + 1);
    let i = w.intent(p.id)?;
    ensure_eq!(i.attempts.len(), 2);
    ensure!(
        i.attempts.iter().all(|a| a.digest == i.digest),
        "every send had the same bytes"
    );
    Ok(())
}

/// After an unknown outcome, an answer other than success, already_done or retry_same holds
/// the intent for reconciliation; the timer then settles it (absent: nothing executed).
fn unknown_then_fix_input_holds(w: &mut World) -> Check {
    let p = unknown_with(w, Fault::Reject("injected reject".into()), 4)?;
    w.fault(
        TRANSFER,
        transfer_err(TransferError::BadFee {
            expected_fee: 20_000u32.into(),
        }),
    )?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "reconcile", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "reconcile");
    held(w, &p)?;
    crate::reconcile::run_reconciliation(w)?;
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "settled");
    ensure_eq!(i.outcome.as_deref(), Some("not_executed"));
    Ok(())
}

fn unknown_then_retry_same_thrice_holds(w: &mut World) -> Check {
    let p = unknown_with(w, Fault::Reject("injected reject".into()), 4)?;
    for _ in 0..3 {
        w.fault(
            TRANSFER,
            transfer_err(TransferError::TemporarilyUnavailable),
        )?;
    }
    for round in 1..=2 {
        let r = w.confirm_ok(p.id, &p.digest)?;
        ensure_eq!(outcome(&r), "retry_same", "try {round}: {}", r.content);
        ensure_eq!(
            w.intent(p.id)?.status,
            "unknown",
            "still unknown after retry_same"
        );
    }
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "reconcile", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "reconcile");
    ensure_eq!(i.finding.as_deref(), Some("retries_spent"));
    held(w, &p)
}

fn third_reject_holds(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("1"))?;
    for fault in [
        Fault::Reject("one".into()),
        Fault::Trap("two".into()),
        Fault::Reject("three".into()),
    ] {
        w.fault(TRANSFER, fault)?;
    }
    for round in 1..=2 {
        let r = w.confirm_ok(p.id, &p.digest)?;
        ensure_eq!(outcome(&r), "unknown", "try {round}: {}", r.content);
    }
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "reconcile", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "reconcile");
    ensure_eq!(
        i.finding.as_deref(),
        Some("a third reject with code 4 or 5")
    );
    held(w, &p)?;
    crate::reconcile::run_reconciliation(w)?;
    ensure_eq!(w.intent(p.id)?.outcome.as_deref(), Some("not_executed"));
    Ok(())
}
