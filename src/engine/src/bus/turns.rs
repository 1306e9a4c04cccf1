//! Turns: one request's shortlist, selected once and remembered, and every call made against
//! it, so that a record tells "chose not to" from "was never offered". Bounded per owner and
//! in all, pruned by the timer once the retention the limits give intents has passed.

use super::records::{Turn, TurnStep};
use super::{check_query, limit_of, offer, usage};
use crate::auth;
use crate::catalog;
use crate::errors::*;
use crate::model::TaskKind;
use crate::runtime::Runtime;
use crate::schedule;
use crate::send::SEC;
use crate::state::State;
use crate::types::*;
use candid::Principal;
use ic_stable_structures::Memory;
use sha2::{Digest, Sha256};

/// Steps one turn records; a call past them is refused (`LIMIT`), never recorded by dropping
/// an earlier one.
pub const MAX_STEPS: usize = 64;
/// Turns one owner keeps: at the bound its oldest finished turn makes room.
pub const MAX_TURNS_PER_OWNER: usize = 256;
/// Turns the host keeps, all owners together.
pub const MAX_TURNS: u64 = 100_000;

fn format_of(name: &str) -> ToolFormat {
    use tool_host_core::bus::ToolFormat as F;
    match F::from_name(name) {
        Some(F::OpenAi) => ToolFormat::OpenAi,
        Some(F::OpenAiResponses) => ToolFormat::OpenAiResponses,
        Some(F::Anthropic) => ToolFormat::Anthropic,
        Some(F::Markdown) => ToolFormat::Markdown,
        Some(F::JsonSchema) => ToolFormat::JsonSchema,
        _ => ToolFormat::Mcp,
    }
}

fn format_name(f: ToolFormat) -> &'static str {
    tool_host_core::bus::ToolFormat::from(f).as_str()
}

/// The same refusal for a turn that is missing, expired, another owner's, or one the caller
/// does not act for: turn ids do not leak.
fn no_turn(id: u64) -> ApiError {
    err(ErrorCode::NotFound, format!("no turn {id}"))
}

fn expired<M: Memory>(s: &State<M>, t: &Turn, now: u64) -> bool {
    now >= t.created_at.saturating_add(retention(s))
}

fn retention<M: Memory>(s: &State<M>) -> u64 {
    s.limits().retention_seconds.saturating_mul(SEC)
}

/// `begin_turn`: selects once, stores what was offered, answers it rendered.
pub fn begin_turn<R: Runtime>(
    rt: &R,
    caller: Principal,
    args: BeginTurnArgs,
) -> ApiResult<TurnStarted> {
    let owner = auth::acting_owner(rt, &caller, args.owner)?;
    check_query(&args.query)?;
    let limit = limit_of(args.limit)?;
    let format = args.format.unwrap_or(ToolFormat::Mcp);
    let now = rt.now();
    let started = rt.with_state(|s| {
        make_room(s, &owner, now)?;
        let bus = catalog::bus(s);
        let usage = usage::counts(s, &owner);
        let offered = offer(&bus, &args.query, limit, &usage);
        let tools = bus.render(&offered, format.into());
        let names: Vec<String> = offered.iter().map(|d| d.name.clone()).collect();
        let mut id = 0;
        s.update_config(|c| {
            c.bus.next_turn_id += 1;
            c.bus.turns_kept += 1;
            id = c.bus.next_turn_id;
        });
        let prune_at = now.saturating_add(retention(s));
        s.turns.insert(
            id,
            Turn {
                id,
                owner,
                started_by: caller,
                query: args.query.clone(),
                offered: names.clone(),
                format: format_name(format).to_string(),
                steps: vec![],
                answer: None,
                finished_at: None,
                created_at: now,
                prune_at,
            },
        );
        s.owner_turns.insert((owner, id), false);
        s.schedule(prune_at, TaskKind::PruneTurn, id);
        Ok::<_, ApiError>(TurnStarted {
            turn_id: id,
            offered: names,
            tools,
        })
    })?;
    schedule::arm_new(rt);
    Ok(started)
}

/// Room for one more turn of `owner`: under both bounds, or the owner's oldest turn removed if
/// it expired (a retention shortened since leaves it until its prune task, though no one can
/// read or call it), else its oldest finished one; else refused, with nothing removed.
fn make_room<M: Memory>(s: &mut State<M>, owner: &Principal, now: u64) -> ApiResult<()> {
    let mine: Vec<(u64, bool)> = s
        .owner_turns
        .range((*owner, 0)..=(*owner, u64::MAX))
        .map(|e| {
            let ((_, id), finished) = e.into_pair();
            (id, finished)
        })
        .collect();
    if mine.len() >= MAX_TURNS_PER_OWNER {
        // Ids grow with time: if any of the owner's turns expired, the first did.
        let first = mine.first().and_then(|(id, _)| s.turns.get(id));
        if let Some(t) = first.filter(|t| expired(s, t, now)) {
            remove_turn(s, t.id);
            return Ok(());
        }
        let Some((oldest, _)) = mine.iter().find(|(_, finished)| *finished) else {
            return Err(err(
                ErrorCode::Limit,
                format!("{owner} keeps {MAX_TURNS_PER_OWNER} turns, none of them finished; finish one (the finish tool) or wait until the oldest expires"),
            ));
        };
        remove_turn(s, *oldest);
        return Ok(());
    }
    if s.config.get().bus.turns_kept >= MAX_TURNS {
        return Err(err(
            ErrorCode::Limit,
            format!(
                "the tool host keeps at most {MAX_TURNS} turns; try again once older ones expire"
            ),
        ));
    }
    Ok(())
}

/// Removes a turn, its owner's index entry and its prune task.
fn remove_turn<M: Memory>(s: &mut State<M>, id: u64) {
    if let Some(t) = s.turns.remove(&id) {
        s.owner_turns.remove(&(t.owner, id));
        s.due.remove(&TaskKind::PruneTurn.key(t.prune_at, id));
        s.update_config(|c| c.bus.turns_kept = c.bus.turns_kept.saturating_sub(1));
    }
}

/// The timer's prune of one turn: removed once the retention has passed since it began (a
/// longer retention set since moves the task on).
pub fn prune<M: Memory>(s: &mut State<M>, id: u64, now: u64) {
    let Some(mut t) = s.turns.get(&id) else {
        return;
    };
    let due = t.created_at.saturating_add(retention(s));
    if now >= due {
        remove_turn(s, id);
    } else {
        t.prune_at = due;
        s.schedule(due, TaskKind::PruneTurn, id);
        s.turns.insert(id, t);
    }
}

/// A step begun: written before the call's first await, at `index` in the turn.
#[derive(Clone, Copy, Debug)]
pub struct StepRef {
    pub turn: u64,
    pub index: usize,
}

/// Checks a call in a turn and records its step, in one step before any await: the turn must
/// be the acting owner's, unexpired and unfinished, with room for a step, and must have offered
/// the tool. A tool it did not offer is refused with `NOT_OFFERED`, recorded as such.
pub fn open_step<M: Memory>(
    s: &mut State<M>,
    turn: u64,
    owner: &Principal,
    caller: &Principal,
    tool: &str,
    input: &str,
    now: u64,
) -> ApiResult<StepRef> {
    let mut t = s
        .turns
        .get(&turn)
        .filter(|t| t.owner == *owner && !expired(s, t, now))
        .ok_or_else(|| no_turn(turn))?;
    if t.finished() {
        return Err(err(
            ErrorCode::TurnFinished,
            format!("turn {turn} is finished; begin a new turn for another request"),
        ));
    }
    if t.steps.len() >= MAX_STEPS {
        return Err(err(
            ErrorCode::Limit,
            format!("turn {turn} has {MAX_STEPS} steps, the most a turn records; begin a new turn"),
        ));
    }
    let offered = t.offered.iter().any(|n| n == tool);
    t.steps.push(TurnStep {
        tool: tool.to_string(),
        input_sha256: Sha256::digest(input.as_bytes()).into(),
        outcome: (!offered).then(|| ErrorCode::NotOffered.as_str().to_string()),
        is_error: !offered,
        at: now,
        caller: *caller,
    });
    let index = t.steps.len() - 1;
    let offered_list = t.offered.join(", ");
    s.turns.insert(turn, t);
    if !offered {
        return Err(err(
            ErrorCode::NotOffered,
            format!("turn {turn} did not offer '{tool}' (it offered: {offered_list}); the call is refused and recorded"),
        ));
    }
    Ok(StepRef { turn, index })
}

/// Completes a step after its call (if the turn is still kept and the step still pending).
pub fn close_step<M: Memory>(s: &mut State<M>, step: StepRef, outcome: String, is_error: bool) {
    if let Some(mut t) = s.turns.get(&step.turn) {
        if let Some(st) = t.steps.get_mut(step.index) {
            if st.outcome.is_none() {
                st.outcome = Some(outcome);
                st.is_error = is_error;
                s.turns.insert(step.turn, t);
            }
        }
    }
}

/// `finish`: records the answer (bounded by its reader, as its schema says) and finishes the
/// turn (its step is closed by the caller).
pub fn finish<M: Memory>(
    s: &mut State<M>,
    step: StepRef,
    answer: String,
    now: u64,
) -> ApiResult<()> {
    let mut t = s.turns.get(&step.turn).ok_or_else(|| no_turn(step.turn))?;
    t.answer = Some(answer);
    t.finished_at = Some(now);
    s.owner_turns.insert((t.owner, t.id), true);
    s.turns.insert(step.turn, t);
    Ok(())
}

fn view(t: Turn) -> TurnView {
    TurnView {
        id: t.id,
        owner: t.owner,
        query: t.query,
        offered_tools: t.offered,
        format: format_of(&t.format),
        finished: t.finished_at.is_some(),
        steps: t
            .steps
            .into_iter()
            .map(|st| TurnStepView {
                tool: st.tool,
                input_sha256: hex::encode(st.input_sha256),
                outcome: st.outcome.unwrap_or_else(|| "pending".into()),
                is_error: st.is_error,
                at: st.at,
                caller: st.caller,
            })
            .collect(),
        answer: t.answer,
        created_at: t.created_at,
        finished_at: t.finished_at,
    }
}

/// `get_turn`: for the owner and its agents; anyone else gets the missing turn's answer.
pub fn get_turn<R: Runtime>(rt: &R, caller: Principal, args: GetTurnArgs) -> ApiResult<TurnView> {
    auth::user(&caller)?;
    let owner = args.owner.unwrap_or(caller);
    let now = rt.now();
    rt.with_state(|s| {
        let acts = owner == caller || s.is_agent_of(&owner, &caller);
        s.turns
            .get(&args.id)
            .filter(|t| acts && t.owner == owner && !expired(s, t, now))
            .map(view)
            .ok_or_else(|| no_turn(args.id))
    })
}
