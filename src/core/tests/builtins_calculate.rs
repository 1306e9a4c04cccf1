//! `calculate`: parsed not evaluated, exact where the answer is rational, 30 digits otherwise.

use serde_json::{json, Value};
use tool_host_core::builtin::calculate::{evaluate, MAX_EXPRESSION};
use tool_host_core::builtin::{run_pure, Builtin};
use tool_host_core::issue::Code;

fn calc(expression: &str) -> Value {
    run_pure(
        Builtin::Calculate,
        &json!({ "expression": expression }),
        0,
        "UTC",
    )
    .unwrap_or_else(|e| panic!("{expression}: {e:?}"))
}

fn result(expression: &str) -> String {
    calc(expression)["result"].as_str().unwrap().to_string()
}

fn refusal(expression: &str) -> (Code, usize, String) {
    let e = evaluate(expression).expect_err(expression);
    (e.code, e.position, e.message)
}

#[test]
fn the_references_example_is_349_exactly() {
    assert_eq!(
        calc("(1250 * 0.2) + 99"),
        json!({ "result": "349", "exact": true })
    );
    assert_eq!(calc("sqrt(144)"), json!({ "result": "12", "exact": true }));
}

#[test]
fn decimals_are_exact_rationals() {
    assert_eq!(calc("0.1 + 0.2"), json!({ "result": "0.3", "exact": true }));
    assert_eq!(result("0.1 + 0.2 - 0.3"), "0");
    assert_eq!(result("1_000_000 * 3"), "3000000");
    assert_eq!(result("1e3 + 2.5E-1"), "1000.25");
    assert_eq!(result("7 / 8"), "0.875");
}

#[test]
fn whole_powers_are_exact_and_negative_exponents_give_reciprocals() {
    assert_eq!(
        calc("2^100"),
        json!({ "result": "1267650600228229401496703205376", "exact": true })
    );
    assert_eq!(result("2^-2"), "0.25");
    assert_eq!(result("(2/3)^2 * 9"), "4");
    assert_eq!(result("0^0"), "1");
}

#[test]
fn a_fraction_with_no_finite_decimal_gives_thirty_digits_and_the_fraction() {
    assert_eq!(
        calc("1/3"),
        json!({
            "result": "0.333333333333333333333333333333",
            "exact": false,
            "fraction": "1/3",
            "significant_digits": 30
        })
    );
    assert_eq!(result("2/3"), "0.666666666666666666666666666667");
    assert_eq!(result("-2/3"), "-0.666666666666666666666666666667");
    assert_eq!(calc("1/3 * 3"), json!({ "result": "1", "exact": true }));
}

#[test]
fn irrational_functions_match_known_digits() {
    let known = [
        ("sqrt(2)", "1.41421356237309504880168872421"),
        ("sqrt(3)", "1.73205080756887729352744634151"),
        ("2^0.5", "1.41421356237309504880168872421"),
        ("10^0.5", "3.16227766016837933199889354443"),
        ("ln(2)", "0.693147180559945309417232121458"),
        ("ln(10)", "2.30258509299404568401799145468"),
        ("log(2)", "0.301029995663981195213738894724"),
        ("ln(0.5)", "-0.693147180559945309417232121458"),
        ("sqrt(2)^2", "2"),
        ("2^(1/3)", "1.25992104989487316476721060728"),
        ("log(3)", "0.477121254719662437295027903255"),
        ("ln(10^100)", "230.258509299404568401799145468"),
    ];
    for (expression, digits) in known {
        let answer = calc(expression);
        assert_eq!(answer["result"], json!(digits), "{expression}");
        assert_eq!(answer["exact"], json!(false), "{expression}");
        assert_eq!(answer["significant_digits"], json!(30), "{expression}");
    }
}

#[test]
fn rational_answers_of_irrational_functions_are_exact() {
    for (expression, value) in [
        ("sqrt(144)", "12"),
        ("sqrt(0.25)", "0.5"),
        ("sqrt(9/16)", "0.75"),
        ("log(1000)", "3"),
        ("log(0.01)", "-2"),
        ("ln(1)", "0"),
        ("8^(1/3)", "2"),
        ("4^1.5", "8"),
        ("floor(sqrt(2))", "1"),
    ] {
        assert_eq!(
            calc(expression),
            json!({ "result": value, "exact": true }),
            "{expression}"
        );
    }
}

#[test]
fn round_is_half_away_from_zero() {
    assert_eq!(result("round(2.5)"), "3");
    assert_eq!(result("round(-2.5)"), "-3");
    assert_eq!(result("round(2.4999)"), "2");
    assert_eq!(result("floor(-2.5)"), "-3");
    assert_eq!(result("ceil(-2.5)"), "-2");
    assert_eq!(result("abs(-7/2)"), "3.5");
}

#[test]
fn precedence_is_documented_and_kept() {
    assert_eq!(result("-2^2"), "-4");
    assert_eq!(result("(-2)^2"), "4");
    assert_eq!(result("2^3^2"), "512");
    assert_eq!(result("2^-1"), "0.5");
    assert_eq!(result("1 + 2 * 3"), "7");
    assert_eq!(result("10 - 4 - 3"), "3");
    assert_eq!(result("64 / 4 / 2"), "8");
    assert_eq!(result("2 * 3 % 4"), "2");
    assert_eq!(result("--3"), "3");
}

#[test]
fn remainder_keeps_the_dividends_sign() {
    assert_eq!(result("7 % 3"), "1");
    assert_eq!(result("-7 % 3"), "-1");
    assert_eq!(result("7.5 % 2"), "1.5");
}

#[test]
fn division_and_remainder_by_zero_are_refused() {
    for e in ["1/0", "5 % 0", "1/(2-2)", "0^-1"] {
        let (code, _, message) = refusal(e);
        assert_eq!(code, Code::Range, "{e}");
        assert!(message.contains("zero"), "{e}: {message}");
    }
}

#[test]
fn values_outside_the_reals_are_refused() {
    for e in ["sqrt(-1)", "ln(0)", "log(-5)", "(-8)^0.5"] {
        assert_eq!(refusal(e).0, Code::Range, "{e}");
    }
}

#[test]
fn anything_but_the_grammar_is_refused_with_its_position() {
    let cases = [
        ("2 + x", 5, "not a function"),
        ("pi * 2", 1, "not a function"),
        ("2 ** 3", 4, "expected a number"),
        ("(1 + 2", 7, "never closed"),
        ("1 + 2)", 6, "closes no bracket"),
        ("2(3)", 2, "expected an operator"),
        ("sqrt 4", 1, "in brackets"),
        ("1 +", 4, "ends where"),
        ("process.exit()", 8, "not part of an expression"),
        ("exit()", 1, "not a function"),
        ("1; 2", 2, "not part of an expression"),
        ("1__000", 2, "separates digits"),
        ("1_", 2, "separates digits"),
        (".5", 1, "starts with a digit"),
        ("1.", 2, "decimal point"),
        ("2e", 2, "exponent"),
        ("", 1, "empty"),
    ];
    for (e, position, reason) in cases {
        let (code, at, message) = refusal(e);
        assert_eq!(code, Code::Syntax, "{e}: {message}");
        assert_eq!(at, position, "{e}: {message}");
        assert!(message.contains(reason), "{e}: {message}");
    }
}

#[test]
fn an_expression_over_500_characters_is_refused() {
    let long = "1+".repeat(250) + "1";
    assert!(long.chars().count() > MAX_EXPRESSION);
    let issues = run_pure(Builtin::Calculate, &json!({ "expression": long }), 0, "UTC")
        .expect_err("too long");
    assert_eq!(issues[0].code, Code::TooLarge);
    assert_eq!(issues[0].path, "$input.expression");
    let fits = "1+".repeat(249) + "1";
    assert_eq!(result(&fits), "250");
}

#[test]
fn intermediates_past_the_size_bound_are_refused_not_computed() {
    for e in [
        "2^5000",
        "10^10^10",
        "9^9^9",
        "1e1000 * 1e1000 * 1e1000 * 1e1000 * 1e1000",
        "sqrt(2)^100000000000",
        "2^0.5^-3000",
    ] {
        assert_eq!(refusal(e).0, Code::Range, "{e}");
    }
    assert_eq!(refusal("1e1001").0, Code::Range);
    assert!(result("2^4000").len() > 1200);
    assert_eq!(result("1^100000000000000"), "1");
}

#[test]
fn nesting_past_the_bound_is_refused() {
    let deep = "(".repeat(100) + "1" + &")".repeat(100);
    assert_eq!(refusal(&deep).0, Code::TooLarge);
    let minus = "-".repeat(100) + "1";
    assert_eq!(refusal(&minus).0, Code::TooLarge);
    let fits = "(".repeat(60) + "1" + &")".repeat(60);
    assert_eq!(result(&fits), "1");
}

#[test]
fn large_and_small_inexact_answers_are_scientific() {
    assert_eq!(
        result("sqrt(2) * 10^40"),
        "1.41421356237309504880168872421e+40"
    );
    assert_eq!(
        result("sqrt(2) / 10^30"),
        "1.41421356237309504880168872421e-30"
    );
    assert_eq!(result("sqrt(2) * 1000"), "1414.21356237309504880168872421");
}

#[test]
fn calculate_refuses_unknown_keys_and_a_missing_expression() {
    let unknown = run_pure(
        Builtin::Calculate,
        &json!({ "expression": "1", "precision": 5 }),
        0,
        "UTC",
    )
    .expect_err("unknown key");
    assert_eq!(unknown[0].code, Code::UnknownParam);
    assert_eq!(unknown[0].path, "$input.precision");
    let missing = run_pure(Builtin::Calculate, &json!({ "expression": null }), 0, "UTC")
        .expect_err("null is absent");
    assert_eq!(missing[0].code, Code::Missing);
    let typed =
        run_pure(Builtin::Calculate, &json!({ "expression": 5 }), 0, "UTC").expect_err("a number");
    assert_eq!(typed[0].code, Code::Type);
    let not_object = run_pure(Builtin::Calculate, &json!("1+1"), 0, "UTC").expect_err("text");
    assert_eq!(not_object[0].code, Code::Input);
}
