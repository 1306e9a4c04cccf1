//! `current_time` and `date_math`: IANA zones from the compiled-in database, calendar
//! arithmetic that clamps, and differences that count boundaries crossed.

use serde_json::{json, Value};
use tool_host_core::builtin::{check_zone, run_pure, Builtin};
use tool_host_core::issue::{Code, Issue};

/// 2026-12-01T22:29:00Z, a Tuesday.
const DEC_1: u64 = 1_796_164_140 * 1_000_000_000;
/// 2026-07-15T12:00:00Z and 2026-01-15T12:00:00Z.
const JUL_15: u64 = 1_784_116_800 * 1_000_000_000;
const JAN_15: u64 = 1_768_478_400 * 1_000_000_000;

fn now(input: Value, now_ns: u64) -> Value {
    run_pure(Builtin::CurrentTime, &input, now_ns, "Europe/London")
        .unwrap_or_else(|e| panic!("{input}: {e:?}"))
}

fn date_math(input: Value) -> Result<Value, Vec<Issue>> {
    run_pure(Builtin::DateMath, &input, 0, "UTC")
}

fn shifted(date: &str, operation: &str, unit: &str, amount: i64) -> String {
    date_math(json!({ "operation": operation, "date": date, "unit": unit, "amount": amount }))
        .unwrap_or_else(|e| panic!("{date} {operation} {amount} {unit}: {e:?}"))["result"]
        .as_str()
        .unwrap()
        .to_string()
}

fn between(date: &str, to: &str, unit: &str) -> i64 {
    date_math(json!({ "operation": "difference", "date": date, "to": to, "unit": unit }))
        .unwrap_or_else(|e| panic!("{date} to {to} in {unit}: {e:?}"))["result"]
        .as_i64()
        .unwrap()
}

#[test]
fn an_iso_answer_is_utc_throughout() {
    let answer = now(
        json!({ "timezone": "Asia/Kolkata", "format": "iso" }),
        DEC_1,
    );
    assert_eq!(
        answer,
        json!({
            "time": "2026-12-01T22:29:00Z",
            "format": "iso",
            "timezone": "UTC",
            "weekday": "Tuesday",
            "utc_offset": "+00:00",
            "unix_seconds": 1_796_164_140
        })
    );
    assert_eq!(now(json!({}), DEC_1)["time"], json!("2026-12-01T22:29:00Z"));
}

#[test]
fn human_date_and_time_formats_are_in_the_zone() {
    let human = now(json!({ "format": "human" }), DEC_1);
    assert_eq!(human["time"], json!("Tuesday, 1 December 2026, 22:29 GMT"));
    assert_eq!(human["timezone"], json!("Europe/London"));
    let kolkata = now(
        json!({ "timezone": "Asia/Kolkata", "format": "date" }),
        DEC_1,
    );
    assert_eq!(kolkata["time"], json!("2026-12-02"));
    assert_eq!(kolkata["weekday"], json!("Wednesday"));
    assert_eq!(kolkata["utc_offset"], json!("+05:30"));
    let time = now(
        json!({ "timezone": "Asia/Kolkata", "format": "time" }),
        DEC_1,
    );
    assert_eq!(time["time"], json!("03:59:00"));
    assert_eq!(time["unix_seconds"], json!(1_796_164_140));
}

#[test]
fn new_york_follows_daylight_saving() {
    let july = now(
        json!({ "timezone": "America/New_York", "format": "human" }),
        JUL_15,
    );
    assert_eq!(july["utc_offset"], json!("-04:00"));
    assert_eq!(july["time"], json!("Wednesday, 15 July 2026, 08:00 EDT"));
    let january = now(
        json!({ "timezone": "America/New_York", "format": "time" }),
        JAN_15,
    );
    assert_eq!(january["utc_offset"], json!("-05:00"));
    assert_eq!(january["time"], json!("07:00:00"));
}

#[test]
fn a_wrong_iana_zone_is_an_error_never_a_fallback() {
    for zone in ["Mars/Olympus_Mons", "Europe/Londn", "GMT+25", "", "local"] {
        let issues = run_pure(
            Builtin::CurrentTime,
            &json!({ "timezone": zone, "format": "human" }),
            DEC_1,
            "UTC",
        )
        .expect_err(zone);
        assert_eq!(issues[0].path, "$input.timezone", "{zone}");
        assert!(issues[0].message.contains("IANA"), "{zone}");
        assert!(check_zone(zone).is_err(), "{zone}");
    }
    assert!(check_zone("America/New_York").is_ok());
    assert!(check_zone("UTC").is_ok());
}

#[test]
fn a_zone_in_another_case_answers_with_the_databases_spelling() {
    let answer = now(
        json!({ "timezone": "america/new_york", "format": "date" }),
        JUL_15,
    );
    assert_eq!(answer["timezone"], json!("America/New_York"));
}

#[test]
fn current_time_refuses_an_unknown_format_and_key_and_takes_null_as_absent() {
    let bad = run_pure(
        Builtin::CurrentTime,
        &json!({ "format": "rfc2822" }),
        DEC_1,
        "UTC",
    )
    .expect_err("format");
    assert_eq!(bad[0].code, Code::Format);
    let key = run_pure(
        Builtin::CurrentTime,
        &json!({ "zone": "UTC" }),
        DEC_1,
        "UTC",
    )
    .expect_err("key");
    assert_eq!(key[0].code, Code::UnknownParam);
    let nulls = now(json!({ "timezone": null, "format": null }), DEC_1);
    assert_eq!(nulls["format"], json!("iso"));
}

#[test]
fn a_month_after_31_january_clamps_to_the_end_of_february() {
    assert_eq!(shifted("2026-01-31", "add", "months", 1), "2026-02-28");
    assert_eq!(shifted("2024-01-31", "add", "months", 1), "2024-02-29");
    assert_eq!(shifted("2026-03-31", "subtract", "months", 1), "2026-02-28");
    assert_eq!(shifted("2026-01-31", "add", "months", 13), "2027-02-28");
    assert_eq!(
        shifted("2026-05-15", "subtract", "months", 17),
        "2024-12-15"
    );
}

#[test]
fn a_year_after_a_leap_day_is_28_february() {
    assert_eq!(shifted("2024-02-29", "add", "years", 1), "2025-02-28");
    assert_eq!(shifted("2024-02-29", "add", "years", 4), "2028-02-29");
    assert_eq!(shifted("2024-02-28", "add", "days", 1), "2024-02-29");
    assert_eq!(shifted("2100-02-28", "add", "days", 1), "2100-03-01");
    assert_eq!(shifted("2000-02-28", "add", "days", 1), "2000-02-29");
}

#[test]
fn days_weeks_and_times_move_exactly() {
    assert_eq!(shifted("2026-12-25", "add", "weeks", 2), "2027-01-08");
    assert_eq!(shifted("2026-03-01", "subtract", "days", 1), "2026-02-28");
    assert_eq!(
        shifted("2026-03-31T23:30:00+02:00", "add", "hours", 1),
        "2026-04-01T00:30:00+02:00"
    );
    assert_eq!(
        shifted("2026-01-31T09:15:30.25Z", "add", "months", 1),
        "2026-02-28T09:15:30.25Z"
    );
    assert_eq!(
        shifted("2026-01-01T00:00:00Z", "subtract", "seconds", 1),
        "2025-12-31T23:59:59Z"
    );
}

#[test]
fn difference_counts_boundaries_crossed() {
    assert_eq!(between("2026-01-31", "2026-02-01", "months"), 1);
    assert_eq!(between("2026-02-01", "2026-01-31", "months"), -1);
    assert_eq!(between("2026-12-31", "2027-01-01", "years"), 1);
    assert_eq!(between("2026-01-01", "2026-12-31", "years"), 0);
    assert_eq!(between("2024-01-01", "2025-01-01", "days"), 366);
    // Thursday 1 January to Wednesday 14 January crosses Monday 5 and Monday 12.
    assert_eq!(between("2026-01-01", "2026-01-14", "weeks"), 2);
    assert_eq!(between("2026-01-01", "2026-01-02", "hours"), 24);
    assert_eq!(
        between("2026-03-31T23:00:00Z", "2026-04-01T00:59:59Z", "hours"),
        1
    );
    assert_eq!(
        between(
            "2026-03-31T23:00:00Z",
            "2026-04-01T01:00:00+02:00",
            "minutes"
        ),
        0
    );
    assert_eq!(
        between("2026-03-31T23:00:00Z", "2026-04-01T00:00:00Z", "days"),
        1
    );
}

/// Two minutes across midnight cross one hour boundary (and one day), not zero hours.
#[test]
fn hours_count_hour_boundaries_crossed() {
    assert_eq!(
        between("2026-03-31T23:59:00Z", "2026-04-01T00:01:00Z", "hours"),
        1
    );
    assert_eq!(
        between("2026-04-01T00:01:00Z", "2026-03-31T23:59:00Z", "hours"),
        -1
    );
    assert_eq!(
        between("2026-03-31T23:59:00Z", "2026-04-01T00:01:00Z", "days"),
        1
    );
    assert_eq!(
        between("2026-03-31T23:00:00Z", "2026-03-31T23:59:59Z", "hours"),
        0
    );
    // On date's clock: at +05:30 an hour starts at :30 UTC.
    assert_eq!(
        between("2026-03-31T10:40:00+05:30", "2026-03-31T05:55:00Z", "hours"),
        1
    );
    assert_eq!(
        between("2026-03-31T05:10:00Z", "2026-03-31T05:55:00Z", "hours"),
        0
    );
}

#[test]
fn minutes_and_seconds_count_their_boundaries_crossed() {
    assert_eq!(
        between("2026-03-31T09:30:59Z", "2026-03-31T09:31:00Z", "minutes"),
        1
    );
    assert_eq!(
        between("2026-03-31T09:31:00Z", "2026-03-31T09:30:59Z", "minutes"),
        -1
    );
    assert_eq!(
        between(
            "2026-03-31T09:30:00Z",
            "2026-03-31T09:30:59.999Z",
            "minutes"
        ),
        0
    );
    // Half a second apart, across a second boundary: 1; a whole second less a nanosecond
    // within one second: 0.
    assert_eq!(
        between(
            "2026-03-31T09:30:00.75Z",
            "2026-03-31T09:30:01.25Z",
            "seconds"
        ),
        1
    );
    assert_eq!(
        between(
            "2026-03-31T09:30:01.25Z",
            "2026-03-31T09:30:00.75Z",
            "seconds"
        ),
        -1
    );
    assert_eq!(
        between(
            "2026-03-31T09:30:00Z",
            "2026-03-31T09:30:00.999999999Z",
            "seconds"
        ),
        0
    );
}

/// Weeks start on Monday (ISO 8601): Sunday to the next Monday is one week, Monday to Sunday
/// of the same week none.
#[test]
fn weeks_count_mondays_crossed() {
    // 2026-03-29 is a Sunday, 2026-03-30 a Monday.
    assert_eq!(between("2026-03-29", "2026-03-30", "weeks"), 1);
    assert_eq!(between("2026-03-30", "2026-03-29", "weeks"), -1);
    assert_eq!(between("2026-03-30", "2026-04-05", "weeks"), 0);
    assert_eq!(
        between("2026-03-29T23:59:00Z", "2026-03-30T00:00:00Z", "weeks"),
        1
    );
    // At -05:00, 2026-03-30T02:00Z is still Sunday.
    assert_eq!(
        between("2026-03-29T12:00:00-05:00", "2026-03-30T02:00:00Z", "weeks"),
        0
    );
}

#[test]
fn date_math_refuses_what_it_cannot_read() {
    let cases = [
        (
            json!({ "operation": "add", "date": "2026-02-30", "unit": "days", "amount": 1 }),
            "date",
            Code::Format,
        ),
        (
            json!({ "operation": "add", "date": "31/01/2026", "unit": "days", "amount": 1 }),
            "date",
            Code::Format,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31", "unit": "days" }),
            "amount",
            Code::Missing,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31", "unit": "days", "amount": 1.5 }),
            "amount",
            Code::Precision,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31", "unit": "days", "amount": "3" }),
            "amount",
            Code::Type,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31", "unit": "days", "amount": 1, "to": "2026-02-01" }),
            "to",
            Code::UnknownParam,
        ),
        (
            json!({ "operation": "difference", "date": "2026-01-31", "unit": "days" }),
            "to",
            Code::Missing,
        ),
        (
            json!({ "operation": "difference", "date": "2026-01-31", "unit": "days", "to": "2026-02-01", "amount": 2 }),
            "amount",
            Code::UnknownParam,
        ),
        (
            json!({ "operation": "difference", "date": "2026-01-31", "unit": "days", "to": "2026-02-01T00:00:00Z" }),
            "to",
            Code::Format,
        ),
        (
            json!({ "operation": "multiply", "date": "2026-01-31", "unit": "days", "amount": 1 }),
            "operation",
            Code::Format,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31", "unit": "fortnights", "amount": 1 }),
            "unit",
            Code::Format,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31", "unit": "hours", "amount": 1 }),
            "unit",
            Code::Range,
        ),
        (
            json!({ "operation": "add", "date": "9999-12-31", "unit": "days", "amount": 1 }),
            "amount",
            Code::Range,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31", "unit": "days", "amount": 10_000_000_000_000i64 }),
            "amount",
            Code::Range,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31T25:00:00Z", "unit": "days", "amount": 1 }),
            "date",
            Code::Format,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31T10:00:00", "unit": "days", "amount": 1 }),
            "date",
            Code::Format,
        ),
        (
            json!({ "operation": "add", "date": "2026-01-31", "unit": "days", "amount": 1, "by": 2 }),
            "by",
            Code::UnknownParam,
        ),
    ];
    for (input, param, code) in cases {
        let issues = date_math(input.clone()).expect_err(&input.to_string());
        assert!(
            issues.iter().any(|i| i.param == param && i.code == code),
            "{input}: {issues:?}"
        );
    }
}

#[test]
fn null_for_an_optional_date_math_input_is_absent() {
    let answer = date_math(json!({
        "operation": "add", "date": "2026-01-31", "unit": "months", "amount": 1, "to": null
    }))
    .expect("null to");
    assert_eq!(answer, json!({ "result": "2026-02-28" }));
    let answer = date_math(json!({
        "operation": "difference", "date": "2026-01-31", "unit": "months", "to": "2026-02-01", "amount": null
    }))
    .expect("null amount");
    assert_eq!(answer, json!({ "result": 1, "unit": "months" }));
}
