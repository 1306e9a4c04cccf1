//! The timer's other work: an unconfirmed preview expires after `preview_ttl_seconds`, a
//! settled intent is removed after `retention_seconds`, and the refs are read again every
//! `refs_refresh_seconds`.

use crate::Scenario;
use std::time::Duration;
use tool_host_tests::backend::QUIET_ROUNDS;
use tool_host_tests::check::{refused, ApiOk, Check};
use tool_host_tests::world::World;
use tool_host_tests::{ensure, ensure_eq};

pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario::new(
        "timers::expire_prune_refresh",
        expire_prune_refresh,
    )]
}

fn wait(w: &mut World, seconds: u64) -> Check {
    w.b.advance_time(Duration::from_secs(seconds + 1));
    w.b.run_until_quiet(QUIET_ROUNDS)?;
    Ok(())
}

fn expire_prune_refresh(w: &mut World) -> Check {
    let limits = w.limits()?;
    let (owner, ledger) = (w.p.owner, w.ledger.0);
    let refreshed_at = |w: &mut World| -> Check<Option<u64>> {
        let targets = w
            .host
            .list_canisters(w.b.as_mut(), owner)?
            .ok_or_fail("list_canisters")?;
        Ok(targets
            .iter()
            .find(|t| t.id == ledger)
            .and_then(|t| t.refs_updated_at))
    };
    let first_refresh = refreshed_at(w)?;
    ensure!(first_refresh.is_some());

    let p = w.prepare_transfer(&w.amt("1"))?;
    let log = w.log_length()?;
    wait(w, limits.preview_ttl_seconds)?;
    let i = w.intent(p.id)?;
    ensure_eq!(i.status, "settled");
    ensure_eq!(i.outcome.as_deref(), Some("expired"));
    let r = w.confirm_ok(p.id, &p.digest)?;
    ensure_eq!(
        r.outcome.as_deref(),
        Some("expired"),
        "an expired preview is never sent"
    );
    ensure_eq!(w.log_length()?, log);
    ensure_eq!(w.stats()?.intents, 1);

    wait(w, limits.retention_seconds)?;
    refused(
        w.host.get_intent(w.b.as_mut(), owner, p.id)?,
        "NOT_FOUND",
        "a pruned intent",
    )?;
    ensure_eq!(w.stats()?.intents, 0);
    ensure!(w.intents()?.is_empty());

    // More than refs_refresh_seconds have passed: the refs were read again.
    ensure!(
        limits.retention_seconds > limits.refs_refresh_seconds,
        "the wait covers a refresh"
    );
    let later = refreshed_at(w)?;
    ensure!(later > first_refresh, "{first_refresh:?} then {later:?}");
    Ok(())
}
