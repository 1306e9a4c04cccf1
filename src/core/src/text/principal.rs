//! Principals in their textual form: trimmed, case ignored, checksum checked, canonical out.

use crate::issue::{Code, Fault};
use candid::types::principal::PrincipalError;
use candid::Principal;

/// The longest principal text: 29 bytes and a 4-byte checksum in base32, grouped by dashes.
pub const MAX_PRINCIPAL_CHARS: usize = 63;

pub fn parse_principal(text: &str) -> Result<Principal, Fault> {
    parse_principal_canonical(text).map(|(p, _)| p)
}

/// [`parse_principal`] with the principal's canonical text: the text read, trimmed and lowered,
/// which `Principal::from_text` accepts only when it is the principal's own text (it prints the
/// principal and compares), so that no second encoding is needed to show or key it.
pub fn parse_principal_canonical(text: &str) -> Result<(Principal, String), Fault> {
    let t = super::trim_spaces(text);
    if t.is_empty() {
        return Err(Fault::new(Code::Principal, "a principal may not be empty"));
    }
    // Counted before trimming, as the schema's `maxLength` counts.
    if text.chars().count() > MAX_PRINCIPAL_CHARS {
        return Err(Fault::new(
            Code::Principal,
            format!(
                "'{}…' is longer than any principal ({MAX_PRINCIPAL_CHARS} characters)",
                t.chars().take(20).collect::<String>()
            ),
        ));
    }
    let lower = t.to_ascii_lowercase();
    let p = Principal::from_text(&lower).map_err(|e| {
        let why = match e {
            PrincipalError::CheckSequenceNotMatch() => {
                "its checksum does not match: a character is wrong or missing".to_string()
            }
            PrincipalError::AbnormalGrouped(p) => {
                format!("the dashes are misplaced; did you mean {p}?")
            }
            PrincipalError::InvalidBase32()
                if t.chars()
                    .all(|c| c == '-' || c.is_ascii_digit() || c.is_ascii_alphabetic())
                    && !t.chars().any(|c| matches!(c, '0' | '1' | '8' | '9')) =>
            {
                "a character is wrong or missing (it does not decode)".to_string()
            }
            PrincipalError::InvalidBase32() => "it has characters outside a-z and 2-7".to_string(),
            PrincipalError::TextTooShort() => "it is too short".to_string(),
            PrincipalError::TextTooLong() | PrincipalError::BytesTooLong() => {
                "it is too long".to_string()
            }
        };
        Fault::new(Code::Principal, format!("'{t}' is not a principal: {why}"))
    })?;
    Ok((p, lower))
}

/// A principal's text: groups of five base32 characters (either case, as the reader ignores
/// case) and a last group of one to five, 7 to 55 characters; spaces around it allowed. The
/// CRC32 inside and the exact base32 length are the reader's (`E_PRINCIPAL`): no pattern can
/// check a checksum.
pub const PRINCIPAL_PATTERN: &str =
    "^[\\t\\n\\f\\r ]*(?:[a-zA-Z2-7]{5}(-[a-zA-Z2-7]{5}){0,9}-[a-zA-Z2-7]{1,5})[\\t\\n\\f\\r ]*$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_canonical_trimmed_case_ignored() {
        let p = parse_principal("  RYJL3-TYAAA-AAAAA-AAABA-CAI ").unwrap();
        assert_eq!(p.to_text(), "ryjl3-tyaaa-aaaaa-aaaba-cai");
        assert_eq!(
            parse_principal("aaaaa-aa").unwrap(),
            Principal::management_canister()
        );
        assert_eq!(
            parse_principal("2vxsx-fae").unwrap(),
            Principal::anonymous()
        );
    }

    #[test]
    fn refuses_a_wrong_checksum() {
        let f = parse_principal("ryjl3-tyaaa-aaaaa-aaabb-cai").unwrap_err();
        assert_eq!(f.code, Code::Principal);
        assert!(f.message.contains("checksum"), "{}", f.message);
    }

    #[test]
    fn refuses_garbage() {
        for t in [
            "",
            "   ",
            "hello",
            "ryjl3tyaaaaaaaaaaabacai",
            "ryjl3-tyaaa-aaaaa-aaaba-ca1",
            &"a".repeat(70),
        ] {
            assert_eq!(parse_principal(t).unwrap_err().code, Code::Principal, "{t}");
        }
    }
}
