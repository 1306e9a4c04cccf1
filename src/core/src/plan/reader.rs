//! Which reading rule a position gets, decided once when the plan is built. A position with no
//! rule makes the method skipped, with the reason.

use crate::form::*;
use crate::text::pattern::compile_pattern;
use regex_lite::Regex;

/// How the text (or JSON) of one input becomes a Candid value.
#[derive(Clone, Debug)]
pub enum Reader {
    Amount {
        prim: Prim,
        decimals: Dyn<u8>,
        symbol: Dyn<String>,
        range: Option<RangeTag>,
    },
    Account,
    Subaccount,
    Principal,
    Integer {
        prim: Prim,
        range: Option<RangeTag>,
    },
    Text {
        tag: Option<TextTag>,
        range: Option<RangeTag>,
        pattern: Option<Regex>,
    },
    Bool,
    Timestamp {
        prim: Prim,
        unit: TimeUnit,
    },
    Duration {
        prim: Prim,
        unit: TimeUnit,
    },
    Blob {
        range: Option<RangeTag>,
    },
    /// A value, or a name of the set standing for one.
    Named {
        set: String,
        inner: Box<Reader>,
    },
    // The JSON shapes of a record, variant or vec that no value tag reads (one JSON input).
    Opt(Box<Reader>),
    /// A `null` or `reserved` position: filled, never asked for.
    Empty(Prim),
    Record(Vec<(String, Reader)>),
    Variant(Vec<(String, Reader)>),
    Vec {
        elem: Box<Reader>,
        range: Option<RangeTag>,
    },
}

impl Reader {
    /// A JSON value (object, `{tag, value}` or array) rather than text.
    pub fn is_json(&self) -> bool {
        matches!(
            self,
            Reader::Record(_) | Reader::Variant(_) | Reader::Vec { .. }
        )
    }

    /// The name of a whole-argument input of this kind (`amount`, `account`, ...).
    pub fn whole_name(&self) -> &'static str {
        match self {
            Reader::Amount { .. } => "amount",
            Reader::Account => "account",
            Reader::Subaccount => "subaccount",
            Reader::Principal => "principal",
            Reader::Integer { .. } => "integer",
            Reader::Text { .. } => "text",
            Reader::Bool => "bool",
            Reader::Timestamp { .. } => "time",
            Reader::Duration { .. } => "duration",
            Reader::Blob { .. } => "bytes",
            Reader::Named { inner, .. } => inner.whole_name(),
            Reader::Opt(inner) => inner.whole_name(),
            _ => "input",
        }
    }
}

/// The value tag of a position: its own, else its named type's.
pub fn value_tag<'a>(form: &'a Form, node: &'a Node) -> Option<&'a ValueTag> {
    tag_of(form, node, |t| t.value.as_ref())
}

/// A tag on the position, else on the named types it refers to.
pub fn tag_of<'a, T: 'a>(
    form: &'a Form,
    node: &'a Node,
    get: impl Fn(&'a Tags) -> Option<T>,
) -> Option<T> {
    let mut n = node;
    for _ in 0..=form.types.len() {
        if let Some(v) = get(&n.tags) {
            return Some(v);
        }
        match &n.ty {
            Ty::Ref(name) => n = form.types.get(name)?,
            _ => return None,
        }
    }
    None
}

/// Limits on what one JSON input may nest.
const MAX_READER_DEPTH: usize = 24;

pub struct ReaderBuilder<'a> {
    pub form: &'a Form,
    /// Named types on the way down: meeting one again is a recursive position.
    visiting: Vec<String>,
}

impl<'a> ReaderBuilder<'a> {
    pub fn new(form: &'a Form) -> Self {
        ReaderBuilder {
            form,
            visiting: vec![],
        }
    }

    /// The reader of one position, or why it has none. `place` names it in the reason.
    pub fn reader(&mut self, node: &Node, place: &str) -> Result<Reader, String> {
        if self.visiting.len() > MAX_READER_DEPTH {
            return Err(format!("{place}: nests deeper than {MAX_READER_DEPTH}"));
        }
        let pushed = if let Ty::Ref(name) = &node.ty {
            if self.visiting.contains(name) {
                return Err(format!("{place}: a recursive position (type {name})"));
            }
            self.visiting.push(name.clone());
            true
        } else {
            false
        };
        let r = self.reader_inner(node, place);
        if pushed {
            self.visiting.pop();
        }
        r
    }

    fn reader_inner(&mut self, node: &Node, place: &str) -> Result<Reader, String> {
        let form = self.form;
        let base = self.base_reader(node, place)?;
        match tag_of(form, node, |t| t.named.as_ref()) {
            Some(set) => Ok(Reader::Named {
                set: set.clone(),
                inner: Box::new(base),
            }),
            None => Ok(base),
        }
    }

    fn base_reader(&mut self, node: &Node, place: &str) -> Result<Reader, String> {
        let form = self.form;
        let ty = resolve(form, node).ok_or_else(|| format!("{place}: an unresolved type"))?;
        let range = tag_of(form, node, |t| t.range.clone());
        if let Some(tag) = value_tag(form, node) {
            return Ok(match (tag, ty) {
                (ValueTag::TokenAmount { decimals, symbol }, Ty::Prim(p)) => Reader::Amount {
                    prim: *p,
                    decimals: decimals.clone(),
                    symbol: symbol.clone(),
                    range,
                },
                (ValueTag::Account, _) => Reader::Account,
                (ValueTag::Subaccount, _) => Reader::Subaccount,
                (ValueTag::Timestamp { unit }, Ty::Prim(p)) => Reader::Timestamp {
                    prim: *p,
                    unit: *unit,
                },
                (ValueTag::Duration { unit }, Ty::Prim(p)) => Reader::Duration {
                    prim: *p,
                    unit: *unit,
                },
                _ => {
                    return Err(format!(
                        "{place}: a {} tag on {}",
                        tag.kind(),
                        describe_ty(Some(ty))
                    ))
                }
            });
        }
        let describe = tag_of(form, node, |t| t.describe.as_ref());
        match ty {
            Ty::Prim(Prim::Principal) => Ok(Reader::Principal),
            Ty::Prim(Prim::Bool) => Ok(Reader::Bool),
            Ty::Prim(Prim::Text) => {
                let tag = tag_of(form, node, |t| t.text.clone());
                let pattern = match tag.as_ref().and_then(|t| t.pattern.as_deref()) {
                    Some(p) => Some(compile_pattern(p).map_err(|e| format!("{place}: {e}"))?),
                    None => None,
                };
                Ok(Reader::Text {
                    tag,
                    range,
                    pattern,
                })
            }
            Ty::Prim(p) if p.is_integer() => {
                if describe.is_some() {
                    Ok(Reader::Integer { prim: *p, range })
                } else {
                    Err(format!(
                        "{place}: an integer without a value tag or a describe has no rule (its words would not say what the number is)"
                    ))
                }
            }
            Ty::Prim(p @ (Prim::Null | Prim::Reserved)) => Ok(Reader::Empty(*p)),
            Ty::Prim(p) => Err(format!("{place}: {} has no rule", p.as_str())),
            Ty::Blob => Ok(Reader::Blob { range }),
            Ty::Opt(inner) => Ok(Reader::Opt(Box::new(self.reader(inner, place)?))),
            Ty::Vec(inner) => Ok(Reader::Vec {
                elem: Box::new(self.reader(inner, &format!("{place}[]"))?),
                range,
            }),
            Ty::Record(fields) => {
                let mut out = vec![];
                for f in fields {
                    let name = named_label(&f.label, place)?;
                    out.push((
                        name.clone(),
                        self.reader(&f.node, &format!("{place}.{name}"))?,
                    ));
                }
                Ok(Reader::Record(out))
            }
            Ty::Variant(cases) => {
                let mut out = vec![];
                for c in cases {
                    let name = named_label(&c.label, place)?;
                    out.push((
                        name.clone(),
                        self.reader(&c.node, &format!("{place}.{name}"))?,
                    ));
                }
                Ok(Reader::Variant(out))
            }
            Ty::Func(_) | Ty::Service(_) => Err(format!(
                "{place}: a {} reference has no rule",
                describe_ty(Some(ty))
            )),
            Ty::Ref(_) => Err(format!("{place}: an unresolved type")),
        }
    }
}

fn named_label(label: &Label, place: &str) -> Result<String, String> {
    match label {
        Label::Named(n) => Ok(n.clone()),
        Label::Id(i) => Err(format!("{place}: a field or case named by a number (#{i})")),
    }
}
