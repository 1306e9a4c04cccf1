//! The local IC host (`local_ic::LocalIc`, wasmi) as a [`Backend`]: what CI runs here.

use crate::backend::{
    Backend, BackendError, BackendKind, InstallMode, PendingMessages, Result, Submitted,
};
use candid::Principal;
use local_ic::{LocalIc, MessageId, Reject, RejectCode};
use std::time::Duration;

pub struct LocalBackend {
    ic: LocalIc,
    pending: PendingMessages<MessageId>,
}

impl Default for LocalBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalBackend {
    /// Canister output is echoed to stderr when `LOCAL_IC_ECHO` is set (instruction traces,
    /// debugging a scenario).
    pub fn new() -> Self {
        let mut ic = LocalIc::new();
        ic.set_echo_logs(std::env::var_os("LOCAL_IC_ECHO").is_some());
        LocalBackend {
            ic,
            pending: PendingMessages::default(),
        }
    }

    /// A local host that counts instructions with `model` (the benchmark's IC cost model),
    /// whatever `LOCAL_IC_COST_MODEL` says.
    pub fn with_cost_model(model: local_ic::CostModel) -> Self {
        let mut ic = LocalIc::with_cost_model(model);
        ic.set_echo_logs(std::env::var_os("LOCAL_IC_ECHO").is_some());
        LocalBackend {
            ic,
            pending: PendingMessages::default(),
        }
    }

    /// The host itself, for what the trait does not cover.
    pub fn ic(&mut self) -> &mut LocalIc {
        &mut self.ic
    }
}

fn reject(r: Reject) -> BackendError {
    BackendError::Reject {
        code: r.code.as_u32(),
        message: r.message,
    }
}

fn unsupported(reason: &str) -> BackendError {
    BackendError::unsupported(BackendKind::Local, reason)
}

impl Backend for LocalBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Local
    }

    fn create_canister(&mut self, controllers: &[Principal]) -> Result<Principal> {
        Ok(self.ic.create_canister(controllers.to_vec()))
    }

    fn install(
        &mut self,
        canister: Principal,
        wasm: &[u8],
        arg: Vec<u8>,
        mode: InstallMode,
        sender: Principal,
    ) -> Result<()> {
        let mode = match mode {
            InstallMode::Install => local_ic::InstallMode::Install,
            InstallMode::Reinstall => local_ic::InstallMode::Reinstall,
            InstallMode::Upgrade => local_ic::InstallMode::Upgrade,
        };
        self.ic
            .install(canister, wasm, arg, mode, sender)
            .map_err(|e| BackendError::Host(format!("install on {canister}: {e}")))
    }

    fn controllers(&mut self, canister: Principal) -> Result<Vec<Principal>> {
        if !self.ic.canister_exists(canister) {
            return Err(BackendError::Host(format!("no canister {canister}")));
        }
        Ok(self.ic.controllers(canister))
    }

    fn delete_canister(&mut self, _canister: Principal, _sender: Principal) -> Result<()> {
        Err(unsupported(
            "the local IC host has no canister stop/delete (use inject_reject with code 3)",
        ))
    }

    fn update(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<Vec<u8>> {
        self.ic
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
        self.ic
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
            .ic
            .submit_update(canister, sender, method, arg)
            .map_err(reject)?;
        Ok(self.pending.submitted(id))
    }

    fn await_reply(&mut self, id: Submitted) -> Result<Vec<u8>> {
        let mid = self.pending.take(id)?;
        self.ic.await_message(mid).map_err(reject)
    }

    fn time_nanos(&mut self) -> u64 {
        self.ic.time_nanos()
    }

    fn advance_time(&mut self, by: Duration) {
        self.ic.advance_time(by);
    }

    fn tick(&mut self) {
        self.ic.tick();
    }

    fn run_until_quiet(&mut self, max_rounds: u64) -> Result<u64> {
        self.ic
            .run_until_quiet(max_rounds)
            .map_err(|e| BackendError::Host(e.to_string()))
    }

    fn last_instructions(&mut self) -> Result<u64> {
        Ok(self.ic.last_instructions())
    }

    fn canister_instructions(&mut self, canister: Principal) -> Result<u64> {
        Ok(self.ic.instructions_total(canister))
    }

    fn canister_fuel(&mut self, canister: Principal) -> Result<u64> {
        Ok(self.ic.fuel_total(canister))
    }

    fn last_fuel(&mut self) -> Result<u64> {
        Ok(self.ic.last_fuel())
    }

    fn inject_reject(&mut self, callee: Principal, method: &str, code: u32) -> Result<()> {
        let code = match RejectCode::from_u32(code) {
            Some(c) if c.is_system_code() => c,
            _ => {
                return Err(BackendError::Host(format!(
                    "inject_reject: {code} is not a system reject code (1, 2, 3 or 6)"
                )))
            }
        };
        self.ic.inject_call_fault(
            callee,
            method,
            code,
            &format!("injected by the test ({code})"),
        );
        Ok(())
    }

    fn take_logs(&mut self) -> Result<Vec<String>> {
        Ok(self
            .ic
            .take_logs()
            .into_iter()
            .map(|l| format!("[{}] {}", l.canister, l.message))
            .collect())
    }

    fn lose_reply(&mut self, callee: Principal, method: &str) -> Result<()> {
        self.exists(callee)?;
        self.ic.inject_lost_reply(callee, method);
        Ok(())
    }

    fn inject_reply(&mut self, callee: Principal, method: &str, reply: Vec<u8>) -> Result<()> {
        self.exists(callee)?;
        self.ic.inject_call_reply(callee, method, reply);
        Ok(())
    }

    fn set_clock_ahead(&mut self, canister: Principal, ahead: Duration) -> Result<()> {
        self.exists(canister)?;
        if ahead < self.ic.clock_ahead(canister) {
            return Err(BackendError::Host(format!(
                "set_clock_ahead: {canister}'s clock is already {:?} ahead; it cannot go back to {ahead:?}",
                self.ic.clock_ahead(canister)
            )));
        }
        self.ic.set_clock_ahead(canister, ahead);
        Ok(())
    }

    fn add_cycles(&mut self, canister: Principal, amount: u128) -> Result<()> {
        self.exists(canister)?;
        self.ic.add_cycles(canister, amount);
        Ok(())
    }

    fn cycle_balance(&mut self, canister: Principal) -> Result<u128> {
        self.exists(canister)?;
        Ok(self.ic.cycle_balance(canister))
    }

    fn stable_memory(&mut self, canister: Principal) -> Result<Vec<u8>> {
        self.exists(canister)?;
        if !self.ic.has_code(canister) {
            return Ok(vec![]);
        }
        let len = self.ic.stable_memory_pages(canister) * local_ic::WASM_PAGE_SIZE;
        Ok(self.ic.read_stable_memory(canister, 0, len as usize))
    }

    fn set_stable_memory(&mut self, canister: Principal, image: &[u8]) -> Result<()> {
        self.exists(canister)?;
        if !self.ic.has_code(canister) {
            return Err(BackendError::Host(format!(
                "{canister} has no code: install some before loading a stable image"
            )));
        }
        self.ic.set_stable_memory(canister, image);
        Ok(())
    }
}

impl LocalBackend {
    fn exists(&self, canister: Principal) -> Result<()> {
        if self.ic.canister_exists(canister) {
            Ok(())
        } else {
            Err(BackendError::Host(format!("no canister {canister}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendExt;

    #[test]
    fn inject_reject_takes_only_system_codes() {
        let mut b = LocalBackend::new();
        let c = b.create_canister(&[Principal::anonymous()]).unwrap();
        for code in [1, 2, 3, 6] {
            b.inject_reject(c, "m", code).unwrap();
        }
        for code in [0, 4, 5, 7] {
            assert!(matches!(
                b.inject_reject(c, "m", code),
                Err(BackendError::Host(_))
            ));
        }
    }

    #[test]
    fn the_odd_canister_replies_and_tick_until_counts_rounds() {
        let mut b = LocalBackend::new();
        let me = Principal::anonymous();
        let c = b.create_canister(&[me]).unwrap();
        b.install(c, &crate::odd::wasm(), vec![], InstallMode::Install, me)
            .unwrap();
        let (d,): (u8,) = b.query_typed(c, me, "icrc1_decimals", ()).unwrap();
        assert_eq!(d, crate::odd::DECIMALS);
        let (s,): (String,) = b.query_typed(c, me, "icrc1_symbol", ()).unwrap();
        assert_eq!(s, crate::odd::SYMBOL);
        let (fee,): (candid::Nat,) = b.query_typed(c, me, "icrc1_fee", ()).unwrap();
        assert_eq!(fee, candid::Nat::from(10_000u32));
        let (garbage,): (String,) = b.update_typed(c, me, "icrc1_transfer", ()).unwrap();
        assert_eq!(garbage, "garbage");
        let start = b.time_nanos();
        let rounds = b
            .tick_until(5, |b| Ok(b.time_nanos() >= start + 3))
            .unwrap();
        assert_eq!(rounds, 3, "a round moves time by 1 ns");
        assert!(b.tick_until(2, |_| Ok(false)).is_err());
    }
}
