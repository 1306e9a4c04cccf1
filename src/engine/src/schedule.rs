//! The timer: one wake-up at the earliest due task. A tick takes the due tasks (expire previews,
//! reconcile unknown outcomes, prune settled intents and expired turns, refresh refs), runs
//! them and re-arms.
//! Tasks live in stable memory, so `post_upgrade` re-arms from them.

use crate::model::{Status, TaskKind};
use crate::registry;
use crate::runtime::Runtime;
use crate::send::settle;

/// Entries one tick takes at most from each index (tasks, watchdogs, expiries); the rest run at
/// the next tick (armed at once).
pub const BATCH: usize = 32;

/// When a tick that never finishes (its callback trapped) is followed by another: one call's
/// deadline and a margin. A tick that does finish re-arms for the earliest task instead.
pub fn fallback_ns(timeout_seconds: u32) -> u64 {
    (timeout_seconds as u64 + 5) * 1_000_000_000
}

/// Asks the runtime for a wake-up at the earliest due task, if that changed (a wake-up that
/// should have happened by now is asked for again: it fired, or its tick trapped).
pub fn rearm<R: Runtime>(rt: &R) {
    let now = rt.now();
    let want = rt.with_state(|s| {
        s.scheduled_since = None;
        let next = s.next_due();
        let stale = s.armed_at.is_some_and(|a| a <= now);
        if next.is_some() && (next != s.armed_at || stale) {
            s.armed_at = next;
            next
        } else {
            None
        }
    });
    if let Some(at) = want {
        rt.wake_at(at);
    }
}

/// After a message that only added tasks: nothing to do when the armed wake-up is still to
/// come and no later than the new tasks; otherwise [`rearm`] (a wake-up is never moved past
/// the earliest task, whatever a tick that trapped left behind).
pub fn arm_new<R: Runtime>(rt: &R) {
    let now = rt.now();
    let covered = rt.with_state(|s| match s.scheduled_since.take() {
        None => true,
        Some(at) => s.armed_at.is_some_and(|armed| armed <= at && armed > now),
    });
    if !covered {
        rearm(rt);
    }
}

/// After an upgrade the runtime's timers are gone: forget what was armed and arm again.
pub fn restart<R: Runtime>(rt: &R) {
    rt.with_state(|s| {
        s.armed_at = None;
    });
    rearm(rt);
}

/// Runs the due tasks, at most [`BATCH`]. A task leaves the index only when it is done, in the
/// same step as its work; one that awaits (a reconciliation) is leased first (moved past its
/// calls), so a trap or an upgrade in between leaves it due again, never lost. Nothing but the
/// stable index says what is due or running.
pub async fn tick<R: Runtime>(rt: &R) {
    let now = rt.now();
    // If this tick never finishes (a callback traps), a wake-up is still armed: the fallback.
    let fallback = rt.with_state(|s| {
        let at = now.saturating_add(fallback_ns(s.limits().call_timeout_seconds));
        s.armed_at = Some(at);
        at
    });
    rt.wake_at(fallback);
    type Due = (Vec<(u64, u8, u64)>, Vec<(u64, u64)>, Vec<(u64, u64)>);
    let (batch, watchdogs, expiries): Due = rt.with_state(|s| {
        let tasks = s
            .due
            .keys()
            .take_while(|(at, _, _)| *at <= now)
            .take(BATCH)
            .collect();
        let watchdogs = s
            .watchdogs
            .keys()
            .take_while(|(at, _)| *at <= now)
            .take(BATCH)
            .collect();
        (tasks, watchdogs, s.due_expiries(now, BATCH))
    });
    let now = rt.now();
    rt.with_state(|s| {
        for key in watchdogs {
            if s.watchdogs.remove(&key).is_some() {
                watchdog(s, key.1, key.0, now);
            }
        }
        for (at, id) in expiries {
            if s.take_expiry(at, id) {
                expire(s, id, now);
            }
        }
    });
    for key in batch {
        let (at, kind, id) = key;
        match TaskKind::from_byte(kind) {
            Some(TaskKind::Reconcile) => crate::reconcile::run(rt, id, at).await,
            Some(TaskKind::Refresh) => {
                // The next refresh is scheduled before this one's awaits.
                if take_refresh(rt, key) {
                    refresh(rt).await;
                }
            }
            _ => {
                let now = rt.now();
                rt.with_state(|s| {
                    if s.due.remove(&key).is_some() {
                        match TaskKind::from_byte(kind) {
                            Some(TaskKind::Expire) => expire(s, id, now),
                            Some(TaskKind::Prune) => prune(s, id, now),
                            Some(TaskKind::PruneTurn) => crate::bus::turns::prune(s, id, now),
                            Some(TaskKind::PruneInbox) => crate::bus::builtins::prune(s, id, now),
                            // A byte no kind has: removed, nothing run.
                            _ => {}
                        }
                    }
                });
            }
        }
    }
    rearm(rt);
}

/// A send still in flight at its watchdog: its callback trapped or never ran, so its reply is
/// lost; its outcome is unknown (or, if the transfer itself was never sent, not executed).
fn watchdog<M: ic_stable_structures::Memory>(
    s: &mut crate::state::State<M>,
    id: u64,
    at: u64,
    now: u64,
) {
    let Some(journal) = s.in_flight.get(&id).filter(|e| e.watchdog_at == at) else {
        return;
    };
    let Some(mut i) = s.intents.get(&id) else {
        return;
    };
    if i.status != Status::InFlight {
        return;
    }
    crate::send::abandon_send(
        s,
        &mut i,
        &journal,
        now,
        "no reply was applied by the watchdog's time: the send's callback trapped or never ran",
    );
    s.put_intent(i);
}

/// A preview never confirmed settles as expired.
fn expire<M: ic_stable_structures::Memory>(s: &mut crate::state::State<M>, id: u64, now: u64) {
    if let Some(mut i) = s.intents.get(&id) {
        if i.status.is_final() {
            // Settled before its expiry: its prune was left to this task. Settled at or after
            // it (`send::settle` scheduled the prune then), it has one: a second, at another
            // time if the retention changed since, would outlive the intent.
            if i.settled_at.is_none_or(|t| t < i.expires_at) {
                crate::send::schedule_prune(s, &i, now, crate::send::PruneBy::Task);
            }
        } else if i.status == Status::Open && now >= i.expires_at {
            settle(
                s,
                &mut i,
                now,
                "expired",
                Some("the preview expired before it was confirmed".into()),
            );
            s.put_intent(i);
        }
        // In flight: the send's outcome decides (an open intent gets its expiry again then).
    }
}

/// Settled intents are removed once the retention period (and their stamp's window) passed;
/// their stamp floor goes earlier, once that window has passed (`send::schedule_prune`).
fn prune<M: ic_stable_structures::Memory>(s: &mut crate::state::State<M>, id: u64, now: u64) {
    if let Some(i) = s.intents.get(&id) {
        if !i.status.is_final() {
            return;
        }
        if now >= crate::send::prune_due(s, &i) {
            s.remove_intent(id);
        } else {
            // Its floor's time (the floor goes, the removal is scheduled), or the retention
            // period grew since: wait for the new one.
            crate::send::schedule_prune(s, &i, now, crate::send::PruneBy::Task);
        }
    }
}

/// Takes the refresh task and schedules the next one, in one step before any await.
fn take_refresh<R: Runtime>(rt: &R, key: (u64, u8, u64)) -> bool {
    let now = rt.now();
    rt.with_state(|s| {
        if s.due.remove(&key).is_none() {
            return false;
        }
        let at = now.saturating_add(
            s.limits()
                .refs_refresh_seconds
                .saturating_mul(1_000_000_000),
        );
        s.schedule(at, TaskKind::Refresh, 0);
        s.update_config(|c| c.refresh_at = Some(at));
        true
    })
}

/// Reads every target's refs again (the next refresh is already scheduled).
async fn refresh<R: Runtime>(rt: &R) {
    let ids: Vec<candid::Principal> = rt.with_state(|s| s.targets.keys().collect());
    for id in ids {
        registry::refresh_target(rt, id).await;
    }
    rt.with_state(|s| {
        crate::catalog::bus(s);
    });
}

/// Makes sure a refs refresh is scheduled (at init and after upgrades), without scanning tasks.
pub fn ensure_refresh<R: Runtime>(rt: &R) {
    let now = rt.now();
    rt.with_state(|s| {
        let every = s
            .limits()
            .refs_refresh_seconds
            .saturating_mul(1_000_000_000);
        match s.config.get().refresh_at {
            Some(at) if s.due.contains_key(&TaskKind::Refresh.key(at, 0)) => {}
            _ => {
                let at = now.saturating_add(every);
                s.schedule(at, TaskKind::Refresh, 0);
                s.update_config(|c| c.refresh_at = Some(at));
            }
        }
    });
}
