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
}
