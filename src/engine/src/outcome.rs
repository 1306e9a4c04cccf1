//! The outcome table (reference "Outcomes"): how one send's result moves an intent. Pure: the
//! engine applies it after the await; tests run every row on it and through the engine.

use crate::model::{AttemptResult, Intent, Status};
use tool_host_core::form::OutcomeClass;

/// What one send came back with.
#[derive(Clone, Debug, PartialEq)]
pub enum SendResult {
    /// A reply that decoded, with its class; `ledger_time` when it is `CreatedInFuture`.
    Class {
        class: OutcomeClass,
        path: Vec<String>,
        reply_json: String,
        ledger_time: Option<u64>,
    },
    Rejected {
        code: u32,
        message: String,
    },
    Undecodable(String),
    /// Nothing was sent (`call_perform` failed, or the journal read before the send failed).
    NotSent(String),
}

/// What the engine must do beyond the new status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Follow {
    Nothing,
    /// retry_new: stamp the intent again (capped by `ledger_time` for CreatedInFuture) and make a new preview.
    Restamp {
        cap: Option<u64>,
    },
    /// Reconcile on the timer.
    Reconcile,
}

/// Reject codes 1 to 3 mean the call was not executed, unless the target is the management canister.
pub fn not_executed(code: u32, management: bool) -> bool {
    (1..=3).contains(&code) && !management
}

/// Applies a send's result to an in-flight intent. Returns the outcome word and what follows.
pub fn apply(intent: &mut Intent, result: &SendResult, management: bool) -> (&'static str, Follow) {
    let before = intent.before_send.take().unwrap_or(Status::Open);
    if let Some(last) = intent.attempts.last_mut() {
        last.result = match result {
            SendResult::Class { class, path, .. } => AttemptResult::Replied {
                class: class.as_str().into(),
                path: path.clone(),
            },
            SendResult::Rejected { code, message } => AttemptResult::Rejected {
                code: *code,
                message: message.clone(),
            },
            SendResult::Undecodable(m) => AttemptResult::Undecodable { message: m.clone() },
            SendResult::NotSent(m) => AttemptResult::NotSent { message: m.clone() },
        };
    }
    if let SendResult::Class { reply_json, .. } = result {
        intent.reply_json = Some(reply_json.clone());
    }
    let (word, follow) = match result {
        SendResult::NotSent(_) => {
            intent.status = before;
            ("not_executed", Follow::Nothing)
        }
        SendResult::Rejected { code, .. } if not_executed(*code, management) => {
            intent.status = before;
            ("not_executed", Follow::Nothing)
        }
        SendResult::Rejected { code, .. } => unknown(intent, Some(*code)),
        SendResult::Undecodable(_) => unknown(intent, None),
        SendResult::Class {
            class, ledger_time, ..
        } => match classed(intent, *class) {
            (w, Follow::Restamp { .. }) => (w, Follow::Restamp { cap: *ledger_time }),
            other => other,
        },
    };
    intent.outcome = Some(word.to_string());
    (word, follow)
}

fn unknown(intent: &mut Intent, code: Option<u32>) -> (&'static str, Follow) {
    intent.had_unknown = true;
    if !intent.has_stamp() {
        // Without a stamp there is nothing to match and nothing safe to send again: held.
        intent.status = Status::Reconcile;
        intent.held_for_good = true;
        intent.finding = Some("unreadable: the method has no idempotency stamp to match".into());
        return ("reconcile", Follow::Nothing);
    }
    if matches!(code, Some(4) | Some(5)) {
        intent.rejects_4_5 = intent.rejects_4_5.saturating_add(1);
    }
    if intent.rejects_4_5 >= 3 {
        intent.status = Status::Reconcile;
        intent.finding = Some("a third reject with code 4 or 5".into());
        return ("reconcile", Follow::Reconcile);
    }
    intent.status = Status::Unknown;
    ("unknown", Follow::Reconcile)
}

fn classed(intent: &mut Intent, class: OutcomeClass) -> (&'static str, Follow) {
    match class {
        OutcomeClass::Success | OutcomeClass::AlreadyDone => {
            intent.status = Status::Done;
            (class.as_str(), Follow::Nothing)
        }
        OutcomeClass::RetrySame => {
            intent.retry_same = intent.retry_same.saturating_add(1);
            if intent.retry_same >= 3 {
                intent.finding = Some("retries_spent".into());
                if intent.had_unknown {
                    intent.status = Status::Reconcile;
                    return ("reconcile", Follow::Reconcile);
                }
                intent.status = Status::Settled;
                return ("fail", Follow::Nothing);
            }
            intent.status = if intent.had_unknown {
                Status::Unknown
            } else {
                Status::Open
            };
            ("retry_same", Follow::Nothing)
        }
        // After an unknown outcome, any answer but success, already_done or retry_same is held.
        _ if intent.had_unknown => {
            intent.status = Status::Reconcile;
            intent.finding = Some(format!(
                "answered {} after an unknown outcome",
                class.as_str()
            ));
            ("reconcile", Follow::Reconcile)
        }
        OutcomeClass::RetryNew => {
            intent.status = Status::Open;
            ("retry_new", Follow::Restamp { cap: None })
        }
        OutcomeClass::FixInput | OutcomeClass::Fail => {
            intent.status = Status::Settled;
            (class.as_str(), Follow::Nothing)
        }
    }
}
