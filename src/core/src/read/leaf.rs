//! Reading one input (text, or JSON for a record, variant or vec) by its reader.

use super::context::ReadContext;
use super::value::{account_value, int_value, value_int};
use super::{issue, HostEnv, State, MAX_VALUES, MAX_VEC_ELEMENTS};
use crate::form::{Dyn, Form, Prim, TimeUnit};
use crate::issue::{Code, Fault};
use crate::plan::Reader;
use crate::text::{account, amount, bytes, integer, principal, textual, time};
use candid::types::value::{IDLField, VariantValue};
use candid::types::Label as CLabel;
use candid::IDLValue;
use num_bigint::BigInt;
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) struct LeafRead<'a, 'b> {
    pub form: &'a Form,
    pub refs: &'a BTreeMap<String, Value>,
    pub ctx: &'a ReadContext<'b>,
    pub st: &'a mut State,
    pub param: &'a str,
}

impl LeafRead<'_, '_> {
    fn fail(&mut self, path: &str, f: Fault) -> Option<(IDLValue, String)> {
        self.st
            .issues
            .push(issue(self.param, path, f.code, f.message));
        None
    }

    fn text<'v>(&mut self, v: &'v Value, path: &str, what: &str) -> Option<&'v str> {
        match v {
            Value::String(s) => Some(s),
            other => {
                let kind = match other {
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    Value::Array(_) => "an array",
                    Value::Object(_) => "an object",
                    _ => "null",
                };
                self.st.issues.push(issue(
                    self.param,
                    path,
                    Code::Type,
                    format!("{what} is given as text, not {kind}"),
                ));
                None
            }
        }
    }

    /// The value of a position the host fills.
    fn host(&mut self, slot: &crate::plan::Slot, path: &str) -> Option<IDLValue> {
        let mut env = HostEnv {
            form: self.form,
            refs: self.refs,
            ctx: self.ctx,
            st: self.st,
        };
        env.fill(slot, path, self.param)
    }

    /// Reads a value; returns it with its canonical text (for the intent's identity).
    pub fn read(&mut self, reader: &Reader, v: &Value, path: &str) -> Option<(IDLValue, String)> {
        self.st.values += 1;
        if self.st.values == MAX_VALUES + 1 {
            return self.fail(
                path,
                Fault::new(
                    Code::TooLarge,
                    format!("more than {MAX_VALUES} values in one input"),
                ),
            );
        }
        if self.st.values > MAX_VALUES {
            return None;
        }
        match reader {
            Reader::Record(fields) => return self.record(fields, v, path),
            Reader::Variant(cases) => return self.variant(cases, v, path),
            Reader::Vec { elem, range } => return self.vec(elem, range.as_ref(), v, path),
            Reader::Opt(inner) => {
                return if v.is_null() {
                    Some((IDLValue::None, "null".into()))
                } else {
                    self.read(inner, v, path)
                        .map(|(x, c)| (IDLValue::Opt(Box::new(x)), c))
                }
            }
            Reader::Empty(p) => {
                return if v.is_null() {
                    Some((
                        if *p == Prim::Reserved {
                            IDLValue::Reserved
                        } else {
                            IDLValue::Null
                        },
                        "null".into(),
                    ))
                } else {
                    self.fail(
                        path,
                        Fault::new(
                            Code::Type,
                            "this position takes no value; give null or leave it out",
                        ),
                    )
                }
            }
            Reader::Named { set, inner } => return self.named(set, inner, v, path),
            // Record fields and variant cases the host fills are never read; nothing else is one.
            Reader::Host(_) => {
                return self.fail(
                    path,
                    Fault::new(
                        Code::UnknownParam,
                        "this position is filled by the tool host, never an input",
                    ),
                )
            }
            _ => {}
        }
        let s = self.text(v, path, "this input")?.to_string();
        match self.leaf(reader, &s) {
            Ok(r) => Some(r),
            Err(f) => self.fail(path, f),
        }
    }

    /// An amount's units (decimals, symbol) are the ledger's own ([`crate::funds::ledger_unit`]);
    /// a method that moves funds has the engine read those refs for every form, so a fixed
    /// unit is refused while they are not known (unless the canister itself is not).
    fn fixed_meta_agrees(&self, decimals: &Dyn<u8>, symbol: &Dyn<String>) -> Result<(), Fault> {
        use crate::funds::UnitFault;
        let Err((what, src, fault)) =
            crate::funds::ledger_units(decimals, symbol, self.refs, self.st.funds)
        else {
            return Ok(());
        };
        let message = match fault {
            UnitFault::OtherSource(f) => format!(
                "the form takes this amount's {what} from {f}, not the ledger's {src}: a method that moves funds reads amounts only in the ledger's own units"
            ),
            UnitFault::Disagrees(fixed, v) => format!(
                "the form fixes this amount's {what} as {fixed}, but the canister's {src} is {v}: its amounts would be shown in units they are not sent in"
            ),
            UnitFault::NotKnown if self.st.refs_known => format!(
                "the canister's {src} is not known (its refs were not read, or the read failed): a method that moves funds takes a form's fixed {what} only when it is the ledger's"
            ),
            UnitFault::NotKnown => return Ok(()),
        };
        Err(Fault::new(Code::Canister, message))
    }

    fn leaf(&mut self, reader: &Reader, s: &str) -> Result<(IDLValue, String), Fault> {
        match reader {
            Reader::Amount {
                prim,
                decimals,
                symbol,
                range,
            } => {
                self.fixed_meta_agrees(decimals, symbol)?;
                let symbol = match symbol {
                    Dyn::Fixed(s) => Some(s.clone()),
                    Dyn::From(src) => self
                        .refs
                        .get(src)
                        .and_then(|v| v.as_str())
                        .map(str::to_string),
                };
                let decimals = match decimals {
                    Dyn::Fixed(d) => Some(*d),
                    Dyn::From(src) => match self.refs.get(src) {
                        Some(v) => match v.as_u64().filter(|d| *d <= 38) {
                            Some(d) => Some(d as u8),
                            None => {
                                return Err(Fault::new(
                                    Code::Input,
                                    format!(
                                        "the canister's {src} is {v}, not a number of decimals"
                                    ),
                                ))
                            }
                        },
                        None if self.st.refs_known => {
                            return Err(Fault::new(
                                Code::Input,
                                format!(
                                    "the token's decimals are not known (the canister's {src})"
                                ),
                            ));
                        }
                        None => None,
                    },
                };
                let Some(decimals) = decimals else {
                    // The canister is not known (an issue already): check the grammar only.
                    amount::parse_amount(s, 38, None).map(|_| ()).or_else(|f| {
                        if f.code == Code::Unit {
                            Ok(())
                        } else {
                            Err(f)
                        }
                    })?;
                    // The canister's issue is already reported; this value is never used.
                    return Ok((IDLValue::Nat(candid::Nat::from(0u8)), String::new()));
                };
                let units = amount::parse_amount(s, decimals, symbol.as_deref())?;
                let n = BigInt::from(units);
                integer::check_bounds(&n, *prim, range.as_ref())?;
                Ok((int_value(*prim, &n)?, n.to_string()))
            }
            Reader::Account => {
                let (a, canon) = account::read_account(s)?;
                let sub = a.subaccount.filter(|s| *s != [0; 32]);
                Ok((account_value(a.owner, sub), canon))
            }
            Reader::Subaccount => {
                let sub = account::parse_subaccount(s)?;
                Ok((
                    IDLValue::Blob(sub.to_vec()),
                    crate::text::bytes::to_hex(sub),
                ))
            }
            Reader::Principal => {
                let (p, canon) = principal::parse_principal_canonical(s)?;
                Ok((IDLValue::Principal(p), canon))
            }
            Reader::Integer { prim, range } => {
                let n = integer::parse_integer(s, *prim, range.as_ref())?;
                Ok((int_value(*prim, &n)?, n.to_string()))
            }
            Reader::Text {
                tag,
                range,
                pattern,
            } => {
                textual::check_text(s, tag.as_ref(), range.as_ref(), pattern.as_ref())?;
                Ok((IDLValue::Text(s.to_string()), s.to_string()))
            }
            Reader::Bool => match s {
                "true" => Ok((IDLValue::Bool(true), "true".into())),
                "false" => Ok((IDLValue::Bool(false), "false".into())),
                _ => Err(Fault::new(
                    Code::Syntax,
                    format!("'{s}' is not \"true\" or \"false\""),
                )),
            },
            Reader::Timestamp { prim, unit } => {
                let t = time::parse_timestamp(s)?;
                let Some(now) = self.ctx.now_ns else {
                    if let time::TimeInput::Relative(_) = t {
                        return Err(Fault::new(
                            Code::Input,
                            "a relative time needs the canister's clock, which is not known",
                        ));
                    }
                    return self.time_value(*prim, *unit, time_ns(&t, 0), canon_time(&t));
                };
                let ns = time::resolve_timestamp(&t, now);
                self.time_value(*prim, *unit, ns, canon_time(&t))
            }
            Reader::Duration { prim, unit } => {
                let ns = time::parse_duration(s)?;
                // Never wrapped: a span past i128 is out of every type's range.
                let wide = i128::try_from(ns).map_err(|_| {
                    Fault::new(
                        Code::Range,
                        format!("'{s}' is too long a span for {}", prim.as_str()),
                    )
                })?;
                self.time_value(*prim, *unit, wide, format!("{ns}ns"))
            }
            Reader::Blob { range } => {
                let b = bytes::parse_hex(s, range.as_ref())?;
                let canon = crate::text::bytes::to_hex(&b);
                Ok((IDLValue::Blob(b), canon))
            }
            _ => Err(Fault::new(Code::Type, "this input is JSON, not text")),
        }
    }

    fn time_value(
        &self,
        prim: Prim,
        unit: TimeUnit,
        ns: i128,
        canon: String,
    ) -> Result<(IDLValue, String), Fault> {
        let per = unit.nanos() as i128;
        if ns % per != 0 {
            return Err(Fault::new(
                Code::Precision,
                format!(
                    "this time is kept in whole {}; the input is finer",
                    unit.as_str()
                ),
            ));
        }
        let n = BigInt::from(ns / per);
        if n < BigInt::from(0) && prim.is_unsigned() {
            return Err(Fault::new(Code::Range, "the time is before 1970"));
        }
        Ok((int_value(prim, &n)?, canon))
    }

    fn named(
        &mut self,
        set: &str,
        inner: &Reader,
        v: &Value,
        path: &str,
    ) -> Option<(IDLValue, String)> {
        // A value is read as a value first; text that is not one is a name of the set.
        let before = self.st.issues.len();
        let values_before = self.st.values;
        if let Some(r) = self.read(inner, v, path) {
            if let Some(name) = self.name_of(set, &r.0) {
                self.st.names_used.insert(path.to_string(), name);
            }
            return Some(r);
        }
        let as_value_error = self.st.issues.drain(before..).next();
        self.st.values = values_before;
        // A value refused for what the canister says (an amount's units that are not the
        // ledger's) refuses the position: no name's value stands in for it.
        if let Some(e) = as_value_error.as_ref().filter(|e| e.code == Code::Canister) {
            self.st.issues.push(e.clone());
            return None;
        }
        let Some(text) = v.as_str() else {
            if let Some(e) = as_value_error {
                self.st.issues.push(e);
            }
            return None;
        };
        let Some(entries) = self.ctx.names.and_then(|n| n.get(set)) else {
            let why = as_value_error.map(|e| e.message).unwrap_or_default();
            return self.fail(path, Fault::new(Code::NamesUnread, format!("'{text}' is not a value ({why}) and the names of set '{set}' were not read")));
        };
        let wanted = text.trim();
        let mut found: Vec<&super::NameEntry> =
            entries.iter().filter(|e| e.name == wanted).collect();
        if found.is_empty() {
            found = entries
                .iter()
                .filter(|e| e.name.to_lowercase() == wanted.to_lowercase())
                .collect();
        }
        match found.len() {
            0 => self.fail(
                path,
                Fault::new(
                    Code::NameNotFound,
                    format!("'{wanted}' is neither a value nor a name in set '{set}'"),
                ),
            ),
            1 => {
                let e = found[0];
                self.st.names_used.insert(path.to_string(), e.name.clone());
                Some((e.value.clone(), canonical_value(&e.value)))
            }
            n => self.fail(
                path,
                Fault::new(
                    Code::NameAmbiguous,
                    format!("'{wanted}' names {n} entries of set '{set}'; give the value"),
                ),
            ),
        }
    }

    fn name_of(&self, set: &str, v: &IDLValue) -> Option<String> {
        let entries = self.ctx.names?.get(set)?;
        let mut it = entries.iter().filter(|e| &e.value == v);
        let first = it.next()?;
        it.next().is_none().then(|| first.name.clone())
    }

    fn record(
        &mut self,
        fields: &[(String, Reader)],
        v: &Value,
        path: &str,
    ) -> Option<(IDLValue, String)> {
        let Value::Object(obj) = v else {
            return self.fail(
                path,
                Fault::new(Code::Type, "a record is given as a JSON object"),
            );
        };
        let mut ok = true;
        let is_input = |r: &Reader| !matches!(r, Reader::Host(_));
        for k in obj.keys() {
            let Some((_, r)) = fields.iter().find(|(n, _)| n == k) else {
                let names: Vec<&str> = fields
                    .iter()
                    .filter(|(_, r)| is_input(r))
                    .map(|(n, _)| n.as_str())
                    .collect();
                self.st.issues.push(issue(
                    self.param,
                    &format!("{path}.{k}"),
                    Code::UnknownParam,
                    format!("'{k}' is not a field here (fields: {})", names.join(", ")),
                ));
                ok = false;
                continue;
            };
            if !is_input(r) {
                self.st.issues.push(issue(
                    self.param,
                    &format!("{path}.{k}"),
                    Code::UnknownParam,
                    format!("'{k}' is filled by the tool host, never an input"),
                ));
                ok = false;
            }
        }
        let mut out = vec![];
        let mut canon = serde_json::Map::new();
        for (name, r) in fields {
            let fp = format!("{path}.{name}");
            if let Reader::Host(slot) = r {
                match self.host(slot, &fp) {
                    Some(val) => out.push(IDLField {
                        id: CLabel::Named(name.clone()),
                        val,
                    }),
                    None => ok = false,
                }
                continue;
            }
            let given = obj.get(name);
            let takes_nothing = matches!(r, Reader::Opt(_) | Reader::Empty(_));
            match given {
                None if takes_nothing => {
                    let val = if let Reader::Empty(Prim::Reserved) = r {
                        IDLValue::Reserved
                    } else if let Reader::Empty(_) = r {
                        IDLValue::Null
                    } else {
                        IDLValue::None
                    };
                    out.push(IDLField {
                        id: CLabel::Named(name.clone()),
                        val,
                    });
                }
                None => {
                    self.st.issues.push(issue(
                        self.param,
                        &fp,
                        Code::Missing,
                        format!("the field '{name}' is required"),
                    ));
                    ok = false;
                }
                Some(fv) => match self.read(r, fv, &fp) {
                    Some((val, c)) => {
                        out.push(IDLField {
                            id: CLabel::Named(name.clone()),
                            val,
                        });
                        canon.insert(name.clone(), Value::String(c));
                    }
                    None => ok = false,
                },
            }
        }
        ok.then(|| (IDLValue::Record(out), Value::Object(canon).to_string()))
    }

    fn variant(
        &mut self,
        cases: &[(String, Reader)],
        v: &Value,
        path: &str,
    ) -> Option<(IDLValue, String)> {
        let names: Vec<&str> = cases.iter().map(|(n, _)| n.as_str()).collect();
        let Value::Object(obj) = v else {
            return self.fail(
                path,
                Fault::new(
                    Code::Type,
                    format!(
                        "a variant is given as {{\"tag\": case, \"value\": ...}} (cases: {})",
                        names.join(", ")
                    ),
                ),
            );
        };
        for k in obj.keys() {
            if k != "tag" && k != "value" {
                return self.fail(
                    &format!("{path}.{k}"),
                    Fault::new(
                        Code::UnknownParam,
                        "a variant takes \"tag\" and \"value\" only",
                    ),
                );
            }
        }
        let Some(Value::String(tag)) = obj.get("tag") else {
            return self.fail(
                path,
                Fault::new(
                    Code::Missing,
                    format!(
                        "the variant's \"tag\" (one of: {}) is required",
                        names.join(", ")
                    ),
                ),
            );
        };
        let Some((name, r)) = cases.iter().find(|(n, _)| n == tag) else {
            return self.fail(
                &format!("{path}.tag"),
                Fault::new(
                    Code::Syntax,
                    format!("'{tag}' is not a case (cases: {})", names.join(", ")),
                ),
            );
        };
        let cp = format!("{path}.{name}");
        let (val, canon) = match (r, obj.get("value")) {
            (Reader::Host(_), Some(_)) => {
                return self.fail(
                    &cp,
                    Fault::new(
                        Code::UnknownParam,
                        format!("the case '{name}' is filled by the tool host; give no \"value\""),
                    ),
                )
            }
            (Reader::Host(slot), None) => (self.host(slot, &cp)?, "null".to_string()),
            (Reader::Empty(p), None) => (
                if *p == Prim::Reserved {
                    IDLValue::Reserved
                } else {
                    IDLValue::Null
                },
                "null".to_string(),
            ),
            (_, None) => {
                return self.fail(
                    &cp,
                    Fault::new(
                        Code::Missing,
                        format!("the case '{name}' needs a \"value\""),
                    ),
                )
            }
            (_, Some(x)) => self.read(r, x, &cp)?,
        };
        let field = IDLField {
            id: CLabel::Named(name.clone()),
            val,
        };
        Some((
            IDLValue::Variant(VariantValue(Box::new(field), 0)),
            serde_json::json!({ "tag": name, "value": canon }).to_string(),
        ))
    }

    fn vec(
        &mut self,
        elem: &Reader,
        range: Option<&crate::form::RangeTag>,
        v: &Value,
        path: &str,
    ) -> Option<(IDLValue, String)> {
        let Value::Array(items) = v else {
            return self.fail(
                path,
                Fault::new(Code::Type, "a vec is given as a JSON array"),
            );
        };
        if items.len() > MAX_VEC_ELEMENTS {
            return self.fail(
                path,
                Fault::new(
                    Code::TooLarge,
                    format!(
                        "{} elements, over the limit of {MAX_VEC_ELEMENTS}",
                        items.len()
                    ),
                ),
            );
        }
        if let Err(f) = bytes::check_len(items.len(), range, "elements") {
            return self.fail(path, f);
        }
        let mut out = vec![];
        let mut canon = vec![];
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match self.read(elem, item, &format!("{path}[{i}]")) {
                Some((x, c)) => {
                    out.push(x);
                    canon.push(Value::String(c));
                }
                None => ok = false,
            }
        }
        ok.then(|| (IDLValue::Vec(out), Value::Array(canon).to_string()))
    }
}

fn time_ns(t: &time::TimeInput, now: u64) -> i128 {
    time::resolve_timestamp(t, now)
}

/// A relative time is kept as its words in the identity, so that it is one intent whenever prepared.
fn canon_time(t: &time::TimeInput) -> String {
    match t {
        time::TimeInput::Absolute(ns) => ns.to_string(),
        time::TimeInput::Relative(after) => format!("now+{after}ns"),
    }
}

/// A value's canonical text for identities (a named entry's value).
pub(crate) fn canonical_value(v: &IDLValue) -> String {
    match v {
        IDLValue::Principal(p) => p.to_text(),
        IDLValue::Text(s) => s.clone(),
        other => match value_int(other) {
            Some(n) => n.to_string(),
            None => other.to_string(),
        },
    }
}
