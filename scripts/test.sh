#!/usr/bin/env bash
# The project's checks, as CI runs them: format, lints (native and wasm), the release wasms
# (scripts/build.sh, with its import, endpoint and metadata checks; `icp build` making the same
# modules; the sizes docs/deploy.md states), the TypeScript bindings generated from the .did files
# (tests/bindings/check.sh, node >= 18), the MCP SDK client's packages (tests/mcp-client), then
# every test: the end-to-end
# scenarios running those very wasms on the local IC host against two ledgers (the test ledger
# and DFINITY's cycles ledger, read from $CYCLES_LEDGER_WASM or ../shared/fixtures/cycles-ledger/;
# without it those runs are reported as not run), and the ICRC-1 conformance suite against both.
# The per-ledger counts are printed again at the end. Last, the benchmark gate: the quick set of
# `bench` on the IC cost model fails when a figure grows past the tolerance over the committed
# docs/perf-results.json (docs/perf.md).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== clippy (native)"
cargo clippy --workspace --all-targets -- -D warnings

echo "== clippy (wasm32: the core, the engine and the canisters)"
cargo clippy --target wasm32-unknown-unknown -p tool-host-core -p tool-host-engine -p tool_host -p test_ledger -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p tool_host --features trace-instructions -- -D warnings

echo "== scripts/build.sh"
scripts/build.sh

echo "== icp build (icp-cli with icp.yaml: the same modules as scripts/build.sh)"
scripts/icp-build.sh

echo "== wasm sizes (docs/deploy.md states them within 10%)"
scripts/release_facts.py sizes "tool_host=$(wc -c <out/tool_host.wasm.gz)" "test_ledger=$(wc -c <out/test_ledger.wasm.gz)"

echo "== TypeScript bindings (@icp-sdk/bindgen from candid/*.did, tsc --strict)"
tests/bindings/check.sh

echo "== MCP client (tests/mcp-client: npm ci of the pinned @modelcontextprotocol/sdk; e2e mcp:: runs it)"
(cd tests/mcp-client && npm ci --no-audit --no-fund --prefer-offline >/dev/null)

echo "== tests (the scenarios run the wasms in out/)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
TOOL_HOST_WASM_DIR="$PWD/out" cargo test --workspace 2>&1 | tee "$log" || status=$?

echo "== benchmark gate (the quick set on the IC cost model against docs/perf-results.json)"
TOOL_HOST_WASM_DIR="$PWD/out" cargo run -q -p tool-host-tests --bin bench -- --gate || status=$?

echo "== runs per ledger (e2e scenarios, ICRC-1 conformance suite, ledger facts)"
sed -n -e '/^e2e summary/,/^$/p' -e '/^conformance summary/,/^$/p' "$log"
exit "$status"
