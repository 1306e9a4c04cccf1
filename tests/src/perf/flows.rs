//! The flows the benchmark measures, on the local IC host with the real wasms.
//!
//! The quick set (the gate's) runs in about a minute; the full set adds the steady state over
//! 1 000 transfers, upgrades holding up to 1 000 000 intents with 50 forms on 100 canisters,
//! and the growth tables (intents, forms, canisters, blocks scanned, input bytes).

use super::results::{Figure, Set};
use crate::backend::{Backend, BackendExt, InstallMode};
use crate::check::{ApiOk, Check, Fail};
use crate::clients::{host_arg, HostArg};
use crate::ledgers::LedgerKind;
use crate::local::LocalBackend;
use crate::wasm::{self, Canister};
use crate::world::{account, prepared_of, World, ICRC1_FORM, ICRC2_FORM, TEST_DECIMALS, TEST_FEE};
use candid::{Nat, Principal};
use local_ic::CostModel;
use std::time::Duration;
use test_ledger::types as lt;
use tool_host_engine::types::{
    BeginTurnArgs, BuiltinSettings, ListToolsArgs, SelectArgs, ToolFormat,
};

/// Goals on the IC cost model (issue 13).
pub const GOAL_PREPARE: u64 = 1_000_000;
pub const GOAL_PREPARE_MAX: u64 = 1_500_000;
pub const GOAL_CONFIRM: u64 = 500_000;
pub const GOAL_LIST_PAGE: u64 = 2_000_000;
pub const GOAL_REFRESH_PER_TARGET: u64 = 5_000_000;
pub const GOAL_PER_BLOCK: u64 = 30_000;
pub const GOAL_UPGRADE: u64 = 30_000_000;
pub const GOAL_BYTES_PER_INTENT: u64 = 1024;

/// What a run measures and how it counts.
pub struct Run {
    pub set: Set,
    pub model: CostModel,
    /// The largest fill of the full set (1 000 000; less while iterating).
    pub max_intents: u64,
    pub figures: Vec<Figure>,
}

impl Run {
    fn backend(&self) -> Box<dyn Backend> {
        Box::new(LocalBackend::with_cost_model(self.model))
    }

    fn put(&mut self, group: &str, flow: impl Into<String>, ic: u64, goal: Option<u64>) {
        self.put_unit(group, flow, ic, goal, None);
    }

    fn put_unit(
        &mut self,
        group: &str,
        flow: impl Into<String>,
        value: u64,
        goal: Option<u64>,
        unit: Option<&str>,
    ) {
        let flow = flow.into();
        println!(
            "  {group} | {flow}: {value}{}",
            unit.map(|u| format!(" {u}")).unwrap_or_default()
        );
        self.figures.push(Figure {
            set: self.set,
            group: group.into(),
            flow,
            ic: value,
            fuel: None,
            goal,
            unit: unit.map(Into::into),
        });
    }
}

/// The tool host's count so far (all its replicated executions).
fn host_count(w: &mut World) -> Check<u64> {
    Ok(w.b.canister_instructions(w.host.0)?)
}

/// The count of the last query, update or install.
fn last(w: &mut World) -> Check<u64> {
    Ok(w.b.last_instructions()?)
}

/// An owner and the agent it authorized.
#[derive(Clone, Copy)]
pub struct Owner {
    pub owner: Principal,
    pub agent: Principal,
}

fn principal(n: u8) -> Principal {
    Principal::self_authenticating([n; 32])
}

/// `n` owners, each with an agent and a deposit account holding `tokens`: the world's two,
/// then more.
pub fn owners(w: &mut World, n: usize, tokens: u64) -> Check<Vec<Owner>> {
    let mut out = vec![
        Owner {
            owner: w.p.owner,
            agent: w.p.agent,
        },
        Owner {
            owner: w.p.other_owner,
            agent: w.p.other_agent,
        },
    ];
    for i in 0..n.saturating_sub(2) {
        let o = Owner {
            owner: principal(100 + i as u8),
            agent: principal(150 + i as u8),
        };
        w.host
            .authorize_agent(w.b.as_mut(), o.owner, o.agent)?
            .ok_or_fail("authorize_agent")?;
        out.push(o);
    }
    out.truncate(n);
    for o in &out {
        fund(w, o, tokens)?;
    }
    Ok(out)
}

/// `n` owners the canister has never seen, distinct for each `round`, each with an agent and
/// a deposit account holding `tokens`.
fn new_owners(w: &mut World, round: u64, n: usize, tokens: u64) -> Check<Vec<Owner>> {
    let key = |role: u8, i: usize| {
        let mut k = [role; 32];
        k[1..9].copy_from_slice(&round.to_be_bytes());
        k[9] = i as u8;
        Principal::self_authenticating(k)
    };
    let mut out = vec![];
    for i in 0..n {
        let o = Owner {
            owner: key(0xb0, i),
            agent: key(0xb1, i),
        };
        w.host
            .authorize_agent(w.b.as_mut(), o.owner, o.agent)?
            .ok_or_fail("authorize_agent")?;
        fund(w, &o, tokens)?;
        out.push(o);
    }
    Ok(out)
}

/// Mints `tokens` to `o`'s deposit account.
fn fund(w: &mut World, o: &Owner, tokens: u64) -> Check {
    let d = w
        .host
        .deposit_account(w.b.as_mut(), o.owner)?
        .ok_or_fail("deposit_account")?;
    let to = lt::Account {
        owner: d.account.owner,
        subaccount: d.account.subaccount,
    };
    let amount = w.tokens(tokens);
    w.mint(&to, amount)?;
    Ok(())
}

/// A transfer's two costs: prepare (one execution) and the tool host's share of the confirm
/// (the confirm, the log-length reply, the transfer's reply).
pub struct Transfer {
    pub prepare: u64,
    pub confirm: u64,
}

/// `o`'s agent prepares a transfer of `amount` tokens and `o` confirms it.
pub fn transfer(w: &mut World, o: Owner, amount: &str) -> Check<Transfer> {
    let input = w.transfer_input(&w.amt(amount));
    transfer_input(w, o, &input)
}

fn transfer_input(w: &mut World, o: Owner, input: &str) -> Check<Transfer> {
    let t0 = host_count(w)?;
    let r = w
        .host
        .call_tool(
            w.b.as_mut(),
            o.agent,
            "prepare_icrc1_transfer",
            input,
            Some(o.owner),
        )?
        .ok_or_fail("prepare_icrc1_transfer")?;
    if r.is_error {
        return Err(Fail::Failed(format!("prepare: {}", r.content)));
    }
    let p = prepared_of(&r)?;
    let t1 = host_count(w)?;
    let c = w
        .host
        .confirm(w.b.as_mut(), o.owner, p.id, &p.digest)?
        .ok_or_fail("confirm")?;
    if c.outcome.as_deref() != Some("success") {
        return Err(Fail::Failed(format!("confirm: {}", c.content)));
    }
    let t2 = host_count(w)?;
    Ok(Transfer {
        prepare: t1 - t0,
        confirm: t2 - t1,
    })
}

/// A distinct amount per transfer of the process (each its own intent), about one token.
fn amount() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("1.{k:06}")
}

fn median(xs: &mut [u64]) -> u64 {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

/// `count` transfers round-robin over `owners`; the median and the maximum of each cost.
fn transfers(
    run: &mut Run,
    w: &mut World,
    owners: &[Owner],
    count: usize,
    group: &str,
    label: &str,
) -> Check {
    let (mut prepares, mut confirms) = (vec![], vec![]);
    for i in 0..count {
        let t = transfer(w, owners[i % owners.len()], &amount())?;
        prepares.push(t.prepare);
        confirms.push(t.confirm);
    }
    let n = owners.len();
    put_median_and_max(
        run,
        group,
        &mut prepares,
        (
            format!("prepare a transfer, median of {count} by {n} owners{label}"),
            Some(GOAL_PREPARE),
        ),
        (
            format!("prepare a transfer, maximum of {count}{label}"),
            Some(GOAL_PREPARE_MAX),
        ),
    );
    put_median_and_max(
        run,
        group,
        &mut confirms,
        (
            format!("confirm and send (the tool host's share), median of {count}{label}"),
            Some(GOAL_CONFIRM),
        ),
        (
            format!("confirm and send (the tool host's share), maximum of {count}{label}"),
            None,
        ),
    );
    Ok(())
}

/// Puts the median of `xs` and their maximum, each a flow with its goal (sorts `xs`).
fn put_median_and_max(
    run: &mut Run,
    group: &str,
    xs: &mut [u64],
    (median_flow, median_goal): (String, Option<u64>),
    (max_flow, max_goal): (String, Option<u64>),
) {
    let m = median(xs);
    let most = *xs.last().expect("some");
    run.put(group, median_flow, m, median_goal);
    run.put(group, max_flow, most, max_goal);
}

/// Upgrades the tool host to `wasm`, then runs the rounds in which its catalog is built (a timer
/// message of its own, which `post_upgrade` leaves it to); answers both counts.
fn upgrade(w: &mut World, wasm: &[u8]) -> Check<(u64, u64)> {
    let (host, c) = (w.host.0, w.p.controller);
    w.b.install(
        host,
        wasm,
        host_arg(HostArg::Upgrade(None)),
        InstallMode::Upgrade,
        c,
    )?;
    let install = last(w)?;
    let t0 = host_count(w)?;
    // The global timer, then the timers' own messages (ic-cdk-timers runs each in a self-call).
    w.b.run_until_quiet(100)?;
    let catalog = host_count(w)? - t0;
    if catalog == 0 {
        return Err(Fail::Failed(
            "no timer message ran in the round after the upgrade".into(),
        ));
    }
    Ok((install, catalog))
}

/// [`upgrade`], put as two flows: the upgrade (`flow`, against its goal) and the catalog's build
/// after it.
fn put_upgrade(
    run: &mut Run,
    w: &mut World,
    wasm: &[u8],
    g: &str,
    flow: &str,
    held: &str,
) -> Check {
    let (up, catalog) = upgrade(w, wasm)?;
    run.put(g, flow, up, Some(GOAL_UPGRADE));
    run.put(
        g,
        format!("the catalog built after that upgrade (its own timer message), {held}"),
        catalog,
        None,
    );
    Ok(())
}

/// An unknown outcome (the ledger rejects the transfer without executing it), `blocks` other
/// transfers on the ledger, then the timer's reconciliation (a fresh call, a scan from the
/// journaled log length, absent): answers the tool host's count for the tick.
pub fn reconcile_tick(w: &mut World, blocks: u64, amount: &str) -> Check<u64> {
    let p = w.prepare_transfer(&w.amt(amount))?;
    w.fault("icrc1_transfer", lt::Fault::Reject("bench".into()))?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    if r.outcome.as_deref() != Some("unknown") {
        return Err(Fail::Failed(format!("expected unknown: {}", r.content)));
    }
    let to = account(w.p.recipient);
    for _ in 0..blocks {
        w.mint(&to, 1)?;
    }
    let delay = w.limits()?.reconcile_delay_seconds;
    w.b.advance_time(Duration::from_secs(delay + 1));
    let t0 = host_count(w)?;
    w.b.run_until_quiet(1_000)?;
    let t1 = host_count(w)?;
    let settled = w.intent(p.id)?;
    if settled.status != "settled" {
        return Err(Fail::Failed(format!(
            "the reconciliation did not settle the intent: {settled:?}"
        )));
    }
    Ok(t1 - t0)
}

/// `count` more test ledgers, each registered with `forms` (for a single owner when `owner`
/// is given); answers them and the count of the last registration.
pub fn more_ledgers(
    w: &mut World,
    count: u32,
    forms: &[&str],
    owner: Option<Principal>,
) -> Check<(Vec<Principal>, u64)> {
    let c = w.p.controller;
    let ledger_wasm = wasm::wasm(Canister::TestLedger).map_err(Fail::Failed)?;
    let mut out = vec![];
    let mut cost = 0;
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
        let t0 = host_count(w)?;
        w.host
            .register_canister_for(w.b.as_mut(), c, l, Some(&format!("TK{i}")), forms, owner)?
            .ok_or_fail("register_canister")?;
        cost = host_count(w)? - t0;
        out.push(l);
    }
    Ok((out, cost))
}

/// A copy of a pack under another name: its methods renamed (`icrc1_` / `icrc2_` become
/// `xNN_`), its refs unchanged (they name the ledger's own queries), so each copy adds tools of
/// its own with the same shapes. Only for measuring a host holding many forms.
pub fn renamed_pack(json: &str, k: u32) -> String {
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

/// Registers copies `from..to` of the packs; answers their ids and the count of the last one.
fn more_forms(w: &mut World, from: u32, to: u32) -> Check<(Vec<String>, u64)> {
    let c = w.p.controller;
    let mut ids = vec![];
    let mut cost = 0;
    for k in from..to {
        let (base, pack) = if k % 2 == 0 {
            ("icrc1", ICRC1_FORM)
        } else {
            ("icrc2", ICRC2_FORM)
        };
        let id = format!("{base}_copy{k:02}");
        let t0 = host_count(w)?;
        w.host
            .register_form(w.b.as_mut(), c, &id, &renamed_pack(pack, k))?
            .ok_or_fail("register_form")?;
        cost = host_count(w)? - t0;
        ids.push(id);
    }
    Ok((ids, cost))
}

fn room(w: &mut World, forms: u32, canisters: u32) -> Check {
    let mut limits = w.limits()?;
    limits.max_forms = limits.max_forms.max(forms);
    limits.max_canisters = limits.max_canisters.max(canisters);
    limits.max_intents = 10_000_000;
    limits.max_intents_per_owner = 100_000;
    w.set_limits(limits)?;
    Ok(())
}

/// The whole tool list (MCP, no argument) as a query: its count and size.
fn list_whole(w: &mut World) -> Check<(u64, usize)> {
    let text = w.host.list_tools(w.b.as_mut(), Principal::anonymous())?;
    Ok((last(w)?, text.len()))
}

/// Every page of `list_tools_page` in `format` (the default bound): the costliest page's
/// count, the number of pages and the largest page's bytes.
fn list_pages(w: &mut World, format: ToolFormat) -> Check<(u64, usize, usize)> {
    let mut cursor = None;
    let (mut worst, mut pages, mut largest) = (0u64, 0usize, 0usize);
    loop {
        let args = ListToolsArgs {
            format: Some(format),
            cursor,
            max_bytes: None,
        };
        let p = w
            .host
            .list_tools_page(w.b.as_mut(), Principal::anonymous(), args)?
            .ok_or_fail("list_tools_page")?;
        worst = worst.max(last(w)?);
        pages += 1;
        largest = largest.max(p.tools.len());
        cursor = p.next;
        if cursor.is_none() {
            return Ok((worst, pages, largest));
        }
        if pages > 10_000 {
            return Err(Fail::Failed("list_tools_page never ends".into()));
        }
    }
}

/// `list_pages` put as a figure with the page goal.
fn put_pages(run: &mut Run, w: &mut World, g: &str, format: ToolFormat, what: &str) -> Check {
    let (worst, pages, largest) = list_pages(w, format)?;
    run.put(
        g,
        format!(
            "list_tools_page as {}, {what}: the costliest of {pages} pages (≤ {largest} bytes)",
            tool_host_core::bus::ToolFormat::from(format).as_str()
        ),
        worst,
        Some(GOAL_LIST_PAGE),
    );
    Ok(())
}

/// The bus on the world as it is: a selection, a turn begun and a step in it.
fn bus(run: &mut Run, w: &mut World, group: &str, label: &str) -> Check {
    let (c, owner) = (w.p.controller, w.p.owner);
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
    let args = SelectArgs {
        query: "send 1.5 tokens to an account on the ledger".into(),
        limit: None,
        owner: None,
    };
    // Twice: the first builds what the bus keeps.
    for _ in 0..2 {
        w.host
            .select_tools(w.b.as_mut(), owner, args.clone())?
            .ok_or_fail("select_tools")?;
    }
    let select = last(w)?;
    run.put(
        group,
        format!("select 6 tools for a request{label}"),
        select,
        None,
    );
    let t0 = host_count(w)?;
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
    let begin = host_count(w)? - t0;
    run.put(
        group,
        format!("begin a turn: select 6, render for Anthropic, record it{label}"),
        begin,
        None,
    );
    let input = r#"{"timezone":"Europe/Zurich"}"#;
    let mut step = 0;
    for _ in 0..2 {
        let t0 = host_count(w)?;
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
            .ok_or_fail("current_time in a turn")?;
        if r.is_error {
            return Err(Fail::Failed(format!("current_time: {}", r.content)));
        }
        step = host_count(w)? - t0;
    }
    run.put(
        group,
        format!("a turn's step (current_time, recorded){label}"),
        step,
        None,
    );
    Ok(())
}

/// MCP over HTTP: each request as the IC's HTTP gateway sends it (the query, then the update
/// it answers `upgrade` for), the second of two identical requests.
fn mcp_http(run: &mut Run, w: &mut World, group: &str) -> Check {
    use crate::gateway::{HttpRequest, HttpResponse};
    let (owner, host) = (w.p.owner, w.host.0);
    let token = w
        .host
        .issue_agent_token(w.b.as_mut(), owner, "bench", None)?
        .ok_or_fail("issue_agent_token")?;
    let transfer: serde_json::Value = serde_json::from_str(&w.transfer_input(&w.amt("1")))
        .map_err(|x| Fail::Failed(x.to_string()))?;
    let requests = [
        (
            "tools/list, the first page",
            "tools/list",
            serde_json::json!({}),
        ),
        (
            "tools/call prepare_icrc1_transfer",
            "tools/call",
            serde_json::json!({ "name": "prepare_icrc1_transfer", "arguments": transfer }),
        ),
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
        let (mut q, mut u) = (0, 0);
        for _ in 0..2 {
            let (r,): (HttpResponse,) = w.b.query_typed(
                host,
                Principal::anonymous(),
                "http_request",
                (request.clone(),),
            )?;
            q = last(w)?;
            if r.upgrade != Some(true) {
                return Err(Fail::Failed(format!("{what}: the query did not upgrade")));
            }
            let (r,): (HttpResponse,) = w.b.update_typed(
                host,
                Principal::anonymous(),
                "http_request_update",
                (request.clone(),),
            )?;
            if r.status_code != 200 {
                return Err(Fail::Failed(format!(
                    "{what}: {} {}",
                    r.status_code,
                    String::from_utf8_lossy(&r.body)
                )));
            }
            u = last(w)?;
        }
        run.put(group, format!("MCP over HTTP {what}: the query"), q, None);
        run.put(group, format!("MCP over HTTP {what}: the update"), u, None);
    }
    Ok(())
}

/// The gate's set: one ledger with the ICRC packs, three owners.
pub fn quick(run: &mut Run) -> Check {
    let real = wasm::wasm(Canister::ToolHost)
        .map_err(Fail::Failed)?
        .to_vec();
    let mut w = World::deploy(run.backend(), LedgerKind::Test)?;
    let os = owners(&mut w, 3, 100)?;
    for o in &os {
        transfer(&mut w, *o, &amount())?;
    }
    let g = "transfers";
    transfers(run, &mut w, &os, 24, g, "")?;
    let (list, bytes) = list_whole(&mut w)?;
    run.put(
        g,
        format!("list tools (the whole list), MCP, the ICRC packs on 1 ledger ({bytes} bytes)"),
        list,
        None,
    );
    let packs = "the ICRC packs on 1 ledger";
    put_pages(run, &mut w, g, ToolFormat::Mcp, packs)?;
    put_pages(run, &mut w, g, ToolFormat::OpenAi, packs)?;
    let base = reconcile_tick(&mut w, 0, &amount())?;
    let scanned = reconcile_tick(&mut w, 50, &amount())?;
    run.put(g, "a reconcile tick (nothing else in the log)", base, None);
    run.put_unit(
        g,
        "reconciliation per block scanned (a tick past 50 other blocks)",
        scanned.saturating_sub(base) / 50,
        Some(GOAL_PER_BLOCK),
        Some("instructions per block"),
    );
    let (c, ledger) = (w.p.controller, w.ledger.0);
    let t0 = host_count(&mut w)?;
    w.host
        .refresh_refs(w.b.as_mut(), c, Some(ledger))?
        .ok_or_fail("refresh_refs")?;
    let refresh = host_count(&mut w)? - t0;
    run.put(
        g,
        "refs refresh of one target (nothing changed)",
        refresh,
        Some(GOAL_REFRESH_PER_TARGET),
    );
    put_upgrade(
        run,
        &mut w,
        &real,
        g,
        "upgrade (2 forms, 1 ledger, ~30 intents)",
        "2 forms, 1 ledger",
    )?;
    transfers(run, &mut w, &os, 9, g, ", after an upgrade")?;
    let (_, form) = more_forms(&mut w, 0, 1)?;
    run.put(g, "register a third form", form, None);
    let (_, canister) = more_ledgers(&mut w, 1, &["icrc1", "icrc2"], None)?;
    run.put(
        g,
        "register a second ledger (its refs read)",
        canister,
        None,
    );
    bus(run, &mut w, "bus and MCP", "")?;
    mcp_http(run, &mut w, "bus and MCP")?;
    let per_intent = floors_released(&mut w)?;
    run.put_unit(
        g,
        "a settled intent's floor released and its body packed (its prune task's first run)",
        per_intent,
        None,
        Some("instructions per intent"),
    );
    Ok(())
}

/// A day after the stamps: every intent is settled, and its prune task's first run releases
/// its floor and packs its body. The clock is moved to just short of that first (the expiries,
/// a refs refresh) and then past it; answers the second tick's count per intent kept.
fn floors_released(w: &mut World) -> Check<u64> {
    w.b.advance_time(Duration::from_secs(23 * 3_600));
    w.b.run_until_quiet(1_000)?;
    let intents = w.stats()?.intents;
    w.b.advance_time(Duration::from_secs(2 * 3_600));
    let t0 = host_count(w)?;
    w.b.run_until_quiet(1_000)?;
    let spent = host_count(w)? - t0;
    if intents == 0 {
        return Err(Fail::Failed("no intents to release".into()));
    }
    Ok(spent / intents)
}

/// The full benchmark: steady state, upgrades and scale, and the growth tables.
/// The full set's sections, by the names `BENCH_SECTIONS` takes.
pub const SECTIONS: [&str; 7] = [
    "steady",
    "blocks",
    "input",
    "forms",
    "canisters",
    "scale",
    "limits",
];

/// The full set, or the sections `BENCH_SECTIONS` names (comma-separated, while iterating;
/// `bench` writes no partial set).
pub fn full(run: &mut Run) -> Check {
    let only = std::env::var("BENCH_SECTIONS").ok();
    let on = |s: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|x| x.trim() == s))
    };
    if let Some(o) = &only {
        if let Some(bad) = o.split(',').find(|x| !SECTIONS.contains(&x.trim())) {
            return Err(Fail::Failed(format!(
                "BENCH_SECTIONS names {bad:?}; the sections are {SECTIONS:?}"
            )));
        }
    }
    type Section = fn(&mut Run) -> Check;
    let sections: [(&str, Section); 7] = [
        ("steady", steady),
        ("blocks", growth_blocks),
        ("input", growth_input),
        ("forms", growth_forms),
        ("canisters", growth_canisters),
        ("scale", scale),
        ("limits", limits),
    ];
    for (name, section) in sections {
        if on(name) {
            section(run)?;
        }
    }
    Ok(())
}

/// 1 000 transfers by five owners, an upgrade, 200 more.
fn steady(run: &mut Run) -> Check {
    let real = wasm::wasm(Canister::ToolHost)
        .map_err(Fail::Failed)?
        .to_vec();
    let mut w = World::deploy(run.backend(), LedgerKind::Test)?;
    room(&mut w, 32, 64)?;
    let os = owners(&mut w, 5, 1_000)?;
    let g = "steady state";
    transfers(run, &mut w, &os, 1_000, g, "")?;
    put_upgrade(
        run,
        &mut w,
        &real,
        g,
        "upgrade holding 1 000 intents",
        "2 forms, 1 ledger",
    )?;
    transfers(run, &mut w, &os, 200, g, ", after an upgrade")?;
    Ok(())
}

fn growth_blocks(run: &mut Run) -> Check {
    let mut w = World::deploy(run.backend(), LedgerKind::Test)?;
    let g = "growth: blocks scanned";
    let base = reconcile_tick(&mut w, 0, &amount())?;
    for blocks in [10u64, 100, 1_000] {
        let tick = reconcile_tick(&mut w, blocks, &amount())?;
        run.put(
            g,
            format!("a reconcile tick past {blocks} other blocks"),
            tick,
            None,
        );
        run.put_unit(
            g,
            format!("per block scanned, {blocks} blocks"),
            tick.saturating_sub(base) / blocks,
            Some(GOAL_PER_BLOCK),
            Some("instructions per block"),
        );
    }
    Ok(())
}

fn growth_input(run: &mut Run) -> Check {
    let mut w = World::deploy(run.backend(), LedgerKind::Test)?;
    room(&mut w, 32, 64)?;
    let os = owners(&mut w, 1, 100)?;
    transfer(&mut w, os[0], "1")?;
    let g = "growth: input bytes";
    for size in [128usize, 8 << 10, 60 << 10] {
        // The same transfer, padded with spaces (whitespace a model may send) to `size` bytes.
        let input = w.transfer_input(&w.amt(&amount()));
        let padded = format!("{}{}", " ".repeat(size.saturating_sub(input.len())), input);
        let t = transfer_input(&mut w, os[0], &padded)?;
        run.put(
            g,
            format!("prepare a transfer, input of {} bytes", padded.len()),
            t.prepare,
            Some(GOAL_PREPARE),
        );
    }
    // The same, the spaces inside the JSON text (after its first member), where the JSON
    // parser skips them: what a pretty-printing model sends, at its most.
    let input = w.transfer_input(&w.amt(&amount()));
    let at = input
        .find(',')
        .ok_or_else(|| Fail::Failed("a transfer input has two members".into()))?
        + 1;
    let size = 60 << 10;
    let padded = format!(
        "{}{}{}",
        &input[..at],
        " ".repeat(size - input.len()),
        &input[at..]
    );
    let t = transfer_input(&mut w, os[0], &padded)?;
    run.put(
        g,
        format!(
            "prepare a transfer, input of {} bytes, the spaces inside the JSON",
            padded.len()
        ),
        t.prepare,
        Some(GOAL_PREPARE),
    );
    Ok(())
}

/// A host with `forms` forms (the packs and renamed copies) on 10 ledgers.
fn growth_forms(run: &mut Run) -> Check {
    let real = wasm::wasm(Canister::ToolHost)
        .map_err(Fail::Failed)?
        .to_vec();
    let mut w = World::deploy(run.backend(), LedgerKind::Test)?;
    room(&mut w, 64, 64)?;
    // The other ledgers for one owner: the copies' tools (methods the engine has no custody
    // rule for, reads it does not know) are offered on canisters registered for a single
    // owner only, and the table is of a catalog that offers them.
    let owner = w.p.owner;
    let (ledgers, _) = more_ledgers(&mut w, 9, &["icrc1", "icrc2"], Some(owner))?;
    let g = "growth: forms (on 10 ledgers)";
    let mut held = 2u32;
    let c = w.p.controller;
    for target in [2u32, 10, 50] {
        let (ids, cost) = if target > held {
            more_forms(&mut w, held - 2, target - 2)?
        } else {
            (vec![], 0)
        };
        held = target;
        if !ids.is_empty() {
            run.put(g, format!("register the {target}th form"), cost, None);
            let all: Vec<String> =
                std::iter::once("icrc1".to_string())
                    .chain(std::iter::once("icrc2".to_string()))
                    .chain((0..target - 2).map(|k| {
                        format!("{}_copy{k:02}", if k % 2 == 0 { "icrc1" } else { "icrc2" })
                    }))
                    .collect();
            let forms: Vec<&str> = all.iter().map(String::as_str).collect();
            let owner = w.p.owner;
            let each = std::iter::once((w.ledger.0, None))
                .chain(ledgers.iter().map(|l| (*l, Some(owner))));
            for (l, owner) in each.collect::<Vec<_>>() {
                w.host
                    .register_canister_for(w.b.as_mut(), c, l, None, &forms, owner)?
                    .ok_or_fail("register_canister (more forms)")?;
            }
        }
        let (list, bytes) = list_whole(&mut w)?;
        run.put(
            g,
            format!("list tools (the whole list), MCP, {target} forms ({bytes} bytes)"),
            list,
            None,
        );
        put_pages(run, &mut w, g, ToolFormat::Mcp, &format!("{target} forms"))?;
        put_upgrade(
            run,
            &mut w,
            &real,
            g,
            &format!("upgrade holding {target} forms"),
            &format!("{target} forms on 10 ledgers"),
        )?;
        let os = [Owner {
            owner: w.p.owner,
            agent: w.p.agent,
        }];
        let first = transfer(&mut w, os[0], &amount())?;
        run.put(
            g,
            format!("the first prepare after that upgrade, {target} forms"),
            first.prepare,
            Some(GOAL_PREPARE_MAX),
        );
    }
    for (name, format) in [
        ("openai", ToolFormat::OpenAi),
        ("openai_responses", ToolFormat::OpenAiResponses),
        ("anthropic", ToolFormat::Anthropic),
        ("markdown", ToolFormat::Markdown),
        ("jsonschema", ToolFormat::JsonSchema),
    ] {
        let owner = w.p.owner;
        let text = w.host.list_tools_in(w.b.as_mut(), owner, Some(format))?;
        let cost = last(&mut w)?;
        run.put(
            g,
            format!(
                "list tools (the whole list) as {name}, 50 forms ({} bytes)",
                text.len()
            ),
            cost,
            None,
        );
        put_pages(run, &mut w, g, format, "50 forms")?;
    }
    bus(run, &mut w, g, ", 50 forms")?;
    // A ledger more for the packs alone: the other 48 forms' tools stay as they are.
    let owner = w.p.owner;
    let (_, cost) = more_ledgers(&mut w, 1, &["icrc1", "icrc2"], Some(owner))?;
    run.put(
        g,
        "register an 11th ledger for 2 of the 50 forms".to_string(),
        cost,
        None,
    );
    Ok(())
}

/// A host with `n` ledgers, each with the ICRC packs.
fn growth_canisters(run: &mut Run) -> Check {
    let real = wasm::wasm(Canister::ToolHost)
        .map_err(Fail::Failed)?
        .to_vec();
    let mut w = World::deploy(run.backend(), LedgerKind::Test)?;
    room(&mut w, 64, 128)?;
    let g = "growth: canisters (ICRC packs)";
    let c = w.p.controller;
    let mut held = 1u32;
    for target in [1u32, 10, 100] {
        if target > held {
            let (_, cost) = more_ledgers(&mut w, target - held, &["icrc1", "icrc2"], None)?;
            run.put(g, format!("register the {target}th ledger"), cost, None);
            held = target;
        }
        let t0 = host_count(&mut w)?;
        w.host
            .refresh_refs(w.b.as_mut(), c, None)?
            .ok_or_fail("refresh_refs")?;
        let refresh = host_count(&mut w)? - t0;
        run.put(
            g,
            format!("refs refresh per target, {target} ledgers (nothing changed)"),
            refresh / u64::from(target),
            Some(GOAL_REFRESH_PER_TARGET),
        );
        let (list, bytes) = list_whole(&mut w)?;
        run.put(
            g,
            format!("list tools (the whole list), MCP, {target} ledgers ({bytes} bytes)"),
            list,
            None,
        );
        put_pages(
            run,
            &mut w,
            g,
            ToolFormat::Mcp,
            &format!("{target} ledgers"),
        )?;
        put_upgrade(
            run,
            &mut w,
            &real,
            g,
            &format!("upgrade holding {target} ledgers"),
            &format!("2 forms on {target} ledgers"),
        )?;
    }
    Ok(())
}

/// 50 forms on 100 ledgers, then intents filled through the engine's insert path (run natively
/// on the canister's memory, `native_fill`) up to `run.max_intents`, measured at each step.
fn scale(run: &mut Run) -> Check {
    let real = wasm::wasm(Canister::ToolHost)
        .map_err(Fail::Failed)?
        .to_vec();
    let mut w = World::deploy_with(run.backend(), LedgerKind::Test, &real)?;
    room(&mut w, 64, 128)?;
    let (ids, _) = more_forms(&mut w, 0, 48)?;
    let mut all = vec!["icrc1".to_string(), "icrc2".to_string()];
    all.extend(ids);
    let forms: Vec<&str> = all.iter().map(String::as_str).collect();
    let c = w.p.controller;
    w.host
        .register_canister(w.b.as_mut(), c, w.ledger.0, None, &forms)?
        .ok_or_fail("register_canister (50 forms)")?;
    // The 99 others for one owner, so the copies' tools are offered (see `growth_forms`).
    let owner = w.p.owner;
    more_ledgers(&mut w, 99, &forms, Some(owner))?;
    let os = owners(&mut w, 5, 1_000)?;
    let template = transfer_template(&mut w)?;
    let g = "scale: 50 forms on 100 ledgers";
    let host = w.host.0;
    let mut filled = 0u64;
    let mut stages: Vec<u64> = [0u64, 10_000, 100_000, 1_000_000]
        .into_iter()
        .filter(|s| *s <= run.max_intents)
        .collect();
    if !stages.contains(&run.max_intents) {
        stages.push(run.max_intents);
    }
    let mut bytes_before = None;
    for target in stages {
        if filled < target {
            let image = w.b.stable_memory(host)?;
            let now = w.b.time_nanos();
            let (image, _) = super::native_fill::fill(image, host, template, target - filled, now)
                .map_err(Fail::Failed)?;
            w.b.set_stable_memory(host, &image)?;
            filled = target;
        }
        // At once: the instance running still has the memory's old layout in its heap (the
        // memory manager's buckets), so nothing may run in it on the new memory.
        put_upgrade(
            run,
            &mut w,
            &real,
            g,
            &format!("upgrade holding {target} intents"),
            &format!("50 forms on 100 ledgers, {target} intents"),
        )?;
        let stats = w.stats()?;
        if target == 0 {
            bytes_before = Some(stats.stable_bytes);
        } else if let Some(b0) = bytes_before {
            run.put_unit(
                g,
                format!("stable memory per intent, {target} intents"),
                (stats.stable_bytes - b0) / target,
                Some(GOAL_BYTES_PER_INTENT),
                Some("bytes"),
            );
        }
        let label = format!(", {target} intents");
        transfers(run, &mut w, &os, 20, g, &label)?;
        // The fill gives every intent an owner of its own: in that traffic most prepares are an
        // owner's first, whose counts are keys new to their maps.
        let mut firsts = vec![];
        for o in new_owners(&mut w, target, 5, 100)? {
            firsts.push(transfer(&mut w, o, &amount())?.prepare);
        }
        put_median_and_max(
            run,
            g,
            &mut firsts,
            (
                format!("prepare a transfer, an owner's first, median of 5 new owners{label}"),
                Some(GOAL_PREPARE),
            ),
            (
                format!("prepare a transfer, an owner's first, maximum of 5 new owners{label}"),
                Some(GOAL_PREPARE_MAX),
            ),
        );
        let tick = reconcile_tick(&mut w, 100, &amount())?;
        run.put(
            g,
            format!("a reconcile tick past 100 blocks{label}"),
            tick,
            None,
        );
        // The whole list (`list_tools`) is past the IC's 2 MiB reply limit here: pages only.
        put_pages(
            run,
            &mut w,
            g,
            ToolFormat::Mcp,
            &format!("50 forms, 100 ledgers{label}"),
        )?;
    }
    Ok(())
}

/// A settled transfer to copy.
fn transfer_template(w: &mut World) -> Check<u64> {
    let p = w.prepare_transfer(&w.amt("0.5"))?;
    w.confirm_ok(p.id, &p.digest)?;
    Ok(p.id)
}

/// A form of `positions` input positions, each an input of its own described in ~950
/// characters (the costliest position measured): update methods named `f<k>_m<n>`, each
/// taking a record of 250 text fields of one described type (the last one fewer).
fn positions_form(k: usize, positions: usize) -> String {
    let described = "word ".repeat(190);
    let fields = |n: usize| -> Vec<serde_json::Value> {
        (0..n)
            .map(|i| serde_json::json!({ "name": format!("x{i:03}"), "type": "D" }))
            .collect()
    };
    let types = serde_json::json!({
        "D": { "type": "text", "describe": described.trim_end() },
        "R": { "type": "record", "fields": fields(250) },
        "S": { "type": "record", "fields": fields((positions % 250).max(1)) },
    });
    let ms: serde_json::Map<String, serde_json::Value> = (0..positions.div_ceil(250))
        .map(|m| {
            let arg = if (m + 1) * 250 <= positions { "R" } else { "S" };
            (
                format!("f{k}_m{m:02}"),
                serde_json::json!({ "mode": "update", "args": [{ "type": arg }], "results": [] }),
            )
        })
        .collect();
    serde_json::json!({ "format": "candid-profile-resolved", "format_version": 0,
        "name": format!("positions {k}"), "types": types, "methods": ms })
    .to_string()
}

/// A form of `methods` queries without arguments named `d<k>_m<n>`, each described in about
/// 850 characters of words drawn from one list (so that they overlap: the review's warnings
/// stop at 100 pairs).
fn described_form(k: usize, methods: usize) -> String {
    let words = [
        "ledger",
        "balance",
        "account",
        "owner",
        "token",
        "transfer",
        "memo",
        "fee",
        "block",
        "archive",
        "index",
        "stake",
        "neuron",
        "proposal",
        "vote",
        "reward",
        "cycle",
        "canister",
        "wallet",
        "name",
        "symbol",
        "supply",
        "minting",
        "allowance",
        "spender",
        "expiry",
    ];
    let mut seed = 7u64 + k as u64;
    let ms: serde_json::Map<String, serde_json::Value> = (0..methods)
        .map(|m| {
            let mut text = String::new();
            while text.len() < 850 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(words[(seed >> 33) as usize % words.len()]);
                text.push(' ');
            }
            (
                format!("d{k}_m{m:03}"),
                serde_json::json!({ "mode": "query", "describe": text.trim_end(), "args": [],
                    "results": [{ "type": "text" }] }),
            )
        })
        .collect();
    serde_json::json!({ "format": "candid-profile-resolved", "format_version": 0,
        "name": format!("described {k}"), "types": {}, "methods": ms })
    .to_string()
}

/// `list_forms` (a query) as the controller, its count put as `flow`.
fn put_list_forms(run: &mut Run, w: &mut World, g: &str, flow: &str) -> Check {
    let c = w.p.controller;
    w.host
        .list_forms(w.b.as_mut(), c)?
        .map_err(|e| Fail::Failed(format!("list_forms: {}", e.message)))?;
    run.put(g, flow, last(w)?, None);
    Ok(())
}

/// Forms at the bounds an admin's forms are held to: two forms at the form's bound of 20 000
/// input positions and one of 9 989, the host's bound of 50 000 with the packs' 11, each
/// position an input described in ~950 characters; then four forms of 238 KB (256 tools each,
/// the form's bounds on bytes and methods); all on a ledger registered for one owner (where
/// their tools are offered). Registering them and the ledger, `list_forms` (a query) before and
/// after an upgrade, and the catalog built after an upgrade (one message, whatever is held).
fn limits(run: &mut Run) -> Check {
    let real = wasm::wasm(Canister::ToolHost)
        .map_err(Fail::Failed)?
        .to_vec();
    let mut w = World::deploy(run.backend(), LedgerKind::Test)?;
    room(&mut w, 64, 64)?;
    let g = "limits: forms at the bounds";
    let c = w.p.controller;
    let owner = w.p.owner;
    let (ledgers, _) = more_ledgers(&mut w, 1, &["icrc1", "icrc2"], Some(owner))?;
    let mut forms = vec!["icrc1".to_string(), "icrc2".to_string()];
    let register = |w: &mut World, forms: &mut Vec<String>, id: String, json: &str| {
        let t0 = host_count(w)?;
        w.host
            .register_form(w.b.as_mut(), c, &id, json)?
            .ok_or_fail("register_form (limits)")?;
        forms.push(id);
        Ok::<u64, Fail>(host_count(w)? - t0)
    };
    let mut cost = 0;
    for (k, positions) in [(0, 20_000), (1, 20_000), (2, 9_989)] {
        cost = register(
            &mut w,
            &mut forms,
            format!("positions{k}"),
            &positions_form(k, positions),
        )?;
    }
    run.put(
        g,
        "register a third form, to the host's bound (50 000 described input positions held)",
        cost,
        None,
    );
    let ids: Vec<&str> = forms.iter().map(String::as_str).collect();
    let t0 = host_count(&mut w)?;
    w.host
        .register_canister_for(w.b.as_mut(), c, ledgers[0], Some("TK1"), &ids, Some(owner))?
        .ok_or_fail("register_canister (limits)")?;
    cost = host_count(&mut w)? - t0;
    run.put(
        g,
        "register a ledger for those 3 forms and the packs (50 000 input positions)",
        cost,
        None,
    );
    put_list_forms(
        run,
        &mut w,
        g,
        "list_forms (a query), 50 000 input positions held",
    )?;
    put_upgrade(
        run,
        &mut w,
        &real,
        g,
        "upgrade holding forms at the host's bound",
        "forms at the host's bound (50 000 described input positions)",
    )?;
    put_list_forms(
        run,
        &mut w,
        g,
        "list_forms (a query) after that upgrade (each form's tools reviewed again)",
    )?;
    for k in 0..4 {
        cost = register(
            &mut w,
            &mut forms,
            format!("described{k}"),
            &described_form(k, 256),
        )?;
    }
    run.put(
        g,
        "register the 4th form of 238 KB (256 tools described in ~850 characters)",
        cost,
        None,
    );
    let ids: Vec<&str> = forms.iter().map(String::as_str).collect();
    w.host
        .register_canister_for(w.b.as_mut(), c, ledgers[0], Some("TK1"), &ids, Some(owner))?
        .ok_or_fail("register_canister (limits, described)")?;
    put_upgrade(
        run,
        &mut w,
        &real,
        g,
        "upgrade holding those and 4 forms of 238 KB",
        "forms at the host's bound and 4 of 238 KB",
    )?;
    put_list_forms(
        run,
        &mut w,
        g,
        "list_forms (a query) after that upgrade, forms at the host's bound and 4 of 238 KB",
    )?;
    Ok(())
}
