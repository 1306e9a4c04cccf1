#!/usr/bin/env bash
# `icp build` (icp-cli, icp.yaml) builds the same modules as scripts/build.sh: run by
# scripts/test.sh after scripts/build.sh.
#
# Usage: scripts/icp-build.sh        (after scripts/build.sh; from any directory)
#
# Installs the pinned icp-cli if missing (scripts/install-tools.sh), records the sha256 of the
# out/<name>.wasm.gz that scripts/build.sh made, runs `icp build` for every canister of icp.yaml
# (whose script steps run scripts/build.sh again), and checks that the module icp stored for
# each canister (.icp/cache/artifacts/<name>, what `icp deploy` installs) is byte for byte the
# one scripts/build.sh made. Exit status 1 with a message otherwise.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ICP="$ROOT/tools/node_modules/@icp-sdk/icp-cli-linux-x64/bin/icp"
CANISTERS=(tool_host test_ledger)

die() {
  echo "icp-build.sh: error: $*" >&2
  exit 1
}

sha256() {
  python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"
}

scripts/install-tools.sh
declare -A made
for name in "${CANISTERS[@]}"; do
  [[ -f "out/$name.wasm.gz" ]] || die "no out/$name.wasm.gz: run scripts/build.sh first"
  made[$name]="$(sha256 "out/$name.wasm.gz")"
done

# DO_NOT_TRACK: no usage data sent from CI (icp-cli's telemetry opt-out).
DO_NOT_TRACK=1 "$ICP" build "${CANISTERS[@]}" || die "icp build failed (above)"

for name in "${CANISTERS[@]}"; do
  artifact=".icp/cache/artifacts/$name"
  [[ -f "$artifact" ]] || die "icp build stored no module for $name at $artifact"
  got="$(sha256 "$artifact")"
  [[ "$got" == "${made[$name]}" ]] ||
    die "icp build's $name ($artifact, sha256 $got) is not the out/$name.wasm.gz scripts/build.sh made (sha256 ${made[$name]})"
  echo "$name: icp build stored the module scripts/build.sh made (sha256 $got)"
done
