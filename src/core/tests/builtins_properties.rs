//! The builtins against independent oracles: integer arithmetic in i128 for `calculate`, and
//! `jiff`'s civil calendar for `date_math`.

use jiff::civil::{Date, DateTime};
use jiff::tz::Offset;
use jiff::{RoundMode, Unit};
use proptest::prelude::*;
use serde_json::json;
use tool_host_core::builtin::date::{day_number, day_of, Day};
use tool_host_core::builtin::{run_pure, Builtin};

fn calc(expression: &str) -> String {
    run_pure(
        Builtin::Calculate,
        &json!({ "expression": expression }),
        0,
        "UTC",
    )
    .unwrap_or_else(|e| panic!("{expression}: {e:?}"))["result"]
        .as_str()
        .unwrap()
        .to_string()
}

fn iso(d: Date) -> String {
    d.strftime("%Y-%m-%d").to_string()
}

fn any_date() -> impl Strategy<Value = Date> {
    (1i16..=9998, 1i8..=12, 1i8..=31).prop_map(|(y, m, d)| {
        let last = Date::new(y, m, 1).unwrap().days_in_month();
        Date::new(y, m, d.min(last)).unwrap()
    })
}

/// A date-time with its offset in minutes (`Z` for none), and its RFC 3339 text.
fn any_date_time() -> impl Strategy<Value = (DateTime, Option<i32>, String)> {
    (
        any_date(),
        0i8..24,
        0i8..60,
        0i8..60,
        prop_oneof![Just(0i32), 0i32..1_000_000_000],
        prop_oneof![
            Just(None::<i32>),
            (-(23 * 60 + 59)..=(23 * 60 + 59i32)).prop_map(Some)
        ],
    )
        .prop_map(|(d, h, m, s, ns, offset)| {
            let dt = d.at(h, m, s, ns);
            let zone = match offset {
                None => "Z".to_string(),
                Some(o) => {
                    let sign = if o < 0 { '-' } else { '+' };
                    format!("{sign}{:02}:{:02}", o.abs() / 60, o.abs() % 60)
                }
            };
            let text = format!("{}.{ns:09}{zone}", dt.strftime("%Y-%m-%dT%H:%M:%S"));
            (dt, offset, text)
        })
}

/// `b`, written at offset `b_offset`, as the clock at `a_offset` shows it.
fn on_clock_of(a_offset: Option<i32>, b: DateTime, b_offset: Option<i32>) -> DateTime {
    let off = |o: Option<i32>| Offset::from_seconds(o.unwrap_or(0) * 60).unwrap();
    off(a_offset).to_datetime(off(b_offset).to_timestamp(b).unwrap())
}

/// The boundaries of `unit` crossed from `a` to `b` by jiff: both floored to the unit, then
/// the whole units between them.
fn boundaries(a: DateTime, b: DateTime, unit: Unit) -> i64 {
    let floor = |d: DateTime| {
        d.round(
            jiff::civil::DateTimeRound::new()
                .smallest(unit)
                .mode(RoundMode::Floor),
        )
        .unwrap()
    };
    let span = floor(a).until((unit, floor(b))).unwrap();
    match unit {
        Unit::Second => span.get_seconds(),
        Unit::Minute => span.get_minutes(),
        Unit::Hour => span.get_hours() as i64,
        _ => span.get_days() as i64,
    }
}

/// The Monday that starts `d`'s week (ISO 8601).
fn monday_of(d: Date) -> Date {
    d.checked_sub(jiff::Span::new().days(d.weekday().to_monday_zero_offset() as i64))
        .unwrap()
}

proptest! {
    #[test]
    fn integer_arithmetic_agrees_with_i128(a in -10_000i64..10_000, b in -10_000i64..10_000, c in 1i64..1000, e in 0u32..6) {
        let expected = a as i128 + (b as i128) * (c as i128).pow(e) - (a as i128 % c as i128);
        let got = calc(&format!("{a} + ({b}) * {c}^{e} - ({a}) % {c}"));
        prop_assert_eq!(got, expected.to_string());
    }

    #[test]
    fn a_quotient_times_its_divisor_is_the_dividend(a in -1_000_000i64..1_000_000, b in 1i64..10_000) {
        prop_assert_eq!(calc(&format!("({a}) / {b} * {b}")), a.to_string());
    }

    #[test]
    fn day_numbers_agree_with_jiff(date in any_date()) {
        let day = Day { year: date.year() as i64, month: date.month() as u32, day: date.day() as u32 };
        let epoch = Date::new(1970, 1, 1).unwrap();
        let expected = (date - epoch).get_days() as i64;
        prop_assert_eq!(day_number(day), expected);
        prop_assert_eq!(day_of(expected), day);
    }

    #[test]
    fn adding_months_clamps_as_jiff_does(date in any_date(), months in -120i64..120) {
        let expected = date.checked_add(jiff::Span::new().months(months));
        let got = run_pure(
            Builtin::DateMath,
            &json!({ "operation": "add", "date": iso(date), "unit": "months", "amount": months }),
            0,
            "UTC",
        );
        match expected {
            Ok(d) if (0..=9999).contains(&d.year()) => {
                let answer = got.unwrap();
                prop_assert_eq!(answer["result"].as_str().unwrap(), iso(d));
            }
            _ => prop_assert!(got.is_err()),
        }
    }

    #[test]
    fn difference_in_days_agrees_with_jiff(a in any_date(), b in any_date()) {
        let got = run_pure(
            Builtin::DateMath,
            &json!({ "operation": "difference", "date": iso(a), "to": iso(b), "unit": "days" }),
            0,
            "UTC",
        )
        .unwrap();
        prop_assert_eq!(got["result"].as_i64().unwrap(), (b - a).get_days() as i64);
    }

    /// Every unit from seconds to days counts boundaries crossed on `date`'s clock: jiff puts
    /// `to` on that clock, floors both to the unit and counts whole units between.
    #[test]
    fn sub_day_and_day_differences_count_boundaries_as_jiff_does(
        (a, a_offset, a_text) in any_date_time(),
        (b, b_offset, b_text) in any_date_time(),
        unit in prop_oneof![Just(Unit::Second), Just(Unit::Minute), Just(Unit::Hour), Just(Unit::Day)],
    ) {
        let name = match unit {
            Unit::Second => "seconds",
            Unit::Minute => "minutes",
            Unit::Hour => "hours",
            _ => "days",
        };
        let got = run_pure(
            Builtin::DateMath,
            &json!({ "operation": "difference", "date": a_text, "to": b_text, "unit": name }),
            0,
            "UTC",
        )
        .unwrap();
        let expected = boundaries(a, on_clock_of(a_offset, b, b_offset), unit);
        prop_assert_eq!(got["result"].as_i64().unwrap(), expected);
    }

    /// Weeks are Mondays crossed: the days between the two weeks' Mondays, over 7.
    #[test]
    fn week_differences_count_mondays_as_jiff_does(a in any_date(), b in any_date()) {
        let got = run_pure(
            Builtin::DateMath,
            &json!({ "operation": "difference", "date": iso(a), "to": iso(b), "unit": "weeks" }),
            0,
            "UTC",
        )
        .unwrap();
        let days = (monday_of(b) - monday_of(a)).get_days() as i64;
        prop_assert_eq!(days % 7, 0);
        prop_assert_eq!(got["result"].as_i64().unwrap(), days / 7);
    }
}
