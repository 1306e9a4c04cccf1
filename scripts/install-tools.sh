#!/usr/bin/env bash
# Installs the prebuilt tools pinned in tools/package.json (tools/package-lock.json) with npm:
#
#   tools/node_modules/@icp-sdk/icp-cli-linux-x64/bin/icp      icp-cli, dfx's successor
#   tools/node_modules/@icp-sdk/ic-wasm-linux-x64/bin/ic-wasm  ic-wasm
#
# Usage: scripts/install-tools.sh [--check]
#
# Does nothing when both binaries are there at their pinned versions; otherwise `npm ci` in
# tools/ (exact versions and integrity hashes from the lock file). --check only says whether they
# are installed (exit status 0) or not (1), and installs nothing. The packages exist for Linux
# x86_64 only; elsewhere this fails with a message (scripts/build.sh then compiles ic-wasm with
# `cargo install`; icp-cli: see docs/deploy.md). Concurrent runs (icp builds canisters in
# parallel) wait for each other (flock, when present).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/tools"
ICP="$TOOLS/node_modules/@icp-sdk/icp-cli-linux-x64/bin/icp"
IC_WASM="$TOOLS/node_modules/@icp-sdk/ic-wasm-linux-x64/bin/ic-wasm"

die() {
  echo "install-tools.sh: error: $*" >&2
  exit 1
}

# The version tools/package.json pins for PACKAGE (exact: no ranges are used there).
pinned() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["dependencies"][sys.argv[2]])' \
    "$TOOLS/package.json" "$1"
}

installed() {
  local icp ic_wasm
  icp="$(pinned @icp-sdk/icp-cli-linux-x64)" || return 1
  ic_wasm="$(pinned @icp-sdk/ic-wasm-linux-x64)" || return 1
  [[ -x "$ICP" && -x "$IC_WASM" ]] || return 1
  [[ "$("$ICP" --version 2>/dev/null)" == "icp $icp" ]] || return 1
  [[ "$("$IC_WASM" --version 2>/dev/null)" == "ic-wasm $ic_wasm" ]] || return 1
}

if [[ "${1:-}" == "--check" ]]; then
  installed
  exit
fi
(($# == 0)) || die "usage: scripts/install-tools.sh [--check]"

installed && exit 0
[[ "$(uname -sm)" == "Linux x86_64" ]] ||
  die "the npm packages of icp-cli and ic-wasm pinned in tools/package.json are for Linux x86_64, this is $(uname -sm)"
command -v npm >/dev/null || die "npm is not on PATH (install Node.js 20 or later, which brings npm)"

install() {
  # Another run may have installed them while this one waited for the lock.
  installed && return 0
  echo "== npm ci in tools/ (icp-cli and ic-wasm, pinned in tools/package-lock.json)" >&2
  if ! (cd "$TOOLS" && npm ci --no-audit --no-fund --loglevel=error >&2); then
    die "npm ci in tools/ failed (no access to the npm registry?); see npm's message above"
  fi
  installed || die "npm installed tools/ but $ICP or $IC_WASM is missing or not the pinned version"
}

if command -v flock >/dev/null; then
  exec 9>"$TOOLS/.install.lock"
  flock 9
fi
install
