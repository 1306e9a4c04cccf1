//! Tools as Candid methods: list the definitions; call a tool by name with JSON input. Reads run
//! as inter-canister calls; prepare tools store an intent with its preview; `commit` asks to send.

use crate::auth;
use crate::catalog;
use crate::errors::*;
use crate::model::{Intent, Status, StoredName};
use crate::names;
use crate::results::{self, Answer};
use crate::runtime::{CallOutcome, Runtime};
use crate::schedule;
use crate::send;
use crate::stored_value::StoredValue;
use crate::types::*;
use candid::Principal;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tool_host_core::issue::Code;
use tool_host_core::plan::{ToolKind, ToolPlan, COMMIT_TOOL};
use tool_host_core::read::{read_tool_input, Canister, NameEntry, ReadContext};
use tool_host_core::{codec, display};

/// The MCP tool definitions (JSON text), for anyone, the anonymous caller included: the bus's
/// MCP rendering (`list_tools` with no format).
pub fn list_tools<R: Runtime>(rt: &R) -> String {
    crate::bus::list_tools(rt, None)
}

/// What kind of tool a call reached, for its step's outcome class.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reached {
    /// Refused before any tool was found.
    Nothing,
    Read,
    Prepare,
    Other,
}

/// A step's outcome class: the outcome word when there is one, else `prepared`, `read` or
/// `ok`; for a refusal its error code.
fn outcome_class(r: &ApiResult<ToolResult>, reached: Reached) -> (String, bool) {
    match r {
        Err(e) => (e.code.clone(), true),
        Ok(t) => {
            let class = match (&t.outcome, reached) {
                (Some(o), _) => o.as_str(),
                (None, Reached::Prepare) if !t.is_error => "prepared",
                (None, Reached::Read) => "read",
                _ => "ok",
            };
            (class.to_string(), t.is_error)
        }
    }
}

pub async fn call_tool<R: Runtime>(
    rt: &R,
    caller: Principal,
    args: CallToolArgs,
) -> ApiResult<ToolResult> {
    let owner = auth::acting_owner(rt, &caller, args.owner)?;
    let limits = rt.with_state(|s| s.limits());
    if args.input.len() > limits.max_input_bytes as usize {
        return Err(err(
            ErrorCode::TooLarge,
            format!(
                "the input is {} bytes, over the limit of {}",
                args.input.len(),
                limits.max_input_bytes
            ),
        ));
    }
    // A name no tool could have is refused before anything is recorded: a turn's step keeps
    // the name, and a canister caller is not held to the ingress filter's bound.
    if args.name.len() > crate::bus::MAX_NAME_BYTES {
        return Err(err(
            ErrorCode::TooLarge,
            format!(
                "the tool name is {} bytes, over the limit of {}",
                args.name.len(),
                crate::bus::MAX_NAME_BYTES
            ),
        ));
    }
    // In a turn, the step is written (or the call refused and recorded) before any await.
    let step = match args.turn {
        Some(turn) => {
            let now = rt.now();
            Some(rt.with_state(|s| {
                crate::bus::turns::open_step(s, turn, &owner, &caller, &args.name, &args.input, now)
            })?)
        }
        None => None,
    };
    let mut reached = Reached::Nothing;
    let result = dispatch(rt, caller, owner, &args, step, &mut reached).await;
    if let Some(step) = step {
        let (class, is_error) = outcome_class(&result, reached);
        rt.with_state(|s| crate::bus::turns::close_step(s, step, class, is_error));
    }
    result
}

/// Counts one call made by `owner` of `tool` (before the call's first await).
fn count_call<R: Runtime>(rt: &R, owner: &Principal, tool: &str) {
    rt.with_state(|s| crate::bus::usage::bump(s, owner, tool));
}

async fn dispatch<R: Runtime>(
    rt: &R,
    caller: Principal,
    owner: Principal,
    args: &CallToolArgs,
    step: Option<crate::bus::turns::StepRef>,
    reached: &mut Reached,
) -> ApiResult<ToolResult> {
    if args.name == COMMIT_TOOL {
        *reached = Reached::Other;
        count_call(rt, &owner, COMMIT_TOOL);
        // In a turn the call acts for the turn's owner: another owner's intent (one the caller
        // is also an agent of) is not found there, so that turn's record never holds it.
        let of_owner = step.map(|_| owner);
        return commit(rt, caller, &args.input, of_owner).await;
    }
    rt.mark("call_tool: authorized");
    let bus = rt.with_state(catalog::bus);
    if let Some(b) = bus.builtin(&args.name) {
        if b == tool_host_core::builtin::Builtin::Finish && step.is_none() {
            return Err(err(
                ErrorCode::InvalidArgument,
                "finish ends a turn: call it with the turn's id (call_tool's `turn`, from begin_turn)",
            ));
        }
        let input = parse_input(&args.input)?;
        *reached = Reached::Other;
        count_call(rt, &owner, b.name());
        return crate::bus::builtins::call(rt, caller, owner, b, &input, step, &bus.zone).await;
    }
    let Some(tool) = rt.with_state(|s| catalog::current(s).tool(&args.name)) else {
        let names = bus.names().join(", ");
        return Err(err(
            ErrorCode::UnknownTool,
            format!("no tool '{}' (tools: {names})", args.name),
        ));
    };
    rt.mark("call_tool: tool found");
    count_call(rt, &owner, &args.name);
    rt.mark("call_tool: counted");
    match tool.plan().kind {
        ToolKind::Read => {
            *reached = Reached::Read;
            read_tool(rt, caller, owner, &tool, &args.input).await
        }
        ToolKind::Prepare => {
            *reached = Reached::Prepare;
            prepare(rt, caller, owner, &tool, &args.input).await
        }
    }
}

/// Which canister an input names, before reading it (name sets are read from that canister).
fn input_canister(input: &Value) -> Option<Principal> {
    tool_host_core::text::principal::parse_principal(input.get("canister_id")?.as_str()?).ok()
}

/// The input as JSON, parsed once, as every host reads one (`call_tool` checked the size
/// against the limits, which are at most the reader's bound).
fn parse_input(input: &str) -> ApiResult<Value> {
    tool_host_core::read::parse_input(input).map_err(input_err)
}

/// JSON text with object keys sorted and no spaces: what an intent keeps of its input.
pub fn canonical_json(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (n, k) in keys.into_iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&m[k], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (n, x) in items.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    write(x, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    out
}

/// The name sets a plan's inputs use, read from the canister the input names (once per call).
async fn name_sets<R: Runtime>(
    rt: &R,
    plan: &ToolPlan,
    input: &Value,
    canisters: &[Canister],
    owner: Principal,
) -> Option<std::collections::BTreeMap<String, Vec<NameEntry>>> {
    if names::sets_of(plan).is_empty() {
        return None;
    }
    let c = input_canister(input).filter(|c| canisters.iter().any(|x| x.id == *c))?;
    // A set's method is called as the tool host, unconfirmed: only on a canister the tool
    // applies to and the owner may use (checked again, with its error, after the read), and
    // there, unless the canister is this owner's alone, only a read the engine knows (see
    // `catalog`: a form cannot make a method a query).
    let (timeout, single) = rt.with_state(|s| {
        target_access(s, &plan.name, c, owner).ok()?;
        let cat = catalog::current(s);
        if !cat
            .canister(&c)
            .is_some_and(|x| x.applies_to(&plan.form.id))
        {
            return None;
        }
        let single = cat.single_owner.get(&c) == Some(&owner);
        Some((s.limits().call_timeout_seconds, single))
    })?;
    Some(names::read_sets(rt, plan, c, timeout, single).await)
}

/// What `read_budget` does with one read tool call of `owner` (each costs the host calls): at
/// most `max_reads_per_owner_per_minute` in a minute.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Budget {
    /// Refused if the minute's budget is spent; nothing counted (before any call is made).
    Check,
    /// Refused if spent, else counted (the read's own call is next).
    CheckAndCount,
    /// Counted whatever is left (calls were made already: the name sets').
    Count,
}

fn read_budget<M: ic_stable_structures::Memory>(
    s: &mut crate::state::State<M>,
    owner: Principal,
    now: u64,
    what: Budget,
) -> ApiResult<()> {
    let max = s.limits().max_reads_per_owner_per_minute;
    let minute = now / 60_000_000_000;
    if s.reads.len() >= 10_000 {
        s.reads.retain(|_, (m, _)| *m == minute);
    }
    let e = s.reads.entry(owner).or_insert((minute, 0));
    if e.0 != minute {
        *e = (minute, 0);
    }
    if what != Budget::Count && e.1 >= max {
        return Err(err(ErrorCode::Limit, format!("{owner} made {max} read tool calls this minute, the most allowed; try again in a minute")));
    }
    if what != Budget::Check {
        e.1 = e.1.saturating_add(1);
    }
    Ok(())
}

/// Whether `owner` may use `tool` on `canister`: a canister registered for a single owner is
/// that owner's alone, and a tool that binds no position to the owner is offered only there.
pub fn target_access<M: ic_stable_structures::Memory>(
    s: &mut crate::state::State<M>,
    tool: &str,
    canister: Principal,
    owner: Principal,
) -> ApiResult<()> {
    let cat = catalog::current(s);
    match cat.single_owner.get(&canister) {
        Some(o) if *o != owner => Err(err(
            ErrorCode::NotAuthorized,
            format!("{canister} is registered for a single owner; {owner} may not use its tools"),
        )),
        Some(_) => Ok(()),
        None => match cat.unbound(tool) {
            Some(u) => Err(err(
                ErrorCode::Custody,
                format!(
                    "{tool} is not offered on {canister}, which several owners share: {}",
                    u.why()
                ),
            )),
            None => Ok(()),
        },
    }
}

/// Before a send of a method the engine has no custody rule for: its stored input, read again
/// for its owner exactly as when it was stamped, must give its very bytes, so every position the
/// form binds to the owner (and every other host-filled one) holds what it did.
pub fn recheck_bytes(
    plan: &ToolPlan,
    types: &tool_host_core::candid_types::MethodTypes,
    canisters: &[Canister],
    i: &Intent,
) -> ApiResult<()> {
    let names = send::names_map(&i.names);
    let ctx = ReadContext {
        canisters,
        now_ns: Some(i.stamp_ns.unwrap_or(i.created_at)),
        owner: Some(i.owner),
        names: (!i.names.is_empty()).then_some(&names),
        memo: i.memo.clone(),
    };
    let input: Value = serde_json::from_str(&i.input_json).map_err(|e| {
        err(
            ErrorCode::Custody,
            format!("the stored input is not JSON: {e}"),
        )
    })?;
    let out = read_tool_input(plan, &input, &ctx).map_err(input_err)?;
    let bytes =
        codec::encode_args_with(plan, types, &out.args).map_err(|e| err(ErrorCode::Custody, e))?;
    if bytes != i.arg {
        return Err(err(
            ErrorCode::Custody,
            format!("intent {}'s bytes are not what its input gives for its owner now (the form or the canister's refs changed since it was prepared); nothing was sent: prepare it again", i.id),
        ));
    }
    Ok(())
}

/// Reads an input against the plan at a given clock, with the name sets already read.
fn read_with(
    plan: &ToolPlan,
    input: &Value,
    canisters: &[Canister],
    owner: Principal,
    now: u64,
    names: Option<&std::collections::BTreeMap<String, Vec<NameEntry>>>,
) -> ApiResult<(tool_host_core::read::ReadOutput, Canister)> {
    let ctx = ReadContext {
        canisters,
        now_ns: Some(now),
        owner: Some(owner),
        names,
        memo: None,
    };
    let out = read_tool_input(plan, input, &ctx).map_err(input_err)?;
    let canister = canisters
        .iter()
        .find(|c| c.id == out.canister)
        .cloned()
        .ok_or_else(|| err(ErrorCode::NotFound, "the canister is gone"))?;
    Ok((out, canister))
}

async fn read_tool<R: Runtime>(
    rt: &R,
    caller: Principal,
    owner: Principal,
    tool: &catalog::ToolRef,
    input: &str,
) -> ApiResult<ToolResult> {
    let plan = tool.plan();
    let input = parse_input(input)?;
    // Checked before any call; counted once the host makes one (the name sets' or the read's):
    // a read refused before either spends nothing, and none makes calls past the budget.
    let now = rt.now();
    let (canisters, revision) = rt.with_state(|s| {
        read_budget(s, owner, now, Budget::Check)?;
        let c = catalog::current(s).canisters.clone();
        Ok::<_, ApiError>((c, s.config.get().catalog_revision))
    })?;
    let names = name_sets(rt, plan, &input, &canisters, owner).await;
    crate::auth::still_acting(rt, &caller, &owner)?;
    let counted = names.is_some();
    let now = rt.now();
    rt.with_state(|s| {
        if counted {
            read_budget(s, owner, now, Budget::Count)?;
        }
        // The plan and the canister were read before the name sets' await: a registration
        // change since (a canister removed, a form dropped) makes no call.
        if s.config.get().catalog_revision != revision {
            return Err(err(ErrorCode::Retry, "forms or canisters changed while the input was read; nothing was called: call the tool again"));
        }
        Ok(())
    })?;
    let (out, canister) = read_with(plan, &input, &canisters, owner, now, names.as_ref())?;
    rt.with_state(|s| {
        target_access(s, &plan.name, canister.id, owner)?;
        if !counted {
            read_budget(s, owner, now, Budget::CheckAndCount)?;
        }
        Ok::<_, ApiError>(())
    })?;
    let bytes = codec::encode_args_with(plan, &tool.types, &out.args)
        .map_err(|e| err(ErrorCode::InvalidInput, e))?;
    let timeout = rt.with_state(|s| s.limits().call_timeout_seconds);
    let what = format!("{} on {}", plan.method, canister.id);
    match rt.call(canister.id, &plan.method, bytes, timeout).await {
        CallOutcome::Replied(reply) => match codec::decode_reply_with(plan, &tool.types, &reply) {
            Ok(args) => {
                let shown = display::display_reply(plan, &args, &canister.refs);
                let text = match &shown {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Ok(results::ok(
                    format!("{what}: {text}"),
                    json!({ "status": "read", "result": shown }),
                    None,
                ))
            }
            Err(e) => Ok(results::error(
                format!("{what}: nothing was read: {e}"),
                json!({ "status": "unread", "message": e }),
                None,
            )),
        },
        CallOutcome::Rejected { code, message } => Ok(results::error(
            format!("{what}: nothing was read: rejected ({code}) {message}"),
            json!({ "status": "unread", "reject_code": code, "message": message }),
            None,
        )),
        CallOutcome::NotSent(m) => Ok(results::error(
            format!("{what}: nothing was read: {m}"),
            json!({ "status": "unread", "message": m }),
            None,
        )),
    }
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

async fn prepare<R: Runtime>(
    rt: &R,
    caller: Principal,
    owner: Principal,
    tool: &catalog::ToolRef,
    input: &str,
) -> ApiResult<ToolResult> {
    let plan = tool.plan();
    let now = rt.now();
    rt.mark("prepare: start");
    let input = parse_input(input)?;
    let (canisters, revision) = rt.with_state(|s| {
        let c = catalog::current(s).canisters.clone();
        (c, s.config.get().catalog_revision)
    });
    rt.mark("read_input: canisters");
    // Names are read once, here, and kept with the intent for its re-stamps.
    let names = name_sets(rt, plan, &input, &canisters, owner).await;
    // No await from here to the intent's record: checked once, it holds when it is stored.
    crate::auth::still_acting(rt, &caller, &owner)?;
    let (mut out, mut canister) = read_with(plan, &input, &canisters, owner, now, names.as_ref())?;
    rt.mark("prepare: input read");
    rt.with_state(|s| target_access(s, &plan.name, canister.id, owner))?;
    let identity: [u8; 32] = out.identity_digest();
    // Preparing the same intent again answers the same preview while it is not settled.
    let existing = rt.with_state(|s| {
        s.intent_keys
            .get(&(owner, identity))
            .and_then(|id| s.intents.get(&id))
    });
    if let Some(existing) = existing {
        return Ok(existing_answer(&existing));
    }
    rt.mark("prepare: existing checked");
    let limits = rt.with_state(|s| s.limits());
    let mut input_json = canonical_json(&input);
    // The arguments' stamp floor, once read: `None` until then. The common stamp (the clock)
    // is above it, so the floor is not read first: raising it answers what it was
    // (`State::raise_stamp_floor`); only when that is at or above the stamp is the input read
    // again above it.
    let mut floor_read: Option<Option<u64>> = None;
    let answer = loop {
        // A stamp is never handed out twice for the same arguments: at the clock, or just
        // above the last one when the clock has not moved past it.
        if let (Some(stamp), Some(Some(f))) = (out.stamp_ns, floor_read) {
            if stamp <= f {
                let above = send::choose_stamp(now, None, Some(f))
                    .map_err(|e| err(ErrorCode::InvalidInput, e))?;
                (out, canister) =
                    read_with(plan, &input, &canisters, owner, above, names.as_ref())?;
            }
        }
        let used = names_used(&names, &out);
        let bytes = codec::encode_args_with(plan, &tool.types, &out.args)
            .map_err(|e| err(ErrorCode::InvalidInput, e))?;
        rt.mark("prepare: encoded");
        // Whatever the form says: the funds these bytes move are the owner's.
        crate::custody::check(&plan.method, &bytes, owner)?;
        rt.mark("prepare: custody checked");
        let stored = rt.with_state(|s| {
            // The plan, the canister and its forms were read before the name sets' await: a
            // registration change since (a canister removed, a form dropped or replaced)
            // stores nothing.
            if s.config.get().catalog_revision != revision {
                return Err(err(ErrorCode::Retry, "forms or canisters changed while the input was read; nothing was stored: call the tool again"));
            }
            let open = s.open_count(&owner);
            if open >= limits.max_open_intents_per_owner {
                return Err(err(ErrorCode::Limit, format!("{owner} has {} intents that are not settled, the most allowed; confirm, decline or let some expire", limits.max_open_intents_per_owner)));
            }
            let kept = s.kept_count(&owner);
            if kept >= limits.max_intents_per_owner {
                return Err(err(ErrorCode::Limit, format!("{owner} keeps {} intents, the most allowed; settled ones are removed {} s after they settle", limits.max_intents_per_owner, limits.retention_seconds)));
            }
            if s.intents.len() >= limits.max_intents {
                return Err(err(ErrorCode::Limit, format!("the tool host keeps {} intents, the most allowed", limits.max_intents)));
            }
            let stored = s.config.get().stored_input_bytes;
            if stored.saturating_add(input_json.len() as u64) > limits.max_stored_input_bytes {
                return Err(err(ErrorCode::Limit, format!("the tool host keeps {stored} bytes of tool inputs; {} more would pass the limit of {}", input_json.len(), limits.max_stored_input_bytes)));
            }
            // Nothing is refused from here on: the floor is raised (after the last await:
            // what is read or replaced now is current).
            let floor = match (out.stamp_ns, floor_read) {
                (Some(stamp), None) => {
                    let before = s.raise_stamp_floor(owner, identity, stamp);
                    // Handed out already (the floor is as it was): stamp above it.
                    if let Some(f) = before.filter(|f| *f >= stamp) {
                        return Ok(Err(f));
                    }
                    before
                }
                (Some(stamp), Some(f)) => {
                    s.raise_stamp_floor_from(owner, identity, stamp, f);
                    f
                }
                (None, Some(f)) => f,
                (None, None) => s.stamp_floor(owner, identity),
            };
            let id = s.next_intent_id(input_json.len() as u64);
            let preview = display::preview_without_hex(plan, &out, &canister, &id.to_string());
            let expires_at =
                now.saturating_add(limits.preview_ttl_seconds.saturating_mul(1_000_000_000));
            let intent = Intent {
                id,
                owner,
                preparer: caller,
                canister: canister.id,
                form_id: plan.form.id.clone(),
                tool: plan.name.clone(),
                method: plan.method.clone(),
                input_json: std::mem::take(&mut input_json),
                identity,
                digest: digest(&bytes),
                // Made without its `arg_hex` (the intent keeps the bytes): `preview_text`.
                preview_json: serde_json::to_string(&preview).unwrap_or_default(),
                arg: bytes,
                stamp_ns: out.stamp_ns,
                memo: out.memo.clone(),
                summary: results::summary(&preview),
                status: Status::Open,
                outcome: None,
                finding: None,
                reply_json: None,
                created_at: now,
                updated_at: now,
                expires_at,
                settled_at: None,
                attempts: vec![],
                generation: 0,
                retry_same: 0,
                rejects_4_5: 0,
                had_unknown: false,
                confirm_requested_at: None,
                reconcile_tries: 0,
                before_send: None,
                reconcile_at: None,
                scan: None,
                held_for_good: false,
                names: used,
                prior_floor: floor,
                max_stamp: out.stamp_ns,
            };
            s.schedule_expiry(expires_at, id, true);
            // Answered from the intent before it is moved into the store (not a copy of it).
            let answer = prepared_answer(&intent);
            s.put_new_intent(intent, kept, open);
            Ok(Ok(answer))
        })?;
        match stored {
            Ok(answer) => break answer,
            // A stamp at or above this one was handed out for these arguments (the clock has
            // not moved past it): the floor was put back; read the input again above it.
            Err(f) => floor_read = Some(Some(f)),
        }
    };
    rt.mark("prepare: stored");
    schedule::arm_new(rt);
    rt.mark("prepare: rearmed");
    Ok(answer)
}

/// The answer to a prepare that stored a new intent.
fn prepared_answer(created: &Intent) -> ToolResult {
    let mut v = Answer::of(created);
    v.status = "prepared";
    results::ok(
        format!(
            "Prepared intent {}: {}. Nothing is sent until the owner confirms it.",
            created.id, created.summary
        ),
        v,
        None,
    )
}

/// The name set entries the input used, kept with the intent for its re-stamps.
fn names_used(
    names: &Option<std::collections::BTreeMap<String, Vec<NameEntry>>>,
    out: &tool_host_core::read::ReadOutput,
) -> Vec<StoredName> {
    match names {
        Some(sets) if !out.names_used.is_empty() => {
            let typed: std::collections::BTreeSet<&String> = out.names_used.values().collect();
            sets.iter()
                .flat_map(|(set, entries)| {
                    entries
                        .iter()
                        .filter(|e| typed.contains(&e.name))
                        .map(move |e| StoredName {
                            set: set.clone(),
                            name: e.name.clone(),
                            value: StoredValue::from(&e.value),
                        })
                })
                .collect()
        }
        _ => vec![],
    }
}

/// The answer to preparing an intent that exists: its preview, and outcome `unknown` if any
/// send of it had an unknown outcome (held for reconciliation or not), as the reference says.
fn existing_answer(i: &Intent) -> ToolResult {
    let mut v = Answer::of(i);
    let outcome = i.had_unknown.then_some("unknown");
    if let Some(o) = outcome {
        v.outcome = Some(o);
    }
    if i.status == Status::Open {
        v.status = "prepared";
    }
    results::ok(
        format!(
            "Intent {} exists: {} ({})",
            i.id,
            i.summary,
            i.status.as_str()
        ),
        v,
        outcome,
    )
}
/// `commit`: the owner with the preview's digest confirms and sends; anyone else allowed (an
/// agent of the owner, or the owner without a digest) records the request and answers
/// `awaiting_confirmation` with what the owner will be shown.
async fn commit<R: Runtime>(
    rt: &R,
    caller: Principal,
    input: &str,
    of_owner: Option<Principal>,
) -> ApiResult<ToolResult> {
    let v: Value = tool_host_core::read::json_value(input).map_err(|e| {
        err(
            ErrorCode::InvalidInput,
            format!("the input is not JSON: {e}"),
        )
    })?;
    let mut issues = vec![];
    let obj = v.as_object().cloned().unwrap_or_default();
    for k in obj.keys() {
        if k != "preview_id" && k != "digest" {
            issues.push(IssueView {
                param: k.clone(),
                path: format!("$input.{k}"),
                code: Code::UnknownParam.as_str().into(),
                message: format!("'{k}' is not an input of commit (preview_id, digest)"),
            });
        }
    }
    let id = match obj.get("preview_id") {
        Some(Value::String(s)) => match s.trim().parse::<u64>() {
            Ok(id) => Some(id),
            Err(_) => {
                issues.push(IssueView {
                    param: "preview_id".into(),
                    path: "$input.preview_id".into(),
                    code: Code::Syntax.as_str().into(),
                    message: format!("'{s}' is not a preview id (digits)"),
                });
                None
            }
        },
        Some(_) => {
            issues.push(IssueView {
                param: "preview_id".into(),
                path: "$input.preview_id".into(),
                code: Code::Type.as_str().into(),
                message: "the preview id is text".into(),
            });
            None
        }
        None => {
            issues.push(IssueView {
                param: "preview_id".into(),
                path: "$input.preview_id".into(),
                code: Code::Missing.as_str().into(),
                message: "'preview_id' is required".into(),
            });
            None
        }
    };
    let digest = match obj.get("digest") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match hex::decode(s.trim()) {
            Ok(d) if d.len() == 32 => Some(d),
            _ => {
                issues.push(IssueView {
                    param: "digest".into(),
                    path: "$input.digest".into(),
                    code: Code::Syntax.as_str().into(),
                    message: "a digest is 64 hex digits".into(),
                });
                None
            }
        },
        Some(_) => {
            issues.push(IssueView {
                param: "digest".into(),
                path: "$input.digest".into(),
                code: Code::Type.as_str().into(),
                message: "the digest is text".into(),
            });
            None
        }
    };
    if !issues.is_empty() || !v.is_object() {
        if !v.is_object() {
            issues.push(IssueView {
                param: String::new(),
                path: "$input".into(),
                code: Code::Input.as_str().into(),
                message: "a tool input is a JSON object".into(),
            });
        }
        return Err(ApiError {
            code: ErrorCode::InvalidInput.as_str().into(),
            message: format!("{} input issue(s)", issues.len()),
            issues,
        });
    }
    let id = id.expect("checked above");
    let intent = rt
        .with_state(|s| s.intents.get(&id))
        .filter(|i| of_owner.is_none_or(|o| o == i.owner))
        .ok_or_else(|| err(ErrorCode::NotFound, format!("no intent {id}")))?;
    let is_owner = intent.owner == caller;
    if !is_owner && !rt.with_state(|s| s.is_agent_of(&intent.owner, &caller)) {
        return Err(err(
            ErrorCode::NotAuthorized,
            format!("{caller} is neither the owner of intent {id} nor an agent of its owner"),
        ));
    }
    if intent.status.is_final() {
        return Ok(send::settled_answer(&intent));
    }
    if let (true, Some(d)) = (is_owner, digest) {
        return send::send(rt, caller, id, &d).await;
    }
    let now = rt.now();
    let intent = rt.with_state(|s| {
        let mut i = s.intents.get(&id)?;
        if matches!(i.status, Status::Open | Status::Unknown) {
            i.confirm_requested_at = Some(now);
            i.updated_at = now;
            s.put_intent(i.clone());
        }
        Some(i)
    });
    let intent = intent.ok_or_else(|| err(ErrorCode::NotFound, format!("no intent {id}")))?;
    let mut v = Answer::of(&intent);
    let status = match intent.status {
        Status::Open | Status::Unknown => "awaiting_confirmation",
        other => other.as_str(),
    };
    v.status = status;
    Ok(results::ok(
        format!("Intent {id} is waiting for its owner to confirm: {}. The owner confirms with a signed call (confirm, with the preview's digest).", intent.summary),
        v,
        None,
    ))
}
