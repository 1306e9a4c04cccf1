// Typed uses of the generated bindings by the names clients rely on: a renamed or renumbered
// Candid type (`Result_3` for `GetIntentResult`), a changed install argument or a changed
// field breaks this compile (tests/bindings/check.sh).
import type {
  _SERVICE,
  ApiError,
  BeginTurnResult,
  GetIntentResult,
  HostArg,
  InitArgs,
  LimitsResult,
  ListIntentsResult,
  ToolCallResult,
  ToolFormat,
  ToolResult,
  TurnResult,
  UnitResult,
  UpgradeArgs,
} from "./generated/tool_host/declarations/tool_host.did.js";
import type { _SERVICE as LedgerService } from "./generated/test_ledger/declarations/test_ledger.did.js";

/// The install argument as a deployer writes it, and the upgrade that names only the limits.
export const install: HostArg = { Init: { admins: [], limits: [] } satisfies InitArgs };
export const upgradeLimitsOnly = (limits: UpgradeArgs["limits"]): HostArg => ({
  Upgrade: [{ force: [], add_admins: [], limits }],
});
export const plainUpgrade: HostArg = { Upgrade: [] };

/// What a client does with `call_tool`'s answer: an outcome word or an error code.
export function outcome(r: ToolCallResult): string {
  if ("Ok" in r) {
    const t: ToolResult = r.Ok;
    return t.outcome[0] ?? (t.is_error ? "error" : "answered");
  }
  const e: ApiError = r.Err;
  return e.code;
}

export function intentStatus(r: GetIntentResult): string | undefined {
  return "Ok" in r ? r.Ok.status : undefined;
}

export function nextPage(r: ListIntentsResult): bigint | undefined {
  return "Ok" in r ? r.Ok.next[0] : undefined;
}

export function callTimeout(r: LimitsResult): number | undefined {
  return "Ok" in r ? r.Ok.call_timeout_seconds : undefined;
}

export function refused(r: UnitResult): string | null {
  return "Err" in r ? r.Err.message : null;
}

/// The service's methods answer the named results.
export async function confirm(
  host: _SERVICE,
  intent_id: bigint,
  digest: Uint8Array,
): Promise<ToolCallResult> {
  return host.confirm({ intent_id, digest });
}

export async function balance(ledger: LedgerService, owner: Parameters<LedgerService["icrc1_balance_of"]>[0]["owner"]): Promise<bigint> {
  return ledger.icrc1_balance_of({ owner, subaccount: [] });
}

/// The bus (issue 11): `list_tools` with no format is MCP as before; a call in a turn names it.
export async function tools(host: _SERVICE, format?: ToolFormat): Promise<string> {
  return host.list_tools(format ? [format] : []);
}
export const openai: ToolFormat = { openai: null };

export async function callInTurn(
  host: _SERVICE,
  turn: bigint,
  name: string,
  input: string,
): Promise<ToolCallResult> {
  return host.call_tool({ name, input, owner: [], turn: [turn] });
}

export function offered(r: BeginTurnResult): string[] {
  return "Ok" in r ? r.Ok.offered : [];
}

export function steps(r: TurnResult): string[] {
  return "Ok" in r ? r.Ok.steps.map((s) => `${s.tool}: ${s.outcome}`) : [];
}
