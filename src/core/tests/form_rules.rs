//! Resolved forms: a malformed form is refused whole, with every problem (JSON path + reason).

mod common;
use common::*;
use serde_json::json;
use tool_host_core::form::{limits, parse_form, RelPath};

fn paths(v: serde_json::Value) -> Vec<String> {
    problems(v).into_iter().map(|p| p.path).collect()
}

#[test]
fn the_header_is_checked() {
    let p = paths(json!({ "format": "other", "format_version": 1, "methods": {} }));
    assert_eq!(p, vec!["$.format", "$.format_version"]);
    assert_eq!(paths(json!([])), vec!["$"]);
}

#[test]
fn an_evm_form_is_refused() {
    let mut v = form_json(json!({}), json!({}));
    v["chain"] = json!("evm");
    let ps = problems(v);
    assert_eq!(ps[0].path, "$.chain");
    assert!(ps[0].reason.contains("not supported"));
}

#[test]
fn every_problem_is_listed_with_its_path() {
    let v = form_json(
        json!({
            "a": { "mode": "sometimes", "args": [], "results": [] },
            "b": { "mode": "query", "args": [{ "type": "Nat" }], "results": [{ "type": "nat", "colour": "red" }] },
            "c": { "mode": "update", "args": [], "results": [], "outcome": { "Ok": "great" } }
        }),
        json!({}),
    );
    let p = paths(v);
    assert_eq!(
        p,
        vec![
            "$.methods.a.mode",
            "$.methods.b.results[0].colour",
            "$.methods.c.outcome.Ok",
            "$.methods.b.args[0].type"
        ]
    );
}

#[test]
fn tags_must_fit_their_types() {
    let v = form_json(
        json!({ "m": { "mode": "query", "args": [{ "type": "record", "fields": [
            { "name": "a", "type": "text", "value": { "kind": "token_amount", "decimals": 8, "symbol": "X" } },
            { "name": "b", "type": "nat", "text": { "max_len": 3 } },
            { "name": "c", "type": "principal", "value": { "kind": "account" } },
            { "name": "d", "type": "bool", "range": { "min": 1 } },
            { "name": "e", "type": "nat", "intent": "no" },
            { "name": "f", "type": "nat", "named": "nowhere" }
        ] }], "results": [] } }),
        json!({}),
    );
    let f = |i: usize, tag: &str| format!("$.methods.m.args[0].fields[{i}]{tag}");
    assert_eq!(
        paths(v),
        vec![
            f(0, ".value"),
            f(1, ".text"),
            f(2, ".value"),
            f(3, ".range"),
            f(4, ""),
            f(5, ".named")
        ]
    );
}

#[test]
fn tag_values_are_checked() {
    let v = form_json(
        json!({ "m": { "mode": "query", "args": [{ "type": "record", "fields": [
            { "name": "a", "type": "nat", "value": { "kind": "token_amount", "decimals": 99, "symbol": { "from": "update:x" } } },
            { "name": "b", "type": "nat", "value": { "kind": "colour" } },
            { "name": "c", "type": "nat64", "value": { "kind": "timestamp", "unit": "hours" } },
            { "name": "d", "type": "nat", "range": { "min": 5, "max": 1 } },
            { "name": "e", "type": "opt", "inner": { "type": "nat" }, "auto": { "from": "somewhere" } }
        ] }], "results": [] } }),
        json!({}),
    );
    let p = paths(v);
    assert!(
        p.contains(&"$.methods.m.args[0].fields[0].value.decimals".to_string()),
        "{p:?}"
    );
    assert!(
        p.contains(&"$.methods.m.args[0].fields[0].value.symbol.from".to_string()),
        "{p:?}"
    );
    assert!(
        p.contains(&"$.methods.m.args[0].fields[1].value.kind".to_string()),
        "{p:?}"
    );
    assert!(
        p.contains(&"$.methods.m.args[0].fields[2].value.unit".to_string()),
        "{p:?}"
    );
    assert!(
        p.contains(&"$.methods.m.args[0].fields[3].range".to_string()),
        "{p:?}"
    );
    assert!(
        p.contains(&"$.methods.m.args[0].fields[4].auto.from".to_string()),
        "{p:?}"
    );
}

#[test]
fn duplicate_labels_and_same_hash_are_refused() {
    let v = form_json(
        json!({ "m": { "mode": "query", "args": [{ "type": "record", "fields": [{ "name": "a", "type": "nat" }, { "name": "a", "type": "text" }] }], "results": [] } }),
        json!({}),
    );
    assert!(problems(v)[0].reason.contains("same Candid hash"));
}

#[test]
fn name_sets_are_checked_against_their_method() {
    let mut v = form_json(
        json!({ "l": { "mode": "update", "args": [], "results": [] } }),
        json!({}),
    );
    v["names"] = json!({ "s": { "method": "l", "list": "(0)", "name": "n", "value": "v" }, "t": { "method": "missing", "list": "(0)", "name": "n", "value": "v" } });
    let p = paths(v);
    assert_eq!(p, vec!["$.names.s.method", "$.names.t.method"]);
}

#[test]
fn relpaths_three_spellings_are_one_key() {
    let a = RelPath::parse("(0).Ok").unwrap();
    assert_eq!(a, RelPath::parse(".Ok").unwrap());
    assert_eq!(a, RelPath::parse("Ok").unwrap());
    assert_eq!(RelPath::parse("(1)").unwrap().index, 1);
    for bad in ["", "(", "(x).Ok", "Ok..Err", "(0)Ok", "a b"] {
        assert!(RelPath::parse(bad).is_err(), "{bad}");
    }
    let v = form_json(
        json!({ "m": { "mode": "update", "args": [], "results": [], "outcome": { "Ok": "success", "(0).Ok": "fail" } } }),
        json!({}),
    );
    assert!(problems(v)[0].reason.contains("same place"));
}

#[test]
fn size_bounds_refuse_the_whole_form() {
    let big = vec![b' '; limits::MAX_FORM_BYTES + 1];
    let ps = parse_form(&big).unwrap_err();
    assert!(ps[0].reason.contains("over the limit"));
    let mut methods = serde_json::Map::new();
    for i in 0..=limits::MAX_METHODS {
        methods.insert(
            format!("m{i}"),
            json!({ "mode": "query", "args": [], "results": [] }),
        );
    }
    let ps = problems(form_json(serde_json::Value::Object(methods), json!({})));
    assert!(ps[0].reason.contains("methods, over the limit"));
    let mut deep = json!({ "type": "nat" });
    for _ in 0..=limits::MAX_TYPE_DEPTH {
        deep = json!({ "type": "opt", "inner": deep });
    }
    let ps = problems(form_json(
        json!({ "m": { "mode": "query", "args": [deep], "results": [] } }),
        json!({}),
    ));
    assert!(
        ps.iter().any(|p| p.reason.contains("nest deeper")),
        "{ps:?}"
    );
}

#[test]
fn not_json_is_a_problem_not_a_panic() {
    let ps = parse_form(b"{\"format\": ").unwrap_err();
    assert_eq!(ps[0].path, "$");
    assert!(ps[0].reason.starts_with("not JSON"));
}

#[test]
fn the_icrc_packs_are_valid() {
    for (name, json) in tool_host_core::packs::PACKS {
        assert!(parse_form(json.as_bytes()).is_ok(), "{name}");
    }
}
