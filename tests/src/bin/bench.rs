//! Instructions per operation on the real canister wasm: `cargo run --release -p tool-host-tests --bin bench`.
//! Runs on the local IC host, and on PocketIC when `POCKET_IC_BIN` names a server (figures that
//! PocketIC cannot give are printed as such). The table goes into docs/perf.md.

use candid::{Nat, Principal};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};
use test_ledger::types as lt;
use tool_host_engine::types::{BeginTurnArgs, BuiltinSettings, SelectArgs, ToolFormat};
use tool_host_tests::backend::{Backend, BackendError, BackendExt, InstallMode};
use tool_host_tests::check::{ApiOk, Check, Fail};
use tool_host_tests::clients::{host_arg, HostArg};
use tool_host_tests::ledgers::LedgerKind;
use tool_host_tests::local::LocalBackend;
use tool_host_tests::pocketic::{PocketIcBackend, SERVER_ENV};
use tool_host_tests::wasm::{self, Canister};
use tool_host_tests::world::{account, World, ICRC1_FORM, ICRC2_FORM, TEST_DECIMALS, TEST_FEE};

/// Set to skip the upgrade figures (filling 100 000 intents takes minutes) while iterating.
const FLOWS_ONLY_ENV: &str = "BENCH_FLOWS_ONLY";
/// `BENCH_ONLY=mcp`: only the MCP-over-HTTP figures.
const ONLY_ENV: &str = "BENCH_ONLY";

/// Goals (docs/perf.md).
const GOAL_PREPARE: u64 = 1_000_000;
const GOAL_CONFIRM: u64 = 500_000;
const GOAL_LIST_TOOLS: u64 = 20_000_000;

struct Row {
    what: String,
    value: String,
    goal: String,
}

fn row(rows: &mut Vec<Row>, what: &str, value: impl Into<String>, goal: &str) {
    let value = value.into();
    println!("  {what}: {value}");
    rows.push(Row {
        what: what.into(),
        value,
        goal: goal.into(),
    });
}

fn n(x: u64) -> String {
    let s = x.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push('\u{202f}');
        }
        out.push(c);
    }
    out
}

fn measured(r: Result<u64, BackendError>) -> Check<Option<u64>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(BackendError::Unsupported { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn show(v: Option<u64>) -> String {
    v.map(n).unwrap_or_else(|| "n/a on this backend".into())
}

/// The tool host built with its `bench` feature (adds `bench_fill`), for the upgrade figures.
fn bench_wasm() -> Result<Vec<u8>, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = wasm::build_dir().join("bench");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-unknown-unknown",
            "-p",
            "tool_host",
            "--features",
            "bench",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building the bench wasm failed".into());
    }
    std::fs::read(target.join("wasm32-unknown-unknown/release/tool_host.wasm"))
        .map_err(|e| e.to_string())
}

struct Costs {
    prepare: Option<u64>,
    confirm: Option<u64>,
    ledger: Option<u64>,
}

/// Instructions of one prepared and confirmed transfer of `amount` tokens.
fn prepare_and_confirm(w: &mut World, amount: &str) -> Check<Costs> {
    let (host, ledger) = (w.host.0, w.ledger.0);
    let before = measured(w.b.canister_instructions(host))?;
    let p = w.prepare_transfer(&w.amt(amount))?;
    let h0 = measured(w.b.canister_instructions(host))?;
    let l0 = measured(w.b.canister_instructions(ledger))?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    if r.outcome.as_deref() != Some("success") {
        return Err(Fail::Failed(format!("confirm: {}", r.content)));
    }
    let h1 = measured(w.b.canister_instructions(host))?;
    let l1 = measured(w.b.canister_instructions(ledger))?;
    let diff = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a - b);
    Ok(Costs {
        prepare: diff(h0, before),
        confirm: diff(h1, h0),
        ledger: diff(l1, l0),
    })
}

/// `count` more test ledgers, each registered with `forms`.
fn more_ledgers(w: &mut World, count: u32, forms: &[&str]) -> Check<Vec<Principal>> {
    let c = w.p.controller;
    let ledger_wasm = wasm::wasm(Canister::TestLedger).map_err(Fail::Failed)?;
    let mut out = vec![];
    for i in 1..=count {
        let l = w.b.create_canister(&[c])?;
        let init = lt::InitArgs {
            name: format!("Token {i}"),
            symbol: format!("TK{i}"),
            decimals: TEST_DECIMALS,
            fee: Nat::from(TEST_FEE),
            minting_account: account(w.p.minter),
            initial_balances: vec![],
        };
        w.b.install(
            l,
            ledger_wasm,
            candid::encode_args((init,)).expect("encodes"),
            InstallMode::Install,
            c,
        )?;
        w.host
            .register_canister(w.b.as_mut(), c, l, Some(&format!("TK{i}")), forms)?
            .ok_or_fail("register_canister")?;
        out.push(l);
    }
    Ok(out)
}

/// A copy of a pack under another name: its methods renamed (`icrc1_` / `icrc2_` become
/// `x07_`), its refs unchanged (they name the ledger's own queries), so each copy adds tools
/// of its own with the same shapes. Only for measuring a host holding many forms.
fn renamed_pack(json: &str, k: u32) -> String {
    let mut form: serde_json::Value = serde_json::from_str(json).expect("a pack is JSON");
    form["name"] = format!("copy{k:02}").into();
    let methods = form["methods"]
        .as_object()
        .expect("a pack has methods")
        .clone();
    let renamed: serde_json::Map<String, serde_json::Value> = methods
        .into_iter()
        .map(|(m, v)| {
            let rest = m
                .strip_prefix("icrc1_")
                .or_else(|| m.strip_prefix("icrc2_"))
                .unwrap_or(&m);
            (format!("x{k:02}_{rest}"), v)
        })
        .collect();
    form["methods"] = renamed.into();
    form.to_string()
}

/// The bus on a host holding 50 forms (the two packs and 48 renamed copies) on 10 ledgers:
/// listing in each format, a selection, a turn begun, and a turn's step (`current_time`
/// called in the turn against the same call outside one).
fn bus_costs(b: Box<dyn Backend>, rows: &mut Vec<Row>) -> Check {
    let mut w = World::deploy(b, LedgerKind::Test)?;
    let (c, owner) = (w.p.controller, w.p.owner);
    let mut limits = w.limits()?;
    limits.max_forms = 64;
    w.set_limits(limits)?;
    let mut ids = vec!["icrc1".to_string(), "icrc2".to_string()];
    for k in 0..48u32 {
        let (base, pack) = if k % 2 == 0 {
            ("icrc1", ICRC1_FORM)
        } else {
            ("icrc2", ICRC2_FORM)
        };
        let id = format!("{base}_copy{k:02}");
        w.host
            .register_form(w.b.as_mut(), c, &id, &renamed_pack(pack, k))?
            .ok_or_fail("register_form")?;
        ids.push(id);
    }
    let forms: Vec<&str> = ids.iter().map(String::as_str).collect();
    // The test world's own ledger carries the two packs; it gets the copies too.
    w.host
        .register_canister(w.b.as_mut(), c, w.ledger.0, Some("TKA"), &forms)?
        .ok_or_fail("register_canister (the world's ledger)")?;
    more_ledgers(&mut w, 9, &forms)?;
    w.host
        .set_builtins(
            w.b.as_mut(),
            c,
            BuiltinSettings {
                enabled: vec!["current_time".into(), "escalate".into(), "calculate".into()],
                pinned: vec![],
                unpinned: None,
                default_time_zone: None,
            },
        )?
        .ok_or_fail("set_builtins")?;
    let tools = w.host.describe_tools(w.b.as_mut(), owner)?.len();
    println!("    (50 forms on 10 ledgers: {tools} tools)");

    for (name, format) in [
        ("mcp", ToolFormat::Mcp),
        ("openai", ToolFormat::OpenAi),
        ("openai_responses", ToolFormat::OpenAiResponses),
        ("anthropic", ToolFormat::Anthropic),
        ("markdown", ToolFormat::Markdown),
        ("jsonschema", ToolFormat::JsonSchema),
    ] {
        let text = w.host.list_tools_in(w.b.as_mut(), owner, Some(format))?;
        let cost = measured(w.b.last_instructions())?;
        row(
            rows,
            &format!(
                "list tools as {name}: 50 forms on 10 ledgers ({} bytes)",
                n(text.len() as u64)
            ),
            show(cost),
            "",
        );
    }
    let query = "send 1.5 tokens to an account on the ledger";
    let picked = w
        .host
        .select_tools(
            w.b.as_mut(),
            owner,
            SelectArgs {
                query: query.into(),
                limit: None,
                owner: None,
            },
        )?
        .ok_or_fail("select_tools")?;
    let cost = measured(w.b.last_instructions())?;
    row(
        rows,
        &format!(
            "select 6 of {tools} tools for a request ({} chosen)",
            picked.len()
        ),
        show(cost),
        "",
    );
    let host = w.host.0;
    let before = measured(w.b.canister_instructions(host))?;
    let turn = w
        .host
        .begin_turn(
            w.b.as_mut(),
            owner,
            BeginTurnArgs {
                query: "what is the current time".into(),
                limit: None,
                format: Some(ToolFormat::Anthropic),
                owner: None,
            },
        )?
        .ok_or_fail("begin_turn")?;
    let after = measured(w.b.canister_instructions(host))?;
    row(
        rows,
        "begin a turn: select 6, render for Anthropic, record the turn",
        show(after.zip(before).map(|(a, b)| a - b)),
        "",
    );
    if !turn.offered.iter().any(|t| t == "current_time") {
        return Err(Fail::Failed(format!(
            "the turn did not offer current_time: {:?}",
            turn.offered
        )));
    }
    let input = r#"{"timezone":"Europe/Zurich"}"#;
    // Once each first, so neither pays a first call's costs.
    let mut step = None;
    let mut plain = None;
    for _ in 0..2 {
        let t0 = measured(w.b.canister_instructions(host))?;
        let r = w
            .host
            .call_tool_in_turn(
                w.b.as_mut(),
                owner,
                turn.turn_id,
                "current_time",
                input,
                None,
            )?
            .ok_or_fail("current_time in the turn")?;
        let t1 = measured(w.b.canister_instructions(host))?;
        let r2 = w
            .host
            .call_tool(w.b.as_mut(), owner, "current_time", input, None)?
            .ok_or_fail("current_time outside a turn")?;
        let t2 = measured(w.b.canister_instructions(host))?;
        if r.is_error || r2.is_error {
            return Err(Fail::Failed(format!(
                "current_time: {} / {}",
                r.content, r2.content
            )));
        }
        step = t1.zip(t0).map(|(a, b)| a - b);
        plain = t2.zip(t1).map(|(a, b)| a - b);
    }
    row(
        rows,
        "current_time in a turn (a step recorded)",
        show(step),
        "",
    );
    row(rows, "current_time outside a turn", show(plain), "");
    Ok(())
}

/// MCP over HTTP on the packs and one ledger: each JSON-RPC request as the IC's HTTP gateway
/// sends it, the query `http_request` and, where it answers `upgrade`, the update
/// `http_request_update`, each counted alone (the second of two identical requests).
fn mcp_http_costs(b: Box<dyn Backend>, rows: &mut Vec<Row>) -> Check {
    use tool_host_tests::gateway::{HttpRequest, HttpResponse};
    let mut w = World::deploy(b, LedgerKind::Test)?;
    let owner = w.p.owner;
    let token = w
        .host
        .issue_agent_token(w.b.as_mut(), owner, "bench", None)?
        .ok_or_fail("issue_agent_token")?;
    let host = w.host.0;
    let balance = serde_json::json!({ "name": "icrc1_balance_of", "arguments": {
        "canister_id": w.ledger.0.to_text(), "account": owner.to_text() } });
    let transfer: serde_json::Value = serde_json::from_str(&w.transfer_input(&w.amt("1")))
        .map_err(|x| Fail::Failed(x.to_string()))?;
    let prepare = serde_json::json!({ "name": "prepare_icrc1_transfer", "arguments": transfer });
    let requests = [
        (
            "initialize",
            "initialize",
            serde_json::json!({ "protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } }),
        ),
        (
            "tools/list (first page)",
            "tools/list",
            serde_json::json!({}),
        ),
        ("tools/call icrc1_balance_of", "tools/call", balance),
        ("tools/call prepare_icrc1_transfer", "tools/call", prepare),
    ];
    for (what, method, params) in requests {
        let body =
            serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        let request = HttpRequest {
            method: "POST".into(),
            url: "/mcp".into(),
            headers: vec![
                ("content-type".into(), "application/json".into()),
                (
                    "accept".into(),
                    "application/json, text/event-stream".into(),
                ),
                ("authorization".into(), format!("Bearer {}", token.secret)),
                ("mcp-protocol-version".into(), "2025-11-25".into()),
            ],
            body: body.to_string().into_bytes(),
            certificate_version: Some(2),
        };
        let mut query_cost = None;
        let mut update_cost = None;
        let mut bytes = 0;
        for _ in 0..2 {
            let (r,): (HttpResponse,) = w.b.query_typed(
                host,
                Principal::anonymous(),
                "http_request",
                (request.clone(),),
            )?;
            query_cost = measured(w.b.last_instructions())?;
            bytes = r.body.len();
            if r.upgrade == Some(true) {
                let (u,): (HttpResponse,) = w.b.update_typed(
                    host,
                    Principal::anonymous(),
                    "http_request_update",
                    (request.clone(),),
                )?;
                if u.status_code != 200 {
                    return Err(Fail::Failed(format!(
                        "{what}: {} {}",
                        u.status_code,
                        String::from_utf8_lossy(&u.body)
                    )));
                }
                bytes = u.body.len();
                update_cost = measured(w.b.last_instructions())?;
            } else if r.status_code != 200 {
                return Err(Fail::Failed(format!(
                    "{what}: {} {}",
                    r.status_code,
                    String::from_utf8_lossy(&r.body)
                )));
            }
        }
        let value = match update_cost {
            Some(u) => format!("{} + {} (query, then update)", show(query_cost), n(u)),
            None => format!("{} (query)", show(query_cost)),
        };
        row(
            rows,
            &format!("MCP over HTTP: {what} ({} reply bytes)", n(bytes as u64)),
            value,
            "",
        );
    }
    Ok(())
}

fn flows(b: Box<dyn Backend>, rows: &mut Vec<Row>) -> Check {
    let mut w = World::deploy(b, LedgerKind::Test)?;
    // Nine more ledgers: ICRC-1 + ICRC-2 on ten canisters.
    let _ = more_ledgers(&mut w, 9, &["icrc1", "icrc2"])?;
    let defs = w.host.list_tools(w.b.as_mut(), Principal::anonymous())?;
    let list = measured(w.b.last_instructions())?;
    row(
        rows,
        &format!(
            "list tools: ICRC-1 + ICRC-2 on 10 ledgers ({} bytes of JSON)",
            defs.len()
        ),
        show(list),
        &format!("≤ {}", n(GOAL_LIST_TOOLS)),
    );

    // The first prepare and confirm after an install pay one-time costs (heap growth, lazily
    // built caches); the goals are for the calls after them, measured second.
    let first = prepare_and_confirm(&mut w, "1")?;
    let steady = prepare_and_confirm(&mut w, "1.25")?;
    row(
        rows,
        "prepare a transfer (prepare_icrc1_transfer)",
        show(steady.prepare),
        &format!("≤ {}", n(GOAL_PREPARE)),
    );
    row(
        rows,
        "  the first prepare after the install",
        show(first.prepare),
        "",
    );
    row(
        rows,
        "confirm and send, the tool host's own (3 executions: confirm, log length, reply)",
        show(steady.confirm),
        &format!("≤ {}", n(GOAL_CONFIRM)),
    );
    row(
        rows,
        "  the first confirm after the install",
        show(first.confirm),
        "",
    );
    row(
        rows,
        "  the ledger's share of the same confirm (log length + transfer)",
        show(steady.ledger),
        "",
    );

    let tick = reconcile_tick(&mut w, "2")?;
    row(
        rows,
        "a reconcile tick (one unknown intent: fresh call, scan, settle)",
        show(tick),
        "",
    );
    Ok(())
}

/// An unknown outcome (the ledger rejects with code 4 without executing), then the timer's
/// reconciliation: a fresh call, a scan from the journaled log length, absent. Answers the tool
/// host's instructions for the tick.
fn reconcile_tick(w: &mut World, amount: &str) -> Check<Option<u64>> {
    let host = w.host.0;
    // An unknown outcome (the ledger rejects with code 4 without executing), then the timer's
    // reconciliation: a fresh call, a scan from the journaled log length, absent.
    let p = w.prepare_transfer(&w.amt(amount))?;
    w.fault("icrc1_transfer", lt::Fault::Reject("bench".into()))?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    if r.outcome.as_deref() != Some("unknown") {
        return Err(Fail::Failed(format!("expected unknown: {}", r.content)));
    }
    let delay = w.limits()?.reconcile_delay_seconds;
    w.b.advance_time(Duration::from_secs(delay + 1));
    let t0 = measured(w.b.canister_instructions(host))?;
    w.b.run_until_quiet(1_000)?;
    let t1 = measured(w.b.canister_instructions(host))?;
    let settled = w.intent(p.id)?;
    if settled.status != "settled" {
        return Err(Fail::Failed(format!(
            "the reconciliation did not settle the intent: {settled:?}"
        )));
    }
    Ok(t1.zip(t0).map(|(a, b)| a - b))
}

fn upgrades(b: Box<dyn Backend>, rows: &mut Vec<Row>) -> Check {
    let bench = bench_wasm().map_err(Fail::Failed)?;
    let real = wasm::wasm(Canister::ToolHost)
        .map_err(Fail::Failed)?
        .to_vec();
    let mut w = World::deploy_with(b, LedgerKind::Test, &bench)?;
    let (host, c) = (w.host.0, w.p.controller);
    // Room for the filled intents (the default keeps 100 000).
    let mut limits = w.limits()?;
    limits.max_intents = 10_000_000;
    w.set_limits(limits)?;
    let p = w.prepare_transfer(&w.amt("1"))?;
    w.confirm_ok(p.id, &p.digest)?;
    let upgrade_arg = host_arg(HostArg::Upgrade(None));
    let mut filled = 0u64;
    let mut first_bytes = None;
    for target in [0u64, 10_000, 100_000] {
        let t = Instant::now();
        while filled < target {
            let batch = (target - filled).min(5_000);
            let _: (u64,) = w.b.update_typed(host, c, "bench_fill", (p.id, batch))?;
            filled += batch;
        }
        let fill_time = t.elapsed();
        let stats = w.stats()?;
        w.b.install(host, &real, upgrade_arg.clone(), InstallMode::Upgrade, c)?;
        let cost = measured(w.b.last_instructions())?;
        row(
            rows,
            &format!("upgrade holding {} intents", n(target)),
            show(cost),
            "the same for 0 and 100 000",
        );
        println!(
            "    ({} intents, {} stable bytes; filled in {fill_time:?})",
            stats.intents,
            n(stats.stable_bytes)
        );
        if target == 0 {
            first_bytes = Some(stats.stable_bytes);
        } else if target == 100_000 {
            let per = (stats.stable_bytes - first_bytes.unwrap_or(0)) / target;
            row(
                rows,
                "stable-memory bytes per intent (settled transfer, with its indexes)",
                n(per),
                "",
            );
        }
        if target == 100_000 {
            // The same prepare and confirm with the indexes that large (deeper B-trees).
            prepare_and_confirm(&mut w, "1")?;
            let at_scale = prepare_and_confirm(&mut w, "1.25")?;
            row(
                rows,
                "prepare a transfer, holding 100 000 intents",
                show(at_scale.prepare),
                &format!("≤ {}", n(GOAL_PREPARE)),
            );
            row(
                rows,
                "confirm and send, holding 100 000 intents",
                show(at_scale.confirm),
                &format!("≤ {}", n(GOAL_CONFIRM)),
            );
            let tick = reconcile_tick(&mut w, "3")?;
            row(
                rows,
                "a reconcile tick, holding 100 000 intents",
                show(tick),
                "",
            );
            break;
        }
        // Back to the bench build to keep filling.
        w.b.install(host, &bench, upgrade_arg.clone(), InstallMode::Upgrade, c)?;
    }
    Ok(())
}

fn run(name: &str, make: &dyn Fn() -> Result<Box<dyn Backend>, BackendError>) -> Check<Vec<Row>> {
    println!("== {name}");
    let mut rows = vec![];
    if std::env::var(ONLY_ENV).as_deref() == Ok("mcp") {
        println!("  (MCP over HTTP only: {ONLY_ENV}=mcp)");
        mcp_http_costs(make()?, &mut rows)?;
        return Ok(rows);
    }
    flows(make()?, &mut rows)?;
    bus_costs(make()?, &mut rows)?;
    mcp_http_costs(make()?, &mut rows)?;
    if std::env::var_os(FLOWS_ONLY_ENV).is_some() {
        println!("  (upgrades not run: {FLOWS_ONLY_ENV} is set)");
    } else {
        upgrades(make()?, &mut rows)?;
    }
    Ok(rows)
}

fn main() -> ExitCode {
    let mut failed = false;
    let mut tables = vec![];
    let local = || -> Result<Box<dyn Backend>, BackendError> { Ok(Box::new(LocalBackend::new())) };
    // The count the local host keeps (LOCAL_IC_COST_MODEL), named in the table's title.
    let local_name = match local_ic::CostModel::from_env() {
        local_ic::CostModel::Ic => "local IC host (IC cost model)",
        local_ic::CostModel::WasmiFuel => "local IC host (wasmi fuel)",
    };
    match run(local_name, &local) {
        Ok(rows) => tables.push((local_name, rows)),
        Err(e) => {
            eprintln!("local: {e}");
            failed = true;
        }
    }
    if std::env::var_os(SERVER_ENV).is_some() {
        let pocket =
            || -> Result<Box<dyn Backend>, BackendError> { Ok(Box::new(PocketIcBackend::new()?)) };
        match run("PocketIC", &pocket) {
            Ok(rows) => tables.push(("PocketIC", rows)),
            Err(e) => {
                eprintln!("pocketic: {e}");
                failed = true;
            }
        }
    } else {
        println!("== PocketIC: not run ({SERVER_ENV} not set)");
    }
    for (name, rows) in tables {
        println!("\n### {name}\n\n| operation | instructions | goal |\n|---|---|---|");
        for r in rows {
            println!("| {} | {} | {} |", r.what, r.value, r.goal);
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
