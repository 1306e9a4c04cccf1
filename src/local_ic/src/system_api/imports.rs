//! The `ic0` host functions, defined once in a [`wasmi::Linker`] shared by all canisters.
//!
//! Signatures follow the wasm32 System API (`I = i32`), as listed in ic0 1.2.0's
//! `sys.rs`. Every function first checks that it is available in the current
//! execution context (the spec's availability letters) and traps otherwise.

use wasmi::{Engine, Linker};

use super::{call_fns, canister_fns, cost_env_fns, message_fns, Env};

/// An `ic0` function the host implements, with its wasm32 signature.
pub(crate) struct ImportSpec {
    pub name: &'static str,
    params: &'static str,
    results: &'static str,
}

impl ImportSpec {
    /// The signature in the form used in install errors, e.g. `(i32, i32) -> ()`.
    pub fn signature(&self) -> String {
        format!("({}) -> ({})", self.params, self.results)
    }
}

macro_rules! imports {
    ($($name:ident: ($($p:literal),*) -> ($($r:literal)?);)*) => {
        /// Every `ic0` import the host implements.
        pub(crate) const IMPORTS: &[ImportSpec] = &[
            $(ImportSpec {
                name: stringify!($name),
                params: imports!(@join $($p),*),
                results: concat!($($r)?),
            },)*
        ];
    };
    (@join) => { "" };
    (@join $first:literal $(, $rest:literal)*) => { concat!($first $(, ", ", $rest)*) };
}

imports! {
    msg_arg_data_size: () -> ("i32");
    msg_arg_data_copy: ("i32", "i32", "i32") -> ();
    msg_caller_size: () -> ("i32");
    msg_caller_copy: ("i32", "i32", "i32") -> ();
    msg_caller_info_data_size: () -> ("i32");
    msg_caller_info_data_copy: ("i32", "i32", "i32") -> ();
    msg_caller_info_signer_size: () -> ("i32");
    msg_caller_info_signer_copy: ("i32", "i32", "i32") -> ();
    msg_reject_code: () -> ("i32");
    msg_reject_msg_size: () -> ("i32");
    msg_reject_msg_copy: ("i32", "i32", "i32") -> ();
    msg_deadline: () -> ("i64");
    msg_reply_data_append: ("i32", "i32") -> ();
    msg_reply: () -> ();
    msg_reject: ("i32", "i32") -> ();
    msg_cycles_available128: ("i32") -> ();
    msg_cycles_refunded128: ("i32") -> ();
    msg_cycles_accept128: ("i64", "i64", "i32") -> ();
    cycles_burn128: ("i64", "i64", "i32") -> ();
    canister_self_size: () -> ("i32");
    canister_self_copy: ("i32", "i32", "i32") -> ();
    canister_cycle_balance128: ("i32") -> ();
    canister_liquid_cycle_balance128: ("i32") -> ();
    canister_status: () -> ("i32");
    canister_version: () -> ("i64");
    subnet_self_size: () -> ("i32");
    subnet_self_copy: ("i32", "i32", "i32") -> ();
    subnet_self_node_count: () -> ("i32");
    msg_method_name_size: () -> ("i32");
    msg_method_name_copy: ("i32", "i32", "i32") -> ();
    accept_message: () -> ();
    call_new: ("i32", "i32", "i32", "i32", "i32", "i32", "i32", "i32") -> ();
    call_on_cleanup: ("i32", "i32") -> ();
    call_data_append: ("i32", "i32") -> ();
    call_with_best_effort_response: ("i32") -> ();
    call_cycles_add128: ("i64", "i64") -> ();
    call_perform: () -> ("i32");
    stable64_size: () -> ("i64");
    stable64_grow: ("i64") -> ("i64");
    stable64_write: ("i64", "i64", "i64") -> ();
    stable64_read: ("i64", "i64", "i64") -> ();
    root_key_size: () -> ("i32");
    root_key_copy: ("i32", "i32", "i32") -> ();
    certified_data_set: ("i32", "i32") -> ();
    data_certificate_present: () -> ("i32");
    data_certificate_size: () -> ("i32");
    data_certificate_copy: ("i32", "i32", "i32") -> ();
    time: () -> ("i64");
    global_timer_set: ("i64") -> ("i64");
    performance_counter: ("i32") -> ("i64");
    is_controller: ("i32", "i32") -> ("i32");
    in_replicated_execution: () -> ("i32");
    cost_call: ("i64", "i64", "i32") -> ();
    cost_create_canister: ("i32") -> ();
    cost_http_request: ("i64", "i64", "i32") -> ();
    cost_http_request_v2: ("i32", "i32", "i32") -> ();
    cost_sign_with_ecdsa: ("i32", "i32", "i32", "i32") -> ("i32");
    cost_sign_with_schnorr: ("i32", "i32", "i32", "i32") -> ("i32");
    cost_vetkd_derive_key: ("i32", "i32", "i32", "i32") -> ("i32");
    env_var_count: () -> ("i32");
    env_var_name_size: ("i32") -> ("i32");
    env_var_name_copy: ("i32", "i32", "i32", "i32") -> ();
    env_var_name_exists: ("i32", "i32") -> ("i32");
    env_var_value_size: ("i32", "i32") -> ("i32");
    env_var_value_copy: ("i32", "i32", "i32", "i32", "i32") -> ();
    debug_print: ("i32", "i32") -> ();
    trap: ("i32", "i32") -> ();
}

/// Builds the linker with every function listed in [`IMPORTS`].
pub(crate) fn build_linker(engine: &Engine) -> Linker<Env> {
    let mut l = Linker::<Env>::new(engine);
    message_fns::define_message(&mut l);
    message_fns::define_cycles(&mut l);
    canister_fns::define_canister(&mut l);
    call_fns::define_calls(&mut l);
    canister_fns::define_stable(&mut l);
    canister_fns::define_misc(&mut l);
    cost_env_fns::define_costs(&mut l);
    cost_env_fns::define_env_vars(&mut l);
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linker_defines_every_listed_import_with_its_signature() {
        let engine = Engine::default();
        let linker = build_linker(&engine);
        let imports: String = IMPORTS
            .iter()
            .map(|spec| {
                let params: Vec<_> = spec.params.split(", ").filter(|p| !p.is_empty()).collect();
                let results = if spec.results.is_empty() {
                    String::new()
                } else {
                    format!("(result {})", spec.results)
                };
                format!(
                    "(import \"ic0\" \"{}\" (func (param {}) {}))\n",
                    spec.name,
                    params.join(" "),
                    results
                )
            })
            .collect();
        let wasm = wat::parse_str(format!("(module {imports} (memory 1))")).unwrap();
        let module = wasmi::Module::new(&engine, &wasm).unwrap();
        let mut store = wasmi::Store::new(&engine, Env::default());
        linker.instantiate_and_start(&mut store, &module).unwrap();
        assert_eq!(IMPORTS.len(), 67);
    }
}
