#!/usr/bin/env bash
# The project's checks, as CI runs them: format, lints (native and wasm), every test.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== clippy (native)"
cargo clippy --workspace --all-targets -- -D warnings

echo "== clippy (wasm32: the core)"
cargo clippy -p tool-host-core --target wasm32-unknown-unknown -- -D warnings

echo "== tests"
cargo test --workspace
