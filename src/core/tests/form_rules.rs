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

/// Every kind of place a problem can be at, each named as it always was: keys of the form's own
/// (plain, and with spaces, quotes or dots, written as `["…"]`), the format's keys, indexes,
/// and the places the whole-form checks name. Paths are written out only when a problem is
/// found (`form::parse::At`); this holds them to the paths and reasons written out eagerly
/// before (the lines were taken from that code), but two mends: a type node's keys list
/// `type` once, and an `auto` default's unknown key is one problem (it was two, each listing
/// other keys).
#[test]
fn every_place_is_named_as_before() {
    let parsed = json!({
        "format": "candid-profile-resolved", "format_version": 0, "name": "",
        "types": {
            "odd name": { "type": "record", "fields": [
                { "name": "a", "type": "nat", "zzz": 1 },
                { "id": 99_999_999_999u64, "type": "nat" },
                { "name": "x", "id": 1, "type": "nat" },
                { "type": "nat" },
                { "name": "", "type": "nat" },
                { "id": "s", "type": "nat" }
            ] },
            "Ok": { "type": "variant", "cases": [
                { "name": "A", "type": "null", "ui": { "hidden": "yes", "what": 1 } }
            ] },
            "svc": { "type": "service", "methods": {
                "odd method": { "args": [{ "type": 5 }], "results": [], "extra": 1 }
            } },
            "fn": { "type": "func", "args": [{ "type": "opt" }], "results": 3, "annotation": "sometimes" },
            "v": { "type": "vec", "inner": { "type": "text", "text": { "max_len": -1, "pattern": 5, "format": "x" } } },
            "r": { "type": "nat", "range": { "min": "a", "max": [] } },
            "t": { "type": "nat", "value": { "kind": "token_amount", "decimals": { "from": "bad" }, "symbol": 5 } },
            "u": { "type": "nat", "value": { "kind": "duration", "unit": "weeks" } },
            "w": { "type": "nat", "auto": { "value": 5 }, "effect": { "kind": 1, "irreversible": "x" },
                   "describe": 5, "intent": 6, "named": "" },
            "a.b": { "type": "" },
            "q\"q": { "type": "record" },
            "rec": { "type": "record", "fields": [], "colour": 1, "describe": "a record" },
            "o": { "type": "opt", "inner": { "type": "nat" }, "cases": [], "range": { "min": 2, "max": 1 } },
            "f2": { "type": "func", "args": [], "methods": {}, "named": 3 },
            "later": { "type": "nat", "describe": 5, "zzz": 1, "a b": 2, "auto": { "from": "x", "y z": 1 } },
            "var": { "type": "variant", "cases": [{ "name": "A", "type": "null", "q\"": 1 }], "inner": 1 },
            "srv": { "type": "service", "methods": { "m": { "args": [] } }, "fields": [] },
            "nat": { "type": "nat" },
            "deep": { "type": "opt", "inner": { "type": "vec", "inner": { "type": "nat", "bad key": 1 } }, "also": 2 }
        },
        "names": { "a set": { "method": "nope", "list": "..", "name": 1, "zz": 2 } },
        "methods": {
            "do it!": { "mode": 1, "args": {}, "results": [{ "type": "Unknown Type" }],
                        "idempotency": { "stamp": 5, "memo": "" },
                        "outcome": { "Err.x y": "fail", "default": "nah", "\"q\"": 1 },
                        "effect": { "irreversible": true } },
            "m": { "mode": "update", "args": [], "results": [], "outcome": { "Ok": "fail", "Ok ": "fail" } }
        }
    });
    let checked = json!({
        "format": "candid-profile-resolved", "format_version": 0, "name": "c",
        "types": {
            "odd t": { "type": "record", "fields": [
                { "name": "a", "type": "Missing" },
                { "name": "b", "type": "bool", "range": { "min": 1 } },
                { "name": "c", "type": "bool", "value": { "kind": "account" } }
            ] },
            "s v c": { "type": "service", "methods": {
                "m n": { "args": [{ "type": "Nope" }], "results": [{ "type": "nat", "text": { "max_len": 2 } }] }
            } }
        },
        "names": {
            "n s": { "method": "missing", "list": "a", "name": "b", "value": "c" },
            "lists": { "method": "q", "list": "Ok.0", "name": "n", "value": "v" },
            "plain": { "method": "q", "list": "Ok.items", "name": "nope", "value": "gone" }
        },
        "methods": {
            "q": { "mode": "query", "args": [], "results": [{ "type": "variant", "cases": [
                { "name": "Ok", "type": "record", "fields": [
                    { "name": "items", "type": "vec", "inner": { "type": "record", "fields": [{ "name": "n", "type": "nat" }] } }
                ] }
            ] }] },
            "f": { "mode": "query", "args": [{ "type": "func", "args": [{ "type": "Absent" }], "results": [{ "type": "text", "range": { "min": 1 }, "value": { "kind": "subaccount" } }] }], "results": [] },
            "x y": { "mode": "query",
                     "args": [{ "type": "opt", "inner": { "type": "Gone" } }],
                     "results": [{ "type": "variant", "cases": [{ "name": "A", "type": "nat", "named": "none" }] }] }
        }
    });
    let lines = |v| -> Vec<String> {
        problems(v)
            .into_iter()
            .map(|p| format!("{} | {}", p.path, p.reason))
            .collect()
    };
    let got = [lines(parsed), lines(checked)];
    let expected: [Vec<&str>; 2] = [
        vec![
            "$.name | a name may not be empty",
            "$.types.Ok.cases[0].ui.what | unknown key 'what' (expected one of: hidden)",
            "$.types.Ok.cases[0].ui.hidden | expected true or false, found a string",
            "$.types[\"a.b\"].type | a type name has 1 to 128 characters",
            "$.types.deep.inner.inner[\"bad key\"] | unknown key 'bad key' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id)",
            "$.types.deep.also | unknown key 'also' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id, inner)",
            "$.types.f2.methods | unknown key 'methods' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id, args, results, annotation)",
            "$.types.f2.named | expected a string, found a number",
            "$.types.fn.args[0].inner | a opt needs 'inner'",
            "$.types.later[\"a b\"] | unknown key 'a b' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id)",
            "$.types.later.zzz | unknown key 'zzz' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id)",
            "$.types.later.describe | expected a string, found a number",
            "$.types.later.auto[\"y z\"] | unknown key 'y z' (expected one of: from, value)",
            "$.types.later.auto.from | 'x' is not a ref; refs are 'query:<method>' (and an auto default may be owner:subaccount, owner:account, owner:principal)",
            "$.types.nat | 'nat' is a Candid type; pick another name",
            "$.types.o.cases | unknown key 'cases' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id, inner)",
            "$.types.o.range | min 2 is above max 1",
            "$.types[\"odd name\"].fields[0].zzz | unknown key 'zzz' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id)",
            "$.types[\"odd name\"].fields[1].id | an id is a number from 0 to 4294967295",
            "$.types[\"odd name\"].fields[2] | give 'name' or 'id', not both",
            "$.types[\"odd name\"].fields[3] | a field or case needs 'name' (or a numeric 'id')",
            "$.types[\"odd name\"].fields[4].name | a name is a non-empty string of at most 128 characters",
            "$.types[\"odd name\"].fields[5].id | an id is a number from 0 to 4294967295",
            "$.types[\"q\\\"q\"].fields | missing (use [] for no fields)",
            "$.types.r.range.min | 'a' is not a whole number",
            "$.types.rec.colour | unknown key 'colour' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id, fields)",
            "$.types.srv.fields | unknown key 'fields' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id, methods)",
            "$.types.svc.methods[\"odd method\"].extra | unknown key 'extra' (expected one of: args, results, annotation)",
            "$.types.svc.methods[\"odd method\"].args[0].type | expected a type name, found a number",
            "$.types.t.value.decimals.from | 'bad' is not a ref; refs are 'query:<method>' (and an auto default may be owner:subaccount, owner:account, owner:principal)",
            "$.types.t.value.symbol | expected a string or {\"from\": ...}, found a number",
            "$.types.u.value.unit | 'weeks' is not a unit (ns, us, ms, s)",
            "$.types.v.inner.text.max_len | a whole number of characters",
            "$.types.var.cases[0][\"q\\\"\"] | unknown key 'q\"' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id)",
            "$.types.var.inner | unknown key 'inner' (expected one of: value, describe, auto, ui, text, range, named, intent, effect, type, name, id, cases)",
            "$.types.w.describe | expected a string, found a number",
            "$.types.w.intent | expected a string, found a number",
            "$.types.w.effect.kind | expected a string, found a number",
            "$.types.w.effect.irreversible | expected true or false, found a string",
            "$.types.w.auto.value | expected the value as input text, found a number",
            "$.types.w.named | a name may not be empty",
            "$.names[\"a set\"].zz | unknown key 'zz' (expected one of: method, list, name, value)",
            "$.names[\"a set\"].name | expected a string, found a number",
            "$.names[\"a set\"].value | missing",
            "$.names[\"a set\"].list | relpath '..': label '' must be letters, digits or '_'",
            "$.methods[\"do it!\"].mode | expected a string, found a number",
            "$.methods[\"do it!\"].args | expected an array, found an object",
            "$.methods[\"do it!\"].effect.kind | missing",
            "$.methods[\"do it!\"].idempotency.stamp | expected a string, found a number",
            "$.methods[\"do it!\"].idempotency.memo | relpath '': no label",
            "$.methods[\"do it!\"].outcome[\"\\\"q\\\"\"] | expected a class name, found a number",
            "$.methods[\"do it!\"].outcome[\"Err.x y\"] | relpath 'Err.x y': label 'x y' must be letters, digits or '_'",
            "$.methods[\"do it!\"].outcome.default | 'nah' is not an outcome class (success, already_done, retry_same, retry_new, fix_input, fail)",
            "$.methods.m.outcome[\"Ok \"] | relpath 'Ok ': label 'Ok ' must be letters, digits or '_'",
        ],
        vec![
            "$.types[\"odd t\"].fields[0].type | 'Missing' is neither a Candid type nor one of the form's types",
            "$.types[\"odd t\"].fields[1].range | a range tag needs an integer, text, blob or vec, not bool",
            "$.types[\"odd t\"].fields[2].value | a account tag needs a record { owner : principal; subaccount : opt blob }, not bool",
            "$.types[\"s v c\"].methods[\"m n\"].args[0].type | 'Nope' is neither a Candid type nor one of the form's types",
            "$.types[\"s v c\"].methods[\"m n\"].results[0].text | a text tag needs a text position, not nat",
            "$.methods.f.args[0].args[0].type | 'Absent' is neither a Candid type nor one of the form's types",
            "$.methods.f.args[0].results[0].value | a subaccount tag needs a blob, not text",
            "$.methods[\"x y\"].args[0].inner.type | 'Gone' is neither a Candid type nor one of the form's types",
            "$.methods[\"x y\"].results[0].cases[0].named | no name set 'none' in the form's names",
            "$.names.lists.list | '(0).Ok.0' names no place in the reply of 'q'",
            "$.names[\"n s\"].method | the form has no method 'missing'",
            "$.names.plain.name | the elements have no text field 'nope'",
            "$.names.plain.value | the elements have no field 'gone'",
        ],
    ];
    assert_eq!(got, expected);
}
