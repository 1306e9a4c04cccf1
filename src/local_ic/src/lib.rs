//! A local IC host that runs canister wasm in wasmi, for tests without PocketIC.
//!
//! [`LocalIc`] simulates a single subnet: it creates canisters, installs real
//! canister `.wasm` files (e.g. built with ic-cdk 0.20), and implements the System API
//! (`ic0.*`) they import, with IC message semantics: every execution commits or rolls
//! back, inter-canister calls are delivered in order in later rounds, bounded-wait
//! calls time out with `SYS_UNKNOWN`, the global timer fires when time passes it,
//! and instructions are counted with wasmi fuel or, with [`CostModel::Ic`], as the replica
//! counts them. See `docs/local-ic.md`.
//!
//! ```no_run
//! use local_ic::{InstallMode, LocalIc};
//! use candid::Principal;
//!
//! let mut ic = LocalIc::new();
//! let admin = Principal::from_slice(&[1]);
//! let canister = ic.create_canister(vec![admin]);
//! let wasm = std::fs::read("canister.wasm").unwrap();
//! ic.install(canister, &wasm, candid::encode_args(()).unwrap(), InstallMode::Install, admin)
//!     .unwrap();
//! let reply = ic.update_call(canister, admin, "greet", candid::encode_one("x").unwrap());
//! ```

mod canister;
pub mod certificate;
mod code;
mod errors;
mod host;
mod ic_cost;
mod ids;
mod install;
mod management;
mod messages;
mod query;
mod scheduler;
mod stable;
mod system_api;
pub mod wasm_build;
mod wasm_module;

pub use candid::Principal;
pub use canister::DEFAULT_CYCLES;
pub use errors::{HostError, InstallError, Reject, RejectCode};
pub use host::{CostModel, InstallMode, Limits, LocalIc, LogEntry, DEFAULT_START_TIME_NANOS};
pub use ids::{canister_id_from_counter, management_canister, subnet_id, MessageId};
pub use stable::WASM_PAGE_SIZE;

/// The `ic0` functions the host implements, in the order of ic0 1.2.0's `sys.rs`.
pub fn implemented_imports() -> Vec<&'static str> {
    system_api::IMPORTS.iter().map(|spec| spec.name).collect()
}
