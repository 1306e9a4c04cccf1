//! Oversized and malformed inputs, each refused with its code, and in each case nothing
//! changes: the stats, the owner's intents and the ledger's log are as before.

use crate::Scenario;
use tool_host_engine::types::{IntentView, Stats};
use tool_host_tests::backend::BackendError;
use tool_host_tests::check::{refused, Check};
use tool_host_tests::world::{World, ICRC1_FORM};
use tool_host_tests::{ensure, ensure_eq, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "inputs::malformed_inputs_change_nothing",
            malformed_inputs_change_nothing,
        ),
        Scenario::new("inputs::limits_change_nothing", limits_change_nothing),
    ]
}

/// What must not change when a call is refused.
#[derive(Debug, PartialEq)]
struct Observed {
    stats: Stats,
    intents: Vec<IntentView>,
    log: u64,
}

fn observe(w: &mut World) -> Check<Observed> {
    let mut stats = w.stats()?;
    // The stable memory's size is not what the scenario watches.
    stats.stable_bytes = 0;
    Ok(Observed {
        stats,
        intents: w.intents()?,
        log: w.log_length()?,
    })
}

/// Runs a refused call and checks that nothing changed.
fn unchanged(w: &mut World, what: &str, call: impl FnOnce(&mut World) -> Check) -> Check {
    let before = observe(w)?;
    call(w).map_err(|e| tool_host_tests::check::Fail::Failed(format!("{what}: {e}")))?;
    let after = observe(w)?;
    ensure_eq!(after, before, "{what} changed the state");
    Ok(())
}

fn malformed_inputs_change_nothing(w: &mut World) -> Check {
    let p = w.p;
    let x = w.prepare_transfer(&w.amt("1"))?;
    let ledger = w.ledger.0.to_text();

    unchanged(w, "input that is not JSON", |w| {
        let e = refused(
            w.tool(
                p.agent,
                Some(p.owner),
                "prepare_icrc1_transfer",
                "{not json",
            )?,
            "INVALID_INPUT",
            "not JSON",
        )?;
        ensure!(
            e.issues.iter().any(|i| i.code == "E_INPUT"),
            "{:?}",
            e.issues
        );
        Ok(())
    })?;
    unchanged(w, "an unknown tool", |w| {
        refused(
            w.tool(p.agent, Some(p.owner), "prepare_icrc9_steal", "{}")?,
            "UNKNOWN_TOOL",
            "unknown tool",
        )
        .map(|_| ())
    })?;
    unchanged(w, "every issue at once", |w| {
        // One fraction digit more than the ledger's decimals.
        let too_precise = format!("1.{}", "1".repeat(usize::from(w.token.decimals) + 1));
        let input = serde_json::json!({
            "canister_id": ledger,
            "spender": "not-a-principal",
            "amount": too_precise,
            "expected_allowance": "1 XYZ",
        })
        .to_string();
        let e = refused(
            w.tool(p.agent, Some(p.owner), "prepare_icrc2_approve", &input)?,
            "INVALID_INPUT",
            "three bad inputs",
        )?;
        let mut codes: Vec<&str> = e.issues.iter().map(|i| i.code.as_str()).collect();
        codes.sort();
        ensure_eq!(
            codes,
            vec!["E_PRECISION", "E_PRINCIPAL", "E_UNIT"],
            "{:?}",
            e.issues
        );
        Ok(())
    })?;
    unchanged(w, "an unknown intent", |w| {
        refused(w.confirm(9_999, &x.digest)?, "NOT_FOUND", "confirm")?;
        let owner = w.p.owner;
        refused(w.host.decline(w.b(), owner, 9_999)?, "NOT_FOUND", "decline")?;
        refused(
            w.host.get_intent(w.b(), owner, 9_999)?,
            "NOT_FOUND",
            "get_intent",
        )?;
        let commit = serde_json::json!({ "preview_id": "9999" }).to_string();
        refused(
            w.tool(p.agent, Some(p.owner), "commit", &commit)?,
            "NOT_FOUND",
            "commit",
        )?;
        Ok(())
    })?;
    unchanged(w, "a digest that does not match", |w| {
        refused(w.confirm(x.id, &[0; 32])?, "DIGEST_MISMATCH", "confirm")?;
        let commit =
            serde_json::json!({ "preview_id": x.id.to_string(), "digest": "00".repeat(32) })
                .to_string();
        refused(
            w.tool(p.owner, None, "commit", &commit)?,
            "DIGEST_MISMATCH",
            "commit",
        )?;
        Ok(())
    })?;
    unchanged(w, "a confirm by someone else", |w| {
        let h = w.host;
        refused(
            h.confirm(w.b(), p.stranger, x.id, &x.digest)?,
            "NOT_OWNER",
            "stranger",
        )?;
        refused(
            h.confirm(w.b(), p.agent, x.id, &x.digest)?,
            "NOT_OWNER",
            "agent",
        )?;
        Ok(())
    })?;
    unchanged(w, "a malformed form", |w| {
        let c = w.p.controller;
        let e = refused(
            w.host
                .register_form(w.b(), c, "broken", "{\"format\": 1}")?,
            "INVALID_FORM",
            "malformed form",
        )?;
        ensure!(!e.issues.is_empty());
        refused(
            w.host.register_form(w.b(), c, "bad id!", ICRC1_FORM)?,
            "INVALID_ARGUMENT",
            "form id",
        )?;
        Ok(())
    })?;
    // The intent that was prepared first is untouched by all of this.
    let i = w.intent(x.id)?;
    ensure_eq!(i.status, "open");
    ensure!(i.attempts.is_empty());
    Ok(())
}

fn limits_change_nothing(w: &mut World) -> Check {
    let p = w.p;
    let defaults = w.limits()?;

    // A form over the size limit.
    let mut small = defaults.clone();
    small.max_form_bytes = 1024;
    w.set_limits(small)?;
    unchanged(w, "a form over max_form_bytes", |w| {
        let c = w.p.controller;
        refused(
            w.host.register_form(w.b(), c, "icrc1-copy", ICRC1_FORM)?,
            "TOO_LARGE",
            "form",
        )
        .map(|_| ())
    })?;
    w.set_limits(defaults.clone())?;

    // An input over the input limit, then one too large for the door.
    unchanged(w, "an input over max_input_bytes", |w| {
        let big = format!("{{\"pad\": \"{}\"}}", "x".repeat(70 * 1024));
        refused(
            w.tool(p.agent, Some(p.owner), "prepare_icrc1_transfer", &big)?,
            "TOO_LARGE",
            "input",
        )
        .map(|_| ())
    })?;
    unchanged(w, "an argument over the door's limit", |w| {
        let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(100 * 1024));
        let h = w.host;
        match h.call_tool(
            w.b(),
            p.agent,
            "prepare_icrc1_transfer",
            &huge,
            Some(p.owner),
        ) {
            Err(BackendError::Reject { .. }) => Ok(()),
            other => fail!("a 100 KiB argument got through inspect_message: {other:?}"),
        }
    })?;
    unchanged(w, "a form argument over the door's limit", |w| {
        let c = w.p.controller;
        let huge = " ".repeat(310 * 1024);
        match w.host.register_form(w.b(), c, "huge", &huge) {
            Err(BackendError::Reject { .. }) => Ok(()),
            other => fail!("a 310 KiB form got through inspect_message: {other:?}"),
        }
    })?;

    // More open intents than the owner's cap.
    let mut capped = defaults.clone();
    capped.max_open_intents_per_owner = 2;
    w.set_limits(capped)?;
    w.prepare_transfer(&w.amt("1"))?;
    w.prepare_transfer(&w.amt("2"))?;
    unchanged(w, "a third open intent over a cap of 2", |w| {
        let input = w.transfer_input(&w.amt("3"));
        refused(
            w.tool(p.agent, Some(p.owner), "prepare_icrc1_transfer", &input)?,
            "LIMIT",
            "cap",
        )
        .map(|_| ())
    })?;
    // Preparing one that exists is not a new intent: still answered.
    w.prepare_transfer(&w.amt("2"))?;
    // Invalid limits are refused and change nothing.
    let mut invalid = defaults.clone();
    invalid.call_timeout_seconds = 0;
    let c = w.p.controller;
    refused(
        w.host.set_limits(w.b(), c, invalid)?,
        "INVALID_ARGUMENT",
        "a zero call timeout",
    )?;
    ensure_eq!(w.limits()?.max_open_intents_per_owner, 2);
    w.set_limits(defaults)?;
    Ok(())
}
