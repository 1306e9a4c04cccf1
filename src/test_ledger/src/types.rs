//! The Candid types of `candid/test_ledger.did`, one Rust type per Candid type.
//!
//! Field names and variant names follow the .did exactly: a native test compares the interface
//! these types export with the file.

use candid::{CandidType, Deserialize, Int, Nat, Principal};
use serde_bytes::ByteBuf;

/// An ICRC-1 subaccount as it arrives on the wire (any length; the ledger checks for 32 bytes).
pub type Subaccount = ByteBuf;

/// `record { owner : principal; subaccount : opt Subaccount }`.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub owner: Principal,
    pub subaccount: Option<Subaccount>,
}

impl Account {
    /// The owner's default account (no subaccount).
    pub fn of(owner: Principal) -> Self {
        Self {
            owner,
            subaccount: None,
        }
    }
}

/// The ICRC-3 `Value`: the lossless form in which blocks are served and hashed.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Blob(ByteBuf),
    Text(String),
    Nat(Nat),
    Int(Int),
    Array(Vec<Value>),
    Map(Vec<(String, Value)>),
}

impl Value {
    /// A `Blob` from bytes.
    pub fn blob(bytes: impl Into<Vec<u8>>) -> Self {
        Value::Blob(ByteBuf::from(bytes.into()))
    }

    /// A `Text` from a string.
    pub fn text(s: impl Into<String>) -> Self {
        Value::Text(s.into())
    }

    /// A `Nat` from anything a `Nat` is made from.
    pub fn nat(n: impl Into<Nat>) -> Self {
        Value::Nat(n.into())
    }

    /// The value under `key` when this is a `Map`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// `icrc1_metadata` values.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum MetadataValue {
    Nat(Nat),
    Int(Int),
    Text(String),
    Blob(ByteBuf),
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TransferArg {
    pub from_subaccount: Option<Subaccount>,
    pub to: Account,
    pub amount: Nat,
    pub fee: Option<Nat>,
    pub memo: Option<ByteBuf>,
    pub created_at_time: Option<u64>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum TransferError {
    BadFee { expected_fee: Nat },
    BadBurn { min_burn_amount: Nat },
    InsufficientFunds { balance: Nat },
    TooOld,
    CreatedInFuture { ledger_time: u64 },
    Duplicate { duplicate_of: Nat },
    TemporarilyUnavailable,
    GenericError { error_code: Nat, message: String },
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ApproveArgs {
    pub from_subaccount: Option<Subaccount>,
    pub spender: Account,
    pub amount: Nat,
    pub expected_allowance: Option<Nat>,
    pub expires_at: Option<u64>,
    pub fee: Option<Nat>,
    pub memo: Option<ByteBuf>,
    pub created_at_time: Option<u64>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum ApproveError {
    BadFee { expected_fee: Nat },
    InsufficientFunds { balance: Nat },
    AllowanceChanged { current_allowance: Nat },
    Expired { ledger_time: u64 },
    TooOld,
    CreatedInFuture { ledger_time: u64 },
    Duplicate { duplicate_of: Nat },
    TemporarilyUnavailable,
    GenericError { error_code: Nat, message: String },
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct AllowanceArgs {
    pub account: Account,
    pub spender: Account,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Allowance {
    pub allowance: Nat,
    pub expires_at: Option<u64>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TransferFromArgs {
    pub spender_subaccount: Option<Subaccount>,
    pub from: Account,
    pub to: Account,
    pub amount: Nat,
    pub fee: Option<Nat>,
    pub memo: Option<ByteBuf>,
    pub created_at_time: Option<u64>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum TransferFromError {
    BadFee { expected_fee: Nat },
    BadBurn { min_burn_amount: Nat },
    InsufficientFunds { balance: Nat },
    InsufficientAllowance { allowance: Nat },
    TooOld,
    CreatedInFuture { ledger_time: u64 },
    Duplicate { duplicate_of: Nat },
    TemporarilyUnavailable,
    GenericError { error_code: Nat, message: String },
}

/// One element of `GetBlocksArgs`.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct GetBlocksRequest {
    pub start: Nat,
    pub length: Nat,
}

/// `GetBlocksArgs = vec record { start : nat; length : nat }`.
pub type GetBlocksArgs = Vec<GetBlocksRequest>;

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct BlockWithId {
    pub id: Nat,
    pub block: Value,
}

candid::define_function!(pub GetBlocksCallback : (GetBlocksArgs) -> (GetBlocksResult) query);

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ArchivedBlocks {
    pub args: GetBlocksArgs,
    pub callback: GetBlocksCallback,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct GetBlocksResult {
    pub log_length: Nat,
    pub blocks: Vec<BlockWithId>,
    pub archived_blocks: Vec<ArchivedBlocks>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ICRC3ArchiveInfo {
    pub canister_id: Principal,
    pub start: Nat,
    pub end: Nat,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct GetArchivesArgs {
    pub from: Option<Principal>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ICRC3DataCertificate {
    pub certificate: ByteBuf,
    pub hash_tree: ByteBuf,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct BlockType {
    pub block_type: String,
    pub url: String,
}

/// `record { name : text; url : text }` of `icrc1_supported_standards`.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct SupportedStandard {
    pub name: String,
    pub url: String,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct InitArgs {
    pub name: String,
    pub symbol: String,
    pub decimals: u8,
    pub fee: Nat,
    pub minting_account: Account,
    pub initial_balances: Vec<(Account, Nat)>,
}

/// The error an injected fault answers with; it must be of the faulted method's kind.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum InjectedErr {
    Transfer(TransferError),
    Approve(ApproveError),
    TransferFrom(TransferFromError),
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    Err(InjectedErr),
    Reject(String),
    Trap(String),
    LoseReply { hold_ns: u64 },
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct FaultPlan {
    pub method: String,
    pub fault: Fault,
}
