//! Review: registration changes racing a prepare's await. A prepare of a tool whose form reads a
//! name set awaits that read (an inter-canister call) *before* it stores the intent, holding the
//! catalog's canisters and the tool's plan from before the await. Registration changes made
//! meanwhile are not refused (no intent uses the canister yet), and the intent is then stored
//! against what they removed.

mod common;
use common::*;
use serde_json::json;
use std::rc::Rc;
use tool_host_engine::model::Status;
use tool_host_engine::types::*;

/// The ICRC-1 pack with `to` read from a name set (`list_contacts` on the ledger).
fn contacts_world() -> Rc<World> {
    let w = World::new();
    let mut form: serde_json::Value = serde_json::from_str(tool_host_core::packs::ICRC1).unwrap();
    form["names"] = json!({ "contacts": { "method": "list_contacts", "list": "(0)", "name": "name", "value": "account" } });
    form["methods"]["list_contacts"] = json!({ "mode": "query", "args": [], "results": [{ "type": "vec", "inner": { "type": "record", "fields": [
        { "name": "name", "type": "text" }, { "name": "account", "type": "Account" }
    ] } }] });
    let fields = form["types"]["TransferArg"]["fields"]
        .as_array_mut()
        .unwrap();
    let to = fields.iter_mut().find(|f| f["name"] == "to").unwrap();
    to["named"] = json!("contacts");
    tool_host_engine::registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "icrc1".into(),
            json: form.to_string(),
        },
    )
    .unwrap();
    futures::executor::block_on(tool_host_engine::registry::register_canister(
        &*w,
        controller(),
        RegisterCanisterArgs {
            id: ledger_id(),
            label: Some("TKA".into()),
            forms: vec!["icrc1".into()],
            // Its name set's method is not a read the engine knows: read on a canister
            // registered for a single owner only.
            owner: Some(owner()),
        },
    ))
    .unwrap();
    let deposit = (
        host_id(),
        tool_host_core::funds::deposit_subaccount(&owner()),
    );
    w.ledger
        .borrow_mut()
        .chain
        .credit(deposit, 1_000 * 100_000_000);
    w.contacts.borrow_mut().push(("bob".into(), receiver()));
    w.calls.borrow_mut().clear();
    w
}

type Prepare<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ApiResult<ToolResult>> + 'a>>;

/// The owner's prepare of a transfer to "bob", stopped just after its name set was read.
fn prepare_paused(w: &Rc<World>) -> Prepare<'_> {
    prepare_paused_as(w, owner(), None)
}

/// [`prepare_paused`] made by `caller` for `for_owner`.
fn prepare_paused_as(
    w: &Rc<World>,
    caller: candid::Principal,
    for_owner: Option<candid::Principal>,
) -> Prepare<'_> {
    w.yield_after.borrow_mut().insert("list_contacts".into());
    let mut f: Prepare<'_> = Box::pin(tool_host_engine::tools::call_tool(
        &**w,
        caller,
        CallToolArgs {
            name: "prepare_icrc1_transfer".into(),
            input: json!({ "canister_id": ledger_id().to_text(), "to": "bob", "amount": "1" })
                .to_string(),
            owner: for_owner,
            turn: None,
        },
    ));
    assert!(
        poll_once(f.as_mut()).is_pending(),
        "the prepare awaits its name set"
    );
    w.yield_after.borrow_mut().clear();
    f
}

fn finish(mut f: Prepare<'_>) -> ApiResult<ToolResult> {
    for _ in 0..10 {
        if let std::task::Poll::Ready(v) = poll_once(f.as_mut()) {
            return v;
        }
    }
    panic!("the prepare does not finish");
}

/// FINDING: the canister is removed while a prepare awaits its name set (allowed: no intent
/// uses it yet); the prepare then stores an intent for a canister that is no longer registered,
/// and its owner's confirm sends the transfer there.
#[test]
fn a_canister_removed_during_a_prepares_await_gets_no_intent_and_no_transfer() {
    let w = contacts_world();
    let f = prepare_paused(&w);
    tool_host_engine::registry::remove_canister(&*w, controller(), ledger_id())
        .expect("nothing uses the canister yet");
    assert!(!w.state.borrow().targets.contains_key(&ledger_id()));
    let r = finish(f);
    let stored: Vec<_> = w.state.borrow().intents.iter().map(|(_, i)| i).collect();
    if let Ok(r) = &r {
        // What the engine did: an intent for the removed canister, and it can be sent.
        let v = structured(r);
        let id: u64 = v["intent_id"].as_str().unwrap().parse().unwrap();
        let d = hex::decode(v["digest"].as_str().unwrap()).unwrap();
        let sent = w.confirm(owner(), id, &d);
        panic!(
            "the prepare stored intent {id} for canister {} after the canister was removed; \
             the owner's confirm answered {:?} and the ledger has {} block(s)",
            ledger_id(),
            sent.map(|r| r.outcome),
            w.ledger.borrow().blocks().len()
        );
    }
    assert!(stored.is_empty(), "{stored:?}");
}

/// FINDING (same cause): the intent stored against the removed canister makes every later
/// registration change, even one unrelated to it, fail `IN_USE` until it settles (`check_uses`
/// finds its tool offered on no registered canister).
#[test]
fn an_intent_stored_during_a_canister_removal_does_not_freeze_every_registration_change() {
    let w = contacts_world();
    let f = prepare_paused(&w);
    tool_host_engine::registry::remove_canister(&*w, controller(), ledger_id()).unwrap();
    let _ = finish(f);
    // An unrelated form: nothing any intent uses.
    let r = tool_host_engine::registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "icrc2".into(),
            json: tool_host_core::packs::ICRC2.into(),
        },
    );
    assert!(r.is_ok(), "{r:?}");
}

/// FINDING (same cause): the canister is re-registered *without the form* while the prepare
/// awaits (allowed: nothing uses the form there yet); the prepare still stores an intent whose
/// tool the canister no longer offers, and its owner's confirm sends it.
#[test]
fn a_form_dropped_from_the_canister_during_a_prepares_await_gets_no_intent() {
    let w = contacts_world();
    tool_host_engine::registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "icrc2".into(),
            json: tool_host_core::packs::ICRC2.into(),
        },
    )
    .unwrap();
    let f = prepare_paused(&w);
    futures::executor::block_on(tool_host_engine::registry::register_canister(
        &*w,
        controller(),
        RegisterCanisterArgs {
            id: ledger_id(),
            label: Some("TKA".into()),
            forms: vec!["icrc2".into()],
            owner: None,
        },
    ))
    .expect("nothing uses icrc1 on the canister yet");
    let r = finish(f);
    let open: Vec<_> = w
        .state
        .borrow()
        .intents
        .iter()
        .map(|(_, i)| i)
        .filter(|i| i.status == Status::Open)
        .map(|i| (i.id, i.form_id.clone(), i.canister))
        .collect();
    if let Ok(r) = &r {
        let v = structured(r);
        let id: u64 = v["intent_id"].as_str().unwrap().parse().unwrap();
        let d = hex::decode(v["digest"].as_str().unwrap()).unwrap();
        let sent = w.confirm(owner(), id, &d).map(|r| r.outcome);
        panic!(
            "intents for a form the canister no longer has: {open:?}; the confirm answered {sent:?}, the ledger has {} block(s)",
            w.ledger.borrow().blocks().len()
        );
    }
    assert!(open.is_empty(), "{open:?}");
}

/// HOLDS: the canister given to another owner during the await: the prepare is refused.
#[test]
fn a_canister_given_to_another_owner_during_a_prepares_await_refuses_it() {
    let w = contacts_world();
    let f = prepare_paused(&w);
    futures::executor::block_on(tool_host_engine::registry::register_canister(
        &*w,
        controller(),
        RegisterCanisterArgs {
            id: ledger_id(),
            label: Some("TKA".into()),
            forms: vec!["icrc1".into()],
            owner: Some(other_owner()),
        },
    ))
    .unwrap();
    assert_eq!(finish(f).unwrap_err().code, "NOT_AUTHORIZED");
    assert!(w.state.borrow().intents.is_empty());
}

/// An agent revoked while its prepare awaits the name set: nothing is stored.
#[test]
fn an_agent_revoked_during_a_prepares_await_stores_nothing() {
    let w = contacts_world();
    tool_host_engine::owners::authorize_agent(&*w, owner(), agent()).unwrap();
    let f = prepare_paused_as(&w, agent(), Some(owner()));
    tool_host_engine::owners::revoke_agent(&*w, owner(), agent()).unwrap();
    let r = finish(f);
    assert_eq!(
        r.map_err(|e| e.code).err().as_deref(),
        Some("NOT_AUTHORIZED")
    );
    assert_eq!(w.state.borrow().intents.len(), 0);
}

/// An agent token revoked, or expired, while its prepare awaits the name set: nothing is stored.
#[test]
fn an_agent_token_revoked_or_expired_during_a_prepares_await_stores_nothing() {
    use tool_host_engine::tokens;
    for expire in [false, true] {
        let w = contacts_world();
        let expires_at = expire.then(|| w.now.get() + 1_000_000_000);
        let t = futures::executor::block_on(tokens::issue(
            &*w,
            owner(),
            IssueAgentTokenArgs {
                label: "paused".into(),
                expires_at,
            },
        ))
        .unwrap();
        let p = tokens::token_principal(&owner(), t.id);
        let f = prepare_paused_as(&w, p, Some(owner()));
        if expire {
            w.advance(2_000_000_000);
        } else {
            tokens::revoke(&*w, owner(), t.id).unwrap();
        }
        let r = finish(f);
        assert_eq!(
            r.map_err(|e| e.code).err().as_deref(),
            Some("NOT_AUTHORIZED"),
            "expired: {expire}"
        );
        assert_eq!(w.state.borrow().intents.len(), 0, "expired: {expire}");
    }
}

/// A token already expired is refused before anything is read, whatever the HTTP door saw.
#[test]
fn an_expired_agent_token_does_not_act() {
    use tool_host_engine::tokens;
    let w = contacts_world();
    let t = futures::executor::block_on(tokens::issue(
        &*w,
        owner(),
        IssueAgentTokenArgs {
            label: "short".into(),
            expires_at: Some(w.now.get() + 1_000_000_000),
        },
    ))
    .unwrap();
    w.advance(2_000_000_000);
    let p = tokens::token_principal(&owner(), t.id);
    let r = w.state.borrow().intents.len();
    let got = futures::executor::block_on(tool_host_engine::tools::call_tool(
        &*w,
        p,
        CallToolArgs {
            name: "prepare_icrc1_transfer".into(),
            input: json!({ "canister_id": ledger_id().to_text(), "to": "bob", "amount": "1" })
                .to_string(),
            owner: Some(owner()),
            turn: None,
        },
    ));
    assert_eq!(
        got.map_err(|e| e.code).err().as_deref(),
        Some("NOT_AUTHORIZED")
    );
    assert_eq!(w.state.borrow().intents.len(), r);
}
