//! What admins manage: forms, target canisters (with refs read from the canister itself),
//! admins, limits.

use crate::auth;
use crate::catalog;
use crate::errors::*;
use crate::form_review;
use crate::model::{StoredForm, Target};
use crate::runtime::{CallOutcome, Runtime};
use crate::types::Limits;
use crate::types::*;
use candid::{IDLArgs, IDLValue, Principal};
use serde_json::{Map, Value};
use std::sync::Arc;
use tool_host_core::form::parse_form;
use tool_host_core::plan::combine_tool_plans;

/// `DIDL` with no arguments: what a ref query is called with.
pub const NO_ARGS: &[u8] = b"DIDL\x00\x00";

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// Input positions all the forms held may read together (`FormTools::positions`, a named type
/// counted at each use): the catalog's build after an upgrade plans and renders every form in
/// one message (about 86 000 instructions a position where each is an input of its own
/// described in 950 characters, docs/perf.md, "limits"), registering a canister makes its
/// forms' tools again (about 116 000), and `list_forms`, a query, reviews every form's tools
/// after an upgrade (about 43 000): at the bound 4.3 B, 5.8 B and 2.1 B, under an update's
/// 40 B and a query's 5 B.
pub const MAX_HOST_POSITIONS: usize = 50_000;

pub fn register_form<R: Runtime>(
    rt: &R,
    caller: Principal,
    args: RegisterFormArgs,
) -> ApiResult<FormInfo> {
    auth::admin(rt, &caller)?;
    if !valid_id(&args.id) {
        return Err(err(
            ErrorCode::InvalidArgument,
            "a form id has 1 to 64 letters, digits, '_', '-' or '.'",
        ));
    }
    let limits = rt.with_state(|s| s.limits());
    if args.json.len() > limits.max_form_bytes as usize {
        return Err(err(
            ErrorCode::TooLarge,
            format!(
                "the form is {} bytes, over the limit of {}",
                args.json.len(),
                limits.max_form_bytes
            ),
        ));
    }
    let form = parse_form(args.json.as_bytes()).map_err(|problems| ApiError {
        code: ErrorCode::InvalidForm.as_str().into(),
        message: format!(
            "the form is refused: {} problem{}",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" }
        ),
        issues: problems
            .into_iter()
            .map(|p| IssueView {
                param: String::new(),
                path: p.path,
                code: "E_FORM".into(),
                message: p.reason,
            })
            .collect(),
    })?;
    rt.mark("register_form: parsed");
    let form = Arc::new(form);
    // Planned once: the answer's tools and the catalog's entry for it.
    let entry = catalog::FormEntry::new(args.id.clone(), form.clone());
    let mut info = form_info(&entry, args.json.len(), rt.now());
    rt.mark("register_form: planned");
    let mut warnings = (vec![], false);
    let positions = entry.tools.positions;
    rt.with_state(|s| {
        if !s.forms.contains_key(&args.id) && s.forms.len() >= limits.max_forms as u64 {
            return Err(err(
                ErrorCode::Limit,
                format!("the tool host keeps at most {} forms", limits.max_forms),
            ));
        }
        let entries = &catalog::current(s).entries;
        let replaced = entries.get(&args.id).map_or(0, |e| e.tools.positions);
        let held = entries.values().map(|e| e.tools.positions).sum::<usize>() - replaced;
        // A form replaced by a smaller one is taken whatever is held (forms stored before the
        // bound may be past it).
        if held + positions > MAX_HOST_POSITIONS && positions > replaced {
            return Err(err(
                ErrorCode::Limit,
                format!(
                    "the forms held would read {} input positions together, over the tool host's {MAX_HOST_POSITIONS} (this form's methods read {positions}, a named type counted at each use): remove a form, or register one whose inputs are smaller",
                    held + positions
                ),
            ));
        }
        let used = s.open_uses_with(&format!("{}\0", args.id), IN_USE_NAMED);
        if !used.is_empty() {
            return Err(in_use(format!("form '{}'", args.id), &used));
        }
        warnings = review_form(rt, s, &args.id, &form)?;
        rt.mark("register_form: reviewed");
        let broken_before = broken_uses(s);
        let before = s.forms.insert(
            args.id.clone(),
            StoredForm {
                json: args.json,
                registered_at: rt.now(),
                registered_by: caller,
            },
        );
        s.form_changed(&args.id, Some(entry));
        rt.mark("register_form: stored");
        if let Err(e) = check_uses(s, &broken_before) {
            // Put back what was there: nothing changes.
            match before {
                Some(f) => s.forms.insert(args.id.clone(), f),
                None => s.forms.remove(&args.id),
            };
            s.form_changed(&args.id, None);
            catalog::bus(s);
            return Err(e);
        }
        rt.mark("register_form: uses checked");
        // Built here, as every other change does, so queries until the next update copy it
        // rather than build one each and drop it.
        catalog::bus(s);
        rt.mark("register_form: bus built");
        Ok(())
    })?;
    (info.warnings, info.more_warnings) = warnings;
    Ok(info)
}

/// The bus's review of a form's tools before it is stored: refused (`INVALID_FORM`, one issue
/// per tool and check, `param` the tool) for a declaration a provider would refuse or a tool
/// name another form's tool has, for the canisters the form applies to now; else the overlaps
/// with each other and with every tool held (other forms', `commit`, the enabled builtins).
fn review_form<R: Runtime>(
    rt: &R,
    s: &mut crate::state::State<R::M>,
    id: &str,
    form: &Arc<tool_host_core::form::Form>,
) -> ApiResult<(Vec<OverlapView>, bool)> {
    let held = catalog::bus(s);
    rt.mark("register_form: held tools");
    let cat = catalog::current(s);
    let decls = form_review::form_decls(id, form, cat);
    rt.mark("register_form: declared");
    let mut issues = form_review::taken_names(cat, id, &decls.decls);
    let review = decls.review(&form_review::held_tools(&held, id));
    rt.mark("register_form: review done");
    issues.extend(form_review::issue_views(review.issues));
    if !issues.is_empty() {
        return Err(form_review::refusal(issues));
    }
    Ok((
        form_review::overlap_views(review.overlaps),
        review.more_overlaps,
    ))
}

/// The declaration issues of `forms`' tools, and of the forms `old` (the target's registration
/// being replaced) applied to, under the catalog now.
fn forms_issues<M: ic_stable_structures::Memory>(
    s: &mut crate::state::State<M>,
    forms: &[String],
    old: Option<&Target>,
) -> Vec<IssueView> {
    let cat = catalog::current(s);
    let mut ids: Vec<&String> = forms
        .iter()
        .chain(old.iter().flat_map(|t| &t.forms))
        .collect();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .flat_map(|f| form_review::form_issues(cat, f))
        .collect()
}

/// The target `id` set to `target` (`None`: not registered), the catalog told.
fn set_target<M: ic_stable_structures::Memory>(
    s: &mut crate::state::State<M>,
    id: Principal,
    target: Option<Target>,
) {
    match target {
        Some(t) => s.targets.insert(id, t),
        None => s.targets.remove(&id),
    };
    s.target_changed(id);
}

/// A target refused for what it breaks: its id and label go into the `canister_id` input's
/// description and its refs into amounts' (a tool's name comes from its form alone, so no
/// target can make one invalid). Issues already there before are not this target's doing.
fn newly_failing(id: Principal, before: &[IssueView], after: Vec<IssueView>) -> ApiResult<()> {
    let new: Vec<IssueView> = after
        .into_iter()
        .filter(|a| {
            !before
                .iter()
                .any(|b| b.param == a.param && b.path == a.path)
        })
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    Err(ApiError {
        code: ErrorCode::InvalidArgument.as_str().into(),
        message: format!(
            "registering canister {id} would make {} declaration{} of its forms' tools fail a model provider's checks; nothing changed",
            new.len(),
            if new.len() == 1 { "" } else { "s" }
        ),
        issues: new,
    })
}

/// Intents not settled that use a form (or a form on a canister): `IN_USE` naming them.
fn in_use(what: String, ids: &[u64]) -> ApiError {
    let named: Vec<String> = ids.iter().map(u64::to_string).collect();
    err(
        ErrorCode::InUse,
        format!(
            "{what} is used by intents that are not settled ({}{}); they keep their tools until each is confirmed, declined, expired or reconciled",
            named.join(", "),
            if ids.len() >= IN_USE_NAMED { ", ..." } else { "" }
        ),
    )
}

/// Intents named in an `IN_USE` refusal at most.
const IN_USE_NAMED: usize = 10;

/// The uses whose tool is no longer offered by their form on their canister (none, but for
/// intents carried over from a version that did not guard registrations, or tools a newer
/// rule skips): a change is refused only for uses it breaks, never for ones broken before it.
fn broken_uses<M: ic_stable_structures::Memory>(
    s: &mut crate::state::State<M>,
) -> std::collections::BTreeSet<String> {
    let uses = s.uses_in_use();
    let cat = catalog::current(s);
    uses.into_iter()
        .filter(|k| {
            let mut parts = k.split('\0');
            let (form, canister, tool) = (
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
            );
            let offered = cat.tool(tool).is_some_and(|t| t.plan().form.id == form)
                && cat
                    .canisters
                    .iter()
                    .any(|c| c.id.to_text() == canister && c.applies_to(form));
            !offered
        })
        .collect()
}

/// After a registration change: every tool an intent not settled uses must still be offered,
/// by the same form, on the same canister (a new form can also take a tool's name away), unless
/// it was not offered before the change either (`before`: `broken_uses` then).
fn check_uses<M: ic_stable_structures::Memory>(
    s: &mut crate::state::State<M>,
    before: &std::collections::BTreeSet<String>,
) -> ApiResult<()> {
    let broken = broken_uses(s).into_iter().find(|k| !before.contains(k));
    match broken {
        None => Ok(()),
        Some(k) => {
            let tool = k.rsplit('\0').next().unwrap_or("").to_string();
            let ids = s.open_uses_with(&k, IN_USE_NAMED);
            Err(in_use(
                format!("the tool {tool} (it would no longer be offered)"),
                &ids,
            ))
        }
    }
}

/// What `register_form` and `list_forms` say of a form: its tools alone, as if no other form
/// were registered.
fn form_info(entry: &catalog::FormEntry, bytes: usize, at: u64) -> FormInfo {
    let plans = combine_tool_plans(&[(&entry.form, &entry.tools)]);
    FormInfo {
        id: entry.form.id.clone(),
        bytes: bytes as u32,
        methods: entry.form.form.methods.len() as u32,
        registered_at: at,
        tools: plans.tool_names(),
        skipped: plans
            .skipped
            .into_iter()
            .map(|s| SkipView {
                method: s.method,
                reason: s.reason,
            })
            .collect(),
        warnings: vec![],
        more_warnings: false,
        declaration_issues: vec![],
    }
}

pub fn remove_form<R: Runtime>(rt: &R, caller: Principal, id: String) -> ApiResult<()> {
    auth::admin(rt, &caller)?;
    rt.with_state(|s| {
        if !s.forms.contains_key(&id) {
            return Err(err(ErrorCode::NotFound, format!("no form '{id}'")));
        }
        let users: Vec<String> = s
            .targets
            .iter()
            .filter(|e| e.value().forms.contains(&id))
            .map(|e| e.key().to_text())
            .collect();
        let used = s.open_uses_with(&format!("{id}\0"), IN_USE_NAMED);
        if !used.is_empty() {
            return Err(in_use(format!("form '{id}'"), &used));
        }
        if !users.is_empty() {
            return Err(err(
                ErrorCode::InUse,
                format!(
                    "form '{id}' applies to {}; register them without it first",
                    users.join(", ")
                ),
            ));
        }
        s.forms.remove(&id);
        s.form_changed(&id, None);
        catalog::bus(s);
        Ok(())
    })
}

pub fn list_forms<R: Runtime>(rt: &R, caller: Principal) -> ApiResult<Vec<FormInfo>> {
    auth::user(&caller)?;
    Ok(rt.with_state(|s| {
        let stored: Vec<(String, StoredForm)> = s.forms.iter().map(|e| e.into_pair()).collect();
        let cat = catalog::current(s);
        stored
            .into_iter()
            .filter_map(|(id, f)| {
                // A stored form that no longer parses has no entry, and is not listed.
                let entry = cat.entries.get(&id)?;
                let mut info = form_info(entry, f.json.len(), f.registered_at);
                // A form stored before the checks (or whose canisters' refs changed since) stays
                // and is offered; this tells what a provider would refuse in it.
                info.declaration_issues = form_review::form_issues(cat, &id);
                Some(info)
            })
            .collect()
    }))
}

pub async fn register_canister<R: Runtime>(
    rt: &R,
    caller: Principal,
    args: RegisterCanisterArgs,
) -> ApiResult<TargetView> {
    auth::admin(rt, &caller)?;
    // A canister for a single owner offers that owner every tool of its forms, with the tool
    // host's whole authority on it (which may reach other owners' funds: deposits, approvals
    // given to it): a controller's decision, never an admin's (admins, like forms, are inputs).
    if let Some(o) = args.owner {
        let same = rt.with_state(|s| s.targets.get(&args.id).is_some_and(|t| t.owner == Some(o)));
        if !same && !rt.is_controller(&caller) {
            return Err(err(
                ErrorCode::NotAuthorized,
                format!("only a controller registers a canister for a single owner ({o}); {caller} is an admin: register {} without an owner, or ask a controller", args.id),
            ));
        }
    }
    if args.id == Principal::anonymous()
        || args.id == Principal::management_canister()
        || args.id == rt.self_id()
    {
        return Err(err(
            ErrorCode::InvalidArgument,
            format!("{} cannot be a target canister", args.id),
        ));
    }
    if args.forms.is_empty() {
        return Err(err(
            ErrorCode::InvalidArgument,
            "name at least one form that applies to the canister",
        ));
    }
    if let Some(l) = &args.label {
        if l.is_empty() || l.chars().count() > 32 {
            return Err(err(
                ErrorCode::InvalidArgument,
                "a label has 1 to 32 characters",
            ));
        }
    }
    if args.owner == Some(Principal::anonymous()) {
        return Err(err(
            ErrorCode::InvalidArgument,
            "the anonymous principal cannot own a canister's tools",
        ));
    }
    let limits = rt.with_state(|s| s.limits());
    rt.with_state(|s| {
        for f in &args.forms {
            if !s.forms.contains_key(f) {
                return Err(err(
                    ErrorCode::NotFound,
                    format!("no form '{f}'; register it first"),
                ));
            }
        }
        let existing = s.targets.get(&args.id);
        if existing.is_none() && s.targets.len() >= limits.max_canisters as u64 {
            return Err(err(
                ErrorCode::Limit,
                format!(
                    "the tool host keeps at most {} canisters",
                    limits.max_canisters
                ),
            ));
        }
        let mut forms = args.forms.clone();
        forms.sort();
        forms.dedup();
        let t = Target {
            label: args.label.clone(),
            forms,
            refs_json: existing
                .as_ref()
                .map(|t| t.refs_json.clone())
                .unwrap_or_else(|| "{}".into()),
            refs_updated_at: existing.as_ref().and_then(|t| t.refs_updated_at),
            refs_error: None,
            icrc3: existing.as_ref().is_some_and(|t| t.icrc3),
            owner: args.owner,
            registered_at: existing
                .as_ref()
                .map(|t| t.registered_at)
                .unwrap_or(rt.now()),
        };
        if let Some(old) = &existing {
            if old.owner != t.owner {
                let used: Vec<u64> = old
                    .forms
                    .iter()
                    .flat_map(|f| s.open_uses_with(&format!("{f}\0{}\0", args.id), IN_USE_NAMED))
                    .take(IN_USE_NAMED)
                    .collect();
                if !used.is_empty() {
                    return Err(in_use(
                        format!("canister {} (its owner would change)", args.id),
                        &used,
                    ));
                }
            }
        }
        let broken_before = broken_uses(s);
        let forms = t.forms.clone();
        set_target(s, args.id, Some(t.clone()));
        let decl_after = forms_issues(s, &forms, None);
        let checked = check_uses(s, &broken_before).and_then(|()| {
            // Which issues were there before is asked only when there are some now (most
            // registrations have none): each review declares every tool of the forms with
            // the enum of every canister they apply to.
            if decl_after.is_empty() {
                return Ok(());
            }
            set_target(s, args.id, existing.clone());
            let decl_before = forms_issues(s, &forms, existing.as_ref());
            set_target(s, args.id, Some(t));
            newly_failing(args.id, &decl_before, decl_after)
        });
        if let Err(e) = checked {
            set_target(s, args.id, existing);
            catalog::bus(s);
            return Err(e);
        }
        Ok(())
    })?;
    refresh_target(rt, args.id).await;
    rt.with_state(|s| {
        catalog::bus(s);
        let t = s.targets.get(&args.id)?;
        Some(target_view(args.id, &t, catalog::current(s)))
    })
    .ok_or_else(|| {
        err(
            ErrorCode::NotFound,
            "the canister was removed while its refs were read",
        )
    })
}

pub fn remove_canister<R: Runtime>(rt: &R, caller: Principal, id: Principal) -> ApiResult<()> {
    auth::admin(rt, &caller)?;
    rt.with_state(|s| {
        if !s.targets.contains_key(&id) {
            return Err(err(ErrorCode::NotFound, format!("no target canister {id}")));
        }
        // Intents not settled still need the canister: found through the uses index, one
        // range read per form of the canister (bounded work, whatever the number of intents).
        let forms = s.targets.get(&id).map(|t| t.forms).unwrap_or_default();
        let used: Vec<u64> = forms
            .iter()
            .flat_map(|f| s.open_uses_with(&format!("{f}\0{id}\0"), IN_USE_NAMED))
            .take(IN_USE_NAMED)
            .collect();
        if !used.is_empty() {
            return Err(in_use(format!("canister {id}"), &used));
        }
        s.targets.remove(&id);
        s.target_changed(id);
        catalog::bus(s);
        Ok(())
    })
}

pub fn list_canisters<R: Runtime>(rt: &R, caller: Principal) -> ApiResult<Vec<TargetView>> {
    auth::user(&caller)?;
    Ok(rt.with_state(|s| {
        let targets: Vec<(Principal, Target)> = s.targets.iter().map(|e| e.into_pair()).collect();
        let cat = catalog::current(s);
        targets
            .iter()
            .map(|(id, t)| target_view(*id, t, cat))
            .collect()
    }))
}

pub fn target_view(id: Principal, t: &Target, cat: &catalog::Catalog) -> TargetView {
    let skipped = if t.owner.is_some() {
        vec![]
    } else {
        cat.unbound_tools(|f| t.forms.iter().any(|g| g == f))
            .into_iter()
            .map(|(tool, u)| SkipView {
                method: tool,
                reason: u.why(),
            })
            .collect()
    };
    TargetView {
        id,
        label: t.label.clone(),
        forms: t.forms.clone(),
        refs: t.refs_json.clone(),
        refs_updated_at: t.refs_updated_at,
        refs_error: t.refs_error.clone(),
        icrc3: t.icrc3,
        owner: t.owner,
        skipped,
    }
}

pub async fn refresh_refs<R: Runtime>(
    rt: &R,
    caller: Principal,
    id: Option<Principal>,
) -> ApiResult<Vec<TargetView>> {
    auth::admin(rt, &caller)?;
    let ids: Vec<Principal> = match id {
        Some(id) => {
            if !rt.with_state(|s| s.targets.contains_key(&id)) {
                return Err(err(ErrorCode::NotFound, format!("no target canister {id}")));
            }
            vec![id]
        }
        None => rt.with_state(|s| s.targets.keys().collect()),
    };
    for id in &ids {
        refresh_target(rt, *id).await;
    }
    Ok(rt.with_state(|s| {
        // Built here, once, rather than by every query until the next update builds it.
        catalog::bus(s);
        let targets: Vec<(Principal, Target)> = ids
            .iter()
            .filter_map(|id| s.targets.get(id).map(|t| (*id, t)))
            .collect();
        let cat = catalog::current(s);
        targets
            .iter()
            .map(|(id, t)| target_view(*id, t, cat))
            .collect()
    }))
}

/// Reads a target's refs (every `query:` source of its forms) and whether it lists ICRC-3.
/// Nothing is held across the awaits; the result is written only if the target still exists.
pub async fn refresh_target<R: Runtime>(rt: &R, id: Principal) {
    let Some((sources, refused, timeout)) = rt.with_state(|s| {
        let t = s.targets.get(&id)?;
        let mut sources = std::collections::BTreeSet::new();
        let mut queries = std::collections::BTreeSet::new();
        // The forms as the catalog parsed them (a stored form that does not parse has none).
        for f in &t.forms {
            if let Some(e) = catalog::form_entry(s, f) {
                sources.extend(e.ref_sources.iter().cloned());
                // The methods a ref may read: queries of the form without arguments.
                queries.extend(e.ref_queries.iter().cloned());
            }
        }
        // On a canister several owners share, only from a read the engine knows: a form
        // cannot make a method a query (the target runs it as it defines it).
        let single = t.owner.is_some();
        let (sources, refused): (Vec<String>, Vec<String>) = sources.into_iter().partition(|src| {
            let m = src.trim_start_matches("query:");
            queries.contains(m) && (single || crate::custody::known_read(m))
        });
        let refused: Vec<String> = refused
            .into_iter()
            .map(|src| {
                let m = src.trim_start_matches("query:");
                if queries.contains(m) {
                    format!("{src}: not a read the engine knows, on a canister several owners share; not read")
                } else {
                    format!("{src}: not a query of the forms without arguments; not read")
                }
            })
            .collect();
        Some((sources, refused, s.limits().call_timeout_seconds))
    }) else {
        return;
    };
    let mut refs = Map::new();
    // A ref is read only from a query the form declares without arguments (and, on a shared
    // canister, a read the engine knows): an update (which nobody confirmed) is never called
    // to read one.
    let mut errors: Vec<String> = refused;
    for src in &sources {
        let method = src.trim_start_matches("query:");
        match rt.call(id, method, NO_ARGS.to_vec(), timeout).await {
            CallOutcome::Replied(bytes) => match IDLArgs::from_bytes(&bytes)
                .ok()
                .and_then(|a| a.args.into_iter().next())
            {
                Some(v) => {
                    refs.insert(src.clone(), value_json(&v));
                }
                None => errors.push(format!("{method}: the reply does not decode")),
            },
            CallOutcome::Rejected { code, message } => {
                errors.push(format!("{method}: rejected ({code}) {message}"))
            }
            CallOutcome::NotSent(m) => errors.push(format!("{method}: not sent: {m}")),
        }
    }
    // Only an answer changes whether the target lists ICRC-3: a failed read keeps what was
    // known (turning it off would leave unknown outcomes unreconciled).
    let icrc3 = match rt
        .call(id, "icrc1_supported_standards", NO_ARGS.to_vec(), timeout)
        .await
    {
        CallOutcome::Replied(bytes) => {
            let listed = lists_icrc3(&bytes);
            if listed.is_none() {
                errors.push("icrc1_supported_standards: the reply does not decode".into());
            }
            listed
        }
        CallOutcome::Rejected { code, message } => {
            errors.push(format!(
                "icrc1_supported_standards: rejected ({code}) {message}"
            ));
            None
        }
        CallOutcome::NotSent(m) => {
            errors.push(format!("icrc1_supported_standards: not sent: {m}"));
            None
        }
    };
    let now = rt.now();
    rt.with_state(|s| {
        if let Some(mut t) = s.targets.get(&id) {
            let old: Map<String, Value> = serde_json::from_str(&t.refs_json).unwrap_or_default();
            // A ref that could not be read this time keeps its last value.
            let mut merged = old;
            merged.extend(refs);
            let refs_json = Value::Object(merged).to_string();
            let icrc3 = icrc3.unwrap_or(t.icrc3);
            // Plans read only the refs and the ICRC-3 flag: a refresh that changes neither
            // leaves the catalog (and prepares awaiting name sets) alone.
            let changed = refs_json != t.refs_json || icrc3 != t.icrc3;
            t.refs_json = refs_json;
            t.icrc3 = icrc3;
            t.refs_updated_at = Some(now);
            t.refs_error = (!errors.is_empty()).then(|| errors.join("; "));
            s.targets.insert(id, t);
            if changed {
                s.target_changed(id);
            }
        }
    });
}

/// Whether an `icrc1_supported_standards` reply lists ICRC-3; `None` when it does not decode.
pub fn lists_icrc3(bytes: &[u8]) -> Option<bool> {
    let args = IDLArgs::from_bytes(bytes).ok()?;
    let Some(IDLValue::Vec(items)) = args.args.first() else {
        return None;
    };
    Some(items.iter().any(|item| {
        match item {
            IDLValue::Record(fields) => fields
                .iter()
                .any(|f| matches!(&f.val, IDLValue::Text(t) if t == "ICRC-3")),
            _ => false,
        }
    }))
}

/// A ref's value as JSON: whole numbers as numbers (digit strings past u64), text as text.
pub fn value_json(v: &IDLValue) -> Value {
    match v {
        IDLValue::Text(t) => Value::String(t.clone()),
        IDLValue::Bool(b) => Value::Bool(*b),
        IDLValue::Principal(p) => Value::String(p.to_text()),
        IDLValue::Opt(inner) => value_json(inner),
        IDLValue::None | IDLValue::Null => Value::Null,
        other => match tool_host_core::read::value::value_int(other) {
            Some(n) => match u64::try_from(n.clone()) {
                Ok(x) => Value::from(x),
                Err(_) => Value::String(n.to_string()),
            },
            None => Value::String(other.to_string()),
        },
    }
}

pub fn get_limits<R: Runtime>(rt: &R, caller: Principal) -> ApiResult<Limits> {
    auth::user(&caller)?;
    Ok(rt.with_state(|s| s.limits()))
}

pub fn set_limits<R: Runtime>(rt: &R, caller: Principal, l: Limits) -> ApiResult<Limits> {
    auth::admin(rt, &caller)?;
    check_limits(&l)?;
    rt.with_state(|s| s.set_limits(&l));
    Ok(l)
}

/// The bounds every limit keeps, whoever sets it: `set_limits`, the install argument and the
/// upgrade argument (lifecycle) all pass here.
pub fn check_limits(l: &Limits) -> ApiResult<()> {
    let checks: [(bool, &str); 14] = [
        ((1..=1000).contains(&l.max_open_intents_per_owner), "max_open_intents_per_owner is 1 to 1000"),
        ((1..=256).contains(&l.max_agents_per_owner), "max_agents_per_owner is 1 to 256"),
        ((1..=256).contains(&l.max_forms), "max_forms is 1 to 256"),
        ((1..=1024).contains(&l.max_canisters), "max_canisters is 1 to 1024"),
        ((1024..=tool_host_core::form::limits::MAX_FORM_BYTES as u32).contains(&l.max_form_bytes), "max_form_bytes is 1 KiB to 256 KiB"),
        ((256..=tool_host_core::read::MAX_INPUT_BYTES as u32).contains(&l.max_input_bytes), "max_input_bytes is 256 B to 64 KiB"),
        (l.preview_ttl_seconds >= 60 && l.preview_ttl_seconds <= 7 * 86_400, "preview_ttl_seconds is 60 s to 7 days"),
        (l.retention_seconds >= 3_600 && l.reconcile_delay_seconds >= 1 && l.reconcile_delay_seconds <= 3_600 && l.refs_refresh_seconds >= 60, "retention_seconds ≥ 1 h, reconcile_delay_seconds 1 s to 1 h, refs_refresh_seconds ≥ 60 s"),
        ((1..=300).contains(&l.call_timeout_seconds), "call_timeout_seconds is 1 to 300"),
        ((1_000..=10_000_000).contains(&l.max_intents), "max_intents is 1 000 to 10 000 000"),
        ((l.max_open_intents_per_owner..=100_000).contains(&l.max_intents_per_owner), "max_intents_per_owner is max_open_intents_per_owner to 100 000"),
        ((1 << 20..=64 << 30).contains(&l.max_stored_input_bytes), "max_stored_input_bytes is 1 MiB to 64 GiB"),
        ((1..=10_000).contains(&l.max_reads_per_owner_per_minute), "max_reads_per_owner_per_minute is 1 to 10 000"),
        ((1_000..=10_000_000).contains(&l.max_agents_total), "max_agents_total is 1 000 to 10 000 000"),
    ];
    if let Some((_, why)) = checks.iter().find(|(ok, _)| !ok) {
        return Err(err(ErrorCode::InvalidArgument, *why));
    }
    Ok(())
}

pub fn add_admin<R: Runtime>(rt: &R, caller: Principal, admin: Principal) -> ApiResult<()> {
    auth::controller(rt, &caller)?;
    auth::user(&admin)?;
    let now = rt.now();
    rt.with_state(|s| s.admins.insert(admin, now));
    Ok(())
}

pub fn remove_admin<R: Runtime>(rt: &R, caller: Principal, admin: Principal) -> ApiResult<()> {
    auth::controller(rt, &caller)?;
    rt.with_state(|s| s.admins.remove(&admin))
        .map(|_| ())
        .ok_or_else(|| err(ErrorCode::NotFound, format!("{admin} is not an admin")))
}

pub fn list_admins<R: Runtime>(rt: &R, caller: Principal) -> ApiResult<Vec<Principal>> {
    auth::admin(rt, &caller)?;
    Ok(rt.with_state(|s| s.admins.keys().collect()))
}
