//! Steps the scenarios share: confirm with a fault queued, hold a reply back past the call
//! deadline (LoseReply), target the odd canister, and what "nothing was sent" means.

use std::time::Duration;
use test_ledger::types::{Fault, InjectedErr, TransferError};
use tool_host_engine::types::{IntentView, ToolResult};
use tool_host_tests::backend::{BackendExt, Submitted};
use tool_host_tests::check::{refused, ApiOk, Check};
use tool_host_tests::clients::confirm_args;
use tool_host_tests::world::{Prepared, World};
use tool_host_tests::{ensure_eq, fail};

pub const TRANSFER: &str = "icrc1_transfer";

pub fn transfer_err(e: TransferError) -> Fault {
    Fault::Err(InjectedErr::Transfer(e))
}

/// Prepares a transfer of `amount`, queues `fault` (if any) and confirms. Answers the intent,
/// the confirm's answer and the log length before the confirm.
pub fn confirm_with(
    w: &mut World,
    amount: &str,
    fault: Option<Fault>,
) -> Check<(Prepared, ToolResult, u64)> {
    let prepared = w.prepare_transfer(amount)?;
    if let Some(f) = fault {
        w.fault(TRANSFER, f)?;
    }
    let log = w.log_length()?;
    let r = w.confirm_ok(prepared.id, &prepared.digest)?;
    Ok((prepared, r, log))
}

pub fn outcome(r: &ToolResult) -> &str {
    r.outcome.as_deref().unwrap_or("")
}

pub fn last_attempt(i: &IntentView) -> Check<&tool_host_engine::types::AttemptView> {
    match i.attempts.last() {
        Some(a) => Ok(a),
        None => fail!("intent {} has no attempt", i.id),
    }
}

/// The intent is where the row puts it and nothing reached the ledger's log.
pub fn nothing_sent(w: &mut World, log: u64) -> Check {
    ensure_eq!(w.log_length()?, log, "nothing was sent");
    Ok(())
}

/// A confirm whose outcome is unknown with this reject code; the intent stays unknown.
pub fn unknown_with(w: &mut World, fault: Fault, code: u32) -> Check<Prepared> {
    let (p, r, log) = confirm_with(w, &w.amt("1"), Some(fault))?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "unknown");
    ensure_eq!(last_attempt(&i)?.reject_code, Some(code));
    nothing_sent(w, log)?;
    Ok(p)
}

/// How long the ledger holds a reply past the tool host's call timeout: long enough for the
/// deadline to pass first, short enough to end the hold before a reconciliation is due
/// (`reconcile_delay_seconds`, 10 s by default).
pub const HOLD_PAST_TIMEOUT_SECS: u64 = 5;

/// Queues a LoseReply on the ledger's next transfer, submits the owner's confirm of `p` and
/// runs rounds until the ledger has executed the transfer (and holds its reply back). Answers
/// the confirm in flight.
pub fn start_lost_reply(w: &mut World, p: &Prepared) -> Check<Submitted> {
    let timeout = w.limits()?.call_timeout_seconds as u64;
    let hold_ns = (timeout + HOLD_PAST_TIMEOUT_SECS) * 1_000_000_000;
    w.fault(TRANSFER, Fault::LoseReply { hold_ns })?;
    let log = w.log_length()?;
    let (host, owner) = (w.host.0, w.p.owner);
    let msg =
        w.b.submit_typed(host, owner, "confirm", (confirm_args(p.id, &p.digest),))?;
    let ledger = w.ledger;
    w.b.tick_until(200, |b| Ok(ledger.log_length(b)? > log))?;
    Ok(msg)
}

/// Moves time past the tool host's call deadline (the held call ends with SYS_UNKNOWN).
pub fn pass_deadline(w: &mut World) -> Check {
    let timeout = w.limits()?.call_timeout_seconds as u64;
    w.b.advance_time(Duration::from_secs(timeout + 1));
    Ok(())
}

/// Moves time past the end of the hold (after [`pass_deadline`]), not as far as a
/// reconciliation.
pub fn end_hold(w: &mut World) -> Check {
    w.b.advance_time(Duration::from_secs(HOLD_PAST_TIMEOUT_SECS));
    Ok(())
}

/// Confirms with the ledger holding its reply back past the tool host's call timeout: the
/// transfer executes, the tool host sees SYS_UNKNOWN (6). The hold is still running when this
/// returns; [`end_hold`] ends it.
pub fn confirm_lost_reply(w: &mut World, amount: &str) -> Check<(Prepared, ToolResult, u64)> {
    let p = w.prepare_transfer(amount)?;
    let log = w.log_length()?;
    let msg = start_lost_reply(w, &p)?;
    pass_deadline(w)?;
    let reply = w.b.await_reply(msg)?;
    let (r,): (Result<ToolResult, tool_host_engine::types::ApiError>,) =
        tool_host_tests::backend::decode("confirm", &reply)?;
    let r = r.ok_or_fail("confirm")?;
    Ok((p, r, log))
}

/// The odd canister as the target: prepared while it answers its refs.
pub fn prepare_odd(w: &mut World) -> Check<(candid::Principal, Prepared)> {
    let odd = w.deploy_odd()?;
    let input = serde_json::json!({
        "canister_id": odd.to_text(),
        "to": w.p.recipient.to_text(),
        "amount": format!("1 {}", tool_host_tests::odd::SYMBOL),
    })
    .to_string();
    let p = w.prepare("prepare_icrc1_transfer", &input)?;
    Ok((odd, p))
}

/// A confirm that is refused because the intent is held for reconciliation.
pub fn held(w: &mut World, p: &Prepared) -> Check {
    let log = w.log_length()?;
    refused(w.confirm(p.id, &p.digest)?, "HELD", "confirm while held")?;
    nothing_sent(w, log)
}

/// Confirms with the host losing the ledger's reply (any ledger; the local host only): the
/// ledger executes the transfer, the tool host sees SYS_UNKNOWN (6) once its call's deadline
/// passes. Answers the intent, the confirm's answer and the log length before the confirm.
pub fn confirm_host_lost_reply(w: &mut World, amount: &str) -> Check<(Prepared, ToolResult, u64)> {
    let p = w.prepare_transfer(amount)?;
    let log = w.log_length()?;
    let r = confirm_losing_reply(w, &p, TRANSFER)?;
    Ok((p, r, log))
}

/// Confirms `p` with the host losing the reply of the ledger's `method`; answers the confirm's
/// answer once the call's deadline has passed.
pub fn confirm_losing_reply(w: &mut World, p: &Prepared, method: &str) -> Check<ToolResult> {
    let msg = start_losing_reply(w, p, method)?;
    pass_deadline(w)?;
    let reply = w.b.await_reply(msg)?;
    let (r,): (Result<ToolResult, tool_host_engine::types::ApiError>,) =
        tool_host_tests::backend::decode("confirm", &reply)?;
    r.ok_or_fail("confirm")
}

/// Makes the host lose the reply of the ledger's next transfer, submits the owner's confirm of
/// `p` and runs rounds until the ledger has executed the transfer. Answers the confirm in flight
/// (it completes once the call's deadline has passed).
pub fn start_host_lost_reply(w: &mut World, p: &Prepared) -> Check<Submitted> {
    start_losing_reply(w, p, TRANSFER)
}

/// [`start_host_lost_reply`] for the ledger's `method`.
pub fn start_losing_reply(w: &mut World, p: &Prepared, method: &str) -> Check<Submitted> {
    let log = w.log_length()?;
    let ledger = w.ledger;
    w.b.lose_reply(ledger.0, method)?;
    let (host, owner) = (w.host.0, w.p.owner);
    let msg =
        w.b.submit_typed(host, owner, "confirm", (confirm_args(p.id, &p.digest),))?;
    w.b.tick_until(200, |b| Ok(ledger.log_length(b)? > log))?;
    Ok(msg)
}
