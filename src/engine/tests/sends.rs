//! Concurrency and journaling: the in-flight mark and the log length are written before the
//! await; a second confirm while one call is in flight never sends twice.

mod common;
use common::*;
use serde_json::json;
use std::rc::Rc;
use tool_host_engine::model::Status;

#[test]
fn two_confirms_interleaved_send_once() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.yield_calls.set(true);
    let a = tool_host_engine::send::confirm(
        &*w,
        owner(),
        tool_host_engine::types::ConfirmArgs {
            intent_id: id,
            digest: serde_bytes::ByteBuf::from(d.clone()),
        },
    );
    let b = tool_host_engine::send::confirm(
        &*w,
        owner(),
        tool_host_engine::types::ConfirmArgs {
            intent_id: id,
            digest: serde_bytes::ByteBuf::from(d.clone()),
        },
    );
    let (ra, rb) = futures::executor::block_on(futures::future::join(a, b));
    assert_eq!(ra.unwrap().outcome.as_deref(), Some("success"));
    assert_eq!(rb.unwrap_err().code, "IN_FLIGHT");
    assert_eq!(w.sends("icrc1_transfer"), 1);
    assert_eq!(w.ledger.borrow().blocks.len(), 1);
}

#[test]
fn an_agents_commit_while_in_flight_reports_it_and_sends_nothing() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.yield_calls.set(true);
    let a = tool_host_engine::send::confirm(
        &*w,
        owner(),
        tool_host_engine::types::ConfirmArgs {
            intent_id: id,
            digest: serde_bytes::ByteBuf::from(d.clone()),
        },
    );
    let b = tool_host_engine::tools::call_tool(
        &*w,
        agent(),
        tool_host_engine::types::CallToolArgs {
            name: "commit".into(),
            input: json!({ "preview_id": id.to_string() }).to_string(),
            owner: Some(owner()),
        },
    );
    let (ra, rb) = futures::executor::block_on(futures::future::join(a, b));
    assert!(ra.is_ok());
    assert_eq!(structured(&rb.unwrap())["status"], json!("in_flight"));
    assert_eq!(w.sends("icrc1_transfer"), 1);
}

#[test]
fn the_in_flight_mark_and_the_log_length_are_written_before_the_await() {
    let w = World::new().setup();
    // Two earlier blocks: the journaled log length is 2.
    let (a, da) = w.prepare("1");
    w.confirm(owner(), a, &da).unwrap();
    let (b, db) = w.prepare("2");
    w.confirm(owner(), b, &db).unwrap();
    let (id, d) = w.prepare("3");
    let seen = Rc::new(std::cell::RefCell::new(None));
    let seen2 = seen.clone();
    *w.during_call.borrow_mut() = Some(Box::new(move |s: &tool_host_engine::state::State<_>| {
        let i = s.intents.get(&id).unwrap();
        if i.id == id {
            *seen2.borrow_mut() = Some((
                i.status,
                s.journaled_log_length(id),
                s.in_flight.contains_key(&id),
            ));
        }
    }));
    w.confirm(owner(), id, &d).unwrap();
    assert_eq!(*seen.borrow(), Some((Status::InFlight, Some(2), true)));
    assert!(
        !w.state.borrow().in_flight.contains_key(&id),
        "cleared after the reply"
    );
    // The journal read happened before the send: get_blocks, then the transfer.
    let calls: Vec<String> = w.calls.borrow().iter().map(|(_, m)| m.clone()).collect();
    let n = calls.len();
    assert_eq!(
        &calls[n - 2..],
        &["icrc3_get_blocks".to_string(), "icrc1_transfer".to_string()]
    );
}

#[test]
fn a_failed_journal_read_sends_nothing() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.ledger.borrow_mut().blocks_down = true;
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("not_executed"));
    assert_eq!(w.sends("icrc1_transfer"), 0);
    assert_eq!(w.intent(id).status, Status::Open);
}

#[test]
fn a_target_without_icrc3_is_sent_without_a_journal() {
    let w = World::new();
    w.ledger.borrow_mut().icrc3 = false;
    let w = w.setup();
    let (id, d) = w.prepare("1");
    w.confirm(owner(), id, &d).unwrap();
    assert_eq!(w.sends("icrc3_get_blocks"), 0);
    assert_eq!(w.intent(id).log_length, None);
}

#[test]
fn an_in_flight_send_across_an_upgrade_becomes_unknown_and_is_reconciled() {
    let w = World::new().setup();
    let (id, _) = w.prepare("1");
    // Mark it in flight as a send would, then upgrade before its reply.
    {
        let mut s = w.state.borrow_mut();
        let mut i = s.intents.get(&id).unwrap();
        i.before_send = Some(Status::Open);
        i.status = Status::InFlight;
        i.log_length = Some(0);
        i.attempts.push(tool_host_engine::model::Attempt {
            at: T0,
            digest: i.digest,
            result: tool_host_engine::model::AttemptResult::Pending,
        });
        s.put_intent(i);
    }
    // The call executed at the ledger (its block is there) but the reply never came back.
    let memo = w.intent(id).memo.clone();
    w.ledger.borrow_mut().blocks.push(Block {
        memo,
        ts: w.intent(id).stamp_ns,
        amount: 100_000_000,
    });
    w.upgrade();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Unknown);
    assert_eq!(i.outcome.as_deref(), Some("unknown"));
    w.advance(11 * SEC);
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 0"));
}
