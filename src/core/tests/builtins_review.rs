//! Findings of an adversarial review of the builtins, each as the rule it checks.

use serde_json::{json, Value};
use tool_host_core::builtin::calculate::{evaluate, SIGNIFICANT_DIGITS};
use tool_host_core::builtin::{run_pure, Builtin};
use tool_host_core::issue::Code;

fn run(builtin: Builtin, input: Value) -> Result<Value, Vec<tool_host_core::issue::Issue>> {
    run_pure(builtin, &input, 1_764_628_140_000_000_000, "UTC")
}

/// sqrt(2) to 60 decimals (OEIS A002193).
const SQRT2: &str = "1.414213562373095048801688724209698078569671875376948073176679";

#[test]
fn a_whole_number_from_a_cancelled_approximation_is_never_called_exact() {
    // sqrt(2) − (its first 50 decimals) is 8.07e-51; times 10^52 it is 80.73, so its floor is
    // 80. The approximation of sqrt(2) is good to about 2^-171, so the difference is known to
    // ±1e-52 at best: the floor cannot be vouched for, and must not come back exact.
    let l50 = &SQRT2[..52];
    for expression in [
        format!("floor((sqrt(2) - {l50}) * 10^52)"),
        format!("ceil((sqrt(2) - {l50}) * 10^52)"),
        format!("round((sqrt(2) - {l50}) * 10^52)"),
    ] {
        match evaluate(&expression) {
            Ok(a) => assert!(!a.exact, "{expression}: {a:?} claimed exact"),
            Err(e) => assert_eq!(e.code, Code::Precision, "{expression}: {e:?}"),
        }
    }
    // Far from the boundary it still is exact.
    let a = evaluate("floor(1e40 * sqrt(2))").unwrap();
    assert_eq!(
        (a.result.as_str(), a.exact),
        ("14142135623730950488016887242096980785696", true)
    );
}

#[test]
fn digits_lost_to_cancellation_are_not_claimed() {
    // Only the digits the error bound vouches for are given, and they are right.
    let l28 = &SQRT2[..30]; // 28 decimals
    let a = evaluate(&format!("sqrt(2) - {l28}")).unwrap();
    let digits = a.significant_digits.unwrap();
    assert!(
        (10..SIGNIFICANT_DIGITS).contains(&digits),
        "{a:?}: after 28 digits cancel, 30 cannot hold"
    );
    // True value: 9.698078569671875376948073176679e-30, rounded to `digits`.
    let truth = "9698078569671875376948073176679";
    let (m, _) = a.result.split_once('e').unwrap();
    let shown: String = m.chars().filter(|c| c.is_ascii_digit()).collect();
    let rounded = {
        let head: u128 = truth[..digits].parse().unwrap();
        let next = truth.as_bytes()[digits] - b'0';
        (head + u128::from(next >= 5)).to_string()
    };
    assert_eq!(
        shown.trim_end_matches('0'),
        rounded.trim_end_matches('0'),
        "{a:?}"
    );
    assert_eq!(
        run(
            Builtin::Calculate,
            json!({ "expression": format!("sqrt(2) - {l28}") })
        )
        .unwrap()["significant_digits"],
        json!(digits)
    );
    // Nothing left: refused (E_PRECISION), not 30 digits of noise.
    for expression in [
        format!("(sqrt(2) - {}) * 10^51", &SQRT2[..52]),
        "sqrt(2) - sqrt(2)".to_string(),
        "ln(sqrt(1 + 1e-100))".to_string(),
        format!("1 / (sqrt(2) - {})", &SQRT2[..52]),
    ] {
        let e = evaluate(&expression).expect_err(&expression);
        assert_eq!(e.code, Code::Precision, "{expression}: {e:?}");
    }
    // One irrational step keeps its 30.
    for expression in [
        "sqrt(2)",
        "ln(1e-1000)",
        "log(3)",
        "2^sqrt(2)",
        "sqrt(2)^1000",
    ] {
        let a = evaluate(expression).unwrap();
        assert_eq!(
            a.significant_digits,
            Some(SIGNIFICANT_DIGITS),
            "{expression}"
        );
    }
}

#[test]
fn one_and_minus_one_to_any_whole_power_are_exact() {
    for (expression, value) in [
        ("1^(10^30)", "1"),
        ("(-1)^(10^30)", "1"),
        ("(-1)^(10^30 + 1)", "-1"),
        ("(-1)^-(10^30 + 1)", "-1"),
    ] {
        let a = evaluate(expression).unwrap_or_else(|e| panic!("{expression}: {e:?}"));
        assert_eq!((a.result.as_str(), a.exact), (value, true), "{expression}");
    }
}

#[test]
fn an_amount_past_the_bound_is_out_of_range_not_a_fraction() {
    for amount in [json!(1e20), json!(u64::MAX), json!(-1e19)] {
        let issues = run(
            Builtin::DateMath,
            json!({ "operation": "add", "date": "2026-01-31", "unit": "days", "amount": amount }),
        )
        .unwrap_err();
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(
            (issues[0].param.as_str(), issues[0].code),
            ("amount", Code::Range),
            "{amount}: {issues:?}"
        );
    }
    let issues = run(
        Builtin::DateMath,
        json!({ "operation": "add", "date": "2026-01-31", "unit": "days", "amount": 1.5 }),
    )
    .unwrap_err();
    assert_eq!(issues[0].code, Code::Precision);
}

fn pattern(builtin: Builtin, key: &str) -> regress::Regex {
    let decl = builtin.decl("UTC");
    let p = decl.input_schema["properties"][key]["pattern"]
        .as_str()
        .unwrap_or_else(|| panic!("{} {key} has no pattern", builtin.name()));
    regress::Regex::with_flags(p, "u").unwrap()
}

#[test]
fn date_shapes_the_reader_refuses_the_schema_refuses_too() {
    let date = pattern(Builtin::DateMath, "date");
    let to = pattern(Builtin::DateMath, "to");
    let shaped = [
        "2026-03-31",
        "0000-01-01",
        "2026-03-31T09:30:00Z",
        "2026-03-31t09:30:00z",
        "2026-03-31T09:30:00.25+02:00",
        "2026-03-31T09:30:00.123456789-05:30",
    ];
    for s in shaped {
        assert!(date.find(s).is_some() && to.find(s).is_some(), "{s}");
        run(
            Builtin::DateMath,
            json!({ "operation": "difference", "date": s, "unit": "days", "to": s }),
        )
        .unwrap_or_else(|e| panic!("{s}: {e:?}"));
    }
    let misshapen = [
        " 2026-03-31",
        "2026-03-31 ",
        "2026-03-31\n",
        "2026-3-31",
        "+02026-03-31",
        "2026-03-31 09:30:00Z",
        "2026-03-31T09:30Z",
        "2026-03-31T09:30:00+0200",
        "2026-03-31T09:30:00.Z",
        "2026-03-31T09:30:00.1234567891Z",
        "2026-03-31T09:30:00",
        "２０２６-03-31",
    ];
    for s in misshapen {
        assert!(date.find(s).is_none(), "the schema takes {s:?}");
        let issues = run(
            Builtin::DateMath,
            json!({ "operation": "add", "date": s, "unit": "days", "amount": 1 }),
        )
        .unwrap_err();
        assert_eq!(issues[0].code, Code::Format, "{s:?}: {issues:?}");
    }
}

#[test]
fn zone_names_with_spaces_are_refused_by_schema_and_reader_alike() {
    let zone = pattern(Builtin::CurrentTime, "timezone");
    // Every name of the compiled-in database fits the schema's pattern.
    let mut names = 0;
    for name in jiff::tz::db().available() {
        let name = name.as_str();
        assert!(zone.find(name).is_some(), "{name}");
        names += 1;
    }
    assert!(names > 300, "{names}");
    for s in [
        " UTC",
        "UTC ",
        "Europe/London\n",
        "Europe /London",
        "",
        "/UTC",
        "UTC/",
    ] {
        assert!(zone.find(s).is_none(), "the schema takes {s:?}");
        let issues = run(Builtin::CurrentTime, json!({ "timezone": s })).unwrap_err();
        assert_eq!(issues[0].code, Code::Format, "{s:?}");
    }
}

#[test]
fn an_identity_that_is_zero_is_never_answered_with_digits() {
    // Each is exactly 0; computed through approximations it must come back exact 0 or refused
    // (E_PRECISION), never as digits of rounding noise with 30 significant digits claimed.
    let xs = [
        "2",
        "3",
        "0.5",
        "1e-30",
        "1e30",
        "7.25",
        "123456789",
        "1.0000001",
        "0.999999",
        "1e-300",
        "1e300",
        "(17/3)",
    ];
    for x in xs {
        for y in xs {
            for e in [
                format!("sqrt({x})*sqrt({x}) - {x}"),
                format!("ln({x}) + ln({y}) - ln({x}*{y})"),
                format!("log({x}) - ln({x})/ln(10)"),
                format!("({x})^(1/3) * ({x})^(2/3) - {x}"),
                format!("sqrt({x})/sqrt({y}) - sqrt({x}/{y})"),
                format!("(sqrt({x}) + sqrt({y}))^2 - {x} - {y} - 2*sqrt({x}*{y})"),
                format!("({x})^({y}/7) / ({x})^({y}/14) - ({x})^({y}/14)"),
            ] {
                match evaluate(&e) {
                    Ok(a) => assert!(a.exact && a.result == "0", "{e}: {a:?}"),
                    // Range: a power too large to take at all.
                    Err(err) => assert!(
                        matches!(err.code, Code::Precision | Code::Range),
                        "{e}: {err:?}"
                    ),
                }
            }
        }
    }
}
