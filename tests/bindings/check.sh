#!/usr/bin/env bash
# Generates the TypeScript bindings of candid/tool_host.did and candid/test_ledger.did with
# @icp-sdk/bindgen (the versions pinned in package-lock.json) into generated/ (git-ignored) and
# compiles them with a typed usage file (usage.ts) under `tsc --strict --noEmit`. A renamed or
# renumbered Candid type breaks the compile.
#
# Usage: tests/bindings/check.sh    (needs node >= 20.19 and npm; installs with `npm ci`)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

die() {
  echo "bindings/check.sh: error: $*" >&2
  exit 1
}

command -v node >/dev/null || die "node is not installed (node >= 20.19 is needed: https://nodejs.org, or your package manager's nodejs)"
# The locked packages (@noble/*, commander) declare node >= 20.19; npm ci only warns below it.
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \
  || die "node $(node --version) is too old: node >= 20.19 is needed (the locked packages declare it)"
command -v npm >/dev/null || die "npm is not installed (it comes with node)"

# Exactly the lock file's packages (from npm's cache when it has them).
npm ci --no-audit --no-fund --prefer-offline >/dev/null || die "npm ci failed (is the npm registry reachable?)"

rm -rf generated
for did in tool_host test_ledger; do
  npx --no-install icp-bindgen --did-file "../../candid/$did.did" --out-dir "generated/$did" \
    --declarations-typescript >/dev/null || die "icp-bindgen failed on candid/$did.did"
done
npx --no-install tsc -p tsconfig.json || die "the generated bindings do not compile with usage.ts (tsc --strict)"
echo "bindings: candid/tool_host.did and candid/test_ledger.did compile under tsc --strict"
