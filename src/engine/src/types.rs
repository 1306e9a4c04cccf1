//! The Candid API types (candid/tool_host.did).

use candid::{CandidType, Deserialize, Principal};
use serde_bytes::ByteBuf;

pub use crate::model::Limits;

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
}

/// A tool's answer, as MCP results have it: a short text, structured JSON, an error flag, and
/// the outcome-table word when a send or a decision happened.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    pub content: String,
    pub structured: String,
    pub is_error: bool,
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
    /// `open`, `in_flight`, `unknown`, `reconcile`, `done` or `settled`.
    pub status: String,
    pub outcome: Option<String>,
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
