mod common;
use common::*;
use serde_json::json;

#[test]
fn probe_body() {
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
    eprintln!("preview {} {}", i.preview_json.len(), i.preview_json);
    eprintln!("summary {} {}", i.summary.len(), i.summary);
    eprintln!("input {} {}", i.input_json.len(), i.input_json);
    eprintln!(
        "arg {} memo {:?} names {}",
        i.arg.len(),
        i.memo.as_ref().map(|m| m.len()),
        i.names.len()
    );
    eprintln!("form {} tool {} method {}", i.form_id, i.tool, i.method);
}
