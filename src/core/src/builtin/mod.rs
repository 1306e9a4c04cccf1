//! The builtin tools: none on unless an admin enables each. The pure ones answer here; `think`,
//! `finish` and `escalate` have their input read here and their effect (a turn's answer, the
//! owner's inbox) made by the engine.

use crate::bus::ToolDecl;
use crate::issue::Issue;
use serde_json::Value;

pub mod calculate;
pub mod clock;
pub mod date;
pub mod json_query;

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

    /// The declaration (checked by `bus::check_decl` in a test, as at construction).
    /// `default_zone` is the zone `current_time` answers in when the caller names none.
    pub fn decl(self, default_zone: &str) -> ToolDecl {
        let _ = default_zone;
        unimplemented!("builtin helper")
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
    let _ = (builtin, input, now_ns, default_zone);
    unimplemented!("builtin helper")
}

/// `finish`'s answer text.
pub fn read_finish(input: &Value) -> Result<String, Vec<Issue>> {
    let _ = input;
    unimplemented!("builtin helper")
}

pub fn read_escalate(input: &Value) -> Result<EscalateRequest, Vec<Issue>> {
    let _ = input;
    unimplemented!("builtin helper")
}

/// Whether `zone` is an IANA zone of the compiled-in database (an admin's default is checked).
pub fn check_zone(zone: &str) -> Result<(), String> {
    let _ = zone;
    unimplemented!("builtin helper")
}
