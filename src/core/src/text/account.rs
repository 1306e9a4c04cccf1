//! ICRC-1 accounts in the standard's textual encoding:
//! `<owner>` for the default subaccount, else `<owner>-<checksum>.<subaccount hex without leading zeros>`,
//! where the checksum is the CRC32 of owner bytes and subaccount, in lowercase base32 without padding.

use super::principal::parse_principal;
use crate::issue::{Code, Fault};
use candid::Principal;

pub type Subaccount = [u8; 32];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Account {
    pub owner: Principal,
    /// `None` and all zeros are the same (default) account.
    pub subaccount: Option<Subaccount>,
}

impl Account {
    pub fn effective_subaccount(&self) -> Subaccount {
        self.subaccount.unwrap_or([0; 32])
    }
    pub fn is_default(&self) -> bool {
        self.effective_subaccount() == [0; 32]
    }
}

fn checksum(owner: &Principal, sub: &Subaccount) -> String {
    let mut h = crc32fast::Hasher::new();
    h.update(owner.as_slice());
    h.update(sub);
    data_encoding::BASE32_NOPAD
        .encode(&h.finalize().to_be_bytes())
        .to_ascii_lowercase()
}

/// The canonical text of an account.
pub fn format_account(a: &Account) -> String {
    if a.is_default() {
        return a.owner.to_text();
    }
    let sub = a.effective_subaccount();
    let hex = crate::text::bytes::to_hex(sub);
    let trimmed = hex.trim_start_matches('0');
    format!(
        "{}-{}.{}",
        a.owner.to_text(),
        checksum(&a.owner, &sub),
        trimmed
    )
}

/// Reads the textual encoding; refuses non-canonical spellings (leading zeros, an explicit
/// default subaccount) so that one account has one text.
pub fn parse_account(text: &str) -> Result<Account, Fault> {
    read_account(text).map(|(a, _)| a)
}

/// [`parse_account`] with the account's canonical text ([`format_account`]'s): for an account
/// written as its owner alone, the principal's text as read (see
/// [`super::principal::parse_principal_canonical`]), without encoding it again.
pub fn read_account(text: &str) -> Result<(Account, String), Fault> {
    let (a, plain) = read_account_text(text)?;
    let canon = match plain {
        Some(owner_text) => owner_text,
        None => format_account(&a),
    };
    Ok((a, canon))
}

/// The account, and the owner's canonical text when the account was written as its owner alone.
fn read_account_text(text: &str) -> Result<(Account, Option<String>), Fault> {
    let t = super::trim_spaces(text);
    // Counted before trimming, as the schema's `maxLength` counts.
    if text.chars().count() > MAX_ACCOUNT_CHARS {
        return Err(Fault::new(
            Code::Account,
            format!("an account text has at most {MAX_ACCOUNT_CHARS} characters"),
        ));
    }
    let Some((left, sub_hex)) = t.rsplit_once('.') else {
        let (owner, canon) = super::principal::parse_principal_canonical(t)?;
        return Ok((
            Account {
                owner,
                subaccount: None,
            },
            Some(canon),
        ));
    };
    let Some((owner_text, check)) = left.rsplit_once('-') else {
        return Err(Fault::new(
            Code::Account,
            format!("'{t}' is not an account: expected <principal>-<checksum>.<subaccount>"),
        ));
    };
    let owner = parse_principal(owner_text)?;
    let sub_hex = sub_hex.to_ascii_lowercase();
    if sub_hex.is_empty() || sub_hex.len() > 64 || !sub_hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Fault::new(
            Code::Account,
            format!("'{t}': the subaccount must be 1 to 64 hex digits"),
        ));
    }
    if sub_hex.starts_with('0') {
        return Err(Fault::new(
            Code::Account,
            format!("'{t}': the subaccount is written without leading zeros"),
        ));
    }
    let mut sub = [0u8; 32];
    let padded = format!("{sub_hex:0>64}");
    hex::decode_to_slice(&padded, &mut sub)
        .map_err(|_| Fault::new(Code::Account, format!("'{t}': the subaccount is not hex")))?;
    let expected = checksum(&owner, &sub);
    if check.to_ascii_lowercase() != expected {
        return Err(Fault::new(
            Code::Account,
            format!("'{t}': the account checksum '{check}' does not match (expected '{expected}')"),
        ));
    }
    Ok((
        Account {
            owner,
            subaccount: Some(sub),
        },
        None,
    ))
}

/// Reads a subaccount given alone: 1 to 64 hex digits, zero-padded on the left to 32 bytes.
pub fn parse_subaccount(text: &str) -> Result<Subaccount, Fault> {
    let t = super::trim_spaces(text);
    if t.is_empty() || t.len() > 64 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Fault::new(
            Code::Syntax,
            format!(
                "'{}' is not a subaccount: write 1 to 64 hex digits",
                t.chars().take(70).collect::<String>()
            ),
        ));
    }
    let mut sub = [0u8; 32];
    let padded = format!("{:0>64}", t.to_ascii_lowercase());
    hex::decode_to_slice(&padded, &mut sub)
        .map_err(|_| Fault::new(Code::Syntax, format!("'{t}' is not hex")))?;
    Ok(sub)
}

/// Characters of an account text at most, spaces around it included.
pub const MAX_ACCOUNT_CHARS: usize = 150;

/// 1 to 64 hex digits in either case, spaces around them allowed (the reader trims them).
pub const SUBACCOUNT_PATTERN: &str = "^[\\t\\n\\f\\r ]*(?:[0-9a-fA-F]{1,64})[\\t\\n\\f\\r ]*$";
/// A principal alone, or with a checksum and a subaccount without leading zeros; either case
/// (the reader ignores case throughout), spaces around it allowed. The checksums are the
/// reader's (`E_ACCOUNT`, `E_PRINCIPAL`).
pub const ACCOUNT_PATTERN: &str =
    "^[\\t\\n\\f\\r ]*(?:[a-zA-Z2-7]{5}(-[a-zA-Z2-7]{5}){0,9}-[a-zA-Z2-7]{1,5}(-[a-zA-Z2-7]{7}\\.[1-9a-fA-F][0-9a-fA-F]{0,63})?)[\\t\\n\\f\\r ]*$";

#[cfg(test)]
mod tests {
    use super::*;

    const OWNER: &str = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae";

    #[test]
    fn the_standards_examples() {
        // From the ICRC-1 standard's textual encoding section.
        let a = parse_account(OWNER).unwrap();
        assert_eq!(a.subaccount, None);
        let with_sub = format!(
            "{OWNER}-dfxgiyy.102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"
        );
        let b = parse_account(&with_sub).unwrap();
        assert_eq!(format_account(&b), with_sub);
        let one = format!("{OWNER}-6cc627i.1");
        let c = parse_account(&one).unwrap();
        let mut s = [0u8; 32];
        s[31] = 1;
        assert_eq!(c.subaccount, Some(s));
        assert_eq!(format_account(&c), one);
    }

    #[test]
    fn refuses_bad_checksum_and_non_canonical() {
        let bad = format!("{OWNER}-aaaaaaa.1");
        assert_eq!(parse_account(&bad).unwrap_err().code, Code::Account);
        let zeros = format!("{OWNER}-6cc627i.01");
        assert_eq!(parse_account(&zeros).unwrap_err().code, Code::Account);
        let no_check = format!("{OWNER}.1");
        assert!(parse_account(&no_check).is_err());
        let owner_typo = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6af";
        assert_eq!(parse_account(owner_typo).unwrap_err().code, Code::Principal);
    }

    #[test]
    fn default_subaccount_is_the_principal_alone() {
        let p = parse_principal_for_test();
        let a = Account {
            owner: p,
            subaccount: Some([0; 32]),
        };
        assert_eq!(format_account(&a), OWNER);
    }

    fn parse_principal_for_test() -> Principal {
        Principal::from_text(OWNER).unwrap()
    }

    #[test]
    fn subaccounts_alone() {
        let s = parse_subaccount("01").unwrap();
        assert_eq!(s[31], 1);
        assert!(parse_subaccount("").is_err());
        assert!(parse_subaccount(&"0".repeat(65)).is_err());
        assert!(parse_subaccount("xyz").is_err());
        assert_eq!(parse_subaccount(&"ab".repeat(32)).unwrap(), [0xab; 32]);
    }
}
