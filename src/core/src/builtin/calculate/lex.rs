//! Tokens of an expression. A number is digits with single `_` between digits, an optional
//! `.digits`, and an optional exponent `e` / `E` with a sign and at most four digits
//! (|exponent| ≤ 1000): read exactly, so `0.1` is one tenth and `1e3` is 1000.

use super::CalcError;
use crate::issue::Code;
use num_bigint::BigInt;
use num_rational::BigRational;

/// The largest exponent a literal takes (`1e1000`).
pub const MAX_LITERAL_EXPONENT: u32 = 1000;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Num(BigRational),
    /// `+ - * / % ^`
    Op(char),
    Open,
    Close,
    Name(String),
}

/// A token and its 1-based character position.
pub type Token = (Tok, usize);

pub fn tokens(text: &str) -> Result<Vec<Token>, CalcError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let pos = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let (n, next) = number(&chars, i)?;
            out.push((Tok::Num(n), pos));
            i = next;
        } else if c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
            return Err(CalcError::new(
                Code::Syntax,
                pos,
                "a number starts with a digit (write 0.5, not .5)",
            ));
        } else if "+-*/%^".contains(c) {
            out.push((Tok::Op(c), pos));
            i += 1;
        } else if c == '(' {
            out.push((Tok::Open, pos));
            i += 1;
        } else if c == ')' {
            out.push((Tok::Close, pos));
            i += 1;
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Tok::Name(chars[start..i].iter().collect()), pos));
        } else {
            return Err(CalcError::new(
                Code::Syntax,
                pos,
                format!("{c:?} is not part of an expression: it takes numbers, + - * / % ^, brackets ( ) and the functions sqrt abs round floor ceil ln log"),
            ));
        }
    }
    Ok(out)
}

/// Digits with `_` only between two digits; answers the digits and the index after them.
fn digits(chars: &[char], mut i: usize) -> Result<(String, usize), CalcError> {
    let mut s = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            s.push(c);
            i += 1;
        } else if c == '_' {
            let next_is_digit = chars.get(i + 1).is_some_and(|d| d.is_ascii_digit());
            if s.is_empty() || !next_is_digit {
                return Err(CalcError::new(
                    Code::Syntax,
                    i + 1,
                    "_ separates digits: it stands between two digits (1_000), once",
                ));
            }
            i += 1;
        } else {
            break;
        }
    }
    Ok((s, i))
}

fn number(chars: &[char], start: usize) -> Result<(BigRational, usize), CalcError> {
    let (whole, mut i) = digits(chars, start)?;
    let mut frac = String::new();
    if chars.get(i) == Some(&'.') {
        if !chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
            return Err(CalcError::new(
                Code::Syntax,
                i + 1,
                "a decimal point needs digits after it (write 2.0 or 2)",
            ));
        }
        let (f, next) = digits(chars, i + 1)?;
        frac = f;
        i = next;
    }
    let mut exponent: i64 = 0;
    if matches!(chars.get(i), Some('e') | Some('E')) {
        let at = i + 1;
        let mut j = i + 1;
        let negative = chars.get(j) == Some(&'-');
        if matches!(chars.get(j), Some('-') | Some('+')) {
            j += 1;
        }
        let begin = j;
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
        if j == begin {
            return Err(CalcError::new(
                Code::Syntax,
                at,
                "an exponent needs digits after the e (1e3, 2.5e-4)",
            ));
        }
        let e: String = chars[begin..j].iter().collect();
        let e: u32 = e
            .parse()
            .ok()
            .filter(|e| *e <= MAX_LITERAL_EXPONENT)
            .ok_or_else(|| {
                CalcError::new(
                    Code::Range,
                    at,
                    format!("a literal's exponent is at most {MAX_LITERAL_EXPONENT}"),
                )
            })?;
        exponent = if negative { -(e as i64) } else { e as i64 };
        i = j;
    }
    if chars
        .get(i)
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == '_' || *c == '.')
    {
        return Err(CalcError::new(
            Code::Syntax,
            i + 1,
            format!(
                "{:?} cannot follow a number: put an operator between them",
                chars[i]
            ),
        ));
    }
    let mantissa: BigInt = format!("{whole}{frac}")
        .parse()
        .map_err(|_| CalcError::new(Code::Syntax, start + 1, "not a number"))?;
    let scale = exponent - frac.len() as i64;
    let ten = BigInt::from(10u8);
    let value = if scale >= 0 {
        BigRational::from_integer(mantissa * num_traits::pow(ten, scale as usize))
    } else {
        BigRational::new(mantissa, num_traits::pow(ten, (-scale) as usize))
    };
    Ok((value, i))
}
