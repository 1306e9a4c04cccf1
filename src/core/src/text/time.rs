//! Points and spans of time: RFC 3339 (`2026-12-01T10:00:00Z`), relative to now (`in 1h30m`,
//! `+90s`), and durations (`1h30m`). The clock is injected; values are nanoseconds.

use crate::issue::{Code, Fault};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// A timestamp input: absolute, or relative to the clock given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeInput {
    Absolute(i128),
    /// Nanoseconds after now; resolved again whenever the intent is stamped again.
    Relative(u128),
}

pub fn parse_timestamp(text: &str) -> Result<TimeInput, Fault> {
    let t = text.trim();
    if t.len() > 64 {
        return Err(Fault::new(
            Code::TooLarge,
            "a time has at most 64 characters",
        ));
    }
    let rel = t
        .strip_prefix("in ")
        .or_else(|| t.strip_prefix('+'))
        .map(str::trim);
    if let Some(d) = rel {
        return parse_duration(d).map(TimeInput::Relative);
    }
    if t == "now" {
        return Ok(TimeInput::Relative(0));
    }
    let dt = OffsetDateTime::parse(t, &Rfc3339).map_err(|e| {
        Fault::new(
            Code::Syntax,
            format!("'{t}' is not a time: {e}; write RFC 3339 (2026-12-01T10:00:00Z) or a relative time (in 1h30m)"),
        )
    })?;
    Ok(TimeInput::Absolute(dt.unix_timestamp_nanos()))
}

/// Resolves against the clock (ns since the Unix epoch).
pub fn resolve_timestamp(input: &TimeInput, now_ns: u64) -> i128 {
    match input {
        TimeInput::Absolute(ns) => *ns,
        TimeInput::Relative(after) => now_ns as i128 + (*after).min(i128::MAX as u128 / 2) as i128,
    }
}

const UNITS: [(&str, u128); 8] = [
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("d", 86_400_000_000_000),
    ("w", 604_800_000_000_000),
];

/// `1h30m`, `90s`, `2d`: whole numbers each with a unit (ns, us, ms, s, m, h, d, w).
pub fn parse_duration(text: &str) -> Result<u128, Fault> {
    let t = text.trim();
    let bad = |why: &str| {
        Fault::new(
            Code::Syntax,
            format!("'{t}' is not a duration: {why}; write it as 1h30m, 90s or 2d"),
        )
    };
    if t.is_empty() {
        return Err(bad("it is empty"));
    }
    if t.len() > 64 {
        return Err(Fault::new(
            Code::TooLarge,
            "a duration has at most 64 characters",
        ));
    }
    let mut total: u128 = 0;
    let mut rest = t;
    while !rest.is_empty() {
        let digits_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits_end == 0 {
            return Err(bad("each part starts with a number"));
        }
        let n: u128 = rest[..digits_end]
            .parse()
            .map_err(|_| bad("a number is too large"))?;
        rest = &rest[digits_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        let Some((_, ns)) = UNITS.iter().find(|(u, _)| *u == unit) else {
            return Err(bad(if unit.is_empty() {
                "a number needs a unit"
            } else {
                "unknown unit"
            }));
        };
        total = n
            .checked_mul(*ns)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| Fault::new(Code::Range, format!("'{t}' is too long a time")))?;
        rest = &rest[unit_end..];
    }
    Ok(total)
}

/// RFC 3339 in UTC, with as many fraction digits as needed.
pub fn format_timestamp(ns: i128) -> String {
    match OffsetDateTime::from_unix_timestamp_nanos(ns) {
        Ok(dt) => dt.format(&Rfc3339).unwrap_or_else(|_| format!("{ns} ns")),
        Err(_) => format!("{ns} ns since 1970"),
    }
}

/// `1h30m` from nanoseconds, largest units first.
pub fn format_duration(mut ns: u128) -> String {
    if ns == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    for (unit, size) in [
        ("d", 86_400_000_000_000u128),
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ] {
        if ns >= size {
            out.push_str(&format!("{}{unit}", ns / size));
            ns %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_times() {
        let t = parse_timestamp("2026-12-01T10:00:00Z").unwrap();
        assert_eq!(t, TimeInput::Absolute(1_796_119_200_000_000_000));
        let t = parse_timestamp("2026-12-01T11:00:00.5+01:00").unwrap();
        assert_eq!(t, TimeInput::Absolute(1_796_119_200_500_000_000));
        assert_eq!(
            format_timestamp(1_796_119_200_500_000_000),
            "2026-12-01T10:00:00.5Z"
        );
        assert_eq!(parse_timestamp("yesterday").unwrap_err().code, Code::Syntax);
        assert_eq!(
            parse_timestamp("2026-13-01T00:00:00Z").unwrap_err().code,
            Code::Syntax
        );
    }

    #[test]
    fn relative_times() {
        assert_eq!(
            parse_timestamp("in 1h30m").unwrap(),
            TimeInput::Relative(5_400_000_000_000)
        );
        assert_eq!(
            parse_timestamp("+90s").unwrap(),
            TimeInput::Relative(90_000_000_000)
        );
        assert_eq!(resolve_timestamp(&TimeInput::Relative(5), 10), 15);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1h30m").unwrap(), 5_400_000_000_000);
        assert_eq!(parse_duration("2d").unwrap(), 172_800_000_000_000);
        assert_eq!(parse_duration("250ms").unwrap(), 250_000_000);
        for bad in ["", "h", "10", "1.5h", "1 h", "3y"] {
            assert_eq!(parse_duration(bad).unwrap_err().code, Code::Syntax, "{bad}");
        }
        assert_eq!(format_duration(5_400_000_000_000), "1h30m");
    }
}
