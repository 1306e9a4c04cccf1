//! Install and upgrade: every piece of state is in stable structures, so an upgrade only
//! re-opens them; the heap caches and the timer are made again here.

use crate::catalog;
use crate::model::{InFlight, Status};
use crate::runtime::Runtime;
use crate::schedule;
use crate::send::abandon_send;
use crate::types::Stats;

/// After `init`: the refs refresh is scheduled and the timer armed.
pub fn after_init<R: Runtime>(rt: &R) {
    rt.with_state(|s| {
        catalog::current(s);
    });
    schedule::ensure_refresh(rt);
    schedule::restart(rt);
}

/// Before an upgrade takes effect (`post_upgrade`): with sends in flight it is refused unless
/// forced, since their replies would reach code that no longer knows them; stop the canister
/// first (stopping waits for every reply), then install, then start.
pub fn check_upgrade<R: Runtime>(rt: &R, force: bool) -> Result<(), String> {
    let n = rt.with_state(|s| s.in_flight.len() + s.in_flight_v1.as_ref().map_or(0, |m| m.len()));
    if n > 0 && !force {
        return Err(format!("{n} send(s) in flight: upgrade a stopped canister (stop, install, start), or pass `force = opt true` to make their outcomes unknown and reconcile them"));
    }
    Ok(())
}

/// After `post_upgrade`: a send that was in flight across a (forced) upgrade lost its reply (an
/// unknown outcome, reconciled); the catalog is rebuilt; timers are re-armed from the stable
/// task index.
pub fn after_upgrade<R: Runtime>(rt: &R) {
    let now = rt.now();
    rt.with_state(|s| {
        if !s.config.get().indexes_built {
            build_indexes(s);
        }
        // Version 1's journal: its entries carried over, then the retired structure emptied.
        if let Some(mut old) = s.in_flight_v1.take() {
            let entries: Vec<(u64, u64)> = old.iter().map(|e| e.into_pair()).collect();
            for (id, log_length) in entries {
                if let Some(i) = s.intents.get(&id) {
                    s.in_flight.insert(id, InFlight {
                        attempt: i.attempts.len() as u32,
                        log_length: (log_length != u64::MAX).then_some(log_length),
                        journals: false,
                        watchdog_at: now,
                    });
                }
                old.remove(&id);
            }
        }
        let ids: Vec<u64> = s.in_flight.keys().collect();
        for id in ids {
            let Some(journal) = s.in_flight.get(&id) else { continue };
            match s.intents.get(&id) {
                Some(mut i) if i.status == Status::InFlight => {
                    abandon_send(s, &mut i, &journal, now, "the tool host was upgraded while the send was in flight; its reply was lost");
                    s.put_intent(i);
                }
                _ => {
                    s.in_flight.remove(&id);
                    s.watchdogs.remove(&(journal.watchdog_at, id));
                }
            }
        }
        catalog::current(s);
    });
    schedule::ensure_refresh(rt);
    schedule::restart(rt);
}

/// After an upgrade from version 1 (once): the indexes version 2 added are built from the
/// intents kept — every stamp raises its arguments' floor, every intent not settled enters the
/// uses index, every intent counts for its owner and its input for the stored bytes. The one
/// upgrade that reads every intent; later ones read none.
fn build_indexes<M: ic_stable_structures::Memory>(s: &mut crate::state::State<M>) {
    let mut stored = 0u64;
    let mut owners: std::collections::BTreeMap<candid::Principal, u32> = Default::default();
    let mut floors: std::collections::BTreeMap<(candid::Principal, [u8; 32]), u64> =
        Default::default();
    let mut uses = vec![];
    for e in s.intents.iter() {
        let (id, i) = e.into_pair();
        stored += i.input_json.len() as u64;
        *owners.entry(i.owner).or_default() += 1;
        if let Some(stamp) = i.stamp_ns {
            let f = floors.entry((i.owner, i.identity)).or_insert(stamp);
            *f = (*f).max(stamp);
        }
        if !i.status.is_final() {
            uses.push((crate::state::use_key(&i.form_id, &i.canister, &i.tool), id));
        }
    }
    for ((owner, identity), stamp) in floors {
        s.raise_stamp_floor(owner, identity, stamp);
    }
    for (k, id) in uses {
        s.open_uses.insert(crate::state::UseEntry::new(&k, id), ());
    }
    for (o, n) in owners {
        s.owner_totals.insert(o, n);
    }
    s.update_config(|c| {
        c.stored_input_bytes = stored;
        c.indexes_built = true;
    });
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
            let id = s.next_intent_id(t.input_json.len() as u64);
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
