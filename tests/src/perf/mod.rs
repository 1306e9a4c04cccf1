//! The benchmark (`cargo run -p tool-host-tests --bin bench`): instructions per flow on the real
//! wasm, on the local IC host's IC cost model and in wasmi fuel, steady state (median and
//! maximum over many transfers by several owners), after upgrades and at scale. Its figures go
//! to a committed results file; the gate in `scripts/test.sh` runs the quick set against it.
//! See `docs/perf.md`.

pub mod flows;
pub mod native_fill;
pub mod results;
