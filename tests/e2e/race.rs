//! Two confirms of one intent submitted together, before either executes: the in-flight mark
//! taken before the first await lets exactly one send through.

use crate::Scenario;
use tool_host_engine::types::{ApiError, ToolResult};
use tool_host_tests::backend::{decode, BackendExt};
use tool_host_tests::check::Check;
use tool_host_tests::clients::confirm_args;
use tool_host_tests::world::{account, World};
use tool_host_tests::{ensure, ensure_eq, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new("race::two_confirms_one_send", two_confirms_one_send),
        Scenario::new(
            "race::decline_while_confirm_in_flight",
            decline_while_confirm_in_flight,
        ),
    ]
}

fn two_confirms_one_send(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("3"))?;
    let log = w.log_length()?;
    let (host, owner) = (w.host.0, w.p.owner);
    let args = (confirm_args(p.id, &p.digest),);
    let a = w.b.submit_typed(host, owner, "confirm", args.clone())?;
    let b = w.b.submit_typed(host, owner, "confirm", args)?;
    let mut answers = vec![];
    for m in [a, b] {
        let reply = w.b.await_reply(m)?;
        let (r,): (Result<ToolResult, ApiError>,) = decode("confirm", &reply)?;
        answers.push(r);
    }
    let successes = answers
        .iter()
        .filter(|r| matches!(r, Ok(t) if t.outcome.as_deref() == Some("success")))
        .count();
    ensure_eq!(successes, 1, "{answers:?}");
    for r in &answers {
        match r {
            Ok(t) if matches!(t.outcome.as_deref(), Some("success" | "already_done")) => {}
            Err(e) if e.code == "IN_FLIGHT" => {}
            other => fail!("neither a send, already_done nor IN_FLIGHT: {other:?}"),
        }
    }
    ensure_eq!(w.log_length()?, log + 1, "exactly one send");
    let recipient = account(w.p.recipient);
    ensure_eq!(w.balance(&recipient)?, w.tokens(3));
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "done");
    ensure!(i.attempts.len() == 1, "one attempt: {:?}", i.attempts);
    Ok(())
}

/// A decline submitted with a confirm: refused while the send is in flight (or as settled
/// after it); the send goes through once.
fn decline_while_confirm_in_flight(w: &mut World) -> Check {
    let p = w.prepare_transfer(&w.amt("3"))?;
    let log = w.log_length()?;
    let (host, owner) = (w.host.0, w.p.owner);
    let confirm =
        w.b.submit_typed(host, owner, "confirm", (confirm_args(p.id, &p.digest),))?;
    let decline = w.b.submit_typed(
        host,
        owner,
        "decline",
        (tool_host_engine::types::DeclineArgs {
            intent_id: p.id,
            digest: None,
        },),
    )?;
    let (c,): (Result<ToolResult, ApiError>,) = decode("confirm", &w.b.await_reply(confirm)?)?;
    let (d,): (Result<ToolResult, ApiError>,) = decode("decline", &w.b.await_reply(decline)?)?;
    match &c {
        Ok(t) if t.outcome.as_deref() == Some("success") => {}
        other => fail!("the confirm: {other:?}"),
    }
    match &d {
        Err(e) if e.code == "IN_FLIGHT" || e.code == "SETTLED" => {}
        other => fail!("the decline: {other:?}"),
    }
    ensure_eq!(w.log_length()?, log + 1);
    ensure_eq!(w.intent(p.id)?.status, "done");
    Ok(())
}
