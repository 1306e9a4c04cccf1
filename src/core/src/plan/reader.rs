//! Which reading rule a position gets, decided once when the plan is built. A position with no
//! rule makes the method skipped, with the reason.

use super::{Fill, Slot};
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
    /// A position inside a JSON input that the host fills (an `auto` default, or a hidden `opt`
    /// left empty): never an input, absent from the schema, refused when an input names it.
    /// Its slot's fill is `Fill::Auto` or `Fill::Empty`.
    Host(Box<Slot>),
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

/// Whether the host fills a position, so that it is never an input: its `auto` default, or
/// nothing for a hidden `opt` (and a hidden `null` or `reserved`). The tags are looked for on
/// the position and, for an `opt`, on its value (a named type's tags apply wherever it is used).
/// `Ok(None)`: the position is read from the input. A hidden position that cannot be left empty
/// and has no default, or a default that does not fit the position, has no rule.
pub fn host_fill(form: &Form, node: &Node, place: &str) -> Result<Option<Fill>, String> {
    ReaderBuilder::new(form).host_fill(node, place)
}

/// Whether a position holds a host-filled position below it (its value tag reads it whole).
fn holds_host_tags(form: &Form, node: &Node, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    let tagged = |n: &Node| {
        tag_of(form, n, |t| t.auto.as_ref()).is_some()
            || tag_of(form, n, |t| t.hidden.then_some(true)).unwrap_or(false)
    };
    let below = |n: &Node| tagged(n) || holds_host_tags(form, n, depth + 1);
    match resolve(form, node) {
        Some(Ty::Opt(n) | Ty::Vec(n)) => below(n),
        Some(Ty::Record(fs) | Ty::Variant(fs)) => fs.iter().any(|f| below(&f.node)),
        _ => false,
    }
}

/// Limits on what one JSON input may nest.
const MAX_READER_DEPTH: usize = 24;

/// Positions one method's inputs may have, a named type counted at each use. A form whose
/// types use others more than once (a record of two fields of one type, each a record of two
/// fields of another, ...) reads as an input twice as large at each level: sixteen levels, a
/// form of 1 KB, made a 13 MB schema and took seconds of a native build to plan, and a
/// registration or the catalog's build after an upgrade past a message's limit. Such a
/// method is skipped, with this reason, before it is written out.
pub const MAX_POSITIONS: usize = 1_000;

/// Positions all of one form's methods may read together (a skipped method's counted as far
/// as it read): 256 methods each at [`MAX_POSITIONS`] made a form that took 9 B instructions
/// to register and 2 B in every build of the catalog. A method past what its form left is
/// skipped with the reason, as one past its own bound.
pub const MAX_FORM_POSITIONS: usize = 20_000;

/// Which bound a builder reads within: its method's, or its form's where that leaves less.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Method,
    Form,
}

/// What a method's inputs have read, and may read (its parameters and its case tools share
/// it).
#[derive(Debug)]
pub struct Budget {
    pub used: usize,
    limit: usize,
    bound: Bound,
}

impl Budget {
    /// A method's budget, `form_left` positions being left of its form's bound.
    pub fn of_method(form_left: usize) -> Budget {
        let (limit, bound) = if form_left < MAX_POSITIONS {
            (form_left, Bound::Form)
        } else {
            (MAX_POSITIONS, Bound::Method)
        };
        Budget {
            used: 0,
            limit,
            bound,
        }
    }

    pub fn left(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }

    /// A builder that may read what is left.
    pub fn builder<'a>(&self, form: &'a Form) -> ReaderBuilder<'a> {
        ReaderBuilder {
            form,
            visiting: vec![],
            left: self.left(),
            bound: self.bound,
        }
    }
}

pub struct ReaderBuilder<'a> {
    pub form: &'a Form,
    /// Named types on the way down: meeting one again is a recursive position.
    visiting: Vec<String>,
    /// Positions this builder may still read.
    left: usize,
    /// Whose bound `left` is.
    bound: Bound,
}

impl<'a> ReaderBuilder<'a> {
    pub fn new(form: &'a Form) -> Self {
        Budget::of_method(MAX_FORM_POSITIONS).builder(form)
    }

    /// Positions this builder may still read.
    pub fn left(&self) -> usize {
        self.left
    }

    /// One position more read, or why not: the method's inputs are at their bound.
    fn take(&mut self, place: &str) -> Result<(), String> {
        if self.left == 0 {
            return Err(match self.bound {
                Bound::Method => format!(
                    "{place}: the method's inputs have more than {MAX_POSITIONS} positions (a named type counted at each use)"
                ),
                Bound::Form => format!(
                    "{place}: the form's inputs have more than {MAX_FORM_POSITIONS} positions (its methods' together, a named type counted at each use)"
                ),
            });
        }
        self.left -= 1;
        Ok(())
    }

    /// [`host_fill`] within this builder: a literal default is read by its rule with the
    /// builder's named types on the way down and its bound (a builder of its own for each
    /// default was a walk without either: a type whose default holds itself never ended, and
    /// defaults inside defaults of shared types doubled at each level).
    pub fn host_fill(&mut self, node: &Node, place: &str) -> Result<Option<Fill>, String> {
        let form = self.form;
        let ty = resolve(form, node).ok_or_else(|| format!("{place}: an unresolved type"))?;
        let auto_of = |n: &Node| tag_of(form, n, |t| t.auto.clone());
        let hidden_of = |n: &Node| tag_of(form, n, |t| t.hidden.then_some(true)).unwrap_or(false);
        let inner = match ty {
            Ty::Opt(inner) => Some(inner.as_ref()),
            _ => None,
        };
        let auto = auto_of(node).or_else(|| inner.and_then(auto_of));
        if let Some(a) = auto {
            self.check_auto(node, &a, place)?;
            return Ok(Some(Fill::Auto(a)));
        }
        if hidden_of(node) || inner.is_some_and(hidden_of) {
            return match ty {
                Ty::Opt(_) | Ty::Prim(Prim::Null | Prim::Reserved) => Ok(Some(Fill::Empty)),
                _ => Err(format!(
                    "{place}: a hidden position without an auto default or an opt to leave empty"
                )),
            };
        }
        Ok(None)
    }

    /// An `auto` default fits its position: an owner default its type, a literal its reading
    /// rule.
    fn check_auto(&mut self, node: &Node, auto: &Auto, place: &str) -> Result<(), String> {
        let form = self.form;
        let value = match resolve(form, node) {
            Some(Ty::Opt(inner)) => inner.as_ref(),
            _ => node,
        };
        let ty = resolve(form, value);
        match auto {
            Auto::From(src) => {
                let fits = match src.as_str() {
                    "owner:subaccount" => matches!(ty, Some(Ty::Blob)),
                    "owner:principal" => matches!(ty, Some(Ty::Prim(Prim::Principal))),
                    "owner:account" => is_account(form, ty),
                    _ => true,
                };
                if !fits {
                    return Err(format!(
                        "{place}: the auto default '{src}' does not fit {}",
                        describe_ty(ty)
                    ));
                }
            }
            Auto::Value(_) => {
                self.value_reader(value, place)
                    .map_err(|why| format!("{place}: the auto default cannot be read: {why}"))?;
            }
        }
        Ok(())
    }

    /// The reader of one position, or why it has none. `place` names it in the reason. A
    /// position the host fills ([`host_fill`]) is a [`Reader::Host`], at any depth; it counts
    /// against the bound as any position does.
    pub fn reader(&mut self, node: &Node, place: &str) -> Result<Reader, String> {
        if let Some(fill) = self.host_fill(node, place)? {
            self.take(place)?;
            return Ok(Reader::Host(Box::new(Slot {
                label: None,
                node: node.clone(),
                fill,
            })));
        }
        self.value_reader(node, place)
    }

    /// The reader of a position by its own rule, its `auto` and `ui.hidden` tags aside (how a
    /// literal `auto` default is read); the positions below it are read as [`Self::reader`] does.
    pub fn value_reader(&mut self, node: &Node, place: &str) -> Result<Reader, String> {
        self.take(place)?;
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
            if holds_host_tags(form, node, 0) {
                return Err(format!(
                    "{place}: a hidden or auto position inside a {} position (its value tag reads the whole position from the input)",
                    tag.kind()
                ));
            }
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
            Ty::Opt(inner) => match self.reader(inner, place)? {
                // Only an opt inside an opt gets here: one level is looked through above.
                Reader::Host(_) => Err(format!(
                    "{place}: a hidden or auto position inside an opt inside an opt"
                )),
                r => Ok(Reader::Opt(Box::new(r))),
            },
            Ty::Vec(inner) => match self.reader(inner, &format!("{place}[]"))? {
                Reader::Host(_) => Err(format!(
                    "{place}[]: a vec element that the host fills (auto or hidden); how many there are would be the input's"
                )),
                elem => Ok(Reader::Vec {
                    elem: Box::new(elem),
                    range,
                }),
            },
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
