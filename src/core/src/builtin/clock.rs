//! `current_time`: the canister's clock in an IANA zone of the time-zone database compiled into
//! the wasm (`jiff` with its bundled tzdb: no OS or JS access). An unknown zone is an error,
//! never a fallback: a confidently wrong time is what this exists to stop.

use crate::builtin::input::{issue, Input};
use crate::issue::{Code, Issue};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use serde_json::{json, Value};

pub const FORMATS: [&str; 4] = ["iso", "human", "date", "time"];

/// The longest zone name read (the database's longest is 32).
pub const MAX_ZONE: usize = 64;

/// The shape of an IANA zone name (tzdb's Theory: ASCII letters, digits, `_ - +`, parts between
/// `/`), as the schema's `pattern`: a name with spaces around it is refused by both.
pub const ZONE_PATTERN: &str = "^[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*$";

/// The zone of the compiled-in database that `name` names (case aside), or why not.
pub fn zone(name: &str) -> Result<TimeZone, String> {
    // The shape (`ZONE_PATTERN`) is told apart from a name of that shape the database lacks:
    // the schema states the one, only the database knows the other.
    let shaped = name.split('/').all(|part| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'))
    });
    if !shaped || name.chars().count() > MAX_ZONE {
        return Err(format!(
            "{name:?} is not an IANA time zone (a name such as Europe/London or Asia/Kolkata)"
        ));
    }
    jiff::tz::db().get(name).map_err(|_| {
        format!("{name:?} is not an IANA time zone of the compiled-in database (a name such as Europe/London, America/New_York or UTC); there is no fallback zone")
    })
}

/// The answer for one instant, zone and format.
pub fn answer(now_ns: u64, zone_name: &str, format: &str) -> Result<Value, String> {
    let tz = zone(zone_name)?;
    let ts = Timestamp::from_nanosecond(now_ns as i128).map_err(|e| {
        format!("the canister's clock reads {now_ns} ns, outside the calendar: {e}")
    })?;
    let unix_seconds = ts.as_second();
    if format == "iso" {
        let utc = ts.to_zoned(TimeZone::UTC);
        return Ok(json!({
            "time": utc.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            "format": "iso",
            "timezone": "UTC",
            "weekday": utc.strftime("%A").to_string(),
            "utc_offset": "+00:00",
            "unix_seconds": unix_seconds,
        }));
    }
    let name = tz.iana_name().unwrap_or(zone_name).to_string();
    let local: Zoned = ts.to_zoned(tz);
    let time = match format {
        "human" => local.strftime("%A, %-d %B %Y, %H:%M %Z").to_string(),
        "date" => local.strftime("%Y-%m-%d").to_string(),
        _ => local.strftime("%H:%M:%S").to_string(),
    };
    Ok(json!({
        "time": time,
        "format": format,
        "timezone": name,
        "weekday": local.strftime("%A").to_string(),
        "utc_offset": local.strftime("%:z").to_string(),
        "unix_seconds": unix_seconds,
    }))
}

pub(crate) fn run(input: &Value, now_ns: u64, default_zone: &str) -> Result<Value, Vec<Issue>> {
    let input = Input::new(input, "current_time", &["timezone", "format"])?;
    let mut issues = Vec::new();
    let zone_name = match input.text("timezone", MAX_ZONE) {
        Ok(z) => z,
        Err(i) => {
            issues.push(i);
            None
        }
    };
    let format = match input.choice("format", &FORMATS) {
        Ok(f) => f.unwrap_or("iso"),
        Err(i) => {
            issues.push(i);
            "iso"
        }
    };
    if let Some(z) = zone_name {
        if let Err(m) = zone(z) {
            issues.push(issue("timezone", Code::Format, m));
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    let zone_name = zone_name.unwrap_or(default_zone);
    answer(now_ns, zone_name, format).map_err(|m| {
        vec![issue(
            if zone_name == default_zone {
                ""
            } else {
                "timezone"
            },
            Code::Input,
            m,
        )]
    })
}

pub(crate) fn decl_parts(default_zone: &str) -> (String, Value, Value) {
    let description = format!(
        "The current date and time from the canister's clock: you have no clock, and today is not \
         your training cutoff. timezone is an IANA zone such as Europe/London or Asia/Kolkata \
         (default {default_zone}); an unknown zone is an error. format: iso (RFC 3339 in UTC, \
         the default and right for anything machine-read; the answer is then UTC throughout), \
         human (Tuesday, 1 December 2026, 22:29 GMT), date (YYYY-MM-DD) or time (HH:MM:SS) in \
         the zone. The answer has the zone, weekday, UTC offset and unix seconds."
    );
    let input = json!({
        "type": "object",
        "properties": {
            "timezone": {
                "type": ["string", "null"],
                "maxLength": MAX_ZONE,
                "pattern": ZONE_PATTERN,
                "description": format!("IANA zone such as Europe/London or Asia/Kolkata. Defaults to {default_zone}.")
            },
            "format": {
                "type": ["string", "null"],
                "enum": ["iso", "human", "date", "time", null],
                "description": "iso is unambiguous and the right default for anything machine-read."
            }
        },
        "required": [],
        "additionalProperties": false
    });
    let output = json!({
        "type": "object",
        "properties": {
            "time": { "type": "string" },
            "format": { "type": "string", "enum": FORMATS },
            "timezone": { "type": "string" },
            "weekday": { "type": "string" },
            "utc_offset": { "type": "string" },
            "unix_seconds": { "type": "integer" }
        },
        "required": ["time", "format", "timezone", "weekday", "utc_offset", "unix_seconds"],
        "additionalProperties": false
    });
    (description, input, output)
}
