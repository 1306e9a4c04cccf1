//! Prints what the core's hot paths cost on this machine: building the ICRC packs' tool
//! definitions and reading a transfer input. A benchmark, not a test: `cargo bench -p tool-host-core`.

use candid::Principal;
use serde_json::json;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;
use tool_host_core::read::{read_tool_input, Canister, ReadContext};
use tool_host_core::schema::tool_definitions;

/// The median of `rounds` timings of `iters` runs each, per run.
fn measure(rounds: usize, iters: u32, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed() / iters
        })
        .collect();
    times.sort();
    times[rounds / 2]
}

fn main() {
    let ledger = Canister {
        id: Principal::from_text("ryjl3-tyaaa-aaaaa-aaaba-cai").unwrap(),
        label: Some("TKA".into()),
        refs: BTreeMap::from([
            ("query:icrc1_decimals".to_string(), json!(8)),
            ("query:icrc1_symbol".to_string(), json!("TKA")),
            ("query:icrc1_fee".to_string(), json!(10000)),
        ]),
        forms: None,
    };
    let canisters = vec![ledger];

    let parse = measure(21, 20, || {
        black_box((pack("icrc1").unwrap(), pack("icrc2").unwrap()));
    });
    let forms = [pack("icrc1").unwrap(), pack("icrc2").unwrap()];
    let plan = measure(21, 50, || {
        black_box(build_tool_plans(&forms));
    });
    let plans = build_tool_plans(&forms);
    let defs = measure(21, 50, || {
        black_box(serde_json::to_vec(&tool_definitions(&plans, &canisters)).unwrap());
    });
    let whole = measure(21, 20, || {
        let forms = [pack("icrc1").unwrap(), pack("icrc2").unwrap()];
        let plans = build_tool_plans(&forms);
        black_box(serde_json::to_vec(&tool_definitions(&plans, &canisters)).unwrap());
    });
    let bytes = serde_json::to_vec(&tool_definitions(&plans, &canisters))
        .unwrap()
        .len();

    let transfer = &plans.plans["prepare_icrc1_transfer"];
    let input = json!({ "canister_id": "ryjl3-tyaaa-aaaaa-aaaba-cai", "to": "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae", "amount": "1.5 TKA" });
    let ctx = ReadContext {
        canisters: &canisters,
        now_ns: Some(1_796_119_200_000_000_000),
        owner: Some(Principal::anonymous()),
        names: None,
        memo: None,
    };
    let read = measure(21, 500, || {
        black_box(read_tool_input(transfer, &input, &ctx).unwrap());
    });
    let out = read_tool_input(transfer, &input, &ctx).unwrap();
    let encode = measure(21, 500, || {
        black_box(tool_host_core::codec::encode_args(transfer, &out.args).unwrap());
    });

    let (agent_input, agent_skills, prompt_bytes) = agent_request();
    let prepare_agent = measure(11, 5, || {
        black_box(tool_host_core::agent::prepare_agent(&agent_input, Some(&agent_skills)).unwrap());
    });
    let big_schema = agent_schema();
    let schema_bytes = big_schema.canonical().len();
    let check_schema = measure(11, 5, || {
        tool_host_core::agent::assert_response_schema(black_box(&big_schema)).unwrap();
    });
    let schema_text = big_schema.compact();
    let parse_schema = measure(11, 5, || {
        black_box(
            tool_host_core::agent::json::parse(
                &schema_text,
                &tool_host_core::agent::json::DOCUMENT,
                "",
            )
            .unwrap(),
        );
    });

    println!(
        "core benchmark (median per run, {} build)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    println!("| operation | time |");
    println!("|---|---|");
    println!("| parse the icrc1 + icrc2 packs | {parse:?} |");
    println!("| build tool plans (both packs) | {plan:?} |");
    println!("| MCP definitions from plans, serialized ({bytes} bytes) | {defs:?} |");
    println!("| packs to serialized definitions, all steps | {whole:?} |");
    println!("| read a transfer input (\"1.5 TKA\") | {read:?} |");
    println!("| encode the transfer argument | {encode:?} |");
    println!("| agent: prepare a request ({prompt_bytes} prompt bytes, 4 skills, 40 guidance items, a schema) | {prepare_agent:?} |");
    println!(
        "| agent: check a response schema ({schema_bytes} canonical bytes) | {check_schema:?} |"
    );
    println!("| agent: parse that schema's text as JSON/0 | {parse_schema:?} |");
}

/// An agent request just under the 1 MiB prompt bound: instructions, 4 skills of 16 files,
/// 40 guidance items and the total schema.
fn agent_request() -> (
    tool_host_core::agent::Json,
    tool_host_core::agent::Json,
    usize,
) {
    use tool_host_core::agent::Json;
    let text =
        |n: usize| "The measurement was lower than expected. ".repeat(n / 20 + 1)[..n].to_string();
    let guidance: Vec<Json> = (0..40)
        .map(|i| {
            Json::object(vec![
                ("label", Json::str(format!("note-{i}"))),
                ("text", Json::str(text(8 << 10))),
            ])
        })
        .collect();
    let skills: Vec<Json> = (0..4)
        .map(|s| {
            let files: Vec<Json> = (0..16)
                .map(|f| {
                    let path = if f == 0 {
                        "SKILL.md".to_string()
                    } else {
                        format!("ref/{f:02}.md")
                    };
                    Json::object(vec![
                        ("path", Json::str(path)),
                        ("text", Json::str(text(6 << 10))),
                    ])
                })
                .collect();
            Json::object(vec![
                ("name", Json::str(format!("skill-{s}"))),
                ("files", Json::Array(files)),
            ])
        })
        .collect();
    let schema = tool_host_core::agent::json::parse(
        r#"{"$schema": "https://flow.jig.md/schemas/schema-0.json", "type": "object", "properties": {"verdict": {"type": "string", "enum": ["holds", "fails"]}, "reasons": {"type": "array", "maxItems": 16, "items": {"type": "string"}}}, "required": ["verdict", "reasons"], "additionalProperties": false}"#,
        &tool_host_core::agent::json::DOCUMENT,
        "",
    )
    .unwrap();
    let input = Json::object(vec![
        ("instructions", Json::str(text(300 << 10))),
        ("guidance", Json::Array(guidance)),
        ("response_schema", schema),
    ]);
    let skills = Json::Array(skills);
    let prompt = tool_host_core::agent::prepare_agent(&input, Some(&skills))
        .unwrap()
        .prompt
        .len();
    (input, skills, prompt)
}

/// A schema near the 256 KiB bound: 4 objects of 31 string properties with long descriptions,
/// and enums of 256 values in all.
fn agent_schema() -> tool_host_core::agent::Json {
    let desc = "d".repeat(1900);
    let obj = |k: usize| {
        let props: Vec<String> = (0..31)
            .map(|i| {
                if i < 16 {
                    let opts: Vec<String> = (0..4).map(|o| format!("\"o{k}-{i}-{o}\"")).collect();
                    format!(
                        r#""p{i}": {{"type": "string", "description": "{desc}", "enum": [{}]}}"#,
                        opts.join(",")
                    )
                } else {
                    format!(r#""p{i}": {{"type": ["integer", "null"], "description": "{desc}"}}"#)
                }
            })
            .collect();
        let names: Vec<String> = (0..31).map(|i| format!("\"p{i}\"")).collect();
        format!(
            r#"{{"type": "object", "properties": {{{}}}, "required": [{}], "additionalProperties": false}}"#,
            props.join(","),
            names.join(",")
        )
    };
    let text = format!(
        r#"{{"$schema": "https://flow.jig.md/schemas/schema-0.json", "type": "object", "properties": {{"a": {}, "b": {}, "c": {}, "d": {}}}, "required": ["a", "b", "c", "d"], "additionalProperties": false}}"#,
        obj(0),
        obj(1),
        obj(2),
        obj(3)
    );
    tool_host_core::agent::json::parse(&text, &tool_host_core::agent::json::DOCUMENT, "").unwrap()
}
