//! End-to-end scenarios over the real canister wasms, each written once and run on every
//! backend: `<scenario>::local` on the local IC host, `<scenario>::pocketic` on PocketIC.
//!
//! A PocketIC trial without a server (`POCKET_IC_BIN` unset) is reported as ignored with that
//! reason; so is a trial that needs what its backend cannot do ("unsupported on pocketic: ...").
//! Neither is ever counted as passed. On the local host, "unsupported" is a failure.
//!
//! ```sh
//! cargo test -p tool-host-tests --test e2e                      # all trials
//! cargo test -p tool-host-tests --test e2e -- outcome::         # a filter, as with libtest
//! POCKET_IC_BIN=/path/to/pocket-ic cargo test -p tool-host-tests --test e2e
//! ```

mod auth;
mod flow;
mod icrc2;
mod inputs;
mod outcome;
mod race;
mod reconcile;
mod steps;
mod timers;
mod unknown;
mod upgrade;

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use tool_host_tests::backend::{Backend, BackendKind};
use tool_host_tests::check::{Check, Fail};
use tool_host_tests::local::LocalBackend;
use tool_host_tests::pocketic::{PocketIcBackend, SERVER_ENV};
use tool_host_tests::world::World;

/// One scenario: a name and a body that runs on a freshly deployed [`World`].
#[derive(Clone, Copy)]
pub struct Scenario {
    pub name: &'static str,
    pub run: fn(&mut World) -> Check,
}

fn scenarios() -> Vec<Scenario> {
    let mut all = vec![];
    all.extend(flow::scenarios());
    all.extend(outcome::scenarios());
    all.extend(unknown::scenarios());
    all.extend(race::scenarios());
    all.extend(reconcile::scenarios());
    all.extend(upgrade::scenarios());
    all.extend(timers::scenarios());
    all.extend(icrc2::scenarios());
    all.extend(auth::scenarios());
    all.extend(inputs::scenarios());
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

fn run(s: &Scenario, kind: BackendKind) -> Result<Completion, Failed> {
    let b = match backend(kind) {
        Ok(b) => b,
        Err(verdict) => return verdict,
    };
    let mut world = match World::deploy(b) {
        Ok(w) => w,
        Err(e) => return verdict(Err(e), kind, None),
    };
    let result = (s.run)(&mut world);
    verdict(result, kind, Some(&mut world))
}

/// A scenario's result as the harness reports it; a failure carries the canisters' last logs.
fn verdict(
    result: Check,
    kind: BackendKind,
    world: Option<&mut World>,
) -> Result<Completion, Failed> {
    match result {
        Ok(()) => Ok(Completion::Completed),
        Err(Fail::Unsupported(why)) if kind != BackendKind::Local => {
            Ok(Completion::ignored_with(why))
        }
        Err(f) => {
            let mut msg = f.to_string();
            if let Some(Ok(logs)) = world.map(|w| w.b.take_logs()) {
                let tail: Vec<String> = logs.into_iter().rev().take(30).collect();
                if !tail.is_empty() {
                    msg.push_str("\n--- last canister logs (newest first) ---\n");
                    msg.push_str(&tail.join("\n"));
                }
            }
            Err(msg.into())
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![];
    for s in scenarios() {
        for kind in [BackendKind::Local, BackendKind::PocketIc] {
            let name = format!("{}::{}", s.name, kind.name());
            trials.push(Trial::ignorable_test(name, move || run(&s, kind)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
