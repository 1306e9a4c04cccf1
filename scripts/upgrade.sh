#!/usr/bin/env bash
# Upgrades the tool host the safe way: stop → install → start (docs/deploy.md, "Upgrading").
#
# Stopping waits until every call the tool host made has its reply, so no send is in flight
# when the new code is installed; the new code's post_upgrade then finds none. Upgrading a
# running canister with sends in flight is refused by post_upgrade (the old code keeps
# running), unless forced, which makes those sends' outcomes unknown (they are reconciled
# from the ledger's history): replies that arrive after such an upgrade would reach code that
# no longer knows the calls.
#
# Usage: scripts/upgrade.sh [--network NAME] [--force]
#   --network NAME  dfx network (default: local)
#   --force         pass `force = opt true` (only if the canister cannot be stopped)
#
# Needs dfx and out/tool_host.wasm.gz (scripts/build.sh, which this runs first).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

NETWORK="local"
FORCE="null"
while [ $# -gt 0 ]; do
  case "$1" in
    --network) NETWORK="${2:?--network needs a name}"; shift 2 ;;
    --force) FORCE="opt true"; shift ;;
    *) echo "upgrade.sh: unknown argument $1 (usage: scripts/upgrade.sh [--network NAME] [--force])" >&2; exit 2 ;;
  esac
done

command -v dfx >/dev/null || { echo "upgrade.sh: error: dfx is not installed (scripts/deploy-local.sh installs it)" >&2; exit 1; }

echo "=== build"
scripts/build.sh tool_host

# Names nothing but `force`: admins and limits stay as they are (see docs/deploy.md).
ARG="(variant { Upgrade = opt record { force = ${FORCE}; limits = null; add_admins = null } })"
if [ "$FORCE" = "null" ]; then
  echo "=== stop (waits for every reply the tool host still expects)"
  dfx canister --network "$NETWORK" stop tool_host
  echo "=== install (upgrade)"
  if ! dfx canister --network "$NETWORK" install tool_host --mode upgrade \
      --wasm out/tool_host.wasm.gz --argument "$ARG" --yes; then
    echo "upgrade.sh: the upgrade failed; starting the old code again" >&2
    dfx canister --network "$NETWORK" start tool_host
    exit 1
  fi
  echo "=== start"
  dfx canister --network "$NETWORK" start tool_host
else
  echo "=== install (upgrade, forced: sends in flight become unknown and are reconciled)"
  dfx canister --network "$NETWORK" install tool_host --mode upgrade \
    --wasm out/tool_host.wasm.gz --argument "$ARG" --yes
fi
dfx canister --network "$NETWORK" status tool_host
echo "upgraded"
