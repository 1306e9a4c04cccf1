//! The builtins' effects: the pure ones answer from the core; `finish` records a turn's
//! answer; `escalate` records the request in the owner's inbox and, when the owner configured a
//! handler, calls it, saying `delivered: true` only when the handler answered `Ok`.

use super::records::{Delivery, InboxEntry};
use super::turns::{self, StepRef};
use crate::auth;
use crate::errors::*;
use crate::model::TaskKind;
use crate::results;
use crate::runtime::{CallOutcome, Runtime};
use crate::send::SEC;
use crate::state::State;
use crate::types::*;
use candid::Principal;
use ic_stable_structures::Memory;
use serde_json::{json, Value};
use tool_host_core::builtin::{self, Builtin};

/// Escalations one owner's inbox keeps. At the bound the oldest delivered entry makes room (a
/// person has it through the handler); if none was delivered, the escalation is refused with
/// `LIMIT`, and the model is told nobody was reached. Entries older than the retention the
/// limits give intents are pruned by the timer (and at the owner's next escalation). 48 so
/// that `get_inbox` answers a full inbox in one 2 MiB reply (a replicated call's bound: an
/// owner may be a canister): the largest entry the schema allows (1 024 + 8 192 characters of
/// four bytes, the handler's text cut at 512 bytes) is about 37.5 KB, 64 of them 2.4 MB.
pub const MAX_INBOX_PER_OWNER: usize = 48;
/// Escalations the host keeps, all owners together (principals are free: the per-owner bound
/// alone would not bound the memory). At the bound an escalation is refused with `LIMIT`.
pub const MAX_INBOX_TOTAL: u64 = 100_000;
/// Owners with an escalation handler, all together: any principal may set one, and
/// principals are free, so the map is bounded as agent authorizations are. At the bound a new
/// owner's handler is refused with `LIMIT`; one already set may be changed or removed.
pub const MAX_ESCALATION_HANDLERS: u64 = 100_000;
/// The method an escalation handler implements.
pub const HANDLER_METHOD: &str = "tool_host_escalation";

/// Runs an enabled builtin for `owner` (its step, if in a turn, is already written).
pub async fn call<R: Runtime>(
    rt: &R,
    caller: Principal,
    owner: Principal,
    b: Builtin,
    input: &Value,
    step: Option<StepRef>,
    zone: &str,
) -> ApiResult<ToolResult> {
    match b {
        Builtin::Finish => {
            let Some(step) = step else {
                return Err(err(
                    ErrorCode::InvalidArgument,
                    "finish ends a turn: call it with the turn's id (call_tool's `turn`, from begin_turn)",
                ));
            };
            let answer = builtin::read_finish(input).map_err(input_err)?;
            let now = rt.now();
            rt.with_state(|s| turns::finish(s, step, answer.clone(), now))?;
            Ok(results::ok(
                format!("Turn {} is finished.", step.turn),
                json!({ "finished": true, "answer": answer, "turn_id": step.turn.to_string() }),
                None,
            ))
        }
        Builtin::Escalate => escalate(rt, caller, owner, input, step).await,
        pure => {
            let v = builtin::run_pure(pure, input, rt.now(), zone).map_err(input_err)?;
            let content = match &v {
                Value::String(t) => t.clone(),
                other => other.to_string(),
            };
            Ok(results::ok(content, v, None))
        }
    }
}

/// Removes the owner's entries past the retention, then makes room for one more: `Ok` with
/// room, `Err` when the inbox is full of entries nobody was reached for.
fn make_room<M: Memory>(s: &mut State<M>, owner: &Principal, now: u64) -> ApiResult<()> {
    let retention = s.limits().retention_seconds.saturating_mul(SEC);
    let mine: Vec<(u64, u64, bool)> = s
        .inbox
        .range((*owner, 0)..=(*owner, u64::MAX))
        .map(|e| {
            let v = e.value();
            (v.id, v.at, v.delivered())
        })
        .collect();
    let mut kept = mine.len();
    for (id, at, _) in &mine {
        if now >= at.saturating_add(retention) {
            remove_entry(s, owner, *id);
            kept -= 1;
        }
    }
    if kept < MAX_INBOX_PER_OWNER {
        if s.config.get().bus.inbox_kept >= MAX_INBOX_TOTAL {
            return Err(err(
                ErrorCode::Limit,
                format!("the tool host keeps at most {MAX_INBOX_TOTAL} escalations; this one was NOT recorded and nobody was reached"),
            ));
        }
        return Ok(());
    }
    let oldest_delivered = mine
        .iter()
        .filter(|(_, at, _)| now < at.saturating_add(retention))
        .find(|(_, _, delivered)| *delivered);
    match oldest_delivered {
        Some((id, _, _)) => {
            remove_entry(s, owner, *id);
            Ok(())
        }
        None => Err(err(
            ErrorCode::Limit,
            format!("{owner}'s inbox holds {MAX_INBOX_PER_OWNER} escalations that reached nobody; this one was NOT recorded and nobody was reached. The owner reads them with get_inbox; they leave once the retention passes"),
        )),
    }
}

/// Removes an entry, its id's index entry and its prune task.
fn remove_entry<M: Memory>(s: &mut State<M>, owner: &Principal, id: u64) {
    if s.inbox.remove(&(*owner, id)).is_some() {
        s.update_config(|c| c.bus.inbox_kept = c.bus.inbox_kept.saturating_sub(1));
    }
    if let Some((_, prune_at)) = s.inbox_ids.remove(&id) {
        s.due.remove(&TaskKind::PruneInbox.key(prune_at, id));
    }
}

/// Indexes an entry by id and schedules its prune at the end of the retention.
pub fn index_entry<M: Memory>(s: &mut State<M>, owner: Principal, id: u64, at: u64) {
    let prune_at = at.saturating_add(s.limits().retention_seconds.saturating_mul(SEC));
    s.inbox_ids.insert(id, (owner, prune_at));
    s.schedule(prune_at, TaskKind::PruneInbox, id);
}

/// After an upgrade from a build that kept the inbox without its id index: each entry
/// indexed and given its prune task. Reads the inbox (at most `MAX_INBOX_TOTAL` entries) only
/// when the index's count differs from the inbox's; else nothing.
pub fn index_unindexed<M: Memory>(s: &mut State<M>) {
    if s.inbox_ids.len() == s.inbox.len() {
        return;
    }
    let missing: Vec<(Principal, u64, u64)> = s
        .inbox
        .iter()
        .map(|e| e.into_pair().1)
        .filter(|e| !s.inbox_ids.contains_key(&e.id))
        .map(|e| (e.owner, e.id, e.at))
        .collect();
    for (owner, id, at) in missing {
        index_entry(s, owner, id, at);
    }
}

/// The timer's prune of one inbox entry: removed once the retention has passed since it was
/// made (a longer retention set since moves the task on), whether or not its owner escalates
/// again: otherwise an owner that never does would hold the host-wide bound for ever.
pub fn prune<M: Memory>(s: &mut State<M>, id: u64, now: u64) {
    let Some((owner, _)) = s.inbox_ids.get(&id) else {
        return;
    };
    let Some(e) = s.inbox.get(&(owner, id)) else {
        s.inbox_ids.remove(&id);
        return;
    };
    let due =
        e.at.saturating_add(s.limits().retention_seconds.saturating_mul(SEC));
    if now >= due {
        remove_entry(s, &owner, id);
    } else {
        s.inbox_ids.insert(id, (owner, due));
        s.schedule(due, TaskKind::PruneInbox, id);
    }
}

async fn escalate<R: Runtime>(
    rt: &R,
    caller: Principal,
    owner: Principal,
    input: &Value,
    step: Option<StepRef>,
) -> ApiResult<ToolResult> {
    // Reason and summary are bounded by the reader, as the input schema says.
    let req = builtin::read_escalate(input).map_err(input_err)?;
    let now = rt.now();
    let turn = step.map(|s| s.turn);
    // Written before the handler's await: the request is kept whatever the call does.
    let (id, handler, timeout) = rt.with_state(|s| {
        make_room(s, &owner, now)?;
        let handler = s.handlers.get(&owner);
        let mut id = 0;
        s.update_config(|c| {
            c.bus.next_inbox_id += 1;
            c.bus.inbox_kept += 1;
            id = c.bus.next_inbox_id;
        });
        s.inbox.insert(
            (owner, id),
            InboxEntry {
                id,
                owner,
                from: caller,
                turn,
                reason: req.reason.clone(),
                summary: req.summary.clone(),
                at: now,
                handler,
                delivery: if handler.is_some() {
                    Delivery::Pending
                } else {
                    Delivery::NoHandler
                },
            },
        );
        index_entry(s, owner, id, now);
        Ok::<_, ApiError>((id, handler, s.limits().call_timeout_seconds))
    })?;
    crate::schedule::arm_new(rt);
    let delivery = match handler {
        None => Delivery::NoHandler,
        Some(h) => {
            let notice = EscalationNotice {
                owner,
                inbox_id: id,
                turn,
                reason: req.reason.clone(),
                summary: req.summary.clone(),
                at: now,
            };
            // Encoding our own record into a Vec cannot fail.
            let arg = candid::encode_one(&notice).unwrap_or_default();
            let outcome = rt.call(h, HANDLER_METHOD, arg, timeout).await;
            let d = delivery_of(outcome);
            rt.with_state(|s| {
                if let Some(mut e) = s.inbox.get(&(owner, id)) {
                    e.delivery = d.clone();
                    s.inbox.insert((owner, id), e);
                }
            });
            d
        }
    };
    let delivered = delivery == Delivery::Delivered;
    let text = match &delivery {
        Delivery::Delivered => {
            format!("Escalated: the owner's handler accepted it (inbox entry {id}).")
        }
        Delivery::NoHandler => format!("Recorded in the owner's inbox (entry {id}), but NOBODY WAS REACHED: the owner configured no escalation handler."),
        Delivery::Failed(why) => format!("Recorded in the owner's inbox (entry {id}), but NOBODY WAS REACHED: the handler did not accept it ({why})."),
        // Never after the call (every outcome is classed); kept for a complete match.
        Delivery::Pending => format!("Recorded in the owner's inbox (entry {id}); delivery is not known."),
    };
    Ok(results::ok(
        text,
        json!({ "delivered": delivered, "inbox_id": id.to_string() }),
        None,
    ))
}

/// The handler's answer as a delivery: only a decoded `Ok` is delivered.
fn delivery_of(outcome: CallOutcome) -> Delivery {
    match outcome {
        CallOutcome::Replied(bytes) => {
            let mut config = candid::DecoderConfig::new();
            config.set_skipping_quota(10_000);
            config.set_decoding_quota(100_000);
            match candid::utils::decode_one_with_config::<EscalationReply>(&bytes, &config) {
                Ok(EscalationReply::Ok) => Delivery::Delivered,
                Ok(EscalationReply::Err(why)) => {
                    Delivery::Failed(format!("the handler answered Err: {}", clip(&why)))
                }
                Err(e) => Delivery::Failed(format!(
                    "the handler's answer is not variant {{ Ok; Err : text }}: {}",
                    clip(&e.to_string())
                )),
            }
        }
        CallOutcome::Rejected { code, message } => Delivery::Failed(format!(
            "the handler rejected the call ({code}): {}",
            clip(&message)
        )),
        CallOutcome::NotSent(m) => Delivery::Failed(format!(
            "the call to the handler was not made: {}",
            clip(&m)
        )),
    }
}

/// A handler's text as kept in the entry: at most 512 bytes, marked when shortened (the text
/// comes from another canister; the entry's size stays bounded).
fn clip(s: &str) -> String {
    const MAX: usize = 512;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &s[..end], s.len())
}

/// `set_escalation_handler`: the caller's own handler (an agent cannot set its owner's: the
/// handler is where the owner is reached, so only the owner chooses it). `None` removes it.
pub fn set_escalation_handler<R: Runtime>(
    rt: &R,
    caller: Principal,
    handler: Option<Principal>,
) -> ApiResult<()> {
    auth::user(&caller)?;
    if handler == Some(Principal::anonymous()) {
        return Err(err(
            ErrorCode::InvalidArgument,
            "the anonymous principal is not a canister that can handle escalations",
        ));
    }
    if handler == Some(rt.self_id()) {
        return Err(err(
            ErrorCode::InvalidArgument,
            "the tool host itself is not an escalation handler: name the canister that reaches the owner",
        ));
    }
    rt.with_state(|s| match handler {
        Some(h) => {
            let new_owner = !s.handlers.contains_key(&caller);
            if new_owner && s.handlers.len() >= MAX_ESCALATION_HANDLERS {
                return Err(err(
                    ErrorCode::Limit,
                    format!("the tool host keeps at most {MAX_ESCALATION_HANDLERS} escalation handlers; nothing was set"),
                ));
            }
            s.handlers.insert(caller, h);
            Ok(())
        }
        None => {
            s.handlers.remove(&caller);
            Ok(())
        }
    })
}

fn entry_view(e: InboxEntry) -> InboxEntryView {
    InboxEntryView {
        id: e.id,
        from: e.from,
        turn: e.turn,
        delivered: e.delivered(),
        delivery: match &e.delivery {
            Delivery::NoHandler => "no_handler".into(),
            Delivery::Pending => "pending".into(),
            Delivery::Delivered => "delivered".into(),
            Delivery::Failed(why) => format!("failed: {why}"),
        },
        reason: e.reason,
        summary: e.summary,
        at: e.at,
        handler: e.handler,
    }
}

/// `get_inbox`: the owner's escalations, oldest first, for the owner alone. Not for its agents:
/// an escalation is how an agent (or another of the owner's agents) hands a matter back to a
/// person, often about what an agent did or was asked to do; the agent that escalated already
/// has its answer (`delivered`, `inbox_id`), and no agent needs to read what the others said.
pub fn get_inbox<R: Runtime>(
    rt: &R,
    caller: Principal,
    owner: Option<Principal>,
) -> ApiResult<Vec<InboxEntryView>> {
    auth::user(&caller)?;
    let owner = owner.unwrap_or(caller);
    if owner != caller {
        return Err(err(
            ErrorCode::NotOwner,
            format!("only {owner} reads its inbox (its agents do not)"),
        ));
    }
    Ok(rt.with_state(|s| {
        s.inbox
            .range((owner, 0)..=(owner, u64::MAX))
            .map(|e| entry_view(e.into_pair().1))
            .collect()
    }))
}
