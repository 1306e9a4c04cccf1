//! Bytes given as hex text.

use crate::form::RangeTag;
use crate::issue::{Code, Fault};

/// Bytes of one blob input at most, unless a range says fewer.
pub const MAX_BLOB_BYTES: usize = 4096;

pub fn parse_hex(text: &str, range: Option<&RangeTag>) -> Result<Vec<u8>, Fault> {
    // The whole text is counted, as the schema's `maxLength` counts it.
    if text.chars().count() > MAX_BLOB_BYTES * 2 {
        return Err(Fault::new(
            Code::TooLarge,
            format!(
                "a blob's text has at most {} characters ({MAX_BLOB_BYTES} bytes as hex)",
                MAX_BLOB_BYTES * 2
            ),
        ));
    }
    let t = super::trim_spaces(text);
    let t = t.strip_prefix("0x").unwrap_or(t);
    if !t.len().is_multiple_of(2) || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Fault::new(
            Code::Syntax,
            "bytes are written as hex digits, two per byte",
        ));
    }
    let bytes = hex::decode(t).map_err(|e| Fault::new(Code::Syntax, e.to_string()))?;
    check_len(bytes.len(), range, "bytes")?;
    Ok(bytes)
}

/// The schema of a blob's text: a `pattern` of hex pairs (`0x` allowed, spaces around) with the
/// range's byte counts as its repetition bounds where a pattern may carry them
/// ([`super::ecma::MAX_REPEAT`]), and otherwise a `maxLength` of two digits per byte, which
/// [`parse_hex`] counts as the schema does (the whole text, `0x` and spaces included).
pub fn blob_schema(range: Option<&RangeTag>) -> (String, Option<usize>) {
    let limit = super::ecma::MAX_REPEAT as i128;
    let min = range.and_then(|r| r.min).filter(|m| *m > 0 && *m <= limit);
    let max_bytes = range.and_then(|r| r.max).map_or(MAX_BLOB_BYTES, |m| {
        m.clamp(0, MAX_BLOB_BYTES as i128) as usize
    });
    let max = Some(max_bytes as i128).filter(|m| *m <= limit);
    let times = match (min, max) {
        (None, None) => "*".to_string(),
        (Some(a), None) => format!("{{{a},}}"),
        (a, Some(b)) => format!("{{{},{b}}}", a.unwrap_or(0)),
    };
    (
        super::padded_pattern(&format!("(0x)?([0-9a-fA-F]{{2}}){times}")),
        max.is_none().then_some(2 * max_bytes),
    )
}

/// A length against a range tag's bounds.
pub fn check_len(len: usize, range: Option<&RangeTag>, unit: &str) -> Result<(), Fault> {
    if let Some(r) = range {
        if let Some(min) = r.min {
            if (len as i128) < min {
                return Err(Fault::new(
                    Code::Range,
                    format!("{len} {unit}; at least {min}"),
                ));
            }
        }
        if let Some(max) = r.max {
            if (len as i128) > max {
                return Err(Fault::new(
                    Code::Range,
                    format!("{len} {unit}; at most {max}"),
                ));
            }
        }
    }
    Ok(())
}

/// Lower-case hex of `bytes`, written through a table (`hex::encode` builds the text one `char`
/// at a time, several times slower in a canister, and previews write the whole argument).
pub fn to_hex(bytes: impl AsRef<[u8]>) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let bytes = bytes.as_ref();
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 0x0f)]);
    }
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hex() {
        assert_eq!(parse_hex("0x0aFF", None).unwrap(), vec![0x0a, 0xff]);
        assert_eq!(parse_hex("", None).unwrap(), Vec::<u8>::new());
        assert_eq!(parse_hex("abc", None).unwrap_err().code, Code::Syntax);
        let r = RangeTag {
            min: None,
            max: Some(1),
        };
        assert_eq!(parse_hex("aabb", Some(&r)).unwrap_err().code, Code::Range);
    }
}
