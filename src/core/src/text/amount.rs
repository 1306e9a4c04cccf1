//! Token amounts in human units ("1.5 TKA") to base units and back, with integer arithmetic only.

use crate::issue::{Code, Fault};
use num_bigint::BigUint;

/// Characters of amount text read at most; a longer text is refused, not cut.
pub const MAX_AMOUNT_CHARS: usize = 100;

/// Reads `digits[.digits][ SYMBOL]` into base units of a token with `decimals` places.
/// `symbol` is the canister's, matched with ASCII case ignored (`1.5 tka` is `1.5 TKA`: a
/// person types a ticker in either case, and no two tokens are told apart by case); another
/// symbol is `E_UNIT`. Surrounding spaces ([`super::SPACE_CLASS`]) are trimmed, and any run of
/// them may stand between the number and the symbol, as [`amount_pattern`] says.
pub fn parse_amount(text: &str, decimals: u8, symbol: Option<&str>) -> Result<BigUint, Fault> {
    // Counted before trimming, as a schema's `maxLength` counts.
    if text.chars().count() > MAX_AMOUNT_CHARS {
        return Err(Fault::new(
            Code::TooLarge,
            format!("an amount has at most {MAX_AMOUNT_CHARS} characters"),
        ));
    }
    let t = super::trim_spaces(text);
    let (number, unit) = split_unit(t, symbol);
    if number.is_empty() {
        return Err(syntax(t, "it does not start with a digit"));
    }
    if !unit.is_empty() {
        let symbol_like = unit
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-');
        let exponent = unit.len() > 1
            && unit.starts_with(['e', 'E'])
            && unit[1..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == '+');
        match symbol {
            Some(s) if unit.eq_ignore_ascii_case(s) => {}
            // An exponent is refused as a unit: the schema, when it cannot name the symbol,
            // cannot tell `e8` from a ticker either.
            Some(s) if exponent => {
                return Err(Fault::new(
                    Code::Unit,
                    format!("'{unit}' is not this token's symbol ({s}); exponents are not read: write the digits"),
                ))
            }
            Some(s) if symbol_like => {
                return Err(Fault::new(
                    Code::Unit,
                    format!("'{unit}' is not this token's symbol; the canister's symbol is {s}"),
                ))
            }
            None if symbol_like && !exponent => {
                return Err(Fault::new(
                    Code::Unit,
                    format!("'{unit}' cannot be checked: the token's symbol is not known; give the number alone"),
                ))
            }
            None if exponent => {
                return Err(Fault::new(
                    Code::Unit,
                    format!("'{unit}' is not a symbol: exponents are not read; write the digits"),
                ))
            }
            _ => return Err(syntax(t, "only a token symbol may follow the number")),
        }
    }
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => {
            if f.contains('.') {
                return Err(syntax(t, "more than one decimal point"));
            }
            if f.is_empty() {
                return Err(syntax(t, "a decimal point needs digits after it"));
            }
            (i, f)
        }
        None => (number, ""),
    };
    if int_part.is_empty() {
        return Err(syntax(
            t,
            "write a digit before the decimal point (0.5, not .5)",
        ));
    }
    if int_part.len() > 1 && int_part.starts_with('0') {
        return Err(syntax(t, "no leading zeros"));
    }
    if !unit.is_empty() {
        match symbol {
            Some(s) if unit == s || unit.eq_ignore_ascii_case(s) => {}
            Some(s) => {
                return Err(Fault::new(
                    Code::Unit,
                    format!("'{unit}' is not this token's symbol; the canister's symbol is {s}"),
                ))
            }
            None => {
                return Err(Fault::new(
                    Code::Unit,
                    format!("'{unit}' cannot be checked: the token's symbol is not known; give the number alone"),
                ))
            }
        }
    }
    if frac_part.len() > decimals as usize {
        return Err(Fault::new(
            Code::Precision,
            format!(
                "'{t}' has {} decimal places; this token has {decimals}",
                frac_part.len()
            ),
        ));
    }
    let mut digits = String::with_capacity(int_part.len() + decimals as usize);
    digits.push_str(int_part);
    digits.push_str(frac_part);
    for _ in frac_part.len()..decimals as usize {
        digits.push('0');
    }
    BigUint::parse_bytes(digits.as_bytes(), 10).ok_or_else(|| syntax(t, "not a number"))
}

/// Base units as human text: `150000000` with 8 decimals is `1.5`.
pub fn format_amount(units: &BigUint, decimals: u8) -> String {
    let s = crate::text::integer::digits(units);
    let d = decimals as usize;
    if d == 0 {
        return s;
    }
    let padded = if s.len() <= d {
        format!("{}{}", "0".repeat(d + 1 - s.len()), s)
    } else {
        s
    };
    let (int, frac) = padded.split_at(padded.len() - d);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

/// `1.5 TKA`, or the number alone when the symbol is not known.
pub fn format_amount_with_symbol(units: &BigUint, decimals: u8, symbol: Option<&str>) -> String {
    let n = format_amount(units, decimals);
    match symbol {
        Some(s) => format!("{n} {s}"),
        None => n,
    }
}

/// The number and the unit after it. The canister's symbol is looked for at the end first,
/// so that a symbol that starts with a digit (`1INCH`) or holds spaces is read as the pattern
/// reads it; otherwise the number is the leading digits and points.
fn split_unit<'t>(t: &'t str, symbol: Option<&str>) -> (&'t str, &'t str) {
    if let Some(s) = symbol.filter(|s| !s.is_empty() && t.len() > s.len()) {
        let at = t.len() - s.len();
        if t.is_char_boundary(at) && t[at..].eq_ignore_ascii_case(s) {
            let number = t[..at].trim_end_matches(|c: char| c.is_ascii_whitespace());
            if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return (number, &t[at..]);
            }
        }
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, rest) = t.split_at(split);
    (
        number,
        rest.trim_start_matches(|c: char| c.is_ascii_whitespace()),
    )
}

/// The amount's regular expression for a JSON Schema `pattern`: what [`parse_amount`] reads,
/// but for what the schema cannot know (the token's decimals or symbol when the canisters
/// disagree or have not been read). Spaces around the value and before the symbol are allowed
/// and the symbol's ASCII letters match in either case, as the reader trims and compares; with
/// no symbol known, a unit starts with a letter, `_` or `-` (so `05` and `1.5.5` are not a
/// number and a unit).
pub fn amount_pattern(decimals: Option<u8>, symbol: Option<&str>) -> String {
    let frac = match decimals {
        Some(0) => String::new(),
        Some(d) => format!("(\\.[0-9]{{1,{d}}})?"),
        None => "(\\.[0-9]+)?".to_string(),
    };
    let sp = super::SPACE_CLASS;
    let unit = match symbol {
        Some(s) => format!("({sp}*{})?", super::ascii_caseless_pattern(s)),
        None => format!("({sp}*[A-Za-z_-][A-Za-z0-9._-]*)?"),
    };
    super::padded_pattern(&format!("(0|[1-9][0-9]*){frac}{unit}"))
}

fn syntax(t: &str, why: &str) -> Fault {
    Fault::new(
        Code::Syntax,
        format!("'{t}' is not an amount: {why}; write it as 1.5 or 1.5 SYMBOL"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(t: &str, d: u8) -> Result<String, Code> {
        parse_amount(t, d, Some("TKA"))
            .map(|n| n.to_string())
            .map_err(|f| f.code)
    }

    #[test]
    fn reads_human_units_exactly() {
        assert_eq!(units("1.5 TKA", 8), Ok("150000000".into()));
        assert_eq!(units("1.5", 8), Ok("150000000".into()));
        assert_eq!(units(" 0.00000001TKA ", 8), Ok("1".into()));
        assert_eq!(units("1.5 tka", 8), Ok("150000000".into()));
        assert_eq!(units("7", 0), Ok("7".into()));
        assert_eq!(
            units("123456789012345678901234567890.123456789012345678", 18),
            Ok("123456789012345678901234567890123456789012345678".into())
        );
    }

    #[test]
    fn refuses_more_fraction_digits_than_decimals() {
        assert_eq!(units("1.123456789 TKA", 8), Err(Code::Precision));
        assert_eq!(units("1.0", 0), Err(Code::Precision));
    }

    #[test]
    fn refuses_another_symbol() {
        assert_eq!(units("1.5 XYZ", 8), Err(Code::Unit));
        assert_eq!(
            parse_amount("1 TKA", 8, None).map_err(|f| f.code),
            Err(Code::Unit)
        );
    }

    #[test]
    fn refuses_what_is_not_plain_decimal() {
        for t in [
            "",
            "TKA",
            ".5",
            "5.",
            "1,5",
            "1_000",
            "1e8",
            "-1",
            "+1",
            "01.5",
            "1.2.3",
            "0x10",
            "1.5 TKA TKA",
            "∞",
        ] {
            assert!(units(t, 8).is_err(), "{t} should be refused");
        }
        assert_eq!(units(&"9".repeat(101), 8), Err(Code::TooLarge));
    }

    #[test]
    fn formats_back() {
        let n = |s: &str| BigUint::parse_bytes(s.as_bytes(), 10).unwrap();
        assert_eq!(format_amount(&n("150000000"), 8), "1.5");
        assert_eq!(format_amount(&n("1"), 8), "0.00000001");
        assert_eq!(format_amount(&n("0"), 8), "0");
        assert_eq!(format_amount(&n("100000000"), 8), "1");
        assert_eq!(format_amount(&n("12"), 0), "12");
        assert_eq!(
            format_amount_with_symbol(&n("10000"), 8, Some("TKA")),
            "0.0001 TKA"
        );
    }

    #[test]
    fn pattern_matches_what_parses() {
        let p = regex_lite::Regex::new(&amount_pattern(Some(8), Some("TKA"))).unwrap();
        assert!(p.is_match("1.5 TKA"));
        assert!(p.is_match("1.5"));
        assert!(!p.is_match("1.123456789"));
        assert!(!p.is_match("1.5 XYZ"));
    }
}
