//! API error codes (docs/canister.md).

use crate::types::{ApiError, IssueView};
use tool_host_core::issue::Issue;

pub const ANONYMOUS: &str = "ANONYMOUS";
pub const NOT_AUTHORIZED: &str = "NOT_AUTHORIZED";
pub const NOT_OWNER: &str = "NOT_OWNER";
pub const NOT_FOUND: &str = "NOT_FOUND";
pub const UNKNOWN_TOOL: &str = "UNKNOWN_TOOL";
pub const INVALID_INPUT: &str = "INVALID_INPUT";
pub const INVALID_FORM: &str = "INVALID_FORM";
pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
pub const TOO_LARGE: &str = "TOO_LARGE";
pub const LIMIT: &str = "LIMIT";
pub const DIGEST_MISMATCH: &str = "DIGEST_MISMATCH";
pub const SETTLED: &str = "SETTLED";
pub const IN_FLIGHT: &str = "IN_FLIGHT";
pub const HELD: &str = "HELD";
pub const IN_USE: &str = "IN_USE";
/// Forms or canisters changed while the call awaited (a prepare reading name sets): nothing was
/// stored; the same call again reads against what is registered now.
pub const RETRY: &str = "RETRY";
pub const CALL_FAILED: &str = "CALL_FAILED";

pub fn err(code: &str, message: impl Into<String>) -> ApiError {
    ApiError {
        code: code.to_string(),
        message: message.into(),
        issues: vec![],
    }
}

pub fn input_err(issues: Vec<Issue>) -> ApiError {
    let n = issues.len();
    ApiError {
        code: INVALID_INPUT.to_string(),
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
