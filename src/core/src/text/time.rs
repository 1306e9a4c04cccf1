//! Points and spans of time: RFC 3339 (`2026-12-01T10:00:00Z`), relative to now (`in 1h30m`,
//! `+90s`), and durations (`1h30m`). The clock is injected; values are nanoseconds.

use crate::form::TimeUnit;
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

/// Characters of a time or duration text at most, spaces around it included.
pub const MAX_TIME_CHARS: usize = 64;

/// A duration's grammar: whole numbers each with a unit.
pub const DURATION_CORE: &str = "([0-9]+(ns|us|ms|s|m|h|d|w))+";

/// RFC 3339 as the reader takes it: `T`, `t` or a space between date and time (the RFC allows
/// the space), at most nine fraction digits (nanoseconds), `Z`/`z` or an offset. Whether the
/// day exists in its month (30 February) and leap seconds are the calendar's (`E_RANGE`).
pub const RFC3339_CORE: &str = "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])";

/// [`RFC3339_CORE`] whole, to tell a malformed time from a day the calendar lacks.
fn rfc3339_shape() -> &'static regex_lite::Regex {
    static SHAPE: std::sync::OnceLock<regex_lite::Regex> = std::sync::OnceLock::new();
    SHAPE.get_or_init(|| {
        regex_lite::Regex::new(&format!("^(?:{RFC3339_CORE})$")).expect("a valid pattern")
    })
}

/// A duration's grammar in units no finer than `unit`: a value kept in whole seconds takes
/// `90s` or `2m`, not `1500ms` (the reader would take that one, but not `1501ms`, and no pattern
/// can tell them apart; the schema asks for the units that are always whole).
fn duration_core(unit: TimeUnit) -> String {
    let units: Vec<&str> = UNITS
        .iter()
        .filter(|(_, ns)| *ns >= unit.nanos())
        .map(|(u, _)| *u)
        .collect();
    format!("([0-9]+({}))+", units.join("|"))
}

/// The schema pattern of a duration input kept in `unit`.
pub fn duration_pattern(unit: TimeUnit) -> String {
    super::padded_pattern(&duration_core(unit))
}

/// The schema pattern of a timestamp input kept in `unit`: RFC 3339 with at most as many
/// fraction digits as the unit keeps (none for seconds), `now`, `in <duration>` or
/// `+<duration>` in units no finer than it.
pub fn timestamp_pattern(unit: TimeUnit) -> String {
    let sp = super::SPACE_CLASS;
    let digits = match unit {
        TimeUnit::Seconds => 0,
        TimeUnit::Milliseconds => 3,
        TimeUnit::Microseconds => 6,
        TimeUnit::Nanoseconds => 9,
    };
    let rfc = RFC3339_CORE.replace(
        "(\\.[0-9]{1,9})?",
        &match digits {
            0 => String::new(),
            d => format!("(\\.[0-9]{{1,{d}}})?"),
        },
    );
    let dur = duration_core(unit);
    super::padded_pattern(&format!("{rfc}|now|in {sp}*{dur}|\\+{sp}*{dur}"))
}

pub fn parse_timestamp(text: &str) -> Result<TimeInput, Fault> {
    let t = super::trim_spaces(text);
    // Counted before trimming, as the schema's `maxLength` counts.
    if text.chars().count() > MAX_TIME_CHARS {
        return Err(Fault::new(
            Code::TooLarge,
            format!("a time has at most {MAX_TIME_CHARS} characters"),
        ));
    }
    let rel = t
        .strip_prefix("in ")
        .or_else(|| t.strip_prefix('+'))
        .map(super::trim_spaces);
    if let Some(d) = rel {
        return parse_duration(d).map(TimeInput::Relative);
    }
    if t == "now" {
        return Ok(TimeInput::Relative(0));
    }
    let syntax = |why: String| {
        Fault::new(
            Code::Syntax,
            format!("'{t}' is not a time: {why}; write RFC 3339 (2026-12-01T10:00:00Z) or a relative time (in 1h30m)"),
        )
    };
    // The time crate takes any byte between date and time; RFC 3339 names `T` (and a space).
    if t.len() > 10
        && t.is_char_boundary(10)
        && t.is_char_boundary(11)
        && !matches!(&t[10..11], "T" | "t" | " ")
    {
        return Err(syntax("the date and the time are joined by T".into()));
    }
    // More than nine fraction digits would be cut to nanoseconds: refused, never cut.
    if let Some(frac) = t.get(20..).filter(|_| t.as_bytes().get(19) == Some(&b'.')) {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n > 9 {
            return Err(Fault::new(
                Code::Precision,
                format!("'{t}' has {n} fraction digits; a time is kept in nanoseconds (9)"),
            ));
        }
    }
    let dt = OffsetDateTime::parse(t, &Rfc3339).map_err(|e| {
        if rfc3339_shape().is_match(t) {
            // Every part is well formed, but the day or the second does not exist.
            Fault::new(
                Code::Range,
                format!("'{t}' is not a moment of the calendar: {e}"),
            )
        } else {
            syntax(e.to_string())
        }
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
    let t = super::trim_spaces(text);
    let bad = |why: &str| {
        Fault::new(
            Code::Syntax,
            format!("'{t}' is not a duration: {why}; write it as 1h30m, 90s or 2d"),
        )
    };
    if t.is_empty() {
        return Err(bad("it is empty"));
    }
    if text.chars().count() > MAX_TIME_CHARS {
        return Err(Fault::new(
            Code::TooLarge,
            format!("a duration has at most {MAX_TIME_CHARS} characters"),
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
            .map_err(|_| Fault::new(Code::Range, format!("'{t}' is too long a time")))?;
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
        // Well formed, but no such day or second: the calendar's range.
        for t in [
            "2026-02-30T00:00:00Z",
            "2026-04-31T10:00:00Z",
            "2026-12-01T10:00:60Z",
        ] {
            assert_eq!(parse_timestamp(t).unwrap_err().code, Code::Range, "{t}");
        }
        assert_eq!(
            parse_timestamp("2026-12-01T10:00:00.1234567891Z")
                .unwrap_err()
                .code,
            Code::Precision
        );
        assert_eq!(
            parse_timestamp("2026-12-01x10:00:00Z").unwrap_err().code,
            Code::Syntax
        );
        assert!(parse_timestamp(" 2026-12-01 10:00:00z ").is_ok());
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
