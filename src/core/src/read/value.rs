//! Candid values of the integer types, and raw values from refs.

use crate::form::{Form, Node, Prim, Ty};
use crate::issue::{Code, Fault};
use crate::text::account::parse_account;
use crate::text::integer::check_bounds;
use crate::text::principal::parse_principal;
use candid::types::Label as CLabel;
use candid::{IDLValue, Int, Nat};
use num_bigint::{BigInt, BigUint, Sign};
use serde_json::Value;

/// An integer as the Candid value of its type; out of bounds is `E_RANGE`.
pub fn int_value(prim: Prim, n: &BigInt) -> Result<IDLValue, Fault> {
    check_bounds(n, prim, None)?;
    let small = |n: &BigInt| -> i128 { i128::try_from(n.clone()).unwrap_or(0) };
    Ok(match prim {
        Prim::Nat => IDLValue::Nat(Nat(n.to_biguint().unwrap_or_default())),
        Prim::Int => IDLValue::Int(Int(n.clone())),
        Prim::Nat8 => IDLValue::Nat8(small(n) as u8),
        Prim::Nat16 => IDLValue::Nat16(small(n) as u16),
        Prim::Nat32 => IDLValue::Nat32(small(n) as u32),
        Prim::Nat64 => IDLValue::Nat64(small(n) as u64),
        Prim::Int8 => IDLValue::Int8(small(n) as i8),
        Prim::Int16 => IDLValue::Int16(small(n) as i16),
        Prim::Int32 => IDLValue::Int32(small(n) as i32),
        Prim::Int64 => IDLValue::Int64(small(n) as i64),
        other => {
            return Err(Fault::new(
                Code::Type,
                format!("{} is not an integer type", other.as_str()),
            ))
        }
    })
}

/// The integer inside a Candid value, if it is one.
pub fn value_int(v: &IDLValue) -> Option<BigInt> {
    Some(match v {
        IDLValue::Nat(n) => BigInt::from_biguint(Sign::Plus, n.0.clone()),
        IDLValue::Int(i) => i.0.clone(),
        IDLValue::Nat8(x) => BigInt::from(*x),
        IDLValue::Nat16(x) => BigInt::from(*x),
        IDLValue::Nat32(x) => BigInt::from(*x),
        IDLValue::Nat64(x) => BigInt::from(*x),
        IDLValue::Int8(x) => BigInt::from(*x),
        IDLValue::Int16(x) => BigInt::from(*x),
        IDLValue::Int32(x) => BigInt::from(*x),
        IDLValue::Int64(x) => BigInt::from(*x),
        IDLValue::Number(s) => s.parse().ok()?,
        _ => return None,
    })
}

pub fn value_uint(v: &IDLValue) -> Option<BigUint> {
    value_int(v).and_then(|i| i.to_biguint())
}

/// A ref's JSON as a whole number (numbers, or digit strings for large ones).
pub fn json_int(v: &Value) -> Option<BigInt> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(BigInt::from)
            .or_else(|| n.as_u64().map(BigInt::from)),
        Value::String(s)
            if !s.is_empty()
                && s.trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit()) =>
        {
            s.parse().ok()
        }
        _ => None,
    }
}

/// A ref's JSON (a value read from the canister) as the Candid value of a position.
pub fn raw_value(form: &Form, node: &Node, v: &Value) -> Result<IDLValue, Fault> {
    raw_value_within(form, node, v, 0)
}

/// Options a ref's value is put in at most: `type T = opt T` is an option of itself, and a
/// value for it never ends (it was a walk without end at every prepare).
const MAX_REF_OPTS: usize = 32;

fn raw_value_within(form: &Form, node: &Node, v: &Value, opts: usize) -> Result<IDLValue, Fault> {
    let ty = crate::form::resolve(form, node)
        .ok_or_else(|| Fault::new(Code::Input, "an unresolved type"))?;
    let wrong = || {
        Fault::new(
            Code::Input,
            format!(
                "the ref value {v} does not fit {}",
                crate::form::describe_ty(Some(ty))
            ),
        )
    };
    match ty {
        Ty::Prim(p) if p.is_integer() => int_value(*p, &json_int(v).ok_or_else(wrong)?),
        Ty::Prim(Prim::Text) => v
            .as_str()
            .map(|s| IDLValue::Text(s.to_string()))
            .ok_or_else(wrong),
        Ty::Prim(Prim::Bool) => v.as_bool().map(IDLValue::Bool).ok_or_else(wrong),
        Ty::Prim(Prim::Principal) => Ok(IDLValue::Principal(parse_principal(
            v.as_str().ok_or_else(wrong)?,
        )?)),
        Ty::Opt(_) if opts >= MAX_REF_OPTS => Err(Fault::new(
            Code::Input,
            format!("the ref value {v} would be put in more than {MAX_REF_OPTS} options"),
        )),
        Ty::Opt(inner) => Ok(IDLValue::Opt(Box::new(raw_value_within(
            form,
            inner,
            v,
            opts + 1,
        )?))),
        Ty::Record(_) if crate::form::is_account(form, Some(ty)) => {
            let a = parse_account(v.as_str().ok_or_else(wrong)?)?;
            Ok(account_value(a.owner, a.subaccount))
        }
        Ty::Blob => {
            let s = v.as_str().ok_or_else(wrong)?;
            Ok(IDLValue::Blob(hex::decode(s).map_err(|_| wrong())?))
        }
        _ => Err(wrong()),
    }
}

/// An ICRC-1 account record.
pub fn account_value(owner: candid::Principal, sub: Option<[u8; 32]>) -> IDLValue {
    IDLValue::Record(vec![
        candid::types::value::IDLField {
            id: CLabel::Named("owner".into()),
            val: IDLValue::Principal(owner),
        },
        candid::types::value::IDLField {
            id: CLabel::Named("subaccount".into()),
            val: match sub {
                Some(s) => IDLValue::Opt(Box::new(IDLValue::Blob(s.to_vec()))),
                None => IDLValue::None,
            },
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A ref's value put in its position's options: a type that is an option of itself is
    /// refused rather than walked without end.
    #[test]
    fn a_refs_options_are_bounded() {
        let form = crate::form::form_from_json(&json!({
            "format": "candid-profile-resolved", "format_version": 0, "name": "t",
            "types": {
                "T": { "type": "opt", "inner": { "type": "T" } },
                "N": { "type": "opt", "inner": { "type": "opt", "inner": { "type": "nat" } } }
            },
            "methods": {}
        }))
        .expect("the form parses");
        let at = |name: &str| crate::form::Node {
            ty: Ty::Ref(name.into()),
            tags: Default::default(),
        };
        let fault = raw_value(&form, &at("T"), &json!(8)).expect_err("no value fits");
        assert!(
            fault.message.contains("more than 32 options"),
            "{}",
            fault.message
        );
        let v = raw_value(&form, &at("N"), &json!(8)).expect("two options");
        assert_eq!(
            v,
            IDLValue::Opt(Box::new(IDLValue::Opt(Box::new(IDLValue::Nat(
                8u64.into()
            )))))
        );
    }
}
