//! ICRC-21 consent messages: what a wallet shows before the owner signs `confirm` (or `decline`,
//! or `call_tool` of `commit` with a digest). Built from the call's own argument, for any
//! caller, the anonymous one included; the digest in the argument must match the intent's
//! current preview, so a message for one intent never stands for another.

use crate::model::{Intent, Status};
use crate::runtime::Runtime;
use crate::types::{CallToolArgs, ConfirmArgs, DeclineArgs, StandardRecord};
use candid::{CandidType, Deserialize, Nat};
use serde_bytes::ByteBuf;
use serde_json::Value;

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ConsentMessageMetadata {
    pub language: String,
    pub utc_offset_minutes: Option<i16>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    GenericDisplay,
    FieldsDisplay,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ConsentMessageSpec {
    pub metadata: ConsentMessageMetadata,
    pub device_spec: Option<DeviceSpec>,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ConsentMessageRequest {
    pub method: String,
    pub arg: ByteBuf,
    pub user_preferences: ConsentMessageSpec,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum ConsentMessage {
    GenericDisplayMessage(String),
    FieldsDisplayMessage {
        title: String,
        fields: Vec<(String, String)>,
        action: String,
    },
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ConsentInfo {
    pub consent_message: ConsentMessage,
    pub metadata: ConsentMessageMetadata,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    pub description: String,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum Icrc21Error {
    UnsupportedCanisterCall(ErrorInfo),
    ConsentMessageUnavailable(ErrorInfo),
    InsufficientPayment(ErrorInfo),
    GenericError {
        error_code: Nat,
        description: String,
    },
}

pub type ConsentResponse = Result<ConsentInfo, Icrc21Error>;

/// Bytes of one consent message at most; a longer one is refused, never cut.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024;
/// Bytes of the request's argument at most.
pub const MAX_ARG_BYTES: usize = 4 * 1024;

pub fn supported_standards() -> Vec<StandardRecord> {
    vec![
        StandardRecord {
            name: "ICRC-10".into(),
            url: "https://github.com/dfinity/ICRC/blob/main/ICRCs/ICRC-10/ICRC-10.md".into(),
        },
        StandardRecord {
            name: "ICRC-21".into(),
            url: "https://github.com/dfinity/ICRC/blob/main/ICRCs/ICRC-21/ICRC-21.md".into(),
        },
    ]
}

fn unsupported(why: impl Into<String>) -> Icrc21Error {
    Icrc21Error::UnsupportedCanisterCall(ErrorInfo {
        description: why.into(),
    })
}

enum Action {
    Confirm,
    Decline,
}

/// The consent message for a call to this canister.
pub fn consent_message<R: Runtime>(rt: &R, req: ConsentMessageRequest) -> ConsentResponse {
    if req.arg.len() > MAX_ARG_BYTES {
        return Err(unsupported(format!(
            "the argument is {} bytes, over {MAX_ARG_BYTES}",
            req.arg.len()
        )));
    }
    let (action, id, digest) = match req.method.as_str() {
        "confirm" => {
            let a: ConfirmArgs = candid::decode_one(&req.arg).map_err(|e| {
                unsupported(format!("the argument of confirm does not decode: {e}"))
            })?;
            (Action::Confirm, a.intent_id, Some(a.digest.into_vec()))
        }
        "decline" => {
            let a: DeclineArgs = candid::decode_one(&req.arg).map_err(|e| {
                unsupported(format!("the argument of decline does not decode: {e}"))
            })?;
            (Action::Decline, a.intent_id, a.digest.map(|d| d.into_vec()))
        }
        "call_tool" => {
            let a: CallToolArgs = candid::decode_one(&req.arg).map_err(|e| {
                unsupported(format!("the argument of call_tool does not decode: {e}"))
            })?;
            if a.name != tool_host_core::plan::COMMIT_TOOL {
                return Err(unsupported(format!(
                    "call_tool {} sends nothing that needs consent; only commit does",
                    a.name
                )));
            }
            let input: Value = serde_json::from_str(&a.input)
                .map_err(|e| unsupported(format!("the commit input is not JSON: {e}")))?;
            let id = input["preview_id"]
                .as_str()
                .and_then(|s| s.trim().parse().ok())
                .ok_or_else(|| unsupported("the commit input has no preview_id"))?;
            let digest =
                input["digest"]
                    .as_str()
                    .and_then(|d| hex::decode(d.trim()).ok())
                    .ok_or_else(|| {
                        Icrc21Error::ConsentMessageUnavailable(ErrorInfo {
                            description:
                                "a commit without a digest only asks the owner; it sends nothing"
                                    .into(),
                        })
                    })?;
            (Action::Confirm, id, Some(digest))
        }
        other => {
            return Err(unsupported(format!(
                "{other} has no consent message: it is not a call that sends"
            )))
        }
    };
    // Only for the intent's current digest: without it (or for an intent that does not exist,
    // answered alike) nothing about any intent is said, to anyone.
    let intent = rt
        .with_state(|s| s.intents.get(&id))
        .filter(|i| digest.as_deref() == Some(i.digest.as_slice()))
        .ok_or_else(|| {
            Icrc21Error::ConsentMessageUnavailable(ErrorInfo {
                description: "a consent message is given only for an intent's current digest (the digest of its preview's bytes, in the call's argument)".into(),
            })
        })?;
    if matches!(action, Action::Confirm) && !matches!(intent.status, Status::Open | Status::Unknown)
    {
        return Err(Icrc21Error::ConsentMessageUnavailable(ErrorInfo {
            description: format!(
                "intent {id} is {}; confirming it sends nothing",
                intent.status.as_str()
            ),
        }));
    }
    let fields = fields_of(&intent);
    let preview: Value = serde_json::from_str(&intent.preview_json).unwrap_or(Value::Null);
    let title = preview["title"]
        .as_str()
        .unwrap_or(&intent.method)
        .to_string();
    let target = match preview["canister_label"].as_str() {
        Some(l) => format!("{l} ({})", intent.canister),
        None => intent.canister.to_text(),
    };
    let irreversible = preview["effect"]["irreversible"].as_bool().unwrap_or(true);
    let (heading, action_words) = match action {
        Action::Confirm => (
            format!("Confirm: {title}"),
            format!(
                "Confirm to send this call to {target}.{}",
                if irreversible {
                    " It cannot be undone."
                } else {
                    ""
                }
            ),
        ),
        Action::Decline => (
            format!("Decline: {title}"),
            "Decline: nothing is sent.".to_string(),
        ),
    };
    let again = if intent.had_unknown {
        " An earlier send of it had an unknown outcome; this sends the same bytes again, which the target deduplicates."
    } else {
        ""
    };
    let message = match req.user_preferences.device_spec {
        Some(DeviceSpec::FieldsDisplay) => ConsentMessage::FieldsDisplayMessage {
            title: heading,
            fields,
            action: format!("{action_words}{again}"),
        },
        _ => {
            let mut md = format!(
                "# {heading}\n\n`{}` on **{target}**, intent {} prepared by `{}` for `{}`:\n\n",
                intent.method, intent.id, intent.preparer, intent.owner
            );
            for (k, v) in &fields {
                md.push_str(&format!("- **{k}:** {v}\n"));
            }
            md.push_str(&format!("\n{action_words}{again}\n"));
            ConsentMessage::GenericDisplayMessage(md)
        }
    };
    let size = match &message {
        ConsentMessage::GenericDisplayMessage(m) => m.len(),
        ConsentMessage::FieldsDisplayMessage {
            title,
            fields,
            action,
        } => {
            title.len()
                + action.len()
                + fields.iter().map(|(a, b)| a.len() + b.len()).sum::<usize>()
        }
    };
    if size > MAX_MESSAGE_BYTES {
        return Err(Icrc21Error::ConsentMessageUnavailable(ErrorInfo { description: format!("the message would be {size} bytes, over {MAX_MESSAGE_BYTES}; the intent's arguments are too large to show") }));
    }
    Ok(ConsentInfo {
        consent_message: message,
        metadata: ConsentMessageMetadata {
            language: "en".into(),
            utc_offset_minutes: None,
        },
    })
}

/// The preview's arguments as labelled fields (`created_at_time` → `Created at time`).
fn fields_of(i: &Intent) -> Vec<(String, String)> {
    let preview: Value = serde_json::from_str(&i.preview_json).unwrap_or(Value::Null);
    let mut out = vec![];
    match &preview["arguments"] {
        Value::Object(args) => {
            for (k, v) in args {
                if v.is_null() {
                    continue;
                }
                out.push((label(k), plain(v)));
            }
        }
        Value::Null => {}
        other => out.push(("Arguments".into(), plain(other))),
    }
    out.push((
        "Canister".into(),
        match preview["canister_label"].as_str() {
            Some(l) => format!("{l} ({})", i.canister),
            None => i.canister.to_text(),
        },
    ));
    out.push(("Intent".into(), i.id.to_string()));
    out.push((
        "Digest".into(),
        tool_host_core::text::bytes::to_hex(i.digest),
    ));
    out
}

fn label(key: &str) -> String {
    let words = key.replace('_', " ");
    let mut c = words.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
