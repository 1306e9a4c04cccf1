//! Finishing: the transport's facts about one settled answer, read into the method's result.
//! With a response schema, a completed answer must hold matching JSON. A result never gains a
//! session receipt here: only the implementation that kept the state can say it did.

use super::error::{join, AgentError, AgentErrorCode};
use super::json::{self, check_value, Json, ANSWER, DOCUMENT};
use super::prepare::{is_uuid, PreparedAgent};
use super::schema::{compile, ResponseSchema};

/// UTF-8 bytes of an answer's text.
pub const MAX_ANSWER_BYTES: usize = 8 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    EndTurn,
    Refusal,
    Limit,
}

impl Stop {
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::EndTurn => "end-turn",
            Stop::Refusal => "refusal",
            Stop::Limit => "limit",
        }
    }
}

/// What the transport saw: one settled answer and why it stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct TransportResult {
    pub text: String,
    pub stop: Stop,
}

impl TransportResult {
    /// `{ outcome: "done", output: { text, stop } }`.
    pub fn to_json(&self) -> Json {
        Json::object(vec![
            ("outcome", Json::str("done")),
            (
                "output",
                Json::object(vec![
                    ("text", Json::str(&self.text)),
                    ("stop", Json::str(self.stop.as_str())),
                ]),
            ),
        ])
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    Blocked,
    Limit,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Blocked => "blocked",
            Outcome::Limit => "limit",
        }
    }
}

/// The closed reasons a session was not retained; they describe retention, not the answer.
pub const UNAVAILABLE_REASONS: [&str; 4] = [
    "not-cleanly-closed",
    "missing-history",
    "unsupported-history",
    "capacity",
];

#[derive(Clone, Debug, PartialEq)]
pub enum SessionReceipt {
    Retained(String),
    Unavailable(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct AgentResult {
    pub outcome: Outcome,
    pub text: String,
    pub structured: Option<Json>,
    pub session: Option<SessionReceipt>,
}

impl AgentResult {
    /// `{ outcome, output: { text, structured?, session? } }`.
    pub fn to_json(&self) -> Json {
        let mut output = vec![("text".to_string(), Json::str(&self.text))];
        if let Some(s) = &self.structured {
            output.push(("structured".to_string(), s.clone()));
        }
        if let Some(r) = &self.session {
            let r = match r {
                SessionReceipt::Retained(u) => Json::object(vec![
                    ("status", Json::str("retained")),
                    ("reference", Json::str(u)),
                ]),
                SessionReceipt::Unavailable(why) => Json::object(vec![
                    ("status", Json::str("unavailable")),
                    ("reason", Json::str(why)),
                ]),
            };
            output.push(("session".to_string(), r));
        }
        Json::Object(vec![
            ("outcome".to_string(), Json::str(self.outcome.as_str())),
            ("output".to_string(), Json::Object(output)),
        ])
    }
}

fn closed(v: &Json, keys: &[&str], what: &str, place: &str) -> Result<(), AgentError> {
    let Some(m) = v.members() else {
        return Err(AgentError::result(
            place,
            format!("{what} is an object, not {}", v.kind()),
        ));
    };
    for (k, _) in m {
        if !keys.contains(&k.as_str()) {
            return Err(AgentError::result(
                join(place, k),
                format!("not a member of {what} (it has {})", keys.join(", ")),
            ));
        }
    }
    Ok(())
}

fn answer_text(output: &Json, place: &str) -> Result<String, AgentError> {
    match output.get("text") {
        Some(Json::String(t)) if t.len() > MAX_ANSWER_BYTES => Err(AgentError::exhausted(
            join(place, "text"),
            format!(
                "{} bytes of answer text, over the {MAX_ANSWER_BYTES} allowed",
                t.len()
            ),
        )),
        Some(Json::String(t)) => Ok(t.clone()),
        Some(other) => Err(AgentError::result(
            join(place, "text"),
            format!("a string, not {}", other.kind()),
        )),
        None => Err(AgentError::result(join(place, "text"), "missing")),
    }
}

/// Reads the transport's facts: `{ outcome: "done", output: { text, stop } }`.
pub fn read_transport(v: &Json) -> Result<TransportResult, AgentError> {
    let at = "transport";
    check_value(v, &DOCUMENT, at).map_err(|e| e.with_code(AgentErrorCode::InvalidResult))?;
    closed(v, &["outcome", "output"], "a transport result", at)?;
    match v.get("outcome") {
        Some(Json::String(o)) if o == "done" => {}
        _ => {
            return Err(AgentError::result(
                join(at, "outcome"),
                "a transport result settles with \"done\"; a failed transport is an error, not an outcome",
            ))
        }
    }
    let Some(output) = v.get("output") else {
        return Err(AgentError::result(join(at, "output"), "missing"));
    };
    let oat = join(at, "output");
    closed(output, &["text", "stop"], "a transport output", &oat)?;
    let text = answer_text(output, &oat)?;
    let stop = match output.get("stop").and_then(Json::as_str) {
        Some("end-turn") => Stop::EndTurn,
        Some("refusal") => Stop::Refusal,
        Some("limit") => Stop::Limit,
        _ => {
            return Err(AgentError::result(
                join(&oat, "stop"),
                "one of \"end-turn\", \"refusal\", \"limit\"",
            ))
        }
    };
    Ok(TransportResult { text, stop })
}

/// Interprets one settled answer for a prepared request (checked again here).
pub fn finish_agent(prepared: &Json, transport: &Json) -> Result<AgentResult, AgentError> {
    let prepared = PreparedAgent::from_json(prepared)?;
    let transport = read_transport(transport)?;
    finish(&prepared, &transport)
}

pub fn finish(
    prepared: &PreparedAgent,
    transport: &TransportResult,
) -> Result<AgentResult, AgentError> {
    let schema = match &prepared.response_schema {
        Some(s) => Some(compile(s, "prepared.request.response_schema")?),
        None => None,
    };
    let outcome = match transport.stop {
        Stop::EndTurn => Outcome::Done,
        Stop::Refusal => Outcome::Blocked,
        Stop::Limit => Outcome::Limit,
    };
    let structured = match &schema {
        None => None,
        Some(s) => structured(outcome, &transport.text, s, "output.text")?,
    };
    Ok(AgentResult {
        outcome,
        text: transport.text.clone(),
        structured,
        session: None,
    })
}

/// The JSON a text holds, read as the method reads it.
#[derive(Debug)]
enum Held {
    /// Raw JSON, or exactly one complete `json` fence and nothing around it.
    Json(Json),
    /// Text that is not JSON: prose, a fence with prose around it, two fences, ...
    NotJson(AgentError),
    /// JSON in its syntax that breaks a JSON/0 rule (a duplicate member, an unsafe number).
    Unsafe(AgentError),
}

/// JSON whitespace only, as RFC 8259 has it.
fn trim_ws(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
}

fn read_json(t: &str, place: &str) -> Held {
    match json::parse(t, &ANSWER, place) {
        Ok(v) => Held::Json(v),
        Err(e) if serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok() => {
            Held::Unsafe(e.with_code(AgentErrorCode::InvalidResult))
        }
        Err(e) => Held::NotJson(e.with_code(AgentErrorCode::InvalidResult)),
    }
}

fn held(text: &str, place: &str) -> Held {
    let t = trim_ws(text);
    let fences = text
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count();
    if !t.starts_with("```") {
        if fences > 0 && !t.starts_with('{') && !t.starts_with('[') {
            return Held::NotJson(AgentError::result(
                place,
                "a JSON answer is raw JSON or one ```json fence with nothing around it",
            ));
        }
        return read_json(t, place);
    }
    let mut lines = t.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let opening = lines.next().unwrap_or_default();
    if opening.trim_end_matches([' ', '\t']) != "```json" {
        return Held::NotJson(AgentError::result(
            place,
            "a fence around a JSON answer opens with ```json",
        ));
    }
    let rest: Vec<&str> = lines.collect();
    let Some(close) = rest
        .iter()
        .position(|l| l.trim_end_matches([' ', '\t']) == "```")
    else {
        return Held::NotJson(AgentError::result(place, "the ```json fence is not closed"));
    };
    if close + 1 != rest.len() {
        let more = rest[close + 1..]
            .iter()
            .any(|l| l.trim_start().starts_with("```"));
        return Held::NotJson(AgentError::result(
            place,
            if more {
                "two fences: a JSON answer is one ```json fence"
            } else {
                "text after the ```json fence: a JSON answer has nothing around it"
            },
        ));
    }
    if rest[..close]
        .iter()
        .any(|l| l.trim_start().starts_with("```"))
    {
        return Held::NotJson(AgentError::result(
            place,
            "a fence inside the ```json fence",
        ));
    }
    read_json(&rest[..close].join("\n"), place)
}

/// The structured answer for `outcome`: a completed answer must hold matching JSON; a blocked
/// or limited one may hold none, but JSON it holds must match too.
fn structured(
    outcome: Outcome,
    text: &str,
    schema: &ResponseSchema,
    place: &str,
) -> Result<Option<Json>, AgentError> {
    match (held(text, place), outcome) {
        (Held::Json(v), _) => {
            schema.check(&v, "output.structured")?;
            Ok(Some(v))
        }
        (Held::Unsafe(e), _) => Err(e),
        (Held::NotJson(e), Outcome::Done) => Err(AgentError::result(
            e.place,
            format!(
                "a completed answer to a request with a response schema holds its JSON: {}",
                e.message
            ),
        )),
        (Held::NotJson(_), _) => Ok(None),
    }
}

/// Checks a result envelope (from this method or a replacement): its shape, its session
/// receipt, and, with the requested schema, its structured answer against the schema and
/// against the JSON its text holds.
pub fn check_agent_result(result: &Json, schema: Option<&Json>) -> Result<AgentResult, AgentError> {
    let schema = match schema {
        Some(s) => Some(compile(s, "response_schema")?),
        None => None,
    };
    check_value(result, &DOCUMENT, "").map_err(|e| e.with_code(AgentErrorCode::InvalidResult))?;
    closed(result, &["outcome", "output"], "a result", "")?;
    let outcome = match result.get("outcome").and_then(Json::as_str) {
        Some("done") => Outcome::Done,
        Some("blocked") => Outcome::Blocked,
        Some("limit") => Outcome::Limit,
        _ => {
            return Err(AgentError::result(
                "outcome",
                "one of \"done\", \"blocked\", \"limit\"",
            ))
        }
    };
    let Some(output) = result.get("output") else {
        return Err(AgentError::result("output", "missing"));
    };
    closed(
        output,
        &["text", "structured", "session"],
        "a result's output",
        "output",
    )?;
    let text = answer_text(output, "output")?;
    let given = output.get("structured");
    let structured = match (&schema, given) {
        (None, Some(_)) => {
            return Err(AgentError::result(
                "output.structured",
                "a structured answer is checked against the schema it was requested with: give the schema",
            ))
        }
        (None, None) => None,
        (Some(s), given) => {
            let derived = structured(outcome, &text, s, "output.text")?;
            // The same value: members' order is not part of a JSON value (a reader may sort them).
            if given.map(Json::canonical) != derived.as_ref().map(Json::canonical) {
                return Err(AgentError::result(
                    "output.structured",
                    if derived.is_some() {
                        "not the JSON the answer's text holds"
                    } else {
                        "the answer's text holds no JSON for it"
                    },
                ));
            }
            derived
        }
    };
    let session = match output.get("session") {
        None => None,
        Some(r) => Some(read_receipt(r, "output.session")?),
    };
    Ok(AgentResult {
        outcome,
        text,
        structured,
        session,
    })
}

fn read_receipt(v: &Json, place: &str) -> Result<SessionReceipt, AgentError> {
    match v.get("status").and_then(Json::as_str) {
        Some("retained") => {
            closed(
                v,
                &["status", "reference"],
                "a retained session receipt",
                place,
            )?;
            match v.get("reference").and_then(Json::as_str) {
                Some(u) if is_uuid(u) => Ok(SessionReceipt::Retained(u.to_string())),
                _ => Err(AgentError::result(join(place, "reference"), "a UUID")),
            }
        }
        Some("unavailable") => {
            closed(
                v,
                &["status", "reason"],
                "an unavailable session receipt",
                place,
            )?;
            match v.get("reason").and_then(Json::as_str) {
                Some(r) if UNAVAILABLE_REASONS.contains(&r) => {
                    Ok(SessionReceipt::Unavailable(r.to_string()))
                }
                _ => Err(AgentError::result(
                    join(place, "reason"),
                    format!("one of {}", UNAVAILABLE_REASONS.join(", ")),
                )),
            }
        }
        _ => Err(AgentError::result(
            join(place, "status"),
            "\"retained\" or \"unavailable\"",
        )),
    }
}
