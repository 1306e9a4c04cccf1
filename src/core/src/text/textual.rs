//! Text inputs: taken as given, within a length, a pattern and a format.

use crate::form::{RangeTag, TextFormat, TextTag};
use crate::issue::{Code, Fault};
use regex_lite::Regex;

/// Code points of a text input without a `max_len` or range.
pub const DEFAULT_MAX_TEXT: u32 = 1024;

pub fn check_text(
    s: &str,
    tag: Option<&TextTag>,
    range: Option<&RangeTag>,
    pattern: Option<&Regex>,
) -> Result<(), Fault> {
    let n = s.chars().count();
    let max_len = tag.and_then(|t| t.max_len);
    let limit = match (max_len, range.and_then(|r| r.max)) {
        (Some(m), _) => m as usize,
        (None, Some(_)) => usize::MAX,
        (None, None) => DEFAULT_MAX_TEXT as usize,
    };
    if n > limit {
        return Err(Fault::new(
            Code::TooLarge,
            format!("{n} characters; at most {limit}"),
        ));
    }
    super::bytes::check_len(n, range, "characters")?;
    if let Some(re) = pattern {
        if !re.is_match(s) {
            return Err(Fault::new(
                Code::Pattern,
                format!(
                    "the text does not match the pattern {}",
                    tag.and_then(|t| t.pattern.as_deref())
                        .unwrap_or(re.as_str())
                ),
            ));
        }
    }
    match tag.and_then(|t| t.format) {
        Some(TextFormat::Url) => check_url(s),
        Some(TextFormat::Email) => check_email(s),
        None => Ok(()),
    }
}

/// An absolute http or https URL with a host and no spaces or control characters.
pub fn check_url(s: &str) -> Result<(), Fault> {
    let bad = |why: &str| {
        Err(Fault::new(
            Code::Format,
            format!("not an http or https URL: {why}"),
        ))
    };
    let lower = s.to_ascii_lowercase();
    let rest = if let Some(r) = lower.strip_prefix("https://") {
        r
    } else if let Some(r) = lower.strip_prefix("http://") {
        r
    } else {
        return bad("it must start with http:// or https://");
    };
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("it contains spaces or control characters");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = if host_port.starts_with('[') {
        match host_port.find(']') {
            Some(i) => &host_port[..=i],
            None => return bad("an IPv6 host needs ']'"),
        }
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.is_empty() {
        return bad("it has no host");
    }
    if let Some(port) = host_port
        .strip_prefix(host)
        .and_then(|p| p.strip_prefix(':'))
    {
        if port.is_empty()
            || port.len() > 5
            || !port.bytes().all(|b| b.is_ascii_digit())
            || port.parse::<u32>().map_or(true, |p| p > 65535)
        {
            return bad("the port is not a number from 0 to 65535");
        }
    }
    if !host.starts_with('[') {
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_alphanumeric() || c == '-')
        };
        if host.len() > 253 || !host.trim_end_matches('.').split('.').all(label_ok) {
            return bad("the host is not a domain name or address");
        }
    }
    Ok(())
}

/// `local@domain` with a dotted domain; no spaces.
pub fn check_email(s: &str) -> Result<(), Fault> {
    let bad = |why: &str| {
        Err(Fault::new(
            Code::Format,
            format!("not an email address: {why}"),
        ))
    };
    let Some((local, domain)) = s.rsplit_once('@') else {
        return bad("it has no '@'");
    };
    if local.is_empty() || local.len() > 64 {
        return bad("the part before '@' has 1 to 64 characters");
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) || local.contains('@') {
        return bad("it contains spaces, control characters or a second '@'");
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2
        || labels.iter().any(|l| {
            l.is_empty()
                || l.starts_with('-')
                || l.ends_with('-')
                || !l.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
    {
        return bad("the domain is not a dotted name such as example.com");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_in_code_points() {
        let tag = TextTag {
            max_len: Some(3),
            ..Default::default()
        };
        assert!(check_text("äöü", Some(&tag), None, None).is_ok());
        assert_eq!(
            check_text("äöüß", Some(&tag), None, None).unwrap_err().code,
            Code::TooLarge
        );
        assert_eq!(
            check_text(&"x".repeat(1025), None, None, None)
                .unwrap_err()
                .code,
            Code::TooLarge
        );
        let r = RangeTag {
            min: Some(2),
            max: Some(4),
        };
        assert_eq!(
            check_text("a", None, Some(&r), None).unwrap_err().code,
            Code::Range
        );
        assert!(check_text("abcd", None, Some(&r), None).is_ok());
    }

    #[test]
    fn urls() {
        for ok in [
            "https://example.com",
            "http://a.b/c?d#e",
            "https://[::1]:8080/x",
            "https://user@host.io:443",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "ftp://x.y",
            "https://",
            "https://exa mple.com",
            "example.com",
            "https://a.com:99999",
            "javascript:alert(1)",
        ] {
            assert_eq!(check_url(bad).unwrap_err().code, Code::Format, "{bad}");
        }
    }

    #[test]
    fn emails() {
        assert!(check_email("a.b@example.org").is_ok());
        for bad in ["a@b", "@x.org", "a b@x.org", "a@x..org", "ab.org"] {
            assert_eq!(check_email(bad).unwrap_err().code, Code::Format, "{bad}");
        }
    }

    #[test]
    fn pattern_is_unanchored() {
        let re = Regex::new("[0-9]{3}").unwrap();
        assert!(check_text("ab123cd", None, None, Some(&re)).is_ok());
        assert_eq!(
            check_text("ab12", None, None, Some(&re)).unwrap_err().code,
            Code::Pattern
        );
    }
}
