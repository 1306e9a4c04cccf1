#!/usr/bin/env bash
# The project's checks, as CI runs them: format, lints (native and wasm), the release wasms
# (scripts/build.sh, with its import and endpoint checks), then every test, the end-to-end
# scenarios running those very wasms on the local IC host.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== clippy (native)"
cargo clippy --workspace --all-targets -- -D warnings

echo "== clippy (wasm32: the core, the engine and the canisters)"
cargo clippy --target wasm32-unknown-unknown -p tool-host-core -p tool-host-engine -p tool_host -p test_ledger -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p tool_host --features bench,trace-instructions -- -D warnings

echo "== scripts/build.sh"
scripts/build.sh

echo "== tests (the scenarios run the wasms in out/)"
TOOL_HOST_WASM_DIR="$PWD/out" cargo test --workspace
