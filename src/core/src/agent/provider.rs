//! The two wire formats of OpenAI-compatible providers, as pure functions: a prepared request
//! to the body to send, and a decoded reply body to the transport's facts. One non-streaming,
//! text-only request: `store: false`, no tools. Only settled answers are read; anything else
//! fails, and no failure repeats the provider's body (it may hold anything).

use super::error::{join, AgentError};
use super::finish::{Stop, TransportResult, MAX_ANSWER_BYTES};
use super::json::Json;
use super::prepare::PreparedAgent;
use super::schema::project;

pub const DEFAULT_MAX_COMPLETION_TOKENS: i64 = 4096;
pub const MAX_COMPLETION_TOKENS: i64 = 65_536;
/// The name a strict schema is sent under.
pub const SCHEMA_NAME: &str = "response";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `POST /v1/chat/completions`.
    ChatCompletions,
    /// `POST /v1/responses`.
    Responses,
}

impl Api {
    pub fn parse(s: &str) -> Option<Api> {
        match s {
            "chat-completions" => Some(Api::ChatCompletions),
            "responses" => Some(Api::Responses),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StructuredOutput {
    /// The schema reaches the model through the prompt alone.
    Prompt,
    /// The provider's strict schema format as well (the endpoint and model must support it).
    JsonSchema,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProviderSettings {
    pub model: String,
    pub api: Api,
    pub structured_output: StructuredOutput,
    pub max_completion_tokens: i64,
}

/// Reads `{ model, api?, structured_output?, max_completion_tokens? }`.
pub fn read_settings(v: &Json) -> Result<ProviderSettings, AgentError> {
    let at = "settings";
    let Some(m) = v.members() else {
        return Err(AgentError::input(
            at,
            format!("settings are an object, not {}", v.kind()),
        ));
    };
    for (k, _) in m {
        if !["model", "api", "structured_output", "max_completion_tokens"].contains(&k.as_str()) {
            return Err(AgentError::input(
                join(at, k),
                "not a setting (model, api, structured_output, max_completion_tokens)",
            ));
        }
    }
    let model = match v.get("model") {
        Some(Json::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => {
            return Err(AgentError::input(
                join(at, "model"),
                "a model name, not empty",
            ))
        }
    };
    let api = match v.get("api") {
        None => Api::ChatCompletions,
        Some(a) => a.as_str().and_then(Api::parse).ok_or_else(|| {
            AgentError::input(join(at, "api"), "\"chat-completions\" or \"responses\"")
        })?,
    };
    let structured_output = match v.get("structured_output").map(|s| s.as_str()) {
        None => StructuredOutput::Prompt,
        Some(Some("prompt")) => StructuredOutput::Prompt,
        Some(Some("json-schema")) => StructuredOutput::JsonSchema,
        Some(_) => {
            return Err(AgentError::input(
                join(at, "structured_output"),
                "\"prompt\" or \"json-schema\"",
            ))
        }
    };
    let max_completion_tokens = match v.get("max_completion_tokens") {
        None => DEFAULT_MAX_COMPLETION_TOKENS,
        Some(n) => match n.as_int() {
            Some(n) if (1..=MAX_COMPLETION_TOKENS).contains(&n) => n,
            _ => {
                return Err(AgentError::input(
                    join(at, "max_completion_tokens"),
                    format!("an integer from 1 to {MAX_COMPLETION_TOKENS}"),
                ))
            }
        },
    };
    Ok(ProviderSettings {
        model,
        api,
        structured_output,
        max_completion_tokens,
    })
}

/// The request body for the prepared request (checked again here).
pub fn request_body(prepared: &Json, settings: &ProviderSettings) -> Result<Json, AgentError> {
    let prepared = PreparedAgent::from_json(prepared)?;
    Ok(body(&prepared, settings))
}

pub fn body(prepared: &PreparedAgent, settings: &ProviderSettings) -> Json {
    let strict = match (&prepared.response_schema, settings.structured_output) {
        (Some(s), StructuredOutput::JsonSchema) => Some(project(s)),
        _ => None,
    };
    let model = ("model", Json::str(&settings.model));
    let tokens = Json::int(settings.max_completion_tokens);
    match settings.api {
        Api::ChatCompletions => {
            let mut b = vec![
                model,
                (
                    "messages",
                    Json::Array(vec![Json::object(vec![
                        ("role", Json::str("user")),
                        ("content", Json::str(&prepared.prompt)),
                    ])]),
                ),
                ("n", Json::int(1)),
                ("max_completion_tokens", tokens),
                ("store", Json::Bool(false)),
            ];
            if let Some(schema) = strict {
                b.push((
                    "response_format",
                    Json::object(vec![
                        ("type", Json::str("json_schema")),
                        (
                            "json_schema",
                            Json::object(vec![
                                ("name", Json::str(SCHEMA_NAME)),
                                ("strict", Json::Bool(true)),
                                ("schema", schema),
                            ]),
                        ),
                    ]),
                ));
            }
            Json::object(b)
        }
        Api::Responses => {
            let mut b = vec![
                model,
                ("input", Json::str(&prepared.prompt)),
                ("max_output_tokens", tokens),
                ("store", Json::Bool(false)),
            ];
            if let Some(schema) = strict {
                b.push((
                    "text",
                    Json::object(vec![(
                        "format",
                        Json::object(vec![
                            ("type", Json::str("json_schema")),
                            ("name", Json::str(SCHEMA_NAME)),
                            ("strict", Json::Bool(true)),
                            ("schema", schema),
                        ]),
                    )]),
                ));
            }
            Json::object(b)
        }
    }
}

/// The transport's facts from a provider's reply: its HTTP status and its decoded body.
pub fn transport_result(api: Api, status: u16, body: &Json) -> Result<TransportResult, AgentError> {
    if status != 200 {
        return Err(AgentError::result(
            "response",
            format!("the provider answered HTTP {status}; its body is not repeated here"),
        ));
    }
    if body.members().is_none() {
        return Err(AgentError::result(
            "response",
            format!("a reply body is an object, not {}", body.kind()),
        ));
    }
    if !matches!(body.get("error"), None | Some(Json::Null)) {
        return Err(AgentError::result(
            "response.error",
            "the provider reports an error",
        ));
    }
    let out = match api {
        Api::ChatCompletions => chat(body),
        Api::Responses => responses(body),
    }?;
    if out.text.len() > MAX_ANSWER_BYTES {
        return Err(AgentError::exhausted(
            "response",
            format!(
                "{} bytes of answer text, over the {MAX_ANSWER_BYTES} allowed",
                out.text.len()
            ),
        ));
    }
    Ok(out)
}

fn chat(body: &Json) -> Result<TransportResult, AgentError> {
    let choice = match body.get("choices").and_then(Json::items) {
        Some([one]) => one,
        Some(c) => {
            return Err(AgentError::result(
                "response.choices",
                format!("{} choices: a settled reply holds exactly one", c.len()),
            ))
        }
        None => {
            return Err(AgentError::result(
                "response.choices",
                "missing: not a chat completion",
            ))
        }
    };
    let at = "response.choices[0]";
    let Some(message) = choice.get("message").filter(|m| m.members().is_some()) else {
        return Err(AgentError::result(
            join(at, "message"),
            "missing: not a settled choice",
        ));
    };
    let mat = join(at, "message");
    if !matches!(message.get("role"), None | Some(Json::String(_)))
        || message
            .get("role")
            .and_then(Json::as_str)
            .is_some_and(|r| r != "assistant")
    {
        return Err(AgentError::result(
            join(&mat, "role"),
            "a reply comes from the assistant",
        ));
    }
    match message.get("tool_calls") {
        None | Some(Json::Null) => {}
        Some(Json::Array(a)) if a.is_empty() => {}
        Some(_) => {
            return Err(AgentError::result(
                join(&mat, "tool_calls"),
                "the model asked to call a tool; this request offers none",
            ))
        }
    }
    if !matches!(message.get("function_call"), None | Some(Json::Null)) {
        return Err(AgentError::result(
            join(&mat, "function_call"),
            "the model asked to call a function; this request offers none",
        ));
    }
    let content = match message.get("content") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(AgentError::result(
                join(&mat, "content"),
                format!("text, not {}", other.kind()),
            ))
        }
    };
    let refusal = match message.get("refusal") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(AgentError::result(
                join(&mat, "refusal"),
                format!("text, not {}", other.kind()),
            ))
        }
    };
    // The finish reason first: a refusal, like any answer, is read only from a settled choice.
    let finish = match choice.get("finish_reason").and_then(Json::as_str) {
        Some(f @ ("stop" | "length" | "content_filter")) => f,
        Some("tool_calls") | Some("function_call") => {
            return Err(AgentError::result(
                join(at, "finish_reason"),
                "the model asked to call a tool; this request offers none",
            ))
        }
        None => {
            return Err(AgentError::result(
                join(at, "finish_reason"),
                "missing: the choice is not settled",
            ))
        }
        Some(_) => {
            return Err(AgentError::result(
                join(at, "finish_reason"),
                "a termination reason this method does not know",
            ))
        }
    };
    if let Some(r) = refusal {
        return Ok(TransportResult {
            text: r,
            stop: Stop::Refusal,
        });
    }
    match finish {
        "stop" => match content {
            Some(text) => Ok(TransportResult {
                text,
                stop: Stop::EndTurn,
            }),
            None => Err(AgentError::result(
                join(&mat, "content"),
                "a completed choice with no content",
            )),
        },
        "length" => Ok(TransportResult {
            text: content.unwrap_or_default(),
            stop: Stop::Limit,
        }),
        // content_filter
        _ => Ok(TransportResult {
            text: content.unwrap_or_default(),
            stop: Stop::Refusal,
        }),
    }
}

fn responses(body: &Json) -> Result<TransportResult, AgentError> {
    let stop =
        match body.get("status").and_then(Json::as_str) {
            Some("completed") => Stop::EndTurn,
            Some("incomplete") => match body
                .get("incomplete_details")
                .and_then(|d| d.get("reason"))
                .and_then(Json::as_str)
            {
                Some("max_output_tokens") => Stop::Limit,
                Some("content_filter") => Stop::Refusal,
                _ => {
                    return Err(AgentError::result(
                        "response.incomplete_details.reason",
                        "an incomplete reply for a reason this method does not know",
                    ))
                }
            },
            Some("in_progress") | Some("queued") => return Err(AgentError::result(
                "response.status",
                "the reply is not settled (asynchronous); this method reads only settled replies",
            )),
            Some("failed") | Some("cancelled") => {
                return Err(AgentError::result(
                    "response.status",
                    "the provider did not finish the reply",
                ))
            }
            None => {
                return Err(AgentError::result(
                    "response.status",
                    "missing: not a Responses reply",
                ))
            }
            Some(_) => {
                return Err(AgentError::result(
                    "response.status",
                    "a status this method does not know",
                ))
            }
        };
    let Some(items) = body.get("output").and_then(Json::items) else {
        return Err(AgentError::result(
            "response.output",
            "missing: not a Responses reply",
        ));
    };
    let mut text = String::new();
    let mut refusal: Option<String> = None;
    let mut messages = 0;
    for (i, item) in items.iter().enumerate() {
        let at = format!("response.output[{i}]");
        match item.get("type").and_then(Json::as_str) {
            Some("reasoning") => continue,
            Some("message") => {}
            Some(t) if t.ends_with("_call") => {
                return Err(AgentError::result(
                    join(&at, "type"),
                    "the model asked to call a tool; this request offers none",
                ))
            }
            _ => {
                return Err(AgentError::result(
                    join(&at, "type"),
                    "an output item this method does not know",
                ))
            }
        }
        if item.get("role").and_then(Json::as_str) != Some("assistant") {
            return Err(AgentError::result(
                join(&at, "role"),
                "a reply comes from the assistant",
            ));
        }
        messages += 1;
        let Some(parts) = item.get("content").and_then(Json::items) else {
            return Err(AgentError::result(
                join(&at, "content"),
                "a message's content is an array of parts",
            ));
        };
        for (j, part) in parts.iter().enumerate() {
            let pat = format!("{at}.content[{j}]");
            match part.get("type").and_then(Json::as_str) {
                Some("output_text") => match part.get("text") {
                    Some(Json::String(s)) => text.push_str(s),
                    _ => {
                        return Err(AgentError::result(
                            join(&pat, "text"),
                            "output text is a string",
                        ))
                    }
                },
                Some("refusal") => match part.get("refusal") {
                    Some(Json::String(s)) => refusal.get_or_insert_with(String::new).push_str(s),
                    _ => {
                        return Err(AgentError::result(
                            join(&pat, "refusal"),
                            "a refusal is a string",
                        ))
                    }
                },
                _ => {
                    return Err(AgentError::result(
                        join(&pat, "type"),
                        "a content part this method does not know",
                    ))
                }
            }
        }
    }
    if let Some(r) = refusal {
        return Ok(TransportResult {
            text: r,
            stop: Stop::Refusal,
        });
    }
    if messages == 0 && stop == Stop::EndTurn {
        return Err(AgentError::result(
            "response.output",
            "a completed reply with no assistant message",
        ));
    }
    Ok(TransportResult { text, stop })
}
