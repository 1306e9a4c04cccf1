//! The reference's outcome table, one test per row, run through the engine against a scripted
//! ledger: what each send result does to the intent and what the next commit does.

mod common;
use candid::IDLValue;
use common::*;
use serde_json::json;
use tool_host_engine::model::Status;

fn outcome(r: &tool_host_engine::types::ToolResult) -> String {
    r.outcome.clone().unwrap_or_default()
}

#[test]
fn success_settles_done_and_a_later_commit_answers_already_done_without_sending() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1.5 TKA");
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(outcome(&r), "success");
    assert!(!r.is_error);
    assert_eq!(w.intent(id).status, Status::Done);
    assert_eq!(w.ledger.borrow().blocks().len(), 1);
    assert_eq!(w.ledger.borrow().blocks()[0].amount, 150_000_000);
    let again = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(outcome(&again), "already_done");
    let commit = w
        .tool(
            agent(),
            "commit",
            json!({ "preview_id": id.to_string() }),
            Some(owner()),
        )
        .unwrap();
    assert_eq!(outcome(&commit), "already_done");
    assert_eq!(w.sends("icrc1_transfer"), 1, "nothing sent again");
}

#[test]
fn already_done_settles_done() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(err("Duplicate", record(&[("duplicate_of", nat(3))])));
    assert_eq!(
        outcome(&w.confirm(owner(), id, &d).unwrap()),
        "already_done"
    );
    assert_eq!(w.intent(id).status, Status::Done);
}

#[test]
fn retry_same_hands_the_intent_back_unchanged() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(err("TemporarilyUnavailable", IDLValue::Null));
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(outcome(&r), "retry_same");
    let i = w.intent(id);
    assert_eq!(i.status, Status::Open);
    assert_eq!(i.digest.to_vec(), d, "the same bytes");
    // Every send needs its own confirmation: the next confirm sends the same bytes.
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "success");
    assert_eq!(w.sends("icrc1_transfer"), 2);
}

#[test]
fn retry_same_the_third_one_stops_the_intent_with_fail() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    for _ in 0..3 {
        w.script(err("TemporarilyUnavailable", IDLValue::Null));
    }
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "retry_same");
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "retry_same");
    let third = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(outcome(&third), "fail");
    let i = w.intent(id);
    assert_eq!(i.status, Status::Settled);
    assert_eq!(i.finding.as_deref(), Some("retries_spent"));
}

#[test]
fn retry_same_the_third_one_after_an_unknown_outcome_is_held_for_reconcile() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    for _ in 0..3 {
        w.script(err("TemporarilyUnavailable", IDLValue::Null));
    }
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "retry_same");
    assert_eq!(w.intent(id).status, Status::Unknown);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "retry_same");
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "reconcile");
    assert_eq!(w.intent(id).status, Status::Reconcile);
}

#[test]
fn retry_new_retires_the_preview_and_stamps_a_new_one() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    let old = w.intent(id);
    w.advance(5 * SEC);
    w.script(err("TooOld", IDLValue::Null));
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(outcome(&r), "retry_new");
    let i = w.intent(id);
    assert_eq!(i.status, Status::Open);
    assert_eq!(i.generation, 1);
    assert_eq!(i.stamp_ns, Some(T0 + 5 * SEC), "a new stamp from the clock");
    assert_ne!(i.memo, old.memo, "a new memo");
    assert_ne!(i.digest, old.digest);
    assert_eq!(
        structured(&r)["digest"],
        json!(hex::encode(i.digest)),
        "the new preview is handed back"
    );
    // The retired preview's digest no longer confirms anything.
    let stale = w.confirm(owner(), id, &d).unwrap_err();
    assert_eq!(stale.code, "DIGEST_MISMATCH");
    assert_eq!(
        outcome(&w.confirm(owner(), id, &i.digest).unwrap()),
        "success"
    );
}

#[test]
fn retry_new_a_created_in_future_stamp_is_capped_by_its_ledger_time() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.advance(120 * SEC);
    let ledger_time = T0 + 30 * SEC;
    w.script(err(
        "CreatedInFuture",
        record(&[("ledger_time", IDLValue::Nat64(ledger_time))]),
    ));
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "retry_new");
    assert_eq!(
        w.intent(id).stamp_ns,
        Some(ledger_time),
        "min(now, ledger_time)"
    );
    // TooOld is not capped: only CreatedInFuture, matched by its name. The clock has not
    // moved since this intent was stamped, so its new stamp is just above the old one (a
    // stamp is never handed out twice for the same arguments).
    let (id2, d2) = w.prepare("2");
    assert_eq!(w.intent(id2).stamp_ns, Some(T0 + 120 * SEC));
    w.script(err("TooOld", IDLValue::Null));
    w.confirm(owner(), id2, &d2).unwrap();
    assert_eq!(w.intent(id2).stamp_ns, Some(T0 + 120 * SEC + 1));
}

#[test]
fn fix_input_settles() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(err("InsufficientFunds", record(&[("balance", nat(0))])));
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(outcome(&r), "fix_input");
    assert!(r.is_error);
    assert_eq!(w.intent(id).status, Status::Settled);
    assert_eq!(
        structured(&r)["reply"],
        json!({ "Err": { "InsufficientFunds": { "balance": "0 TKA" } } })
    );
}

#[test]
fn fail_settles() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(err(
        "GenericError",
        record(&[
            ("error_code", nat(1)),
            ("message", IDLValue::Text("no".into())),
        ]),
    ));
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "fail");
    assert_eq!(w.intent(id).status, Status::Settled);
    // Preparing the same inputs again is a new intent.
    let (id2, _) = w.prepare("1");
    assert_ne!(id, id2);
}

#[test]
fn not_executed_reject_codes_1_to_3_leave_the_intent_unchanged() {
    for code in 1..=3 {
        let w = World::new().setup();
        let (id, d) = w.prepare("1");
        w.script(Script::Reject(code));
        assert_eq!(
            outcome(&w.confirm(owner(), id, &d).unwrap()),
            "not_executed",
            "code {code}"
        );
        let i = w.intent(id);
        assert_eq!(i.status, Status::Open);
        assert!(!i.had_unknown);
        assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "success");
    }
}

#[test]
fn not_executed_a_call_that_could_not_be_made() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::NotSent);
    assert_eq!(
        outcome(&w.confirm(owner(), id, &d).unwrap()),
        "not_executed"
    );
    assert_eq!(w.intent(id).status, Status::Open);
}

#[test]
fn unknown_reject_codes_4_5_6_and_other_codes() {
    for code in [4, 5, 6, 7] {
        let w = World::new().setup();
        let (id, d) = w.prepare("1");
        w.script(Script::Reject(code));
        assert_eq!(
            outcome(&w.confirm(owner(), id, &d).unwrap()),
            "unknown",
            "code {code}"
        );
        assert_eq!(w.intent(id).status, Status::Unknown);
    }
}

#[test]
fn unknown_a_reply_that_does_not_decode() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Garbage);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    assert!(matches!(
        w.intent(id).attempts[0].result,
        tool_host_engine::model::AttemptResult::Undecodable { .. }
    ));
}

#[test]
fn unknown_commit_again_sends_the_same_bytes() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    // The same bytes again: the ledger deduplicates them (scripted here as Duplicate).
    w.script(err("Duplicate", record(&[("duplicate_of", nat(0))])));
    assert_eq!(
        outcome(&w.confirm(owner(), id, &d).unwrap()),
        "already_done"
    );
    let i = w.intent(id);
    assert_eq!(i.attempts.len(), 2);
    assert_eq!(i.attempts[0].digest, i.attempts[1].digest);
}

#[test]
fn unknown_preparing_again_returns_the_same_preview_with_outcome_unknown() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    let r = w.tool(agent(), "prepare_icrc1_transfer", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "1" }), Some(owner())).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("unknown"));
    assert_eq!(structured(&r)["intent_id"], json!(id.to_string()));
    assert_eq!(structured(&r)["digest"], json!(hex::encode(&d)));
}

#[test]
fn reconcile_after_an_unknown_outcome_any_other_answer_holds_the_intent() {
    for script in [
        err("InsufficientFunds", record(&[("balance", nat(0))])),
        err("TooOld", IDLValue::Null),
        err(
            "GenericError",
            record(&[
                ("error_code", nat(1)),
                ("message", IDLValue::Text("x".into())),
            ]),
        ),
    ] {
        let w = World::new().setup();
        let (id, d) = w.prepare("1");
        w.script(Script::Reject(6));
        w.confirm(owner(), id, &d).unwrap();
        w.script(script);
        assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "reconcile");
        assert_eq!(w.intent(id).status, Status::Reconcile);
        let held = w.confirm(owner(), id, &d).unwrap_err();
        assert_eq!(held.code, "HELD", "never sent again while held");
    }
}

#[test]
fn reconcile_after_a_third_reject_4_or_5() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    for code in [4, 5, 4] {
        w.script(Script::Reject(code));
    }
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "reconcile");
    assert_eq!(w.intent(id).status, Status::Reconcile);
}

fn stampless_world() -> std::rc::Rc<World> {
    let w = World::new();
    // icrc1_transfer without its idempotency tag: an update without a stamp.
    let mut form: serde_json::Value = serde_json::from_str(tool_host_core::packs::ICRC1).unwrap();
    form["methods"]["icrc1_transfer"]
        .as_object_mut()
        .unwrap()
        .remove("idempotency");
    let outcome = form["methods"]["icrc1_transfer"]["outcome"]
        .as_object_mut()
        .unwrap();
    outcome.remove("Err.TooOld");
    outcome.remove("Err.CreatedInFuture");
    tool_host_engine::registry::register_form(
        &*w,
        controller(),
        tool_host_engine::types::RegisterFormArgs {
            id: "icrc1".into(),
            json: form.to_string(),
        },
    )
    .unwrap();
    futures::executor::block_on(tool_host_engine::registry::register_canister(
        &*w,
        controller(),
        tool_host_engine::types::RegisterCanisterArgs {
            id: ledger_id(),
            label: None,
            forms: vec!["icrc1".into()],
            owner: None,
        },
    ))
    .unwrap();
    tool_host_engine::owners::authorize_agent(&*w, owner(), agent()).unwrap();
    w
}

#[test]
fn unknown_without_a_stamp_is_held_and_never_sent_again() {
    let w = stampless_world();
    let (id, d) = w.prepare("1");
    assert_eq!(w.intent(id).stamp_ns, None);
    w.script(Script::Reject(6));
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(outcome(&r), "reconcile");
    let i = w.intent(id);
    assert_eq!(i.status, Status::Reconcile);
    assert!(i.finding.unwrap().starts_with("unreadable"));
    assert_eq!(w.confirm(owner(), id, &d).unwrap_err().code, "HELD");
    let again = w.tool(agent(), "prepare_icrc1_transfer", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "1" }), Some(owner())).unwrap();
    assert_eq!(
        again.outcome.as_deref(),
        Some("unknown"),
        "preparing it again sends nothing and answers unknown, as the reference says of any intent that had one"
    );
    assert_eq!(structured(&again)["status"], json!("reconcile"));
    w.advance(3600 * SEC);
    w.run_timers();
    assert_eq!(
        w.intent(id).status,
        Status::Reconcile,
        "no reconcile hook without a stamp"
    );
    assert_eq!(w.sends("icrc1_transfer"), 1);
}

#[test]
fn declined_before_any_send_settles_and_its_stamp_is_never_handed_out_again() {
    let w = World::new().setup();
    let (id, _) = w.prepare("1");
    let stamp = w.intent(id).stamp_ns;
    let r = tool_host_engine::send::decline(&*w, owner(), id, None).unwrap();
    assert_eq!(outcome(&r), "declined");
    assert_eq!(w.intent(id).status, Status::Settled);
    w.advance(SEC);
    let (id2, _) = w.prepare("1");
    assert_ne!(id2, id);
    assert_ne!(w.intent(id2).stamp_ns, stamp);
    assert_eq!(w.sends("icrc1_transfer"), 0);
}

#[test]
fn declined_after_a_send_leaves_the_intent_unchanged() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(2));
    w.confirm(owner(), id, &d).unwrap();
    let r = tool_host_engine::send::decline(&*w, owner(), id, None).unwrap();
    assert_eq!(outcome(&r), "declined");
    assert_eq!(w.intent(id).status, Status::Open);
    assert!(structured(&r).get("earlier_outcome").is_none());
}

#[test]
fn declined_after_an_unknown_outcome_says_so() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    w.confirm(owner(), id, &d).unwrap();
    let r = tool_host_engine::send::decline(&*w, owner(), id, None).unwrap();
    assert_eq!(structured(&r)["earlier_outcome"], json!("unknown"));
    assert_eq!(w.intent(id).status, Status::Unknown);
}

/// A resend after an unknown outcome that is not executed itself (a reject 1 to 3, or no call)
/// answers `not_executed` for that send, and says an earlier send may have executed: the
/// intent stays unknown, and reconciliation finds the original.
#[test]
fn a_resend_not_executed_after_an_unknown_outcome_says_the_earlier_may_have() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    assert_eq!(outcome(&w.confirm(owner(), id, &d).unwrap()), "unknown");
    w.script(Script::Reject(2));
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(outcome(&r), "not_executed");
    assert_eq!(structured(&r)["earlier_outcome"], json!("unknown"));
    assert_eq!(structured(&r)["status"], json!("unknown"));
    assert_eq!(w.intent(id).status, Status::Unknown);
    for _ in 0..5 {
        w.advance(60 * SEC);
        w.run_timers();
    }
    assert_eq!(w.intent(id).status, Status::Done);
    assert_eq!(w.sends("icrc1_transfer"), 2);
}
