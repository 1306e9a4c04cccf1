//! PocketIC as a [`Backend`], used only where `POCKET_IC_BIN` points to a PocketIC server
//! binary (the `pocket-ic` crate would otherwise try to download one, which fails here).

use crate::backend::{
    Backend, BackendError, BackendKind, InstallMode, PendingMessages, Result, Submitted,
};
use candid::Principal;
use pocket_ic::common::rest::RawMessageId;
use pocket_ic::{CanisterSettings, PocketIc, PocketIcBuilder, RejectResponse};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Duration;

/// The environment variable naming the server binary.
pub const SERVER_ENV: &str = "POCKET_IC_BIN";

/// PocketIC cannot tell whether anything is left to do: `run_until_quiet` ticks this many
/// rounds (or `max_rounds` if fewer), enough for a timer's self-call chain to finish.
pub const SETTLE_TICKS: u64 = 30;

pub struct PocketIcBackend {
    pic: PocketIc,
    pending: PendingMessages<RawMessageId>,
}

impl PocketIcBackend {
    /// The server binary, if the environment names one.
    pub fn server_binary() -> Option<PathBuf> {
        std::env::var_os(SERVER_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    }

    /// A fresh instance with one application subnet; `Unsupported` without a server binary.
    pub fn new() -> Result<Self> {
        let bin = Self::server_binary().ok_or_else(|| {
            BackendError::unsupported(BackendKind::PocketIc, format!("{SERVER_ENV} not set"))
        })?;
        if !bin.is_file() {
            return Err(BackendError::Host(format!(
                "{SERVER_ENV}={} is not a file",
                bin.display()
            )));
        }
        let pic = PocketIcBuilder::new()
            .with_application_subnet()
            .with_server_binary(bin)
            .build();
        Ok(PocketIcBackend {
            pic,
            pending: PendingMessages::default(),
        })
    }

    /// The instance itself, for what the trait does not cover.
    pub fn pic(&mut self) -> &mut PocketIc {
        &mut self.pic
    }
}

fn reject(r: RejectResponse) -> BackendError {
    BackendError::Reject {
        code: r.reject_code as u32,
        message: r.reject_message,
    }
}

fn unsupported(reason: &str) -> BackendError {
    BackendError::unsupported(BackendKind::PocketIc, reason)
}

/// Runs a `pocket-ic` call that panics on failure, turning the panic into an error.
fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        BackendError::Host(format!("{what}: {msg}"))
    })
}

impl Backend for PocketIcBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::PocketIc
    }

    fn create_canister(&mut self, controllers: &[Principal]) -> Result<Principal> {
        let settings = CanisterSettings {
            controllers: Some(controllers.to_vec()),
            ..Default::default()
        };
        let sender = controllers.first().copied();
        guarded("create_canister", || {
            self.pic
                .create_canister_with_settings(sender, Some(settings))
        })
    }

    fn install(
        &mut self,
        canister: Principal,
        wasm: &[u8],
        arg: Vec<u8>,
        mode: InstallMode,
        sender: Principal,
    ) -> Result<()> {
        let wasm = wasm.to_vec();
        match mode {
            InstallMode::Install => guarded("install_canister", || {
                self.pic.install_canister(canister, wasm, arg, Some(sender))
            }),
            InstallMode::Reinstall => self
                .pic
                .reinstall_canister(canister, wasm, arg, Some(sender))
                .map_err(reject),
            InstallMode::Upgrade => self
                .pic
                .upgrade_canister(canister, wasm, arg, Some(sender))
                .map_err(reject),
        }
    }

    fn controllers(&mut self, canister: Principal) -> Result<Vec<Principal>> {
        guarded("get_controllers", || self.pic.get_controllers(canister))
    }

    fn delete_canister(&mut self, canister: Principal, sender: Principal) -> Result<()> {
        self.pic
            .stop_canister(canister, Some(sender))
            .map_err(reject)?;
        self.pic
            .delete_canister(canister, Some(sender))
            .map_err(reject)
    }

    fn update(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<Vec<u8>> {
        self.pic
            .update_call(canister, sender, method, arg)
            .map_err(reject)
    }

    fn query(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<Vec<u8>> {
        self.pic
            .query_call(canister, sender, method, arg)
            .map_err(reject)
    }

    fn submit(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<Submitted> {
        let id = self
            .pic
            .submit_call(canister, sender, method, arg)
            .map_err(reject)?;
        Ok(self.pending.submitted(id))
    }

    fn await_reply(&mut self, id: Submitted) -> Result<Vec<u8>> {
        let mid = self.pending.take(id)?;
        self.pic.await_call(mid).map_err(reject)
    }

    fn time_nanos(&mut self) -> u64 {
        self.pic.get_time().as_nanos_since_unix_epoch()
    }

    fn advance_time(&mut self, by: Duration) {
        self.pic.advance_time(by);
    }

    fn tick(&mut self) {
        self.pic.tick();
    }

    fn run_until_quiet(&mut self, max_rounds: u64) -> Result<u64> {
        let n = max_rounds.min(SETTLE_TICKS);
        for _ in 0..n {
            self.pic.tick();
        }
        Ok(n)
    }

    fn last_instructions(&mut self) -> Result<u64> {
        Err(unsupported(
            "PocketIC does not report the instructions of one message",
        ))
    }

    fn canister_instructions(&mut self, _canister: Principal) -> Result<u64> {
        Err(BackendError::unsupported(
            BackendKind::PocketIc,
            "PocketIC reports no per-canister instruction totals",
        ))
    }

    fn inject_reject(&mut self, _callee: Principal, _method: &str, code: u32) -> Result<()> {
        Err(unsupported(&format!(
            "PocketIC cannot inject a system reject (code {code}) into an inter-canister call"
        )))
    }

    fn take_logs(&mut self) -> Result<Vec<String>> {
        Err(unsupported(
            "canister logs are read with fetch_canister_logs per canister",
        ))
    }

    fn lose_reply(&mut self, _callee: Principal, method: &str) -> Result<()> {
        Err(unsupported(&format!(
            "PocketIC cannot drop the response of an inter-canister call ({method})"
        )))
    }

    fn inject_reply(&mut self, _callee: Principal, method: &str, _reply: Vec<u8>) -> Result<()> {
        Err(unsupported(&format!(
            "PocketIC cannot answer an inter-canister call ({method}) in the callee's place"
        )))
    }

    fn set_clock_ahead(&mut self, _canister: Principal, _ahead: Duration) -> Result<()> {
        Err(unsupported(
            "PocketIC runs one clock per subnet; a canister's clock cannot run ahead of its subnet's",
        ))
    }

    fn add_cycles(&mut self, canister: Principal, amount: u128) -> Result<()> {
        guarded("add_cycles", || self.pic.add_cycles(canister, amount)).map(|_| ())
    }

    fn cycle_balance(&mut self, canister: Principal) -> Result<u128> {
        guarded("cycle_balance", || self.pic.cycle_balance(canister))
    }

    fn stable_memory(&mut self, canister: Principal) -> Result<Vec<u8>> {
        guarded("get_stable_memory", || self.pic.get_stable_memory(canister))
    }

    fn set_stable_memory(&mut self, canister: Principal, image: &[u8]) -> Result<()> {
        guarded("set_stable_memory", || {
            self.pic.set_stable_memory(
                canister,
                image.to_vec(),
                pocket_ic::common::rest::BlobCompression::NoCompression,
            )
        })
    }
}
