//! Installing, reinstalling and upgrading canister code, atomically.

use std::sync::Arc;

use candid::Principal;

use crate::code::{Code, Entry, RunOutcome};
use crate::errors::{InstallError, RejectCode};
use crate::host::{CostModel, InstallMode, LocalIc};
use crate::ic_cost::instrument::instrument;
use crate::messages::{Origin, Payload};
use crate::stable::StableMemory;
use crate::system_api::{ExecKind, ExecState};
use crate::wasm_module::{decompress, prepare};

/// Effects of the install-time executions that outlive them.
#[derive(Default)]
struct InstallEffects {
    instructions: u64,
    fuel: u64,
    global_timer: Option<u64>,
    certified_data: Option<Vec<u8>>,
    balance: Option<u128>,
}

impl LocalIc {
    /// Installs `wasm` (optionally gzipped) on `canister` as `sender`, which must be a
    /// controller.
    ///
    /// The module is checked first: an import the host does not implement is refused
    /// and named. A trap in `(start)`, `canister_init`, `canister_pre_upgrade` or
    /// `canister_post_upgrade` leaves the canister exactly as it was. Installing
    /// deactivates the global timer (the new code may set it again).
    pub fn install(
        &mut self,
        canister: Principal,
        wasm: &[u8],
        arg: Vec<u8>,
        mode: InstallMode,
        sender: Principal,
    ) -> Result<(), InstallError> {
        let c = self
            .canisters
            .get(&canister)
            .ok_or(InstallError::CanisterNotFound(canister))?;
        if !c.controllers.contains(&sender) {
            return Err(InstallError::NotController { canister, sender });
        }
        match (mode, c.code.is_some()) {
            (InstallMode::Install, true) => return Err(InstallError::CanisterNotEmpty(canister)),
            (InstallMode::Upgrade, false) => return Err(InstallError::CanisterEmpty(canister)),
            _ => {}
        }
        let wasm = decompress(wasm)?;
        let mut prepared = prepare(&wasm)?;
        if self.cost_model == CostModel::Ic {
            prepared.bytes = instrument(&prepared.bytes).map_err(InstallError::InvalidWasm)?;
        }
        let prepared = Arc::new(prepared);
        let module = Code::compile(&self.engine, &prepared)?;
        let new_stable = StableMemory::default();
        let new = Code::instantiate(&self.linker, module, prepared, new_stable)?;
        let effects = match mode {
            InstallMode::Install | InstallMode::Reinstall => {
                self.install_fresh(canister, new, arg, sender)?
            }
            InstallMode::Upgrade => self.upgrade(canister, new, arg, sender)?,
        };
        self.last_instructions = effects.instructions;
        self.last_fuel = effects.fuel;
        let c = self.canisters.get_mut(&canister).expect("checked");
        c.version += 1;
        c.global_timer = effects.global_timer.unwrap_or(0);
        if let Some(balance) = effects.balance {
            c.balance = balance;
        }
        match (mode, effects.certified_data) {
            (_, Some(data)) => c.certified_data = data,
            (InstallMode::Upgrade, None) => {}
            (_, None) => c.certified_data.clear(),
        }
        if mode == InstallMode::Reinstall {
            self.drop_call_contexts(canister);
        }
        Ok(())
    }

    /// Runs `(start)` and `canister_init` on a fresh instance and installs it.
    fn install_fresh(
        &mut self,
        canister: Principal,
        mut new: Code,
        arg: Vec<u8>,
        sender: Principal,
    ) -> Result<InstallEffects, InstallError> {
        let mut effects = InstallEffects::default();
        let version = self.canisters[&canister].version + 1;
        if let Some(start) = new.prepared.start_export.clone() {
            let exec = self.install_exec(canister, ExecKind::Start, sender, version, &effects);
            let outcome = new.run(Entry::Export(&start), exec);
            self.install_step(canister, "(start)", outcome, &mut effects)?;
        }
        if new.prepared.exports("canister_init") {
            let mut exec = self.install_exec(canister, ExecKind::Init, sender, version, &effects);
            exec.arg = arg;
            let outcome = new.run(Entry::Export("canister_init"), exec);
            self.install_step(canister, "canister_init", outcome, &mut effects)?;
        }
        self.canisters.get_mut(&canister).expect("exists").code = Some(new);
        Ok(effects)
    }

    /// `canister_pre_upgrade` on the old instance, then `(start)` and
    /// `canister_post_upgrade` on the new one; all or nothing.
    fn upgrade(
        &mut self,
        canister: Principal,
        mut new: Code,
        arg: Vec<u8>,
        sender: Principal,
    ) -> Result<InstallEffects, InstallError> {
        let mut effects = InstallEffects::default();
        let old_version = self.canisters[&canister].version;
        let mut old = self
            .canisters
            .get_mut(&canister)
            .expect("exists")
            .code
            .take()
            .expect("checked non-empty");
        let snapshot = old.begin();
        let mut moved = false;
        let result = self.run_upgrade(
            canister,
            (&mut old, &mut new),
            (arg, sender, old_version),
            &mut effects,
            &mut moved,
        );
        let c = self.canisters.get_mut(&canister).expect("exists");
        match result {
            Ok(()) => {
                new.commit();
                c.code = Some(new);
                Ok(effects)
            }
            Err(e) => {
                if moved {
                    old.put_stable(new.take_stable());
                }
                old.rollback(&self.linker, snapshot);
                c.code = Some(old);
                Err(e)
            }
        }
    }

    fn run_upgrade(
        &mut self,
        canister: Principal,
        (old, new): (&mut Code, &mut Code),
        (arg, sender, old_version): (Vec<u8>, Principal, u64),
        effects: &mut InstallEffects,
        moved: &mut bool,
    ) -> Result<(), InstallError> {
        if old.prepared.exports("canister_pre_upgrade") {
            let mut exec =
                self.install_exec(canister, ExecKind::PreUpgrade, sender, old_version, effects);
            exec.global_timer = self.canisters[&canister].global_timer;
            let outcome = old.run(Entry::Export("canister_pre_upgrade"), exec);
            self.install_step(canister, "canister_pre_upgrade", outcome, effects)?;
        }
        new.put_stable(old.take_stable());
        *moved = true;
        // The global timer is deactivated by the upgrade; post_upgrade may set it again.
        effects.global_timer = None;
        let version = old_version + 1;
        if let Some(start) = new.prepared.start_export.clone() {
            let exec = self.install_exec(canister, ExecKind::Start, sender, version, effects);
            let outcome = new.run(Entry::Export(&start), exec);
            self.install_step(canister, "(start)", outcome, effects)?;
        }
        if new.prepared.exports("canister_post_upgrade") {
            let mut exec =
                self.install_exec(canister, ExecKind::PostUpgrade, sender, version, effects);
            exec.arg = arg;
            let outcome = new.run(Entry::Export("canister_post_upgrade"), exec);
            self.install_step(canister, "canister_post_upgrade", outcome, effects)?;
        }
        Ok(())
    }

    /// The System API state for an install-time execution.
    fn install_exec(
        &self,
        canister: Principal,
        kind: ExecKind,
        sender: Principal,
        version: u64,
        effects: &InstallEffects,
    ) -> ExecState {
        let mut exec = self.exec_state(canister, kind, None);
        exec.caller = sender;
        exec.canister_version = version;
        exec.global_timer = effects.global_timer.unwrap_or(0);
        exec.fuel_limit = self
            .limits
            .install_instructions
            .saturating_sub(effects.instructions);
        if let Some(balance) = effects.balance {
            exec.balance = balance;
        }
        exec
    }

    /// Records logs and effects of one install-time execution, or turns its trap into
    /// an install error.
    fn install_step(
        &mut self,
        canister: Principal,
        function: &str,
        outcome: RunOutcome,
        effects: &mut InstallEffects,
    ) -> Result<(), InstallError> {
        for line in &outcome.logs {
            self.log(canister, line.clone());
        }
        effects.instructions += outcome.instructions;
        effects.fuel += outcome.fuel;
        let mut exec = outcome.exec;
        if let Err(message) = outcome.result {
            self.log(canister, format!("[TRAP]: {message}"));
            return Err(InstallError::Trapped {
                function: function.to_string(),
                message,
            });
        }
        if exec.global_timer_changed {
            effects.global_timer = Some(exec.global_timer);
        }
        if let Some(data) = exec.certified_data.take() {
            effects.certified_data = Some(data);
        }
        effects.balance = Some(exec.balance);
        Ok(())
    }

    /// After a reinstall, open call contexts are rejected and pending callbacks
    /// forgotten (their responses will be dropped).
    fn drop_call_contexts(&mut self, canister: Principal) {
        let round = self.round;
        let c = self.canisters.get_mut(&canister).expect("exists");
        c.callbacks.clear();
        let contexts = std::mem::take(&mut c.call_contexts);
        for ctx in contexts.into_values() {
            if !ctx.responded && ctx.origin != Origin::System {
                let payload = Payload::reject(
                    RejectCode::CanisterReject,
                    format!("Canister {canister} has been reinstalled"),
                );
                self.deliver(
                    ctx.origin,
                    payload,
                    ctx.available_cycles,
                    (ctx.instructions, ctx.fuel),
                    round,
                );
            }
        }
    }
}
