//! Sending a confirmed intent: the in-flight mark, its watchdog and the journal before every
//! await, the call, the reply's class, and the outcome table after it. Only the send that made
//! an attempt applies that attempt's reply; nothing after an await can trap.

use crate::auth;
use crate::catalog;
use crate::errors::*;
use crate::model::{Attempt, AttemptResult, InFlight, Intent, Status, StoredName, TaskKind};
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
use std::collections::BTreeMap;
use std::rc::Rc;
use tool_host_core::read::{read_tool_input, Canister, NameEntry, ReadContext};
use tool_host_core::{codec, display};

pub const SEC: u64 = 1_000_000_000;
/// ICRC-1's deduplication window and permitted drift: a stamp older than both can never be
/// deduplicated (or accepted) again, so its floor need not be kept longer.
pub const DEDUP_WINDOW_NS: u64 = 24 * 3_600 * SEC;
pub const PERMITTED_DRIFT_NS: u64 = 60 * SEC;
/// How long a stamp's floor is kept after it was handed out (and its intent at least as long).
pub const FLOOR_KEEP_NS: u64 = DEDUP_WINDOW_NS + 2 * PERMITTED_DRIFT_NS;

/// When the watchdog gives up on a send whose calls are bounded by `timeout` seconds: the
/// journal read and the send each end by their deadline, and the callback runs soon after.
pub fn watchdog_delay(timeout_seconds: u32) -> u64 {
    (2 * timeout_seconds as u64 + 300) * SEC
}

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
    /// The attempt this send made (the intent's attempt count once marked).
    attempt: u32,
    tool: catalog::ToolRef,
    /// The canisters as the send was checked against, carried across the await: the reply
    /// is classed and an intent stamped again with them, so that nothing after the await
    /// builds the catalog (a build after a change made meanwhile, say a refs refresh, grows
    /// with forms and canisters, and a trap there would lose the reply).
    canisters: Rc<Vec<Canister>>,
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
        let mut i = s.intents.get(&id).ok_or_else(|| err(ErrorCode::NotFound, format!("no intent {id}")))?;
        if i.owner != caller {
            return Err(err(ErrorCode::NotOwner, format!("only the owner of intent {id} confirms it")));
        }
        match i.status {
            Status::Done | Status::Settled => return Ok(Err(settled_answer(&i))),
            Status::InFlight => return Err(err(ErrorCode::InFlight, format!("a send of intent {id} is in flight; its outcome comes first"))),
            Status::Reconcile => return Err(err(ErrorCode::Held, format!("intent {id} is held until reconciliation finds the original or reports it absent; it is never sent again"))),
            Status::Open | Status::Unknown => {}
        }
        if digest != i.digest {
            return Err(err(ErrorCode::DigestMismatch, format!("the digest does not match intent {id}'s current preview (it may have been stamped again); read the intent and confirm what it shows")));
        }
        if i.status == Status::Open && now > i.expires_at {
            settle(s, &mut i, now, "expired", Some("the preview expired before it was confirmed".into()));
            s.put_intent(i.clone());
            return Ok(Err(settled_answer(&i)));
        }
        let cat = catalog::current(s);
        let tool = cat.tool(&i.tool).ok_or_else(|| err(ErrorCode::NotFound, format!("the tool {} is no longer offered; its form was removed", i.tool)))?;
        // The intent's own form's tool, not another's of the same name (its own was refused
        // since, say by a rule an upgrade added, and its name given to another form).
        if tool.plan().form.id != i.form_id {
            return Err(err(ErrorCode::NotFound, format!("the tool {} is no longer offered by form {}, which intent {id} was prepared with; nothing was sent", i.tool, i.form_id)));
        }
        let journal = i.has_stamp() && cat.icrc3.contains(&i.canister);
        let canisters = cat.canisters.clone();
        // Whose funds move, checked again on the exact bytes about to be sent.
        if crate::custody::covers(&i.method) {
            crate::custody::check(&i.method, &i.arg, i.owner)?;
        } else {
            crate::tools::recheck_bytes(tool.plan(), &tool.types, &canisters, &i)?;
        }
        crate::tools::target_access(s, &i.tool, i.canister, i.owner)?;
        let timeout = s.limits().call_timeout_seconds;
        i.before_send = Some(i.status);
        i.status = Status::InFlight;
        i.confirm_requested_at = None;
        i.updated_at = now;
        i.attempts.push(Attempt { at: now, digest: i.digest, result: AttemptResult::Pending, log_length: None });
        let attempt = i.attempts.len() as u32;
        let watchdog_at = now.saturating_add(watchdog_delay(timeout));
        s.in_flight.insert(id, InFlight { attempt, log_length: None, journals: journal, watchdog_at });
        s.schedule_watchdog(watchdog_at, id);
        s.put_intent(i.clone());
        Ok(Ok(Prepared { intent: i, attempt, tool, canisters, journal, timeout }))
    })?;
    rt.mark("confirm: marked in flight");
    // Armed before any answer: a preview settled here as expired has its prune task due.
    schedule::arm_new(rt);
    let p = match step {
        Ok(p) => p,
        Err(answer) => return Ok(answer),
    };
    if p.journal {
        // The target's log length, journaled before the send: reconciliation starts there.
        match reconcile::read_log_length(rt, p.intent.canister, p.timeout).await {
            Ok(n) => {
                rt.mark("confirm: log length read");
                // Re-checked after the await: a watchdog or an upgrade may have moved the
                // intent on; then this send sends nothing.
                if !rt.with_state(|s| s.journal_log_length(id, p.attempt, n)) {
                    return Ok(moved_on(rt, id));
                }
                rt.mark("confirm: journaled");
            }
            Err(m) => {
                return Ok(finish(
                    rt,
                    id,
                    p,
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
    let no_refs = Default::default();
    let refs = p
        .canisters
        .iter()
        .find(|c| c.id == p.intent.canister)
        .map_or(&no_refs, |c| &c.refs);
    let result = classify(&p.tool, reply, refs);
    rt.mark("confirm: classified");
    let answer = finish(rt, id, p, result);
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

/// The answer of a send whose intent moved on during its await (the watchdog, or a forced
/// upgrade, made its outcome unknown): its reply is not applied, and the intent is reconciled.
fn moved_on<R: Runtime>(rt: &R, id: u64) -> ToolResult {
    let now = rt.now();
    let answer = rt.with_state(|s| match s.intents.get(&id) {
        Some(mut i) => {
            if ensure_tasks(s, &mut i, now) {
                s.put_intent(i.clone());
            }
            results::error(
                format!("Intent {id} moved on during this send (its outcome was made unknown); this send's reply is not applied, and the intent is reconciled from the target's history."),
                Answer::of(&i),
                Some("unknown"),
            )
        }
        None => results::error(
            format!("intent {id} vanished during its send"),
            json!({ "intent_id": id.to_string() }),
            Some("unknown"),
        ),
    });
    schedule::arm_new(rt);
    answer
}

/// After the await: applies the outcome table and answers, if this send is still the intent's
/// send in flight.
fn finish<R: Runtime>(rt: &R, id: u64, p: Prepared, result: SendResult) -> ToolResult {
    let now = rt.now();
    let ours = rt.with_state(|s| s.in_flight.get(&id).filter(|e| e.attempt == p.attempt));
    let Some(journal) = ours else {
        return moved_on(rt, id);
    };
    let tool = p.tool;
    let canisters = p.canisters;
    let answer = rt.with_state(|s| {
        // Still this send's: nothing but this finish changes an intent in flight, so the copy
        // carried across the await is what is stored.
        let mut i = p.intent;
        i.record_log_length(journal.log_length);
        let management = i.canister == Principal::management_canister();
        let (word, follow) = outcome::apply(&mut i, &result, management);
        i.updated_at = now;
        let mut restamp_issue = None;
        match follow {
            Follow::Nothing => {}
            Follow::Reconcile => schedule_reconcile(s, &mut i, now),
            Follow::Restamp { cap } => {
                if let Err(e) = restamp(s, &mut i, &tool, &canisters, now, cap) {
                    let (word, why) = match e {
                        RestampError::Input(why) => ("fix_input", why),
                        RestampError::Stamp(why) => ("fail", why),
                    };
                    restamp_issue = Some(why.clone());
                    settle(s, &mut i, now, word, Some(format!("could not be stamped again: {why}")));
                }
            }
        }
        if i.status.is_final() && i.settled_at.is_none() {
            let word = i.outcome.clone().unwrap_or_default();
            let finding = i.finding.clone();
            settle(s, &mut i, now, &word, finding);
        }
        ensure_tasks(s, &mut i, now);
        let outcome_word = i.outcome.clone().unwrap_or_else(|| word.to_string());
        let mut v = Answer::of(&i);
        v.outcome = Some(&outcome_word);
        // This send's word (`not_executed`, `retry_same`, ...) is about this send only: an
        // earlier one may have executed, and the answer says so, as a decline's does.
        if i.had_unknown && !i.status.is_final() && outcome_word != "unknown" {
            v.earlier_outcome = Some("unknown");
        }
        if let Some(why) = restamp_issue {
            v.restamp_error = Some(why);
        }
        let text = match outcome_word.as_str() {
            "retry_new" if i.status == Status::Open => format!("Intent {id}: the target asked for a new stamp; a new preview waits for the owner's confirmation: {}", i.summary),
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
        let failed = matches!(outcome_word.as_str(), "fail" | "fix_input" | "unknown" | "reconcile" | "not_executed" | "expired");
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

/// Gives a send that will never be finished (its callback trapped or was lost in an upgrade)
/// an unknown outcome, and schedules its reconciliation.
pub fn abandon_send<M: Memory>(
    s: &mut State<M>,
    i: &mut Intent,
    journal: &InFlight,
    now: u64,
    why: &str,
) {
    i.record_log_length(journal.log_length);
    let management = i.canister == Principal::management_canister();
    // A send that journals first made no call before its journal was written.
    let result = if journal.journals && journal.log_length.is_none() {
        SendResult::NotSent(format!(
            "{why}; the call itself was not made yet (no log length was journaled)"
        ))
    } else {
        SendResult::Undecodable(why.to_string())
    };
    let (_, follow) = outcome::apply(i, &result, management);
    if follow == Follow::Reconcile {
        schedule_reconcile(s, i, now);
    }
    i.updated_at = now;
    ensure_tasks(s, i, now);
}

/// Makes sure an intent has the task that moves it on, whatever happened to it meanwhile: an
/// open preview its expiry (or it expires now, if that passed during a send), an unknown or
/// held one with a stamp its reconciliation. Answers whether the intent changed.
pub fn ensure_tasks<M: Memory>(s: &mut State<M>, i: &mut Intent, now: u64) -> bool {
    match i.status {
        Status::Open if now >= i.expires_at => {
            settle(
                s,
                i,
                now,
                "expired",
                Some(
                    "the preview expired while it was being sent, and that send was not executed"
                        .into(),
                ),
            );
            true
        }
        Status::Open => {
            if !s.has_expiry(i.expires_at, i.id) {
                s.schedule_expiry(i.expires_at, i.id, false);
            }
            false
        }
        _ if i.needs_reconcile() => {
            let scheduled = i
                .reconcile_at
                .is_some_and(|at| s.due.contains_key(&TaskKind::Reconcile.key(at, i.id)));
            if !scheduled {
                schedule_reconcile(s, i, now);
            }
            !scheduled
        }
        _ => false,
    }
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
    if let Some(at) = i.reconcile_at.take() {
        s.due.remove(&TaskKind::Reconcile.key(at, i.id));
    }
    // Before its preview's expiry an intent's EXPIRE task is still due, and schedules the prune
    // when it runs (schedule.rs): a send settling in time writes no task of its own.
    if now >= i.expires_at {
        schedule_prune(s, i, now, PruneBy::Message);
    }
}

/// When a settled intent may be removed: after the retention period, and not before its stamp
/// has passed every ledger's deduplication window (its floor goes with it).
pub fn prune_due<M: Memory>(s: &State<M>, i: &Intent) -> u64 {
    let retention = s.limits().retention_seconds.saturating_mul(SEC);
    let settled = i.settled_at.unwrap_or(i.updated_at);
    let mut due = settled.saturating_add(retention);
    if let Some(stamp) = i.highest_stamp() {
        due = due.max(stamp.saturating_add(FLOOR_KEEP_NS));
    }
    due
}

/// When a settled intent's stamp floor may go: its highest stamp past every ledger's window.
pub fn floor_release_at(i: &Intent) -> Option<u64> {
    i.highest_stamp().map(|t| t.saturating_add(FLOOR_KEEP_NS))
}

/// Who moves a settled intent's prune task: a task of the timer (the prune and expiry tasks,
/// and the benchmark's fill standing in for them), or a message that settled the intent (a
/// confirm, a send's reply, a reconciliation, a decline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PruneBy {
    Task,
    Message,
}

/// The settled intent's prune task: first when its floor may go, if that is before its
/// removal, else when it is due (see [`prune_due`]); a floor whose time has come goes now.
/// Floors are kept about a day rather than the retention period: fewer of them to search on
/// every prepare, and less stable memory per intent kept. When the floor goes the body is
/// packed (`IntentStore::pack`: settled and past every window, the intent is only read from
/// then on; a transfer's body takes one chunk of the slab instead of four), by a task only:
/// a message that settles an intent after its floor's time (whose floor goes as it settles)
/// leaves the packing to the prune task, due now, in a message of its own, so no confirm,
/// reply or reconciliation pays for it or reads the body for it.
pub fn schedule_prune<M: Memory>(s: &mut State<M>, i: &Intent, now: u64, by: PruneBy) {
    let due = prune_due(s, i);
    let at = match floor_release_at(i) {
        Some(release) if release <= now => {
            s.release_floor(i.owner, i.identity, i.highest_stamp());
            match by {
                PruneBy::Task => {
                    s.intents.pack(i.id);
                    due
                }
                PruneBy::Message => now.min(due),
            }
        }
        Some(release) if release < due => release,
        _ => due,
    };
    s.schedule(at, TaskKind::Prune, i.id);
}

/// Schedules the intent's one reconcile task at the next back-off step (replacing any other).
pub fn schedule_reconcile<M: Memory>(s: &mut State<M>, i: &mut Intent, now: u64) {
    let base = s.limits().reconcile_delay_seconds.saturating_mul(SEC);
    // Backs off: 1, 2, 4, ... times the delay, at most an hour.
    let factor = 1u64 << i.reconcile_tries.min(12);
    let delay = base.saturating_mul(factor).min(3_600 * SEC);
    schedule_reconcile_at(s, i, now.saturating_add(delay));
}

/// Moves the intent's one reconcile task to `at`.
pub fn schedule_reconcile_at<M: Memory>(s: &mut State<M>, i: &mut Intent, at: u64) {
    if let Some(old) = i.reconcile_at.take() {
        s.due.remove(&TaskKind::Reconcile.key(old, i.id));
    }
    s.schedule(at, TaskKind::Reconcile, i.id);
    i.reconcile_at = Some(at);
}

/// Why an intent could not be stamped again.
pub enum RestampError {
    /// The stored input no longer reads (refs changed, the canister is gone).
    Input(String),
    /// No stamp above the arguments' floor that the target would accept.
    Stamp(String),
}

/// The stamp for a new or re-stamped intent: above every stamp handed out for the same
/// arguments (`floor`), at the clock, or for a `CreatedInFuture` capped by the target's
/// `ledger_time`. A cap that would go to or below the floor is moved just above it if the
/// target still accepts that, else refused (nothing is sent).
pub fn choose_stamp(now: u64, cap: Option<u64>, floor: Option<u64>) -> Result<u64, String> {
    let above = |f: Option<u64>, t: u64| f.map_or(t, |f| t.max(f.saturating_add(1)));
    let Some(ledger_time) = cap else {
        return Ok(above(floor, now));
    };
    let candidate = now.min(ledger_time);
    if candidate.saturating_add(DEDUP_WINDOW_NS) < now {
        return Err(format!(
            "the target's clock ({ledger_time}) is more than a day behind the tool host's ({now})"
        ));
    }
    match floor {
        Some(f) if candidate <= f => {
            let next = f.saturating_add(1);
            // Still well inside the drift the target permits after its own time.
            if next <= ledger_time.saturating_add(PERMITTED_DRIFT_NS / 2) {
                Ok(next)
            } else {
                Err(format!("the target's clock ({ledger_time}) is not yet past the last stamp handed out for these arguments ({f}); a stamp at or below it could repeat an earlier transaction; prepare it again when the target's clock has passed it"))
            }
        }
        _ => Ok(candidate),
    }
}

/// The name sets an intent's input used, as the reader takes them.
pub fn names_map(names: &[StoredName]) -> BTreeMap<String, Vec<NameEntry>> {
    let mut out: BTreeMap<String, Vec<NameEntry>> = BTreeMap::new();
    for n in names {
        if let Some(value) = n.value.to_value() {
            out.entry(n.set.clone()).or_default().push(NameEntry {
                name: n.name.clone(),
                value,
            });
        }
    }
    out
}

/// retry_new: reads the stored input again against a new stamp (above the arguments' floor;
/// capped by the ledger's time for CreatedInFuture) with the names it was prepared with, makes
/// new bytes, a new stamp and memo, and a new preview to confirm.
fn restamp<M: Memory>(
    s: &mut State<M>,
    i: &mut Intent,
    tool: &catalog::ToolRef,
    canisters: &[Canister],
    now: u64,
    cap: Option<u64>,
) -> Result<(), RestampError> {
    let plan = tool.plan();
    // A plain re-stamp goes above every stamp of these arguments; a cap above those of the
    // intents before this one, and never onto this intent's own last stamp.
    let floor = match cap {
        None => s.stamp_floor(i.owner, i.identity),
        Some(_) => i.prior_floor,
    };
    let stamp = choose_stamp(now, cap, floor).map_err(RestampError::Stamp)?;
    if Some(stamp) == i.stamp_ns {
        return Err(RestampError::Stamp(format!(
            "the target's clock gives this intent's own last stamp ({stamp}) again"
        )));
    }
    // The canisters the send was checked against (the catalog is not built after the await),
    // the target read again from its record: its refs (decimals, fee) may have changed during
    // the call, and the new preview reads the input with those the target has now.
    let target = s
        .targets
        .get(&i.canister)
        .ok_or_else(|| RestampError::Input("the target canister is no longer registered".into()))?;
    let canister = catalog::target_canister(i.canister, &target);
    let canisters: Vec<Canister> = canisters
        .iter()
        .map(|c| {
            if c.id == i.canister {
                canister.clone()
            } else {
                c.clone()
            }
        })
        .collect();
    let names = names_map(&i.names);
    let ctx = ReadContext {
        canisters: &canisters,
        now_ns: Some(stamp),
        owner: Some(i.owner),
        names: (!i.names.is_empty()).then_some(&names),
        memo: None,
    };
    let input: serde_json::Value = serde_json::from_str(&i.input_json)
        .map_err(|e| RestampError::Input(format!("the stored input is not JSON: {e}")))?;
    let out = read_tool_input(plan, &input, &ctx).map_err(|issues| {
        RestampError::Input(
            issues
                .iter()
                .map(|x| format!("{} {}", x.code, x.message))
                .collect::<Vec<_>>()
                .join("; "),
        )
    })?;
    let bytes =
        codec::encode_args_with(plan, &tool.types, &out.args).map_err(RestampError::Input)?;
    let preview = display::preview_without_hex(plan, &out, &canister, &i.id.to_string());
    let ttl = s.limits().preview_ttl_seconds.saturating_mul(SEC);
    if let Some(stamp) = out.stamp_ns {
        s.raise_stamp_floor(i.owner, i.identity, stamp);
        i.max_stamp = Some(i.max_stamp.map_or(stamp, |m| m.max(stamp)));
    }
    i.digest = Sha256::digest(&bytes).into();
    i.arg = bytes;
    i.stamp_ns = out.stamp_ns;
    i.memo = out.memo;
    i.summary = results::summary(&preview);
    // Stored without its `arg_hex` (the intent keeps the bytes): `Intent::preview_text`.
    i.preview_json = serde_json::to_string(&preview).unwrap_or_default();
    i.generation += 1;
    i.status = Status::Open;
    i.scan = None;
    // The old preview's expiry goes with it.
    s.remove_expiry(i.expires_at, i.id);
    i.expires_at = now.saturating_add(ttl);
    s.schedule_expiry(i.expires_at, i.id, true);
    Ok(())
}

/// Whether the intent's current bytes were ever sent (a re-stamp makes bytes never sent).
fn current_bytes_sent(i: &Intent) -> bool {
    i.attempts
        .iter()
        .any(|a| a.digest == i.digest && a.result.may_have_executed())
}

/// The owner's decline: settles an intent that was never sent; after a send it stays as it is
/// (with `earlier_outcome: "unknown"` after an unknown outcome: the earlier send may have executed).
pub fn decline<R: Runtime>(
    rt: &R,
    caller: Principal,
    id: u64,
    digest: Option<&[u8]>,
) -> ApiResult<ToolResult> {
    auth::user(&caller)?;
    let now = rt.now();
    let r = rt.with_state(|s| {
        let mut i = s
            .intents
            .get(&id)
            .ok_or_else(|| err(ErrorCode::NotFound, format!("no intent {id}")))?;
        if i.owner != caller {
            return Err(err(
                ErrorCode::NotOwner,
                format!("only the owner of intent {id} declines it"),
            ));
        }
        if digest.is_some_and(|d| d != i.digest) {
            return Err(err(ErrorCode::DigestMismatch, format!("the digest does not match intent {id}'s current preview; read the intent and decline what it shows")));
        }
        match i.status {
            Status::Done | Status::Settled => {
                return Err(err(
                    ErrorCode::Settled,
                    format!("intent {id} is already {}", i.status.as_str()),
                ))
            }
            Status::InFlight => {
                return Err(err(
                    ErrorCode::InFlight,
                    format!("a send of intent {id} is in flight"),
                ))
            }
            _ => {}
        }
        let sent_before = !i.attempts.is_empty();
        if !sent_before {
            settle(s, &mut i, now, "declined", None);
            s.put_intent(i.clone());
        } else if ensure_tasks(s, &mut i, now) {
            s.put_intent(i.clone());
        }
        let mut v = Answer::of(&i);
        if sent_before && i.had_unknown {
            v.earlier_outcome = Some("unknown");
        }
        v.outcome = Some("declined");
        let text = if !sent_before {
            format!("Intent {id} declined and settled; nothing was sent.")
        } else if i.status.is_final() {
            format!("Intent {id} declined: nothing was sent now; it is settled ({}).", i.outcome.as_deref().unwrap_or("settled"))
        } else {
            format!(
                "Intent {id} declined: nothing was sent now. It stays {} because it was sent before{}; confirming it later sends {}.",
                i.status.as_str(),
                if i.had_unknown { " with an unknown outcome (that send may have executed)" } else { "" },
                if current_bytes_sent(&i) { "the same bytes" } else { "the bytes of its current preview (stamped again after the target asked for a new stamp)" }
            )
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
