//! `tools --format` and `lint`'s declaration checks, run as a user runs them.

use serde_json::Value;
use std::process::Command;

const TOOL: &str = env!("CARGO_BIN_EXE_tool-host");
const CANISTERS: &str = r#"[{"id":"ryjl3-tyaaa-aaaaa-aaaba-cai","label":"TKA","refs":{"query:icrc1_decimals":8,"query:icrc1_symbol":"TKA"}}]"#;

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(TOOL).args(args).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

fn tools(format: Option<&str>) -> (i32, String) {
    let mut args = vec![
        "tools",
        "--pack",
        "icrc1",
        "--pack",
        "icrc2",
        "--canisters",
        CANISTERS,
    ];
    if let Some(f) = format {
        args.extend(["--format", f]);
    }
    run(&args)
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn tools_defaults_to_mcp_with_the_label_in_annotations() {
    let (code, text) = tools(None);
    assert_eq!(code, 0);
    let v = json(&text);
    let t = v
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "prepare_icrc1_transfer")
        .unwrap();
    assert_eq!(t["annotations"]["idempotentHint"], true);
    assert_eq!(t["annotations"]["readOnlyHint"], false);
    assert_eq!(tools(Some("mcp")).1, text);
}

#[test]
fn tools_renders_each_json_format_in_its_shape() {
    for (format, name_at) in [
        ("openai", "/function/name"),
        ("openai_responses", "/name"),
        ("anthropic", "/name"),
        ("jsonschema", "/name"),
    ] {
        let (code, text) = tools(Some(format));
        assert_eq!(code, 0, "{format}");
        let v = json(&text);
        let names: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.pointer(name_at).unwrap().as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 14, "{format}");
        assert!(names.contains(&"commit"), "{format}");
    }
    let v = json(&tools(Some("anthropic")).1);
    assert!(v[0].get("input_schema").is_some());
}

#[test]
fn tools_renders_markdown_as_text() {
    let (code, text) = tools(Some("markdown"));
    assert_eq!(code, 0);
    assert!(text.starts_with("# Tools\n"));
    assert!(text.contains("\n## icrc1_balance_of\n"));
    assert!(text.contains("{\"tool\": "));
}

#[test]
fn an_unknown_format_is_refused_listing_the_formats() {
    let (code, text) = tools(Some("yaml"));
    assert_eq!(code, 2);
    let msg = json(&text)["error"].as_str().unwrap().to_string();
    assert!(msg.contains("'yaml'"), "{msg}");
    for f in [
        "mcp",
        "openai",
        "openai_responses",
        "anthropic",
        "markdown",
        "jsonschema",
    ] {
        assert!(msg.contains(f), "{f}: {msg}");
    }
}

#[test]
fn lint_adds_declaration_issues_and_overlaps() {
    let (code, text) = run(&["lint", "--pack", "icrc1", "--pack", "icrc2"]);
    assert_eq!(code, 0);
    let v = json(&text);
    assert_eq!(v["declaration_issues"], serde_json::json!([]));
    assert_eq!(v["overlaps"], serde_json::json!([]));
    // Every ICRC tool is labelled, and none destructive (a prepare is stamped, commit
    // idempotent).
    assert_eq!(v["destructive"], serde_json::json!([]));
    assert_eq!(v["unannotated"], serde_json::json!([]));
}

/// `lint` names the tools a gate must treat with care: labelled destructive (an update with an
/// effect and no stamp) and unlabelled (an update with no effect), each sorted.
#[test]
fn lint_lists_the_destructive_and_the_unannotated_tools() {
    let dir = std::env::temp_dir().join(format!("tool-host-cli-labels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("votes.json");
    let vote = |effect: Option<Value>| {
        let mut m = serde_json::json!({ "mode": "update", "intent": "Vote", "describe": "Votes on a proposal.",
            "args": [{ "type": "nat64", "describe": "The proposal." }], "results": [] });
        if let Some(e) = effect {
            m["effect"] = e;
        }
        m
    };
    let write = serde_json::json!({ "kind": "vote", "irreversible": false, "replicated": true });
    let form = serde_json::json!({
        "format": "candid-profile-resolved", "format_version": 0, "name": "votes",
        "methods": {
            "vote_b": vote(Some(write.clone())),
            "vote_a": vote(Some(write)),
            "poke": vote(None),
            "count": { "mode": "query", "describe": "Counts the votes cast.", "args": [], "results": [{ "type": "nat" }] }
        }
    });
    std::fs::write(&path, form.to_string()).unwrap();
    let (code, text) = run(&["lint", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    let v = json(&text);
    assert_eq!(
        v["destructive"],
        serde_json::json!(["prepare_vote_a", "prepare_vote_b"]),
        "{text}"
    );
    assert_eq!(
        v["unannotated"],
        serde_json::json!(["prepare_poke"]),
        "{text}"
    );
}

#[test]
fn lint_reports_a_description_a_provider_will_not_take_and_an_overlap() {
    let dir = std::env::temp_dir().join(format!("tool-host-cli-bus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("twins.json");
    // The form allows a describe of 1 024 characters; the host's own sentence takes the tool's
    // description over OpenAI's bound, which only the declaration check sees.
    let long = format!("{}.", "x".repeat(1023));
    let form = serde_json::json!({
        "format": "candid-profile-resolved", "format_version": 0, "name": "twins",
        "methods": {
            "wordy": { "mode": "query", "describe": long, "args": [], "results": [{ "type": "nat" }] },
            "peek_twin": { "mode": "query", "describe": "Reads the number of open orders in the shop.", "args": [], "results": [{ "type": "nat" }] },
            "peek_other": { "mode": "query", "describe": "Reads the number of open orders in the shop.", "args": [], "results": [{ "type": "nat" }] }
        }
    });
    std::fs::write(&path, form.to_string()).unwrap();
    let (code, text) = run(&["lint", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    let v = json(&text);
    let issues = v["declaration_issues"].as_array().unwrap();
    assert!(
        issues.iter().any(|i| i["tool"] == "wordy"
            && i["path"] == "description"
            && i["message"].as_str().unwrap().contains("OpenAI")),
        "{issues:?}"
    );
    let overlaps = v["overlaps"].as_array().unwrap();
    assert!(
        overlaps
            .iter()
            .any(|o| o["tools"] == serde_json::json!(["peek_other", "peek_twin"])),
        "{overlaps:?}"
    );
}
