//! The official ICRC-1 conformance suite (`icrc1-test-suite` 0.2.0, from `dfinity/ICRC-1`) run
//! against both ledgers — the test ledger and DFINITY's cycles ledger — through a `LedgerEnv`
//! over the backends (`env.rs`); and the facts where the two ledgers answer differently
//! (`facts.rs`, documented in `docs/test-ledger.md`).
//!
//! Trials: `icrc1:<test>::<ledger>::<backend>` and `icrc2:<test>::…`, one per test of the
//! suite's `icrc1_test_suite` / `icrc2_test_suite` lists (the functions `test_suite` picks for a
//! ledger that lists ICRC-1 and ICRC-2), each on a freshly installed ledger; `suite::*` checks
//! that `test_suite` gives exactly those tests for the ledger; `facts::*` the differences.
//!
//! A test the suite itself skips (`Outcome::Skipped`, e.g. `icrc1:burn` on a ledger without a
//! minting account) is reported as ignored with the suite's reason, never as passed; so are the
//! trials that cannot run (no PocketIC server, no cycles ledger wasm). A failure listed in
//! [`KNOWN_DIFFERENCES`] is reported ignored with its explanation while it fails (and fails the
//! run once it passes). A summary prints the counts per ledger.

mod env;
mod facts;

use env::Env;
use futures::executor::block_on;
use icrc1_test_suite::{Outcome, TestResult};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use tool_host_tests::backend::{Backend, BackendKind};
use tool_host_tests::clients::Ledger;
use tool_host_tests::ledgers::{install_ledger, LedgerKind};
use tool_host_tests::local::LocalBackend;
use tool_host_tests::pocketic::{PocketIcBackend, SERVER_ENV};
use tool_host_tests::wasm::CyclesLedgerMissing;
use tool_host_tests::world::account;

type Run = fn(Env) -> Pin<Box<dyn Future<Output = TestResult>>>;

macro_rules! suite {
    ($($name:literal => $f:ident),* $(,)?) => {
        vec![$(($name, (|e| Box::pin(icrc1_test_suite::$f(e))) as Run)),*]
    };
}

/// The suite's tests in the order of its `icrc1_test_suite` and `icrc2_test_suite` lists.
fn suite() -> Vec<(&'static str, Run)> {
    suite![
        "icrc1:transfer" => icrc1_test_transfer,
        "icrc1:burn" => icrc1_test_burn,
        "icrc1:metadata" => icrc1_test_metadata,
        "icrc1:supported_standards" => icrc1_test_supported_standards,
        "icrc1:tx_deduplication" => icrc1_test_tx_deduplication,
        "icrc1:memo_bytes_length" => icrc1_test_memo_bytes_length,
        "icrc1:future_transfers" => icrc1_test_future_transfer,
        "icrc1:bad_fee" => icrc1_test_bad_fee,
        "icrc2:supported_standards" => icrc2_test_supported_standards,
        "icrc2:approve" => icrc2_test_approve,
        "icrc2:approve_expiration" => icrc2_test_approve_expiration,
        "icrc2:approve_expected_allowance" => icrc2_test_approve_expected_allowance,
        "icrc2:transfer_from" => icrc2_test_transfer_from,
        "icrc2:transfer_from_insufficient_funds" => icrc2_test_transfer_from_insufficient_funds,
        "icrc2:transfer_from_insufficient_allowance" => icrc2_test_transfer_from_insufficient_allowance,
        "icrc2:transfer_from_self" => icrc2_test_transfer_from_self,
    ]
}

/// Suite failures that are real differences between the ledger and the suite's reading of the
/// standard, with the explanation (see `docs/test-ledger.md`). Empty: both ledgers pass every
/// test the suite runs.
pub const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// The ledgers' controller.
pub fn controller() -> candid::Principal {
    candid::Principal::self_authenticating(b"conformance controller")
}

/// The test ledger's minting account's owner.
pub fn minter() -> candid::Principal {
    candid::Principal::self_authenticating(b"conformance minter")
}

/// Whole tokens the suite's root caller holds from the install.
const ROOT_TOKENS: u64 = 1_000;

/// A backend with `kind`'s ledger installed, the root caller holding [`ROOT_TOKENS`].
pub fn deploy(b: BackendKind, kind: LedgerKind) -> Result<Env, Verdict> {
    match kind.available() {
        Ok(()) => {}
        Err(CyclesLedgerMissing::NotFound(why)) => return Err(Verdict::NotRun(why)),
        Err(e) => return Err(Verdict::Failed(e.to_string())),
    }
    let mut backend: Box<dyn Backend> = match b {
        BackendKind::Local => Box::new(LocalBackend::new()),
        BackendKind::PocketIc => {
            if PocketIcBackend::server_binary().is_none() {
                return Err(Verdict::NotRun(format!("{SERVER_ENV} not set")));
            }
            Box::new(PocketIcBackend::new().map_err(|e| Verdict::Failed(e.to_string()))?)
        }
    };
    let failed = |e: tool_host_tests::check::Fail| Verdict::Failed(e.to_string());
    let (controller, minter) = (controller(), minter());
    let ledger = Ledger(
        backend
            .create_canister(&[controller])
            .map_err(|e| failed(e.into()))?,
    );
    let depositor = install_ledger(
        backend.as_mut(),
        kind,
        ledger,
        controller,
        minter,
        &[(account(env::caller(0)), ROOT_TOKENS)],
    )
    .map_err(failed)?;
    Ok(Env::new(backend, ledger.0, depositor.map(|d| d.0)))
}

/// A trial's result, as counted in the summary.
#[derive(Clone, Debug)]
pub enum Verdict {
    Passed,
    Failed(String),
    /// The suite skipped the test (its reason).
    Skipped(String),
    /// Not run: no PocketIC server, no cycles ledger wasm.
    NotRun(String),
    /// Failed as a difference listed in [`KNOWN_DIFFERENCES`].
    KnownDifference(String),
}

fn run_suite_test(run: Run, b: BackendKind, kind: LedgerKind) -> Verdict {
    let env = match deploy(b, kind) {
        Ok(e) => e,
        Err(v) => return v,
    };
    match block_on(run(env)) {
        Ok(Outcome::Passed) => Verdict::Passed,
        Ok(Outcome::Skipped { reason }) => {
            Verdict::Skipped(format!("skipped by the suite: {reason}"))
        }
        Err(e) => Verdict::Failed(format!("{e:?}")),
    }
}

/// `test_suite` (what the suite runs for a ledger, by its supported standards) has exactly as
/// many tests as [`suite`]: the trials cover the whole suite for this ledger.
fn suite_covers(b: BackendKind, kind: LedgerKind) -> Verdict {
    let env = match deploy(b, kind) {
        Ok(e) => e,
        Err(v) => return v,
    };
    let official = block_on(icrc1_test_suite::test_suite(env)).len();
    if official == suite().len() {
        Verdict::Passed
    } else {
        Verdict::Failed(format!(
            "icrc1_test_suite::test_suite gives {official} tests for the {}, the trials run {}",
            kind.label(),
            suite().len()
        ))
    }
}

type Record = (&'static str, LedgerKind, BackendKind, Verdict);
static RESULTS: Mutex<Vec<Record>> = Mutex::new(Vec::new());

fn record(
    group: &'static str,
    name: &str,
    kind: LedgerKind,
    b: BackendKind,
    v: Verdict,
) -> Result<Completion, Failed> {
    let known = KNOWN_DIFFERENCES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, why)| *why);
    let v = match (known, v) {
        (Some(why), Verdict::Failed(f)) => Verdict::KnownDifference(format!(
            "a real difference: {why} (fails with: {})",
            f.lines().next().unwrap_or_default()
        )),
        (Some(_), Verdict::Passed) => Verdict::Failed(format!(
            "{name} passes now: remove it from KNOWN_DIFFERENCES in tests/conformance/main.rs"
        )),
        (_, v) => v,
    };
    RESULTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((group, kind, b, v.clone()));
    match v {
        Verdict::Passed => Ok(Completion::Completed),
        Verdict::Failed(m) => Err(m.into()),
        Verdict::Skipped(why) | Verdict::NotRun(why) | Verdict::KnownDifference(why) => {
            Ok(Completion::ignored_with(why))
        }
    }
}

fn summary(results: &[Record]) -> String {
    let mut out = String::from(
        "conformance summary (icrc1-test-suite tests, and the ledger facts, per ledger and backend):\n",
    );
    for group in ["suite", "facts"] {
        for kind in LedgerKind::ALL {
            for b in [BackendKind::Local, BackendKind::PocketIc] {
                let mine: Vec<&Verdict> = results
                    .iter()
                    .filter(|(g, k, bk, _)| *g == group && *k == kind && *bk == b)
                    .map(|(_, _, _, v)| v)
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                let count = |f: fn(&Verdict) -> bool| mine.iter().filter(|v| f(v)).count();
                let mut notes: Vec<&str> = mine
                    .iter()
                    .filter_map(|v| match v {
                        Verdict::NotRun(w) | Verdict::Skipped(w) => Some(w.as_str()),
                        _ => None,
                    })
                    .collect();
                notes.sort();
                notes.dedup();
                out.push_str(&format!(
                "  {group:<5} {:<13} {:<8} {:>3} passed, {} failed, {} skipped by the suite, {} known differences, {} not run{}\n",
                kind.name(),
                b.name(),
                count(|v| matches!(v, Verdict::Passed)),
                count(|v| matches!(v, Verdict::Failed(_))),
                count(|v| matches!(v, Verdict::Skipped(_))),
                count(|v| matches!(v, Verdict::KnownDifference(_))),
                count(|v| matches!(v, Verdict::NotRun(_))),
                if notes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", notes.join("; "))
                }
            ));
            }
        }
    }
    out
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![];
    for kind in LedgerKind::ALL {
        for b in [BackendKind::Local, BackendKind::PocketIc] {
            let at = format!("{}::{}", kind.name(), b.name());
            for (test, run) in suite() {
                let name = format!("{test}::{at}");
                trials.push(Trial::ignorable_test(name.clone(), move || {
                    record("suite", &name, kind, b, run_suite_test(run, b, kind))
                }));
            }
            let name = format!("suite::test_suite_is_these_16::{at}");
            trials.push(Trial::ignorable_test(name.clone(), move || {
                record("suite", &name, kind, b, suite_covers(b, kind))
            }));
            for (fact, run) in facts::facts() {
                let name = format!("facts::{fact}::{at}");
                trials.push(Trial::ignorable_test(name.clone(), move || {
                    let v = match deploy(b, kind) {
                        Ok(env) => match run(&env, kind) {
                            Ok(()) => Verdict::Passed,
                            Err(e) => Verdict::Failed(e),
                        },
                        Err(v) => v,
                    };
                    record("facts", &name, kind, b, v)
                }));
            }
        }
    }
    for (name, _) in KNOWN_DIFFERENCES {
        assert!(
            trials.iter().any(|t| t.name() == *name),
            "KNOWN_DIFFERENCES names {name}, which is no trial"
        );
    }
    let conclusion = libtest_mimic::run(&args, trials);
    let results = RESULTS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if !results.is_empty() {
        println!("{}", summary(&results));
    }
    conclusion.exit();
}
