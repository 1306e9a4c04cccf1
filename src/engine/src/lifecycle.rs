//! Install and upgrade: every piece of state is in stable structures, so an upgrade only
//! re-opens them; the heap caches and the timer are made again here.

use crate::catalog;
use crate::model::Status;
use crate::outcome::{self, SendResult};
use crate::runtime::Runtime;
use crate::schedule;
use crate::send::schedule_reconcile;
use crate::types::Stats;

/// After `init`: the refs refresh is scheduled and the timer armed.
pub fn after_init<R: Runtime>(rt: &R) {
    rt.with_state(|s| {
        catalog::current(s);
    });
    schedule::ensure_refresh(rt);
    schedule::restart(rt);
}

/// After `post_upgrade`: a send that was in flight across the upgrade lost its reply (an unknown
/// outcome); the catalog is rebuilt; timers are re-armed from the stable task index.
pub fn after_upgrade<R: Runtime>(rt: &R) {
    let now = rt.now();
    rt.with_state(|s| {
        let ids: Vec<u64> = s.in_flight.keys().collect();
        for id in ids {
            if let Some(mut i) = s.intents.get(&id) {
                if i.status == Status::InFlight {
                    if let Some(n) = s.journaled_log_length(id) {
                        i.log_length = Some(n);
                    }
                    let (_, follow) = outcome::apply(&mut i, &SendResult::Undecodable("the tool host was upgraded while the send was in flight; its reply was lost".into()), false);
                    if follow == outcome::Follow::Reconcile {
                        schedule_reconcile(s, &mut i, now);
                    }
                    i.updated_at = now;
                    s.put_intent(i);
                }
            }
        }
        catalog::current(s);
    });
    schedule::ensure_refresh(rt);
    schedule::restart(rt);
}

pub fn stats<R: Runtime>(rt: &R, stable_bytes: u64) -> Stats {
    rt.with_state(|s| Stats {
        forms: s.forms.len(),
        canisters: s.targets.len(),
        intents: s.intents.len(),
        open_intents: s.intent_keys.len(),
        due_tasks: s.due.len(),
        stable_bytes,
    })
}

/// Copies a settled intent `n` times under new ids and owners, as a benchmark's stand-in for
/// real traffic (the canister exposes it only when built with its `bench` feature). Returns the
/// last id used.
pub fn clone_settled_intents<R: Runtime>(rt: &R, template: u64, n: u64) -> Result<u64, String> {
    let now = rt.now();
    rt.with_state(|s| {
        let t = s.intents.get(&template).ok_or("no template intent")?;
        if !t.status.is_final() {
            return Err("the template must be settled".into());
        }
        let mut last = 0;
        for _ in 0..n {
            let id = s.next_intent_id();
            let mut i = t.clone();
            i.id = id;
            i.owner = candid::Principal::from_slice(&id.to_be_bytes());
            i.identity = sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(
                id.to_be_bytes(),
            ))
            .into();
            i.settled_at = Some(now);
            crate::send::schedule_prune(s, &i);
            s.put_intent(i);
            last = id;
        }
        Ok(last)
    })
}
