//! Sending a confirmed intent: the in-flight mark and the journal before every await, the call,
//! the reply's class, and the outcome table after it. Nothing after an await can trap.

use crate::auth;
use crate::catalog;
use crate::errors::*;
use crate::model::{task, Attempt, AttemptResult, Intent, Status};
use crate::outcome::{self, Follow, SendResult};
use crate::reconcile;
use crate::results::{self, Answer};
use crate::runtime::{CallOutcome, Runtime};
use crate::schedule;
use crate::state::State;
use crate::types::*;
use candid::{IDLValue, Principal};
use ic_stable_structures::Memory;
use serde_json::json;
use sha2::{Digest, Sha256};
use tool_host_core::read::{read_tool_input_text, ReadContext};
use tool_host_core::{codec, display};

/// The answer for an intent that is settled: its outcome again, without sending.
pub fn settled_answer(i: &Intent) -> ToolResult {
    let mut v = Answer::of(i);
    let word = match i.status {
        Status::Done => "already_done",
        _ => i.outcome.as_deref().unwrap_or("settled"),
    };
    v.outcome = Some(word);
    let text = format!(
        "Intent {} is {} ({word}); nothing was sent.",
        i.id,
        i.status.as_str()
    );
    if i.status == Status::Done {
        results::ok(text, v, Some(word))
    } else {
        results::error(text, v, Some(word))
    }
}

struct Prepared {
    /// The intent as stored in flight: only this send's `finish` changes it until then.
    intent: Intent,
    tool: catalog::ToolRef,
    journal: bool,
    timeout: u32,
}

/// The owner's confirmed send of one preview (`confirm`, or `commit` with the digest).
pub async fn send<R: Runtime>(
    rt: &R,
    caller: Principal,
    id: u64,
    digest: &[u8],
) -> ApiResult<ToolResult> {
    auth::user(&caller)?;
    let now = rt.now();
    // Checked and marked in flight in one step, before any await: the lock against a second send.
    let step = rt.with_state(|s| -> ApiResult<Result<Prepared, ToolResult>> {
        let mut i = s.intents.get(&id).ok_or_else(|| err(NOT_FOUND, format!("no intent {id}")))?;
        if i.owner != caller {
            return Err(err(NOT_OWNER, format!("only the owner of intent {id} confirms it")));
        }
        match i.status {
            Status::Done | Status::Settled => return Ok(Err(settled_answer(&i))),
            Status::InFlight => return Err(err(IN_FLIGHT, format!("a send of intent {id} is in flight; its outcome comes first"))),
            Status::Reconcile => return Err(err(HELD, format!("intent {id} is held until reconciliation finds the original or reports it absent; it is never sent again"))),
            Status::Open | Status::Unknown => {}
        }
        if digest != i.digest {
            return Err(err(DIGEST_MISMATCH, format!("the digest does not match intent {id}'s current preview (it may have been stamped again); read the intent and confirm what it shows")));
        }
        if i.status == Status::Open && now > i.expires_at {
            settle(s, &mut i, now, "expired", Some("the preview expired before it was confirmed".into()));
            s.put_intent(i.clone());
            return Ok(Err(settled_answer(&i)));
        }
        let cat = catalog::current(s);
        let tool = cat.tool(&i.tool).ok_or_else(|| err(NOT_FOUND, format!("the tool {} is no longer offered; its form was removed", i.tool)))?;
        let journal = i.has_stamp() && cat.icrc3.contains(&i.canister);
        i.before_send = Some(i.status);
        i.status = Status::InFlight;
        i.confirm_requested_at = None;
        i.updated_at = now;
        i.attempts.push(Attempt { at: now, digest: i.digest, result: AttemptResult::Pending });
        s.put_intent(i.clone());
        Ok(Ok(Prepared { intent: i, tool, journal, timeout: s.limits().call_timeout_seconds }))
    })?;
    rt.mark("confirm: marked in flight");
    let p = match step {
        Ok(p) => p,
        Err(answer) => return Ok(answer),
    };
    if p.journal {
        // The target's log length, journaled before the send: reconciliation starts there.
        match reconcile::read_log_length(rt, p.intent.canister, p.timeout).await {
            Ok(n) => {
                rt.mark("confirm: log length read");
                rt.with_state(|s| s.journal_log_length(id, n));
                rt.mark("confirm: journaled");
            }
            Err(m) => {
                return Ok(finish(
                    rt,
                    id,
                    Some(p.intent),
                    &p.tool,
                    SendResult::NotSent(format!(
                        "the target's log length could not be read before the send: {m}"
                    )),
                ))
            }
        }
    }
    let i = &p.intent;
    let reply = rt
        .call(i.canister, &i.method, i.arg.clone(), p.timeout)
        .await;
    rt.mark("confirm: replied");
    let result = rt.with_state(|s| {
        let no_refs = Default::default();
        let refs = catalog::current(s)
            .canister(&p.intent.canister)
            .map_or(&no_refs, |c| &c.refs);
        classify(&p.tool, reply, refs)
    });
    rt.mark("confirm: classified");
    let answer = finish(rt, id, Some(p.intent), &p.tool, result);
    rt.mark("confirm: finished");
    Ok(answer)
}

/// A call's outcome as a send result; decoding and classing cannot fail the caller.
pub fn classify(
    tool: &catalog::ToolRef,
    reply: CallOutcome,
    refs: &std::collections::BTreeMap<String, serde_json::Value>,
) -> SendResult {
    let plan = tool.plan();
    match reply {
        CallOutcome::NotSent(m) => SendResult::NotSent(m),
        CallOutcome::Rejected { code, message } => SendResult::Rejected { code, message },
        CallOutcome::Replied(bytes) => match codec::decode_reply_with(plan, &tool.types, &bytes) {
            Err(e) => SendResult::Undecodable(e),
            Ok(args) => {
                let c = plan.classifier.classify(args.args.first());
                let ledger_time = if c.path.last().map(String::as_str) == Some("CreatedInFuture") {
                    ledger_time(args.args.first(), &c.path)
                } else {
                    None
                };
                let reply_json = display::display_reply(plan, &args, refs).to_string();
                SendResult::Class {
                    class: c.class,
                    path: c.path,
                    reply_json,
                    ledger_time,
                }
            }
        },
    }
}

/// The `ledger_time` of a `CreatedInFuture` error, found along the classified path.
fn ledger_time(v: Option<&IDLValue>, path: &[String]) -> Option<u64> {
    let mut v = v?;
    for label in path {
        while let IDLValue::Opt(inner) = v {
            v = inner;
        }
        v = match v {
            IDLValue::Variant(vv) if crate::names::is_label(&vv.0.id, label) => &vv.0.val,
            IDLValue::Record(fs) => {
                &fs.iter()
                    .find(|f| crate::names::is_label(&f.id, label))?
                    .val
            }
            _ => return None,
        };
    }
    match v {
        IDLValue::Record(fs) => match &fs
            .iter()
            .find(|f| crate::names::is_label(&f.id, "ledger_time"))?
            .val
        {
            IDLValue::Nat64(t) => Some(*t),
            other => {
                tool_host_core::read::value::value_int(other).and_then(|n| u64::try_from(n).ok())
            }
        },
        _ => None,
    }
}

/// After the await: applies the outcome table and answers. Re-checks the intent first.
fn finish<R: Runtime>(
    rt: &R,
    id: u64,
    carried: Option<Intent>,
    tool: &catalog::ToolRef,
    result: SendResult,
) -> ToolResult {
    let now = rt.now();
    let answer = rt.with_state(|s| {
        let journal = s.in_flight.get(&id);
        // Still in flight: nothing but this finish changes it, so the copy carried across the
        // await is what is stored (the in-flight index says so without decoding the intent).
        let stored = match (carried, journal) {
            (Some(i), Some(_)) => Some(i),
            _ => s.intents.get(&id),
        };
        let Some(mut i) = stored else {
            return results::error(format!("intent {id} vanished during its send"), json!({ "intent_id": id.to_string() }), Some("unknown"));
        };
        if i.status != Status::InFlight {
            return results::error(format!("intent {id} changed during its send"), Answer::of(&i), i.outcome.as_deref());
        }
        if let Some(n) = journal.filter(|n| *n != crate::state::NO_LOG_LENGTH) {
            i.log_length = Some(n);
        }
        let management = i.canister == Principal::management_canister();
        let (word, follow) = outcome::apply(&mut i, &result, management);
        i.updated_at = now;
        let mut restamp_issue = None;
        match follow {
            Follow::Nothing => {}
            Follow::Reconcile => schedule_reconcile(s, &mut i, now),
            Follow::Restamp { cap } => {
                if let Err(why) = restamp(s, &mut i, tool, now, cap) {
                    // The input no longer reads (refs changed): nothing to send again.
                    restamp_issue = Some(why.clone());
                    settle(s, &mut i, now, "fix_input", Some(format!("could not be stamped again: {why}")));
                }
            }
        }
        if i.status.is_final() && i.settled_at.is_none() {
            let word = i.outcome.clone().unwrap_or_default();
            let finding = i.finding.clone();
            settle(s, &mut i, now, &word, finding);
        }
        let outcome_word = i.outcome.clone().unwrap_or_else(|| word.to_string());
        let mut v = Answer::of(&i);
        v.outcome = Some(&outcome_word);
        if let Some(why) = restamp_issue {
            v.restamp_error = Some(why);
        }
        let text = match word {
            "retry_new" => format!("Intent {id}: the target asked for a new stamp; a new preview waits for the owner's confirmation: {}", i.summary),
            w => {
                // Every send ends here: pushed, not formatted.
                let mut t = String::with_capacity(32 + w.len() + i.summary.len());
                t.push_str("Intent ");
                t.push_str(&id.to_string());
                t.push_str(": ");
                t.push_str(w);
                t.push_str(" (");
                t.push_str(i.status.as_str());
                t.push_str("): ");
                t.push_str(&i.summary);
                t
            }
        };
        let failed = matches!(outcome_word.as_str(), "fail" | "fix_input" | "unknown" | "reconcile" | "not_executed");
        let answer = if failed {
            results::error(text, v, Some(&outcome_word))
        } else {
            results::ok(text, v, Some(&outcome_word))
        };
        s.put_intent(i);
        answer
    });
    // A send only adds tasks (a reconciliation, a new preview's expiry, a prune).
    schedule::arm_new(rt);
    answer
}

/// Settles an intent: final status, the outcome word, and its removal after the retention period.
pub fn settle<M: Memory>(
    s: &mut State<M>,
    i: &mut Intent,
    now: u64,
    word: &str,
    finding: Option<String>,
) {
    if !i.status.is_final() {
        i.status = Status::Settled;
    }
    i.outcome = Some(word.to_string());
    if finding.is_some() {
        i.finding = finding;
    }
    i.settled_at = Some(now);
    i.updated_at = now;
    // Before its preview's expiry an intent's EXPIRE task is still due, and schedules the prune
    // when it runs (schedule.rs): a send settling in time writes no task of its own.
    if now >= i.expires_at {
        schedule_prune(s, i);
    }
}

/// The task that removes a settled intent once the retention period has passed.
pub fn schedule_prune<M: Memory>(s: &mut State<M>, i: &Intent) {
    let retention = s.limits().retention_seconds.saturating_mul(1_000_000_000);
    let settled = i.settled_at.unwrap_or(i.updated_at);
    s.schedule(settled.saturating_add(retention), task::PRUNE, i.id);
}

pub fn schedule_reconcile<M: Memory>(s: &mut State<M>, i: &mut Intent, now: u64) {
    let base = s
        .limits()
        .reconcile_delay_seconds
        .saturating_mul(1_000_000_000);
    // Backs off: 1, 2, 4, ... times the delay, at most an hour.
    let factor = 1u64 << i.reconcile_tries.min(12);
    let delay = base.saturating_mul(factor).min(3_600_000_000_000);
    s.schedule(now.saturating_add(delay), task::RECONCILE, i.id);
}

/// retry_new: reads the stored input again against a new clock (capped by the ledger's time for
/// CreatedInFuture), makes new bytes, a new stamp and memo, and a new preview to confirm.
fn restamp<M: Memory>(
    s: &mut State<M>,
    i: &mut Intent,
    tool: &catalog::ToolRef,
    now: u64,
    cap: Option<u64>,
) -> Result<(), String> {
    let plan = tool.plan();
    let stamp = match cap {
        Some(ledger_time) => now.min(ledger_time),
        None => now,
    };
    let cat = catalog::current(s);
    let canisters = cat.canisters.clone();
    let canister = cat
        .canister(&i.canister)
        .cloned()
        .ok_or("the target canister is no longer registered")?;
    let ctx = ReadContext {
        canisters: &canisters,
        now_ns: Some(stamp),
        owner: Some(i.owner),
        names: None,
        memo: None,
    };
    let out = read_tool_input_text(plan, &i.input_json, &ctx).map_err(|issues| {
        issues
            .iter()
            .map(|x| format!("{} {}", x.code, x.message))
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    let bytes = codec::encode_args_with(plan, &tool.types, &out.args)?;
    let preview = display::preview(plan, &out, &canister, &bytes, &i.id.to_string());
    let ttl = s.limits().preview_ttl_seconds.saturating_mul(1_000_000_000);
    i.digest = Sha256::digest(&bytes).into();
    i.arg = bytes;
    i.stamp_ns = out.stamp_ns;
    i.memo = out.memo;
    i.summary = results::summary(&preview);
    i.preview_json = serde_json::to_string(&preview).unwrap_or_default();
    i.generation += 1;
    i.status = Status::Open;
    i.expires_at = now.saturating_add(ttl);
    s.schedule(i.expires_at, task::EXPIRE, i.id);
    Ok(())
}

/// The owner's decline: settles an intent that was never sent; after a send it stays as it is
/// (with `earlier_outcome: "unknown"` after an unknown outcome: the earlier send may have executed).
pub fn decline<R: Runtime>(rt: &R, caller: Principal, id: u64) -> ApiResult<ToolResult> {
    auth::user(&caller)?;
    let now = rt.now();
    let r = rt.with_state(|s| {
        let mut i = s
            .intents
            .get(&id)
            .ok_or_else(|| err(NOT_FOUND, format!("no intent {id}")))?;
        if i.owner != caller {
            return Err(err(
                NOT_OWNER,
                format!("only the owner of intent {id} declines it"),
            ));
        }
        match i.status {
            Status::Done | Status::Settled => {
                return Err(err(
                    SETTLED,
                    format!("intent {id} is already {}", i.status.as_str()),
                ))
            }
            Status::InFlight => {
                return Err(err(
                    IN_FLIGHT,
                    format!("a send of intent {id} is in flight"),
                ))
            }
            _ => {}
        }
        let sent_before = !i.attempts.is_empty();
        if !sent_before {
            settle(s, &mut i, now, "declined", None);
            s.put_intent(i.clone());
        }
        let mut v = Answer::of(&i);
        if sent_before && i.had_unknown {
            v.earlier_outcome = Some("unknown");
        }
        v.outcome = Some("declined");
        let text = if sent_before {
            format!(
                "Intent {id} declined: nothing was sent now. It stays {} because it was sent before{}; confirming it later sends the same bytes.",
                i.status.as_str(),
                if i.had_unknown { " with an unknown outcome (that send may have executed)" } else { "" }
            )
        } else {
            format!("Intent {id} declined and settled; nothing was sent.")
        };
        Ok(results::ok(
            text,
            v,
            Some("declined"),
        ))
    });
    schedule::rearm(rt);
    r
}

/// The owner's confirmation through the Candid method `confirm`.
pub async fn confirm<R: Runtime>(
    rt: &R,
    caller: Principal,
    args: ConfirmArgs,
) -> ApiResult<ToolResult> {
    send(rt, caller, args.intent_id, &args.digest).await
}
