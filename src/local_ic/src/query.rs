//! Non-replicated executions that never commit: query calls and inspect-message.

use candid::Principal;

use crate::code::{method_export, Entry};
use crate::errors::{Reject, RejectCode};
use crate::host::LocalIc;
use crate::system_api::ExecKind;
use crate::wasm_module::MethodKind;

impl LocalIc {
    /// Executes a query method in non-replicated mode; nothing is ever committed.
    pub fn query_call(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: Vec<u8>,
    ) -> Result<Vec<u8>, Reject> {
        let code = self.installed_code(canister, "a query")?;
        match code.prepared.methods.get(method) {
            Some(MethodKind::Query) => {}
            Some(MethodKind::CompositeQuery) => {
                return Err(Reject::new(
                    RejectCode::CanisterError,
                    format!(
                        "Error from Canister {canister}: composite query '{method}' is not \
                         supported by the local IC host"
                    ),
                ))
            }
            _ => {
                return Err(Reject::new(
                    RejectCode::CanisterError,
                    format!(
                        "Error from Canister {canister}: Canister has no query method '{method}'"
                    ),
                ))
            }
        }
        let mut exec = self.exec_state(canister, ExecKind::NonReplicatedQuery, None);
        exec.caller = sender;
        exec.arg = arg;
        exec.can_respond = true;
        // The target of a query call sees a certificate of its certified data and its time.
        exec.data_certificate = Some(crate::certificate::data_certificate(
            canister,
            &self.canisters[&canister].certified_data,
            exec.time,
        ));
        let export = method_export(method, MethodKind::Query);
        let outcome = self.execute(canister, Entry::Export(&export), exec);
        self.last_instructions = outcome.instructions;
        self.last_fuel = outcome.fuel;
        match (outcome.result, outcome.exec.response) {
            (Err(trap), _) => Err(Reject::new(
                RejectCode::CanisterError,
                format!("Error from Canister {canister}: {trap}"),
            )),
            (Ok(()), Some(payload)) => payload.into_result(),
            (Ok(()), None) => Err(Reject::new(
                RejectCode::CanisterError,
                format!("Error from Canister {canister}: Canister did not reply to the call"),
            )),
        }
    }

    /// Runs `canister_inspect_message` for an ingress update; never commits.
    pub(crate) fn inspect_message(
        &mut self,
        canister: Principal,
        sender: Principal,
        method: &str,
        arg: &[u8],
    ) -> Result<(), Reject> {
        let mut exec = self.exec_state(canister, ExecKind::InspectMessage, None);
        exec.caller = sender;
        exec.arg = arg.to_vec();
        exec.method_name = method.to_string();
        let outcome = self.execute(canister, Entry::Export("canister_inspect_message"), exec);
        match outcome.result {
            Err(trap) => Err(Reject::new(
                RejectCode::CanisterError,
                format!("Error from Canister {canister}: {trap}"),
            )),
            Ok(()) if !outcome.exec.accepted_message => Err(Reject::new(
                RejectCode::CanisterReject,
                format!(
                    "Canister {canister} rejected the message: canister_inspect_message did not \
                     call ic0.accept_message (method '{method}')"
                ),
            )),
            Ok(()) => Ok(()),
        }
    }
}
