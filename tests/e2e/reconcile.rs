//! An unknown outcome settled by the timer, by reading the ledger's ICRC-3 blocks from the log
//! length journaled before the send: found (the transfer executed, its reply was lost) and
//! absent (the ledger rejected before executing).

use crate::steps::{confirm_lost_reply, end_hold, TRANSFER};
use crate::Scenario;
use std::time::Duration;
use test_ledger::types::Fault;
use tool_host_tests::backend::QUIET_ROUNDS;
use tool_host_tests::check::Check;
use tool_host_tests::world::World;
use tool_host_tests::{ensure, ensure_eq};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "reconcile::found_after_lost_reply_ledger_fault",
            found_after_lost_reply,
        ),
        Scenario::new(
            "reconcile::absent_after_reject_ledger_fault",
            absent_after_reject,
        ),
        Scenario::new(
            "reconcile::several_in_one_tick_ledger_fault",
            several_in_one_tick,
        ),
        Scenario::new(
            "reconcile::unreadable_target_is_retried_ledger_fault",
            unreadable_target_is_retried,
        ),
    ]
}

/// Moves time past the reconcile delay and runs every timer and message until quiet.
pub fn run_reconciliation(w: &mut World) -> Check {
    let delay = w.limits()?.reconcile_delay_seconds;
    w.b.advance_time(Duration::from_secs(delay + 1));
    w.b.run_until_quiet(QUIET_ROUNDS)?;
    Ok(())
}

fn found_after_lost_reply(w: &mut World) -> Check {
    let (p, r, log) = confirm_lost_reply(w, &w.amt("4"))?;
    ensure_eq!(r.outcome.as_deref(), Some("unknown"), "{}", r.content);
    end_hold(w)?;
    run_reconciliation(w)?;
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "done");
    ensure_eq!(i.outcome.as_deref(), Some("success"));
    ensure_eq!(
        i.finding.as_deref(),
        Some(format!("reconciled: found in block {log}").as_str())
    );
    ensure_eq!(w.log_length()?, log + 1, "reconciliation only reads");
    Ok(())
}

fn absent_after_reject(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("4"))?;
    w.fault(TRANSFER, Fault::Reject("injected reject".into()))?;
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("unknown"), "{}", r.content);
    run_reconciliation(w)?;
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "settled");
    ensure_eq!(i.outcome.as_deref(), Some("not_executed"));
    let finding = i.finding.unwrap_or_default();
    ensure!(finding.starts_with("reconciled: absent"), "{finding}");
    ensure_eq!(w.log_length()?, log, "nothing was sent");
    Ok(())
}

/// The ledger's blocks cannot be read at the first try (a system reject on
/// `icrc3_get_blocks`): the intent stays unknown and the reconciliation is tried again later
/// (after twice the delay), then settles it.
fn unreadable_target_is_retried(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("4"))?;
    w.fault(TRANSFER, Fault::Reject("injected reject".into()))?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("unknown"), "{}", r.content);
    let ledger = w.ledger.0;
    w.b.inject_reject(ledger, "icrc3_get_blocks", 2)?;
    run_reconciliation(w)?;
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "unknown");
    let finding = i.finding.unwrap_or_default();
    ensure!(finding.starts_with("reconciliation continues"), "{finding}");
    // The next try is twice the delay later: one more delay is not enough.
    run_reconciliation(w)?;
    ensure_eq!(w.intent(p.id)?.status, "unknown", "backed off");
    run_reconciliation(w)?;
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "settled");
    ensure!(
        i.finding
            .as_deref()
            .unwrap_or("")
            .starts_with("reconciled: absent"),
        "{:?}",
        i.finding
    );
    Ok(())
}

/// Several unknown intents due together, one found and two absent, settled by one timer tick
/// that awaits each reconciliation in turn.
fn several_in_one_tick(w: &mut World) -> Check {
    // The lost reply first: its reconciliation is due 10 s after its unknown outcome, the
    // others' a few seconds later; one move of time makes all three due together.
    let (found, r, log) = confirm_lost_reply(w, &w.amt("7"))?;
    ensure_eq!(r.outcome.as_deref(), Some("unknown"), "{}", r.content);
    end_hold(w)?;
    let mut absent = vec![];
    for amount in [&w.amt("5"), &w.amt("6")] {
        let p = w.prepare_transfer(amount)?;
        w.fault(TRANSFER, Fault::Trap("injected trap".into()))?;
        let r = w.confirm_ok(p.id, &p.digest)?;
        ensure_eq!(r.outcome.as_deref(), Some("unknown"), "{}", r.content);
        absent.push(p.id);
    }
    ensure_eq!(w.intent(found.id)?.status, "unknown", "not reconciled yet");
    run_reconciliation(w)?;
    for id in absent {
        let i = w.intent(id)?;
        ensure_eq!(
            i.outcome.as_deref(),
            Some("not_executed"),
            "intent {id}: {:?}",
            i.finding
        );
    }
    let i = w.intent(found.id)?;
    ensure_eq!(i.status, "done");
    ensure_eq!(
        i.finding.as_deref(),
        Some(format!("reconciled: found in block {log}").as_str())
    );
    ensure_eq!(w.stats()?.open_intents, 0);
    Ok(())
}
