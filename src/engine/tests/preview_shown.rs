//! The preview an owner is shown carries the exact argument bytes (`arg_hex`), wherever it is
//! shown: the prepare answer, `get_intent`, a confirm's answer after a new stamp; the record
//! stores them once (`arg`), not again inside the preview (version 3 of the intent).

mod common;
use common::*;
use serde_json::{json, Value};
use tool_host_engine::views::get_intent;

/// The preview shown by `get_intent`, checked: its `arg_hex` is the view's `arg`.
fn shown(w: &World, id: u64) -> Value {
    let v = get_intent(w, owner(), id).unwrap();
    let p: Value = serde_json::from_str(&v.preview).unwrap();
    assert_eq!(p["arg_hex"], json!(hex::encode(&v.arg)), "{}", v.preview);
    assert_eq!(p["preview_id"], json!(id.to_string()));
    p
}

#[test]
fn the_preview_shown_carries_the_bytes_the_record_keeps_once() {
    let w = World::new().setup();
    let r = w
        .tool(
            agent(),
            "prepare_icrc1_transfer",
            json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "1.5" }),
            Some(owner()),
        )
        .unwrap();
    let answer = structured(&r);
    let id: u64 = answer["intent_id"].as_str().unwrap().parse().unwrap();
    let i = w.intent(id);
    assert!(!i.preview_json.contains("arg_hex"), "{}", i.preview_json);
    assert_eq!(
        answer["preview"],
        shown(&w, id),
        "the answer and get_intent agree"
    );
    assert_eq!(
        i.preview_text(),
        get_intent(&*w, owner(), id).unwrap().preview
    );
    // A new stamp (retry_new): the new bytes, shown with the new preview.
    w.advance(5 * SEC);
    w.script(err("TooOld", candid::types::value::IDLValue::Null));
    let d = hex::decode(answer["digest"].as_str().unwrap()).unwrap();
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("retry_new"));
    let after = shown(&w, id);
    assert_ne!(after["arg_hex"], answer["preview"]["arg_hex"], "new bytes");
    assert_eq!(structured(&r)["preview"], after);
    assert!(!w.intent(id).preview_json.contains("arg_hex"));
    // Sent and settled: still shown whole.
    let digest = w.intent(id).digest;
    assert_eq!(
        w.confirm(owner(), id, &digest).unwrap().outcome.as_deref(),
        Some("success")
    );
    shown(&w, id);
}
