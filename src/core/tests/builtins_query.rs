//! `json_query`, `think`, `finish`, `escalate` and every builtin's declaration.

mod common;
use common::ledger;
use serde_json::{json, Value};
use tool_host_core::builtin::json_query::parse_path;
use tool_host_core::builtin::{
    read_escalate, read_finish, run_pure, Builtin, EscalateRequest, MAX_ANSWER,
};
use tool_host_core::bus::{check_decl, host_decls, EffectLabel, ToolDecl, ToolSource};
use tool_host_core::issue::{Code, Issue};
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;

const INVOICES: &str = r#"{
  "invoices": [
    { "total": 120, "lines": [ { "sku": "A-1" }, { "sku": "A-2" } ] },
    { "total": 80, "lines": [] },
    { "total": 45.5, "lines": [ { "sku": "C-9" } ] }
  ],
  "key with.dot": { "x": null }
}"#;

fn query(document: &str, path: &str) -> Result<Value, Vec<Issue>> {
    run_pure(
        Builtin::JsonQuery,
        &json!({ "document": document, "path": path }),
        0,
        "UTC",
    )
}

fn found(path: &str) -> Value {
    query(INVOICES, path).unwrap_or_else(|e| panic!("{path}: {e:?}"))
}

#[test]
fn after_a_wildcard_the_rest_of_the_path_applies_to_each_element() {
    assert_eq!(
        found("invoices[*].lines[0].sku"),
        json!({ "found": true, "value": ["A-1", "C-9"] })
    );
    assert_eq!(
        found("invoices[*].total"),
        json!({ "found": true, "value": [120, 80, 45.5] })
    );
    assert_eq!(
        found("$.invoices.*.lines[*].sku"),
        json!({ "found": true, "value": ["A-1", "A-2", "C-9"] })
    );
}

#[test]
fn a_path_reads_one_value() {
    assert_eq!(
        found("invoices[0].total"),
        json!({ "found": true, "value": 120 })
    );
    assert_eq!(
        found("$.invoices[2].total"),
        json!({ "found": true, "value": 45.5 })
    );
    assert_eq!(
        found("[\"key with.dot\"].x"),
        json!({ "found": true, "value": null })
    );
    assert_eq!(
        found("$[\"invoices\"][1].lines"),
        json!({ "found": true, "value": [] })
    );
    assert_eq!(
        query("[1,2]", "$").unwrap(),
        json!({ "found": true, "value": [1, 2] })
    );
}

#[test]
fn nothing_matching_is_found_false_never_null() {
    for path in [
        "invoices[9].total",
        "invoices[0].missing",
        "invoices.total",
        "invoices[1].lines[*].sku",
        "nothing[*]",
    ] {
        assert_eq!(found(path), json!({ "found": false }), "{path}");
    }
}

#[test]
fn a_bad_path_is_refused_with_its_position() {
    for (path, position) in [
        ("invoices[", 10),
        ("invoices[x]", 10),
        ("invoices[-1]", 10),
        ("invoices[01]", 10),
        ("invoices..total", 10),
        ("invoices[0]total", 12),
        ("[\"open", 2),
        ("$invoices", 2),
    ] {
        let e = parse_path(path).expect_err(path);
        assert_eq!(e.position, position, "{path}: {}", e.message);
        let issues = query(INVOICES, path).expect_err(path);
        assert_eq!(issues[0].code, Code::Syntax);
        assert!(issues[0].message.contains(&format!("character {position}")));
    }
}

#[test]
fn a_document_with_duplicate_keys_or_bad_json_is_refused() {
    let dup = query(r#"{"a": 1, "a": 2}"#, "a").expect_err("duplicate");
    assert_eq!(dup[0].code, Code::Syntax);
    assert_eq!(dup[0].path, "$input.document");
    let bad = query("{not json}", "a").expect_err("not json");
    assert_eq!(bad[0].code, Code::Syntax);
    let deep = "[".repeat(100) + &"]".repeat(100);
    assert_eq!(query(&deep, "$").expect_err("deep")[0].code, Code::TooLarge);
    let missing =
        run_pure(Builtin::JsonQuery, &json!({ "path": "a" }), 0, "UTC").expect_err("no document");
    assert_eq!(missing[0].code, Code::Missing);
}

#[test]
fn think_answers_noted_and_changes_nothing() {
    assert_eq!(
        run_pure(
            Builtin::Think,
            &json!({ "thought": "first the date" }),
            0,
            "UTC"
        )
        .unwrap(),
        json!({ "result": "noted" })
    );
    let long = "x".repeat(8193);
    let refused =
        run_pure(Builtin::Think, &json!({ "thought": long }), 0, "UTC").expect_err("long thought");
    assert_eq!(refused[0].code, Code::TooLarge);
    assert!(run_pure(Builtin::Finish, &json!({ "answer": "a" }), 0, "UTC").is_err());
}

#[test]
fn finish_takes_a_bounded_non_blank_answer_as_given() {
    assert_eq!(
        read_finish(&json!({ "answer": " 42 \n" })).unwrap(),
        " 42 \n"
    );
    assert_eq!(
        read_finish(&json!({ "answer": "  " })).unwrap_err()[0].code,
        Code::Missing
    );
    assert_eq!(read_finish(&json!({})).unwrap_err()[0].code, Code::Missing);
    let long = "é".repeat(MAX_ANSWER + 1);
    assert_eq!(
        read_finish(&json!({ "answer": long })).unwrap_err()[0].code,
        Code::TooLarge
    );
    assert!(read_finish(&json!({ "answer": "é".repeat(MAX_ANSWER) })).is_ok());
}

#[test]
fn escalate_needs_a_reason_and_takes_null_as_no_summary() {
    assert_eq!(
        read_escalate(&json!({ "reason": "refund over limit", "summary": null })).unwrap(),
        EscalateRequest {
            reason: "refund over limit".into(),
            summary: None
        }
    );
    let both = read_escalate(&json!({ "reason": " ", "summary": 3 })).unwrap_err();
    assert_eq!(both.len(), 2);
    assert_eq!(both[0].code, Code::Missing);
    assert_eq!(both[1].code, Code::Type);
    assert_eq!(
        read_escalate(&json!({ "reason": "x", "page": true })).unwrap_err()[0].code,
        Code::UnknownParam
    );
}

#[test]
fn each_builtin_declares_its_label_schema_and_source() {
    for b in Builtin::ALL {
        let d = b.decl("Europe/London");
        assert_eq!(d.name, b.name());
        assert_eq!(d.source, ToolSource::Builtin);
        assert!(
            !d.title.is_empty() && d.description.len() > 40,
            "{}",
            d.name
        );
        let s = &d.input_schema;
        assert_eq!(s["type"], json!("object"), "{}", d.name);
        assert_eq!(s["additionalProperties"], json!(false), "{}", d.name);
        assert!(s["required"].is_array(), "{}", d.name);
        let props = s["properties"].as_object().unwrap();
        for r in s["required"].as_array().unwrap() {
            assert!(props.contains_key(r.as_str().unwrap()), "{}", d.name);
        }
        assert!(d.output_schema.is_some(), "{}", d.name);
        let expected = if b == Builtin::Escalate {
            None
        } else {
            Some(EffectLabel::Readonly)
        };
        assert_eq!(d.effect, expected, "{}", d.name);
    }
    assert!(Builtin::CurrentTime
        .decl("Asia/Kolkata")
        .description
        .contains("Asia/Kolkata"));
}

#[test]
fn each_builtin_decl_passes_the_bus_checks() {
    for b in Builtin::ALL {
        let d = b.decl("Europe/London");
        assert_eq!(check_decl(&d), Ok(()), "{}", d.name);
    }
}

/// Where a description text has a run of spaces or an indented new line (a lost line
/// continuation), with the text around it; `None` when it has neither.
fn lost_continuation(text: &str) -> Option<&str> {
    let at = text.find("  ").or_else(|| text.find("\n "))?;
    let start = text[..at]
        .char_indices()
        .rev()
        .nth(20)
        .map_or(0, |(i, _)| i);
    let end = text[at..]
        .char_indices()
        .nth(24)
        .map_or(text.len(), |(i, _)| at + i);
    Some(&text[start..end])
}

/// Every `description` in a schema, at any depth, with its path.
fn schema_descriptions(v: &Value, path: String, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("description", Value::String(d)) => out.push((path.clone(), d.clone())),
                    _ => schema_descriptions(x, format!("{path}.{k}"), out),
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                schema_descriptions(x, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// A description broken across source lines without `\` keeps the next line's indentation;
/// no builtin's, and no ICRC pack's form tool's (nor `commit`'s), has a run of spaces or an
/// indented new line, in the tool's description or its inputs'.
#[test]
fn no_tool_description_has_a_run_of_spaces_or_an_indented_line() {
    let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let mut decls: Vec<ToolDecl> = host_decls(&plans, &[ledger()]);
    assert!(decls.len() > 5, "the ICRC packs give their tools");
    decls.extend(Builtin::ALL.map(|b| b.decl("Europe/London")));
    let mut found = Vec::new();
    for d in &decls {
        let mut texts = vec![("description".to_string(), d.description.clone())];
        schema_descriptions(&d.input_schema, "inputSchema".into(), &mut texts);
        if let Some(o) = &d.output_schema {
            schema_descriptions(o, "outputSchema".into(), &mut texts);
        }
        for (path, text) in &texts {
            if let Some(around) = lost_continuation(text) {
                found.push(format!("{} {path}: {around:?}", d.name));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(lost_continuation("a  b"), Some("a  b"));
    assert_eq!(lost_continuation("a\n  b"), Some("a\n  b"));
    assert_eq!(lost_continuation("a b\nc"), None);
}

/// The schemas' `pattern: "\S"` (ECMAScript, as a provider runs it) and the readers call the
/// same texts blank.
#[test]
fn a_blank_answer_or_reason_is_what_the_schema_pattern_calls_blank() {
    let pattern = regress::Regex::with_flags("\\S", "u").unwrap();
    for text in [
        " ", "\t\n", "\u{feff}", "\u{85}", "\u{a0}", "\u{3000}", "\u{200b}", "x", " a ",
    ] {
        let schema_takes = pattern.find(text).is_some();
        let reader_takes = read_finish(&json!({ "answer": text })).is_ok();
        assert_eq!(schema_takes, reader_takes, "{text:?}");
        let reason_taken = read_escalate(&json!({ "reason": text })).is_ok();
        assert_eq!(schema_takes, reason_taken, "{text:?}");
    }
}

#[test]
fn a_document_is_bounded_in_characters_as_its_schema_says() {
    use tool_host_core::builtin::json_query::MAX_DOCUMENT_CHARS;
    let decl = Builtin::JsonQuery.decl("UTC");
    assert_eq!(
        decl.input_schema["properties"]["document"]["maxLength"],
        json!(MAX_DOCUMENT_CHARS)
    );
    // Multi-byte text up to the character bound is read; one character more is refused.
    let body = "é".repeat(MAX_DOCUMENT_CHARS - 2);
    let doc = format!("\"{body}\"");
    assert_eq!(query(&doc, "$").unwrap()["found"], json!(true));
    let over = format!("\"{body}é\"");
    assert_eq!(query(&over, "$").unwrap_err()[0].code, Code::TooLarge);
}
