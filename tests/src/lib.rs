//! Integration tests: one backend trait over PocketIC and the local IC host, and what the
//! end-to-end scenarios (`e2e/`) share. See `docs/testing.md`.
//!
//! - [`backend`]: the [`backend::Backend`] trait scenarios are written against;
//! - [`local`]: the local IC host (wasmi), what CI runs here;
//! - [`pocketic`]: PocketIC, where `POCKET_IC_BIN` names a server binary;
//! - [`wasm`]: where the canister wasms come from (`TOOL_HOST_WASM_DIR`, or built once);
//! - [`gateway`]: the IC's HTTP gateway for `http_request` (and a TCP front for MCP clients);
//! - [`clients`]: typed clients of the tool host, the ledgers and the cycles ledger's depositor;
//! - [`ledgers`]: the two ledgers scenarios run against (test ledger, cycles ledger);
//! - [`world`]: the deployed starting point every scenario shares;
//! - [`odd`]: a WAT canister whose transfer reply does not decode;
//! - [`perf`]: the benchmark's flows, its results file and gate (`bin/bench.rs`);
//! - [`check`]: how scenarios fail (and how "unsupported" differs from failed).

pub mod backend;
pub mod check;
pub mod clients;
pub mod gateway;
pub mod ledgers;
pub mod local;
pub mod odd;
pub mod perf;
pub mod pocketic;
pub mod wasm;
pub mod world;
