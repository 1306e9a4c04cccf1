//! Review, second round: read tools whose input reads a name set (an inter-canister call the
//! host makes before the read), and refreshes that must not disturb a prepare's await.

mod common;
use common::*;
use serde_json::json;
use std::rc::Rc;
use tool_host_engine::types::*;

/// The ICRC-2 pack with `icrc2_allowance`'s whose `spender` is read from a name set
/// (`list_contacts` on the ledger).
fn contacts_world() -> Rc<World> {
    let w = World::new();
    let mut form: serde_json::Value = serde_json::from_str(tool_host_core::packs::ICRC2).unwrap();
    form["names"] = json!({ "contacts": { "method": "list_contacts", "list": "(0)", "name": "name", "value": "account" } });
    form["methods"]["list_contacts"] = json!({ "mode": "query", "args": [], "results": [{ "type": "vec", "inner": { "type": "record", "fields": [
        { "name": "name", "type": "text" }, { "name": "account", "type": "Account" }
    ] } }] });
    form["methods"]["icrc2_allowance"]["args"][0]["fields"][1]["named"] = json!("contacts");
    tool_host_engine::registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "icrc2".into(),
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
            forms: vec!["icrc2".into()],
            // Its name set's method is not a read the engine knows: read on a canister
            // registered for a single owner only.
            owner: Some(owner()),
        },
    ))
    .unwrap();
    w.contacts.borrow_mut().push(("bob".into(), receiver()));
    w.calls.borrow_mut().clear();
    w
}

type Call<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ApiResult<ToolResult>> + 'a>>;

fn allowance_input() -> String {
    json!({ "canister_id": ledger_id().to_text(), "account": owner().to_text(), "spender": "bob" })
        .to_string()
}

fn read(w: &World) -> ApiResult<ToolResult> {
    futures::executor::block_on(tool_host_engine::tools::call_tool(
        w,
        owner(),
        CallToolArgs {
            name: "icrc2_allowance".into(),
            input: allowance_input(),
            owner: None,
            turn: None,
        },
    ))
}

fn calls_to(w: &World, method: &str) -> usize {
    w.calls.borrow().iter().filter(|(_, m)| m == method).count()
}

/// Stopped just after the name set was read.
fn paused<'a>(w: &'a Rc<World>, name: &str, input: String) -> Call<'a> {
    w.yield_after.borrow_mut().insert("list_contacts".into());
    let mut f: Call<'a> = Box::pin(tool_host_engine::tools::call_tool(
        &**w,
        owner(),
        CallToolArgs {
            name: name.into(),
            input,
            owner: None,
            turn: None,
        },
    ));
    assert!(poll_once(f.as_mut()).is_pending(), "awaits its name set");
    w.yield_after.borrow_mut().clear();
    f
}

fn finish(mut f: Call<'_>) -> ApiResult<ToolResult> {
    for _ in 0..10 {
        if let std::task::Poll::Ready(v) = poll_once(f.as_mut()) {
            return v;
        }
    }
    panic!("the call does not finish");
}

#[test]
fn the_read_tool_reads_a_name_set_and_calls_the_ledger() {
    let w = contacts_world();
    assert!(read(&w).is_ok());
    assert_eq!(calls_to(&w, "list_contacts"), 1);
    assert_eq!(calls_to(&w, "icrc2_allowance"), 1);
}

/// A read awaiting its name set while the admin removes the canister makes no call to it.
#[test]
fn a_canister_removed_during_a_reads_await_is_not_called() {
    let w = contacts_world();
    let f = paused(&w, "icrc2_allowance", allowance_input());
    tool_host_engine::registry::remove_canister(&*w, controller(), ledger_id())
        .expect("no intent uses it");
    let r = finish(f);
    assert_eq!(r.map(|_| ()).map_err(|e| e.code), Err("RETRY".to_string()));
    assert_eq!(calls_to(&w, "icrc2_allowance"), 0, "{:?}", w.calls.borrow());
}

/// An owner past the minute's read budget makes the host call nothing, not even the name set;
/// a read whose name-set call was made counts even if its input then fails.
#[test]
fn the_read_budget_bounds_name_set_calls_too() {
    let w = contacts_world();
    w.state
        .borrow_mut()
        .update_config(|c| c.limits.max_reads_per_owner_per_minute = 2);
    assert!(read(&w).is_ok());
    // A name nobody has: the name set is read (a call), then the input is refused.
    let bad = futures::executor::block_on(tool_host_engine::tools::call_tool(
        &*w,
        owner(),
        CallToolArgs {
            name: "icrc2_allowance".into(),
            input: json!({ "canister_id": ledger_id().to_text(), "account": owner().to_text(), "spender": "carol" }).to_string(),
            owner: None,
            turn: None,
        },
    ));
    assert!(bad.is_err(), "{bad:?}");
    assert_eq!(calls_to(&w, "list_contacts"), 2);
    let before = w.calls.borrow().len();
    for _ in 0..10 {
        assert_eq!(read(&w).unwrap_err().code, "LIMIT");
    }
    assert_eq!(
        w.calls.borrow().len(),
        before,
        "nothing called past the budget"
    );
    w.advance(60 * SEC);
    assert!(read(&w).is_ok(), "a new minute");
}

/// A refs refresh of another canister that changes nothing leaves a prepare awaiting its name
/// set alone (its revision does not move): `RETRY` only when what it read changed.
#[test]
fn a_refresh_that_changes_nothing_does_not_make_a_call_awaiting_its_name_set_retry() {
    let w = contacts_world();
    let other = candid::Principal::from_slice(&[7; 10]);
    futures::executor::block_on(tool_host_engine::registry::register_canister(
        &*w,
        controller(),
        RegisterCanisterArgs {
            id: other,
            label: Some("TKB".into()),
            forms: vec!["icrc2".into()],
            owner: None,
        },
    ))
    .unwrap();
    // A call awaiting its name set (prepares and reads compare the same revision) while both
    // canisters' refs are refreshed (the other one does not answer: its refs are kept).
    let revision = w.state.borrow().config.get().catalog_revision;
    let f = paused(&w, "icrc2_allowance", allowance_input());
    futures::executor::block_on(tool_host_engine::registry::refresh_refs(
        &*w,
        controller(),
        Some(other),
    ))
    .unwrap();
    futures::executor::block_on(tool_host_engine::registry::refresh_refs(
        &*w,
        controller(),
        Some(ledger_id()),
    ))
    .unwrap();
    assert_eq!(
        w.state.borrow().config.get().catalog_revision,
        revision,
        "nothing changed"
    );
    assert!(finish(f).is_ok());
    assert_eq!(calls_to(&w, "icrc2_allowance"), 1);
}
