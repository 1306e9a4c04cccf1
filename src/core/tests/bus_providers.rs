//! Each provider's shape passes that provider's own documented rules (docs/bus.md cites them),
//! checked here independently of the bus's own checks: name grammar, OpenAI's strict subset
//! when `strict` is true, Anthropic's root object and property keys, MCP's required fields.

mod common;
use common::*;
use regex_lite::Regex;
use serde_json::{json, Value};
use tool_host_core::builtin::Builtin;
use tool_host_core::bus::{host_decls, render, strict_schema, ToolDecl, ToolFormat, ToolSource};
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;

fn shapes(format: ToolFormat) -> Vec<Value> {
    let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let mut decls = host_decls(&plans, &[ledger()]);
    decls.push(optional_decl());
    // The builtins pass the same providers' rules.
    decls.extend(Builtin::ALL.map(|b| b.decl("Europe/London")));
    let refs: Vec<&ToolDecl> = decls.iter().collect();
    let v: Value = serde_json::from_str(&render(&refs, format)).unwrap();
    v.as_array().unwrap().clone()
}

/// A tool strict mode can take once its optional input is made nullable.
fn optional_decl() -> ToolDecl {
    ToolDecl {
        name: "lookup".into(),
        title: "Look up".into(),
        description: "Looks a thing up.".into(),
        effect: None,
        input_schema: json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "key": { "type": "string", "pattern": "^[a-z]+$" },
                "mode": { "type": "string", "enum": ["fast", "full"] },
                "limit": { "type": "integer", "minimum": 1 },
                "tags": { "type": "array", "items": { "type": "object", "properties": { "k": { "type": "string" } }, "additionalProperties": false }, "maxItems": 4 }
            },
            "required": ["key"],
            "additionalProperties": false
        }),
        output_schema: None,
        source: ToolSource::Builtin,
    }
}

const STRICT_KEYWORDS: [&str; 21] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$defs",
    "$ref",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// OpenAI strict mode's rules, checked over a whole schema.
fn assert_strict(s: &Value, path: &str) {
    let m = s
        .as_object()
        .unwrap_or_else(|| panic!("{path}: not an object schema"));
    for k in m.keys() {
        assert!(
            STRICT_KEYWORDS.contains(&k.as_str()),
            "{path}: strict mode does not take {k}"
        );
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        assert_eq!(m.get("additionalProperties"), Some(&json!(false)), "{path}");
        let mut req: Vec<&str> = m["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        req.sort();
        let keys: Vec<&str> = props.keys().map(String::as_str).collect();
        assert_eq!(req, keys, "{path}: every property required");
        for (k, p) in props {
            assert_strict(p, &format!("{path}.{k}"));
        }
    }
    if let Some(i) = m.get("items") {
        assert_strict(i, &format!("{path}.items"));
    }
    if let Some(a) = m.get("anyOf").and_then(Value::as_array) {
        for (i, s) in a.iter().enumerate() {
            assert_strict(s, &format!("{path}.anyOf[{i}]"));
        }
    }
}

#[test]
fn openai_shapes_follow_openais_rules() {
    let name = Regex::new("^[a-zA-Z0-9_-]{1,64}$").unwrap();
    for (format, f) in [
        (ToolFormat::OpenAi, "/function"),
        (ToolFormat::OpenAiResponses, ""),
    ] {
        let mut strict_seen = 0;
        for t in shapes(format) {
            assert_eq!(t["type"], "function");
            let func = t.pointer(if f.is_empty() { "" } else { f }).unwrap();
            assert!(
                name.is_match(func["name"].as_str().unwrap()),
                "{}",
                func["name"]
            );
            assert!(func["description"].as_str().unwrap().chars().count() <= 1024);
            let params = &func["parameters"];
            assert_eq!(params["type"], "object");
            assert!(params.get("$schema").is_none(), "$schema is left out");
            if func["strict"] == true {
                strict_seen += 1;
                assert_strict(params, func["name"].as_str().unwrap());
            } else {
                assert_eq!(func["strict"], false);
            }
        }
        assert!(strict_seen >= 1, "{format:?}: some tool is strict");
    }
}

#[test]
fn an_optional_property_becomes_a_required_nullable_one_in_strict_mode() {
    let s = strict_schema(&optional_decl().input_schema).expect("strict");
    assert_eq!(s["required"], json!(["key", "limit", "mode", "tags"]));
    assert_eq!(s["properties"]["key"]["type"], "string");
    assert_eq!(s["properties"]["limit"]["type"], json!(["integer", "null"]));
    assert_eq!(
        s["properties"]["mode"]["anyOf"][1],
        json!({ "type": "null" }),
        "an enum is wrapped, not widened"
    );
    assert_eq!(s["properties"]["tags"]["items"]["required"], json!(["k"]));
    assert_eq!(
        s["properties"]["tags"]["items"]["properties"]["k"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn a_schema_strict_mode_cannot_take_stays_non_strict() {
    let base = optional_decl().input_schema;
    for (key, v) in [
        ("minLength", json!(1)),
        ("maxLength", json!(9)),
        ("allOf", json!([])),
    ] {
        let mut s = base.clone();
        s["properties"]["key"][key] = v;
        assert_eq!(strict_schema(&s), None, "{key}");
    }
    let mut s = base.clone();
    s["properties"]["key"]["format"] = json!("uri");
    assert_eq!(strict_schema(&s), None, "format uri is not in the list");
    let mut s = base.clone();
    s["properties"]["tags"]["items"]
        .as_object_mut()
        .unwrap()
        .remove("additionalProperties");
    assert_eq!(
        strict_schema(&s),
        None,
        "an open object would lose its openness"
    );
    let mut s = base.clone();
    s["properties"]["case"] = json!({ "oneOf": [{ "type": "string" }] });
    assert_eq!(strict_schema(&s), None, "oneOf is not taken");
    // `$schema` is left out at the root, whatever its value: the strict form is the one of the
    // schema without it. Inside, it is a keyword strict mode does not take.
    let mut bare = base.clone();
    bare.as_object_mut().unwrap().remove("$schema");
    let want = strict_schema(&bare).expect("strict without $schema");
    assert_eq!(want.get("$schema"), None);
    for dialect in [
        json!(tool_host_core::schema::JSON_SCHEMA_DIALECT),
        json!(7),
        json!({ "a": 1 }),
    ] {
        let mut s = bare.clone();
        s["$schema"] = dialect;
        assert_eq!(strict_schema(&s).as_ref(), Some(&want));
    }
    let mut s = base;
    s["properties"]["key"]["$schema"] = json!("x");
    assert_eq!(strict_schema(&s), None, "a nested $schema");
}

/// A strict form's members are the schema's, with only what strict mode needs changed: a
/// non-object's `required` kept, every other keyword copied.
#[test]
fn a_strict_form_keeps_the_members_it_does_not_change() {
    let s = json!({
        "type": "object",
        "description": "d",
        "title": "t",
        "properties": {
            "a": { "type": "string", "description": "x", "pattern": "^a$", "enum": ["a"] },
            "n": { "type": "integer", "minimum": 1, "maximum": 3, "description": "n" },
            "r": { "type": "string", "required": ["x"] }
        },
        "required": ["a"],
        "additionalProperties": false
    });
    let strict = strict_schema(&s).expect("strict");
    assert_eq!(
        strict,
        json!({
            "type": "object",
            "description": "d",
            "title": "t",
            "properties": {
                "a": { "type": "string", "description": "x", "pattern": "^a$", "enum": ["a"] },
                "n": { "type": ["integer", "null"], "minimum": 1, "maximum": 3, "description": "n" },
                "r": { "type": ["string", "null"], "required": ["x"] }
            },
            "required": ["a", "n", "r"],
            "additionalProperties": false
        })
    );
}

fn assert_anthropic_keys(s: &Value, key: &Regex, path: &str) {
    match s {
        Value::Object(m) => {
            if let Some(Value::Object(props)) = m.get("properties") {
                for k in props.keys() {
                    assert!(key.is_match(k), "{path}: property key {k}");
                }
            }
            for (k, v) in m {
                assert_anthropic_keys(v, key, &format!("{path}.{k}"));
            }
        }
        Value::Array(a) => a.iter().for_each(|v| assert_anthropic_keys(v, key, path)),
        _ => {}
    }
}

#[test]
fn anthropic_shapes_follow_anthropics_rules() {
    let name = Regex::new("^[a-zA-Z0-9_-]{1,64}$").unwrap();
    let key = Regex::new("^[a-zA-Z0-9_.-]{1,64}$").unwrap();
    for t in shapes(ToolFormat::Anthropic) {
        let keys: Vec<&String> = t.as_object().unwrap().keys().collect();
        assert_eq!(keys, vec!["description", "input_schema", "name"]);
        assert!(name.is_match(t["name"].as_str().unwrap()));
        assert_eq!(t["input_schema"]["type"], "object");
        assert!(t["input_schema"].get("$schema").is_none());
        assert_anthropic_keys(&t["input_schema"], &key, t["name"].as_str().unwrap());
    }
}

#[test]
fn mcp_shapes_follow_the_mcp_2025_11_25_rules() {
    let name = Regex::new(r"^[A-Za-z0-9_.-]{1,128}$").unwrap();
    for t in shapes(ToolFormat::Mcp) {
        assert!(name.is_match(t["name"].as_str().unwrap()));
        assert!(t["description"].is_string() && t["title"].is_string());
        assert_eq!(
            t["inputSchema"]["type"], "object",
            "inputSchema is an object schema"
        );
        let ann = t["annotations"].as_object().unwrap();
        for (k, v) in ann {
            match k.as_str() {
                "title" => assert!(v.is_string()),
                "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint" => {
                    assert!(v.is_boolean())
                }
                other => panic!("{other} is not an MCP annotation"),
            }
        }
    }
}

#[test]
fn json_schema_shapes_keep_the_dialect() {
    for t in shapes(ToolFormat::JsonSchema) {
        let keys: Vec<&String> = t.as_object().unwrap().keys().collect();
        assert_eq!(keys, vec!["description", "name", "schema"]);
        if t["name"] != "lookup" {
            assert_eq!(
                t["schema"]["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
        }
    }
}

#[test]
fn markdown_lists_each_tool_its_inputs_and_how_to_call() {
    let plans = build_tool_plans(&[pack("icrc1").unwrap()]);
    let decls = host_decls(&plans, &[ledger()]);
    let refs: Vec<&ToolDecl> = decls.iter().collect();
    let md = render(&refs, ToolFormat::Markdown);
    for d in &decls {
        assert!(md.contains(&format!("\n## {}\n", d.name)), "{}", d.name);
    }
    assert_eq!(
        md.matches("{\"tool\": ").count(),
        1,
        "one line says how to call"
    );
    assert!(md.contains("- `canister_id` (string, required)"));
    assert!(md.contains("Allowed values: `\"ryjl3-tyaaa-aaaaa-aaaba-cai\"`"));
    assert!(md.contains("optional)"));
}

#[test]
fn markdown_lists_nested_inputs_under_their_parent() {
    let d = optional_decl();
    let md = render(&[&d], ToolFormat::Markdown);
    assert!(md.contains("- `tags` (array, optional)"), "{md}");
    assert!(md.contains("\n  - `k` (string, optional)"), "{md}");
    assert!(
        md.contains("- `mode` (string, optional) Allowed values: `\"fast\"`, `\"full\"`."),
        "{md}"
    );
}
