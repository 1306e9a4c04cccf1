//! Typed clients of the two canisters, one method per Candid method, over any [`Backend`].
//! The types come from the canisters' own crates (`tool-host-engine`, `test_ledger`), which
//! native tests check against `candid/*.did`.
//!
//! Each call answers `Result<R>`: the outer error is the backend's (a reject, a host failure),
//! `R` is the method's Candid result (often a `Result<T, ApiError>` itself).

use crate::backend::{Backend, BackendExt, Result};
use candid::{CandidType, Deserialize, Nat, Principal};
use test_ledger::types as lt;
use tool_host_engine::consent::{ConsentMessageRequest, ConsentResponse};
use tool_host_engine::types::*;

/// The tool host's install and upgrade argument (`HostArg` in the .did), from the engine.
pub use tool_host_engine::types::{HostArg, InitArgs, UpgradeArgs};

/// `HostArg` as install and upgrade bytes.
pub fn host_arg(arg: HostArg) -> Vec<u8> {
    candid::encode_one(arg).expect("encodes")
}

pub type Api<T> = std::result::Result<T, ApiError>;

/// The tool host canister.
#[derive(Clone, Copy, Debug)]
pub struct ToolHost(pub Principal);

impl ToolHost {
    pub fn call_tool(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        name: &str,
        input: &str,
        owner: Option<Principal>,
    ) -> Result<Api<ToolResult>> {
        let args = CallToolArgs {
            name: name.into(),
            input: input.into(),
            owner,
            turn: None,
        };
        b.update_typed(self.0, caller, "call_tool", (args,))
            .map(|(r,)| r)
    }

    pub fn confirm(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        intent_id: u64,
        digest: &[u8],
    ) -> Result<Api<ToolResult>> {
        b.update_typed(
            self.0,
            caller,
            "confirm",
            (confirm_args(intent_id, digest),),
        )
        .map(|(r,)| r)
    }

    pub fn decline(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        intent_id: u64,
    ) -> Result<Api<ToolResult>> {
        b.update_typed(
            self.0,
            caller,
            "decline",
            (DeclineArgs {
                intent_id,
                digest: None,
            },),
        )
        .map(|(r,)| r)
    }

    pub fn get_intent(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        id: u64,
    ) -> Result<Api<IntentView>> {
        b.query_typed(self.0, caller, "get_intent", (id,))
            .map(|(r,)| r)
    }

    /// The first page (up to 100) of an owner's intents.
    pub fn list_intents(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        owner: Option<Principal>,
    ) -> Result<Api<IntentPage>> {
        self.list_intents_page(b, caller, owner, None, Some(100))
    }

    pub fn list_intents_page(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        owner: Option<Principal>,
        start_after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Api<IntentPage>> {
        let args = ListIntentsArgs {
            owner,
            start_after,
            limit,
        };
        b.query_typed(self.0, caller, "list_intents", (args,))
            .map(|(r,)| r)
    }

    /// `call_tool` in a turn.
    pub fn call_tool_in_turn(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        turn: u64,
        name: &str,
        input: &str,
        owner: Option<Principal>,
    ) -> Result<Api<ToolResult>> {
        let args = CallToolArgs {
            name: name.into(),
            input: input.into(),
            owner,
            turn: Some(turn),
        };
        b.update_typed(self.0, caller, "call_tool", (args,))
            .map(|(r,)| r)
    }

    pub fn list_tools_in(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        format: Option<ToolFormat>,
    ) -> Result<String> {
        b.query_typed(self.0, caller, "list_tools", (format,))
            .map(|(r,)| r)
    }

    pub fn list_tools_page(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        args: ListToolsArgs,
    ) -> Result<Api<ToolsPage>> {
        b.query_typed(self.0, caller, "list_tools_page", (args,))
            .map(|(r,)| r)
    }

    pub fn describe_tools(self, b: &mut dyn Backend, caller: Principal) -> Result<Vec<ToolInfo>> {
        b.query_typed(self.0, caller, "describe_tools", ())
            .map(|(r,)| r)
    }

    pub fn set_builtins(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        settings: BuiltinSettings,
    ) -> Result<Api<BuiltinsView>> {
        b.update_typed(self.0, caller, "set_builtins", (settings,))
            .map(|(r,)| r)
    }

    pub fn begin_turn(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        args: BeginTurnArgs,
    ) -> Result<Api<TurnStarted>> {
        b.update_typed(self.0, caller, "begin_turn", (args,))
            .map(|(r,)| r)
    }

    pub fn get_turn(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        id: u64,
        owner: Option<Principal>,
    ) -> Result<Api<TurnView>> {
        b.query_typed(self.0, caller, "get_turn", (GetTurnArgs { id, owner },))
            .map(|(r,)| r)
    }

    pub fn select_tools(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        args: SelectArgs,
    ) -> Result<Api<Vec<ToolInfo>>> {
        b.query_typed(self.0, caller, "select_tools", (args,))
            .map(|(r,)| r)
    }

    pub fn missing_tools(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        names: Vec<String>,
    ) -> Result<Api<Vec<String>>> {
        b.query_typed(self.0, caller, "missing_tools", (names,))
            .map(|(r,)| r)
    }

    pub fn tool_usage(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        owner: Option<Principal>,
    ) -> Result<Api<Vec<ToolUsage>>> {
        b.query_typed(self.0, caller, "tool_usage", (owner,))
            .map(|(r,)| r)
    }

    pub fn get_builtins(self, b: &mut dyn Backend, caller: Principal) -> Result<BuiltinsView> {
        b.query_typed(self.0, caller, "get_builtins", ())
            .map(|(r,)| r)
    }

    pub fn set_escalation_handler(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        handler: Option<Principal>,
    ) -> Result<Api<()>> {
        b.update_typed(self.0, caller, "set_escalation_handler", (handler,))
            .map(|(r,)| r)
    }

    pub fn get_inbox(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        owner: Option<Principal>,
    ) -> Result<Api<Vec<InboxEntryView>>> {
        b.query_typed(self.0, caller, "get_inbox", (owner,))
            .map(|(r,)| r)
    }

    pub fn list_tools(self, b: &mut dyn Backend, caller: Principal) -> Result<String> {
        b.query_typed(self.0, caller, "list_tools", ())
            .map(|(r,)| r)
    }

    pub fn authorize_agent(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        agent: Principal,
    ) -> Result<Api<()>> {
        b.update_typed(self.0, caller, "authorize_agent", (agent,))
            .map(|(r,)| r)
    }

    /// The owner issues an MCP agent token (the secret is in the answer, once).
    pub fn issue_agent_token(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        label: &str,
        expires_at: Option<u64>,
    ) -> Result<Api<IssuedAgentToken>> {
        let args = IssueAgentTokenArgs {
            label: label.into(),
            expires_at,
        };
        b.update_typed(self.0, caller, "issue_agent_token", (args,))
            .map(|(r,)| r)
    }

    pub fn list_agent_tokens(
        self,
        b: &mut dyn Backend,
        caller: Principal,
    ) -> Result<Vec<AgentTokenView>> {
        b.query_typed(self.0, caller, "list_agent_tokens", ())
            .map(|(r,)| r)
    }

    pub fn revoke_agent_token(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        id: u64,
    ) -> Result<Api<()>> {
        b.update_typed(self.0, caller, "revoke_agent_token", (id,))
            .map(|(r,)| r)
    }

    pub fn revoke_agent(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        agent: Principal,
    ) -> Result<Api<()>> {
        b.update_typed(self.0, caller, "revoke_agent", (agent,))
            .map(|(r,)| r)
    }

    pub fn list_agents(
        self,
        b: &mut dyn Backend,
        caller: Principal,
    ) -> Result<Api<Vec<Principal>>> {
        b.query_typed(self.0, caller, "list_agents", ())
            .map(|(r,)| r)
    }

    pub fn deposit_account(
        self,
        b: &mut dyn Backend,
        caller: Principal,
    ) -> Result<Api<DepositAccount>> {
        b.query_typed(self.0, caller, "deposit_account", ())
            .map(|(r,)| r)
    }

    pub fn register_form(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        id: &str,
        json: &str,
    ) -> Result<Api<FormInfo>> {
        let args = RegisterFormArgs {
            id: id.into(),
            json: json.into(),
        };
        b.update_typed(self.0, caller, "register_form", (args,))
            .map(|(r,)| r)
    }

    pub fn remove_form(self, b: &mut dyn Backend, caller: Principal, id: &str) -> Result<Api<()>> {
        b.update_typed(self.0, caller, "remove_form", (id.to_string(),))
            .map(|(r,)| r)
    }

    pub fn list_forms(self, b: &mut dyn Backend, caller: Principal) -> Result<Api<Vec<FormInfo>>> {
        b.query_typed(self.0, caller, "list_forms", ())
            .map(|(r,)| r)
    }

    pub fn register_canister(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        id: Principal,
        label: Option<&str>,
        forms: &[&str],
    ) -> Result<Api<TargetView>> {
        self.register_canister_for(b, caller, id, label, forms, None)
    }

    /// [`Self::register_canister`] for a single owner (`Some`), or shared (`None`).
    pub fn register_canister_for(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        id: Principal,
        label: Option<&str>,
        forms: &[&str],
        owner: Option<Principal>,
    ) -> Result<Api<TargetView>> {
        let args = RegisterCanisterArgs {
            id,
            label: label.map(str::to_string),
            forms: forms.iter().map(|f| f.to_string()).collect(),
            owner,
        };
        b.update_typed(self.0, caller, "register_canister", (args,))
            .map(|(r,)| r)
    }

    pub fn remove_canister(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        id: Principal,
    ) -> Result<Api<()>> {
        b.update_typed(self.0, caller, "remove_canister", (id,))
            .map(|(r,)| r)
    }

    pub fn list_canisters(
        self,
        b: &mut dyn Backend,
        caller: Principal,
    ) -> Result<Api<Vec<TargetView>>> {
        b.query_typed(self.0, caller, "list_canisters", ())
            .map(|(r,)| r)
    }

    pub fn refresh_refs(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        id: Option<Principal>,
    ) -> Result<Api<Vec<TargetView>>> {
        b.update_typed(self.0, caller, "refresh_refs", (id,))
            .map(|(r,)| r)
    }

    pub fn get_limits(self, b: &mut dyn Backend, caller: Principal) -> Result<Api<Limits>> {
        b.query_typed(self.0, caller, "get_limits", ())
            .map(|(r,)| r)
    }

    pub fn set_limits(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        limits: Limits,
    ) -> Result<Api<Limits>> {
        b.update_typed(self.0, caller, "set_limits", (limits,))
            .map(|(r,)| r)
    }

    pub fn add_admin(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        admin: Principal,
    ) -> Result<Api<()>> {
        b.update_typed(self.0, caller, "add_admin", (admin,))
            .map(|(r,)| r)
    }

    pub fn remove_admin(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        admin: Principal,
    ) -> Result<Api<()>> {
        b.update_typed(self.0, caller, "remove_admin", (admin,))
            .map(|(r,)| r)
    }

    pub fn list_admins(
        self,
        b: &mut dyn Backend,
        caller: Principal,
    ) -> Result<Api<Vec<Principal>>> {
        b.query_typed(self.0, caller, "list_admins", ())
            .map(|(r,)| r)
    }

    pub fn stats(self, b: &mut dyn Backend, caller: Principal) -> Result<Api<Stats>> {
        b.query_typed(self.0, caller, "stats", ()).map(|(r,)| r)
    }

    pub fn consent_message(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        req: ConsentMessageRequest,
    ) -> Result<ConsentResponse> {
        b.update_typed(
            self.0,
            caller,
            "icrc21_canister_call_consent_message",
            (req,),
        )
        .map(|(r,)| r)
    }

    pub fn supported_standards(
        self,
        b: &mut dyn Backend,
        caller: Principal,
    ) -> Result<Vec<StandardRecord>> {
        b.query_typed(self.0, caller, "icrc10_supported_standards", ())
            .map(|(r,)| r)
    }
}

pub fn confirm_args(intent_id: u64, digest: &[u8]) -> ConfirmArgs {
    ConfirmArgs {
        intent_id,
        digest: serde_bytes::ByteBuf::from(digest.to_vec()),
    }
}

/// A ledger canister: the test ledger or the cycles ledger (the ICRC-1/2/3 methods are the
/// same; `inject_faults` and `pending_faults` exist on the test ledger only).
#[derive(Clone, Copy, Debug)]
pub struct Ledger(pub Principal);

impl Ledger {
    pub fn balance(self, b: &mut dyn Backend, account: &lt::Account) -> Result<Nat> {
        b.query_typed(
            self.0,
            Principal::anonymous(),
            "icrc1_balance_of",
            (account,),
        )
        .map(|(r,)| r)
    }

    pub fn transfer(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        arg: lt::TransferArg,
    ) -> Result<std::result::Result<Nat, lt::TransferError>> {
        b.update_typed(self.0, caller, "icrc1_transfer", (arg,))
            .map(|(r,)| r)
    }

    pub fn approve(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        arg: lt::ApproveArgs,
    ) -> Result<std::result::Result<Nat, lt::ApproveError>> {
        b.update_typed(self.0, caller, "icrc2_approve", (arg,))
            .map(|(r,)| r)
    }

    pub fn allowance(
        self,
        b: &mut dyn Backend,
        account: lt::Account,
        spender: lt::Account,
    ) -> Result<lt::Allowance> {
        let args = lt::AllowanceArgs { account, spender };
        b.query_typed(self.0, Principal::anonymous(), "icrc2_allowance", (args,))
            .map(|(r,)| r)
    }

    /// The number of blocks in the ledger's log.
    pub fn log_length(self, b: &mut dyn Backend) -> Result<u64> {
        let args: lt::GetBlocksArgs = vec![];
        let (r,): (lt::GetBlocksResult,) =
            b.query_typed(self.0, Principal::anonymous(), "icrc3_get_blocks", (args,))?;
        Ok(nat_u64(&r.log_length))
    }

    /// One block of the log.
    pub fn block(self, b: &mut dyn Backend, index: u64) -> Result<Option<lt::Value>> {
        let args: lt::GetBlocksArgs = vec![lt::GetBlocksRequest {
            start: Nat::from(index),
            length: Nat::from(1u8),
        }];
        let (r,): (lt::GetBlocksResult,) =
            b.query_typed(self.0, Principal::anonymous(), "icrc3_get_blocks", (args,))?;
        Ok(r.blocks.into_iter().next().map(|b| b.block))
    }

    pub fn symbol(self, b: &mut dyn Backend) -> Result<String> {
        b.query_typed(self.0, Principal::anonymous(), "icrc1_symbol", ())
            .map(|(r,)| r)
    }

    pub fn decimals(self, b: &mut dyn Backend) -> Result<u8> {
        b.query_typed(self.0, Principal::anonymous(), "icrc1_decimals", ())
            .map(|(r,)| r)
    }

    pub fn fee(self, b: &mut dyn Backend) -> Result<Nat> {
        b.query_typed(self.0, Principal::anonymous(), "icrc1_fee", ())
            .map(|(r,)| r)
    }

    /// Queues faults for the next calls of the faultable methods (controllers only).
    pub fn inject_faults(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        plans: Vec<lt::FaultPlan>,
    ) -> Result<()> {
        b.update_typed(self.0, caller, "inject_faults", (plans,))
    }

    /// Drops every pending fault (controllers only).
    pub fn clear_faults(self, b: &mut dyn Backend, caller: Principal) -> Result<()> {
        b.update_typed(self.0, caller, "clear_faults", ())
    }

    /// The faults not yet taken (controllers only).
    pub fn pending_faults(
        self,
        b: &mut dyn Backend,
        caller: Principal,
    ) -> Result<Vec<lt::FaultPlan>> {
        b.query_typed(self.0, caller, "pending_faults", ())
            .map(|(r,)| r)
    }
}

/// The cycles ledger's install argument (`LedgerArgs` in its .did).
#[derive(CandidType, Deserialize, Clone, Debug)]
pub enum CyclesLedgerArgs {
    Init(CyclesLedgerInit),
    Upgrade(Option<CyclesLedgerUpgrade>),
}

#[derive(CandidType, Deserialize, Clone, Debug)]
pub struct CyclesLedgerInit {
    pub max_blocks_per_request: u64,
    pub index_id: Option<Principal>,
    pub initial_balances: Option<Vec<(lt::Account, Nat)>>,
}

#[derive(CandidType, Deserialize, Clone, Debug, Default)]
pub struct CyclesLedgerUpgrade {
    pub max_blocks_per_request: Option<u64>,
}

/// The depositor's install argument.
#[derive(CandidType, Deserialize, Clone, Debug)]
pub struct DepositorInit {
    pub ledger_id: Principal,
}

#[derive(CandidType, Deserialize, Clone, Debug)]
pub struct DepositArg {
    pub to: lt::Account,
    pub memo: Option<serde_bytes::ByteBuf>,
    pub cycles: Nat,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct DepositResult {
    pub balance: Nat,
    pub block_index: Nat,
}

/// The cycles ledger's test depositor: deposits cycles (attached from its own balance) into a
/// ledger account, which mints them minus the ledger's fee.
#[derive(Clone, Copy, Debug)]
pub struct Depositor(pub Principal);

impl Depositor {
    pub fn deposit(
        self,
        b: &mut dyn Backend,
        caller: Principal,
        to: &lt::Account,
        cycles: u128,
    ) -> Result<DepositResult> {
        let arg = DepositArg {
            to: to.clone(),
            memo: None,
            cycles: Nat::from(cycles),
        };
        b.update_typed(self.0, caller, "deposit", (arg,))
            .map(|(r,)| r)
    }
}

/// A `nat` that fits in u64 (balances and indexes in tests do).
pub fn nat_u64(n: &Nat) -> u64 {
    u64::try_from(n.0.clone()).expect("a test amount fits in u64")
}

/// An ICRC-21 request for `method` with its Candid argument, in English, as generic text or
/// as fields.
pub fn consent_request(
    method: &str,
    arg: Vec<u8>,
    fields: bool,
) -> tool_host_engine::consent::ConsentMessageRequest {
    use tool_host_engine::consent::*;
    ConsentMessageRequest {
        method: method.into(),
        arg: serde_bytes::ByteBuf::from(arg),
        user_preferences: ConsentMessageSpec {
            metadata: ConsentMessageMetadata {
                language: "en".into(),
                utc_offset_minutes: None,
            },
            device_spec: Some(if fields {
                DeviceSpec::FieldsDisplay
            } else {
                DeviceSpec::GenericDisplay
            }),
        },
    }
}

/// A block's `tx.<field>` as a natural number.
pub fn tx_nat(block: &lt::Value, field: &str) -> Option<u64> {
    match block.get("tx")?.get(field)? {
        lt::Value::Nat(n) => u64::try_from(n.0.clone()).ok(),
        _ => None,
    }
}
