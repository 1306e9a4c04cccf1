//! ICRC-21 consent messages: what a wallet shows before the owner signs `confirm` (or `decline`,
//! or `call_tool` of `commit` with a digest). Built from the call's own argument, for any
//! caller, the anonymous one included; the digest in the argument must match the intent's
//! current preview, so a message for one intent never stands for another.

use crate::model::{Intent, Status};
use crate::runtime::Runtime;
use crate::types::{CallToolArgs, ConfirmArgs, DeclineArgs, StandardRecord};
use candid::{CandidType, Deserialize, Nat};
use serde_bytes::ByteBuf;
use serde_json::Value as Json;
use tool_host_core::display::{typed_fields, Typed, TypedField};

// The ICRC-21 types under the names of the standard's `.did` (`candid/icrc21.did`): Candid
// names a type after its Rust name, and generated clients match other canisters' only with
// the same names. The Rust names stay readable through the aliases below.

#[allow(non_camel_case_types)]
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct icrc21_consent_message_metadata {
    pub language: String,
    pub utc_offset_minutes: Option<i16>,
}
pub type ConsentMessageMetadata = icrc21_consent_message_metadata;

/// The standard writes this variant inline in `icrc21_consent_message_spec`.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    GenericDisplay,
    FieldsDisplay,
}

#[allow(non_camel_case_types)]
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct icrc21_consent_message_spec {
    pub metadata: ConsentMessageMetadata,
    pub device_spec: Option<DeviceSpec>,
}
pub type ConsentMessageSpec = icrc21_consent_message_spec;

#[allow(non_camel_case_types)]
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct icrc21_consent_message_request {
    pub method: String,
    pub arg: ByteBuf,
    pub user_preferences: ConsentMessageSpec,
}
pub type ConsentMessageRequest = icrc21_consent_message_request;

/// An amount in base units; the standard's `amount` is `nat64`, so a larger ICRC-1 amount
/// (a `nat`) is shown as `Text` instead, never cut.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TokenAmount {
    pub decimals: u8,
    pub amount: u64,
    pub symbol: String,
}

/// The same record as `DurationSeconds`: Candid's exporter keeps one name for identical types
/// (the shorter), so the `.did` names this one `DurationSeconds` too.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TimestampSeconds {
    pub amount: u64,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct DurationSeconds {
    pub amount: u64,
}

#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TextValue {
    pub content: String,
}

/// A field's value in a fields display, typed so that a wallet formats it itself.
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum Value {
    TokenAmount(TokenAmount),
    TimestampSeconds(TimestampSeconds),
    DurationSeconds(DurationSeconds),
    Text(TextValue),
}

impl Value {
    pub fn text(content: impl Into<String>) -> Value {
        Value::Text(TextValue {
            content: content.into(),
        })
    }
}

#[allow(non_camel_case_types)]
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum icrc21_consent_message {
    GenericDisplayMessage(String),
    FieldsDisplayMessage {
        intent: String,
        fields: Vec<(String, Value)>,
    },
}
pub type ConsentMessage = icrc21_consent_message;

#[allow(non_camel_case_types)]
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct icrc21_consent_info {
    pub consent_message: ConsentMessage,
    pub metadata: ConsentMessageMetadata,
}
pub type ConsentInfo = icrc21_consent_info;

#[allow(non_camel_case_types)]
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct icrc21_error_info {
    pub description: String,
}
pub type ErrorInfo = icrc21_error_info;

#[allow(non_camel_case_types)]
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum icrc21_error {
    UnsupportedCanisterCall(ErrorInfo),
    ConsentMessageUnavailable(ErrorInfo),
    InsufficientPayment(ErrorInfo),
    GenericError {
        error_code: Nat,
        description: String,
    },
}
pub type Icrc21Error = icrc21_error;

/// The engine's answer; it reads as, and decodes from, [`icrc21_consent_message_response`].
pub type ConsentResponse = Result<ConsentInfo, Icrc21Error>;

/// The canister's answer under the standard's name (a `Result` would be exported as a
/// numbered `Result_N`).
#[allow(non_camel_case_types)]
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum icrc21_consent_message_response {
    Ok(ConsentInfo),
    Err(Icrc21Error),
}

impl From<ConsentResponse> for icrc21_consent_message_response {
    fn from(r: ConsentResponse) -> Self {
        match r {
            Ok(info) => icrc21_consent_message_response::Ok(info),
            Err(e) => icrc21_consent_message_response::Err(e),
        }
    }
}

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
            let input: Json = serde_json::from_str(&a.input)
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
    let typed = typed_of(rt, &intent);
    let mut fields = fields_of(&intent, &typed);
    let preview: Json = serde_json::from_str(&intent.preview_text()).unwrap_or(Json::Null);
    // A form's title and an admin's label are one line each, as an argument's text is: a
    // title with line breaks wrote its own Amount and To lines above the real ones.
    let title = one_line(preview["title"].as_str().unwrap_or(&intent.method));
    let target = match preview["canister_label"].as_str() {
        Some(l) => format!("{} ({})", one_line(l), intent.canister),
        None => intent.canister.to_text(),
    };
    let irreversible = preview["effect"]["irreversible"].as_bool().unwrap_or(true);
    let (heading, action_words) = match action {
        Action::Confirm => {
            // After its preview's expiry a confirm of an open intent sends nothing (rounded
            // down: never later). An unknown one has no expiry: a confirm sends it again, which
            // the action line says.
            if intent.status == Status::Open {
                let at = intent.expires_at / NANOS;
                fields.push(Field {
                    label: PREVIEW_EXPIRES.into(),
                    text: tool_host_core::text::time::format_timestamp(intent.expires_at as i128),
                    value: Value::TimestampSeconds(TimestampSeconds { amount: at }),
                });
            }
            (
                format!("Confirm: {title}"),
                format!(
                    "Confirm to send this call to {target}.{}",
                    if irreversible {
                        " It cannot be undone."
                    } else {
                        ""
                    }
                ),
            )
        }
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
    let action_text = format!("{action_words}{again}");
    // The size of the message as built: the text a wallet shows.
    let (message, size) = match req.user_preferences.device_spec {
        Some(DeviceSpec::FieldsDisplay) => {
            fields.push(Field {
                label: ACTION.into(),
                value: Value::text(&action_text),
                text: action_text,
            });
            let size = heading.len()
                + fields
                    .iter()
                    .map(|f| f.label.len() + f.text.len())
                    .sum::<usize>();
            let message = ConsentMessage::FieldsDisplayMessage {
                intent: heading,
                fields: fields.into_iter().map(|f| (f.label, f.value)).collect(),
            };
            (message, size)
        }
        _ => {
            let mut md = format!(
                "# {heading}\n\n`{}` on **{target}**, intent {} prepared by `{}` for `{}`:\n\n",
                intent.method, intent.id, intent.preparer, intent.owner
            );
            for f in &fields {
                md.push_str(&format!(
                    "- **{}:** {}\n",
                    one_line(&f.label),
                    one_line(&f.text)
                ));
            }
            md.push_str(&format!("\n{action_text}\n"));
            let size = md.len();
            (ConsentMessage::GenericDisplayMessage(md), size)
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

const NANOS: u64 = 1_000_000_000;

/// The labels of the host's own lines. An argument whose label would be one of them is shown
/// as `Argument <name>`, so that a form's field can never pass for the host's line.
const ACTION: &str = "Action";
const PREVIEW_EXPIRES: &str = "Preview expires";
const OWN_LABELS: [&str; 6] = [
    ACTION,
    PREVIEW_EXPIRES,
    "Canister",
    "Intent",
    "Digest",
    "Arguments",
];

/// A field's text on one markdown line: line breaks written as `\n`, so that an argument's
/// text cannot start a heading or a line of its own.
fn one_line(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\r', "\\r")
        .replace('\n', "\\n")
}

/// One line of the message: the text the generic display shows, the value the fields display
/// shows.
struct Field {
    label: String,
    text: String,
    value: Value,
}

/// The typed fields of the intent's argument, decoded from its exact bytes with its tool's
/// form and the target's refs; none when the tool (of its own form) or the target is gone.
fn typed_of<R: Runtime>(rt: &R, i: &Intent) -> Vec<TypedField> {
    rt.with_state(|s| {
        let cat = crate::catalog::current(s);
        let tool = cat
            .tool(&i.tool)
            .filter(|t| t.plan().form.id == i.form_id)?;
        let refs = &cat.canister(&i.canister)?.refs;
        let args =
            tool_host_core::codec::decode_args_with(tool.plan(), &tool.types, &i.arg).ok()?;
        // Names are shown as the preview shows them (its text), never typed.
        Some(typed_fields(tool.plan(), &args, refs, &Default::default()))
    })
    .unwrap_or_default()
}

/// The typed value of a field, only when it says exactly what the preview the owner confirms
/// says (refs refreshed since, or a name beside the value, leave the preview's text).
fn value_of(shown: &str, typed: Option<&TypedField>) -> Value {
    match typed {
        Some(TypedField {
            shown: t,
            typed: Some(v),
            ..
        }) if t == shown => typed_value(v).unwrap_or_else(|| Value::text(shown)),
        _ => Value::text(shown),
    }
}

/// A typed value in the standard's units, or `None` when they cannot hold it exactly: an
/// amount above `nat64`, a time before 1970, past `nat64` seconds or in fractions of a second,
/// a duration in fractions of a second.
pub fn typed_value(t: &Typed) -> Option<Value> {
    Some(match t {
        Typed::TokenAmount {
            amount,
            decimals,
            symbol,
        } => Value::TokenAmount(TokenAmount {
            decimals: *decimals,
            amount: u64::try_from(amount).ok()?,
            symbol: symbol.clone(),
        }),
        Typed::Timestamp { ns } => {
            // Only a whole second: an approve's expiry shown a fraction early would be a
            // different allowance than the one sent.
            if ns.rem_euclid(NANOS as i128) != 0 {
                return None;
            }
            Value::TimestampSeconds(TimestampSeconds {
                amount: u64::try_from(ns.div_euclid(NANOS as i128)).ok()?,
            })
        }
        Typed::Duration { ns } => {
            if ns % NANOS as u128 != 0 {
                return None;
            }
            Value::DurationSeconds(DurationSeconds {
                amount: u64::try_from(ns / NANOS as u128).ok()?,
            })
        }
    })
}

/// The preview's arguments as labelled fields (`created_at_time` → `Created at time`).
fn fields_of(i: &Intent, typed: &[TypedField]) -> Vec<Field> {
    let preview: Json = serde_json::from_str(&i.preview_text()).unwrap_or(Json::Null);
    let mut out = vec![];
    let text = |label: &str, text: String| Field {
        label: label.into(),
        value: Value::text(&text),
        text,
    };
    match &preview["arguments"] {
        Json::Object(args) => {
            for (k, v) in args {
                if v.is_null() {
                    continue;
                }
                let shown = plain(v);
                let shown_label = label(k);
                let shown_label = if OWN_LABELS
                    .iter()
                    .any(|l| l.eq_ignore_ascii_case(&shown_label))
                {
                    format!("Argument {k}")
                } else {
                    shown_label
                };
                out.push(Field {
                    label: shown_label,
                    value: value_of(&shown, typed.iter().find(|t| &t.name == k)),
                    text: shown,
                });
            }
        }
        Json::Null => {}
        other => out.push(text("Arguments", plain(other))),
    }
    out.push(text(
        "Canister",
        match preview["canister_label"].as_str() {
            Some(l) => format!("{l} ({})", i.canister),
            None => i.canister.to_text(),
        },
    ));
    out.push(text("Intent", i.id.to_string()));
    out.push(text(
        "Digest",
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

fn plain(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}
