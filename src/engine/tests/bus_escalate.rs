//! `escalate`: the request is recorded in the owner's inbox before any call; `delivered` is
//! true only when the handler the owner configured answered `Ok` (a reject, `Err`, or an answer
//! of another shape: false, with the reason kept); the inbox is the owner's alone, bounded.

mod common;
use candid::Principal;
use common::*;
use serde_json::json;
use tool_host_engine::bus::builtins::{get_inbox, set_escalation_handler, MAX_INBOX_PER_OWNER};
use tool_host_engine::runtime::CallOutcome;
use tool_host_engine::types::*;

fn world() -> std::rc::Rc<World> {
    let w = World::new().setup();
    w.builtins(&["escalate", "finish"], &[]).unwrap();
    w
}

fn escalate(w: &World, caller: Principal, owner: Option<Principal>) -> serde_json::Value {
    let r = w
        .tool(
            caller,
            "escalate",
            json!({ "reason": "the amount is over what I may send", "summary": "10 TKA to bob" }),
            owner,
        )
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    let v = structured(&r);
    assert!(v["delivered"].as_bool().is_some(), "{v}");
    v
}

fn handler_calls(w: &World) -> usize {
    w.calls
        .borrow()
        .iter()
        .filter(|(c, m)| *c == handler_id() && m == "tool_host_escalation")
        .count()
}

#[test]
fn without_a_handler_it_is_recorded_and_not_delivered() {
    let w = world();
    let v = escalate(&w, agent(), Some(owner()));
    assert_eq!(v["delivered"], false);
    let inbox = get_inbox(&*w, owner(), None).unwrap();
    assert_eq!(inbox.len(), 1);
    let e = &inbox[0];
    assert_eq!(v["inbox_id"], e.id.to_string());
    assert_eq!(
        (e.from, e.delivered, e.delivery.as_str()),
        (agent(), false, "no_handler")
    );
    assert_eq!(e.reason, "the amount is over what I may send");
    assert_eq!(e.summary.as_deref(), Some("10 TKA to bob"));
    assert_eq!(handler_calls(&w), 0);
}

#[test]
fn delivered_is_true_only_when_the_handler_answers_ok() {
    let w = world();
    set_escalation_handler(&*w, owner(), Some(handler_id())).unwrap();
    let v = escalate(&w, agent(), Some(owner()));
    assert_eq!(v["delivered"], true);
    assert_eq!(handler_calls(&w), 1);
    let e = &get_inbox(&*w, owner(), None).unwrap()[0];
    assert_eq!(
        (e.delivered, e.delivery.as_str(), e.handler),
        (true, "delivered", Some(handler_id()))
    );
}

#[test]
fn an_err_answer_is_not_delivered_and_its_reason_is_kept() {
    let w = world();
    set_escalation_handler(&*w, owner(), Some(handler_id())).unwrap();
    w.handler_replies
        .borrow_mut()
        .push_back(CallOutcome::Replied(
            candid::encode_one(EscalationReply::Err("nobody on call".into())).unwrap(),
        ));
    let v = escalate(&w, owner(), None);
    assert_eq!(v["delivered"], false);
    let e = &get_inbox(&*w, owner(), None).unwrap()[0];
    assert!(!e.delivered);
    assert_eq!(
        e.delivery,
        "failed: the handler answered Err: nobody on call"
    );
}

#[test]
fn a_reject_is_not_delivered_and_its_reason_is_kept() {
    let w = world();
    set_escalation_handler(&*w, owner(), Some(handler_id())).unwrap();
    w.handler_replies
        .borrow_mut()
        .push_back(CallOutcome::Rejected {
            code: 5,
            message: "trapped".into(),
        });
    assert_eq!(escalate(&w, owner(), None)["delivered"], false);
    let e = &get_inbox(&*w, owner(), None).unwrap()[0];
    assert_eq!(
        e.delivery,
        "failed: the handler rejected the call (5): trapped"
    );
}

#[test]
fn an_undecodable_answer_is_not_delivered() {
    let w = world();
    set_escalation_handler(&*w, owner(), Some(handler_id())).unwrap();
    // A bare `true`, and an `Ok` of another variant type, are not the handler's answer.
    w.handler_replies
        .borrow_mut()
        .push_back(CallOutcome::Replied(candid::encode_one(true).unwrap()));
    w.handler_replies
        .borrow_mut()
        .push_back(CallOutcome::Replied(b"DIDL\x00\x01\x71\x03abc".to_vec()));
    assert_eq!(escalate(&w, owner(), None)["delivered"], false);
    assert_eq!(escalate(&w, owner(), None)["delivered"], false);
    for e in get_inbox(&*w, owner(), None).unwrap() {
        assert!(
            e.delivery
                .starts_with("failed: the handler's answer is not variant"),
            "{}",
            e.delivery
        );
    }
}

#[test]
fn the_entry_is_written_before_the_handlers_await() {
    let w = world();
    set_escalation_handler(&*w, owner(), Some(handler_id())).unwrap();
    w.yield_handler.set(true);
    {
        let mut call = Box::pin(tool_host_engine::tools::call_tool(
            &*w,
            owner(),
            CallToolArgs {
                name: "escalate".into(),
                input: json!({ "reason": "stuck" }).to_string(),
                owner: None,
                turn: None,
            },
        ));
        assert!(poll_once(call.as_mut()).is_pending());
    }
    w.upgrade();
    let inbox = get_inbox(&*w, owner(), None).unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!(
        (inbox[0].delivered, inbox[0].delivery.as_str()),
        (false, "pending")
    );
}

#[test]
fn an_escalation_in_a_turn_names_the_turn() {
    let w = world();
    let t = w.begin(agent(), "send a lot", None, Some(owner())).unwrap();
    assert!(
        t.offered.contains(&"escalate".to_string()),
        "pinned by default: {:?}",
        t.offered
    );
    w.turn_tool(
        agent(),
        t.turn_id,
        "escalate",
        json!({ "reason": "too much" }),
        Some(owner()),
    )
    .unwrap();
    let e = &get_inbox(&*w, owner(), None).unwrap()[0];
    assert_eq!(e.turn, Some(t.turn_id));
    let step = &w.get_turn(owner(), t.turn_id, None).unwrap().steps[0];
    assert_eq!(
        (step.tool.as_str(), step.outcome.as_str()),
        ("escalate", "ok")
    );
}

#[test]
fn only_the_owner_reads_its_inbox() {
    let w = world();
    escalate(&w, agent(), Some(owner()));
    for (caller, as_owner) in [(agent(), Some(owner())), (stranger(), Some(owner()))] {
        let e = get_inbox(&*w, caller, as_owner).unwrap_err();
        assert_eq!(e.code, "NOT_OWNER");
    }
    assert!(
        get_inbox(&*w, agent(), None).unwrap().is_empty(),
        "the agent's own is empty"
    );
    assert_eq!(
        get_inbox(&*w, Principal::anonymous(), None)
            .unwrap_err()
            .code,
        "ANONYMOUS"
    );
}

#[test]
fn only_the_owner_sets_its_handler() {
    let w = world();
    // An agent's call sets the agent's own handler, never its owner's.
    set_escalation_handler(&*w, agent(), Some(handler_id())).unwrap();
    assert_eq!(escalate(&w, agent(), Some(owner()))["delivered"], false);
    assert_eq!(handler_calls(&w), 0);
    assert_eq!(
        set_escalation_handler(&*w, Principal::anonymous(), Some(handler_id()))
            .unwrap_err()
            .code,
        "ANONYMOUS"
    );
    set_escalation_handler(&*w, owner(), Some(handler_id())).unwrap();
    set_escalation_handler(&*w, owner(), None).unwrap();
    assert_eq!(escalate(&w, owner(), None)["delivered"], false, "removed");
}

#[test]
fn at_the_inbox_bound_the_oldest_delivered_entry_makes_room_else_it_is_refused() {
    let w = world();
    set_escalation_handler(&*w, owner(), Some(handler_id())).unwrap();
    // The first is delivered, the rest are not.
    w.handler_replies
        .borrow_mut()
        .push_back(CallOutcome::Replied(
            candid::encode_one(EscalationReply::Ok).unwrap(),
        ));
    for _ in 1..MAX_INBOX_PER_OWNER {
        w.handler_replies
            .borrow_mut()
            .push_back(CallOutcome::Rejected {
                code: 2,
                message: "busy".into(),
            });
    }
    for _ in 0..MAX_INBOX_PER_OWNER {
        escalate(&w, owner(), None);
    }
    let first = get_inbox(&*w, owner(), None).unwrap()[0].clone();
    assert!(first.delivered);
    w.handler_replies
        .borrow_mut()
        .push_back(CallOutcome::Rejected {
            code: 2,
            message: "busy".into(),
        });
    let newest = escalate(&w, owner(), None);
    let inbox = get_inbox(&*w, owner(), None).unwrap();
    assert_eq!(inbox.len(), MAX_INBOX_PER_OWNER);
    assert!(
        inbox.iter().all(|e| e.id != first.id),
        "the delivered one made room"
    );
    assert_eq!(
        inbox.last().unwrap().id.to_string(),
        newest["inbox_id"].as_str().unwrap()
    );
    // Now every entry reached nobody: the next is refused, saying so, and nothing is dropped.
    let e = w
        .tool(owner(), "escalate", json!({ "reason": "again" }), None)
        .unwrap_err();
    assert_eq!(e.code, "LIMIT");
    assert!(
        e.message.contains("NOT recorded and nobody was reached"),
        "{}",
        e.message
    );
    assert_eq!(get_inbox(&*w, owner(), None).unwrap(), inbox);
    // Past the retention the old entries leave, and escalating works again.
    let retention = w.state.borrow().limits().retention_seconds * SEC;
    w.advance(retention);
    escalate(&w, owner(), None);
    assert_eq!(get_inbox(&*w, owner(), None).unwrap().len(), 1);
}

#[test]
fn an_escalation_its_schema_refuses_is_refused_and_not_recorded() {
    let w = world();
    for input in [
        // One character over the reader's (and the schema's) 1 024.
        json!({ "reason": "x".repeat(1025) }),
        json!({ "reason": "   " }),
        json!({ "summary": "no reason" }),
    ] {
        let e = w.tool(owner(), "escalate", input, None).unwrap_err();
        assert_eq!(e.code, "INVALID_INPUT", "{e:?}");
    }
    assert!(get_inbox(&*w, owner(), None).unwrap().is_empty());
}
