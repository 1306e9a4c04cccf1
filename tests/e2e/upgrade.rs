//! An upgrade of the tool host holding an open, a settled, an unknown and an in-flight intent:
//! refused while the send is in flight unless forced; forced, everything registered and every
//! intent is still there afterwards, the send that was in flight becomes unknown (its reply is
//! lost with the old heap), and the reconcile timer, re-armed from stable memory by
//! `post_upgrade`, still settles both unknown intents.

use crate::reconcile::run_reconciliation;
use crate::steps::{end_hold, pass_deadline, start_lost_reply, TRANSFER};
use crate::Scenario;
use test_ledger::types::Fault;
use tool_host_engine::types::{ApiError, ToolResult};
use tool_host_tests::backend::{decode, InstallMode};
use tool_host_tests::check::{ApiOk, Check, Fail};
use tool_host_tests::clients::{host_arg, HostArg, InitArgs, UpgradeArgs};
use tool_host_tests::wasm::{self, Canister};
use tool_host_tests::world::World;
use tool_host_tests::{ensure, ensure_eq, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "upgrade::keeps_intents_and_timers_ledger_fault",
            keeps_intents_and_timers,
        ),
        Scenario::new("upgrade::install_takes_only_init", install_takes_only_init),
        Scenario::new(
            "upgrade::an_upgrade_changes_only_what_it_names",
            an_upgrade_changes_only_what_it_names,
        ),
        Scenario::new(
            "upgrade::the_catalog_is_built_after_the_upgrade",
            the_catalog_is_built_after_the_upgrade,
        ),
    ]
}

/// An install refused: the error names the rule (the backend's install failed with the trap).
fn refused(r: tool_host_tests::backend::Result<()>, what: &str, wanted: &str) -> Check {
    match r {
        Err(e) => ensure!(e.to_string().contains(wanted), "{what}: {e}"),
        Ok(()) => fail!("{what} was not refused"),
    }
    Ok(())
}

/// Install takes `Init` (or no argument) only; its limits pass `set_limits`'s checks and a
/// refusal gives `set_limits`'s own message.
fn install_takes_only_init(w: &mut World) -> Check {
    let wasm = wasm::wasm(Canister::ToolHost).map_err(Fail::Failed)?;
    let c = w.p.controller;
    let fresh = w.b.create_canister(&[c])?;
    let install =
        |w: &mut World, arg: Vec<u8>| w.b.install(fresh, wasm, arg, InstallMode::Install, c);
    refused(
        install(w, host_arg(HostArg::Upgrade(None))),
        "an install with `Upgrade`",
        "install refused: the argument is `Upgrade`",
    )?;
    // The argument of before this release (`opt InitArgs`) is not taken for "absent".
    let old = candid::encode_one(Some(InitArgs::default())).expect("encodes");
    refused(
        install(w, old),
        "an install with `opt record`",
        "is not a HostArg",
    )?;
    let mut bad = w.limits()?;
    bad.call_timeout_seconds = 0;
    let why = match w.host.set_limits(w.b.as_mut(), c, bad.clone())? {
        Err(e) => e.message,
        Ok(_) => return Err(Fail::Failed("set_limits took a call timeout of 0".into())),
    };
    ensure_eq!(why, "call_timeout_seconds is 1 to 300");
    let init = InitArgs {
        admins: vec![w.p.admin],
        limits: Some(bad),
    };
    refused(
        install(w, host_arg(HostArg::Init(init))),
        "an install with a call timeout of 0",
        &format!("install refused: limits: INVALID_ARGUMENT: {why}"),
    )?;
    let anonymous = InitArgs {
        admins: vec![candid::Principal::anonymous()],
        limits: None,
    };
    refused(
        install(w, host_arg(HostArg::Init(anonymous))),
        "an install naming the anonymous principal as admin",
        "install refused: admin 2vxsx-fae: ANONYMOUS",
    )?;
    // No argument at all (`dfx deploy` without `--argument`): no admins, the default limits.
    install(w, vec![])?;
    let host = tool_host_tests::clients::ToolHost(fresh);
    let admins = host
        .list_admins(w.b.as_mut(), c)?
        .ok_or_fail("list_admins")?;
    ensure_eq!(admins, vec![]);
    let limits = host.get_limits(w.b.as_mut(), c)?.ok_or_fail("get_limits")?;
    ensure_eq!(limits, tool_host_engine::types::Limits::default());
    Ok(())
}

/// An upgrade takes `Upgrade` (or no argument) only; refused, nothing changes; with no argument
/// admins and limits stay; naming limits (or admins to add) changes only those.
fn an_upgrade_changes_only_what_it_names(w: &mut World) -> Check {
    let wasm = wasm::wasm(Canister::ToolHost).map_err(Fail::Failed)?;
    let (host, c) = (w.host.0, w.p.controller);
    let upgrade =
        |w: &mut World, arg: Vec<u8>| w.b.install(host, wasm, arg, InstallMode::Upgrade, c);
    // Something the limits do not cover, to see it kept.
    let mut changed = w.limits()?;
    changed.max_forms = 17;
    w.set_limits(changed.clone())?;
    let p = w.prepare_transfer(&w.amt("1"))?;
    let before = snapshot(w)?;
    ensure_eq!(before.admins, vec![w.p.admin]);

    let init = InitArgs {
        admins: vec![],
        limits: None,
    };
    refused(
        upgrade(w, host_arg(HostArg::Init(init))),
        "an upgrade with `Init`",
        "upgrade refused: the argument is `Init`",
    )?;
    ensure_eq!(snapshot(w)?, before);
    let mut bad = before.limits.clone();
    bad.call_timeout_seconds = 0;
    let bad_upgrade = UpgradeArgs {
        limits: Some(bad),
        add_admins: Some(vec![w.p.owner]),
        force: None,
    };
    refused(
        upgrade(w, host_arg(HostArg::Upgrade(Some(bad_upgrade)))),
        "an upgrade with a call timeout of 0",
        "upgrade refused: limits: INVALID_ARGUMENT: call_timeout_seconds is 1 to 300",
    )?;
    ensure_eq!(snapshot(w)?, before, "a refused upgrade changes nothing");

    // No argument, and `Upgrade = null`: admins and limits as they were.
    upgrade(w, vec![])?;
    ensure_eq!(snapshot(w)?, before);
    upgrade(w, host_arg(HostArg::Upgrade(None)))?;
    ensure_eq!(snapshot(w)?, before);

    // Naming the limits changes the limits only; naming admins to add adds them.
    let mut limits = before.limits.clone();
    limits.call_timeout_seconds = 30;
    let named = UpgradeArgs {
        limits: Some(limits.clone()),
        ..Default::default()
    };
    upgrade(w, host_arg(HostArg::Upgrade(Some(named))))?;
    let after = snapshot(w)?;
    ensure_eq!(after.limits, limits);
    ensure_eq!(
        Snapshot {
            limits: before.limits.clone(),
            ..after
        },
        before,
        "only the limits changed"
    );
    let add = UpgradeArgs {
        add_admins: Some(vec![w.p.owner]),
        ..Default::default()
    };
    upgrade(w, host_arg(HostArg::Upgrade(Some(add))))?;
    let after = snapshot(w)?;
    let mut admins = vec![w.p.admin, w.p.owner];
    admins.sort();
    let mut listed = after.admins.clone();
    listed.sort();
    ensure_eq!(listed, admins);
    ensure_eq!(after.limits, limits);
    // The intent prepared before is there and still confirms.
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("success"), "{}", r.content);
    Ok(())
}

/// What callers can read of the tool host, to compare before and after.
#[derive(Debug, PartialEq)]
struct Snapshot {
    tools: String,
    forms: Vec<tool_host_engine::types::FormInfo>,
    canisters: Vec<tool_host_engine::types::TargetView>,
    agents: Vec<candid::Principal>,
    deposit: tool_host_engine::types::DepositAccount,
    limits: tool_host_engine::types::Limits,
    admins: Vec<candid::Principal>,
}

fn snapshot(w: &mut World) -> Check<Snapshot> {
    let (owner, c) = (w.p.owner, w.p.controller);
    let b = w.b.as_mut();
    let h = w.host;
    Ok(Snapshot {
        tools: h.list_tools(b, owner)?,
        forms: h.list_forms(b, owner)?.ok_or_fail("list_forms")?,
        canisters: h.list_canisters(b, owner)?.ok_or_fail("list_canisters")?,
        agents: h.list_agents(b, owner)?.ok_or_fail("list_agents")?,
        deposit: h.deposit_account(b, owner)?.ok_or_fail("deposit_account")?,
        limits: h.get_limits(b, owner)?.ok_or_fail("get_limits")?,
        admins: h.list_admins(b, c)?.ok_or_fail("list_admins")?,
    })
}

fn keeps_intents_and_timers(w: &mut World) -> Check {
    // open
    let a = w.prepare_transfer(&w.amt("1"))?;
    // settled (done)
    let b = w.prepare_transfer(&w.amt("2"))?;
    let r = w.confirm_ok(b.id, &b.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("success"));
    // unknown, waiting for its reconciliation
    let c = w.prepare_transfer(&w.amt("3"))?;
    w.fault(TRANSFER, Fault::Reject("injected reject".into()))?;
    let r = w.confirm_ok(c.id, &c.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("unknown"));
    // in flight: the ledger executed the transfer and holds its reply back
    let d = w.prepare_transfer(&w.amt("4"))?;
    let log = w.log_length()?;
    let in_flight = start_lost_reply(w, &d)?;
    ensure_eq!(w.intent(d.id)?.status, "in_flight");
    let (host, controller) = (w.host.0, w.p.controller);

    let before = snapshot(w)?;
    let intents_before = w.intents()?;
    ensure_eq!(intents_before.len(), 4);

    let wasm = wasm::wasm(Canister::ToolHost).map_err(Fail::Failed)?;
    // With a send in flight a plain upgrade is refused, and nothing changes: the old code
    // keeps running with its call.
    let arg = host_arg(HostArg::Upgrade(None));
    match w
        .b
        .install(host, wasm, arg, InstallMode::Upgrade, controller)
    {
        Err(e) => ensure!(
            e.to_string()
                .contains("upgrade refused: 1 send(s) in flight"),
            "{e}"
        ),
        Ok(()) => {
            return Err(Fail::Failed(
                "an upgrade with a send in flight was not refused".into(),
            ))
        }
    }
    ensure_eq!(w.intent(d.id)?.status, "in_flight");
    ensure_eq!(snapshot(w)?, before);
    // Forced, it goes ahead.
    let force = UpgradeArgs {
        force: Some(true),
        ..Default::default()
    };
    let arg = host_arg(HostArg::Upgrade(Some(force)));
    w.b.install(host, wasm, arg, InstallMode::Upgrade, controller)?;

    // Everything registered is still there, and so is every intent.
    ensure_eq!(snapshot(w)?, before);
    for (old, id) in intents_before.iter().zip([a.id, b.id, c.id]) {
        ensure_eq!(&w.intent(id)?, old, "intent {id} is unchanged");
    }
    // The send in flight lost its reply with the old heap: unknown, to be reconciled.
    let di = w.intent(d.id)?;
    ensure_eq!(di.status, "unknown", "{di:?}");
    ensure_eq!(di.attempts.len(), 1);
    ensure_eq!(di.attempts[0].kind, "undecodable");

    // The confirm that was in flight ends when its call's deadline passes: its callback now
    // runs in the new code, whose heap no longer has the call's future.
    pass_deadline(w)?;
    let answer = w.b.await_reply(in_flight);
    let what = match &answer {
        Ok(bytes) => format!(
            "answered {:?}",
            decode::<(Result<ToolResult, ApiError>,)>("confirm", bytes).map(|(r,)| r)
        ),
        Err(e) => format!("failed: {e}"),
    };
    println!("the confirm in flight across the upgrade {what}");
    ensure_eq!(
        w.intent(d.id)?.status,
        "unknown",
        "a late callback changes nothing"
    );
    end_hold(w)?;

    // The timer was re-armed by post_upgrade: both unknown intents are reconciled.
    run_reconciliation(w)?;
    let ci = w.intent(c.id)?;
    ensure_eq!(ci.status, "settled");
    ensure!(
        ci.finding
            .as_deref()
            .unwrap_or("")
            .starts_with("reconciled: absent"),
        "{:?}",
        ci.finding
    );
    let di = w.intent(d.id)?;
    ensure_eq!(di.status, "done");
    ensure_eq!(
        di.finding.as_deref(),
        Some(format!("reconciled: found in block {log}").as_str())
    );
    ensure_eq!(w.log_length()?, log + 1);

    // The open intent can still be confirmed.
    let r = w.confirm_ok(a.id, &a.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("success"), "{}", r.content);
    ensure_eq!(w.intents()?.len(), 4);
    Ok(())
}

/// `post_upgrade` parses no form: the catalog is built in a timer message right after. A query
/// that comes before it answers the same list (building it for itself, keeping nothing); so do
/// queries after it, and a page cursor from before the upgrade continues the same list (the same
/// tools, the same fingerprint). Where the backend counts instructions: before that message the
/// list costs a build each time, after it a copy.
fn the_catalog_is_built_after_the_upgrade(w: &mut World) -> Check {
    use tool_host_engine::types::ListToolsArgs;
    let wasm = wasm::wasm(Canister::ToolHost).map_err(Fail::Failed)?;
    let (host, c, anon) = (w.host.0, w.p.controller, candid::Principal::anonymous());
    let page = |w: &mut World, cursor: Option<String>| {
        w.host
            .list_tools_page(
                w.b.as_mut(),
                anon,
                ListToolsArgs {
                    format: None,
                    cursor,
                    max_bytes: Some(1024),
                },
            )?
            .ok_or_fail("list_tools_page")
    };
    let whole = w.host.list_tools(w.b.as_mut(), anon)?;
    let first = page(w, None)?;
    let second = page(w, first.next.clone())?;
    ensure!(first.next.is_some(), "more than one page of 1 KiB");

    w.b.install(
        host,
        wasm,
        host_arg(HostArg::Upgrade(None)),
        InstallMode::Upgrade,
        c,
    )?;
    // No round has run: the catalog's timer message has not either.
    ensure_eq!(w.host.list_tools(w.b.as_mut(), anon)?, whole);
    let before = w.b.last_instructions().ok();
    ensure_eq!(w.host.list_tools(w.b.as_mut(), anon)?, whole);
    let again = w.b.last_instructions().ok();
    ensure_eq!(
        page(w, first.next.clone())?,
        second,
        "the old cursor continues"
    );

    w.b.run_until_quiet(100)?;
    ensure_eq!(w.host.list_tools(w.b.as_mut(), anon)?, whole);
    let built = w.b.last_instructions().ok();
    ensure_eq!(page(w, first.next)?, second);
    if let (Some(before), Some(again), Some(built)) = (before, again, built) {
        ensure!(
            again * 2 > before,
            "a query keeps nothing: {again} after {before}"
        );
        ensure!(
            built * 4 < before,
            "after the timer message the list is a copy: {built}, against {before} before it"
        );
    }
    Ok(())
}
