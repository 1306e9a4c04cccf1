//! API error codes (docs/canister.md): one enum, so a code is never misspelt and the docs test
//! can list them all. The wire keeps `code : text`: [`ErrorCode::as_str`] is what clients read.

use crate::types::{ApiError, IssueView};
use std::fmt;
use tool_host_core::issue::Issue;

/// Why a call was refused; every refusal changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorCode {
    Anonymous,
    NotAuthorized,
    NotOwner,
    NotFound,
    UnknownTool,
    InvalidInput,
    InvalidForm,
    InvalidArgument,
    TooLarge,
    Limit,
    DigestMismatch,
    Settled,
    InFlight,
    Held,
    InUse,
    /// Forms or canisters changed while the call awaited (a prepare reading name sets): nothing
    /// was stored; the same call again reads against what is registered now.
    Retry,
    /// Bytes that would move funds of someone other than the intent's owner (crate::custody).
    Custody,
    /// A call in a turn to a tool that turn did not offer (refused, and recorded as a step).
    NotOffered,
    /// A call in a turn that `finish` finished.
    TurnFinished,
    /// A `list_tools_page` cursor given for another tool list (forms, canisters, refs or
    /// builtin settings changed a tool, or an upgrade changed how a format shows one): start again from the first page.
    StaleCursor,
}

impl ErrorCode {
    /// Every code, in the order docs/canister.md lists them.
    pub const ALL: [ErrorCode; 20] = [
        ErrorCode::Anonymous,
        ErrorCode::NotAuthorized,
        ErrorCode::NotOwner,
        ErrorCode::NotFound,
        ErrorCode::UnknownTool,
        ErrorCode::InvalidInput,
        ErrorCode::InvalidForm,
        ErrorCode::InvalidArgument,
        ErrorCode::TooLarge,
        ErrorCode::Limit,
        ErrorCode::DigestMismatch,
        ErrorCode::InFlight,
        ErrorCode::Held,
        ErrorCode::Settled,
        ErrorCode::InUse,
        ErrorCode::Retry,
        ErrorCode::Custody,
        ErrorCode::NotOffered,
        ErrorCode::TurnFinished,
        ErrorCode::StaleCursor,
    ];

    /// The code as clients read it in `ApiError.code`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Anonymous => "ANONYMOUS",
            ErrorCode::NotAuthorized => "NOT_AUTHORIZED",
            ErrorCode::NotOwner => "NOT_OWNER",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::InvalidForm => "INVALID_FORM",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::TooLarge => "TOO_LARGE",
            ErrorCode::Limit => "LIMIT",
            ErrorCode::DigestMismatch => "DIGEST_MISMATCH",
            ErrorCode::Settled => "SETTLED",
            ErrorCode::InFlight => "IN_FLIGHT",
            ErrorCode::Held => "HELD",
            ErrorCode::InUse => "IN_USE",
            ErrorCode::Retry => "RETRY",
            ErrorCode::Custody => "CUSTODY",
            ErrorCode::NotOffered => "NOT_OFFERED",
            ErrorCode::TurnFinished => "TURN_FINISHED",
            ErrorCode::StaleCursor => "STALE_CURSOR",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub fn err(code: ErrorCode, message: impl Into<String>) -> ApiError {
    ApiError {
        code: code.as_str().to_string(),
        message: message.into(),
        issues: vec![],
    }
}

pub fn input_err(issues: Vec<Issue>) -> ApiError {
    let n = issues.len();
    ApiError {
        code: ErrorCode::InvalidInput.as_str().to_string(),
        message: format!("{n} input issue{}", if n == 1 { "" } else { "s" }),
        issues: issues
            .into_iter()
            .map(|i| IssueView {
                param: i.param,
                path: i.path,
                code: i.code.as_str().to_string(),
                message: i.message,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;
    use std::collections::BTreeSet;

    /// A new variant fails to compile here until it is added to `ALL` (and so to the docs test).
    fn listed(code: ErrorCode) -> bool {
        match code {
            ErrorCode::Anonymous
            | ErrorCode::NotAuthorized
            | ErrorCode::NotOwner
            | ErrorCode::NotFound
            | ErrorCode::UnknownTool
            | ErrorCode::InvalidInput
            | ErrorCode::InvalidForm
            | ErrorCode::InvalidArgument
            | ErrorCode::TooLarge
            | ErrorCode::Limit
            | ErrorCode::DigestMismatch
            | ErrorCode::Settled
            | ErrorCode::InFlight
            | ErrorCode::Held
            | ErrorCode::InUse
            | ErrorCode::Retry
            | ErrorCode::Custody
            | ErrorCode::NotOffered
            | ErrorCode::TurnFinished
            | ErrorCode::StaleCursor => ErrorCode::ALL.contains(&code),
        }
    }

    #[test]
    fn all_lists_every_code_once() {
        for code in ErrorCode::ALL {
            assert!(listed(code), "{code}");
        }
        let distinct: BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            distinct.len(),
            ErrorCode::ALL.len(),
            "two codes share a text"
        );
    }

    /// The error table of docs/canister.md lists exactly the codes the canister answers.
    #[test]
    fn canister_docs_list_every_error_code() {
        let docs = include_str!("../../../docs/canister.md");
        let table = docs
            .split("| code | when |")
            .nth(1)
            .expect("docs/canister.md has an error-code table (| code | when |)");
        let documented: Vec<&str> = table
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let cell = l.split('|').nth(1).unwrap_or("").trim();
                cell.trim_matches('`')
            })
            .collect();
        let code_texts: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        for code in &code_texts {
            assert!(
                documented.contains(code),
                "docs/canister.md does not list the error code {code}"
            );
        }
        for code in &documented {
            assert!(
                code_texts.contains(code),
                "docs/canister.md lists {code}, which the canister never answers"
            );
        }
        assert_eq!(documented.len(), code_texts.len(), "a code listed twice");
    }
}
