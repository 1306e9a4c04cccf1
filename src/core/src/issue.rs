//! Input issues: every problem with a tool input, each with a code, a place and a message.

use serde::Serialize;
use std::fmt;

/// The codes an input issue carries (docs/tools.md, "Input issues").
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
    /// Every code, in the order docs/tools.md lists them.
    pub const ALL: [Code; 17] = [
        Code::Input,
        Code::UnknownParam,
        Code::Missing,
        Code::Type,
        Code::Syntax,
        Code::Range,
        Code::Precision,
        Code::Unit,
        Code::Principal,
        Code::Account,
        Code::TooLarge,
        Code::Pattern,
        Code::Format,
        Code::NameNotFound,
        Code::NameAmbiguous,
        Code::NamesUnread,
        Code::Canister,
    ];

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

#[cfg(test)]
mod tests {
    use super::Code;

    /// A new code fails to compile here until it is in `ALL` (and so in the docs test).
    fn listed(code: Code) -> bool {
        match code {
            Code::Input
            | Code::UnknownParam
            | Code::Missing
            | Code::Type
            | Code::Syntax
            | Code::Range
            | Code::Precision
            | Code::Unit
            | Code::Principal
            | Code::Account
            | Code::TooLarge
            | Code::Pattern
            | Code::Format
            | Code::NameNotFound
            | Code::NameAmbiguous
            | Code::NamesUnread
            | Code::Canister => Code::ALL.contains(&code),
        }
    }

    #[test]
    fn every_code_is_listed_once_and_serializes_as_its_text() {
        for code in Code::ALL {
            assert!(listed(code), "{code}");
            assert_eq!(
                serde_json::to_string(&code).unwrap(),
                format!("\"{}\"", code.as_str())
            );
        }
        let mut texts: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        texts.sort();
        texts.dedup();
        assert_eq!(texts.len(), Code::ALL.len(), "two codes share a text");
    }

    /// The input-issue table of docs/tools.md lists exactly the codes an input issue carries.
    #[test]
    fn tools_docs_list_every_input_issue_code() {
        let docs = include_str!("../../../docs/tools.md");
        let table = docs
            .split("| code | meaning |")
            .nth(1)
            .expect("docs/tools.md has an input-issue table (| code | meaning |)");
        // A row's first cell may name several codes (`E_A`, `E_B`) and a mark (**(ext)**).
        let documented: Vec<&str> = table
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .flat_map(|l| {
                l.split('|')
                    .nth(1)
                    .unwrap_or("")
                    .split('`')
                    .skip(1)
                    .step_by(2)
            })
            .collect();
        let texts: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        for code in &texts {
            assert!(
                documented.contains(code),
                "docs/tools.md does not list the input issue code {code}"
            );
        }
        for code in &documented {
            assert!(
                texts.contains(code),
                "docs/tools.md lists {code}, which no input issue carries"
            );
        }
        assert_eq!(documented.len(), texts.len(), "a code listed twice");
    }
}
