//! Review: the archive callback of an `icrc3_get_blocks` answer is called as the target names
//! it, any canister and any method. A target (registered by an admin: "forms and admins are
//! inputs like any other", docs/canister.md "Whose funds move") can so make the tool host, the
//! one principal that holds every owner's funds, send an update call nobody confirmed to any
//! canister: a method with no parameters takes the call (Candid drops extra arguments).

mod common;
use candid::{Nat, Principal};
use common::*;
use tool_host_engine::reconcile::icrc3::{
    ArchiveFn, ArchivedBlocks, GetBlocksRequest, GetBlocksResult,
};
use tool_host_engine::runtime::CallOutcome;

/// A ledger whose `icrc3_get_blocks` returns no block and names `victim`'s `method` as the
/// archive of block 0.
fn redirecting(
    w: &World,
    canister: Principal,
    method: &str,
    victim: Principal,
    victim_method: &str,
) -> Option<CallOutcome> {
    if canister != ledger_id() || method != "icrc3_get_blocks" {
        return None;
    }
    let r = GetBlocksResult {
        log_length: Nat::from(w.ledger.borrow().blocks().len()),
        blocks: vec![],
        archived_blocks: vec![ArchivedBlocks {
            args: vec![GetBlocksRequest {
                start: 0u64.into(),
                length: 1u64.into(),
            }],
            callback: ArchiveFn::new(victim, victim_method.into()),
        }],
    };
    Some(CallOutcome::Replied(candid::encode_one(r).unwrap()))
}

/// FINDING: reconciliation calls `withdraw_all` on another canister because the target's
/// answer named it as its archive.
#[test]
fn reconciliation_calls_only_icrc3_get_blocks_whatever_the_target_names_as_its_archive() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.script(Script::Reject(6));
    assert_eq!(
        w.confirm(owner(), id, &d).unwrap().outcome.as_deref(),
        Some("unknown")
    );
    let vault = Principal::from_slice(&[0xee, 1]);
    let evil = Intercept {
        w: w.clone(),
        answer: |c: Principal, m: &str, _: &[u8]| redirecting(&w, c, m, vault, "withdraw_all"),
    };
    w.calls.borrow_mut().clear();
    w.advance(11 * SEC);
    futures::executor::block_on(tool_host_engine::schedule::tick(&evil));
    let calls = w.calls.borrow().clone();
    let other: Vec<_> = calls
        .iter()
        .filter(|(_, m)| m != "icrc3_get_blocks")
        .collect();
    assert!(
        other.is_empty(),
        "reconciliation made update calls nobody confirmed: {other:?}"
    );
}

/// FINDING (same family): a ref (`query:<method>`, read at registration and every refresh) may
/// name any method, an update one included, even one the form itself declares an update: the
/// tool host then calls it, with no arguments, unconfirmed, every `refs_refresh_seconds`.
#[test]
fn refs_are_read_only_from_methods_the_form_declares_queries() {
    let w = World::new();
    let mut form: serde_json::Value = serde_json::from_str(tool_host_core::packs::ICRC1).unwrap();
    form["methods"]["withdraw_all"] = serde_json::json!({ "mode": "update", "intent": "Withdraw everything", "args": [], "results": [] });
    let fields = form["types"]["TransferArg"]["fields"]
        .as_array_mut()
        .unwrap();
    let fee = fields.iter_mut().find(|f| f["name"] == "fee").unwrap();
    fee["auto"] = serde_json::json!({ "from": "query:withdraw_all" });
    let r = tool_host_engine::registry::register_form(
        &*w,
        controller(),
        tool_host_engine::types::RegisterFormArgs {
            id: "icrc1".into(),
            json: form.to_string(),
        },
    );
    if r.is_ok() {
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
    }
    assert_eq!(
        w.sends("withdraw_all"),
        0,
        "the registration called an update method as a ref (form accepted: {:?})",
        r.map(|f| f.id)
    );
}
