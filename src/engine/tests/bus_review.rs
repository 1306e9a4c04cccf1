//! Review of the bus (issue 11) as a hostile agent, owner or handler would try it: each test is
//! one rule a finding broke.

mod common;
use candid::Principal;
use common::*;
use serde_json::json;
use tool_host_engine::bus::builtins::{get_inbox, set_escalation_handler, MAX_ESCALATION_HANDLERS};
use tool_host_engine::types::*;

fn escalate_enabled() -> std::rc::Rc<World> {
    let w = World::new().setup();
    w.builtins(&["escalate", "finish"], &[]).unwrap();
    w
}

fn escalate(w: &World, caller: Principal) {
    let r = w
        .tool(caller, "escalate", json!({ "reason": "stuck" }), None)
        .unwrap();
    assert!(!r.is_error, "{r:?}");
}

fn bus_indexes_agree(w: &World) {
    tool_host_engine::bus::check_indexes(&w.state.borrow()).unwrap();
}

/// A tool name is stored in the turn's step (and echoed in the refusal): a name no tool could
/// have is refused before anything is recorded, so a turn's size stays bounded (a canister
/// caller is not held to the ingress filter's 80 KiB).
#[test]
fn a_tool_name_over_the_bound_is_refused_and_not_recorded_in_the_turn() {
    let w = World::new().setup();
    let t = w.begin(agent(), "balance", None, Some(owner())).unwrap();
    let name = "x".repeat(1_000_000);
    let e = w
        .turn_tool(agent(), t.turn_id, &name, json!({}), Some(owner()))
        .unwrap_err();
    assert_eq!(
        e.code,
        "TOO_LARGE",
        "{}",
        &e.message[..200.min(e.message.len())]
    );
    assert!(
        e.message.len() < 1_000,
        "the refusal does not echo the name"
    );
    let turn = w.get_turn(owner(), t.turn_id, None).unwrap();
    assert!(turn.steps.is_empty(), "nothing recorded");
    // Outside a turn too: nothing counted, the same refusal.
    let e = w
        .tool(agent(), &name, json!({}), Some(owner()))
        .unwrap_err();
    assert_eq!(e.code, "TOO_LARGE");
}

/// Entries past the retention leave by the timer, not only at their owner's next escalation:
/// an owner that never escalates again (principals are free) would otherwise hold its entries
/// for ever, and once the host-wide bound is reached nobody could escalate again.
#[test]
fn inbox_entries_are_pruned_after_the_retention_even_if_their_owner_never_escalates_again() {
    let w = escalate_enabled();
    for o in [stranger(), other_owner()] {
        escalate(&w, o);
    }
    assert_eq!(w.state.borrow().inbox.len(), 2);
    bus_indexes_agree(&w);
    let retention = w.state.borrow().limits().retention_seconds * SEC;
    w.advance(retention - SEC);
    w.run_timers();
    assert_eq!(get_inbox(&*w, stranger(), None).unwrap().len(), 1);
    w.advance(SEC);
    w.run_timers();
    assert!(get_inbox(&*w, stranger(), None).unwrap().is_empty());
    assert!(w.state.borrow().inbox.is_empty(), "pruned by the timer");
    assert_eq!(w.state.borrow().config.get().bus.inbox_kept, 0);
    bus_indexes_agree(&w);
}

/// The prune tasks of the inbox survive an upgrade, and an entry evicted early (at the owner's
/// bound) takes its task with it.
#[test]
fn inbox_prune_tasks_survive_an_upgrade_and_leave_with_their_entry() {
    let w = escalate_enabled();
    escalate(&w, stranger());
    w.upgrade();
    bus_indexes_agree(&w);
    let retention = w.state.borrow().limits().retention_seconds * SEC;
    w.advance(retention);
    w.run_timers();
    assert!(w.state.borrow().inbox.is_empty());
    // An escalation that removes its owner's expired entry removes that entry's task.
    escalate(&w, stranger());
    w.advance(retention);
    escalate(&w, stranger());
    assert_eq!(get_inbox(&*w, stranger(), None).unwrap().len(), 1);
    bus_indexes_agree(&w);
}

/// A handler is another canister: the tool host calling itself reaches nobody (and a
/// self-call would only spend cycles), so it is refused as the anonymous principal is.
#[test]
fn the_tool_host_itself_is_not_an_escalation_handler() {
    let w = escalate_enabled();
    let e = set_escalation_handler(&*w, owner(), Some(host_id())).unwrap_err();
    assert_eq!(e.code, "INVALID_ARGUMENT");
    assert!(w.state.borrow().handlers.is_empty(), "nothing written");
}

/// Every principal may set a handler, and principals are free: the handlers are bounded in
/// all, as agent authorizations are; at the bound a new owner's handler is refused with
/// `LIMIT`, while an owner that has one may still change or remove it.
#[test]
fn escalation_handlers_are_bounded_in_all() {
    let w = escalate_enabled();
    {
        let mut s = w.state.borrow_mut();
        for n in 0..MAX_ESCALATION_HANDLERS as u32 - 1 {
            let mut b = [9u8; 5];
            b[1..].copy_from_slice(&n.to_be_bytes());
            s.handlers.insert(Principal::from_slice(&b), handler_id());
        }
    }
    set_escalation_handler(&*w, owner(), Some(handler_id())).unwrap();
    let e = set_escalation_handler(&*w, other_owner(), Some(handler_id())).unwrap_err();
    assert_eq!(e.code, "LIMIT");
    assert!(w.state.borrow().handlers.get(&other_owner()).is_none());
    // The owner that has one changes it and removes it.
    set_escalation_handler(&*w, owner(), Some(ledger_id())).unwrap();
    set_escalation_handler(&*w, owner(), None).unwrap();
    set_escalation_handler(&*w, other_owner(), Some(handler_id())).unwrap();
}

/// `get_inbox` answers an owner's whole inbox in one reply: at the inbox's bound, with every
/// entry as large as its schema lets an agent make it (four-byte characters) and the longest
/// handler text kept, the answer still fits the 2 MiB a replicated reply may carry (an owner
/// that is a canister reads it by a call); else a hostile agent could make the inbox unreadable.
#[test]
fn a_full_inbox_of_the_largest_entries_fits_in_one_reply() {
    use tool_host_core::builtin::{MAX_REASON, MAX_SUMMARY};
    use tool_host_engine::bus::builtins::MAX_INBOX_PER_OWNER;
    use tool_host_engine::runtime::CallOutcome;
    let w = escalate_enabled();
    set_escalation_handler(&*w, owner(), Some(handler_id())).unwrap();
    let input = json!({
        "reason": "\u{1D11E}".repeat(MAX_REASON),
        "summary": "\u{1D11E}".repeat(MAX_SUMMARY),
    });
    for _ in 0..MAX_INBOX_PER_OWNER {
        w.handler_replies
            .borrow_mut()
            .push_back(CallOutcome::Replied(
                candid::encode_one(EscalationReply::Err("\u{1D11E}".repeat(1_000))).unwrap(),
            ));
        let r = w
            .tool(agent(), "escalate", input.clone(), Some(owner()))
            .unwrap();
        assert!(!r.is_error, "{}", r.content);
    }
    let inbox = get_inbox(&*w, owner(), None).unwrap();
    assert_eq!(inbox.len(), MAX_INBOX_PER_OWNER);
    let reply = candid::encode_one(InboxResult::from(Ok(inbox))).unwrap();
    assert!(
        reply.len() <= 2 * 1024 * 1024,
        "get_inbox answers {} bytes",
        reply.len()
    );
}

/// A build that kept the inbox before its id index existed: the upgrade indexes every entry
/// and schedules its prune, so those entries leave by the timer too.
#[test]
fn an_inbox_kept_without_its_id_index_is_indexed_at_upgrade() {
    let w = escalate_enabled();
    escalate(&w, stranger());
    escalate(&w, other_owner());
    {
        let mut s = w.state.borrow_mut();
        let ids: Vec<(u64, (Principal, u64))> = s.inbox_ids.iter().map(|e| e.into_pair()).collect();
        for (id, (_, at)) in ids {
            s.inbox_ids.remove(&id);
            s.due
                .remove(&tool_host_engine::model::TaskKind::PruneInbox.key(at, id));
        }
    }
    w.upgrade();
    bus_indexes_agree(&w);
    let retention = w.state.borrow().limits().retention_seconds * SEC;
    w.advance(retention);
    w.run_timers();
    assert!(w.state.borrow().inbox.is_empty());
    bus_indexes_agree(&w);
}

/// A turn past the retention is gone for every reader and caller; when an admin shortened the
/// retention its prune task is still at the old time, and the owner's bound must not count it:
/// the refusal says "wait until the oldest expires", and it has.
#[test]
fn an_owners_expired_turns_make_room_when_the_retention_was_shortened() {
    use tool_host_engine::bus::turns::MAX_TURNS_PER_OWNER;
    let w = World::new().setup();
    let mut ids = vec![];
    for _ in 0..MAX_TURNS_PER_OWNER {
        ids.push(w.begin(owner(), "x", Some(2), None).unwrap().turn_id);
    }
    assert_eq!(
        w.begin(owner(), "x", Some(2), None).unwrap_err().code,
        "LIMIT"
    );
    let mut l = w.state.borrow().limits();
    l.retention_seconds /= 2;
    let shorter = l.retention_seconds * SEC;
    tool_host_engine::registry::set_limits(&*w, controller(), l).unwrap();
    w.advance(shorter);
    w.run_timers();
    assert_eq!(
        w.get_turn(owner(), ids[0], None).unwrap_err().code,
        "NOT_FOUND"
    );
    let next = w.begin(owner(), "x", Some(2), None).unwrap();
    assert!(w.get_turn(owner(), next.turn_id, None).is_ok());
    bus_indexes_agree(&w);
}

/// A turn acts for its owner: an agent of two owners cannot commit the other owner's intent
/// through this owner's turn (the turn's record, which this owner reads, would hold a step on
/// an intent that is not its own, and its usage would count it). Not found there, as a
/// missing intent is; nothing about the intent changes.
#[test]
fn a_commit_in_a_turn_reaches_only_the_turns_owners_intents() {
    let w = World::new().setup();
    tool_host_engine::owners::authorize_agent(&*w, other_owner(), agent()).unwrap();
    let r = w
        .tool(
            agent(),
            "prepare_icrc1_transfer",
            json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "1 TKA" }),
            Some(other_owner()),
        )
        .unwrap();
    let theirs: u64 = structured(&r)["intent_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let t = w
        .begin(
            agent(),
            "prepare icrc1 transfer of tokens",
            None,
            Some(owner()),
        )
        .unwrap();
    assert!(t.offered.contains(&"commit".to_string()), "{:?}", t.offered);
    let e = w
        .turn_tool(
            agent(),
            t.turn_id,
            "commit",
            json!({ "preview_id": theirs.to_string() }),
            Some(owner()),
        )
        .unwrap_err();
    assert_eq!(e.code, "NOT_FOUND");
    assert_eq!(w.intent(theirs).confirm_requested_at, None, "nothing asked");
    let step = &w.get_turn(owner(), t.turn_id, None).unwrap().steps[0];
    assert_eq!(step.outcome, "NOT_FOUND");
    // The turn's own owner's intent is committed through it as ever.
    let (mine, _) = w.prepare("1 TKA");
    let r = w
        .turn_tool(
            agent(),
            t.turn_id,
            "commit",
            json!({ "preview_id": mine.to_string() }),
            Some(owner()),
        )
        .unwrap();
    assert_eq!(structured(&r)["status"], "awaiting_confirmation");
}
