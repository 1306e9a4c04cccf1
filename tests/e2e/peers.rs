//! Scenarios written for real peers, on both ledgers: the outcome rows a real ledger produces
//! by itself — `Duplicate`, `TooOld`, `CreatedInFuture`, `BadFee`, `AllowanceChanged`,
//! `Expired` (InsufficientFunds and InsufficientAllowance are in `outcome.rs` and `icrc2.rs`) —
//! and unknown outcomes made by the host, not by the ledger (a lost reply: the ledger executed;
//! a call that timed out before delivery: it never did), reconciled from the ledger's real
//! ICRC-3 blocks, also across an upgrade of the tool host. The host's faults (lost reply,
//! injected reply, a clock ahead) exist on the local host only: on PocketIC these trials are
//! unsupported (ignored with the reason).

use crate::outcome::restamped;
use crate::reconcile::run_reconciliation;
use crate::steps::*;
use crate::Scenario;
use candid::Nat;
use std::time::Duration;
use test_ledger::types::Value;
use tool_host_engine::types::{ApiError, ToolResult};
use tool_host_tests::backend::BackendExt;
use tool_host_tests::backend::{decode, InstallMode};
use tool_host_tests::check::{ApiOk, Check, Fail};
use tool_host_tests::clients::{host_arg, nat_u64, HostArg, UpgradeArgs};
use tool_host_tests::wasm::{self, Canister};
use tool_host_tests::world::{account, World};
use tool_host_tests::{ensure, ensure_eq, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "outcome::duplicate_after_lost_reply_already_done",
            duplicate_after_lost_reply,
        ),
        Scenario::new("outcome::too_old_retry_new", too_old_retry_new),
        Scenario::new(
            "outcome::created_in_future_retry_new_clock_ahead",
            created_in_future_clock_ahead,
        ),
        Scenario::new(
            "outcome::bad_fee_fix_input_stale_fee_ref",
            bad_fee_stale_fee_ref,
        ),
        Scenario::new(
            "icrc2::approve_allowance_changed_expired",
            approve_allowance_changed_expired,
        ),
        Scenario::new(
            "reconcile::found_and_absent_host_faults",
            found_and_absent_host_faults,
        ),
        Scenario::new(
            "upgrade::every_intent_state_host_faults",
            upgrade_every_state,
        ),
        Scenario::new(
            "reconcile::found_approve_and_transfer_from_host_faults",
            found_approve_and_transfer_from,
        ),
        Scenario::new(
            "reconcile::found_beyond_the_first_page",
            found_beyond_the_first_page,
        ),
        Scenario::new(
            "icrc2::approve_the_tool_host_itself",
            approve_the_tool_host_itself,
        ),
    ]
}

/// The reply the intent's last attempt recorded (the ledger's answer, as Candid text).
fn reply_of(w: &mut World, id: u64) -> Check<String> {
    Ok(w.intent(id)?.reply.unwrap_or_default())
}

/// The ledger executes the transfer, the host loses its reply (unknown, 6); the owner confirms
/// again: the ledger answers `Duplicate` of the first block, and the intent is done.
fn duplicate_after_lost_reply(w: &mut World) -> Check {
    let (p, r, log) = confirm_host_lost_reply(w, &w.amt("1"))?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(last_attempt(&i)?.reject_code, Some(6));
    ensure_eq!(w.log_length()?, log + 1, "the transfer did execute");
    let again = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&again), "already_done", "{}", again.content);
    let reply = reply_of(w, p.id)?;
    let expected =
        serde_json::json!({ "Err": { "Duplicate": { "duplicate_of": log.to_string() } } });
    ensure_eq!(
        serde_json::from_str::<serde_json::Value>(&reply)?,
        expected,
        "the ledger's own Duplicate of block {log}"
    );
    ensure_eq!(w.intent(p.id)?.status, "done");
    ensure_eq!(w.log_length()?, log + 1, "deduplicated by the ledger");
    Ok(())
}

/// A confirm more than 24 h (+ 60 s drift) after the prepare: the ledger answers `TooOld`; the
/// intent gets a new stamp, and its new digest sends.
fn too_old_retry_new(w: &mut World) -> Check {
    let mut limits = w.limits()?;
    limits.preview_ttl_seconds = 2 * 86_400;
    w.set_limits(limits)?;
    let p = w.prepare_transfer(&w.amt("1"))?;
    let log = w.log_length()?;
    w.b.advance_time(Duration::from_secs(86_400 + 61));
    let r = w.confirm_ok(p.id, &p.digest)?;
    let reply = reply_of(w, p.id)?;
    ensure!(reply.contains("TooOld"), "{reply}");
    restamped(w, &p, &r, log)?;
    Ok(())
}

/// The tool host's clock runs 5 minutes ahead of the ledger's (another subnet): its stamp is in
/// the ledger's future, the ledger answers `CreatedInFuture { ledger_time }`, the new stamp is
/// capped at that time and sends.
fn created_in_future_clock_ahead(w: &mut World) -> Check {
    let host = w.host.0;
    w.b.set_clock_ahead(host, Duration::from_secs(300))?;
    let p = w.prepare_transfer(&w.amt("1"))?;
    let first = w.intent(p.id)?.stamp.unwrap_or(0);
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    let reply = reply_of(w, p.id)?;
    ensure!(reply.contains("CreatedInFuture"), "{reply}");
    let ledger_now = w.b.time_nanos();
    let i = restamped(w, &p, &r, log)?;
    let stamp = i.stamp.unwrap_or(u64::MAX);
    ensure!(
        stamp < first && stamp <= ledger_now,
        "the new stamp {stamp} is capped by the ledger's time (first {first}, ledger {ledger_now})"
    );
    Ok(())
}

/// The tool host read a fee the ledger no longer charges (its `icrc1_fee` answer is stale): the
/// ledger answers `BadFee { expected_fee }` with its real fee (fix_input). After the refs are
/// read again, the same input prepares a new intent with the right fee, which sends.
fn bad_fee_stale_fee_ref(w: &mut World) -> Check {
    let (ledger, admin) = (w.ledger.0, w.p.admin);
    let stale = w.fee() + 1;
    w.b.inject_reply(
        ledger,
        "icrc1_fee",
        candid::encode_one(Nat::from(stale)).expect("encodes"),
    )?;
    let h = w.host;
    h.refresh_refs(w.b.as_mut(), admin, Some(ledger))?
        .ok_or_fail("refresh_refs")?;
    let p = w.prepare_transfer(&w.amt("1"))?;
    ensure_eq!(
        p.json["preview"]["arguments"]["fee"],
        w.token.show(stale),
        "the preview shows the stale fee"
    );
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "fix_input", "{}", r.content);
    let reply = reply_of(w, p.id)?;
    let expected =
        serde_json::json!({ "Err": { "BadFee": { "expected_fee": w.token.show(w.fee()) } } });
    ensure_eq!(
        serde_json::from_str::<serde_json::Value>(&reply)?,
        expected,
        "the ledger's real fee"
    );
    nothing_sent(w, log)?;
    ensure_eq!(w.intent(p.id)?.status, "settled");

    h.refresh_refs(w.b.as_mut(), admin, Some(ledger))?
        .ok_or_fail("refresh_refs")?;
    let again = w.prepare_transfer(&w.amt("1"))?;
    ensure!(again.id != p.id, "a new intent");
    ensure_eq!(
        again.json["preview"]["arguments"]["fee"],
        w.token.show(w.fee())
    );
    let r = w.confirm_ok(again.id, &again.digest)?;
    ensure_eq!(outcome(&r), "success", "{}", r.content);
    ensure_eq!(w.log_length()?, log + 1);
    Ok(())
}

/// ICRC-2 approve through the tool host, from the owner's deposit account: it succeeds (the
/// ledger's allowance is the amount), then the ledger itself refuses an `expected_allowance`
/// that is not the current one (`AllowanceChanged`) and an expiry already past (`Expired`),
/// both fix_input, nothing sent.
fn approve_allowance_changed_expired(w: &mut World) -> Check {
    let ledger = w.ledger.0.to_text();
    let spender = w.p.recipient;
    let input = |extra: serde_json::Value, amount: &str| {
        let mut v = serde_json::json!({
            "canister_id": ledger,
            "spender": spender.to_text(),
            "amount": amount,
        });
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v.to_string()
    };
    let deposit = w.deposit.clone();
    let before = w.balance(&deposit)?;
    let p = w.prepare(
        "prepare_icrc2_approve",
        &input(serde_json::json!({}), &w.amt("5")),
    )?;
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "success", "{}", r.content);
    ensure_eq!(w.log_length()?, log + 1);
    let allowance = w
        .ledger
        .allowance(w.b.as_mut(), deposit.clone(), account(spender))?;
    ensure_eq!(nat_u64(&allowance.allowance), w.tokens(5));
    ensure_eq!(
        w.balance(&deposit)?,
        before - w.fee(),
        "the approver paid the fee"
    );

    let log = w.log_length()?;
    let p = w.prepare(
        "prepare_icrc2_approve",
        &input(
            serde_json::json!({ "expected_allowance": w.amt("1") }),
            &w.amt("6"),
        ),
    )?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "fix_input", "{}", r.content);
    let reply = reply_of(w, p.id)?;
    let expected = serde_json::json!({
        "Err": { "AllowanceChanged": { "current_allowance": w.amt("5") } }
    });
    ensure_eq!(serde_json::from_str::<serde_json::Value>(&reply)?, expected);
    nothing_sent(w, log)?;

    let p = w.prepare(
        "prepare_icrc2_approve",
        &input(serde_json::json!({ "expires_at": "now" }), &w.amt("7")),
    )?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(outcome(&r), "fix_input", "{}", r.content);
    let reply = reply_of(w, p.id)?;
    ensure!(reply.contains("Expired"), "{reply}");
    nothing_sent(w, log)?;
    let allowance = w
        .ledger
        .allowance(w.b.as_mut(), deposit, account(spender))?;
    ensure_eq!(nat_u64(&allowance.allowance), w.tokens(5), "unchanged");
    Ok(())
}

/// Two unknown outcomes made by the host, settled by one reconciliation from the ledger's real
/// blocks, with blocks of others around them: a lost reply (the transfer executed: found in the
/// block at the journaled log length) and a call that timed out before it was delivered
/// (absent, although later blocks exist).
fn found_and_absent_host_faults(w: &mut World) -> Check {
    let (found, r, log) = confirm_host_lost_reply(w, &w.amt("4"))?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    // Someone else's block after it.
    let other = account(w.p.stranger);
    let amount = w.tokens(1);
    w.mint(&other, amount)?;

    let absent = w.prepare_transfer(&w.amt("5"))?;
    let ledger = w.ledger.0;
    w.b.inject_reject(ledger, TRANSFER, 6)?;
    let r = w.confirm_ok(absent.id, &absent.digest)?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    ensure_eq!(last_attempt(&w.intent(absent.id)?)?.reject_code, Some(6));
    let before = w.log_length()?;
    w.mint(&other, amount)?;

    run_reconciliation(w)?;
    let i = w.intent(found.id)?;
    ensure_eq!(i.status, "done");
    ensure_eq!(
        i.finding.as_deref(),
        Some(format!("reconciled: found in block {log}").as_str())
    );
    let i = w.intent(absent.id)?;
    ensure_eq!(i.status, "settled");
    ensure_eq!(i.outcome.as_deref(), Some("not_executed"));
    let finding = i.finding.unwrap_or_default();
    ensure!(finding.starts_with("reconciled: absent"), "{finding}");
    ensure_eq!(w.log_length()?, before + 1, "reconciliation only reads");
    Ok(())
}

/// An upgrade of the tool host holding an open, a done, an unknown (timed out before delivery)
/// and an in-flight intent (the ledger executed it; the host loses its reply): every intent
/// survives, the in-flight one becomes unknown, and the re-armed timer settles both unknown
/// ones from the ledger's blocks (absent, found).
fn upgrade_every_state(w: &mut World) -> Check {
    let ledger = w.ledger.0;
    let open = w.prepare_transfer(&w.amt("1"))?;
    let done = w.prepare_transfer(&w.amt("2"))?;
    let r = w.confirm_ok(done.id, &done.digest)?;
    ensure_eq!(outcome(&r), "success", "{}", r.content);
    let unknown = w.prepare_transfer(&w.amt("3"))?;
    w.b.inject_reject(ledger, TRANSFER, 6)?;
    let r = w.confirm_ok(unknown.id, &unknown.digest)?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    let flying = w.prepare_transfer(&w.amt("4"))?;
    let log = w.log_length()?;
    let in_flight = start_host_lost_reply(w, &flying)?;
    ensure_eq!(w.intent(flying.id)?.status, "in_flight");

    let before: Vec<_> = [open.id, done.id, unknown.id]
        .iter()
        .map(|id| w.intent(*id))
        .collect::<Check<_>>()?;
    let (host, controller) = (w.host.0, w.p.controller);
    let wasm = wasm::wasm(Canister::ToolHost).map_err(Fail::Failed)?;
    // A send is in flight: a plain upgrade is refused (the old code keeps running); forced,
    // it goes ahead and that send's outcome becomes unknown.
    let plain = host_arg(HostArg::Upgrade(None));
    match w
        .b
        .install(host, wasm, plain, InstallMode::Upgrade, controller)
    {
        Err(e) => ensure!(e.to_string().contains("upgrade refused"), "{e}"),
        Ok(()) => fail!("an upgrade with a send in flight was not refused"),
    }
    let force = UpgradeArgs {
        force: Some(true),
        ..Default::default()
    };
    let arg = host_arg(HostArg::Upgrade(Some(force)));
    w.b.install(host, wasm, arg, InstallMode::Upgrade, controller)?;
    for (old, id) in before.iter().zip([open.id, done.id, unknown.id]) {
        ensure_eq!(&w.intent(id)?, old, "intent {id} is unchanged");
    }
    let fi = w.intent(flying.id)?;
    ensure_eq!(fi.status, "unknown", "{fi:?}");

    pass_deadline(w)?;
    match w.b.await_reply(in_flight) {
        Ok(bytes) => {
            let (r,): (Result<ToolResult, ApiError>,) = decode("confirm", &bytes)?;
            println!("the confirm in flight across the upgrade answered {r:?}");
        }
        Err(e) => println!("the confirm in flight across the upgrade failed: {e}"),
    }
    ensure_eq!(w.intent(flying.id)?.status, "unknown");

    run_reconciliation(w)?;
    let ui = w.intent(unknown.id)?;
    ensure_eq!(ui.status, "settled");
    ensure!(
        ui.finding
            .as_deref()
            .unwrap_or("")
            .starts_with("reconciled: absent"),
        "{:?}",
        ui.finding
    );
    let fi = w.intent(flying.id)?;
    ensure_eq!(fi.status, "done");
    ensure_eq!(
        fi.finding.as_deref(),
        Some(format!("reconciled: found in block {log}").as_str())
    );
    let r = w.confirm_ok(open.id, &open.digest)?;
    ensure_eq!(outcome(&r), "success", "{}", r.content);
    ensure_eq!(w.log_length()?, log + 2);
    Ok(())
}

/// The index of the block whose `tx.memo` is `memo` (the ledger's own record of an intent).
fn block_with_memo(w: &mut World, memo: &[u8]) -> Check<u64> {
    let n = w.log_length()?;
    for i in (0..n).rev() {
        if let Some(b) = w.ledger.block(w.b.as_mut(), i)? {
            if matches!(b.get("tx").and_then(|t| t.get("memo")), Some(Value::Blob(m)) if m.as_slice() == memo)
            {
                return Ok(i);
            }
        }
    }
    fail!("no block has the memo {}", hex::encode(memo))
}

/// An unknown approve and an unknown transfer_from (their replies lost by the host) are found
/// by the reconciler in the ledger's blocks: `2approve` / `2xfer` on the test ledger, `op =
/// "approve"` / `op = "xfer"` with a `spender` on the cycles ledger.
fn found_approve_and_transfer_from(w: &mut World) -> Check {
    let (ledger, owner, host) = (w.ledger.0.to_text(), w.p.owner, w.host.0);
    let input = serde_json::json!({
        "canister_id": ledger,
        "spender": w.p.stranger.to_text(),
        "amount": w.amt("3"),
    })
    .to_string();
    let approve = w.prepare("prepare_icrc2_approve", &input)?;
    let r = confirm_losing_reply(w, &approve, "icrc2_approve")?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);

    // The owner lets the tool host spend from its own account; the tool host's transfer_from
    // reply is lost.
    let grant = test_ledger::types::ApproveArgs {
        from_subaccount: None,
        spender: account(host),
        amount: Nat::from(w.tokens(10)),
        expected_allowance: None,
        expires_at: None,
        fee: None,
        memo: None,
        created_at_time: None,
    };
    if let Err(x) = w.ledger.approve(w.b.as_mut(), owner, grant)? {
        fail!("approve: {x:?}");
    }
    let input = serde_json::json!({
        "canister_id": ledger,
        "to": w.p.recipient.to_text(),
        "amount": w.amt("2"),
    })
    .to_string();
    let spend = w.prepare("prepare_icrc2_transfer_from", &input)?;
    let r = confirm_losing_reply(w, &spend, "icrc2_transfer_from")?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);

    run_reconciliation(w)?;
    for p in [&approve, &spend] {
        let i = w.intent(p.id)?;
        let memo = i.memo.clone().unwrap_or_default();
        let at = block_with_memo(w, &memo)?;
        ensure_eq!(i.status, "done", "{} {:?}", i.method, i.finding);
        ensure_eq!(
            i.finding.as_deref(),
            Some(format!("reconciled: found in block {at}").as_str()),
            "{}",
            i.method
        );
    }
    Ok(())
}

/// Others' transfers land between the tool host's log-length read and its own transfer, so the
/// intent's block is not the first one the reconciler reads; on the cycles ledger the ledger
/// also serves at most 2 blocks per call (`max_blocks_per_request`, set by an upgrade), so the
/// scan has to page. (The test ledger serves 1 000: one page.)
fn found_beyond_the_first_page(w: &mut World) -> Check {
    let ledger = w.ledger;
    if w.kind == tool_host_tests::ledgers::LedgerKind::Cycles {
        use tool_host_tests::clients::{CyclesLedgerArgs, CyclesLedgerUpgrade};
        let arg = CyclesLedgerArgs::Upgrade(Some(CyclesLedgerUpgrade {
            max_blocks_per_request: Some(2),
        }));
        let wasm = wasm::cycles_ledger().map_err(|x| Fail::Failed(x.to_string()))?;
        let c = w.p.controller;
        w.b.install(
            ledger.0,
            &wasm.ledger,
            candid::encode_args((Some(arg),)).expect("encodes"),
            InstallMode::Upgrade,
            c,
        )?;
    }
    let p = w.prepare_transfer(&w.amt("4"))?;
    let log = w.log_length()?;
    w.b.lose_reply(ledger.0, TRANSFER)?;
    let (host, owner) = (w.host.0, w.p.owner);
    let msg = w.b.submit_typed(
        host,
        owner,
        "confirm",
        (tool_host_tests::clients::confirm_args(p.id, &p.digest),),
    )?;
    // Round 1: the tool host reads the log length; round 2: the ledger answers it. Then the
    // owner's own transfers reach the ledger before the tool host's transfer does.
    w.b.tick();
    w.b.tick();
    let mut others = vec![];
    for n in 1..=3u64 {
        let arg = test_ledger::types::TransferArg {
            from_subaccount: None,
            to: account(w.p.stranger),
            amount: Nat::from(n),
            fee: None,
            memo: None,
            created_at_time: None,
        };
        others.push(w.b.submit_typed(ledger.0, owner, "icrc1_transfer", (arg,))?);
    }
    w.b.tick_until(200, |b| Ok(ledger.log_length(b)? >= log + 4))?;
    for m in others {
        w.b.await_reply(m)?;
    }
    pass_deadline(w)?;
    let (r,): (Result<ToolResult, ApiError>,) = decode("confirm", &w.b.await_reply(msg)?)?;
    let r = r.ok_or_fail("confirm")?;
    ensure_eq!(outcome(&r), "unknown", "{}", r.content);
    let memo = w.intent(p.id)?.memo.unwrap_or_default();
    let at = block_with_memo(w, &memo)?;
    ensure!(
        at >= log + 3,
        "the intent's block {at} comes after the others (log {log})"
    );
    run_reconciliation(w)?;
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "done", "{:?}", i.finding);
    ensure_eq!(
        i.finding.as_deref(),
        Some(format!("reconciled: found in block {at}").as_str())
    );
    Ok(())
}

/// An approve whose spender is the tool host itself (the owner's deposit account is one of the
/// tool host's subaccounts): a self approval. The test ledger answers `GenericError` (code 5):
/// fail, settled. The cycles ledger traps ("self approval is not allowed"): reject 5, unknown;
/// the reconciler then finds no block (not executed).
fn approve_the_tool_host_itself(w: &mut World) -> Check {
    let input = serde_json::json!({
        "canister_id": w.ledger.0.to_text(),
        "spender": w.host.0.to_text(),
        "amount": w.amt("1"),
    })
    .to_string();
    let p = w.prepare("prepare_icrc2_approve", &input)?;
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    match w.kind {
        tool_host_tests::ledgers::LedgerKind::Test => {
            ensure_eq!(outcome(&r), "fail", "{}", r.content);
            let i = w.intent(p.id)?;
            ensure_eq!(i.status, "settled");
            let reply: serde_json::Value = serde_json::from_str(&i.reply.unwrap_or_default())?;
            ensure_eq!(reply["Err"]["GenericError"]["error_code"], "5", "{reply}");
        }
        tool_host_tests::ledgers::LedgerKind::Cycles => {
            ensure_eq!(outcome(&r), "unknown", "{}", r.content);
            let i = w.intent(p.id)?;
            let a = last_attempt(&i)?;
            ensure_eq!(a.reject_code, Some(5));
            ensure!(
                a.message
                    .as_deref()
                    .unwrap_or("")
                    .contains("self approval is not allowed"),
                "{:?}",
                a.message
            );
            run_reconciliation(w)?;
            let i = w.intent(p.id)?;
            ensure_eq!(i.status, "settled");
            ensure_eq!(
                i.outcome.as_deref(),
                Some("not_executed"),
                "{:?}",
                i.finding
            );
        }
    }
    nothing_sent(w, log)
}
