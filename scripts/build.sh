#!/usr/bin/env bash
# Builds the release wasms of the canisters, ready for `dfx deploy` or any other installer:
#
#   out/tool_host.wasm.gz    out/test_ledger.wasm.gz    (what dfx.json installs)
#   out/tool_host.wasm       out/test_ledger.wasm       (the same modules, uncompressed)
#
# Usage: scripts/build.sh [tool_host|test_ledger]...    (no argument: both)
#
# `cargo build --locked --release --target wasm32-unknown-unknown -p tool_host -p test_ledger`
# (always both, see below) with the toolchain pinned in rust-toolchain.toml; then, for each
# canister asked for (dfx.json and icp.yaml ask for one at a time):
#   - `ic-wasm shrink`, and public metadata: `candid:service` (candid/<name>.did), `candid:args`
#     (the install argument types of its service line) and `app:version` (the package version);
#   - scripts/wasm_imports.py: the module imports only `ic0` functions;
#   - `ic-wasm check-endpoints`: it exports the .did's methods, with the same query/update
#     modes, and otherwise only the system entry points the canister defines;
#   - `gzip -n`.
# Finally scripts/check_dfx_json.py checks that dfx.json names these files and that they are
# what it says (the metadata read back included). Any failure stops the build with an error
# (exit status 1).
#
# Environment: CARGO_TARGET_DIR (where cargo builds; default target/ of the workspace); IC_WASM
# (an ic-wasm binary to use instead of the pinned one: on PATH, the prebuilt one of
# tools/package.json installed with npm, or else compiled with `cargo install`).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# The ic-wasm release the outputs are made with (crates.io, and @icp-sdk/ic-wasm-linux-x64 in
# tools/package.json: the same release); bump both deliberately.
IC_WASM_VERSION="0.11.1"
ALL_CANISTERS=(tool_host test_ledger)
WASM_TARGET="wasm32-unknown-unknown"
OUT="out"

die() {
  echo "build.sh: error: $*" >&2
  exit 1
}

# The exports of each canister that are not in its .did: system entry points, ic-cdk's timer
# executor, and ic_cdk::export_candid!'s get_candid_pointer.
hidden_endpoints() {
  echo "canister_init"
  echo "canister_post_upgrade"
  echo "get_candid_pointer"
  if [[ "$1" == "tool_host" ]]; then
    echo "canister_inspect_message"
    echo "canister_global_timer"
    echo "canister_update:<ic-cdk internal> timer_executor"
  fi
}

size_of() {
  wc -c <"$1" | tr -d ' '
}

# Which canisters: the arguments, each one of ALL_CANISTERS, or all of them.
canisters=()
if (($# == 0)); then
  canisters=("${ALL_CANISTERS[@]}")
else
  for name in "$@"; do
    known=false
    for c in "${ALL_CANISTERS[@]}"; do
      if [[ "$name" == "$c" ]]; then known=true; fi
    done
    "$known" || die "unknown canister '$name' (canisters: ${ALL_CANISTERS[*]})"
    canisters+=("$name")
  done
fi

command -v cargo >/dev/null || die "cargo is not on PATH (install rustup: the toolchain is pinned in rust-toolchain.toml)"
command -v python3 >/dev/null || die "python3 is needed for the import check (scripts/wasm_imports.py)"
command -v gzip >/dev/null || die "gzip is not on PATH"

# The toolchain of rust-toolchain.toml (rustup installs it on first use) and its wasm target.
if command -v rustup >/dev/null; then
  installed_targets="$(rustup target list --installed)"
  grep -qx "$WASM_TARGET" <<<"$installed_targets" || rustup target add "$WASM_TARGET"
fi
echo "== toolchain: $(rustc --version)"

# ic-wasm, at the pinned version (or the one IC_WASM names): on PATH, else the prebuilt binary of
# tools/package.json (npm, Linux x86_64; scripts/install-tools.sh installs it), else compiled with
# `cargo install` (minutes).
NPM_IC_WASM="$ROOT/tools/node_modules/@icp-sdk/ic-wasm-linux-x64/bin/ic-wasm"
if [[ -n "${IC_WASM:-}" ]]; then
  echo "== ic-wasm from IC_WASM=$IC_WASM"
elif command -v ic-wasm >/dev/null && [[ "$(ic-wasm --version)" == "ic-wasm $IC_WASM_VERSION" ]]; then
  IC_WASM="ic-wasm"
else
  if [[ "$(uname -sm)" == "Linux x86_64" ]] && command -v npm >/dev/null; then
    "$ROOT/scripts/install-tools.sh" ||
      echo "== the prebuilt ic-wasm could not be installed (above); compiling it instead" >&2
  fi
  if [[ -x "$NPM_IC_WASM" ]]; then
    [[ "$("$NPM_IC_WASM" --version)" == "ic-wasm $IC_WASM_VERSION" ]] ||
      die "tools/package.json pins $("$NPM_IC_WASM" --version), this script IC_WASM_VERSION=$IC_WASM_VERSION: change both together"
    IC_WASM="$NPM_IC_WASM"
  else
    echo "== installing ic-wasm $IC_WASM_VERSION (cargo install ic-wasm --version $IC_WASM_VERSION --locked)"
    cargo install ic-wasm --version "$IC_WASM_VERSION" --locked
    IC_WASM="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin/ic-wasm"
  fi
fi
[[ "$("$IC_WASM" --version)" == "ic-wasm $IC_WASM_VERSION" ]] ||
  die "$IC_WASM is not ic-wasm $IC_WASM_VERSION"
echo "== $("$IC_WASM" --version) ($IC_WASM)"

# Always both packages in one cargo invocation, whichever canisters were asked for: Cargo unifies
# dependency features across the packages it builds together, so building one alone could give
# a different module (and rebuild the shared dependencies each time).
packages=()
for name in "${ALL_CANISTERS[@]}"; do packages+=(-p "$name"); done
echo "== cargo build --locked --target $WASM_TARGET --release ${packages[*]}"
cargo build --locked --target "$WASM_TARGET" --release "${packages[@]}"

# Where cargo put it: CARGO_TARGET_DIR, a .cargo/config.toml or the default target/.
TARGET_DIR="$(cargo metadata --locked --no-deps --format-version 1 |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
mkdir -p "$OUT"
for name in "${canisters[@]}"; do
  built="$TARGET_DIR/$WASM_TARGET/release/$name.wasm"
  did="$ROOT/candid/$name.did"
  wasm="$OUT/$name.wasm"
  gz="$OUT/$name.wasm.gz"
  [[ -f "$built" ]] || die "cargo did not produce $built"
  [[ -f "$did" ]] || die "no Candid interface $did"

  echo "== $name"
  rm -f "$wasm" "$gz"
  "$IC_WASM" "$built" -o "$wasm" shrink
  "$IC_WASM" "$wasm" -o "$wasm" metadata candid:service -f "$did" -v public
  # The install argument's types, from the .did's service line (`(HostArg)`), as dfx writes them:
  # tools that install the module read them to encode the argument.
  args="$(python3 "$ROOT/scripts/release_facts.py" candid-args "$did")" || die "cannot read the service line of $did"
  "$IC_WASM" "$wasm" -o "$wasm" metadata candid:args -d "$args" -v public
  # The package version (Cargo.toml), public as in DFINITY's Orbit canisters: which release a
  # deployed canister runs, read with `dfx canister metadata ID app:version` or icp's equivalent.
  version="$(python3 "$ROOT/scripts/release_facts.py" version "$name")" || die "cannot read the version of package $name"
  "$IC_WASM" "$wasm" -o "$wasm" metadata app:version -d "$version" -v public
  # The module imports only ic0 functions (scripts/wasm_imports.py prints them).
  if ! python3 "$ROOT/scripts/wasm_imports.py" "$wasm"; then
    rm -f "$wasm"
    die "$name imports something the IC does not provide (see above)"
  fi
  # The exported methods are exactly the .did's, with the same query/update modes, plus the
  # system entry points the canister defines.
  hidden_endpoints "$name" >"$OUT/$name.hidden"
  if ! "$IC_WASM" "$wasm" check-endpoints --candid "$did" --hidden "$OUT/$name.hidden"; then
    rm -f "$wasm" "$OUT/$name.hidden"
    die "$name exports other methods than candid/$name.did declares (see above)"
  fi
  rm -f "$OUT/$name.hidden"
  # -n: no file name or time stamp in the header, so equal modules give equal files.
  gzip -n -9 -c "$wasm" >"$gz.tmp"
  mv "$gz.tmp" "$gz"
  printf '%s: cargo %s bytes, shrunk with metadata %s bytes, gzipped %s bytes\n' \
    "$name" "$(size_of "$built")" "$(size_of "$wasm")" "$(size_of "$gz")"
done

echo "== dfx.json"
python3 "$ROOT/scripts/check_dfx_json.py" --built "${canisters[@]}"

echo "== built"
for name in "${canisters[@]}"; do
  echo "out/$name.wasm.gz ($(size_of "$OUT/$name.wasm.gz") bytes)"
done
