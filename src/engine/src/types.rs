//! The Candid API types (candid/tool_host.did).

use candid::{CandidType, Deserialize, Principal};
use serde_bytes::ByteBuf;

// The interface's type: the config stores `crate::model::StoredLimits`, so that a change here
// cannot change the stable layout.
/// Limits an admin sets; every one is documented in docs/canister.md.
#[derive(Clone, Debug, PartialEq, Eq, CandidType, Deserialize)]
pub struct Limits {
    /// Intents not settled that one owner may hold.
    pub max_open_intents_per_owner: u32,
    /// Agents one owner may authorize.
    pub max_agents_per_owner: u32,
    /// Forms and target canisters the host keeps.
    pub max_forms: u32,
    pub max_canisters: u32,
    /// Bytes of one form's JSON (at most the format's own 256 KiB).
    pub max_form_bytes: u32,
    /// Bytes of one tool input's JSON (at most 64 KiB).
    pub max_input_bytes: u32,
    /// A preview never confirmed is settled as expired after this long.
    pub preview_ttl_seconds: u64,
    /// Settled intents are removed after this long.
    pub retention_seconds: u64,
    /// The first reconciliation after an unknown outcome waits this long (then backs off).
    pub reconcile_delay_seconds: u64,
    /// Refs (decimals, symbol, fee) are read again this often.
    pub refs_refresh_seconds: u64,
    /// The deadline of a bounded-wait call to a target canister.
    pub call_timeout_seconds: u32,
    /// Intents the host keeps, open and settled, all owners together.
    pub max_intents: u64,
    /// Intents one owner keeps, open and settled (settled ones leave with the retention).
    pub max_intents_per_owner: u32,
    /// Bytes of stored tool inputs (canonical JSON), all intents together.
    pub max_stored_input_bytes: u64,
    /// Read tool calls one owner makes in a minute.
    pub max_reads_per_owner_per_minute: u32,
    /// Agent authorizations, all owners together.
    pub max_agents_total: u64,
}
impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_open_intents_per_owner: 20,
            max_agents_per_owner: 16,
            max_forms: 32,
            max_canisters: 64,
            max_form_bytes: tool_host_core::form::limits::MAX_FORM_BYTES as u32,
            max_input_bytes: tool_host_core::read::MAX_INPUT_BYTES as u32,
            preview_ttl_seconds: 3_600,
            retention_seconds: 30 * 86_400,
            reconcile_delay_seconds: 10,
            refs_refresh_seconds: 6 * 3_600,
            call_timeout_seconds: 60,
            max_intents: 100_000,
            max_intents_per_owner: 200,
            max_stored_input_bytes: 256 * 1024 * 1024,
            max_reads_per_owner_per_minute: 60,
            max_agents_total: 100_000,
        }
    }
}

/// A refusal: a code (docs/canister.md), a message, and for inputs every issue.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub code: String,
    pub message: String,
    pub issues: Vec<IssueView>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct IssueView {
    pub param: String,
    pub path: String,
    pub code: String,
    pub message: String,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct RegisterFormArgs {
    pub id: String,
    pub json: String,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct SkipView {
    pub method: String,
    pub reason: String,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct FormInfo {
    pub id: String,
    pub bytes: u32,
    pub methods: u32,
    pub registered_at: u64,
    pub tools: Vec<String>,
    pub skipped: Vec<SkipView>,
    /// Pairs of tools (one of them this form's) whose descriptions a model could not tell
    /// apart: warnings, never refusals.
    pub warnings: Vec<OverlapView>,
    /// The review stopped at `warnings`' 100 pairs: more may overlap (give the tools
    /// descriptions that tell them apart, and register again to see them).
    pub more_warnings: bool,
    /// The declaration checks this form's tools fail now: always empty in `register_form`'s
    /// answer (such a form is refused); in `list_forms`, a form stored before the check, or one
    /// whose tools a canister's refs changed since (`param` is the tool).
    pub declaration_issues: Vec<IssueView>,
}

/// Two tools whose descriptions overlap (`bus::overlap_warnings`): the names sorted, the
/// similarity in thousandths (a warning from 800).
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct OverlapView {
    pub tools: Vec<String>,
    pub similarity_permille: u32,
    pub message: String,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct RegisterCanisterArgs {
    pub id: Principal,
    pub label: Option<String>,
    pub forms: Vec<String>,
    /// Registers the canister for this owner alone (see docs/canister.md, "Whose funds move").
    pub owner: Option<Principal>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TargetView {
    pub id: Principal,
    pub label: Option<String>,
    pub forms: Vec<String>,
    /// The refs as JSON: `{ "query:icrc1_decimals": 8, ... }`.
    pub refs: String,
    pub refs_updated_at: Option<u64>,
    pub refs_error: Option<String>,
    pub icrc3: bool,
    pub owner: Option<Principal>,
    /// Tools of its forms not offered on this canister, and why.
    pub skipped: Vec<SkipView>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct CallToolArgs {
    pub name: String,
    /// The tool input as JSON text.
    pub input: String,
    /// The owner an agent acts for; absent when the caller acts for itself.
    pub owner: Option<Principal>,
    /// The turn (`begin_turn`) this call belongs to: the tool must be one it offered, and the
    /// call is recorded as one of its steps. Absent: no turn, nothing recorded.
    pub turn: Option<u64>,
}

/// A tool's answer, as MCP results have it: a short text, structured JSON, an error flag, and
/// the outcome-table word when a send or a decision happened.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    pub content: String,
    pub structured: String,
    pub is_error: bool,
    /// `success`, `already_done`, `retry_same`, `retry_new`, `fix_input`, `fail`,
    /// `not_executed`, `unknown`, `reconcile`, `declined` or `expired` (text: a new word may be
    /// added; read an unknown one as "see `get_intent`").
    pub outcome: Option<String>,
}

/// The owner's signed confirmation of one preview: the intent and a digest of its exact bytes.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ConfirmArgs {
    pub intent_id: u64,
    pub digest: ByteBuf,
}

/// The owner's decline; with the preview's digest it declines exactly that preview (and a wallet
/// can show its consent message, which is given only with the digest).
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct DeclineArgs {
    pub intent_id: u64,
    pub digest: Option<ByteBuf>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ListIntentsArgs {
    /// An owner whose agent (or admin) asks; the caller's own intents when absent.
    pub owner: Option<Principal>,
    /// Intents with ids above this one (paging).
    pub start_after: Option<u64>,
    pub limit: Option<u32>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct AttemptView {
    pub at: u64,
    pub digest: ByteBuf,
    /// `pending`, `replied`, `rejected`, `undecodable` or `not_sent`.
    pub kind: String,
    /// A reply's class (kind `replied`): `success`, `already_done`, `retry_same`, `retry_new`,
    /// `fix_input` or `fail`.
    pub class: Option<String>,
    pub reject_code: Option<u32>,
    pub message: Option<String>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct IntentView {
    pub id: u64,
    pub owner: Principal,
    pub preparer: Principal,
    pub canister: Principal,
    pub tool: String,
    pub method: String,
    /// `open`, `in_flight`, `unknown`, `reconcile`, `done` or `settled` (text, not a variant:
    /// docs/canister.md, "Statuses and outcomes").
    pub status: String,
    /// The latest outcome-table word, as in `ToolResult.outcome`.
    pub outcome: Option<String>,
    /// What reconciliation or a settlement found, for people (free text).
    pub finding: Option<String>,
    /// The preview as JSON.
    pub preview: String,
    pub arg: ByteBuf,
    pub digest: ByteBuf,
    pub stamp: Option<u64>,
    pub memo: Option<ByteBuf>,
    pub reply: Option<String>,
    pub created_at: u64,
    pub updated_at: u64,
    pub expires_at: u64,
    pub settled_at: Option<u64>,
    pub generation: u32,
    pub confirm_requested_at: Option<u64>,
    pub attempts: Vec<AttemptView>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct IntentPage {
    pub intents: Vec<IntentView>,
    /// Pass as `start_after` for the next page; absent on the last page.
    pub next: Option<u64>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub owner: Principal,
    pub subaccount: Option<ByteBuf>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct DepositAccount {
    pub account: Account,
    /// The ICRC-1 textual encoding, to give to a wallet.
    pub text: String,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct StandardRecord {
    pub name: String,
    pub url: String,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    pub forms: u64,
    pub canisters: u64,
    pub intents: u64,
    pub open_intents: u64,
    pub due_tasks: u64,
    pub stable_bytes: u64,
}

pub type ApiResult<T> = Result<T, ApiError>;

// The tool bus (docs/bus.md).

/// The shape `list_tools` and `begin_turn` render the tools in.
#[derive(CandidType, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolFormat {
    /// MCP `tools/list` entries (the default).
    #[serde(rename = "mcp")]
    Mcp,
    /// OpenAI Chat Completions `tools`.
    #[serde(rename = "openai")]
    OpenAi,
    /// OpenAI Responses flat function tools.
    #[serde(rename = "openai_responses")]
    OpenAiResponses,
    /// Anthropic Messages `tools`.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Markdown, for a model with no tools API.
    #[serde(rename = "markdown")]
    Markdown,
    /// Plain JSON Schema per tool.
    #[serde(rename = "jsonschema")]
    JsonSchema,
}

/// `list_tools_page`'s argument.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ListToolsArgs {
    /// MCP when absent.
    pub format: Option<ToolFormat>,
    /// The `next` of the page before; the first page when absent.
    pub cursor: Option<String>,
    /// The page's text at most this many bytes (24 576 when absent; 1 024 to 1 048 576). A
    /// tool larger than the bound comes alone on its page, whole.
    pub max_bytes: Option<u32>,
}

/// A page of the tool list.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ToolsPage {
    /// The page's tools in the format: a JSON array (compact), or a Markdown listing.
    pub tools: String,
    /// The tools on this page.
    pub count: u32,
    /// The tools in the whole list.
    pub total: u32,
    /// Pass as `cursor` for the next page; absent on the last page.
    pub next: Option<String>,
}

impl From<ToolFormat> for tool_host_core::bus::ToolFormat {
    fn from(f: ToolFormat) -> Self {
        use tool_host_core::bus::ToolFormat as F;
        match f {
            ToolFormat::Mcp => F::Mcp,
            ToolFormat::OpenAi => F::OpenAi,
            ToolFormat::OpenAiResponses => F::OpenAiResponses,
            ToolFormat::Anthropic => F::Anthropic,
            ToolFormat::Markdown => F::Markdown,
            ToolFormat::JsonSchema => F::JsonSchema,
        }
    }
}

/// What a tool does (docs/bus.md, "Effect labels"); a tool with none is unlabelled, and
/// unlabelled is not readonly.
#[derive(CandidType, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EffectLabel {
    #[serde(rename = "readonly")]
    Readonly,
    #[serde(rename = "idempotent")]
    Idempotent,
    #[serde(rename = "destructive")]
    Destructive,
}

impl From<tool_host_core::bus::EffectLabel> for EffectLabel {
    fn from(e: tool_host_core::bus::EffectLabel) -> Self {
        use tool_host_core::bus::EffectLabel as E;
        match e {
            E::Readonly => EffectLabel::Readonly,
            E::Idempotent => EffectLabel::Idempotent,
            E::Destructive => EffectLabel::Destructive,
        }
    }
}

/// Where a tool comes from.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum ToolSourceView {
    /// A registered form's tool (the form's id).
    #[serde(rename = "form")]
    Form(String),
    /// The host's `commit`.
    #[serde(rename = "host")]
    Host,
    /// A builtin an admin enabled.
    #[serde(rename = "builtin")]
    Builtin,
}

/// One tool of the bus as `describe_tools` and `select_tools` give it.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ToolInfo {
    pub name: String,
    pub title: String,
    /// Absent: the tool is unlabelled (not readonly).
    pub effect: Option<EffectLabel>,
    pub source: ToolSourceView,
    /// Always offered by a selection (and counted against its limit).
    pub pinned: bool,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct SelectArgs {
    pub query: String,
    /// 1 to 32; 6 when absent.
    pub limit: Option<u32>,
    /// Whose usage counts weigh in: the caller's when absent (none for the anonymous caller).
    pub owner: Option<Principal>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ToolUsage {
    pub name: String,
    pub calls: u64,
}

/// The builtin tools an admin enabled, the pins, and `current_time`'s default zone.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct BuiltinSettings {
    /// Builtins on (none by default): `calculate`, `think`, `finish`, `escalate`,
    /// `current_time`, `date_math`, `json_query`.
    pub enabled: Vec<String>,
    /// Tools pinned besides the default pins (an enabled builtin, a form tool or `commit`).
    pub pinned: Vec<String>,
    /// Default pins removed: `escalate` is pinned whenever it is enabled unless named here.
    pub unpinned: Option<Vec<String>>,
    /// The IANA zone `current_time` answers in when the caller names none (UTC when absent).
    pub default_time_zone: Option<String>,
}

/// `get_builtins`: the settings, and what they amount to.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct BuiltinsView {
    pub settings: BuiltinSettings,
    /// Every builtin there is, enabled or not.
    pub available: Vec<String>,
    /// The pins in force: the admin's and the default ones, of tools the bus has now.
    pub pins: Vec<String>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct BeginTurnArgs {
    /// The request the tools are selected for (at most 2 KiB).
    pub query: String,
    /// 1 to 32; 6 when absent.
    pub limit: Option<u32>,
    /// The shape of `tools`; MCP when absent.
    pub format: Option<ToolFormat>,
    /// The owner an agent acts for; absent when the caller acts for itself.
    pub owner: Option<Principal>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TurnStarted {
    pub turn_id: u64,
    /// The tools offered, in the selection's order.
    pub offered: Vec<String>,
    /// The offered tools rendered in the format asked for.
    pub tools: String,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct GetTurnArgs {
    pub id: u64,
    /// The turn's owner, when an agent asks; the caller when absent.
    pub owner: Option<Principal>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TurnStepView {
    pub tool: String,
    /// SHA-256 of the input's bytes, hex.
    pub input_sha256: String,
    /// The outcome word, `prepared`, `read`, `ok`, or the error code (`NOT_OFFERED`, ...);
    /// `pending` while the call awaits (and for good if an upgrade cut it off).
    pub outcome: String,
    pub is_error: bool,
    pub at: u64,
    pub caller: Principal,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TurnView {
    pub id: u64,
    pub owner: Principal,
    pub query: String,
    pub offered_tools: Vec<String>,
    pub format: ToolFormat,
    pub steps: Vec<TurnStepView>,
    pub finished: bool,
    /// `finish`'s answer.
    pub answer: Option<String>,
    pub created_at: u64,
    pub finished_at: Option<u64>,
}

/// One escalation in the owner's inbox.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct InboxEntryView {
    pub id: u64,
    /// Who escalated: the owner or one of its agents.
    pub from: Principal,
    pub turn: Option<u64>,
    pub reason: String,
    pub summary: Option<String>,
    pub at: u64,
    /// The handler called, if the owner had configured one.
    pub handler: Option<Principal>,
    /// True only when the handler answered `Ok`.
    pub delivered: bool,
    /// `no_handler`, `pending`, `delivered` or `failed: <why>`.
    pub delivery: String,
}

/// What the tool host sends an owner's escalation handler:
/// `tool_host_escalation : (EscalationNotice) -> (EscalationReply)`.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct EscalationNotice {
    pub owner: Principal,
    pub inbox_id: u64,
    pub turn: Option<u64>,
    pub reason: String,
    pub summary: Option<String>,
    pub at: u64,
}

/// The handler's answer: `Ok` once a person has it (or will), `Err` with why not.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum EscalationReply {
    Ok,
    Err(String),
}

/// The install and upgrade argument, shaped as the cycles ledger's `LedgerArgs`: `Init` only
/// at install, `Upgrade` only at upgrade (the other traps), so an upgrade can never reset what
/// an install set. Absent (`dfx deploy` without `--argument`) it is `Init` with no admins at
/// install and `Upgrade = null` at upgrade.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum HostArg {
    Init(InitArgs),
    Upgrade(Option<UpgradeArgs>),
}

/// What a fresh install starts with: admins besides the controllers, and limits (the defaults
/// when absent), which pass the checks `set_limits` makes.
#[derive(CandidType, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct InitArgs {
    pub admins: Vec<Principal>,
    pub limits: Option<Limits>,
}

/// An upgrade changes only what it names: absent fields leave admins and limits as they are.
#[derive(CandidType, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct UpgradeArgs {
    /// Go ahead with sends in flight: their outcomes become unknown and are reconciled.
    pub force: Option<bool>,
    /// Replaces the limits (checked as `set_limits` checks them).
    pub limits: Option<Limits>,
    /// Admins added to those kept (removal is `remove_admin`).
    pub add_admins: Option<Vec<Principal>>,
}

/// One named Candid result per method family, so that the exported names never depend on the
/// order the exporter meets methods in (a new method cannot renumber them). Converted from and
/// to the engine's [`ApiResult`].
macro_rules! named_results {
    ($($(#[$doc:meta])* $name:ident($ok:ty);)*) => {$(
        $(#[$doc])*
        // Laid out as the `Result` it converts from (an `IntentView` is large, as it is there).
        #[allow(clippy::large_enum_variant)]
        #[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
        pub enum $name {
            Ok($ok),
            Err(ApiError),
        }

        impl From<ApiResult<$ok>> for $name {
            fn from(r: ApiResult<$ok>) -> Self {
                match r {
                    Ok(v) => $name::Ok(v),
                    Err(e) => $name::Err(e),
                }
            }
        }

        impl From<$name> for ApiResult<$ok> {
            fn from(r: $name) -> Self {
                match r {
                    $name::Ok(v) => Ok(v),
                    $name::Err(e) => Err(e),
                }
            }
        }
    )*};
}

named_results! {
    /// Changes that answer nothing but success: admins, agents, removals.
    UnitResult(());
    /// `call_tool`, `confirm` and `decline`.
    ToolCallResult(ToolResult);
    GetIntentResult(IntentView);
    ListIntentsResult(IntentPage);
    DepositAccountResult(DepositAccount);
    /// `list_admins` and `list_agents`.
    PrincipalsResult(Vec<Principal>);
    /// `get_limits` and `set_limits` (the limits now in force).
    LimitsResult(Limits);
    FormResult(FormInfo);
    FormsResult(Vec<FormInfo>);
    TargetResult(TargetView);
    /// `list_canisters` and `refresh_refs`.
    TargetsResult(Vec<TargetView>);
    StatsResult(Stats);
    /// `describe_tools` and `select_tools`.
    ToolInfosResult(Vec<ToolInfo>);
    /// `missing_tools`.
    NamesResult(Vec<String>);
    /// `list_tools_page`.
    ToolsPageResult(ToolsPage);
    UsageResult(Vec<ToolUsage>);
    /// `set_builtins` (the settings now in force).
    BuiltinsResult(BuiltinsView);
    BeginTurnResult(TurnStarted);
    TurnResult(TurnView);
    InboxResult(Vec<InboxEntryView>);
    /// `issue_agent_token`: the token with its secret, shown this once.
    IssueAgentTokenResult(IssuedAgentToken);
}

/// A header of an HTTP request or reply, as the IC's HTTP gateway has it: (name, value).
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HeaderField(pub String, pub String);

/// `http_request`'s and `http_request_update`'s argument: the IC HTTP gateway's shape.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<HeaderField>,
    pub body: ByteBuf,
    pub certificate_version: Option<u16>,
}

/// Their answer; `upgrade = opt true` (from the query only) asks the gateway to make the same
/// request as the update `http_request_update`.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    pub status_code: u16,
    pub headers: Vec<HeaderField>,
    pub body: ByteBuf,
    pub upgrade: Option<bool>,
}

/// `issue_agent_token`'s argument: a label for the owner's eyes (1 to 64 bytes, no control
/// characters) and when the token stops working (ns since the epoch; absent: until revoked).
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct IssueAgentTokenArgs {
    pub label: String,
    pub expires_at: Option<u64>,
}

/// A token just issued: `secret` is what an MCP client sends (`Authorization: Bearer <secret>`);
/// it is shown only here, and the tool host keeps only its SHA-256.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct IssuedAgentToken {
    pub id: u64,
    pub secret: String,
    pub label: String,
    pub expires_at: Option<u64>,
    pub created_at: u64,
}

/// One of the caller's tokens, without its secret. `last_used_at`: the last update call (a
/// `tools/call`, or any request through consensus) it authenticated.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct AgentTokenView {
    pub id: u64,
    pub label: String,
    pub created_at: u64,
    pub expires_at: Option<u64>,
    pub revoked_at: Option<u64>,
    pub last_used_at: Option<u64>,
}
