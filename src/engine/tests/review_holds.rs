//! Review: attacks and corners that held (each passes), kept as regression tests for paths no
//! other test takes: ICRC-2 approve and transfer_from reconciliation (found, decoys), an
//! owner-unbound tool on a shared canister when a single-owner canister offers it.

mod common;
use common::*;
use serde_json::json;
use tool_host_engine::model::Status;
use tool_host_engine::types::*;

fn id_digest(r: &ToolResult) -> (u64, Vec<u8>) {
    let v = structured(r);
    (
        v["intent_id"].as_str().unwrap().parse().unwrap(),
        hex::decode(v["digest"].as_str().unwrap()).unwrap(),
    )
}

/// Other users' transfers, `n` mint blocks.
fn noise(w: &World, n: usize) {
    let mut l = w.ledger.borrow_mut();
    for _ in 0..n {
        l.chain.mint((stranger(), [7; 32]), 1, T0);
    }
}

#[test]
fn an_approve_whose_reply_was_lost_is_found_past_an_archive_that_answers_short() {
    let w = World::new().setup();
    noise(&w, 12);
    let r = w
        .tool(owner(), "prepare_icrc2_approve", json!({ "canister_id": ledger_id().to_text(), "spender": stranger().to_text(), "amount": "3" }), None)
        .unwrap();
    let (id, d) = id_digest(&r);
    w.script(Script::ExecuteThenLose);
    assert_eq!(
        w.confirm(owner(), id, &d).unwrap().outcome.as_deref(),
        Some("unknown")
    );
    noise(&w, 10);
    {
        let mut l = w.ledger.borrow_mut();
        l.chain.archived_below = 20;
        l.chain.archive_page_limit = 3;
        l.chain.archive_short_by = 1;
    }
    w.run_for(10, MINUTE);
    let i = w.intent(id);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 12"));
}

/// A stranger the owner also approved spends the owner's account with the intent's very bytes:
/// the block's spender is the stranger, not the tool host, so it is not the original.
#[test]
fn a_transfer_from_decoy_by_another_spender_is_not_the_original() {
    let w = World::new().setup();
    {
        let mut l = w.ledger.borrow_mut();
        l.chain.credit((owner(), [0; 32]), 100 * 100_000_000);
        for spender in [host_id(), stranger()] {
            l.chain.allowances.insert(
                ((owner(), [0; 32]), (spender, [0; 32])),
                (50 * 100_000_000, None),
            );
        }
    }
    let r = w
        .tool(owner(), "prepare_icrc2_transfer_from", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "1" }), None)
        .unwrap();
    let (id, d) = id_digest(&r);
    w.script(Script::Reject(6));
    assert_eq!(
        w.confirm(owner(), id, &d).unwrap().outcome.as_deref(),
        Some("unknown")
    );
    let arg = w.intent(id).arg.clone();
    let decoy = w
        .ledger
        .borrow_mut()
        .chain
        .execute(stranger(), "icrc2_transfer_from", &arg, T0);
    assert!(decoy.block.is_some(), "the stranger's copy executed");
    w.run_for(3, MINUTE);
    let i = w.intent(id);
    assert_eq!(
        i.outcome.as_deref(),
        Some("not_executed"),
        "{:?}",
        i.finding
    );
    // And once it is sent for real, reconciliation of a lost reply finds the real one.
    let (id2, d2) = id_digest(
        &w.tool(owner(), "prepare_icrc2_transfer_from", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "1" }), None)
            .unwrap(),
    );
    w.script(Script::ExecuteThenLose);
    w.confirm(owner(), id2, &d2).unwrap();
    w.run_for(3, MINUTE);
    let i = w.intent(id2);
    assert_eq!(i.status, Status::Done, "{:?}", i.finding);
    assert_eq!(i.finding.as_deref(), Some("reconciled: found in block 1"));
}

/// A tool that binds no owner is offered because one canister of its form is registered for a
/// single owner; on another canister of the same form, shared, it is refused (`CUSTODY`, in
/// `target_access`), at prepare, for the owner of the other canister too.
#[test]
fn an_unbound_tool_offered_for_a_single_owner_canister_is_refused_on_a_shared_one() {
    let w = World::new().setup();
    let mut form: serde_json::Value = serde_json::from_str(tool_host_core::packs::ICRC1).unwrap();
    form["name"] = json!("vault");
    form["methods"] = json!({ "withdraw_all": { "mode": "update", "intent": "Withdraw everything", "args": [
        { "type": "record", "fields": [{ "name": "to", "type": "Account" }] }
    ], "results": [] } });
    tool_host_engine::registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "vault".into(),
            json: form.to_string(),
        },
    )
    .unwrap();
    let mine = candid::Principal::from_slice(&[0xbb, 1]);
    let shared = candid::Principal::from_slice(&[0xbb, 2]);
    for (id, o) in [(mine, Some(owner())), (shared, None)] {
        futures::executor::block_on(tool_host_engine::registry::register_canister(
            &*w,
            controller(),
            RegisterCanisterArgs {
                id,
                label: None,
                forms: vec!["vault".into()],
                owner: o,
            },
        ))
        .unwrap();
    }
    assert!(tool_host_engine::tools::list_tools(&*w).contains("prepare_withdraw_all"));
    for caller in [owner(), other_owner()] {
        let e = w
            .tool(
                caller,
                "prepare_withdraw_all",
                json!({ "canister_id": shared.to_text(), "to": receiver().to_text() }),
                None,
            )
            .unwrap_err();
        assert_eq!(e.code, "CUSTODY", "{caller}: {e:?}");
    }
    assert!(w.state.borrow().intents.is_empty());
    let r = w
        .tool(
            owner(),
            "prepare_withdraw_all",
            json!({ "canister_id": mine.to_text(), "to": receiver().to_text() }),
            None,
        )
        .unwrap();
    assert_eq!(structured(&r)["status"], json!("prepared"));
}
