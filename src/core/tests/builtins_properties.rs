//! The builtins against independent oracles: integer arithmetic in i128 for `calculate`, and
//! `jiff`'s civil calendar for `date_math`.

use jiff::civil::Date;
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
}
