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
    let t = super::trim_spaces(text);
    // Counted before trimming, as the schema's `maxLength` counts.
    if text.chars().count() > MAX_INTEGER_CHARS {
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

/// The bounds an integer input is read within: the type's, narrowed by the profile's range.
/// `None` is unbounded on that side.
pub fn effective_bounds(prim: Prim, range: Option<&RangeTag>) -> (Option<BigInt>, Option<BigInt>) {
    let (mut lo, mut hi) = match prim_bounds(prim) {
        Some((lo, hi)) => (Some(lo), Some(hi)),
        None if prim.is_unsigned() => (Some(BigInt::from(0)), None),
        None => (None, None),
    };
    if let Some(min) = range.and_then(|r| r.min).map(BigInt::from) {
        lo = Some(lo.map_or(min.clone(), |l| l.max(min)));
    }
    if let Some(max) = range.and_then(|r| r.max).map(BigInt::from) {
        hi = Some(hi.map_or(max.clone(), |h| h.min(max)));
    }
    (lo, hi)
}

/// The schema pattern of an integer input: exactly the decimal texts [`parse_integer`] reads
/// for this type and range (no `+`, no leading zeros, no `-0`, the bounds spelled out digit by
/// digit), spaces around allowed. A model can then see `nat8` stop at 255 in the schema itself.
pub fn integer_pattern(prim: Prim, range: Option<&RangeTag>) -> String {
    let (lo, hi) = effective_bounds(prim, range);
    let zero = BigInt::from(0);
    let mut alts: Vec<String> = vec![];
    // Negative numbers: "-" and the magnitudes from max(1, -hi) to -lo.
    if lo.as_ref().is_none_or(|l| *l < zero) {
        let from = match &hi {
            Some(h) if *h < zero => (-h).to_biguint().unwrap_or_default(),
            _ => 1u8.into(),
        };
        let to = lo.as_ref().map(|l| (-l).to_biguint().unwrap_or_default());
        if to.as_ref().is_none_or(|t| from <= *t) {
            alts.push(format!("-(?:{})", nat_range(&from, to.as_ref())));
        }
    }
    if hi.as_ref().is_none_or(|h| *h >= zero) {
        let from = lo
            .as_ref()
            .filter(|l| **l > zero)
            .and_then(|l| l.to_biguint())
            .unwrap_or_default();
        let to = hi.as_ref().and_then(|h| h.to_biguint());
        if to.as_ref().is_none_or(|t| from <= *t) {
            alts.push(nat_range(&from, to.as_ref()));
        }
    }
    super::padded_pattern(&alts.join("|"))
}

/// An alternation matching the decimal texts of `lo..=hi` (`hi` `None`: no upper bound).
fn nat_range(lo: &num_bigint::BigUint, hi: Option<&num_bigint::BigUint>) -> String {
    let mut alts = vec![];
    let mut lo = digits(lo);
    if lo == "0" {
        alts.push("0".to_string());
        if hi.is_some_and(|h| *h == 0u8.into()) {
            return alts.join("|");
        }
        lo = "1".into();
    }
    let la = lo.len();
    match hi.map(digits) {
        Some(hi) if hi.len() == la => alts.push(same_len(&lo, &hi)),
        Some(hi) => {
            let lb = hi.len();
            alts.push(same_len(&lo, &"9".repeat(la)));
            if la + 1 < lb {
                alts.push(format!("[1-9][0-9]{{{la},{}}}", lb - 2));
            }
            alts.push(same_len(&format!("1{}", "0".repeat(lb - 1)), &hi));
        }
        None => {
            alts.push(same_len(&lo, &"9".repeat(la)));
            alts.push(format!("[1-9][0-9]{{{la},}}"));
        }
    }
    alts.join("|")
}

/// A pattern for the digit strings from `a` to `b`, both of one length.
fn same_len(a: &str, b: &str) -> String {
    let n = a.len();
    if a == b {
        return a.to_string();
    }
    let all = |s: &str, d: u8| s.bytes().all(|x| x == d);
    let rep = |k: usize| match k {
        0 => String::new(),
        1 => "[0-9]".to_string(),
        k => format!("[0-9]{{{k}}}"),
    };
    if all(a, b'0') && all(b, b'9') {
        return rep(n);
    }
    let (d1, d2) = (a.as_bytes()[0], b.as_bytes()[0]);
    let (ra, rb) = (&a[1..], &b[1..]);
    if d1 == d2 {
        return format!("{}{}", d1 as char, same_len(ra, rb));
    }
    let mut alts = vec![];
    let start = if all(ra, b'0') {
        d1
    } else {
        alts.push(format!(
            "{}{}",
            d1 as char,
            same_len(ra, &"9".repeat(n - 1))
        ));
        d1 + 1
    };
    let end = if all(rb, b'9') { d2 } else { d2 - 1 };
    if start <= end {
        let class = if start == end {
            (start as char).to_string()
        } else {
            format!("[{}-{}]", start as char, end as char)
        };
        alts.push(format!("{class}{}", rep(n - 1)));
    }
    if !all(rb, b'9') {
        alts.push(format!(
            "{}{}",
            d2 as char,
            same_len(&"0".repeat(n - 1), rb)
        ));
    }
    if alts.len() == 1 {
        alts.remove(0)
    } else {
        format!("(?:{})", alts.join("|"))
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
    fn the_pattern_spells_out_the_bounds() {
        let matches = |p: Prim, r: Option<&RangeTag>, t: &str| {
            regex_lite::Regex::new(&integer_pattern(p, r))
                .unwrap()
                .is_match(t)
        };
        for p in [Prim::Nat8, Prim::Int8, Prim::Int16, Prim::Nat16] {
            let (lo, hi) = prim_bounds(p).unwrap();
            let (lo, hi) = (i128::try_from(lo).unwrap(), i128::try_from(hi).unwrap());
            for n in lo - 300..=hi + 300 {
                let t = n.to_string();
                assert_eq!(matches(p, None, &t), read(&t, p).is_ok(), "{p:?} {t}");
            }
        }
        let r = RangeTag {
            min: Some(-17),
            max: Some(1234),
        };
        for n in -2000i64..2000 {
            let t = n.to_string();
            let ok = parse_integer(&t, Prim::Int, Some(&r)).is_ok();
            assert_eq!(matches(Prim::Int, Some(&r), &t), ok, "{t}");
        }
        for t in ["18446744073709551615", "10000000000000000000", "0", " 7 "] {
            assert!(matches(Prim::Nat64, None, t), "{t}");
        }
        for t in [
            "18446744073709551616",
            "-1",
            "01",
            "+1",
            "-0",
            "99999999999999999999",
        ] {
            assert!(!matches(Prim::Nat64, None, t), "{t}");
        }
        assert!(matches(Prim::Int, None, "-123456789012345678901234567890"));
        assert!(!matches(Prim::Int, None, "-0"));
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
