//! Profiles the engine's hot paths natively: prepare and confirm against a scripted ledger.
//! `cargo bench -p tool-host-engine` prints time per operation; run the binary under
//! `valgrind --tool=callgrind` to see where instructions go.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use std::time::Instant;

fn main() {
    let n: u32 = std::env::var("ENGINE_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let w = World::new().setup();
    let l = tool_host_engine::types::Limits {
        max_open_intents_per_owner: 1000,
        ..Default::default()
    };
    tool_host_engine::registry::set_limits(&*w, controller(), l).unwrap();
    let t = Instant::now();
    let mut prepared = vec![];
    for i in 0..n {
        prepared.push(w.prepare(&format!("0.{:08}", i + 1)));
    }
    let prep = t.elapsed() / n;
    let t = Instant::now();
    for (id, d) in &prepared {
        w.confirm(owner(), *id, d).unwrap();
    }
    let conf = t.elapsed() / n;
    println!("| prepare (engine, native) | {prep:?} |");
    println!("| confirm (engine, native, scripted ledger) | {conf:?} |");
}
