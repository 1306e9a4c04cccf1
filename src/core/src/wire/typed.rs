//! A whole message read into `IDLValue`s with the types the reader expects (a form's method
//! types), giving what `IDLArgs::from_bytes_with_types` gives when the wire types are the
//! expected ones (extra record fields and absent optional fields allowed). Any other subtyping
//! (`nat` as `int`, the special `opt` rules, ...) is left to `candid`.

use super::op;
use super::table::{Entry, Table, Ty};
use super::value::Reader;
use super::write::leb;
use candid::types::value::{IDLField, IDLValue, VariantValue};
use candid::types::{Type, TypeEnv, TypeInner};
use candid::{IDLArgs, Int, Nat};

const MAX_DEPTH: usize = 64;
/// Values read before the message is given to `candid` (which bounds its work by a quota).
const MAX_VALUES: usize = 100_000;
/// Steps of the walk over the types before the message is given to `candid`: a reply's table
/// (up to 10 000 entries) is the target's to write, and each entry may be met with each of
/// the form's names (a form's own types take hundreds).
const MAX_TYPE_STEPS: usize = 10_000;

/// The type walk's memory: the (wire type, name) pairs followed (in a set: a hostile table
/// meets many, and a list searched at each was quadratic in them) and the steps left.
struct Walk<'e> {
    seen: std::collections::BTreeSet<(Ty, &'e str)>,
    left: usize,
}

/// The message's values with the `expected` types, or `None` to decode it with `candid`.
pub fn decode_with_types(bytes: &[u8], env: &TypeEnv, expected: &[Type]) -> Option<IDLArgs> {
    let (table, r) = super::parse(bytes)?;
    if table.args.len() != expected.len() {
        return None;
    }
    let mut d = Decoder {
        table: &table,
        env,
        r,
        values: 0,
    };
    // Types first: a value's type is not always visited (an empty `vec`, an absent `opt`), and
    // `candid` refuses some of those it does not visit (an empty `vec empty` read as a `blob`).
    let mut walk = Walk {
        seen: Default::default(),
        left: MAX_TYPE_STEPS,
    };
    for (w, t) in table.args.iter().zip(expected) {
        if !fits(&table, env, *w, t, &mut walk, 0) {
            return None;
        }
    }
    let mut args = Vec::with_capacity(expected.len());
    for (w, t) in table.args.iter().zip(expected) {
        args.push(d.value(*w, t, 0)?);
    }
    d.r.at_end().then_some(IDLArgs { args })
}

struct Decoder<'a, 'b> {
    table: &'a Table,
    env: &'a TypeEnv,
    r: Reader<'b>,
    values: usize,
}

/// A named type's definition (forms' method types are closed: no knots).
fn resolve<'t>(env: &'t TypeEnv, t: &'t Type) -> Option<&'t Type> {
    match t.as_ref() {
        TypeInner::Var(id) => env.rec_find_type(id).ok(),
        TypeInner::Knot(_) => None,
        _ => Some(t),
    }
}

/// True when the wire type `w` is the expected `t` exactly, but for what [`Decoder::value`]
/// reads as `candid` does: record fields the reader does not expect, optional (or `null`,
/// `reserved`) fields absent from the wire, `null` or `reserved` for an `opt`, variant cases on
/// the wire the reader does not know (read only when sent, then declined), anything for
/// `reserved`. Named types are followed once per (wire type, name) pair (recursive ones, and
/// those a type uses more than once); false past [`MAX_TYPE_STEPS`].
fn fits<'e>(
    table: &Table,
    env: &'e TypeEnv,
    w: Ty,
    t: &'e Type,
    walk: &mut Walk<'e>,
    depth: usize,
) -> bool {
    if depth > MAX_DEPTH || walk.left == 0 {
        return false;
    }
    walk.left -= 1;
    if let TypeInner::Var(id) = t.as_ref() {
        if !walk.seen.insert((w, id.as_str())) {
            return true;
        }
    }
    let Some(t) = resolve(env, t) else {
        return false;
    };
    let prim = |p: i64| w == Ty::Prim(p);
    match t.as_ref() {
        TypeInner::Null => prim(op::NULL),
        TypeInner::Bool => prim(op::BOOL),
        TypeInner::Nat => prim(op::NAT),
        TypeInner::Int => prim(op::INT),
        TypeInner::Nat8 => prim(op::NAT8),
        TypeInner::Nat16 => prim(op::NAT16),
        TypeInner::Nat32 => prim(op::NAT32),
        TypeInner::Nat64 => prim(op::NAT64),
        TypeInner::Int8 => prim(op::INT8),
        TypeInner::Int16 => prim(op::INT16),
        TypeInner::Int32 => prim(op::INT32),
        TypeInner::Int64 => prim(op::INT64),
        TypeInner::Float32 => prim(op::FLOAT32),
        TypeInner::Float64 => prim(op::FLOAT64),
        TypeInner::Text => prim(op::TEXT),
        TypeInner::Principal => prim(op::PRINCIPAL),
        TypeInner::Reserved => true,
        TypeInner::Opt(inner) => match table.entry(w) {
            _ if prim(op::NULL) || prim(op::RESERVED) => true,
            Some(Entry::Opt(wi)) => fits(table, env, *wi, inner, walk, depth + 1),
            _ => false,
        },
        TypeInner::Vec(inner) => match table.entry(w) {
            Some(Entry::Vec(wi)) => fits(table, env, *wi, inner, walk, depth + 1),
            _ => false,
        },
        TypeInner::Record(fields) => {
            let Some(wire) = table.record(w) else {
                return false;
            };
            fields.iter().all(|f| {
                let id = f.id.get_id();
                match wire.binary_search_by_key(&id, |&(i, _)| i) {
                    Ok(k) => fits(table, env, wire[k].1, &f.ty, walk, depth + 1),
                    Err(_) => matches!(
                        resolve(env, &f.ty).map(|t| t.as_ref()),
                        Some(TypeInner::Opt(_) | TypeInner::Null | TypeInner::Reserved)
                    ),
                }
            })
        }
        TypeInner::Variant(cases) => {
            let Some(wire) = table.variant(w) else {
                return false;
            };
            cases.iter().all(
                |c| match wire.binary_search_by_key(&c.id.get_id(), |&(i, _)| i) {
                    Ok(k) => fits(table, env, wire[k].1, &c.ty, walk, depth + 1),
                    Err(_) => true,
                },
            )
        }
        _ => false,
    }
}

impl Decoder<'_, '_> {
    fn value(&mut self, w: Ty, t: &Type, depth: usize) -> Option<IDLValue> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.values += 1;
        if self.values > MAX_VALUES {
            return None;
        }
        let env = self.env;
        let t = resolve(env, t)?;
        let prim = |p: i64| (w == Ty::Prim(p)).then_some(());
        Some(match t.as_ref() {
            TypeInner::Null => {
                prim(op::NULL)?;
                IDLValue::Null
            }
            TypeInner::Bool => IDLValue::Bool(self.r.bool(w)?),
            TypeInner::Nat => IDLValue::Nat(Nat::from(self.r.nat_u64(w)?)),
            TypeInner::Int => {
                prim(op::INT)?;
                IDLValue::Int(Int::from(self.r.sleb()?))
            }
            TypeInner::Nat8 => {
                prim(op::NAT8)?;
                IDLValue::Nat8(self.r.u8()?)
            }
            TypeInner::Nat16 => {
                prim(op::NAT16)?;
                IDLValue::Nat16(u16::from_le_bytes(self.fixed()?))
            }
            TypeInner::Nat32 => {
                prim(op::NAT32)?;
                IDLValue::Nat32(u32::from_le_bytes(self.fixed()?))
            }
            TypeInner::Nat64 => IDLValue::Nat64(self.r.nat64(w)?),
            TypeInner::Int8 => {
                prim(op::INT8)?;
                IDLValue::Int8(i8::from_le_bytes(self.fixed()?))
            }
            TypeInner::Int16 => {
                prim(op::INT16)?;
                IDLValue::Int16(i16::from_le_bytes(self.fixed()?))
            }
            TypeInner::Int32 => {
                prim(op::INT32)?;
                IDLValue::Int32(i32::from_le_bytes(self.fixed()?))
            }
            TypeInner::Int64 => {
                prim(op::INT64)?;
                IDLValue::Int64(i64::from_le_bytes(self.fixed()?))
            }
            TypeInner::Float32 => {
                prim(op::FLOAT32)?;
                IDLValue::Float32(f32::from_le_bytes(self.fixed()?))
            }
            TypeInner::Float64 => {
                prim(op::FLOAT64)?;
                IDLValue::Float64(f64::from_le_bytes(self.fixed()?))
            }
            TypeInner::Text => IDLValue::Text(self.r.text(w)?),
            TypeInner::Principal => IDLValue::Principal(self.r.principal(w)?),
            TypeInner::Reserved => {
                self.r.skip(self.table, w, depth)?;
                IDLValue::Reserved
            }
            TypeInner::Opt(inner) => match w {
                Ty::Prim(op::NULL) | Ty::Prim(op::RESERVED) => {
                    self.r.skip(self.table, w, depth)?;
                    IDLValue::None
                }
                _ => {
                    let Some(Entry::Opt(wi)) = self.table.entry(w) else {
                        return None;
                    };
                    let wi = *wi;
                    match self.r.u8()? {
                        0 => IDLValue::None,
                        1 => IDLValue::Opt(Box::new(self.value(wi, inner, depth + 1)?)),
                        _ => return None,
                    }
                }
            },
            TypeInner::Vec(inner) => {
                let Some(Entry::Vec(wi)) = self.table.entry(w) else {
                    return None;
                };
                let wi = *wi;
                let n = self.r.length()?;
                if n > MAX_VALUES {
                    return None;
                }
                let is_bytes = matches!(resolve(env, inner)?.as_ref(), TypeInner::Nat8);
                if is_bytes && wi == Ty::Prim(op::NAT8) {
                    IDLValue::Blob(self.r.take(n)?.to_vec())
                } else {
                    let mut items = Vec::with_capacity(n.min(1024));
                    for _ in 0..n {
                        items.push(self.value(wi, inner, depth + 1)?);
                    }
                    IDLValue::Vec(items)
                }
            }
            TypeInner::Record(fields) => {
                let wire = self.table.record(w)?;
                let mut want: Vec<&candid::types::Field> = fields.iter().collect();
                want.sort_by_key(|f| f.id.get_id());
                let mut out = Vec::with_capacity(want.len());
                let mut wi = 0;
                for f in want {
                    let id = f.id.get_id();
                    // Wire fields before this one are not expected: skipped.
                    while wi < wire.len() && wire[wi].0 < id {
                        self.r.skip(self.table, wire[wi].1, depth + 1)?;
                        wi += 1;
                    }
                    let val = if wi < wire.len() && wire[wi].0 == id {
                        wi += 1;
                        self.value(wire[wi - 1].1, &f.ty, depth + 1)?
                    } else {
                        // Absent: only an optional field reads as none.
                        match resolve(env, &f.ty)?.as_ref() {
                            TypeInner::Opt(_) => IDLValue::None,
                            TypeInner::Null => IDLValue::Null,
                            TypeInner::Reserved => IDLValue::Reserved,
                            _ => return None,
                        }
                    };
                    out.push(IDLField {
                        id: (*f.id).clone(),
                        val,
                    });
                }
                while wi < wire.len() {
                    self.r.skip(self.table, wire[wi].1, depth + 1)?;
                    wi += 1;
                }
                IDLValue::Record(out)
            }
            TypeInner::Variant(cases) => {
                let wire = self.table.variant(w)?;
                let k = self.r.length()?;
                let &(id, wt) = wire.get(k)?;
                let mut want: Vec<&candid::types::Field> = cases.iter().collect();
                want.sort_by_key(|f| f.id.get_id());
                let (j, f) = want.iter().enumerate().find(|(_, f)| f.id.get_id() == id)?;
                let val = self.value(wt, &f.ty, depth + 1)?;
                IDLValue::Variant(VariantValue(
                    Box::new(IDLField {
                        id: (*f.id).clone(),
                        val,
                    }),
                    j as u64,
                ))
            }
            _ => return None,
        })
    }

    fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.r.take(N)?.try_into().ok()
    }
}

/// The message `candid` writes for `values`, given the header (`"DIDL"`, type table, argument
/// types) `candid` writes for the same types: the header depends on the types only.
/// `None` when a value does not have its type exactly (then `candid` encodes, and says why).
pub fn encode_with_header(header: &[u8], table: &Table, values: &IDLArgs) -> Option<Vec<u8>> {
    if table.args.len() != values.args.len() {
        return None;
    }
    let mut out = Vec::with_capacity(header.len() + 128);
    out.extend_from_slice(header);
    for (t, v) in table.args.iter().zip(&values.args) {
        put(table, *t, v, &mut out, 0)?;
    }
    Some(out)
}

fn put(table: &Table, t: Ty, v: &IDLValue, out: &mut Vec<u8>, depth: usize) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    match (t, v) {
        (Ty::Prim(op::NULL), IDLValue::Null) => {}
        (Ty::Prim(op::RESERVED), _) => {}
        (Ty::Prim(op::BOOL), IDLValue::Bool(b)) => out.push(u8::from(*b)),
        (Ty::Prim(op::NAT), IDLValue::Nat(n)) => n.encode(out).ok()?,
        (Ty::Prim(op::INT), IDLValue::Int(n)) => n.encode(out).ok()?,
        (Ty::Prim(op::NAT8), IDLValue::Nat8(n)) => out.push(*n),
        (Ty::Prim(op::NAT16), IDLValue::Nat16(n)) => out.extend_from_slice(&n.to_le_bytes()),
        (Ty::Prim(op::NAT32), IDLValue::Nat32(n)) => out.extend_from_slice(&n.to_le_bytes()),
        (Ty::Prim(op::NAT64), IDLValue::Nat64(n)) => out.extend_from_slice(&n.to_le_bytes()),
        (Ty::Prim(op::INT8), IDLValue::Int8(n)) => out.extend_from_slice(&n.to_le_bytes()),
        (Ty::Prim(op::INT16), IDLValue::Int16(n)) => out.extend_from_slice(&n.to_le_bytes()),
        (Ty::Prim(op::INT32), IDLValue::Int32(n)) => out.extend_from_slice(&n.to_le_bytes()),
        (Ty::Prim(op::INT64), IDLValue::Int64(n)) => out.extend_from_slice(&n.to_le_bytes()),
        (Ty::Prim(op::FLOAT32), IDLValue::Float32(n)) => out.extend_from_slice(&n.to_le_bytes()),
        (Ty::Prim(op::FLOAT64), IDLValue::Float64(n)) => out.extend_from_slice(&n.to_le_bytes()),
        (Ty::Prim(op::TEXT), IDLValue::Text(s)) => {
            leb(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        (Ty::Prim(op::PRINCIPAL), IDLValue::Principal(p)) => {
            let b = p.as_slice();
            out.push(1);
            leb(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        (Ty::Prim(_), _) => return None,
        (Ty::Entry(_), v) => match (table.entry(t)?, v) {
            (Entry::Opt(_), IDLValue::None) => out.push(0),
            (Entry::Opt(inner), IDLValue::Opt(x)) => {
                out.push(1);
                put(table, *inner, x, out, depth + 1)?;
            }
            (Entry::Vec(Ty::Prim(op::NAT8)), IDLValue::Blob(b)) => {
                leb(out, b.len() as u64);
                out.extend_from_slice(b);
            }
            (Entry::Vec(inner), IDLValue::Vec(items)) => {
                leb(out, items.len() as u64);
                for x in items {
                    put(table, *inner, x, out, depth + 1)?;
                }
            }
            (Entry::Record(fields), IDLValue::Record(values)) => {
                if fields.len() != values.len() {
                    return None;
                }
                for (id, ft) in fields {
                    let f = values.iter().find(|f| f.id.get_id() == *id)?;
                    put(table, *ft, &f.val, out, depth + 1)?;
                }
            }
            (Entry::Variant(cases), IDLValue::Variant(VariantValue(f, _))) => {
                let id = f.id.get_id();
                let k = cases.iter().position(|(c, _)| *c == id)?;
                leb(out, k as u64);
                put(table, cases[k].1, &f.val, out, depth + 1)?;
            }
            _ => return None,
        },
    }
    Some(())
}
