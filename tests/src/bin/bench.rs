//! Instructions per flow on the real canister wasm, on the local IC host: the IC cost model
//! (`docs/local-ic.md`) and wasmi fuel. `docs/perf.md` says what each set measures.
//!
//! ```text
//! bench [--full] [--write] [--gate] [--render]
//!   (none)     the quick set on the IC model, compared with the committed figures (a report)
//!   --gate     the same, failing (exit 1) when a figure grows past the tolerance, a flow is
//!              missing on either side, or docs/perf.md's results section is not the file's
//!   --full     the full set instead (steady state over 1 000 transfers, scale, growth tables)
//!   --write    runs the set on the IC model and in wasmi fuel, writes docs/perf-results.json
//!              and the results section of docs/perf.md
//!   --render   only writes docs/perf.md's results section from the committed file
//! ```
//!
//! Needs `TOOL_HOST_WASM_DIR` (the release wasms `scripts/build.sh` writes to `out/`): the
//! committed figures are of those modules. `BENCH_MAX_INTENTS` lowers the full set's largest
//! fill (1 000 000); a run so shortened says so in the file. `BENCH_SECTIONS` (comma-separated:
//! steady, blocks, input, forms, canisters, scale, limits) runs part of the full set, never
//! written.

use std::process::{Command, ExitCode};
use tool_host_tests::perf::flows::{self, Run};
use tool_host_tests::perf::results::{self, Figure, Results, Set, RESULTS_FILE};

const FULL_INTENTS: u64 = 1_000_000;

fn measure(set: Set, model: local_ic::CostModel, max: u64) -> Result<Vec<Figure>, String> {
    println!("== {set:?} set, {model:?}");
    let mut run = Run {
        set,
        model,
        max_intents: max,
        figures: vec![],
    };
    let r = match set {
        Set::Quick => flows::quick(&mut run),
        Set::Full => flows::full(&mut run),
    };
    r.map_err(|e| e.to_string())?;
    Ok(run.figures)
}

/// The host's stack: decoding the replies of a host with 50 forms (Candid, JSON of ~700 KB)
/// recurses deeper than the main thread's 8 MiB allow.
const STACK_BYTES: usize = 1 << 30;

fn main() -> ExitCode {
    let run = std::thread::Builder::new()
        .name("bench".into())
        .stack_size(STACK_BYTES)
        .spawn(real_main)
        .map_err(|e| format!("cannot start the bench thread: {e}"));
    match run.and_then(|t| {
        t.join()
            .map_err(|_| "the bench thread panicked".to_string())
    }) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) | Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<ExitCode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    for a in &args {
        if !["--full", "--write", "--gate", "--render"].contains(&a.as_str()) {
            return Err(format!(
                "unknown argument {a:?}; usage: bench [--full] [--write] [--gate] [--render]"
            ));
        }
    }
    let has = |f: &str| args.iter().any(|a| a == f);
    if has("--render") {
        let committed = Results::load()?;
        results::write_doc(&committed)?;
        println!(
            "wrote the results section of {} from {RESULTS_FILE}",
            results::PERF_DOC
        );
        return Ok(ExitCode::SUCCESS);
    }
    if std::env::var_os("TOOL_HOST_WASM_DIR").is_none() {
        return Err(
            "set TOOL_HOST_WASM_DIR to the release wasms (scripts/build.sh writes out/): the \
             committed figures are of those modules"
                .into(),
        );
    }
    let set = if has("--full") { Set::Full } else { Set::Quick };
    if set == Set::Full && has("--write") && std::env::var_os("BENCH_SECTIONS").is_some() {
        return Err(
            "BENCH_SECTIONS runs part of the full set: it is not written (unset it)".into(),
        );
    }
    let max = match std::env::var("BENCH_MAX_INTENTS") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("BENCH_MAX_INTENTS={v:?} is not a number"))?,
        Err(_) => FULL_INTENTS,
    };
    let ic = measure(set, local_ic::CostModel::Ic, max)?;
    if has("--write") {
        // The plain count of the same flows; the full set's fills stop at 10 000 intents in
        // this pass (the largest ones are measured once, on the IC model).
        let fuel = measure(set, local_ic::CostModel::WasmiFuel, max.min(10_000))?;
        let figures = results::with_fuel(ic, &fuel);
        let mut committed = Results::load().unwrap_or_else(|_| Results {
            about: String::new(),
            tolerance_percent: results::TOLERANCE_PERCENT,
            measured: Default::default(),
            figures: vec![],
        });
        let mut on = provenance();
        if set == Set::Full && max != FULL_INTENTS {
            on.push_str(&format!(
                "; fills only to {max} intents (BENCH_MAX_INTENTS), not {FULL_INTENTS}"
            ));
        }
        committed.measured.insert(set, on);
        committed.about = about();
        committed.tolerance_percent = results::TOLERANCE_PERCENT;
        committed.merge(figures);
        committed.save()?;
        results::write_doc(&committed)?;
        println!(
            "wrote {RESULTS_FILE} and the results section of {}",
            results::PERF_DOC
        );
        return Ok(ExitCode::SUCCESS);
    }
    let committed = Results::load()?;
    let (lines, ok) = results::gate(&committed, &ic, set);
    println!(
        "\n== against {RESULTS_FILE} (tolerance {} %)",
        committed.tolerance_percent
    );
    for l in &lines {
        println!("{l}");
    }
    let doc = results::doc_agrees(&committed);
    if let Err(e) = &doc {
        println!("FAIL  {e}");
    }
    let passed = ok && doc.is_ok();
    println!(
        "benchmark gate: {}",
        if passed { "passed" } else { "FAILED" }
    );
    if has("--gate") && !passed {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The code measured: `git describe --always --dirty` and today's date (UTC).
fn provenance() -> String {
    let out = |cmd: &mut Command| {
        cmd.output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = out(Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .current_dir(results::root()))
    .unwrap_or_else(|| "an unknown commit".into());
    let date = out(Command::new("date").args(["-u", "+%Y-%m-%d"])).unwrap_or_default();
    format!("`{commit}`, {date}")
}

fn about() -> String {
    "Instructions per flow on the release wasms of `scripts/build.sh`, on the local IC host: \
     the IC cost model of docs/local-ic.md (operator costs, System API overheads, 50 per reply \
     byte, stable memory bytes and dirty pages) and, beside it, wasmi fuel from a second run. \
     Both are deterministic for a given wasm. Update flows count every execution of the tool \
     host in the flow (a confirm is the confirm, the log-length reply and the transfer's reply); \
     queries count the query."
        .into()
}
