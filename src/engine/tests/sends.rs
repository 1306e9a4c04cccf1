//! Concurrency and journaling: the in-flight mark and the log length are written before the
//! await; a second confirm while one call is in flight never sends twice.

mod common;
use common::*;
use serde_json::json;
use std::future::Future;
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
    assert_eq!(w.ledger.borrow().blocks().len(), 1);
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
            turn: None,
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
    assert_eq!(w.intent(id).attempts[0].log_length, None);
}

#[test]
fn an_in_flight_send_across_an_upgrade_becomes_unknown_and_is_reconciled() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    // The call executes at the ledger, and the tool host is upgraded (forced) before its reply.
    let w2 = w.clone();
    *w.during_call.borrow_mut() = Some(Box::new(move |_| {
        let arg = w2.intent(id).arg.clone();
        w2.ledger
            .borrow_mut()
            .chain
            .execute(host_id(), "icrc1_transfer", &arg, T0);
    }));
    w.yield_calls.set(true);
    let mut send = Box::pin(tool_host_engine::send::confirm(
        &*w,
        owner(),
        tool_host_engine::types::ConfirmArgs {
            intent_id: id,
            digest: serde_bytes::ByteBuf::from(d),
        },
    ));
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    assert!(
        send.as_mut().poll(&mut cx).is_pending(),
        "the send awaits its reply"
    );
    // The upgrade drops the heap, the send's future with it.
    drop(send);
    *w.during_call.borrow_mut() = None;
    assert_eq!(
        tool_host_engine::lifecycle::check_upgrade(&*w, false).unwrap_err(),
        "1 send(s) in flight: upgrade a stopped canister (stop, install, start), or pass `force = opt true` to make their outcomes unknown and reconcile them"
    );
    w.upgrade();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Unknown);
    assert_eq!(i.outcome.as_deref(), Some("unknown"));
    w.advance(11 * SEC);
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 0"));
    assert_eq!(w.ledger.borrow().blocks().len(), 1, "sent once");
}

/// Version 1's intent with two sends (it kept one log length, the latest's) and its in-flight
/// journal (memory 10) are read by this version: the upgrade needs `force` while the old
/// journal holds a send, carries it over, and reconciliation scans from 0 (the earlier send's
/// journal is not known), so it finds the original before the latest journaled length.
#[test]
fn an_upgrade_reads_version_1_intents_and_their_in_flight_journal() {
    use ic_stable_structures::memory_manager::MemoryManager;
    use ic_stable_structures::StableBTreeMap;
    use tool_host_engine::model::{v1, AttemptResult};
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id, &d).unwrap();
    let i = w.intent(id);
    let old = v1::Intent {
        id: i.id,
        owner: i.owner,
        preparer: i.preparer,
        canister: i.canister,
        form_id: i.form_id.clone(),
        tool: i.tool.clone(),
        method: i.method.clone(),
        input_json: i.input_json.clone(),
        identity: i.identity,
        arg: i.arg.clone(),
        digest: i.digest,
        stamp_ns: i.stamp_ns,
        memo: i.memo.clone(),
        // As the released version wrote it: whole.
        preview_json: i.preview_text(),
        summary: i.summary.clone(),
        // A second send in flight, journaled past the original (block 0).
        status: Status::InFlight,
        outcome: i.outcome.clone(),
        finding: None,
        reply_json: None,
        created_at: i.created_at,
        updated_at: i.updated_at,
        expires_at: i.expires_at,
        settled_at: None,
        attempts: vec![
            v1::Attempt {
                at: T0,
                digest: i.digest,
                result: AttemptResult::Rejected {
                    code: 6,
                    message: "lost".into(),
                },
            },
            v1::Attempt {
                at: T0,
                digest: i.digest,
                result: AttemptResult::Pending,
            },
        ],
        generation: 0,
        retry_same: 0,
        rejects_4_5: 0,
        had_unknown: true,
        log_length: Some(1),
        confirm_requested_at: None,
        reconcile_tries: 0,
        before_send: Some(Status::Unknown),
    };
    {
        let mm = MemoryManager::init(w.memory.clone());
        // Written as version 1 wrote it: its version byte, then postcard.
        let mut intents: StableBTreeMap<u64, Vec<u8>, _> =
            StableBTreeMap::init(mm.get(tool_host_engine::memory::INTENTS));
        let bytes = tool_host_engine::model::OldLayout::encode(&old);
        assert_eq!(bytes[0], 1);
        intents.insert(id, bytes);
        // Version 1 had no body slab and no head table (its one intent is this one): as fresh
        // buckets.
        use ic_stable_structures::Memory;
        use tool_host_engine::memory::{HEAD_DIRECTORY, HEAD_PAGES, INTENT_BODIES};
        for m in [INTENT_BODIES, HEAD_DIRECTORY, HEAD_PAGES] {
            let m = mm.get(m);
            m.write(0, &vec![0; m.size() as usize * 65_536]);
        }
        let mut journal: StableBTreeMap<u64, u64, _> =
            StableBTreeMap::init(mm.get(tool_host_engine::memory::IN_FLIGHT_V1));
        journal.insert(id, 1);
    }
    *w.state.borrow_mut() = tool_host_engine::state::State::init(w.memory.clone());
    let read = w.intent(id);
    assert_eq!(read.attempts[1].log_length, Some(1));
    assert_eq!(read.attempts[0].log_length, None);
    assert!(tool_host_engine::lifecycle::check_upgrade(&*w, false).is_err());
    w.upgrade();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Unknown);
    assert!(w.state.borrow().in_flight_v1.is_none());
    w.advance(11 * SEC);
    w.run_timers();
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 0"));
    // Upgraded again, the retired journal is empty and stays so.
    w.upgrade();
    assert!(w
        .state
        .borrow()
        .in_flight_v1
        .as_ref()
        .is_none_or(|m| m.is_empty()));
}

/// The owner's confirm of `id`, with `change` made while the transfer's call awaits its reply.
fn confirm_with_a_change_during_the_call(
    w: &Rc<World>,
    id: u64,
    digest: Vec<u8>,
    change: impl FnOnce(),
) -> tool_host_engine::types::ToolResult {
    w.yield_calls.set(true);
    let mut send = Box::pin(tool_host_engine::send::confirm(
        &**w,
        owner(),
        tool_host_engine::types::ConfirmArgs {
            intent_id: id,
            digest: serde_bytes::ByteBuf::from(digest),
        },
    ));
    assert!(poll_once(send.as_mut()).is_pending(), "the send awaits");
    change();
    loop {
        if let std::task::Poll::Ready(r) = poll_once(send.as_mut()) {
            break r.unwrap();
        }
    }
}

/// Nothing after a send's await builds the catalog: a change made meanwhile (here a refs
/// refresh's, for the very target) leaves it stale, and the reply is classed, and an intent
/// the ledger found created in the future stamped again, with the canisters the send was
/// checked against. A build there grows with forms and canisters, and a trap would lose the
/// reply of a transfer the ledger executed.
#[test]
fn nothing_after_a_sends_await_builds_the_catalog() {
    for created_in_future in [false, true] {
        let w = World::new().setup();
        let (id, d) = w.prepare("1");
        let stamp = w.intent(id).stamp_ns.unwrap();
        if created_in_future {
            w.script(err(
                "CreatedInFuture",
                record(&[("ledger_time", candid::IDLValue::Nat64(stamp - 5 * SEC))]),
            ));
        }
        let r = confirm_with_a_change_during_the_call(&w, id, d, || {
            w.state.borrow_mut().target_changed(ledger_id());
        });
        let i = w.intent(id);
        if created_in_future {
            assert_eq!(r.outcome.as_deref(), Some("retry_new"), "{r:?}");
            assert_eq!(i.status, Status::Open);
            assert_eq!(i.stamp_ns, Some(stamp - 5 * SEC));
            assert_ne!(i.digest.to_vec(), w.intent(id).attempts[0].digest.to_vec());
            // The new preview names the target as the send knew it.
            assert!(i.preview_json.contains("TKA"), "{}", i.preview_json);
        } else {
            assert_eq!(r.outcome.as_deref(), Some("success"), "{r:?}");
            assert_eq!(i.status, Status::Done);
            // The reply shown in the token's units: the send's canisters' refs.
            assert!(
                r.structured.contains("TKA") || r.content.contains("TKA"),
                "{r:?}"
            );
        }
        let s = w.state.borrow();
        assert_ne!(
            s.catalog.as_ref().map(|c| c.revision),
            Some(s.config.get().catalog_revision),
            "the catalog was built after the await"
        );
        drop(s);
        assert_eq!(w.sends("icrc1_transfer"), 1);
    }
}

/// An intent the ledger found created in the future is stamped again with the target's refs as
/// they are now: a refs refresh during the call changed its decimals, and the new preview's
/// bytes read the owner's "1" in the decimals the ledger has, not those of before the call.
#[test]
fn a_restamp_after_the_await_reads_the_targets_refs_as_they_are_now() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    let stamp = w.intent(id).stamp_ns.unwrap();
    let amount_of = |arg: &[u8]| -> String {
        let v: candid::IDLArgs = candid::IDLArgs::from_bytes(arg).unwrap();
        let candid::IDLValue::Record(fields) = &v.args[0] else {
            panic!("a record")
        };
        fields
            .iter()
            .find(|f| f.id == candid::types::Label::Named("amount".into()))
            .map(|f| f.val.to_string())
            .unwrap()
    };
    let before = amount_of(&w.intent(id).arg);
    w.script(err(
        "CreatedInFuture",
        record(&[("ledger_time", candid::IDLValue::Nat64(stamp - 5 * SEC))]),
    ));
    let r = confirm_with_a_change_during_the_call(&w, id, d, || {
        let mut s = w.state.borrow_mut();
        let mut t = s.targets.get(&ledger_id()).unwrap();
        let mut refs: serde_json::Value = serde_json::from_str(&t.refs_json).unwrap();
        let decimals = refs["query:icrc1_decimals"].as_u64().unwrap();
        refs["query:icrc1_decimals"] = json!(decimals - 2);
        t.refs_json = refs.to_string();
        s.targets.insert(ledger_id(), t);
        s.target_changed(ledger_id());
    });
    assert_eq!(r.outcome.as_deref(), Some("retry_new"), "{r:?}");
    let after = amount_of(&w.intent(id).arg);
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    assert_eq!(digits(&before), "100000000", "{before}");
    assert_eq!(digits(&after), "1000000", "{after}");
    assert_eq!(w.sends("icrc1_transfer"), 1);
}
