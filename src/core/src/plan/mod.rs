//! Tool plans: which tools a set of resolved forms gives, and for each how its inputs are read
//! and its argument is built. Methods without a rule are skipped with the reason, never thrown.

mod reader;

pub use reader::{host_fill, tag_of, value_tag, Reader, ReaderBuilder};

use crate::classify::Classifier;
use crate::form::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub const COMMIT_TOOL: &str = "commit";
/// The input that picks the target canister; an argument field of this name skips its method.
pub const CANISTER_PARAM: &str = "canister_id";

pub fn prepare_tool_name(method: &str) -> String {
    format!("prepare_{method}")
}

/// The tool of one case of a method's variant argument.
pub fn case_tool_name(method: &str, case: &str, read: bool) -> String {
    if read {
        format!("{method}_{case}")
    } else {
        format!("prepare_{method}_{case}")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    Read,
    Prepare,
}

/// A form with the id it is registered under (its `name`, or an index when it has none).
#[derive(Clone, Debug)]
pub struct FormRef {
    pub id: String,
    pub form: Arc<Form>,
}

/// One input of a tool.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    /// `$args[0].amount`, or `$args[0]` for a whole argument.
    pub path: String,
    pub node: Node,
    /// An `opt` position: the input may be left out.
    pub optional: bool,
    pub reader: Reader,
}

/// How one position of the argument is filled.
#[derive(Clone, Debug)]
pub enum Fill {
    /// From the input of `params[i]`.
    Param(usize),
    /// A default from the canister's refs, the owner, or a literal.
    Auto(Auto),
    /// The idempotency stamp: the clock at preparation.
    Stamp,
    /// A unique memo made at preparation.
    Memo,
    /// Nothing: `null` for opt, `null` and `reserved` as themselves.
    Empty,
}

#[derive(Clone, Debug)]
pub struct Slot {
    /// The record field, or `None` for the whole position.
    pub label: Option<Label>,
    pub node: Node,
    pub fill: Fill,
}

/// How one argument is built.
#[derive(Clone, Debug)]
pub enum ArgPlan {
    /// A record whose fields are filled one by one.
    Fields(Vec<Slot>),
    Whole(Box<Slot>),
    /// A case of a variant argument (one tool per case), with its payload.
    Case {
        label: Label,
        payload: Box<ArgPlan>,
    },
}

#[derive(Clone, Debug)]
pub struct ToolPlan {
    pub name: String,
    pub kind: ToolKind,
    pub form: FormRef,
    pub method: String,
    pub mode: Mode,
    /// A read sent as an update call (certified answer).
    pub replicated: bool,
    pub title: String,
    pub description: String,
    pub effect: Effect,
    pub case: Option<String>,
    pub params: Vec<Param>,
    pub args: Vec<ArgPlan>,
    pub has_stamp: bool,
    pub classifier: Classifier,
}

impl ToolPlan {
    pub fn method_def(&self) -> &Method {
        &self.form.form.methods[&self.method]
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skip {
    pub method: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default)]
pub struct ToolPlans {
    /// By tool name.
    pub plans: BTreeMap<String, ToolPlan>,
    pub skipped: Vec<Skip>,
}

impl ToolPlans {
    /// Whether `commit` is offered: there is something to prepare.
    pub fn has_commit(&self) -> bool {
        self.plans.values().any(|p| p.kind == ToolKind::Prepare)
    }
    /// Every tool name, `commit` included, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.plans.keys().cloned().collect();
        if self.has_commit() {
            names.push(COMMIT_TOOL.to_string());
        }
        names.sort();
        names
    }
}

/// MCP tool names: letters, digits, `_` and `-`, at most 64.
fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Builds every tool the forms give; methods without a rule are in `skipped` with the reason.
pub fn build_tool_plans(forms: &[FormRef]) -> ToolPlans {
    let mut candidates: Vec<ToolPlan> = vec![];
    let mut skipped: Vec<Skip> = vec![];
    // The forms (by index) in which each method is sent only after the owner's confirmation.
    let mut confirmed: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let mut from_form: Vec<usize> = vec![];
    for (fi, fr) in forms.iter().enumerate() {
        for (name, method) in &fr.form.methods {
            let writes =
                !method.mode.is_query() && !method.effect.as_ref().is_some_and(is_read_only_effect);
            if writes {
                confirmed.entry(name.clone()).or_default().insert(fi);
            }
            match plan_method(fr, name, method) {
                Ok((plans, case_skips)) => {
                    for p in plans {
                        match check_plan(&p) {
                            Ok(()) => {
                                if p.kind == ToolKind::Prepare {
                                    confirmed.entry(p.method.clone()).or_default().insert(fi);
                                }
                                candidates.push(p);
                                from_form.push(fi);
                            }
                            Err(reason) => skipped.push(Skip {
                                method: name.clone(),
                                reason,
                            }),
                        }
                    }
                    skipped.extend(case_skips);
                }
                Err(reason) => skipped.push(Skip {
                    method: name.clone(),
                    reason,
                }),
            }
        }
    }
    // A read tool of a method that another form sends only after confirmation (a prepare tool)
    // would send it at once: whichever form is right about it, it is not a read here.
    let mut kept = vec![];
    for (p, fi) in candidates.into_iter().zip(from_form) {
        let others: Vec<&str> = confirmed
            .get(&p.method)
            .into_iter()
            .flatten()
            .filter(|f| **f != fi)
            .map(|f| forms[*f].id.as_str())
            .collect();
        if p.kind == ToolKind::Read && !others.is_empty() {
            let reason = format!(
                "another form ({}) offers {} as a prepare tool, sent only after the owner's confirmation; it is never also a read tool",
                others.join(", "),
                p.method
            );
            skipped.push(Skip {
                method: p.method.clone(),
                reason: match &p.case {
                    Some(c) => format!("case {c}: {reason}"),
                    None => reason,
                },
            });
        } else {
            kept.push(p);
        }
    }
    let candidates = kept;
    // A tool name that is `commit`, or that two methods (or cases) would share, skips them all.
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &candidates {
        *count.entry(p.name.as_str()).or_default() += 1;
    }
    let clashing: BTreeSet<String> = count
        .iter()
        .filter(|(n, c)| **c > 1 || **n == COMMIT_TOOL)
        .map(|(n, _)| n.to_string())
        .collect();
    let mut plans = BTreeMap::new();
    for p in candidates {
        if clashing.contains(&p.name) {
            let reason = if p.name == COMMIT_TOOL {
                format!("its tool name '{COMMIT_TOOL}' is the commit tool's")
            } else {
                format!("its tool name '{}' is another method's tool name", p.name)
            };
            let reason = match &p.case {
                Some(c) => format!("case {c}: {reason}"),
                None => reason,
            };
            skipped.push(Skip {
                method: p.method.clone(),
                reason,
            });
        } else {
            plans.insert(p.name.clone(), p);
        }
    }
    skipped.sort_by(|a, b| (&a.method, &a.reason).cmp(&(&b.method, &b.reason)));
    skipped.dedup();
    ToolPlans { plans, skipped }
}

fn default_effect(mode: Mode) -> Effect {
    if mode.is_query() {
        Effect {
            kind: "read".into(),
            irreversible: false,
            replicated: false,
        }
    } else {
        Effect {
            kind: "write".into(),
            irreversible: true,
            replicated: true,
        }
    }
}

/// The one effect that makes an update a read-only update (a read tool sent as an update call).
pub fn is_read_only_effect(effect: &Effect) -> bool {
    effect.kind == "read" && !effect.irreversible && effect.replicated
}

/// Ledger methods that move funds (ICRC-1, -2, -4, -7, -37, and the ICP ledger's own `transfer`
/// and `send_dfx`): never a read tool (sent at once, without the owner's confirmation), whatever
/// a form says of them, also as a query (the host's call runs the method as the ledger has it).
pub const FUNDS_METHODS: [&str; 10] = [
    "icrc1_transfer",
    "icrc2_approve",
    "icrc2_transfer_from",
    "icrc4_transfer_batch",
    "icrc7_transfer",
    "icrc37_approve_tokens",
    "icrc37_approve_collection",
    "icrc37_transfer_from",
    "transfer",
    "send_dfx",
];

/// Whether a method (or case) with this effect gets a read tool, or why it is refused one: an
/// update is a read only with exactly the read-only effect, and a method that moves funds never.
fn is_read(method: &str, mode: Mode, effect: &Effect) -> Result<bool, String> {
    if !mode.is_query() && !effect.is_read() {
        return Ok(false);
    }
    if !mode.is_query() && !is_read_only_effect(effect) {
        return Err(format!(
            "a read-only update needs exactly effect {{ kind: \"read\", irreversible: false, replicated: true }} (this one: irreversible {}, replicated {}); a read tool is sent without the owner's confirmation",
            effect.irreversible, effect.replicated
        ));
    }
    if FUNDS_METHODS.contains(&method) {
        return Err(format!(
            "{method} moves funds: it is never a read tool (sent without the owner's confirmation), whatever the form says"
        ));
    }
    Ok(true)
}

/// The stamp and the memo are top-level fields of the one argument record, of their types: the
/// host fills only those. A stamp the host did not fill would be treated as stamped after an
/// unknown outcome and sent again, with nothing in the bytes for the ledger to deduplicate on.
fn check_idempotency(form: &Form, method: &Method, id: &Idempotency) -> Result<(), String> {
    let arg = &method.args[0];
    let fields = match resolve(form, arg) {
        Some(Ty::Record(fields)) if value_tag(form, arg).is_none() => fields,
        ty => {
            return Err(format!(
                "the stamp '{}' must be a field of the argument record, but the argument is {}",
                id.stamp,
                describe_ty(ty)
            ))
        }
    };
    let field = |what: &str, rp: &RelPath| -> Result<&FieldNode, String> {
        if rp.index != 0 {
            return Err(format!(
                "the {what} '{rp}' names argument {}, but the method has one argument",
                rp.index
            ));
        }
        match rp.labels.as_slice() {
            [] => Err(format!(
                "the {what} '{rp}' is the whole argument; it must be a field of the argument record"
            )),
            [label] => fields
                .iter()
                .find(|f| f.label.name() == Some(label.as_str()))
                .ok_or_else(|| format!("the {what} '{rp}' names no field of the argument record")),
            _ => Err(format!(
                "the {what} '{rp}' is not a top-level field of the argument record: the host fills only those (not one inside a vec element, a nested record or a variant case; batch methods are not offered yet)"
            )),
        }
    };
    let stamp = field("stamp", &id.stamp)?;
    if !is_nat64_or_opt(form, &stamp.node) {
        return Err(format!(
            "the stamp '{}' must be a nat64 or opt nat64",
            id.stamp
        ));
    }
    if let Some(memo) = &id.memo {
        let m = field("memo", memo)?;
        if m.label == stamp.label {
            return Err(format!("the memo '{memo}' is the stamp's field"));
        }
        if !is_blob_or_opt(form, &m.node) {
            return Err(format!("the memo '{memo}' must be a blob or opt blob"));
        }
    }
    Ok(())
}

/// A guard that holds whatever a form says, checked on every plan before it is offered: a
/// stamped plan fills exactly one stamp (a top-level field of its one argument record) and its
/// memo exactly once, an unstamped one neither; no input is a position the host fills; a read
/// tool is a query or an update with exactly the read-only effect, and never moves funds.
pub fn check_plan(plan: &ToolPlan) -> Result<(), String> {
    let method = plan.method_def();
    let guard = |why: String| Err(format!("refused by the plan guard: {why}"));
    if plan.has_stamp != method.idempotency.is_some() {
        return guard(format!(
            "has_stamp is {} but the method's idempotency is {}",
            plan.has_stamp,
            if method.idempotency.is_some() {
                "set"
            } else {
                "not set"
            }
        ));
    }
    let (mut stamps, mut memos, mut top_stamps) = (0, 0, 0);
    for (i, a) in plan.args.iter().enumerate() {
        count_fills(a, &mut stamps, &mut memos);
        if let (0, ArgPlan::Fields(slots)) = (i, a) {
            top_stamps += slots
                .iter()
                .filter(|s| matches!(s.fill, Fill::Stamp))
                .count();
        }
    }
    let want_memos = usize::from(
        plan.has_stamp
            && method
                .idempotency
                .as_ref()
                .is_some_and(|i| i.memo.is_some()),
    );
    if stamps != usize::from(plan.has_stamp)
        || top_stamps != stamps
        || plan.has_stamp && plan.args.len() != 1
    {
        return guard(format!(
            "has_stamp is {} but the plan fills {stamps} stamp positions ({top_stamps} of them fields of a one-argument record)",
            plan.has_stamp
        ));
    }
    if memos != want_memos {
        return guard(format!(
            "the plan fills {memos} memo positions, not {want_memos}"
        ));
    }
    for p in &plan.params {
        if matches!(p.reader, Reader::Host(_)) {
            return guard(format!(
                "the input '{}' is a position the host fills",
                p.name
            ));
        }
        if !host_slots_ok(&p.reader) {
            return guard(format!(
                "a position the host fills inside '{}' is not filled by a default or left empty",
                p.name
            ));
        }
    }
    if plan.kind == ToolKind::Read {
        if FUNDS_METHODS.contains(&plan.method.as_str()) {
            return guard(format!("{} moves funds and is a read tool", plan.method));
        }
        if !plan.mode.is_query() && !is_read_only_effect(&plan.effect) {
            return guard("an update read tool without the read-only effect".into());
        }
    }
    Ok(())
}

fn count_fills(a: &ArgPlan, stamps: &mut usize, memos: &mut usize) {
    let mut one = |s: &Slot| match s.fill {
        Fill::Stamp => *stamps += 1,
        Fill::Memo => *memos += 1,
        _ => {}
    };
    match a {
        ArgPlan::Fields(slots) => slots.iter().for_each(&mut one),
        ArgPlan::Whole(s) => one(s),
        ArgPlan::Case { payload, .. } => count_fills(payload, stamps, memos),
    }
}

/// Every host position below a reader is filled by a default or left empty.
fn host_slots_ok(r: &Reader) -> bool {
    match r {
        Reader::Host(s) => matches!(s.fill, Fill::Auto(_) | Fill::Empty),
        Reader::Named { inner, .. } | Reader::Opt(inner) => host_slots_ok(inner),
        Reader::Vec { elem, .. } => !matches!(**elem, Reader::Host(_)) && host_slots_ok(elem),
        Reader::Record(fs) | Reader::Variant(fs) => fs.iter().all(|(_, r)| host_slots_ok(r)),
        _ => true,
    }
}

type MethodPlans = (Vec<ToolPlan>, Vec<Skip>);

fn plan_method(fr: &FormRef, name: &str, method: &Method) -> Result<MethodPlans, String> {
    let form = &fr.form;
    let effect = method
        .effect
        .clone()
        .unwrap_or_else(|| default_effect(method.mode));
    let read = is_read(name, method.mode, &effect)?;
    if method.mode.is_query() && method.results.len() > 1 {
        return Err(format!(
            "a query with more than one result ({})",
            method.results.len()
        ));
    }
    if read && method.idempotency.is_some() {
        return Err("a stamped read: a read has no idempotency stamp".into());
    }
    let classifier = Classifier::new(form, method)?;
    if !read && method.idempotency.is_none() && classifier.can_retry_new() {
        return Err(
            "an outcome class retry_new renews a stamp, but the method has no idempotency stamp"
                .into(),
        );
    }
    if let Some(id) = &method.idempotency {
        if method.args.len() != 1 {
            return Err(format!("an idempotency stamp with {} arguments (a stamp is a field of the one argument record)", method.args.len()));
        }
        if id.stamp.labels.is_empty() {
            return Err(format!(
                "the stamp '{}' is the whole argument; it must be a field of the argument record",
                id.stamp
            ));
        }
    }
    // The case tools of a variant argument whose cases carry an intent or an effect.
    if method.args.len() == 1 {
        if let Some(Ty::Variant(cases)) = resolve(form, &method.args[0]) {
            if cases
                .iter()
                .any(|c| c.node.tags.intent.is_some() || c.node.tags.effect.is_some())
            {
                if method.idempotency.is_some() {
                    return Err("stamped case tools: a method with an idempotency stamp gets no case tools yet".into());
                }
                return Ok(plan_cases(fr, name, method, cases, &effect, &classifier));
            }
        }
    }
    if let Some(id) = &method.idempotency {
        check_idempotency(form, method, id)?;
    }
    let tool_name = if read {
        name.to_string()
    } else {
        prepare_tool_name(name)
    };
    if !valid_tool_name(&tool_name) {
        return Err(format!("the tool name '{tool_name}' is not a valid tool name (letters, digits, '_' or '-', at most 64)"));
    }
    let mut params = vec![];
    let args = plan_args(form, method, &method.args, &mut params)?;
    let title = method
        .intent
        .clone()
        .or_else(|| method.describe.as_deref().map(title_of))
        .unwrap_or_else(|| name.to_string());
    let description = describe_tool(
        method.describe.as_deref(),
        name,
        read,
        method.mode,
        method.idempotency.is_some(),
        effect.replicated && !method.mode.is_query(),
    );
    Ok((
        vec![ToolPlan {
            name: tool_name,
            kind: if read {
                ToolKind::Read
            } else {
                ToolKind::Prepare
            },
            form: fr.clone(),
            method: name.to_string(),
            mode: method.mode,
            replicated: read && !method.mode.is_query(),
            title,
            description,
            effect,
            case: None,
            params,
            args,
            has_stamp: method.idempotency.is_some(),
            classifier,
        }],
        vec![],
    ))
}

fn plan_cases(
    fr: &FormRef,
    name: &str,
    method: &Method,
    cases: &[FieldNode],
    method_effect: &Effect,
    classifier: &Classifier,
) -> MethodPlans {
    let form = &fr.form;
    let mut plans = vec![];
    let mut skips = vec![];
    for case in cases {
        let skip = |reason: String| Skip {
            method: name.to_string(),
            reason: format!("case {}: {reason}", case.label),
        };
        let Label::Named(case_name) = &case.label else {
            skips.push(skip("a case named by a number has no tool name".into()));
            continue;
        };
        let effect = case
            .node
            .tags
            .effect
            .clone()
            .unwrap_or_else(|| method_effect.clone());
        let read = match is_read(name, method.mode, &effect) {
            Ok(r) => r,
            Err(reason) => {
                skips.push(skip(reason));
                continue;
            }
        };
        let intent = case
            .node
            .tags
            .intent
            .clone()
            .or_else(|| method.intent.clone());
        if !read && intent.is_none() {
            skips.push(skip(
                "a prepare tool needs an intent (the case's or the method's)".into(),
            ));
            continue;
        }
        let tool_name = case_tool_name(name, case_name, read);
        if !valid_tool_name(&tool_name) {
            skips.push(skip(format!(
                "the tool name '{tool_name}' is not a valid tool name"
            )));
            continue;
        }
        let mut params = vec![];
        let payload = match plan_arg(
            form,
            method,
            &case.node,
            &format!("$args[0].{case_name}"),
            &mut params,
            true,
        ) {
            Ok(p) => p,
            Err(reason) => {
                skips.push(skip(reason));
                continue;
            }
        };
        let title = case
            .node
            .tags
            .intent
            .clone()
            .or_else(|| case.node.tags.describe.clone())
            .unwrap_or_else(|| format!("{name} {case_name}"));
        let words = case
            .node
            .tags
            .describe
            .as_deref()
            .or(method.describe.as_deref());
        plans.push(ToolPlan {
            name: tool_name,
            kind: if read {
                ToolKind::Read
            } else {
                ToolKind::Prepare
            },
            form: fr.clone(),
            method: name.to_string(),
            mode: method.mode,
            replicated: read && !method.mode.is_query(),
            title,
            description: describe_tool(
                words,
                &format!("{name} {case_name}"),
                read,
                method.mode,
                false,
                effect.replicated && !method.mode.is_query(),
            ),
            effect,
            case: Some(case_name.clone()),
            params,
            args: vec![ArgPlan::Case {
                label: case.label.clone(),
                payload: Box::new(payload),
            }],
            has_stamp: false,
            classifier: classifier.clone(),
        });
    }
    (plans, skips)
}

/// A title from describe words: their first sentence, without its full stop.
fn title_of(words: &str) -> String {
    let first = words.trim().split(". ").next().unwrap_or("");
    first.trim_end_matches('.').to_string()
}

fn describe_tool(
    words: Option<&str>,
    what: &str,
    read: bool,
    mode: Mode,
    stamped: bool,
    certified: bool,
) -> String {
    let mut d = match words {
        Some(w) => w.trim().to_string(),
        None => format!("Calls {what}."),
    };
    if read {
        if certified {
            d.push_str(
                " A read sent as an update call, so its answer is certified; nothing changes.",
            );
        } else {
            d.push_str(" Reads only; nothing changes.");
        }
    } else {
        d.push_str(" Prepares the call and answers with a preview; nothing is sent until the owner confirms it (commit).");
        if !stamped && mode == Mode::Update {
            d.push_str(" This method has no idempotency stamp: after an unknown outcome it is never sent again.");
        }
    }
    d
}

/// Plans the argument list: one argument's record fields become inputs; several arguments are
/// inputs `arg0`, `arg1`, ...
fn plan_args(
    form: &Form,
    method: &Method,
    args: &[Node],
    params: &mut Vec<Param>,
) -> Result<Vec<ArgPlan>, String> {
    if args.len() == 1 {
        return Ok(vec![plan_arg(
            form, method, &args[0], "$args[0]", params, true,
        )?]);
    }
    let mut out = vec![];
    for (i, node) in args.iter().enumerate() {
        let path = format!("$args[{i}]");
        let slot = whole_slot(form, method, node, &path, &format!("arg{i}"), params)?;
        out.push(ArgPlan::Whole(Box::new(slot)));
    }
    Ok(out)
}

/// One argument (or case payload): a record that no value tag reads is split into its fields.
fn plan_arg(
    form: &Form,
    method: &Method,
    node: &Node,
    path: &str,
    params: &mut Vec<Param>,
    split: bool,
) -> Result<ArgPlan, String> {
    let ty = resolve(form, node).ok_or_else(|| format!("{path}: an unresolved type"))?;
    if let (true, Ty::Record(fields), None) = (split, ty, value_tag(form, node)) {
        let mut slots = vec![];
        for f in fields {
            let Label::Named(fname) = &f.label else {
                return Err(format!(
                    "{path}: a field named by a number (#{})",
                    f.label.hash()
                ));
            };
            if fname == crate::plan::CANISTER_PARAM {
                return Err(format!(
                    "an argument field named '{CANISTER_PARAM}' (the canister selector's input)"
                ));
            }
            let fpath = format!("{path}.{fname}");
            let fill = field_fill(form, method, fname, &f.node, &fpath, params)?;
            slots.push(Slot {
                label: Some(f.label.clone()),
                node: f.node.clone(),
                fill,
            });
        }
        return Ok(ArgPlan::Fields(slots));
    }
    let name = match reader_probe(form, node) {
        Some(r) => r.whole_name().to_string(),
        None => "input".into(),
    };
    Ok(ArgPlan::Whole(Box::new(whole_slot(
        form, method, node, path, &name, params,
    )?)))
}

fn reader_probe(form: &Form, node: &Node) -> Option<Reader> {
    let peeled = match resolve(form, node) {
        Some(Ty::Opt(inner)) if value_tag(form, node).is_none() => inner.as_ref(),
        _ => node,
    };
    ReaderBuilder::new(form).reader(peeled, "$").ok()
}

fn whole_slot(
    form: &Form,
    method: &Method,
    node: &Node,
    path: &str,
    name: &str,
    params: &mut Vec<Param>,
) -> Result<Slot, String> {
    let fill = position_fill(form, node, path, name, params)?;
    let _ = method;
    Ok(Slot {
        label: None,
        node: node.clone(),
        fill,
    })
}

/// A field of the argument record: the stamp, the memo, a hidden or auto position, or an input.
fn field_fill(
    form: &Form,
    method: &Method,
    fname: &str,
    node: &Node,
    path: &str,
    params: &mut Vec<Param>,
) -> Result<Fill, String> {
    if let Some(id) = &method.idempotency {
        if id.stamp.labels.len() == 1 && id.stamp.labels[0] == fname {
            if !is_nat64_or_opt(form, node) {
                return Err(format!(
                    "the stamp '{}' must be a nat64 or opt nat64",
                    id.stamp
                ));
            }
            return Ok(Fill::Stamp);
        }
        if let Some(memo) = &id.memo {
            if memo.index == 0 && memo.labels.len() == 1 && memo.labels[0] == fname {
                if !is_blob_or_opt(form, node) {
                    return Err(format!("the memo '{memo}' must be a blob or opt blob"));
                }
                return Ok(Fill::Memo);
            }
        }
    }
    position_fill(form, node, path, fname, params)
}

fn position_fill(
    form: &Form,
    node: &Node,
    path: &str,
    name: &str,
    params: &mut Vec<Param>,
) -> Result<Fill, String> {
    if let Some(fill) = host_fill(form, node, path)? {
        return Ok(fill);
    }
    let ty = resolve(form, node).ok_or_else(|| format!("{path}: an unresolved type"))?;
    if matches!(ty, Ty::Prim(Prim::Null | Prim::Reserved)) {
        return Ok(Fill::Empty);
    }
    let (optional, inner) = match ty {
        Ty::Opt(inner) if value_tag(form, node).is_none() => (true, inner.as_ref()),
        _ => (false, node),
    };
    let mut rb = ReaderBuilder::new(form);
    // The use site's own tags apply to the inner value of an opt.
    let reader = if optional {
        let mut merged = inner.clone();
        merge_tags(&mut merged.tags, &node.tags);
        rb.reader(&merged, path)?
    } else {
        rb.reader(inner, path)?
    };
    params.push(Param {
        name: name.to_string(),
        path: path.to_string(),
        node: node.clone(),
        optional,
        reader,
    });
    Ok(Fill::Param(params.len() - 1))
}

/// Tags on an `opt` position that describe its value (describe, named) pass to the inner node.
fn merge_tags(inner: &mut Tags, outer: &Tags) {
    if inner.describe.is_none() {
        inner.describe = outer.describe.clone();
    }
    if inner.named.is_none() {
        inner.named = outer.named.clone();
    }
}

fn is_nat64_or_opt(form: &Form, node: &Node) -> bool {
    match resolve(form, node) {
        Some(Ty::Prim(Prim::Nat64)) => true,
        Some(Ty::Opt(inner)) => matches!(resolve(form, inner), Some(Ty::Prim(Prim::Nat64))),
        _ => false,
    }
}

fn is_blob_or_opt(form: &Form, node: &Node) -> bool {
    match resolve(form, node) {
        Some(Ty::Blob) => true,
        Some(Ty::Opt(inner)) => matches!(resolve(form, inner), Some(Ty::Blob)),
        _ => false,
    }
}
