#!/usr/bin/env bash
# Deploys the tool host and a test ledger to a fresh local replica, then walks through one
# transfer the way an agent and an owner do it, printing every step (docs/deploy.md):
#
#   1. dfx (installed with the official installer when missing), identities, `dfx start --clean`
#   2. the test ledger "Test Token" (TKA, 8 decimals, fee 10_000), minted by "tool-host-minter"
#   3. the tool host; the ICRC packs (register_form) and the ledger (register_canister)
#   4. the owner (the current dfx identity) reads its deposit account; the minter sends 10 TKA
#   5. the owner authorizes the agent "tool-host-agent"; the agent prepares a 1.5 TKA transfer
#      from the owner's deposit account to the owner's own ledger account (call_tool)
#   6. the ICRC-21 consent message for `confirm` (asked as the anonymous principal, as a wallet
#      may), the owner confirms, reads the intent's outcome, and the balances are checked
#
# Usage: scripts/deploy-local.sh        (from any directory; stop the replica with `dfx stop`)
#
# Needs: bash, curl (only to install dfx), python3 (scripts/candid_helper.py), the Rust
# toolchain (scripts/build.sh, which dfx runs to build the canisters). The replica is wiped
# (`--clean`): the canister ids and balances of an earlier run are gone. When dfx cannot be
# installed or cannot start its replica, the script stops with the reason and the next steps
# (icp-cli from npm, or the cargo-only walkthrough on the local IC host).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

MINTER_ID="tool-host-minter"
AGENT_ID="tool-host-agent"
FEE=10000
DEPOSIT=1000000000    # 10 TKA, in e8s
TRANSFER=150000000    # 1.5 TKA, in e8s

die() {
  echo "deploy-local.sh: error: $*" >&2
  exit 1
}

step() {
  printf '\n=== %s\n' "$*"
}

helper() {
  python3 "$ROOT/scripts/candid_helper.py" "$@"
}

# `call IDENTITY CANISTER METHOD [ARG | --argument-file FILE]`: a canister call as IDENTITY; the
# reply (dfx's JSON form of the Candid value) is shown on stderr on one line, and returned on
# stdout.
call() {
  local identity="$1"
  shift
  echo "\$ dfx --identity $identity canister call $*" >&2
  local reply
  if ! reply="$(dfx --identity "$identity" canister call --output json "$@")"; then
    echo "deploy-local.sh: error: the call failed" >&2
    return 1
  fi
  helper get "" <<<"$reply" >&2 2>/dev/null || printf '%s\n' "$reply" >&2
  printf '%s\n' "$reply"
}

# `get PATH <<<"$reply"`: the value at PATH of a reply; fails, showing the reply, when it is
# absent (an `Err`, for example, has no `Ok`). Assign its result to a variable (x="$(get ..)")
# or run it as a command: inside another command's arguments a failure would not stop the script.
get() {
  helper get "$1"
}

# --- 1. dfx, identities, replica --------------------------------------------------------------

step "dfx"
command -v python3 >/dev/null || die "python3 is needed (scripts/candid_helper.py)"

# What to do when dfx cannot be had or cannot run its replica: `no_dfx MESSAGE [FIRST STEP]`
# prints the error, then the first step (if any) and these.
NEXT_STEPS="  - install dfx yourself (https://internetcomputer.org/docs/building-apps/getting-started/install,
    or DFXVM_INIT_YES=true sh -ci \"\$(curl -fsSL https://internetcomputer.org/install.sh)\" where
    internetcomputer.org is reachable), then run scripts/deploy-local.sh again;
  - use icp-cli, dfx's successor, from npm (no download from internetcomputer.org):
    scripts/install-tools.sh, then the steps of docs/deploy.md, section \"Deploy with icp-cli\";
  - without any replica, with cargo only: the same walkthrough on the local IC host,
    cargo run -q -p tool-host-tests --bin walkthrough   (docs/testing.md)"
no_dfx() {
  echo "deploy-local.sh: error: $1" >&2
  echo "next steps, any one of:" >&2
  if (($# > 1)); then echo "  - $2" >&2; fi
  echo "$NEXT_STEPS" >&2
  exit 1
}

load_dfx_env() {
  local env
  for env in "$HOME/.local/share/dfx/env" "$HOME/Library/Application Support/org.dfinity.dfx/env"; do
    if [[ -f "$env" ]]; then
      # shellcheck source=/dev/null
      . "$env"
    fi
  done
}
if ! command -v dfx >/dev/null; then
  load_dfx_env
fi
if ! command -v dfx >/dev/null; then
  command -v curl >/dev/null || no_dfx "dfx is not installed, and curl, needed to download its installer, is missing"
  echo "installing dfx with dfxvm (the official installer; DFX_VERSION picks a version)"
  if ! installer="$(curl -fsSL --retry 2 --connect-timeout 20 https://internetcomputer.org/install.sh)"; then
    no_dfx "dfx is not installed and its installer could not be downloaded from https://internetcomputer.org/install.sh (no network, or the host is unreachable from here; curl's message is above)"
  fi
  if ! DFXVM_INIT_YES=true sh -ci "$installer"; then
    no_dfx "dfx's installer failed (its message is above; it downloads dfx from GitHub)"
  fi
  load_dfx_env
fi
command -v dfx >/dev/null ||
  no_dfx "dfx was installed but is not on PATH; open a new shell (or source ~/.local/share/dfx/env) and run the script again"
dfx --version
# (Captured first: `dfx ... | grep -q` under pipefail fails when grep stops reading early.)
call_help="$(dfx canister call --help)"
[[ "$call_help" == *json* ]] ||
  die "this dfx has no 'dfx canister call --output json'; install a newer one (dfxvm update)"

step "identities"
OWNER_ID="$(dfx identity whoami)"
if [[ "$OWNER_ID" == "$MINTER_ID" || "$OWNER_ID" == "$AGENT_ID" || "$OWNER_ID" == "anonymous" ]]; then
  die "the current dfx identity is '$OWNER_ID'; switch to your own (dfx identity use default)"
fi
identities="$(dfx identity list 2>/dev/null)"
for id in "$MINTER_ID" "$AGENT_ID"; do
  # `dfx identity list` prints one name a line, the current one followed by " *".
  if ! grep -Eq "^${id}( \*)?\$" <<<"$identities"; then
    dfx identity new "$id" --storage-mode plaintext
  fi
done
OWNER="$(dfx identity get-principal --identity "$OWNER_ID")"
MINTER="$(dfx identity get-principal --identity "$MINTER_ID")"
AGENT="$(dfx identity get-principal --identity "$AGENT_ID")"
echo "owner  ($OWNER_ID): $OWNER"
echo "minter ($MINTER_ID): $MINTER"
echo "agent  ($AGENT_ID): $AGENT"

step "local replica (dfx start --background --clean)"
dfx stop >/dev/null 2>&1 || true
if ! dfx start --background --clean; then
  no_dfx "dfx could not start the local replica (dfx's message is above)" \
    "free 127.0.0.1:4943 (dfx.json's local network; 'dfx stop' stops a replica of this project) and run the script again;"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# --- 2. the test ledger --------------------------------------------------------------------

step "deploy test_ledger (builds it with scripts/build.sh)"
dfx --identity "$OWNER_ID" deploy test_ledger --yes --argument "(record {
  name = \"Test Token\"; symbol = \"TKA\"; decimals = 8 : nat8; fee = $FEE : nat;
  minting_account = record { owner = principal \"$MINTER\"; subaccount = null };
  initial_balances = vec {};
})"
LEDGER="$(dfx canister id test_ledger)"
# The minter may also queue faults (docs/test-ledger.md): make it a controller too.
dfx --identity "$OWNER_ID" canister update-settings test_ledger --add-controller "$MINTER"
echo "test_ledger: $LEDGER"

# --- 3. the tool host, its forms and its target ----------------------------------------------

step "deploy tool_host"
dfx --identity "$OWNER_ID" deploy tool_host --yes --argument "(variant { Init = record { admins = vec {}; limits = null } })"
TOOL_HOST="$(dfx canister id tool_host)"
echo "tool_host: $TOOL_HOST (its controller $OWNER is an admin)"

step "register the ICRC packs (register_form)"
for pack in icrc1 icrc2; do
  # The form's JSON as a Candid text literal, in an argument file (no shell quoting involved).
  json_text="$(helper text-file "$ROOT/src/core/packs/$pack.json")"
  printf '(record { id = "%s"; json = %s })\n' "$pack" "$json_text" >"$WORK/register_form_$pack.did"
  reply="$(call "$OWNER_ID" tool_host register_form --argument-file "$WORK/register_form_$pack.did")"
  tools="$(get Ok.tools <<<"$reply")"
  echo "form $pack: tools $tools"
done

step "register the ledger (register_canister; the tool host reads its decimals, symbol and fee)"
reply="$(call "$OWNER_ID" tool_host register_canister \
  "(record { id = principal \"$LEDGER\"; forms = vec { \"icrc1\"; \"icrc2\" }; label = opt \"TKA\" })")"
refs="$(get Ok.refs <<<"$reply")"
echo "refs: $refs"

# --- 4. the owner's deposit account, funded by the minter -----------------------------------

step "the owner reads its deposit account (deposit_account)"
reply="$(call "$OWNER_ID" tool_host deposit_account)"
DEPOSIT_TEXT="$(get Ok.text <<<"$reply")"
DEPOSIT_ACCOUNT="$(helper account Ok.account <<<"$reply")"
echo "deposit account: $DEPOSIT_TEXT"

step "the minter sends 10 TKA to the deposit account (test_ledger icrc1_transfer, a mint)"
reply="$(call "$MINTER_ID" test_ledger icrc1_transfer "(record {
  to = $DEPOSIT_ACCOUNT; amount = $DEPOSIT : nat;
  from_subaccount = null; fee = null; memo = null; created_at_time = null;
})")"
block="$(helper nat Ok <<<"$reply")"
echo "minted in block $block"

# --- 5. the agent prepares a transfer --------------------------------------------------------

step "the owner authorizes the agent (authorize_agent)"
reply="$(call "$OWNER_ID" tool_host authorize_agent "(principal \"$AGENT\")")"
get Ok <<<"$reply" >/dev/null

step "the agent prepares 1.5 TKA from the deposit account to the owner's account (call_tool)"
INPUT="{\"canister_id\":\"$LEDGER\",\"to\":\"$OWNER\",\"amount\":\"1.5 TKA\"}"
echo "input: $INPUT"
input_text="$(helper text "$INPUT")"
reply="$(call "$AGENT_ID" tool_host call_tool \
  "(record { name = \"prepare_icrc1_transfer\"; input = $input_text; owner = opt principal \"$OWNER\" })")"
is_error="$(get Ok.is_error <<<"$reply")"
[[ "$is_error" == "false" ]] || die "prepare_icrc1_transfer answered an error"
get Ok.content <<<"$reply"
INTENT_ID="$(get Ok.structured.@json.intent_id <<<"$reply")"
DIGEST="$(get Ok.structured.@json.digest <<<"$reply")"
preview="$(get Ok.structured.@json.preview <<<"$reply")"
echo "intent $INTENT_ID, digest $DIGEST"
echo "preview: $preview"

# --- 6. consent, confirmation, outcome -------------------------------------------------------

step "the ICRC-21 consent message for confirm (asked as the anonymous principal, as a wallet may)"
# The request's `arg` is the Candid encoding of confirm's argument, ConfirmArgs, as a blob.
confirm_arg="$(helper confirm-arg "$INTENT_ID" "$DIGEST")"
printf '(record { method = "confirm"; arg = %s; user_preferences = record {
  metadata = record { language = "en"; utc_offset_minutes = null };
  device_spec = opt variant { GenericDisplay } } })\n' "$confirm_arg" >"$WORK/consent.did"
reply="$(call anonymous tool_host icrc21_canister_call_consent_message --argument-file "$WORK/consent.did")"
echo "--- consent message"
get Ok.consent_message.GenericDisplayMessage <<<"$reply"
echo "---"

step "the owner confirms (confirm, with the intent id and the digest)"
digest_blob="$(helper blob "$DIGEST")"
reply="$(call "$OWNER_ID" tool_host confirm \
  "(record { intent_id = $INTENT_ID : nat64; digest = $digest_blob })")"
get Ok.content <<<"$reply"
OUTCOME="$(get Ok.outcome.0 <<<"$reply")"
[[ "$OUTCOME" == "success" ]] || die "the send's outcome is '$OUTCOME', not success"

step "the owner reads the intent (get_intent)"
reply="$(call "$OWNER_ID" tool_host get_intent "($INTENT_ID : nat64)")"
status="$(get Ok.status <<<"$reply")"
outcome="$(get Ok.outcome <<<"$reply")"
ledger_reply="$(get Ok.reply <<<"$reply")"
echo "status $status, outcome $outcome, the ledger's reply $ledger_reply"

step "balances (test_ledger icrc1_balance_of)"
reply="$(call "$OWNER_ID" test_ledger icrc1_balance_of "($DEPOSIT_ACCOUNT)")"
DEPOSIT_BALANCE="$(helper nat "" <<<"$reply")"
reply="$(call "$OWNER_ID" test_ledger icrc1_balance_of "(record { owner = principal \"$OWNER\"; subaccount = null })")"
OWNER_BALANCE="$(helper nat "" <<<"$reply")"
echo "deposit account: $DEPOSIT_BALANCE e8s (expected $((DEPOSIT - TRANSFER - FEE)))"
echo "owner account:   $OWNER_BALANCE e8s (expected $TRANSFER)"
[[ "$DEPOSIT_BALANCE" == "$((DEPOSIT - TRANSFER - FEE))" && "$OWNER_BALANCE" == "$TRANSFER" ]] ||
  die "the balances are not what the transfer should leave"

step "done"
echo "tool_host $TOOL_HOST and test_ledger $LEDGER run on the local replica; stop it with: dfx stop"
