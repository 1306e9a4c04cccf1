//! Custody on the real wasm (issue 9): an admin who makes the source subaccount an input cannot
//! make the tool host spend another owner's deposit; decline's consent message says nothing
//! without the digest; a form its intents use is never replaced under them. Each refusal leaves
//! the tool host's stats, intents and the ledger's log as they were.

use crate::Scenario;
use candid::Principal;
use tool_host_engine::consent::Icrc21Error;
use tool_host_tests::check::{refused, Check};
use tool_host_tests::clients::consent_request;
use tool_host_tests::world::{World, ICRC1_FORM};
use tool_host_tests::{ensure, ensure_eq, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "custody::an_admins_form_cannot_spend_another_owners_deposit",
            an_admins_form_cannot_spend_another_owners_deposit,
        ),
        Scenario::new(
            "custody::consent_without_the_digest_says_nothing",
            consent_without_the_digest_says_nothing,
        ),
        Scenario::new(
            "custody::a_form_in_use_is_never_replaced",
            a_form_in_use_is_never_replaced,
        ),
    ]
}

fn an_admins_form_cannot_spend_another_owners_deposit(w: &mut World) -> Check {
    let p = w.p;
    let mut form: serde_json::Value = serde_json::from_str(ICRC1_FORM).expect("the pack parses");
    for f in form["types"]["TransferArg"]["fields"]
        .as_array_mut()
        .expect("fields")
    {
        if f["name"] == "from_subaccount" {
            let o = f.as_object_mut().expect("a field");
            o.remove("ui");
            o.remove("auto");
        }
    }
    let h = w.host;
    // The admin is not a controller.
    ensure!(!w.b.controllers(h.0)?.contains(&p.admin));
    let info = h.register_form(w.b(), p.admin, "icrc1", &form.to_string())?;
    ensure!(info.is_ok(), "{info:?}");
    let (stats, log) = (w.stats()?.intents, w.log_length()?);
    let victim = hex::encode(tool_host_core::funds::deposit_subaccount(&p.owner));
    let input = serde_json::json!({
        "canister_id": w.ledger.0.to_text(),
        "to": p.stranger.to_text(),
        "amount": w.amt("1"),
        "from_subaccount": victim,
    })
    .to_string();
    let e = refused(
        w.tool(p.stranger, None, "prepare_icrc1_transfer", &input)?,
        "CUSTODY",
        "a transfer out of the owner's deposit prepared by a stranger",
    )?;
    ensure_eq!(e.issues[0].path, "$args[0].from_subaccount");
    ensure_eq!(w.stats()?.intents, stats, "nothing stored");
    ensure_eq!(w.log_length()?, log, "nothing sent");
    Ok(())
}

fn consent_without_the_digest_says_nothing(w: &mut World) -> Check {
    let x = w.prepare_transfer(&w.amt("1"))?;
    let h = w.host;
    let arg = candid::encode_one(tool_host_engine::types::DeclineArgs {
        intent_id: x.id,
        digest: None,
    })
    .expect("encodes");
    match h.consent_message(
        w.b(),
        Principal::anonymous(),
        consent_request("decline", arg, false),
    )? {
        Err(Icrc21Error::ConsentMessageUnavailable(e)) => {
            ensure!(
                !e.description.contains(&w.p.owner.to_text()),
                "{}",
                e.description
            );
            ensure!(
                !e.description.contains(&w.p.recipient.to_text()),
                "{}",
                e.description
            );
        }
        other => fail!("decline's consent message without the digest: {other:?}"),
    }
    Ok(())
}

fn a_form_in_use_is_never_replaced(w: &mut World) -> Check {
    let x = w.prepare_transfer(&w.amt("1"))?;
    let (h, admin) = (w.host, w.p.admin);
    let changed = ICRC1_FORM.replace("Transfer tokens", "Send tokens");
    let e = refused(
        h.register_form(w.b(), admin, "icrc1", &changed)?,
        "IN_USE",
        "replacing a form an open intent uses",
    )?;
    ensure!(e.message.contains(&x.id.to_string()), "{}", e.message);
    let r = w.confirm_ok(x.id, &x.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("success"), "{}", r.content);
    // Settled, it no longer holds the form.
    let ok = h.register_form(w.b(), admin, "icrc1", &changed)?;
    ensure!(ok.is_ok(), "{ok:?}");
    Ok(())
}
