//! The timer: one wake-up at the earliest due task. A tick takes the due tasks (expire previews,
//! reconcile unknown outcomes, prune settled intents, refresh refs), runs them and re-arms.
//! Tasks live in stable memory, so `post_upgrade` re-arms from them.

use crate::model::{task, Status};
use crate::registry;
use crate::runtime::Runtime;
use crate::send::settle;

/// Tasks one tick takes at most; the rest run at the next tick (armed at once).
pub const BATCH: usize = 32;

/// Asks the runtime for a wake-up at the earliest due task, if that changed.
pub fn rearm<R: Runtime>(rt: &R) {
    let want = rt.with_state(|s| {
        s.scheduled_since = None;
        let next = s.next_due();
        if next.is_some() && next != s.armed_at {
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

/// After a message that only added tasks: a wake-up earlier than the armed one when a new task
/// needs it. Cheaper than [`rearm`] (no read of the task index); a wake-up armed for a task that
/// is gone since only makes a tick that finds nothing and re-arms.
pub fn arm_new<R: Runtime>(rt: &R) {
    let want = rt.with_state(|s| {
        let at = s.scheduled_since.take()?;
        if s.armed_at.is_some_and(|armed| armed <= at) {
            return None;
        }
        s.armed_at = Some(at);
        Some(at)
    });
    if let Some(at) = want {
        rt.wake_at(at);
    }
}

/// After an upgrade the runtime's timers are gone: forget what was armed and arm again.
pub fn restart<R: Runtime>(rt: &R) {
    rt.with_state(|s| {
        s.armed_at = None;
        s.running.clear();
    });
    rearm(rt);
}

pub async fn tick<R: Runtime>(rt: &R) {
    let now = rt.now();
    let batch: Vec<(u8, u64)> = rt.with_state(|s| {
        s.armed_at = None;
        let due: Vec<(u64, u8, u64)> = s
            .due
            .keys()
            .take_while(|(at, _, _)| *at <= now)
            .take(BATCH)
            .collect();
        let mut out = vec![];
        for key in due {
            s.due.remove(&key);
            if s.running.insert((key.1, key.2)) {
                out.push((key.1, key.2));
            }
        }
        out
    });
    for (kind, id) in batch {
        match kind {
            task::EXPIRE => expire(rt, id),
            task::PRUNE => prune(rt, id),
            task::RECONCILE => crate::reconcile::run(rt, id).await,
            task::REFRESH => refresh(rt).await,
            _ => {}
        }
        rt.with_state(|s| s.running.remove(&(kind, id)));
    }
    rearm(rt);
}

/// A preview never confirmed settles as expired.
fn expire<R: Runtime>(rt: &R, id: u64) {
    let now = rt.now();
    rt.with_state(|s| {
        if let Some(mut i) = s.intents.get(&id) {
            if i.status.is_final() {
                // Settled before its expiry: its prune was left to this task.
                crate::send::schedule_prune(s, &i);
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
        }
    });
}

/// Settled intents are removed once the retention period has passed.
fn prune<R: Runtime>(rt: &R, id: u64) {
    let now = rt.now();
    rt.with_state(|s| {
        let retention = s.limits().retention_seconds.saturating_mul(1_000_000_000);
        if let Some(i) = s.intents.get(&id) {
            if !i.status.is_final() {
                return;
            }
            let due = i
                .settled_at
                .unwrap_or(i.updated_at)
                .saturating_add(retention);
            if now >= due {
                s.remove_intent(id);
            } else {
                // The retention period grew since: wait for the new one.
                crate::send::schedule_prune(s, &i);
            }
        }
    });
}

/// Reads every target's refs again, then schedules the next refresh.
async fn refresh<R: Runtime>(rt: &R) {
    let ids: Vec<candid::Principal> = rt.with_state(|s| s.targets.keys().collect());
    for id in ids {
        registry::refresh_target(rt, id).await;
    }
    let now = rt.now();
    rt.with_state(|s| {
        let at = now.saturating_add(
            s.limits()
                .refs_refresh_seconds
                .saturating_mul(1_000_000_000),
        );
        s.schedule(at, task::REFRESH, 0);
        s.update_config(|c| c.refresh_at = Some(at));
        crate::catalog::current(s);
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
            Some(at) if s.due.contains_key(&(at, task::REFRESH, 0)) => {}
            _ => {
                let at = now.saturating_add(every);
                s.schedule(at, task::REFRESH, 0);
                s.update_config(|c| c.refresh_at = Some(at));
            }
        }
    });
}
