//! Input issues: every problem with a tool input, each with a code, a place and a message.

use serde::Serialize;
use std::fmt;

/// The codes an input issue carries (docs/input-codes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Code {
    /// The input as a whole is not what a tool takes (not an object, not JSON, no clock, a ref unknown).
    #[serde(rename = "E_INPUT")]
    Input,
    #[serde(rename = "E_UNKNOWN_PARAM")]
    UnknownParam,
    #[serde(rename = "E_MISSING")]
    Missing,
    /// A JSON value of the wrong kind (a number where text is read).
    #[serde(rename = "E_TYPE")]
    Type,
    #[serde(rename = "E_SYNTAX")]
    Syntax,
    #[serde(rename = "E_RANGE")]
    Range,
    #[serde(rename = "E_PRECISION")]
    Precision,
    #[serde(rename = "E_UNIT")]
    Unit,
    #[serde(rename = "E_PRINCIPAL")]
    Principal,
    #[serde(rename = "E_ACCOUNT")]
    Account,
    #[serde(rename = "E_TOO_LARGE")]
    TooLarge,
    #[serde(rename = "E_PATTERN")]
    Pattern,
    #[serde(rename = "E_FORMAT")]
    Format,
    #[serde(rename = "E_NAME_NOT_FOUND")]
    NameNotFound,
    #[serde(rename = "E_NAME_AMBIGUOUS")]
    NameAmbiguous,
    #[serde(rename = "E_NAMES_UNREAD")]
    NamesUnread,
    /// The `canister_id` is not one of the canisters the tool applies to.
    #[serde(rename = "E_CANISTER")]
    Canister,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Input => "E_INPUT",
            Code::UnknownParam => "E_UNKNOWN_PARAM",
            Code::Missing => "E_MISSING",
            Code::Type => "E_TYPE",
            Code::Syntax => "E_SYNTAX",
            Code::Range => "E_RANGE",
            Code::Precision => "E_PRECISION",
            Code::Unit => "E_UNIT",
            Code::Principal => "E_PRINCIPAL",
            Code::Account => "E_ACCOUNT",
            Code::TooLarge => "E_TOO_LARGE",
            Code::Pattern => "E_PATTERN",
            Code::Format => "E_FORMAT",
            Code::NameNotFound => "E_NAME_NOT_FOUND",
            Code::NameAmbiguous => "E_NAME_AMBIGUOUS",
            Code::NamesUnread => "E_NAMES_UNREAD",
            Code::Canister => "E_CANISTER",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A problem with one text value, before it is placed in an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub code: Code,
    pub message: String,
}

impl Fault {
    pub fn new(code: Code, message: impl Into<String>) -> Fault {
        Fault {
            code,
            message: message.into(),
        }
    }
}

/// One problem with a tool input: which input, where inside it, what, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Issue {
    pub param: String,
    pub path: String,
    pub code: Code,
    pub message: String,
}
