//! The agent method: one bounded request to a language model, prepared from instructions,
//! guidance and selected skills, and its settled answer interpreted, with a closed JSON Schema
//! profile for structured answers and the two OpenAI-compatible wire formats. Pure: nothing
//! here calls a provider, reads a file or grants authority (docs/agent.md).

pub mod error;
pub mod finish;
pub mod json;
pub mod prepare;
pub mod provider;
pub mod schema;

pub use error::{AgentError, AgentErrorCode};
pub use finish::{
    check_agent_result, finish_agent, AgentResult, Outcome, SessionReceipt, Stop, TransportResult,
};
pub use json::Json;
pub use prepare::{
    prepare_agent, AgentInput, Guidance, PreparedAgent, SessionRequest, Skill, SkillFile,
};
pub use provider::{request_body, transport_result, Api, ProviderSettings, StructuredOutput};
pub use schema::{assert_response_schema, project_response_schema, ResponseSchema, DIALECT};
