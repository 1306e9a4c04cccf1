//! Reading a tool input: every issue at once, each with its code and place; the value out is
//! the Candid argument tuple, plus the intent's identity (a name and the value it stands for
//! are one intent; a relative time is its words, resolved again at each stamp).

mod context;
pub mod json_ws;
mod leaf;
pub mod value;

pub use context::{Canister, NameEntry, ReadContext};

use crate::form::*;
use crate::issue::{Code, Issue};
use crate::plan::{ArgPlan, Fill, Slot, ToolPlan, CANISTER_PARAM};
use crate::text::principal::parse_principal_canonical;
use candid::types::value::{IDLField, VariantValue};
use candid::{IDLArgs, IDLValue, Principal};
use leaf::LeafRead;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Bytes of one tool input's JSON text.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;
/// Elements of one `vec` in a JSON input.
pub const MAX_VEC_ELEMENTS: usize = 256;
/// Values in one JSON input, all levels together.
pub const MAX_VALUES: usize = 4096;

#[derive(Clone, Debug, PartialEq)]
pub struct ReadOutput {
    pub canister: Principal,
    pub args: IDLArgs,
    /// `(input, canonical value)` sorted by input, the tool and canister first.
    pub identity: Vec<(String, String)>,
    /// [`identity_digest`] of `identity`, computed once (the memo and the intent's key both
    /// need it; each digest is ~50 000 instructions in a canister). Private, and `identity`
    /// is never changed after the read: [`ReadOutput::identity_digest`] answers it.
    key: [u8; 32],
    /// The stamp written into the argument (ns), for a stamped method.
    pub stamp_ns: Option<u64>,
    pub memo: Option<Vec<u8>>,
    /// The names typed for named inputs, by input path, shown beside their values.
    pub names_used: BTreeMap<String, String>,
}

impl ReadOutput {
    /// A digest of the identity: the key under which one intent is kept.
    pub fn identity_digest(&self) -> [u8; 32] {
        self.key
    }
}

pub fn identity_digest(identity: &[(String, String)]) -> [u8; 32] {
    let mut h = Sha256::new();
    for (k, v) in identity {
        h.update((k.len() as u64).to_be_bytes());
        h.update(k.as_bytes());
        h.update((v.len() as u64).to_be_bytes());
        h.update(v.as_bytes());
    }
    h.finalize().into()
}

/// Reads input JSON text; refuses text over [`MAX_INPUT_BYTES`] and text that is not JSON.
pub fn read_tool_input_text(
    plan: &ToolPlan,
    text: &str,
    ctx: &ReadContext,
) -> Result<ReadOutput, Vec<Issue>> {
    let v = parse_input(text)?;
    read_tool_input(plan, &v, ctx)
}

/// A tool input's JSON text as a value: the one place the input bound is kept. Text over
/// [`MAX_INPUT_BYTES`] is refused whole (`E_TOO_LARGE`, never cut), before it is parsed; text
/// that is not JSON is `E_INPUT`. Every host (the canister, the CLI) reads inputs through it.
pub fn parse_input(text: &str) -> Result<Value, Vec<Issue>> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(vec![issue(
            "",
            "$input",
            Code::TooLarge,
            format!(
                "the input is {} bytes, over the limit of {MAX_INPUT_BYTES}",
                text.len()
            ),
        )]);
    }
    json_value(text).map_err(|e| {
        vec![issue(
            "",
            "$input",
            Code::Input,
            format!("the input is not JSON: {e}"),
        )]
    })
}

/// JSON text as a value, its whitespace read by the word (`json_ws`): the runs at its ends
/// skipped, long runs of spaces inside made one space. Text that is not JSON is refused with
/// serde_json's error for the text as given (its line and column), parsed again on that path
/// only.
pub fn json_value(text: &str) -> Result<Value, serde_json::Error> {
    let (start, end) = json_ws::inner(text.as_bytes());
    // Both ends are next to ASCII whitespace or the text's ends: character boundaries.
    let Some(inner) = text.get(start..end) else {
        return serde_json::from_str(text);
    };
    let parsed = match json_ws::squeezed(inner) {
        Some(squeezed) => serde_json::from_str(&squeezed),
        None => serde_json::from_str(inner),
    };
    parsed.or_else(|_| serde_json::from_str(text))
}

pub fn read_tool_input(
    plan: &ToolPlan,
    input: &Value,
    ctx: &ReadContext,
) -> Result<ReadOutput, Vec<Issue>> {
    let Value::Object(obj) = input else {
        return Err(vec![issue(
            "",
            "$input",
            Code::Input,
            "a tool input is a JSON object of named inputs",
        )]);
    };
    let mut st = State {
        issues: vec![],
        values: 0,
        refs_known: true,
        names_used: BTreeMap::new(),
        funds: crate::plan::FUNDS_METHODS.contains(&plan.method.as_str()),
    };
    for key in obj.keys() {
        if key != CANISTER_PARAM && !plan.params.iter().any(|p| &p.name == key) {
            let known: Vec<&str> = std::iter::once(CANISTER_PARAM)
                .chain(plan.params.iter().map(|p| p.name.as_str()))
                .collect();
            let filled = if host_filled_field(plan, key) {
                "; the tool host fills it"
            } else {
                ""
            };
            st.issues.push(issue(
                key,
                &format!("$input.{key}"),
                Code::UnknownParam,
                format!(
                    "'{key}' is not an input of {}{filled} (its inputs: {})",
                    plan.name,
                    known.join(", ")
                ),
            ));
        }
    }
    // The canister and its id's canonical text (the identity's), read once.
    let (canister, canister_text) = match read_canister(plan, obj.get(CANISTER_PARAM), ctx, &mut st)
    {
        Some((c, text)) => (Some(c), text),
        None => (None, String::new()),
    };
    if canister.is_none() {
        st.refs_known = false;
    }
    let empty = BTreeMap::new();
    let refs = canister.map(|c| &c.refs).unwrap_or(&empty);
    let form = &plan.form.form;
    let mut identity: Vec<(String, String)> = vec![];
    let mut param_values: Vec<Option<IDLValue>> = Vec::with_capacity(plan.params.len());
    for p in &plan.params {
        let given = obj.get(&p.name).filter(|v| !v.is_null());
        let read = match given {
            None if p.optional => Some(IDLValue::None),
            None => {
                st.issues.push(issue(
                    &p.name,
                    &p.path,
                    Code::Missing,
                    format!("'{}' is required", p.name),
                ));
                None
            }
            Some(v) => {
                let mut lr = LeafRead {
                    form,
                    refs,
                    ctx,
                    st: &mut st,
                    param: &p.name,
                };
                lr.read(&p.reader, v, &p.path).map(|(val, canon)| {
                    identity.push((p.name.clone(), canon));
                    if p.optional {
                        IDLValue::Opt(Box::new(val))
                    } else {
                        val
                    }
                })
            }
        };
        param_values.push(read);
    }
    let method = plan.method_def();
    let needs_clock = plan.has_stamp;
    if needs_clock && ctx.now_ns.is_none() {
        st.issues.push(issue(
            "",
            "$input",
            Code::Input,
            "no clock: a stamped method needs the canister's time",
        ));
    }
    let stamp_ns = if plan.has_stamp { ctx.now_ns } else { None };
    let mut fb = FillCtx {
        form,
        refs,
        ctx,
        st: &mut st,
        params: &param_values,
        stamp_ns,
        memo: None,
    };
    let mut args = vec![];
    for (i, a) in plan.args.iter().enumerate() {
        if let Some(v) = fb.arg(a, &format!("$args[{i}]")) {
            args.push(v);
        }
    }
    let _ = method;
    let memo_slot = fb.memo.take();
    if !st.issues.is_empty() {
        return Err(st.issues);
    }
    // No issue: the canister was read, and `canister_text` is its id's canonical text.
    let canister = canister.map(|c| c.id).unwrap_or_else(Principal::anonymous);
    identity.sort();
    let mut full = vec![
        ("tool".to_string(), plan.name.clone()),
        (CANISTER_PARAM.to_string(), canister_text),
    ];
    // The owner is part of what identifies an intent: two owners' same inputs are two intents.
    if let Some(owner) = ctx.owner {
        full.push(("owner".to_string(), owner.to_text()));
    }
    full.extend(identity);
    let key = identity_digest(&full);
    let mut out = ReadOutput {
        canister,
        args: IDLArgs::new(&args),
        identity: full,
        key,
        stamp_ns,
        memo: None,
        names_used: st.names_used,
    };
    if let Some(ptr) = memo_slot {
        // The memo is made last: it depends on the intent, and a host may give its own.
        let memo = ctx.memo.clone().unwrap_or_else(|| memo_of(&key, stamp_ns));
        set_memo(&mut out.args, &ptr, &memo);
        out.memo = Some(memo);
    }
    Ok(out)
}

/// 16 bytes from the identity and the stamp: distinct per intent and per stamp.
pub fn default_memo(identity: &[(String, String)], stamp_ns: Option<u64>) -> Vec<u8> {
    memo_of(&identity_digest(identity), stamp_ns)
}

/// [`default_memo`] from the identity's digest.
fn memo_of(key: &[u8; 32], stamp_ns: Option<u64>) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(key);
    h.update(stamp_ns.unwrap_or(0).to_be_bytes());
    h.finalize()[..16].to_vec()
}

fn read_canister<'c>(
    plan: &ToolPlan,
    v: Option<&Value>,
    ctx: &'c ReadContext,
    st: &mut State,
) -> Option<(&'c Canister, String)> {
    // Every canister the form applies to, only for the message: a prepare looks up the one
    // named (a host with 100 canisters of 50 forms each made ~5 000 form-id comparisons).
    let applicable = || ctx.canisters.iter().filter(|c| c.applies_to(&plan.form.id));
    let v = match v {
        Some(v) if !v.is_null() => v,
        _ => {
            let ids: Vec<String> = applicable().map(|c| c.id.to_text()).collect();
            st.issues.push(issue(
                CANISTER_PARAM,
                CANISTER_PARAM,
                Code::Missing,
                format!(
                    "'{CANISTER_PARAM}' is required: the canister to call ({})",
                    if ids.is_empty() {
                        "none is registered".into()
                    } else {
                        ids.join(", ")
                    }
                ),
            ));
            return None;
        }
    };
    let Some(text) = v.as_str() else {
        st.issues.push(issue(
            CANISTER_PARAM,
            CANISTER_PARAM,
            Code::Type,
            "the canister id is text",
        ));
        return None;
    };
    let (id, canon) = match parse_principal_canonical(text) {
        Ok(p) => p,
        Err(f) => {
            st.issues
                .push(issue(CANISTER_PARAM, CANISTER_PARAM, f.code, f.message));
            return None;
        }
    };
    match ctx
        .canisters
        .iter()
        .find(|c| c.id == id && c.applies_to(&plan.form.id))
    {
        Some(c) => Some((c, canon)),
        None => {
            st.issues.push(issue(
                CANISTER_PARAM,
                CANISTER_PARAM,
                Code::Canister,
                format!("{id} is not a canister that {} applies to", plan.name),
            ));
            None
        }
    }
}

pub(crate) struct State {
    pub issues: Vec<Issue>,
    pub values: usize,
    /// False when the canister could not be chosen: ref-dependent checks are left out then.
    pub refs_known: bool,
    pub names_used: BTreeMap<String, String>,
    /// The tool's method moves funds (`plan::FUNDS_METHODS`): its amounts are read only in
    /// the ledger's own units.
    pub funds: bool,
}

pub(crate) fn issue(param: &str, path: &str, code: Code, message: impl Into<String>) -> Issue {
    Issue {
        param: param.to_string(),
        path: path.to_string(),
        code,
        message: message.into(),
    }
}

/// Where the memo goes: the argument, and the field inside it.
struct MemoPtr {
    arg: usize,
    field: Label,
    opt: bool,
}

struct FillCtx<'a, 'b> {
    form: &'a Form,
    refs: &'a BTreeMap<String, Value>,
    ctx: &'a ReadContext<'b>,
    st: &'a mut State,
    params: &'a [Option<IDLValue>],
    stamp_ns: Option<u64>,
    memo: Option<MemoPtr>,
}

impl FillCtx<'_, '_> {
    fn arg(&mut self, a: &ArgPlan, path: &str) -> Option<IDLValue> {
        match a {
            ArgPlan::Whole(slot) => self.slot(slot, path),
            ArgPlan::Fields(slots) => {
                let mut fields = vec![];
                let mut ok = true;
                for s in slots {
                    let label = s.label.clone().expect("record slots have labels");
                    if matches!(s.fill, Fill::Memo) {
                        let arg = path
                            .trim_start_matches("$args[")
                            .trim_end_matches(']')
                            .parse()
                            .unwrap_or(0);
                        self.memo = Some(MemoPtr {
                            arg,
                            field: label.clone(),
                            opt: matches!(resolve(self.form, &s.node), Some(Ty::Opt(_))),
                        });
                        fields.push(IDLField {
                            id: crate::candid_types::candid_label(&label),
                            val: IDLValue::None,
                        });
                        continue;
                    }
                    match self.slot(s, &format!("{path}.{label}")) {
                        Some(v) => fields.push(IDLField {
                            id: crate::candid_types::candid_label(&label),
                            val: v,
                        }),
                        None => ok = false,
                    }
                }
                ok.then_some(IDLValue::Record(fields))
            }
            ArgPlan::Case { label, payload } => {
                let v = self.arg(payload, path)?;
                Some(IDLValue::Variant(VariantValue(
                    Box::new(IDLField {
                        id: crate::candid_types::candid_label(label),
                        val: v,
                    }),
                    0,
                )))
            }
        }
    }

    fn slot(&mut self, s: &Slot, path: &str) -> Option<IDLValue> {
        let opt = matches!(resolve(self.form, &s.node), Some(Ty::Opt(_)));
        match &s.fill {
            Fill::Param(i) => self.params.get(*i).cloned().flatten(),
            Fill::Empty => Some(empty_value(self.form, &s.node)),
            Fill::Memo => Some(IDLValue::None),
            Fill::Stamp => {
                let ns = self.stamp_ns?;
                Some(if opt {
                    IDLValue::Opt(Box::new(IDLValue::Nat64(ns)))
                } else {
                    IDLValue::Nat64(ns)
                })
            }
            Fill::Auto(_) => {
                let name = s.label.as_ref().map(|l| l.to_string()).unwrap_or_default();
                let mut env = HostEnv {
                    form: self.form,
                    refs: self.refs,
                    ctx: self.ctx,
                    st: self.st,
                };
                env.fill(s, path, &name)
            }
        }
    }
}

/// What filling a host position needs: the form, the canister's refs, the owner (in the
/// context), and the issues to add to.
pub(crate) struct HostEnv<'a, 'b> {
    pub form: &'a Form,
    pub refs: &'a BTreeMap<String, Value>,
    pub ctx: &'a ReadContext<'b>,
    pub st: &'a mut State,
}

impl HostEnv<'_, '_> {
    /// The value of a position the host fills (`Fill::Auto` or `Fill::Empty`), at any depth;
    /// `None` with an issue when it cannot be filled. An owner default without an owner is an
    /// issue (never `null`); only a ref the canister has not given leaves an `opt` empty.
    pub fn fill(&mut self, s: &Slot, path: &str, param: &str) -> Option<IDLValue> {
        match &s.fill {
            Fill::Auto(auto) => {
                let opt = matches!(resolve(self.form, &s.node), Some(Ty::Opt(_)));
                self.auto(auto, s, path, opt, param)
            }
            Fill::Empty => Some(empty_value(self.form, &s.node)),
            Fill::Param(_) | Fill::Stamp | Fill::Memo => {
                self.st.issues.push(issue(
                    param,
                    path,
                    Code::Input,
                    "a position inside an input is filled by a default or left empty",
                ));
                None
            }
        }
    }

    fn auto(
        &mut self,
        auto: &Auto,
        s: &Slot,
        path: &str,
        opt: bool,
        name: &str,
    ) -> Option<IDLValue> {
        let inner_node = match resolve(self.form, &s.node) {
            Some(Ty::Opt(inner)) => inner.as_ref().clone(),
            _ => s.node.clone(),
        };
        let wrap = |v: IDLValue| if opt { IDLValue::Opt(Box::new(v)) } else { v };
        match auto {
            Auto::From(src) if src.starts_with("owner:") => {
                let Some(owner) = self.ctx.owner else {
                    // Never left empty: an empty source is the host's own account.
                    self.st.issues.push(issue(
                        name,
                        path,
                        Code::Input,
                        format!("the owner is not known, so '{src}' cannot be filled"),
                    ));
                    return None;
                };
                let v = match src.as_str() {
                    "owner:subaccount" => {
                        IDLValue::Blob(crate::funds::deposit_subaccount(&owner).to_vec())
                    }
                    "owner:account" => value::account_value(owner, None),
                    "owner:principal" => IDLValue::Principal(owner),
                    other => {
                        self.st.issues.push(issue(name, path, Code::Input, format!("'{other}' is not an owner default (owner:subaccount, owner:account, owner:principal)")));
                        return None;
                    }
                };
                Some(wrap(v))
            }
            Auto::From(src) => match self.refs.get(src) {
                Some(j) => match value::raw_value(self.form, &inner_node, j) {
                    Ok(v) => Some(wrap(v)),
                    Err(f) => {
                        self.st.issues.push(issue(
                            name,
                            path,
                            Code::Input,
                            format!("the canister's {src}: {}", f.message),
                        ));
                        None
                    }
                },
                // An opt position whose ref is not known is left out: the canister applies its own.
                None if opt => Some(IDLValue::None),
                None => {
                    if self.st.refs_known {
                        self.st.issues.push(issue(
                            name,
                            path,
                            Code::Input,
                            format!("the canister's {src} is not known"),
                        ));
                    }
                    None
                }
            },
            Auto::Value(text) => {
                let reader =
                    crate::plan::ReaderBuilder::new(self.form).value_reader(&inner_node, path);
                match reader {
                    Ok(r) => {
                        let mut lr = LeafRead {
                            form: self.form,
                            refs: self.refs,
                            ctx: self.ctx,
                            st: self.st,
                            param: name,
                        };
                        lr.read(&r, &Value::String(text.clone()), path)
                            .map(|(v, _)| wrap(v))
                    }
                    Err(why) => {
                        self.st.issues.push(issue(
                            name,
                            path,
                            Code::Input,
                            format!("the default cannot be read: {why}"),
                        ));
                        None
                    }
                }
            }
        }
    }
}

/// Whether `key` names a field of the argument record that the host fills (not an input).
fn host_filled_field(plan: &ToolPlan, key: &str) -> bool {
    fn has(a: &ArgPlan, key: &str) -> bool {
        match a {
            ArgPlan::Fields(slots) => slots.iter().any(|s| {
                !matches!(s.fill, Fill::Param(_))
                    && s.label.as_ref().and_then(|l| l.name()) == Some(key)
            }),
            ArgPlan::Case { payload, .. } => has(payload, key),
            ArgPlan::Whole(_) => false,
        }
    }
    plan.args.iter().any(|a| has(a, key))
}

/// The value of a position that takes nothing: `null` for opt and null, `reserved` as itself.
fn empty_value(form: &Form, node: &Node) -> IDLValue {
    match resolve(form, node) {
        Some(Ty::Prim(Prim::Reserved)) => IDLValue::Reserved,
        Some(Ty::Prim(Prim::Null)) => IDLValue::Null,
        _ => IDLValue::None,
    }
}

fn set_memo(args: &mut IDLArgs, ptr: &MemoPtr, memo: &[u8]) {
    if let Some(IDLValue::Record(fields)) = args.args.get_mut(ptr.arg) {
        let id = crate::candid_types::candid_label(&ptr.field);
        if let Some(f) = fields.iter_mut().find(|f| f.id == id) {
            let blob = IDLValue::Blob(memo.to_vec());
            f.val = if ptr.opt {
                IDLValue::Opt(Box::new(blob))
            } else {
                blob
            };
        }
    }
}
