//! ICRC-2: the owner approves the tool host on the ledger directly; the agent prepares
//! `icrc2_transfer_from` and the owner confirms. Tokens move from the owner's own account
//! within the allowance; beyond it the ledger answers InsufficientAllowance (fix_input).

use crate::Scenario;
use candid::Nat;
use test_ledger::types::ApproveArgs;
use tool_host_tests::check::Check;
use tool_host_tests::clients::nat_u64;
use tool_host_tests::world::{account, World, DEPOSIT_TOKENS, OWN_TOKENS};
use tool_host_tests::{ensure, ensure_eq, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario::new(
        "icrc2::transfer_from_within_allowance",
        transfer_from_within_allowance,
    )]
}

fn transfer_from_within_allowance(w: &mut World) -> Check {
    let (owner, host) = (w.p.owner, w.host.0);
    let (token, fee) = (w.tokens(1), w.fee());
    let allowance = 10 * token;
    let approve = ApproveArgs {
        from_subaccount: None,
        spender: account(host),
        amount: Nat::from(allowance),
        expected_allowance: None,
        expires_at: None,
        fee: None,
        memo: None,
        created_at_time: None,
    };
    if let Err(e) = w.ledger.approve(w.b.as_mut(), owner, approve)? {
        fail!("approve: {e:?}");
    }
    let own = account(owner);
    let after_approve = w.tokens(OWN_TOKENS) - fee;
    ensure_eq!(w.balance(&own)?, after_approve);

    let input = |amount: &str, w: &World| {
        serde_json::json!({
            "canister_id": w.ledger.0.to_text(),
            "to": w.p.recipient.to_text(),
            "amount": amount,
        })
        .to_string()
    };
    let p = w.prepare("prepare_icrc2_transfer_from", &input(&w.amt("2"), w))?;
    ensure_eq!(p.json["preview"]["method"], "icrc2_transfer_from");
    ensure_eq!(p.json["preview"]["arguments"]["from"], owner.to_text());
    let log = w.log_length()?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("success"), "{}", r.content);
    ensure_eq!(w.log_length()?, log + 1);
    ensure_eq!(w.balance(&own)?, after_approve - 2 * token - fee);
    ensure_eq!(w.balance(&account(w.p.recipient))?, 2 * token);
    let left = w
        .ledger
        .allowance(w.b.as_mut(), own.clone(), account(host))?;
    ensure_eq!(nat_u64(&left.allowance), allowance - 2 * token - fee);
    // The deposit account was not touched.
    let deposit = w.deposit.clone();
    ensure_eq!(w.balance(&deposit)?, w.tokens(DEPOSIT_TOKENS));

    // Beyond what is left of the allowance.
    let p = w.prepare("prepare_icrc2_transfer_from", &input(&w.amt("20"), w))?;
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("fix_input"), "{}", r.content);
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "settled");
    ensure!(
        i.reply
            .as_deref()
            .unwrap_or("")
            .contains("InsufficientAllowance"),
        "{:?}",
        i.reply
    );
    ensure_eq!(w.log_length()?, log + 1, "nothing more was sent");
    ensure_eq!(w.balance(&own)?, after_approve - 2 * token - fee);
    Ok(())
}
