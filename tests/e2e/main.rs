//! End-to-end scenarios over the real canister wasms, each written once and run against every
//! ledger on every backend: `<scenario>::<ledger>::<backend>`, the ledger being `test_ledger`
//! (this project's, with fault injection) or `cycles_ledger` (DFINITY's), the backend `local`
//! (the local IC host) or `pocketic`.
//!
//! A scenario that needs the test ledger's fault injection says so in its name (`…_ledger_fault`)
//! and runs on the test ledger only. A trial is reported as ignored, never as passed, when it
//! cannot run: PocketIC without a server (`POCKET_IC_BIN` unset), the cycles ledger without its
//! wasm (see `tool_host_tests::wasm`), what the backend cannot do ("unsupported on pocketic:
//! ..."), and the trials listed in [`WAITING_FOR_ENGINE`] (run, and reported ignored with the
//! failure while they fail; a pass fails the run, so the list is kept honest). On the local
//! host, "unsupported" is a failure. After the run a summary prints the counts per ledger.
//!
//! ```sh
//! cargo test -p tool-host-tests --test e2e                      # all trials
//! cargo test -p tool-host-tests --test e2e -- outcome::         # a filter, as with libtest
//! cargo test -p tool-host-tests --test e2e -- cycles_ledger     # the cycles ledger's trials
//! POCKET_IC_BIN=/path/to/pocket-ic cargo test -p tool-host-tests --test e2e
//! ```

mod auth;
mod bus;
mod custody;
mod flow;
mod icrc2;
mod inputs;
mod mcp;
mod outcome;
mod peers;
mod race;
mod reconcile;
mod stable;
mod steps;
mod timers;
mod unknown;
mod upgrade;

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::sync::Mutex;
use tool_host_tests::backend::{Backend, BackendKind};
use tool_host_tests::check::{Check, Fail};
use tool_host_tests::ledgers::LedgerKind;
use tool_host_tests::local::LocalBackend;
use tool_host_tests::pocketic::{PocketIcBackend, SERVER_ENV};
use tool_host_tests::wasm::CyclesLedgerMissing;
use tool_host_tests::world::World;

/// Which ledgers a scenario runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ledgers {
    /// Both: the scenario uses only what every ICRC ledger does (and the host's faults).
    Both,
    /// The test ledger only: the scenario queues the test ledger's faults. Its name ends in
    /// `_ledger_fault`.
    TestLedgerFaults,
}

/// One scenario: a name and a body that runs on a freshly deployed [`World`].
#[derive(Clone, Copy)]
pub struct Scenario {
    pub name: &'static str,
    pub run: fn(&mut World) -> Check,
    pub ledgers: Ledgers,
}

impl Scenario {
    /// A scenario whose name ends in `_ledger_fault` runs on the test ledger only; any other on
    /// both ledgers.
    pub fn new(name: &'static str, run: fn(&mut World) -> Check) -> Scenario {
        let ledgers = if name.ends_with("_ledger_fault") {
            Ledgers::TestLedgerFaults
        } else {
            Ledgers::Both
        };
        Scenario { name, run, ledgers }
    }
}

/// Trials that fail on the cycles ledger because of how the tool host's engine (`src/engine`,
/// being rewritten on main) reads the real ledger, with the reason. They run; while they fail
/// they are reported as "ignored: waiting for engine fix: <reason>" (never as passed), and once
/// one passes the run fails until it is removed from this list.
pub const WAITING_FOR_ENGINE: &[(&str, &str)] = &[];

fn scenarios() -> Vec<Scenario> {
    let mut all = vec![];
    all.extend(flow::scenarios());
    all.extend(bus::scenarios());
    all.extend(outcome::scenarios());
    all.extend(unknown::scenarios());
    all.extend(race::scenarios());
    all.extend(reconcile::scenarios());
    all.extend(upgrade::scenarios());
    all.extend(stable::scenarios());
    all.extend(timers::scenarios());
    all.extend(icrc2::scenarios());
    all.extend(auth::scenarios());
    all.extend(custody::scenarios());
    all.extend(inputs::scenarios());
    all.extend(peers::scenarios());
    all.extend(mcp::scenarios());
    all
}

/// The backend of a trial, or the trial's verdict when there is none: ignored without a
/// PocketIC server, failed when `POCKET_IC_BIN` names something that does not start.
fn backend(kind: BackendKind) -> Result<Box<dyn Backend>, Result<Completion, Failed>> {
    match kind {
        BackendKind::Local => Ok(Box::new(LocalBackend::new())),
        BackendKind::PocketIc => {
            if PocketIcBackend::server_binary().is_none() {
                return Err(Ok(Completion::ignored_with(format!(
                    "{SERVER_ENV} not set"
                ))));
            }
            match PocketIcBackend::new() {
                Ok(b) => Ok(Box::new(b)),
                Err(e) => Err(Err(e.to_string().into())),
            }
        }
    }
}

fn waiting_for_engine(trial: &str) -> Option<&'static str> {
    WAITING_FOR_ENGINE
        .iter()
        .find(|(name, _)| *name == trial)
        .map(|(_, why)| *why)
}

fn run(s: &Scenario, ledger: LedgerKind, kind: BackendKind, trial: &str) -> Verdict {
    match ledger.available() {
        Ok(()) => {}
        Err(CyclesLedgerMissing::NotFound(why)) => return Verdict::NotRun(why),
        Err(e @ CyclesLedgerMissing::Unreadable(_)) => return Verdict::Failed(e.to_string()),
    }
    let b = match backend(kind) {
        Ok(b) => b,
        Err(Ok(_)) => return Verdict::NotRun(format!("{SERVER_ENV} not set")),
        Err(Err(e)) => return Verdict::Failed(e.message().unwrap_or_default().to_string()),
    };
    let verdict = match World::deploy(b, ledger) {
        Ok(mut world) => {
            let result = (s.run)(&mut world);
            verdict(result, kind, Some(&mut world))
        }
        Err(e) => verdict(Err(e), kind, None),
    };
    match (waiting_for_engine(trial), verdict) {
        (None, v) => v,
        (Some(why), Verdict::Failed(f)) => Verdict::WaitingForEngine(format!(
            "waiting for engine fix: {why} (fails with: {})",
            f.lines().next().unwrap_or_default()
        )),
        (Some(_), Verdict::Passed) => Verdict::Failed(format!(
            "{trial} passes now: remove it from WAITING_FOR_ENGINE in tests/e2e/main.rs"
        )),
        (Some(_), other) => other,
    }
}

/// A trial's result, as counted in the summary.
#[derive(Clone, Debug)]
enum Verdict {
    Passed,
    Failed(String),
    /// Not run: no PocketIC server, no cycles ledger wasm, unsupported on the backend.
    NotRun(String),
    /// Run and failed on an engine limitation listed in [`WAITING_FOR_ENGINE`].
    WaitingForEngine(String),
}

/// A scenario's result; a failure carries the canisters' last logs.
fn verdict(result: Check, kind: BackendKind, world: Option<&mut World>) -> Verdict {
    match result {
        Ok(()) => Verdict::Passed,
        Err(Fail::Unsupported(why)) if kind != BackendKind::Local => Verdict::NotRun(why),
        Err(f) => {
            let mut msg = f.to_string();
            if let Some(Ok(logs)) = world.map(|w| w.b.take_logs()) {
                let tail: Vec<String> = logs.into_iter().rev().take(30).collect();
                if !tail.is_empty() {
                    msg.push_str("\n--- last canister logs (newest first) ---\n");
                    msg.push_str(&tail.join("\n"));
                }
            }
            Verdict::Failed(msg)
        }
    }
}

type Record = (LedgerKind, BackendKind, Verdict);
static RESULTS: Mutex<Vec<Record>> = Mutex::new(Vec::new());

fn record(ledger: LedgerKind, kind: BackendKind, v: Verdict) -> Result<Completion, Failed> {
    RESULTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((ledger, kind, v.clone()));
    match v {
        Verdict::Passed => Ok(Completion::Completed),
        Verdict::Failed(m) => Err(m.into()),
        Verdict::NotRun(why) | Verdict::WaitingForEngine(why) => Ok(Completion::ignored_with(why)),
    }
}

/// Prints the counts per ledger (and backend) of the trials that ran in this process.
fn summary(results: &[Record]) -> String {
    let mut out = String::from("e2e summary (per ledger and backend):\n");
    for ledger in LedgerKind::ALL {
        for kind in [BackendKind::Local, BackendKind::PocketIc] {
            let mine: Vec<&Verdict> = results
                .iter()
                .filter(|(l, k, _)| *l == ledger && *k == kind)
                .map(|(_, _, v)| v)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let count = |f: fn(&Verdict) -> bool| mine.iter().filter(|v| f(v)).count();
            let passed = count(|v| matches!(v, Verdict::Passed));
            let failed = count(|v| matches!(v, Verdict::Failed(_)));
            let waiting = count(|v| matches!(v, Verdict::WaitingForEngine(_)));
            let not_run = count(|v| matches!(v, Verdict::NotRun(_)));
            let mut reasons: Vec<&str> = mine
                .iter()
                .filter_map(|v| match v {
                    Verdict::NotRun(why) => Some(why.as_str()),
                    _ => None,
                })
                .collect();
            reasons.sort();
            reasons.dedup();
            out.push_str(&format!(
                "  {:<13} {:<8} {passed:>3} passed, {failed} failed, {waiting} waiting for engine fix, {not_run} not run{}\n",
                ledger.name(),
                kind.name(),
                if reasons.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", reasons.join("; "))
                }
            ));
        }
    }
    out
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![];
    let all = scenarios();
    for (i, s) in all.iter().enumerate() {
        assert!(
            all[..i].iter().all(|t| t.name != s.name),
            "two scenarios are named {}",
            s.name
        );
    }
    for s in all {
        let ledgers: &[LedgerKind] = match s.ledgers {
            Ledgers::Both => &LedgerKind::ALL,
            Ledgers::TestLedgerFaults => &[LedgerKind::Test],
        };
        for &ledger in ledgers {
            for kind in [BackendKind::Local, BackendKind::PocketIc] {
                let name = format!("{}::{}::{}", s.name, ledger.name(), kind.name());
                trials.push(Trial::ignorable_test(name.clone(), move || {
                    record(ledger, kind, run(&s, ledger, kind, &name))
                }));
            }
        }
    }
    for (name, _) in WAITING_FOR_ENGINE {
        assert!(
            trials.iter().any(|t| t.name() == *name),
            "WAITING_FOR_ENGINE names {name}, which is no trial"
        );
    }
    let conclusion = libtest_mimic::run(&args, trials);
    let results = RESULTS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if !results.is_empty() {
        println!("{}", summary(&results));
    }
    conclusion.exit();
}
