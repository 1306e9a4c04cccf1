//! Integers given as decimal digits: no sign but a leading '-', no separators, no exponent,
//! no leading zeros, within the Candid type's bounds.

use crate::form::{Prim, RangeTag};
use crate::issue::{Code, Fault};
use num_bigint::{BigInt, Sign};

pub const MAX_INTEGER_CHARS: usize = 100;

/// A natural number's decimal digits; through `u128` when it fits (ledger amounts and block
/// indexes do), since the big-number conversion costs several times more in a canister.
pub fn digits(n: &num_bigint::BigUint) -> String {
    match u128::try_from(n) {
        Ok(x) => x.to_string(),
        Err(_) => n.to_str_radix(10),
    }
}

pub fn parse_integer(text: &str, prim: Prim, range: Option<&RangeTag>) -> Result<BigInt, Fault> {
    let t = text.trim();
    if t.chars().count() > MAX_INTEGER_CHARS {
        return Err(Fault::new(
            Code::TooLarge,
            format!("an integer has at most {MAX_INTEGER_CHARS} digits here"),
        ));
    }
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Fault::new(
            Code::Syntax,
            format!("'{t}' is not a whole number: write decimal digits only (no unit, '+', separators or exponent)"),
        ));
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err(Fault::new(Code::Syntax, format!("'{t}': no leading zeros")));
    }
    if neg && digits == "0" {
        return Err(Fault::new(Code::Syntax, "write 0, not -0"));
    }
    let mut n = BigInt::parse_bytes(digits.as_bytes(), 10)
        .ok_or_else(|| Fault::new(Code::Syntax, format!("'{t}' is not a number")))?;
    if neg {
        n = -n;
    }
    check_bounds(&n, prim, range).map(|_| n)
}

/// The Candid type's bounds, then the profile's range.
pub fn check_bounds(n: &BigInt, prim: Prim, range: Option<&RangeTag>) -> Result<(), Fault> {
    if let Some((lo, hi)) = prim_bounds(prim) {
        if *n < lo || *n > hi {
            return Err(Fault::new(
                Code::Range,
                format!("{n} is outside {} ({lo} to {hi})", prim.as_str()),
            ));
        }
    } else if prim.is_unsigned() && n.sign() == Sign::Minus {
        return Err(Fault::new(
            Code::Range,
            format!("{n} is below 0; a nat is not negative"),
        ));
    }
    if let Some(r) = range {
        if let Some(min) = r.min {
            if *n < BigInt::from(min) {
                return Err(Fault::new(
                    Code::Range,
                    format!("{n} is below the minimum {min}"),
                ));
            }
        }
        if let Some(max) = r.max {
            if *n > BigInt::from(max) {
                return Err(Fault::new(
                    Code::Range,
                    format!("{n} is above the maximum {max}"),
                ));
            }
        }
    }
    Ok(())
}

/// Inclusive bounds of a sized integer type; `None` for nat and int (unbounded; nat is >= 0).
pub fn prim_bounds(prim: Prim) -> Option<(BigInt, BigInt)> {
    let b = |lo: i128, hi: i128| Some((BigInt::from(lo), BigInt::from(hi)));
    match prim {
        Prim::Nat8 => b(0, u8::MAX as i128),
        Prim::Nat16 => b(0, u16::MAX as i128),
        Prim::Nat32 => b(0, u32::MAX as i128),
        Prim::Nat64 => b(0, u64::MAX as i128),
        Prim::Int8 => b(i8::MIN as i128, i8::MAX as i128),
        Prim::Int16 => b(i16::MIN as i128, i16::MAX as i128),
        Prim::Int32 => b(i32::MIN as i128, i32::MAX as i128),
        Prim::Int64 => b(i64::MIN as i128, i64::MAX as i128),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(t: &str, p: Prim) -> Result<String, Code> {
        parse_integer(t, p, None)
            .map(|n| n.to_string())
            .map_err(|f| f.code)
    }

    #[test]
    fn reads_digits_within_bounds() {
        assert_eq!(read(" 42 ", Prim::Nat64), Ok("42".into()));
        assert_eq!(read("-128", Prim::Int8), Ok("-128".into()));
        assert_eq!(
            read("18446744073709551615", Prim::Nat64),
            Ok("18446744073709551615".into())
        );
        assert_eq!(read("0", Prim::Nat), Ok("0".into()));
    }

    #[test]
    fn refuses_sign_separators_exponent_leading_zeros() {
        for t in [
            "+1", "1_000", "1,000", "1e3", "01", "-0", "", "1.0", "12 units", "0x1",
        ] {
            assert_eq!(read(t, Prim::Int), Err(Code::Syntax), "{t}");
        }
    }

    #[test]
    fn refuses_out_of_bounds() {
        assert_eq!(read("256", Prim::Nat8), Err(Code::Range));
        assert_eq!(read("-1", Prim::Nat), Err(Code::Range));
        assert_eq!(read("18446744073709551616", Prim::Nat64), Err(Code::Range));
        let r = RangeTag {
            min: Some(1),
            max: Some(10),
        };
        assert_eq!(
            parse_integer("11", Prim::Nat, Some(&r)).unwrap_err().code,
            Code::Range
        );
        assert_eq!(
            parse_integer("0", Prim::Nat, Some(&r)).unwrap_err().code,
            Code::Range
        );
    }
}
