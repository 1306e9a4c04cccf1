//! `tool-host agent ...` as a user runs it: files in, JSON out, the method's errors as JSON with
//! exit code 1 (2 for a usage mistake).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const TOOL: &str = env!("CARGO_BIN_EXE_tool-host");

fn run(args: &[&str]) -> (i32, Value) {
    let out = Command::new(TOOL).args(args).output().expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (out.status.code().unwrap_or(-1), v)
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tool-host-agent-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(path: &Path, text: &str) -> String {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, text).unwrap();
    path.display().to_string()
}

const SCHEMA: &str = r#"{"$schema": "https://flow.jig.md/schemas/schema-0.json", "type": "object",
  "properties": {"verdict": {"type": "string", "enum": ["holds", "fails"]}},
  "required": ["verdict"], "additionalProperties": false}"#;

#[test]
fn prepare_reads_skill_directories_and_sorts_their_files() {
    let d = dir("prepare");
    let input = write(
        &d.join("input.json"),
        &format!(
            r#"{{"instructions": "Check it.", "guidance": [{{"label": "claim", "text": "2 + 2 = 4"}}], "response_schema": {SCHEMA}}}"#
        ),
    );
    write(
        &d.join("answer-check/SKILL.md"),
        "Check the answer against the evidence.",
    );
    write(&d.join("answer-check/ref/b.md"), "b");
    write(&d.join("answer-check/a.md"), "a");
    let skill = d.join("answer-check").display().to_string();
    let (code, v) = run(&["agent", "prepare", "--input", &input, "--skill", &skill]);
    assert_eq!(code, 0, "{v}");
    let prompt = v["request"]["prompt"].as_str().unwrap();
    let paths: Vec<String> = prompt
        .lines()
        .filter(|l| l.starts_with("{\"skill\""))
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["path"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(paths, ["SKILL.md", "a.md", "ref/b.md"]);
    assert_eq!(
        v["request"]["response_schema"]["required"],
        json!(["verdict"])
    );

    // The prepared file goes on to the provider body and back through a provider's reply.
    let prepared = write(&d.join("prepared.json"), &v.to_string());
    let (code, body) = run(&[
        "agent",
        "request",
        "--prepared",
        &prepared,
        "--model",
        "m",
        "--api",
        "responses",
        "--structured-output",
        "json-schema",
    ]);
    assert_eq!(code, 0, "{body}");
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["text"]["format"]["strict"], json!(true));
    assert!(body["text"]["format"]["schema"].get("$schema").is_none());
    let reply = write(&d.join("reply.json"), &json!({
        "id": "resp_1", "object": "response", "status": "completed",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "{\"verdict\": \"holds\"}", "annotations": []}]}
        ]
    }).to_string());
    let (code, r) = run(&[
        "agent",
        "finish",
        "--prepared",
        &prepared,
        "--response",
        &reply,
        "--api",
        "responses",
    ]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        r,
        json!({"outcome": "done", "output": {"text": "{\"verdict\": \"holds\"}", "structured": {"verdict": "holds"}}})
    );
    let result = write(&d.join("result.json"), &r.to_string());
    let schema = write(&d.join("schema.json"), SCHEMA);
    let (code, _) = run(&[
        "agent",
        "check-result",
        "--result",
        &result,
        "--schema",
        &schema,
    ]);
    assert_eq!(code, 0);
}

#[test]
fn a_skill_with_a_symlink_or_without_skill_md_is_refused() {
    let d = dir("symlink");
    let input = write(&d.join("input.json"), r#"{"instructions": "x"}"#);
    write(&d.join("s/SKILL.md"), "s");
    std::os::unix::fs::symlink("/etc/hostname", d.join("s/link")).unwrap();
    let (code, v) = run(&[
        "agent",
        "prepare",
        "--input",
        &input,
        "--skill",
        &d.join("s").display().to_string(),
    ]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["error"]["code"], "INVALID_INPUT");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("symlink"),
        "{v}"
    );
    write(&d.join("t/README.md"), "t");
    let (code, v) = run(&[
        "agent",
        "prepare",
        "--input",
        &input,
        "--skill",
        &d.join("t").display().to_string(),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        v["error"]["place"],
        format!("--skill {}", d.join("t").display())
    );
}

#[test]
fn errors_print_as_json_with_their_code_and_place() {
    let d = dir("errors");
    let dup = write(
        &d.join("dup.json"),
        r#"{"instructions": "x", "instructions": "y"}"#,
    );
    let (code, v) = run(&["agent", "prepare", "--input", &dup]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (1, Some("INVALID_INPUT"))
    );
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("duplicate member"));
    let bad = write(&d.join("bad.json"), r#"{"type": "object"}"#);
    let (code, v) = run(&["agent", "check-schema", &bad]);
    assert_eq!(
        (code, v["error"]["place"].as_str()),
        (1, Some("response_schema"))
    );
    let (code, v) = run(&["agent", "check-schema", &write(&d.join("ok.json"), SCHEMA)]);
    assert_eq!(code, 0);
    assert!(v["projected"].get("$schema").is_none());
    let (code, _) = run(&[
        "agent",
        "prepare",
        "--input",
        &d.join("missing.json").display().to_string(),
    ]);
    assert_eq!(code, 2, "a missing file is a usage mistake");
}

#[test]
fn a_provider_error_status_fails_without_its_body() {
    let d = dir("status");
    let prepared = write(&d.join("p.json"), r#"{"request": {"prompt": "x"}}"#);
    let reply = write(
        &d.join("r.json"),
        r#"{"error": {"message": "key sk-SECRET-123 is invalid"}}"#,
    );
    let (code, v) = run(&[
        "agent",
        "finish",
        "--prepared",
        &prepared,
        "--response",
        &reply,
        "--status",
        "401",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["code"], "INVALID_RESULT");
    assert!(!v.to_string().contains("SECRET"), "{v}");
}

#[test]
fn a_reply_is_judged_by_its_status_first_and_a_malformed_body_is_not_repeated() {
    let d = dir("reply");
    let prepared = write(&d.join("p.json"), r#"{"request": {"prompt": "x"}}"#);
    let html = write(
        &d.join("html.json"),
        "<html>502 Bad Gateway sk-SECRET</html>",
    );
    let (code, v) = run(&[
        "agent",
        "finish",
        "--prepared",
        &prepared,
        "--response",
        &html,
        "--status",
        "502",
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (1, Some("INVALID_RESULT"))
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("HTTP 502"),
        "{v}"
    );
    let dup = write(&d.join("dup.json"), r#"{"sk-SECRET": 1, "sk-SECRET": 2}"#);
    for status in ["200", "401"] {
        let (code, v) = run(&[
            "agent",
            "finish",
            "--prepared",
            &prepared,
            "--response",
            &dup,
            "--status",
            status,
        ]);
        assert_eq!(
            (code, v["error"]["code"].as_str()),
            (1, Some("INVALID_RESULT")),
            "{v}"
        );
        assert!(!v.to_string().contains("SECRET"), "{v}");
    }
    let (code, v) = run(&[
        "agent",
        "finish",
        "--prepared",
        &prepared,
        "--response",
        &html,
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (1, Some("INVALID_RESULT"))
    );
    assert!(!v.to_string().contains("SECRET"), "{v}");
}

#[test]
fn skills_are_read_within_the_content_bound_and_errors_name_the_directory_and_file() {
    let d = dir("budget");
    let input = write(&d.join("input.json"), r#"{"instructions": "x"}"#);
    let half = "a".repeat(600 << 10);
    write(&d.join("one/SKILL.md"), &half);
    write(&d.join("two/SKILL.md"), &half);
    let (one, two) = (
        d.join("one").display().to_string(),
        d.join("two").display().to_string(),
    );
    let (code, v) = run(&[
        "agent", "prepare", "--input", &input, "--skill", &one, "--skill", &two,
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (1, Some("RESOURCE_EXHAUSTED")),
        "{v}"
    );
    assert_eq!(v["error"]["place"], format!("--skill {two} (SKILL.md)"));
    write(&d.join("bad/SKILL.md"), "s");
    write(&d.join("bad/a..b/..x"), "fine");
    write(&d.join("Bad-Name/SKILL.md"), "s");
    let (code, v) = run(&[
        "agent",
        "prepare",
        "--input",
        &input,
        "--skill",
        &d.join("Bad-Name").display().to_string(),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        v["error"]["place"],
        format!("--skill {}", d.join("Bad-Name").display())
    );
}

#[test]
fn a_skill_reached_through_a_symlinked_directory_is_refused() {
    let d = dir("ancestor");
    let input = write(&d.join("input.json"), r#"{"instructions": "x"}"#);
    write(&d.join("real/s/SKILL.md"), "s");
    std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
    let (code, v) = run(&[
        "agent",
        "prepare",
        "--input",
        &input,
        "--skill",
        &d.join("link/s").display().to_string(),
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (1, Some("INVALID_INPUT")),
        "{v}"
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("symlink"),
        "{v}"
    );
    let (code, _) = run(&[
        "agent",
        "prepare",
        "--input",
        &input,
        "--skill",
        &d.join("real/s").display().to_string(),
    ]);
    assert_eq!(code, 0);
}

#[test]
fn printed_values_keep_their_members_order() {
    let d = dir("order");
    let schema = write(
        &d.join("s.json"),
        r#"{"$schema": "https://flow.jig.md/schemas/schema-0.json", "type": "object",
        "properties": {"zeta": {"type": "string"}, "alpha": {"type": "string"}},
        "required": ["zeta", "alpha"], "additionalProperties": false}"#,
    );
    let out = Command::new(TOOL)
        .args(["agent", "check-schema", &schema])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.find("\"zeta\"").unwrap() < text.find("\"alpha\"").unwrap(),
        "{text}"
    );
    assert!(
        text.find("\"type\"").unwrap() < text.find("\"properties\"").unwrap(),
        "{text}"
    );
}
