//! The agent method's errors: three codes, each with the place it was found and a message.
//! No error is turned into an outcome and nothing is retried: a caller sees exactly what failed.

use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AgentErrorCode {
    /// The input, the selected skills or a prepared value is not what the method takes.
    #[serde(rename = "INVALID_INPUT")]
    InvalidInput,
    /// A stated bound was passed: refused whole, never cut to fit.
    #[serde(rename = "RESOURCE_EXHAUSTED")]
    ResourceExhausted,
    /// The transport's facts, a provider's reply or a structured answer is not acceptable.
    #[serde(rename = "INVALID_RESULT")]
    InvalidResult,
}

impl AgentErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentErrorCode::InvalidInput => "INVALID_INPUT",
            AgentErrorCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
            AgentErrorCode::InvalidResult => "INVALID_RESULT",
        }
    }
}

/// `place` names the value, as `guidance[2].label` or `response_schema.properties.total`
/// (empty for the value as a whole).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgentError {
    pub code: AgentErrorCode,
    pub place: String,
    pub message: String,
}

impl AgentError {
    pub fn new(code: AgentErrorCode, place: impl Into<String>, message: impl Into<String>) -> Self {
        AgentError {
            code,
            place: place.into(),
            message: message.into(),
        }
    }
    pub fn input(place: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(AgentErrorCode::InvalidInput, place, message)
    }
    pub fn exhausted(place: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(AgentErrorCode::ResourceExhausted, place, message)
    }
    pub fn result(place: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(AgentErrorCode::InvalidResult, place, message)
    }
    /// The same error with its place under `outer` (`outer.place` or `outer[i]...`).
    pub fn under(mut self, outer: &str) -> Self {
        self.place = join(outer, &self.place);
        self
    }
    /// The same error with another code (a JSON fault in an answer is a bad result, not input).
    pub fn with_code(mut self, code: AgentErrorCode) -> Self {
        if self.code != AgentErrorCode::ResourceExhausted {
            self.code = code;
        }
        self
    }
}

/// `a` then `b`: `a.b`, or `a[0]` when `b` is an index, or either alone when the other is empty.
pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ if b.starts_with('[') => format!("{a}{b}"),
        _ => format!("{a}.{b}"),
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.place.is_empty() {
            write!(f, "{}: {}", self.code.as_str(), self.message)
        } else {
            write!(
                f,
                "{} at {}: {}",
                self.code.as_str(),
                self.place,
                self.message
            )
        }
    }
}

impl std::error::Error for AgentError {}
