//! The builtin tools: none on unless an admin enables each. The pure ones answer here; `think`,
//! `finish` and `escalate` have their input read here and their effect (a turn's answer, the
//! owner's inbox) made by the engine.

use crate::bus::{EffectLabel, ToolDecl, ToolSource};
use crate::issue::{Code, Issue};
use input::{not_blank, one, Input};
use serde_json::{json, Value};

pub mod calculate;
pub mod clock;
pub mod date;
mod input;
pub mod json_query;

/// The longest `think` thought, in characters.
pub const MAX_THOUGHT: usize = 8192;
/// The longest `finish` answer, in characters (8 KiB of ASCII).
pub const MAX_ANSWER: usize = 8192;
/// The longest `escalate` reason, in characters.
pub const MAX_REASON: usize = 1024;
/// The longest `escalate` summary, in characters.
pub const MAX_SUMMARY: usize = 8192;

/// The reference's builtin that the host does not ship (a request to any URL): its name is
/// reserved all the same, so that shipping it later changes no form's tool.
pub const HTTP_REQUEST: &str = "http_request";

/// Whether no form may give a tool this name: a builtin's (enabled or not) or `http_request`.
pub fn is_reserved_name(name: &str) -> bool {
    name == HTTP_REQUEST || Builtin::from_name(name).is_some()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Builtin {
    Calculate,
    Think,
    Finish,
    Escalate,
    CurrentTime,
    DateMath,
    JsonQuery,
}

impl Builtin {
    pub const ALL: [Builtin; 7] = [
        Builtin::Calculate,
        Builtin::Think,
        Builtin::Finish,
        Builtin::Escalate,
        Builtin::CurrentTime,
        Builtin::DateMath,
        Builtin::JsonQuery,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Calculate => "calculate",
            Builtin::Think => "think",
            Builtin::Finish => "finish",
            Builtin::Escalate => "escalate",
            Builtin::CurrentTime => "current_time",
            Builtin::DateMath => "date_math",
            Builtin::JsonQuery => "json_query",
        }
    }

    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }

    /// `escalate` is pinned unless an admin says otherwise: the one turn that needs a refusal
    /// route is the turn where nothing else fit.
    pub fn pinned_by_default(self) -> bool {
        self == Builtin::Escalate
    }

    /// Whether [`Builtin::decl`] reads the zone (the bus keeps the other builtins'
    /// declarations when the zone changes).
    pub fn decl_reads_zone(self) -> bool {
        self == Builtin::CurrentTime
    }

    /// The declaration (checked by `bus::check_decl` in a test, as at construction).
    /// `default_zone` is the zone `current_time` answers in when the caller names none.
    pub fn decl(self, default_zone: &str) -> ToolDecl {
        let (title, (description, input, output)) = match self {
            Builtin::Calculate => ("Calculate", calculate::decl_parts()),
            Builtin::CurrentTime => ("Current time", clock::decl_parts(default_zone)),
            Builtin::DateMath => ("Date arithmetic", date::decl_parts()),
            Builtin::JsonQuery => ("Query JSON", json_query::decl_parts()),
            Builtin::Think => ("Think", think_parts()),
            Builtin::Finish => ("Finish", finish_parts()),
            Builtin::Escalate => ("Escalate to a person", escalate_parts()),
        };
        // The dialect, as the form tools' schemas name it.
        let mut input = input;
        if let Some(o) = input.as_object_mut() {
            o.insert(
                "$schema".into(),
                Value::String(crate::schema::JSON_SCHEMA_DIALECT.into()),
            );
        }
        ToolDecl {
            name: self.name().to_string(),
            title: title.to_string(),
            description,
            effect: self.effect(),
            input_schema: input,
            output_schema: Some(output),
            source: ToolSource::Builtin,
        }
    }

    /// Whether the builtin reaches outside the tool host: `escalate` calls the handler canister
    /// the owner configured; every other builtin answers from the host alone (a turn's record,
    /// the canister's clock). MCP calls such a tool open-world (`openWorldHint`).
    pub fn reaches_outside(self) -> bool {
        self == Builtin::Escalate
    }

    /// No builtin but `escalate` has an effect outside the host (a turn's record is the host's
    /// own); `escalate` is unset on purpose: paging someone twice is not paging them once.
    pub fn effect(self) -> Option<EffectLabel> {
        match self {
            Builtin::Escalate => None,
            _ => Some(EffectLabel::Readonly),
        }
    }
}

/// What `escalate` asks for, read from its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EscalateRequest {
    pub reason: String,
    pub summary: Option<String>,
}

/// Runs a pure builtin (`calculate`, `current_time`, `date_math`, `json_query`, `think`) on a
/// parsed input. `now_ns` is the canister's clock; `default_zone` as for `decl`.
pub fn run_pure(
    builtin: Builtin,
    input: &Value,
    now_ns: u64,
    default_zone: &str,
) -> Result<Value, Vec<Issue>> {
    match builtin {
        Builtin::Calculate => calculate::run(input),
        Builtin::CurrentTime => clock::run(input, now_ns, default_zone),
        Builtin::DateMath => date::run(input),
        Builtin::JsonQuery => json_query::run(input),
        Builtin::Think => {
            let input = Input::new(input, "think", &["thought"])?;
            input
                .required_text("thought", MAX_THOUGHT)
                .map_err(|i| vec![i])?;
            Ok(json!({ "result": "noted" }))
        }
        Builtin::Finish | Builtin::Escalate => Err(one(
            "",
            Code::Input,
            format!(
                "{} is not a pure builtin: the engine makes its effect",
                builtin.name()
            ),
        )),
    }
}

/// `finish`'s answer text.
/// The answer is taken as given; one that is only white space is refused.
pub fn read_finish(input: &Value) -> Result<String, Vec<Issue>> {
    let input = Input::new(input, "finish", &["answer"])?;
    let answer = input
        .required_text("answer", MAX_ANSWER)
        .and_then(|a| not_blank("answer", a).map(|_| a))
        .map_err(|i| vec![i])?;
    Ok(answer.to_string())
}

/// The reason must say something; the summary is optional (`null` is absent).
pub fn read_escalate(input: &Value) -> Result<EscalateRequest, Vec<Issue>> {
    let input = Input::new(input, "escalate", &["reason", "summary"])?;
    let reason = input
        .required_text("reason", MAX_REASON)
        .and_then(|r| not_blank("reason", r).map(|_| r));
    let summary = input.text("summary", MAX_SUMMARY);
    match (reason, summary) {
        (Ok(reason), Ok(summary)) => Ok(EscalateRequest {
            reason: reason.to_string(),
            summary: summary.map(str::to_string),
        }),
        (reason, summary) => Err(reason.err().into_iter().chain(summary.err()).collect()),
    }
}

fn think_parts() -> (String, Value, Value) {
    let description = "A scratchpad: write a plan or a working thought before a multi-step \
        sequence. It changes nothing and answers noted. The thought itself is not stored: a \
        turn's step records only a digest of the input."
        .to_string();
    let input = json!({
        "type": "object",
        "properties": {
            "thought": { "type": "string", "maxLength": MAX_THOUGHT, "description": "What you are thinking." }
        },
        "required": ["thought"],
        "additionalProperties": false
    });
    let output = json!({
        "type": "object",
        "properties": { "result": { "type": "string", "const": "noted" } },
        "required": ["result"],
        "additionalProperties": false
    });
    (description, input, output)
}

/// The engine makes `finish`'s and `escalate`'s answers: their output schemas fix the one
/// member a model acts on and leave room for what the engine adds (an inbox id).
fn finish_parts() -> (String, Value, Value) {
    let description = "Say you are done and give the final answer: call this once, last. The \
        turn is then finished and its answer is this text."
        .to_string();
    let input = json!({
        "type": "object",
        "properties": {
            "answer": { "type": "string", "minLength": 1, "maxLength": MAX_ANSWER, "pattern": "\\S", "description": "The final answer for the person." }
        },
        "required": ["answer"],
        "additionalProperties": false
    });
    let output = json!({
        "type": "object",
        "properties": { "finished": { "type": "boolean" } },
        "required": ["finished"]
    });
    (description, input, output)
}

fn escalate_parts() -> (String, Value, Value) {
    let description = "Hand back to a person when no other tool fits, the request is unsafe or \
        unclear, or you are stuck. The request goes to the owner's inbox; delivered is true only \
        when a handler the owner configured accepted it, so do not tell anyone a person was \
        reached unless delivered is true."
        .to_string();
    let input = json!({
        "type": "object",
        "properties": {
            "reason": { "type": "string", "minLength": 1, "maxLength": MAX_REASON, "pattern": "\\S", "description": "Why a person is needed." },
            "summary": { "type": ["string", "null"], "maxLength": MAX_SUMMARY, "description": "What was asked and done so far." }
        },
        "required": ["reason"],
        "additionalProperties": false
    });
    let output = json!({
        "type": "object",
        "properties": {
            "delivered": { "type": "boolean", "description": "Whether a handler the owner configured accepted it." }
        },
        "required": ["delivered"]
    });
    (description, input, output)
}

/// Whether `zone` is an IANA zone of the compiled-in database (an admin's default is checked).
pub fn check_zone(zone: &str) -> Result<(), String> {
    clock::zone(zone).map(|_| ())
}
