//! Values as a person reads them: amounts with their symbol, accounts and principals as text,
//! times in RFC 3339, names beside the values they stand for.

use crate::form::*;
use crate::plan::{value_tag, ToolPlan};
use crate::read::value::{value_int, value_uint};
use crate::read::{Canister, ReadOutput};
use crate::text::account::{format_account, Account};
use crate::text::{amount, time};
use candid::types::Label as CLabel;
use candid::{IDLArgs, IDLValue};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

pub struct Display<'a> {
    pub form: &'a Form,
    pub refs: &'a BTreeMap<String, Value>,
    /// Names typed for named inputs, by input path (`$args[0].neuron`).
    pub names: &'a BTreeMap<String, String>,
    /// The method moves funds: amounts are shown only in the ledger's own units.
    pub funds: bool,
}

impl Display<'_> {
    pub fn value(&self, node: &Node, v: &IDLValue, path: &str) -> Value {
        let shown = self.value_inner(node, v, path, 0);
        match self.names.get(path) {
            Some(name) => Value::String(format!("{name} ({})", plain(&shown))),
            None => shown,
        }
    }

    fn value_inner(&self, node: &Node, v: &IDLValue, path: &str, depth: usize) -> Value {
        if depth > 64 {
            return Value::String(v.to_string());
        }
        if let IDLValue::Opt(inner) = v {
            let inner_node = match resolve(self.form, node) {
                Some(Ty::Opt(n)) => n.as_ref(),
                _ => node,
            };
            return self.value(inner_node, inner, path);
        }
        if matches!(v, IDLValue::None | IDLValue::Null | IDLValue::Reserved) {
            return Value::Null;
        }
        if let Some(tag) = value_tag(self.form, node) {
            if let Some(s) = self.tagged(tag, v) {
                return Value::String(s);
            }
        }
        let ty = resolve(self.form, node);
        match v {
            IDLValue::Bool(b) => json!(b),
            IDLValue::Text(s) => json!(s),
            IDLValue::Principal(p) | IDLValue::Service(p) => json!(p.to_text()),
            IDLValue::Blob(b) => json!(crate::text::bytes::to_hex(b)),
            IDLValue::Float32(f) => json!(f),
            IDLValue::Float64(f) => json!(f),
            IDLValue::Nat8(x) => json!(x),
            IDLValue::Nat16(x) => json!(x),
            IDLValue::Nat32(x) => json!(x),
            IDLValue::Int8(x) => json!(x),
            IDLValue::Int16(x) => json!(x),
            IDLValue::Int32(x) => json!(x),
            IDLValue::Vec(items) => {
                let elem = match ty {
                    Some(Ty::Vec(e)) => Some(e.as_ref()),
                    _ => None,
                };
                if let (Some(Ty::Blob), true) =
                    (ty, items.iter().all(|i| matches!(i, IDLValue::Nat8(_))))
                {
                    let bytes: Vec<u8> = items
                        .iter()
                        .map(|i| if let IDLValue::Nat8(b) = i { *b } else { 0 })
                        .collect();
                    return json!(crate::text::bytes::to_hex(bytes));
                }
                Value::Array(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, x)| match elem {
                            Some(e) => self.value_inner(e, x, &format!("{path}[{i}]"), depth + 1),
                            None => untyped(x),
                        })
                        .collect(),
                )
            }
            IDLValue::Record(fields) => {
                let defs = match ty {
                    Some(Ty::Record(fs)) => fs.as_slice(),
                    _ => &[],
                };
                let tuple =
                    !fields.is_empty() && fields.iter().all(|f| !matches!(f.id, CLabel::Named(_)));
                let shown: Vec<(String, Value)> = fields
                    .iter()
                    .map(|f| {
                        let name = label_text(&f.id);
                        let fpath = format!("{path}.{name}");
                        let shown = match defs.iter().find(|d| d.label.hash() == f.id.get_id()) {
                            Some(d) => self.value_inner(&d.node, &f.val, &fpath, depth + 1),
                            None => untyped(&f.val),
                        };
                        (name, self.named_at(&fpath, shown))
                    })
                    .collect();
                if tuple {
                    Value::Array(shown.into_iter().map(|(_, v)| v).collect())
                } else {
                    Value::Object(shown.into_iter().collect::<Map<String, Value>>())
                }
            }
            IDLValue::Variant(vv) => {
                let name = label_text(&vv.0.id);
                let defs = match ty {
                    Some(Ty::Variant(cs)) => cs.as_slice(),
                    _ => &[],
                };
                let cpath = format!("{path}.{name}");
                let payload = match defs.iter().find(|d| d.label.hash() == vv.0.id.get_id()) {
                    Some(d) => self.value_inner(&d.node, &vv.0.val, &cpath, depth + 1),
                    None => untyped(&vv.0.val),
                };
                let mut m = Map::new();
                m.insert(name, self.named_at(&cpath, payload));
                Value::Object(m)
            }
            IDLValue::Func(p, m) => json!(format!("{}.{}", p.to_text(), m)),
            other => match int_text(other) {
                Some(n) => Value::String(n),
                None => json!(other.to_string()),
            },
        }
    }

    fn named_at(&self, path: &str, shown: Value) -> Value {
        match self.names.get(path) {
            Some(name) => Value::String(format!("{name} ({})", plain(&shown))),
            None => shown,
        }
    }

    /// A token's decimals and symbol, fixed by the form or read from the canister's refs; none
    /// when they are not the ledger's own ([`crate::funds::ledger_units`], the rule amounts are
    /// read by): the amount is then shown in base units, never in units it is not sent in (an
    /// amount the host fills, or a name's value, is shown without having been read as one).
    fn token_meta(&self, decimals: &Dyn<u8>, symbol: &Dyn<String>) -> (Option<u8>, Option<String>) {
        if crate::funds::ledger_units(decimals, symbol, self.refs, self.funds).is_err() {
            return (None, None);
        }
        let symbol = match symbol {
            Dyn::Fixed(s) => Some(s.clone()),
            Dyn::From(src) => self
                .refs
                .get(src)
                .and_then(|x| x.as_str())
                .map(str::to_string),
        };
        let decimals = match decimals {
            Dyn::Fixed(d) => Some(*d),
            Dyn::From(src) => self
                .refs
                .get(src)
                .and_then(|x| x.as_u64())
                .filter(|d| *d <= 38)
                .map(|d| d as u8),
        };
        (decimals, symbol)
    }

    /// What a value tag says a value is, for a display that shows typed values (ICRC-21's
    /// fields display); `None` for a value without such a tag, or a token amount whose decimals
    /// or symbol are not known.
    fn typed(&self, node: &Node, v: &IDLValue) -> Option<Typed> {
        if let IDLValue::Opt(inner) = v {
            return match resolve(self.form, node) {
                Some(Ty::Opt(n)) => self.typed(n, inner),
                _ => None,
            };
        }
        match value_tag(self.form, node)? {
            ValueTag::TokenAmount { decimals, symbol } => {
                let amount = value_uint(v)?;
                let (Some(decimals), Some(symbol)) = self.token_meta(decimals, symbol) else {
                    return None;
                };
                Some(Typed::TokenAmount {
                    amount,
                    decimals,
                    symbol,
                })
            }
            ValueTag::Timestamp { unit } => {
                let ns = i128::try_from(value_int(v)?)
                    .ok()?
                    .checked_mul(unit.nanos() as i128)?;
                Some(Typed::Timestamp { ns })
            }
            ValueTag::Duration { unit } => {
                let ns = u128::try_from(value_uint(v)?)
                    .ok()?
                    .checked_mul(unit.nanos())?;
                Some(Typed::Duration { ns })
            }
            ValueTag::Account | ValueTag::Subaccount => None,
        }
    }

    fn tagged(&self, tag: &ValueTag, v: &IDLValue) -> Option<String> {
        match tag {
            ValueTag::TokenAmount { decimals, symbol } => {
                let n = value_uint(v)?;
                let (decimals, symbol) = self.token_meta(decimals, symbol);
                Some(match decimals {
                    Some(d) => amount::format_amount_with_symbol(&n, d, symbol.as_deref()),
                    None => format!("{n} base units"),
                })
            }
            ValueTag::Account => {
                let IDLValue::Record(fs) = v else { return None };
                let owner = fs.iter().find_map(|f| match (&f.id, &f.val) {
                    (CLabel::Named(n), IDLValue::Principal(p)) if n == "owner" => Some(*p),
                    _ => None,
                })?;
                let sub = fs.iter().find_map(|f| match (&f.id, &f.val) {
                    (CLabel::Named(n), IDLValue::Opt(b)) if n == "subaccount" => blob_of(b),
                    _ => None,
                });
                let subaccount = match sub {
                    Some(b) if b.len() == 32 => {
                        let mut s = [0u8; 32];
                        s.copy_from_slice(&b);
                        Some(s)
                    }
                    Some(_) => return None,
                    None => None,
                };
                Some(format_account(&Account { owner, subaccount }))
            }
            ValueTag::Subaccount => blob_of(v).map(crate::text::bytes::to_hex),
            ValueTag::Timestamp { unit } => {
                let n = value_int(v)?;
                let ns = i128::try_from(n).ok()?.checked_mul(unit.nanos() as i128)?;
                Some(time::format_timestamp(ns))
            }
            ValueTag::Duration { unit } => {
                let n = value_uint(v)?;
                let ns = u128::try_from(n).ok()?.checked_mul(unit.nanos())?;
                Some(time::format_duration(ns))
            }
        }
    }
}

/// A whole number's digits; through `u128` / `i128` when it fits (the big-number conversion
/// costs several times more in a canister, and replies carry block indexes and balances).
fn int_text(v: &IDLValue) -> Option<String> {
    match v {
        IDLValue::Nat(n) => Some(crate::text::integer::digits(&n.0)),
        IDLValue::Int(i) => Some(match i128::try_from(&i.0) {
            Ok(x) => x.to_string(),
            Err(_) => i.0.to_string(),
        }),
        other => value_int(other).map(|n| n.to_string()),
    }
}

fn blob_of(v: &IDLValue) -> Option<Vec<u8>> {
    match v {
        IDLValue::Blob(b) => Some(b.clone()),
        IDLValue::Vec(items) => items
            .iter()
            .map(|i| {
                if let IDLValue::Nat8(b) = i {
                    Some(*b)
                } else {
                    None
                }
            })
            .collect(),
        _ => None,
    }
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn label_text(l: &CLabel) -> String {
    match l {
        CLabel::Named(n) => n.clone(),
        CLabel::Id(i) | CLabel::Unnamed(i) => i.to_string(),
    }
}

/// A value without a type to guide it (a field the form does not know).
fn untyped(v: &IDLValue) -> Value {
    match v {
        IDLValue::Text(s) => json!(s),
        IDLValue::Bool(b) => json!(b),
        IDLValue::Principal(p) => json!(p.to_text()),
        IDLValue::Blob(b) => json!(crate::text::bytes::to_hex(b)),
        other => json!(other.to_string()),
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EffectView {
    pub kind: String,
    pub irreversible: bool,
    pub replicated: bool,
}

impl From<&Effect> for EffectView {
    fn from(e: &Effect) -> Self {
        EffectView {
            kind: e.kind.clone(),
            irreversible: e.irreversible,
            replicated: e.replicated,
        }
    }
}

/// What the owner is shown before a send: the call, its arguments as a person reads them and
/// the exact bytes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Preview {
    pub preview_id: String,
    pub tool: String,
    pub method: String,
    pub canister: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canister_label: Option<String>,
    pub title: String,
    pub effect: EffectView,
    /// The arguments as `Display` shows them; an array for a method with more than one.
    pub arguments: Value,
    /// The argument bytes in hex; left out of the JSON when empty (a preview made by
    /// [`preview_without_hex`]). Last: an intent stores its preview without this member.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub arg_hex: String,
}

pub fn preview(
    plan: &ToolPlan,
    out: &ReadOutput,
    canister: &Canister,
    arg_bytes: &[u8],
    preview_id: &str,
) -> Preview {
    Preview {
        arg_hex: crate::text::bytes::to_hex(arg_bytes),
        ..preview_without_hex(plan, out, canister, preview_id)
    }
}

/// A preview without its `arg_hex`, as an intent stores it (the intent keeps the bytes
/// themselves): its JSON is the whole preview's with that last member taken off, made without
/// writing the hex only to take it off again.
pub fn preview_without_hex(
    plan: &ToolPlan,
    out: &ReadOutput,
    canister: &Canister,
    preview_id: &str,
) -> Preview {
    Preview {
        preview_id: preview_id.to_string(),
        tool: plan.name.clone(),
        method: plan.method.clone(),
        canister: canister.id.to_text(),
        canister_label: canister.label.clone(),
        title: plan.title.clone(),
        effect: effect_shown(plan),
        arguments: display_args(plan, &out.args, &canister.refs, &out.names_used),
        arg_hex: String::new(),
    }
}

/// The effect as the owner is shown it: a ledger method that moves funds cannot be undone,
/// whatever its form says (the ICRC-21 message's "It cannot be undone." comes from here).
fn effect_shown(plan: &ToolPlan) -> EffectView {
    let mut e = EffectView::from(&plan.effect);
    if moves_funds(plan) {
        e.irreversible = true;
    }
    e
}

fn moves_funds(plan: &ToolPlan) -> bool {
    crate::plan::FUNDS_METHODS.contains(&plan.method.as_str())
}

/// The argument tuple as a person reads it: the one argument, or an array of them.
pub fn display_args(
    plan: &ToolPlan,
    args: &IDLArgs,
    refs: &BTreeMap<String, Value>,
    names: &BTreeMap<String, String>,
) -> Value {
    let form = &plan.form.form;
    let method = plan.method_def();
    let d = Display {
        form,
        refs,
        names,
        funds: moves_funds(plan),
    };
    let shown: Vec<Value> = args
        .args
        .iter()
        .zip(method.args.iter())
        .enumerate()
        .map(|(i, (v, n))| d.value(n, v, &format!("$args[{i}]")))
        .collect();
    if shown.len() == 1 {
        shown.into_iter().next().unwrap_or(Value::Null)
    } else {
        Value::Array(shown)
    }
}

/// A value as a typed display shows it, in the units the standards use for them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Typed {
    /// Base units, with the decimals and symbol the preview shows them with.
    TokenAmount {
        amount: num_bigint::BigUint,
        decimals: u8,
        symbol: String,
    },
    /// Nanoseconds since 1970.
    Timestamp {
        ns: i128,
    },
    Duration {
        ns: u128,
    },
}

/// One top-level field of a one-record argument: its name, the text the preview shows for it
/// (as [`display_args`] writes it) and, when a value tag types it, the typed value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypedField {
    pub name: String,
    pub shown: String,
    pub typed: Option<Typed>,
}

/// The fields of a method's one record argument with their typed values; empty for a method
/// with another argument tuple (whose preview shows no fields to type).
pub fn typed_fields(
    plan: &ToolPlan,
    args: &IDLArgs,
    refs: &BTreeMap<String, Value>,
    names: &BTreeMap<String, String>,
) -> Vec<TypedField> {
    let form = &plan.form.form;
    let d = Display {
        form,
        refs,
        names,
        funds: moves_funds(plan),
    };
    let (Some(node), [IDLValue::Record(fields)]) = (plan.method_def().args.first(), &args.args[..])
    else {
        return vec![];
    };
    if plan.method_def().args.len() != 1 || names.contains_key("$args[0]") {
        return vec![];
    }
    let defs = match resolve(form, node) {
        Some(Ty::Record(fs)) => fs.as_slice(),
        _ => return vec![],
    };
    fields
        .iter()
        .filter_map(|f| {
            let def = defs.iter().find(|d| d.label.hash() == f.id.get_id())?;
            let name = label_text(&f.id);
            let path = format!("$args[0].{name}");
            let shown = d.named_at(&path, d.value_inner(&def.node, &f.val, &path, 1));
            Some(TypedField {
                typed: d.typed(&def.node, &f.val),
                shown: plain(&shown),
                name,
            })
        })
        .collect()
}

/// A reply as a person reads it: its one result, or an array of them.
pub fn display_reply(plan: &ToolPlan, reply: &IDLArgs, refs: &BTreeMap<String, Value>) -> Value {
    let form = &plan.form.form;
    let method = plan.method_def();
    let names = BTreeMap::new();
    let d = Display {
        form,
        refs,
        names: &names,
        funds: moves_funds(plan),
    };
    let shown: Vec<Value> = reply
        .args
        .iter()
        .zip(method.results.iter())
        .enumerate()
        .map(|(i, (v, n))| d.value(n, v, &format!("$results[{i}]")))
        .collect();
    match shown.len() {
        0 => Value::Null,
        1 => shown.into_iter().next().unwrap_or(Value::Null),
        _ => Value::Array(shown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candid::{Int, Nat};

    #[test]
    fn whole_numbers_read_the_same_through_the_fast_and_the_big_path() {
        let big = num_bigint::BigUint::from(1u8) << 200u32;
        let cases = [
            (IDLValue::Nat(Nat::from(5u8)), "5".to_string()),
            (IDLValue::Nat(Nat::from(u128::MAX)), u128::MAX.to_string()),
            (IDLValue::Nat(Nat(big.clone())), big.to_string()),
            (IDLValue::Int(Int::from(-5i8)), "-5".to_string()),
            (IDLValue::Int(Int::from(i128::MIN)), i128::MIN.to_string()),
            (
                IDLValue::Int(Int(-num_bigint::BigInt::from(big.clone()))),
                format!("-{big}"),
            ),
            (IDLValue::Nat64(7), "7".to_string()),
        ];
        for (v, want) in cases {
            assert_eq!(int_text(&v), Some(want));
        }
    }
}
