//! The outcome table's rows for replies that decode (each class of the ICRC-1 pack) and for
//! the owner's decline, through the real canisters with the test ledger's fault injection:
//! what the confirm answers, where the intent goes, and that nothing was sent when the row
//! says so. Rejects and unknown outcomes: `unknown.rs`.

use crate::steps::*;
use crate::Scenario;
use test_ledger::types::{Fault, TransferError};
use tool_host_engine::types::{IntentView, ToolResult};
use tool_host_tests::check::{refused, ApiOk, Check};
use tool_host_tests::clients::{confirm_args, consent_request, tx_nat};
use tool_host_tests::world::{structured, Prepared, World};
use tool_host_tests::{ensure, ensure_eq, fail};

macro_rules! rows {
    ($($name:literal => $f:ident),* $(,)?) => {
        vec![$(Scenario::new(concat!("outcome::", $name), $f)),*]
    };
}
pub(crate) use rows;

pub fn scenarios() -> Vec<Scenario> {
    rows![
        "ok_success" => ok_success,
        "duplicate_already_done_ledger_fault" => duplicate_already_done,
        "temporarily_unavailable_retry_same_ledger_fault" => temporarily_unavailable_retry_same,
        "too_old_retry_new_ledger_fault" => too_old_retry_new,
        "created_in_future_retry_new_capped_ledger_fault" => created_in_future_retry_new_capped,
        "bad_fee_fix_input_ledger_fault" => bad_fee_fix_input,
        "insufficient_funds_fix_input" => insufficient_funds_fix_input,
        "generic_error_fail_ledger_fault" => generic_error_fail,
        "decline_before_send" => decline_before_send,
        "decline_after_unknown_ledger_fault" => decline_after_unknown,
        "declined_stamp_never_reused" => declined_stamp_never_reused,
    ]
}

fn ok_success(w: &mut World) -> Check {
    let (p, r, log) = confirm_with(w, &w.amt("1"), None)?;
    ensure_eq!(outcome(&r), "success", "{}", r.content);
    ensure_eq!(w.intent(p.id)?.status, "done");
    ensure_eq!(w.log_length()?, log + 1);
    Ok(())
}

fn duplicate_already_done(w: &mut World) -> Check {
    let dup = transfer_err(TransferError::Duplicate {
        duplicate_of: 0u8.into(),
    });
    let (p, r, log) = confirm_with(w, &w.amt("1"), Some(dup))?;
    ensure_eq!(outcome(&r), "already_done", "{}", r.content);
    ensure!(!r.is_error);
    ensure_eq!(w.intent(p.id)?.status, "done");
    nothing_sent(w, log)
}

fn temporarily_unavailable_retry_same(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("1"))?;
    let log = w.log_length()?;
    for _ in 0..3 {
        w.fault(
            TRANSFER,
            transfer_err(TransferError::TemporarilyUnavailable),
        )?;
    }
    for round in 1..=2 {
        let r = w.confirm_ok(p.id, &p.digest)?;
        ensure_eq!(outcome(&r), "retry_same", "try {round}: {}", r.content);
        let i = w.intent(p.id)?;
        ensure_eq!(i.status, "open", "handed back for another confirm");
        ensure_eq!(i.digest.as_slice(), p.digest.as_slice(), "the same bytes");
    }
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "fail", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "settled");
    ensure_eq!(i.finding.as_deref(), Some("retries_spent"));
    ensure_eq!(i.attempts.len(), 3);
    nothing_sent(w, log)
}

/// After retry_new: a new stamp and digest; the old digest is refused (confirm and consent);
/// the new one sends, with the new stamp as the block's `created_at_time`.
pub(crate) fn restamped(
    w: &mut World,
    p: &Prepared,
    r: &ToolResult,
    log: u64,
) -> Check<IntentView> {
    ensure_eq!(outcome(r), "retry_new", "{}", r.content);
    nothing_sent(w, log)?;
    let old_stamp = p.json["preview"]["arguments"]["created_at_time"].clone();
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "open");
    ensure_eq!(i.generation, 1);
    ensure!(i.digest.as_slice() != p.digest.as_slice(), "a new digest");
    let answer = structured(r)?;
    ensure_eq!(
        answer["digest"],
        hex::encode(&i.digest),
        "the answer carries the new digest"
    );
    ensure!(
        answer["preview"]["arguments"]["created_at_time"] != old_stamp,
        "a new stamp in the new preview"
    );

    let owner = w.p.owner;
    refused(
        w.confirm(p.id, &p.digest)?,
        "DIGEST_MISMATCH",
        "the old digest",
    )?;
    let arg = candid::encode_one(confirm_args(p.id, &p.digest)).expect("encodes");
    let consent =
        w.host
            .consent_message(w.b.as_mut(), owner, consent_request("confirm", arg, false))?;
    ensure!(consent.is_err(), "no consent message for the old digest");
    nothing_sent(w, log)?;

    let r2 = w.confirm_ok(p.id, &i.digest)?;
    ensure_eq!(outcome(&r2), "success", "{}", r2.content);
    ensure_eq!(w.log_length()?, log + 1);
    let Some(block) = w.ledger.block(w.b.as_mut(), log)? else {
        fail!("no block {log}");
    };
    ensure_eq!(tx_nat(&block, "ts"), i.stamp, "the block has the new stamp");
    Ok(i)
}

fn too_old_retry_new(w: &mut World) -> Check {
    let (p, r, log) = confirm_with(w, &w.amt("1"), Some(transfer_err(TransferError::TooOld)))?;
    let i = restamped(w, &p, &r, log)?;
    let first = w.intent(p.id)?.attempts[0].at;
    ensure!(
        i.stamp > Some(0) && i.stamp >= Some(first),
        "stamped again at the send's end"
    );
    Ok(())
}

fn created_in_future_retry_new_capped(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("1"))?;
    let stamp = w.intent(p.id)?.stamp.unwrap_or(0);
    // The ledger says its clock is 5 s behind the first stamp: the new stamp is capped there.
    let ledger_time = stamp - 5_000_000_000;
    w.fault(
        TRANSFER,
        transfer_err(TransferError::CreatedInFuture { ledger_time }),
    )?;
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    let i = restamped(w, &p, &r, log)?;
    ensure_eq!(
        i.stamp,
        Some(ledger_time),
        "capped by the error's ledger_time"
    );
    Ok(())
}

fn settled_as(w: &mut World, fault: Option<Fault>, amount: &str, word: &str) -> Check<IntentView> {
    let (p, r, log) = confirm_with(w, amount, fault)?;
    ensure_eq!(outcome(&r), word, "{}", r.content);
    ensure!(r.is_error);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "settled");
    ensure_eq!(i.outcome.as_deref(), Some(word));
    nothing_sent(w, log)?;
    // Settled for good: confirming again answers the outcome without sending.
    let again = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&again), word);
    nothing_sent(w, log)?;
    Ok(i)
}

fn bad_fee_fix_input(w: &mut World) -> Check {
    let bad_fee = transfer_err(TransferError::BadFee {
        expected_fee: 20_000u32.into(),
    });
    settled_as(w, Some(bad_fee), &w.amt("1"), "fix_input").map(|_| ())
}

fn insufficient_funds_fix_input(w: &mut World) -> Check {
    // The real ledger answers: the deposit account holds 100 tokens.
    let i = settled_as(w, None, &w.amt("1000"), "fix_input")?;
    ensure!(
        i.reply
            .as_deref()
            .unwrap_or("")
            .contains("InsufficientFunds"),
        "{:?}",
        i.reply
    );
    Ok(())
}

fn generic_error_fail(w: &mut World) -> Check {
    let generic = transfer_err(TransferError::GenericError {
        error_code: 7u8.into(),
        message: "injected".into(),
    });
    settled_as(w, Some(generic), &w.amt("1"), "fail").map(|_| ())
}

fn decline_before_send(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("1"))?;
    let log = w.log_length()?;
    let owner = w.p.owner;
    let r = w
        .host
        .decline(w.b.as_mut(), owner, p.id)?
        .ok_or_fail("decline")?;
    ensure_eq!(outcome(&r), "declined");
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "settled");
    ensure_eq!(i.outcome.as_deref(), Some("declined"));
    let again = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(
        outcome(&again),
        "declined",
        "a declined intent is never sent"
    );
    refused(
        w.host.decline(w.b.as_mut(), owner, p.id)?,
        "SETTLED",
        "declining twice",
    )?;
    nothing_sent(w, log)
}

fn decline_after_unknown(w: &mut World) -> Check {
    let p = unknown_with(w, Fault::Reject("injected reject".into()), 4)?;
    let owner = w.p.owner;
    let r = w
        .host
        .decline(w.b.as_mut(), owner, p.id)?
        .ok_or_fail("decline")?;
    ensure_eq!(outcome(&r), "declined");
    ensure_eq!(
        structured(&r)?["earlier_outcome"],
        "unknown",
        "{}",
        r.structured
    );
    // The earlier send may have executed: the intent stays unknown for reconciliation.
    ensure_eq!(w.intent(p.id)?.status, "unknown");
    Ok(())
}

/// A declined intent frees its inputs: preparing them again makes a new intent with a new
/// stamp; the declined one is never sent.
fn declined_stamp_never_reused(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("1"))?;
    let old = w.intent(p.id)?;
    let owner = w.p.owner;
    w.host
        .decline(w.b.as_mut(), owner, p.id)?
        .ok_or_fail("decline")?;
    let again = w.prepare_transfer(&w.amt("1"))?;
    ensure!(again.id != p.id, "a new intent");
    let new = w.intent(again.id)?;
    ensure!(
        new.stamp > old.stamp,
        "{:?} then {:?}",
        old.stamp,
        new.stamp
    );
    ensure!(new.memo != old.memo, "a new memo");
    ensure!(new.digest != old.digest);
    let log = w.log_length()?;
    let r = w.confirm_ok(again.id, &again.digest)?;
    ensure_eq!(outcome(&r), "success", "{}", r.content);
    ensure_eq!(w.log_length()?, log + 1);
    ensure_eq!(w.intent(p.id)?.outcome.as_deref(), Some("declined"));
    Ok(())
}
