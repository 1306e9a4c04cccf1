//! Review: the archive callback of an `icrc3_get_blocks` answer is called as the target names
//! it, any canister and any method. A target (registered by an admin: "forms and admins are
//! inputs like any other", docs/canister.md "Whose funds move") can so make the tool host, the
//! one principal that holds every owner's funds, send an update call nobody confirmed to any
//! canister: a method with no parameters takes the call (Candid drops extra arguments).

mod common;
use candid::Principal;
use common::*;
use std::rc::Rc;
use tool_host_engine::reconcile::icrc3::{
    ArchiveFn, ArchivedBlocks, GetBlocksRequest, GetBlocksResult,
};
use tool_host_engine::runtime::{CallOutcome, Runtime};
use tool_host_engine::state::State;

/// The world, with a ledger whose `icrc3_get_blocks` names another canister's method as its
/// archive.
struct Redirecting {
    w: Rc<World>,
    victim: Principal,
    method: String,
}

impl Runtime for Redirecting {
    type M = ic_stable_structures::VectorMemory;
    fn now(&self) -> u64 {
        self.w.now()
    }
    fn self_id(&self) -> Principal {
        self.w.self_id()
    }
    fn is_controller(&self, p: &Principal) -> bool {
        self.w.is_controller(p)
    }
    fn with_state<T>(&self, f: impl FnOnce(&mut State<Self::M>) -> T) -> T {
        self.w.with_state(f)
    }
    async fn call(
        &self,
        canister: Principal,
        method: &str,
        arg: Vec<u8>,
        timeout: u32,
    ) -> CallOutcome {
        let out = self.w.call(canister, method, arg, timeout).await;
        match out {
            CallOutcome::Replied(bytes)
                if canister == ledger_id() && method == "icrc3_get_blocks" =>
            {
                let mut r: GetBlocksResult = candid::decode_one(&bytes).unwrap();
                r.blocks.clear();
                r.archived_blocks = vec![ArchivedBlocks {
                    args: vec![GetBlocksRequest {
                        start: 0u64.into(),
                        length: 1u64.into(),
                    }],
                    callback: ArchiveFn::new(self.victim, self.method.clone()),
                }];
                CallOutcome::Replied(candid::encode_one(r).unwrap())
            }
            other => other,
        }
    }
    fn wake_at(&self, at_ns: u64) {
        self.w.wake_at(at_ns)
    }
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
    let evil = Redirecting {
        w: w.clone(),
        victim: vault,
        method: "withdraw_all".into(),
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
