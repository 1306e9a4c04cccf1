//! The resolved-form model: a typed canister interface with profile tags (docs/profile-v0.md).

use std::collections::BTreeMap;
use std::fmt;

/// A validated `candid-profile-resolved` v0 document.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    /// An optional label for people (`"icrc1"`); not part of any tool name.
    pub name: Option<String>,
    /// Named types; a node of type `"Account"` refers to `types["Account"]`.
    pub types: BTreeMap<String, Node>,
    /// Name sets for `named` positions, keyed by set name.
    pub names: BTreeMap<String, NameSet>,
    pub methods: BTreeMap<String, Method>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Query,
    CompositeQuery,
    Update,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Query => "query",
            Mode::CompositeQuery => "composite_query",
            Mode::Update => "update",
        }
    }
    pub fn is_query(self) -> bool {
        !matches!(self, Mode::Update)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Method {
    pub mode: Mode,
    pub args: Vec<Node>,
    pub results: Vec<Node>,
    /// What a person is asked to approve, as a title ("Transfer tokens").
    pub intent: Option<String>,
    pub describe: Option<String>,
    pub effect: Option<Effect>,
    pub idempotency: Option<Idempotency>,
    pub outcome: Option<OutcomeTag>,
}

/// What a call does to the world; drives annotations and confirmation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    pub kind: String,
    pub irreversible: bool,
    /// For a read: send it as an update call so that its answer is certified.
    pub replicated: bool,
}

impl Effect {
    pub fn is_read(&self) -> bool {
        self.kind == "read"
    }
}

/// The idempotency stamp (a `nat64` timestamp the ledger deduplicates on) and the memo position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Idempotency {
    pub stamp: RelPath,
    pub memo: Option<RelPath>,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeClass {
    Success,
    AlreadyDone,
    RetrySame,
    RetryNew,
    FixInput,
    Fail,
}

impl OutcomeClass {
    pub const ALL: [OutcomeClass; 6] = [
        OutcomeClass::Success,
        OutcomeClass::AlreadyDone,
        OutcomeClass::RetrySame,
        OutcomeClass::RetryNew,
        OutcomeClass::FixInput,
        OutcomeClass::Fail,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeClass::Success => "success",
            OutcomeClass::AlreadyDone => "already_done",
            OutcomeClass::RetrySame => "retry_same",
            OutcomeClass::RetryNew => "retry_new",
            OutcomeClass::FixInput => "fix_input",
            OutcomeClass::Fail => "fail",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for OutcomeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Outcome classes by keys into the method's result; the deepest matching key wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutcomeTag {
    pub keys: Vec<(RelPath, OutcomeClass)>,
    pub default: Option<OutcomeClass>,
}

/// A relative path: an argument (or result) index and labels below it.
/// `(0).Ok`, `.Ok` and `Ok` are one path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath {
    pub index: usize,
    pub labels: Vec<String>,
}

impl RelPath {
    /// Parses the relpath grammar: `[(N)][.]label(.label)*`, or `(N)` alone.
    pub fn parse(text: &str) -> Result<RelPath, String> {
        let mut rest = text;
        let mut index = 0usize;
        if let Some(after) = rest.strip_prefix('(') {
            let close = after
                .find(')')
                .ok_or_else(|| format!("relpath '{text}': '(' without ')'"))?;
            let digits = &after[..close];
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 3
            {
                return Err(format!("relpath '{text}': the index must be 1 to 3 digits"));
            }
            index = digits
                .parse()
                .map_err(|_| format!("relpath '{text}': bad index"))?;
            rest = &after[close + 1..];
            if rest.is_empty() {
                return Ok(RelPath {
                    index,
                    labels: vec![],
                });
            }
            rest = rest
                .strip_prefix('.')
                .ok_or_else(|| format!("relpath '{text}': expected '.' after the index"))?;
        } else if let Some(after) = rest.strip_prefix('.') {
            rest = after;
        }
        if rest.is_empty() {
            return Err(format!("relpath '{text}': no label"));
        }
        let mut labels = Vec::new();
        for label in rest.split('.') {
            if label.is_empty() || !label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "relpath '{text}': label '{label}' must be letters, digits or '_'"
                ));
            }
            labels.push(label.to_string());
        }
        Ok(RelPath { index, labels })
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({})", self.index)?;
        for l in &self.labels {
            write!(f, ".{l}")?;
        }
        Ok(())
    }
}

/// A field or case label: a name, or a number (`#3`), which no input can be made for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    Named(String),
    Id(u32),
}

impl Label {
    /// The Candid hash the wire format orders fields by.
    pub fn hash(&self) -> u32 {
        match self {
            Label::Named(n) => candid::idl_hash(n),
            Label::Id(i) => *i,
        }
    }
    pub fn name(&self) -> Option<&str> {
        match self {
            Label::Named(n) => Some(n),
            Label::Id(_) => None,
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Named(n) => f.write_str(n),
            Label::Id(i) => write!(f, "#{i}"),
        }
    }
}

/// A record field or variant case: a labelled node.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldNode {
    pub label: Label,
    pub node: Node,
}

/// A Candid type node with the profile tags on its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub ty: Ty,
    pub tags: Tags,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prim {
    Null,
    Bool,
    Nat,
    Int,
    Nat8,
    Nat16,
    Nat32,
    Nat64,
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Text,
    Reserved,
    Empty,
    Principal,
}

impl Prim {
    pub const ALL: [Prim; 18] = [
        Prim::Null,
        Prim::Bool,
        Prim::Nat,
        Prim::Int,
        Prim::Nat8,
        Prim::Nat16,
        Prim::Nat32,
        Prim::Nat64,
        Prim::Int8,
        Prim::Int16,
        Prim::Int32,
        Prim::Int64,
        Prim::Float32,
        Prim::Float64,
        Prim::Text,
        Prim::Reserved,
        Prim::Empty,
        Prim::Principal,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Prim::Null => "null",
            Prim::Bool => "bool",
            Prim::Nat => "nat",
            Prim::Int => "int",
            Prim::Nat8 => "nat8",
            Prim::Nat16 => "nat16",
            Prim::Nat32 => "nat32",
            Prim::Nat64 => "nat64",
            Prim::Int8 => "int8",
            Prim::Int16 => "int16",
            Prim::Int32 => "int32",
            Prim::Int64 => "int64",
            Prim::Float32 => "float32",
            Prim::Float64 => "float64",
            Prim::Text => "text",
            Prim::Reserved => "reserved",
            Prim::Empty => "empty",
            Prim::Principal => "principal",
        }
    }
    pub fn parse(s: &str) -> Option<Prim> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            Prim::Nat
                | Prim::Int
                | Prim::Nat8
                | Prim::Nat16
                | Prim::Nat32
                | Prim::Nat64
                | Prim::Int8
                | Prim::Int16
                | Prim::Int32
                | Prim::Int64
        )
    }
    pub fn is_unsigned(self) -> bool {
        matches!(
            self,
            Prim::Nat | Prim::Nat8 | Prim::Nat16 | Prim::Nat32 | Prim::Nat64
        )
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Prim(Prim),
    Blob,
    Opt(Box<Node>),
    Vec(Box<Node>),
    Record(Vec<FieldNode>),
    Variant(Vec<FieldNode>),
    /// A named type of the form's `types`.
    Ref(String),
    Func(FuncSig),
    Service(Vec<(String, FuncSig)>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FuncSig {
    pub args: Vec<Node>,
    pub results: Vec<Node>,
    /// `query`, `composite_query` or `oneway`, or none for an update.
    pub annotation: Option<String>,
}

/// The profile tags a position may carry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tags {
    pub value: Option<ValueTag>,
    pub describe: Option<String>,
    pub auto: Option<Auto>,
    pub hidden: bool,
    pub text: Option<TextTag>,
    pub range: Option<RangeTag>,
    /// The name set (`Form::names`) a person may pick from instead of typing a value.
    pub named: Option<String>,
    /// On a variant case: the case's own intent and effect (one tool per case).
    pub intent: Option<String>,
    pub effect: Option<Effect>,
}

/// How a position is read and shown in human terms.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueTag {
    /// A token amount in base units, read and shown as `1.5 TKA`.
    TokenAmount {
        decimals: Dyn<u8>,
        symbol: Dyn<String>,
    },
    /// An ICRC-1 account record, read and shown in the ICRC-1 textual encoding.
    Account,
    /// A 32-byte subaccount, read and shown as hex.
    Subaccount,
    /// A point in time, read as RFC 3339 or relative to now (`in 1h`), stored in `unit`s.
    Timestamp { unit: TimeUnit },
    /// A span of time (`1h30m`), stored in `unit`s.
    Duration { unit: TimeUnit },
}

impl ValueTag {
    pub fn kind(&self) -> &'static str {
        match self {
            ValueTag::TokenAmount { .. } => "token_amount",
            ValueTag::Account => "account",
            ValueTag::Subaccount => "subaccount",
            ValueTag::Timestamp { .. } => "timestamp",
            ValueTag::Duration { .. } => "duration",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
}

impl TimeUnit {
    pub fn parse(s: &str) -> Option<TimeUnit> {
        match s {
            "ns" => Some(TimeUnit::Nanoseconds),
            "us" => Some(TimeUnit::Microseconds),
            "ms" => Some(TimeUnit::Milliseconds),
            "s" => Some(TimeUnit::Seconds),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::Nanoseconds => "ns",
            TimeUnit::Microseconds => "us",
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Seconds => "s",
        }
    }
    pub fn nanos(self) -> u128 {
        match self {
            TimeUnit::Nanoseconds => 1,
            TimeUnit::Microseconds => 1_000,
            TimeUnit::Milliseconds => 1_000_000,
            TimeUnit::Seconds => 1_000_000_000,
        }
    }
}

/// A tag value given in the form, or read from the target canister (`refs[from]`).
#[derive(Clone, Debug, PartialEq)]
pub enum Dyn<T> {
    Fixed(T),
    From(String),
}

/// A default the layer fills in: a value read from the canister's refs, or a literal input.
#[derive(Clone, Debug, PartialEq)]
pub enum Auto {
    From(String),
    /// Text read by the position's own rule, as an input would be.
    Value(String),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TextTag {
    pub max_len: Option<u32>,
    pub pattern: Option<String>,
    pub format: Option<TextFormat>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextFormat {
    Url,
    Email,
}

impl TextFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            TextFormat::Url => "url",
            TextFormat::Email => "email",
        }
    }
}

/// Bounds: values for integers, lengths (code points, bytes, elements) for text, blob and vec.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeTag {
    pub min: Option<i128>,
    pub max: Option<i128>,
}

/// Where the entries of a name set come from: a query of the same form, a vec in its reply,
/// and the two fields of each element that hold the name and the value.
#[derive(Clone, Debug, PartialEq)]
pub struct NameSet {
    pub method: String,
    pub list: RelPath,
    pub name_field: String,
    pub value_field: String,
}
