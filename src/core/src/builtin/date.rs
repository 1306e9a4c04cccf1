//! `date_math`: add, subtract and difference in whole units on the proleptic Gregorian
//! calendar, years 0000 to 9999 (RFC 3339's). Calendar months and years clamp the day to the
//! month's last (a month after 2026-01-31 is 2026-02-28); `difference` counts boundaries
//! crossed in every unit, not elapsed time divided (weeks start on Monday). A date-time is read
//! with its offset and answered in it.

use crate::builtin::input::{issue, Input};
use crate::issue::{Code, Issue};
use serde_json::{json, Value};

pub const OPERATIONS: [&str; 3] = ["add", "subtract", "difference"];
pub const UNITS: [&str; 7] = [
    "seconds", "minutes", "hours", "days", "weeks", "months", "years",
];

/// The largest |amount| taken (any result must also fall in years 0000 to 9999).
pub const MAX_AMOUNT: i64 = 1_000_000_000_000;

/// The longest date text read (`2026-03-31T23:59:59.123456789+05:30` is 35).
pub const MAX_DATE: usize = 64;

/// A calendar date: a day of the proleptic Gregorian calendar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Day {
    pub year: i64,
    pub month: u32,
    pub day: u32,
}

/// A date as given: a date alone, or a date-time with its offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Date(Day),
    DateTime {
        day: Day,
        /// Seconds into the day, 0..86400.
        second: i64,
        nanos: u32,
        /// Seconds east of UTC; `None` for `Z`.
        offset: Option<i32>,
    },
}

/// The shapes `parse` reads, as the schemas' `pattern` (ECMAScript), with the ranges a pattern
/// can state (months 01-12, days 01-31, hours 00-23, minutes and seconds 00-59, offsets to
/// ±23:59): what is left for the reader alone is the calendar (no 2026-02-30).
pub const DATE_PATTERN: &str = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?$";

pub fn leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (Hinnant's days_from_civil).
pub fn day_number(d: Day) -> i64 {
    let y = if d.month <= 2 { d.year - 1 } else { d.year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = d.month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d.day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `n` days after 1970-01-01 (Hinnant's civil_from_days).
pub fn day_of(n: i64) -> Day {
    let z = n + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Day { year, month, day }
}

fn digits(s: &str, what: &str) -> Result<i64, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().map_err(|_| format!("the {what} is not a number"))
    } else {
        Err(format!("the {what} {s:?} is not digits"))
    }
}

const SHAPE: &str = "a date is YYYY-MM-DD (2026-03-31) or an RFC 3339 date-time (2026-03-31T09:30:00Z, 2026-03-31T09:30:00+02:00)";

fn parse_day(s: &str) -> Result<Day, String> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(format!("{s:?} is not a date: {SHAPE}"));
    }
    let year = digits(&s[0..4], "year")?;
    let month = digits(&s[5..7], "month")? as u32;
    let day = digits(&s[8..10], "day")? as u32;
    if !(1..=12).contains(&month) {
        return Err(format!("{s:?} has no month {month} (months are 01 to 12)"));
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err(format!(
            "{s:?} is not a calendar date: {year:04}-{month:02} has {} days",
            days_in_month(year, month)
        ));
    }
    Ok(Day { year, month, day })
}

/// Reads `YYYY-MM-DD` or an RFC 3339 date-time (`T` or `t`, `Z` or `z` or `±HH:MM`, up to nine
/// digits of fraction; no leap second).
pub fn parse(s: &str) -> Result<When, String> {
    if s.len() == 10 {
        return parse_day(s).map(When::Date);
    }
    if !s.is_ascii() || s.len() < 20 || !matches!(s.as_bytes()[10], b'T' | b't') {
        return Err(format!("{s:?} is not a date: {SHAPE}"));
    }
    let day = parse_day(&s[..10])?;
    let rest = &s[11..];
    let b = rest.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return Err(format!("{s:?} has no time HH:MM:SS after the T: {SHAPE}"));
    }
    let (h, m, sec) = (
        digits(&rest[0..2], "hour")?,
        digits(&rest[3..5], "minute")?,
        digits(&rest[6..8], "second")?,
    );
    if h > 23 || m > 59 || sec > 59 {
        return Err(format!(
            "{s:?} has no time {}: hours are 00 to 23, minutes and seconds 00 to 59",
            &rest[0..8]
        ));
    }
    let mut tail = &rest[8..];
    let mut nanos = 0u32;
    if let Some(f) = tail.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || n > 9 {
            return Err(format!("{s:?}: a fraction of a second has 1 to 9 digits"));
        }
        nanos = format!("{:0<9}", &f[..n]).parse().unwrap_or(0);
        tail = &f[n..];
    }
    let offset = match tail {
        "Z" | "z" => None,
        _ => {
            let t = tail.as_bytes();
            if t.len() != 6 || !matches!(t[0], b'+' | b'-') || t[3] != b':' {
                return Err(format!(
                    "{s:?} has no offset: end with Z or ±HH:MM ({SHAPE})"
                ));
            }
            let (oh, om) = (
                digits(&tail[1..3], "offset hour")?,
                digits(&tail[4..6], "offset minute")?,
            );
            if oh > 23 || om > 59 {
                return Err(format!("{s:?} has no offset {tail}"));
            }
            let secs = (oh * 3600 + om * 60) as i32;
            Some(if t[0] == b'-' { -secs } else { secs })
        }
    };
    Ok(When::DateTime {
        day,
        second: h * 3600 + m * 60 + sec,
        nanos,
        offset,
    })
}

fn in_range(day: Day) -> Result<Day, String> {
    if (0..=9999).contains(&day.year) {
        Ok(day)
    } else {
        Err("the result falls outside the years 0000 to 9999".to_string())
    }
}

/// `n` calendar months after `d`, the day clamped to the month's last.
pub fn add_months(d: Day, n: i64) -> Result<Day, String> {
    let total = (d.year * 12 + (d.month as i64 - 1))
        .checked_add(n)
        .ok_or("the result falls outside the years 0000 to 9999")?;
    let year = total.div_euclid(12);
    let month = (total.rem_euclid(12) + 1) as u32;
    in_range(Day {
        year,
        month,
        day: d.day.min(days_in_month(year, month)),
    })
}

fn unit_seconds(unit: &str) -> Option<i64> {
    match unit {
        "seconds" => Some(1),
        "minutes" => Some(60),
        "hours" => Some(3600),
        _ => None,
    }
}

/// `date` moved by `amount` units (negative moves back).
pub fn shift(when: When, unit: &str, amount: i64) -> Result<When, String> {
    let calendar = |day: Day| -> Result<Day, String> {
        match unit {
            "days" => in_range(day_of(day_number(day) + amount)),
            "weeks" => in_range(day_of(day_number(day) + amount * 7)),
            "months" => add_months(day, amount),
            _ => add_months(day, amount * 12),
        }
    };
    match when {
        When::Date(day) => {
            if unit_seconds(unit).is_some() {
                return Err(format!(
                    "{unit} need a time of day: give date as a date-time (2026-03-31T09:00:00Z) to add {unit}"
                ));
            }
            calendar(day).map(When::Date)
        }
        When::DateTime {
            day,
            second,
            nanos,
            offset,
        } => {
            if let Some(per) = unit_seconds(unit) {
                let total = day_number(day) * 86_400 + second + amount * per;
                let day = in_range(day_of(total.div_euclid(86_400)))?;
                return Ok(When::DateTime {
                    day,
                    second: total.rem_euclid(86_400),
                    nanos,
                    offset,
                });
            }
            Ok(When::DateTime {
                day: calendar(day)?,
                second,
                nanos,
                offset,
            })
        }
    }
}

/// The instant in whole seconds since the epoch (the fraction dropped; a date alone is its
/// midnight UTC).
fn instant(w: When) -> i64 {
    match w {
        When::Date(d) => day_number(d) * 86_400,
        When::DateTime {
            day,
            second,
            offset,
            ..
        } => day_number(day) * 86_400 + second - offset.unwrap_or(0) as i64,
    }
}

/// The wall-clock second `w` shows at `offset` (seconds since 1970-01-01T00:00 on that
/// clock; the fraction of a second dropped): a date alone is its midnight.
fn local_second(w: When, offset: Option<i32>) -> i64 {
    match w {
        When::Date(d) => day_number(d) * 86_400,
        When::DateTime { .. } => instant(w) + offset.unwrap_or(0) as i64,
    }
}

/// The number of the week a day falls in, counted from the week of 1970-01-01; weeks start on
/// Monday (ISO 8601). 1970-01-01 was a Thursday, three days after its week's Monday.
pub fn week_number(d: Day) -> i64 {
    (day_number(d) + 3).div_euclid(7)
}

/// Signed count of `unit` boundaries crossed from `from` to `to`, both read on `from`'s clock
/// (its offset; a date alone is its midnight): a boundary is the start of a second, minute,
/// hour, day, week (Monday, ISO 8601), month or year on that clock. So 23:59 to 00:01 is one
/// hour (and one day); 2026-01-31 to 2026-02-01 is one month. The count is the difference of
/// the two positions (`floor(t / unit)`), so swapping two inputs of one offset negates it.
pub fn difference(from: When, to: When, unit: &str) -> i64 {
    let offset = match from {
        When::DateTime { offset, .. } => offset,
        When::Date(_) => None,
    };
    let (s1, s2) = (local_second(from, offset), local_second(to, offset));
    if let Some(per) = unit_seconds(unit) {
        return s2.div_euclid(per) - s1.div_euclid(per);
    }
    let (a, b) = (day_of(s1.div_euclid(86_400)), day_of(s2.div_euclid(86_400)));
    match unit {
        "days" => day_number(b) - day_number(a),
        "weeks" => week_number(b) - week_number(a),
        "months" => (b.year * 12 + b.month as i64) - (a.year * 12 + a.month as i64),
        _ => b.year - a.year,
    }
}

/// Written back in the form it was read.
pub fn render(w: When) -> String {
    match w {
        When::Date(d) => format!("{:04}-{:02}-{:02}", d.year, d.month, d.day),
        When::DateTime {
            day,
            second,
            nanos,
            offset,
        } => {
            let frac = if nanos == 0 {
                String::new()
            } else {
                format!(".{:09}", nanos).trim_end_matches('0').to_string()
            };
            let zone = match offset {
                None => "Z".to_string(),
                Some(o) => {
                    let sign = if o < 0 { '-' } else { '+' };
                    let o = o.unsigned_abs();
                    format!("{sign}{:02}:{:02}", o / 3600, o % 3600 / 60)
                }
            };
            format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{frac}{zone}",
                day.year,
                day.month,
                day.day,
                second / 3600,
                second % 3600 / 60,
                second % 60
            )
        }
    }
}

fn read_amount(input: &Input<'_>) -> Result<Option<i64>, Issue> {
    let Some(v) = input.value("amount") else {
        return Ok(None);
    };
    // A whole number past the bound (1e20, 2^64 − 1) is out of range, not a fraction.
    let n = if let Some(i) = v.as_i64() {
        Some(i)
    } else if let Some(f) = v.as_f64() {
        (f.fract() == 0.0).then(|| {
            if f.abs() <= MAX_AMOUNT as f64 {
                f as i64
            } else {
                i64::MAX
            }
        })
    } else {
        return Err(issue(
            "amount",
            Code::Type,
            format!(
                "amount is a whole number, not {}",
                crate::builtin::input::kind(v)
            ),
        ));
    };
    match n {
        Some(n) if n.abs() <= MAX_AMOUNT => Ok(Some(n)),
        Some(_) => Err(issue(
            "amount",
            Code::Range,
            format!("amount is at most {MAX_AMOUNT} either way"),
        )),
        None => Err(issue(
            "amount",
            Code::Precision,
            format!("amount is a whole number of units, not {v}"),
        )),
    }
}

/// The value read, or its issue kept with the others.
fn keep<T>(issues: &mut Vec<Issue>, r: Result<T, Issue>) -> Option<T> {
    r.map_err(|i| issues.push(i)).ok()
}

pub(crate) fn run(input: &Value) -> Result<Value, Vec<Issue>> {
    let input = Input::new(
        input,
        "date_math",
        &["operation", "date", "unit", "amount", "to"],
    )?;
    let mut issues = Vec::new();
    let operation = keep(&mut issues, input.required_choice("operation", &OPERATIONS));
    let unit = keep(&mut issues, input.required_choice("unit", &UNITS));
    let date = keep(&mut issues, input.required_text("date", MAX_DATE));
    let date = date.and_then(|d| {
        keep(
            &mut issues,
            parse(d).map_err(|m| issue("date", Code::Format, m)),
        )
    });
    let amount = keep(&mut issues, read_amount(&input)).flatten();
    let to = keep(&mut issues, input.text("to", MAX_DATE)).flatten();
    let to = to.and_then(|t| {
        keep(
            &mut issues,
            parse(t).map_err(|m| issue("to", Code::Format, m)),
        )
    });
    let to_given = input.value("to").is_some();
    let amount_given = input.value("amount").is_some();
    match operation {
        Some("difference") => {
            if amount_given {
                issues.push(issue(
                    "amount",
                    Code::UnknownParam,
                    "amount is for add and subtract; difference takes to",
                ));
            }
            if !to_given {
                issues.push(issue(
                    "to",
                    Code::Missing,
                    "difference needs to: the other date",
                ));
            }
        }
        Some(op) => {
            if to_given {
                issues.push(issue(
                    "to",
                    Code::UnknownParam,
                    format!("to is for difference; {op} takes amount"),
                ));
            }
            if !amount_given {
                issues.push(issue(
                    "amount",
                    Code::Missing,
                    format!("{op} needs amount: a whole number of units"),
                ));
            }
        }
        None => {}
    }
    if let (Some(a), Some(b)) = (date, to) {
        if matches!(a, When::Date(_)) != matches!(b, When::Date(_)) {
            issues.push(issue(
                "to",
                Code::Format,
                "date and to are both dates or both date-times",
            ));
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    let (Some(op), Some(unit), Some(date)) = (operation, unit, date) else {
        return Err(vec![issue(
            "",
            Code::Input,
            "date_math's input is incomplete",
        )]);
    };
    if op == "difference" {
        let Some(to) = to else {
            return Err(vec![issue(
                "to",
                Code::Missing,
                "difference needs to: the other date",
            )]);
        };
        return Ok(json!({ "result": difference(date, to, unit), "unit": unit }));
    }
    let amount = amount.unwrap_or(0);
    let amount = if op == "subtract" { -amount } else { amount };
    shift(date, unit, amount)
        .map(|w| json!({ "result": render(w) }))
        .map_err(|m| {
            vec![issue(
                if m.contains("time of day") {
                    "unit"
                } else {
                    "amount"
                },
                Code::Range,
                m,
            )]
        })
}

pub(crate) fn decl_parts() -> (String, Value, Value) {
    let description = "Date arithmetic, because a model drops leap years and month ends. add or \
        subtract a whole amount of seconds, minutes, hours, days, weeks, months or years, or the \
        difference from date to to. date is ISO (2026-03-31) or an RFC 3339 date-time \
        (2026-03-31T09:30:00+02:00); the answer keeps its form and offset. Months and years clamp \
        to the month's last day (2026-01-31 + 1 month = 2026-02-28). difference counts boundaries \
        crossed in every unit, on date's clock: 23:59 to 00:01 is 1 hour, 2026-01-31 to \
        2026-02-01 is 1 month, a Sunday to the next Monday is 1 week (weeks start on Monday)."
        .to_string();
    let input = json!({
        "type": "object",
        "properties": {
            "operation": { "type": "string", "enum": OPERATIONS },
            "date": { "type": "string", "minLength": 10, "maxLength": MAX_DATE, "pattern": DATE_PATTERN, "description": "ISO, as in 2026-03-31, or an RFC 3339 date-time." },
            "unit": { "type": "string", "enum": UNITS },
            "amount": { "type": ["integer", "null"], "minimum": -MAX_AMOUNT, "maximum": MAX_AMOUNT, "description": "For add and subtract: a whole number." },
            "to": { "type": ["string", "null"], "minLength": 10, "maxLength": MAX_DATE, "pattern": DATE_PATTERN, "description": "The other date, for difference (the same form as date)." }
        },
        "required": ["operation", "date", "unit"],
        "additionalProperties": false
    });
    let output = json!({
        "type": "object",
        "properties": {
            "result": { "type": ["string", "integer"], "description": "The date for add and subtract; the signed count for difference." },
            "unit": { "type": "string", "enum": UNITS }
        },
        "required": ["result"],
        "additionalProperties": false
    });
    (description, input, output)
}
