//! The tool bus in the engine: every tool in one place (`catalog::Bus`), what a request is
//! offered, usage counts per owner, turns with their steps, the builtin settings, and the
//! builtins' effects (a turn's answer, the owner's inbox). The core decides (labels, scores,
//! shapes); the engine keeps what is stored and who may read it (docs/bus.md).

pub mod builtins;
pub mod records;
pub mod settings;
pub mod turns;
pub mod usage;
pub mod usage_counts;

use crate::auth;
use crate::catalog::{self, Bus};
use crate::errors::*;
use crate::runtime::Runtime;
use crate::types::*;
use candid::Principal;
use tool_host_core::bus::{select_with, ToolDecl, ToolSource, Usage, DEFAULT_LIMIT, MAX_LIMIT};
use tool_host_core::plan::COMMIT_TOOL;

/// Bytes of a selection's query (`select_tools`, `begin_turn`).
pub const MAX_QUERY_BYTES: usize = 2048;
/// Names `missing_tools` takes.
pub const MAX_EXPECTED_NAMES: usize = 256;
/// Bytes of a tool name a caller gives (`missing_tools`, `call_tool`): twice the longest
/// name a provider takes (64), so no real name is refused.
pub const MAX_NAME_BYTES: usize = 128;

/// `list_tools`: every tool, in `format` (MCP when absent), for anyone.
pub fn list_tools<R: Runtime>(rt: &R, format: Option<ToolFormat>) -> String {
    let bus = rt.with_state(catalog::bus);
    match format.unwrap_or(ToolFormat::Mcp) {
        ToolFormat::Mcp => {
            let mut out = String::with_capacity(
                2 + bus.items.iter().map(|t| t.mcp().len() + 1).sum::<usize>(),
            );
            out.push('[');
            for (i, t) in bus.items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                t.mcp().push_to(&mut out);
            }
            out.push(']');
            out
        }
        f => {
            let all: Vec<&ToolDecl> = bus.decls.iter().map(|d| &**d).collect();
            bus.render(&all, f.into())
        }
    }
}

/// `list_tools_page`: the tools after the cursor, whole, as many as fit the page's bound, for
/// anyone. Every format's page copies the tools' texts kept with the catalog
/// (`bus::kept::Rendered`).
pub fn list_tools_page<R: Runtime>(rt: &R, args: ListToolsArgs) -> ApiResult<ToolsPage> {
    use std::borrow::Cow;
    use tool_host_core::bus::page::{self, CursorError, MAX_PAGE_BYTES, MIN_PAGE_BYTES};
    let max_bytes = match args.max_bytes {
        None => page::DEFAULT_PAGE_BYTES,
        Some(n) if (MIN_PAGE_BYTES..=MAX_PAGE_BYTES).contains(&(n as usize)) => n as usize,
        Some(n) => {
            return Err(err(
                ErrorCode::InvalidArgument,
                format!(
                    "max_bytes is {MIN_PAGE_BYTES} to {MAX_PAGE_BYTES} (absent: {}); {n} is not",
                    page::DEFAULT_PAGE_BYTES
                ),
            ))
        }
    };
    let bus = rt.with_state(catalog::bus);
    let after =
        match args.cursor.as_deref() {
            None => None,
            Some(c) => match page::read_cursor(c, bus.fingerprint) {
                Ok(name) => Some(name),
                Err(CursorError::Malformed(m)) => return Err(err(ErrorCode::InvalidArgument, m)),
                Err(CursorError::Stale) => return Err(err(
                    ErrorCode::StaleCursor,
                    "the tool list changed since this cursor was given (a form, canister, refs \
                     or builtin change, or an upgrade that changed a tool or how the list's fingerprint is made): \
                     start again without a cursor",
                )),
            },
        };
    let format: tool_host_core::bus::ToolFormat = args.format.unwrap_or(ToolFormat::Mcp).into();
    let mcp = format == tool_host_core::bus::ToolFormat::Mcp;
    let p = page::page(
        &bus.decls,
        after.as_deref(),
        format,
        max_bytes,
        |i, _| match (mcp, bus.items.get(i)) {
            (true, Some(t)) => Cow::Borrowed(t.mcp()),
            (false, Some(t)) => Cow::Owned(t.text(format).into()),
            _ => Cow::Owned(page::render_one(&bus.whole(i), format).into()),
        },
    );
    Ok(ToolsPage {
        tools: p.text,
        count: p.count as u32,
        total: bus.decls.len() as u32,
        next: p
            .next_after
            .map(|last| page::cursor(bus.fingerprint, &last)),
    })
}

pub fn info(bus: &Bus, d: &ToolDecl) -> ToolInfo {
    ToolInfo {
        name: d.name.clone(),
        title: d.title.clone(),
        effect: d.effect.map(Into::into),
        source: match &d.source {
            ToolSource::Form { form_id } => ToolSourceView::Form(form_id.clone()),
            ToolSource::Host => ToolSourceView::Host,
            ToolSource::Builtin => ToolSourceView::Builtin,
        },
        pinned: bus.pinned.contains(&d.name),
    }
}

/// `describe_tools`: each tool's name, title, label, source and pin, for anyone.
pub fn describe_tools<R: Runtime>(rt: &R) -> Vec<ToolInfo> {
    let bus = rt.with_state(catalog::bus);
    bus.decls.iter().map(|d| info(&bus, d)).collect()
}

/// A selection's limit: 6 when absent, else 1 to 32.
pub fn limit_of(limit: Option<u32>) -> ApiResult<usize> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if (1..=MAX_LIMIT as u32).contains(&n) => Ok(n as usize),
        Some(n) => Err(err(
            ErrorCode::InvalidArgument,
            format!("limit is 1 to {MAX_LIMIT} (absent: {DEFAULT_LIMIT}); {n} is not"),
        )),
    }
}

pub fn check_query(query: &str) -> ApiResult<()> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(err(
            ErrorCode::TooLarge,
            format!(
                "the query is {} bytes, over the limit of {MAX_QUERY_BYTES}",
                query.len()
            ),
        ));
    }
    Ok(())
}

/// The working set for one request: the core's selection, and `commit` whenever a prepare tool
/// is in it (a prepared intent is sent only through `commit`), within the limit: when the set
/// is full, `commit` takes the place of its last tool that is neither pinned nor the only
/// prepare tool; if there is none, the set stays as selected.
pub fn offer<'a>(bus: &'a Bus, query: &str, limit: usize, usage: &Usage) -> Vec<&'a ToolDecl> {
    let mut set = select_with(&bus.decls, &bus.words, query, limit, &bus.pinned, usage);
    let is_prepare = |d: &ToolDecl| bus.is_prepare(d);
    let has_commit = set.iter().any(|d| d.name == COMMIT_TOOL);
    let commit = bus.decl(COMMIT_TOOL);
    if let (false, Some(commit)) = (has_commit, commit) {
        let prepares = set.iter().filter(|d| is_prepare(d)).count();
        if prepares > 0 {
            if set.len() >= limit {
                let removable = |d: &ToolDecl| {
                    !(bus.pinned.contains(&d.name) || is_prepare(d) && prepares == 1)
                };
                let room = set.iter().rposition(|d| removable(d));
                if let Some(i) = room {
                    set.remove(i);
                    set.push(commit);
                }
            } else {
                set.push(commit);
            }
        }
    }
    set
}

/// The usage counts a selection for `owner` weighs: the caller's own, or an owner's it acts
/// for; none for the anonymous caller asking for no owner.
fn usage_for<R: Runtime>(rt: &R, caller: &Principal, owner: Option<Principal>) -> ApiResult<Usage> {
    if *caller == Principal::anonymous() && owner.is_none() {
        return Ok(Usage::new());
    }
    let owner = auth::acting_owner(rt, caller, owner)?;
    Ok(rt.with_state(|s| usage::counts(s, &owner)))
}

/// `select_tools`: the tools one request would be offered, best first.
pub fn select_tools<R: Runtime>(
    rt: &R,
    caller: Principal,
    args: SelectArgs,
) -> ApiResult<Vec<ToolInfo>> {
    check_query(&args.query)?;
    let limit = limit_of(args.limit)?;
    let usage = usage_for(rt, &caller, args.owner)?;
    let bus = rt.with_state(catalog::bus);
    Ok(offer(&bus, &args.query, limit, &usage)
        .into_iter()
        .map(|d| info(&bus, d))
        .collect())
}

/// `missing_tools`: the names a caller expects that the bus lacks, in its order, once each.
pub fn missing_tools<R: Runtime>(rt: &R, names: Vec<String>) -> ApiResult<Vec<String>> {
    if names.len() > MAX_EXPECTED_NAMES {
        return Err(err(
            ErrorCode::TooLarge,
            format!(
                "{} names, over the limit of {MAX_EXPECTED_NAMES}",
                names.len()
            ),
        ));
    }
    if let Some(n) = names.iter().find(|n| n.len() > MAX_NAME_BYTES) {
        return Err(err(
            ErrorCode::TooLarge,
            format!(
                "a name of {} bytes, over the limit of {MAX_NAME_BYTES}",
                n.len()
            ),
        ));
    }
    let bus = rt.with_state(catalog::bus);
    Ok(tool_host_core::bus::missing(&bus.decls, &names))
}

/// Checks the bus's stored indexes against its records (tests call it after every step, with
/// the intents' `check_indexes`).
pub fn check_indexes<M: ic_stable_structures::Memory>(
    s: &crate::state::State<M>,
) -> Result<(), String> {
    use crate::model::TaskKind;
    let mut indexed: std::collections::BTreeMap<(Principal, u64), bool> = Default::default();
    for e in s.owner_turns.iter() {
        let (k, v) = e.into_pair();
        indexed.insert(k, v);
    }
    let tasks: std::collections::BTreeSet<(u64, u8, u64)> = s.due.keys().collect();
    let mut n = 0u64;
    for e in s.turns.iter() {
        let (id, t) = e.into_pair();
        n += 1;
        if t.id != id {
            return Err(format!("turn {id} is stored as turn {}", t.id));
        }
        match indexed.remove(&(t.owner, id)) {
            Some(f) if f == t.finished() => {}
            other => {
                return Err(format!(
                    "turn {id}: the owners' index says {other:?}, the turn finished={}",
                    t.finished()
                ))
            }
        }
        if !tasks.contains(&TaskKind::PruneTurn.key(t.prune_at, id)) {
            return Err(format!("turn {id} has no prune task at {}", t.prune_at));
        }
        if t.steps.len() > turns::MAX_STEPS {
            return Err(format!("turn {id} has {} steps", t.steps.len()));
        }
    }
    if let Some(k) = indexed.keys().next() {
        return Err(format!("the owners' index names a missing turn {k:?}"));
    }
    if s.config.get().bus.turns_kept != n {
        return Err(format!(
            "{} turns counted, {n} kept",
            s.config.get().bus.turns_kept
        ));
    }
    let mut per_owner: std::collections::BTreeMap<Principal, usize> = Default::default();
    let mut by_id: std::collections::BTreeMap<u64, (Principal, u64)> =
        s.inbox_ids.iter().map(|e| e.into_pair()).collect();
    for e in s.inbox.iter() {
        let ((owner, id), entry) = e.into_pair();
        if entry.owner != owner || entry.id != id {
            return Err(format!(
                "inbox entry ({owner}, {id}) is stored under another key"
            ));
        }
        match by_id.remove(&id) {
            Some((o, prune_at)) if o == owner => {
                if !tasks.contains(&TaskKind::PruneInbox.key(prune_at, id)) {
                    return Err(format!("inbox entry {id} has no prune task at {prune_at}"));
                }
            }
            other => {
                return Err(format!(
                    "inbox entry ({owner}, {id}): the id index says {other:?}"
                ))
            }
        }
        *per_owner.entry(owner).or_default() += 1;
    }
    if let Some((o, n)) = per_owner
        .iter()
        .find(|(_, n)| **n > builtins::MAX_INBOX_PER_OWNER)
    {
        return Err(format!("{o}'s inbox holds {n} entries"));
    }
    if let Some(id) = by_id.keys().next() {
        return Err(format!("the inbox's id index names a missing entry {id}"));
    }
    let entries: usize = per_owner.values().sum();
    if s.config.get().bus.inbox_kept != entries as u64 {
        return Err(format!(
            "{} inbox entries counted, {entries} kept",
            s.config.get().bus.inbox_kept
        ));
    }
    Ok(())
}
