//! Install and upgrade: every piece of state is in stable structures, so an upgrade only
//! re-opens them; the heap caches and the timer are made again here.

use crate::catalog;
use crate::model::{InFlight, Status};
use crate::runtime::Runtime;
use crate::schedule;
use crate::send::abandon_send;
use crate::types::{HostArg, InitArgs, Limits, Stats, UpgradeArgs};
use candid::Principal;

/// Reads the install or upgrade argument: no argument at all (empty bytes or the empty
/// tuple, as `dfx deploy` sends without `--argument`) is `None`; anything else must be one
/// `HostArg`, never read leniently (an old `opt record` argument is refused, not taken for
/// "absent").
pub fn decode_host_arg(bytes: &[u8]) -> Result<Option<HostArg>, String> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let mut config = candid::DecoderConfig::new();
    config.set_skipping_quota(10_000);
    let read = || -> candid::Result<Option<HostArg>> {
        let mut de = candid::de::IDLDeserialize::new_with_config(bytes, &config)?;
        if de.is_done() {
            de.done()?;
            return Ok(None);
        }
        let arg = de.get_value::<HostArg>()?;
        // `done` would skip further values (Candid lets a callee ignore extra arguments).
        if !de.is_done() {
            return Err(candid::Error::msg("more than one argument value"));
        }
        de.done()?;
        Ok(Some(arg))
    };
    let refused = |e: candid::Error| {
        format!("the argument is not a HostArg (`variant {{ Init = record {{ ... }} }}` or `variant {{ Upgrade = ... }}`): {e}")
    };
    let Some(arg) = read().map_err(refused)? else {
        return Ok(None);
    };
    // Candid reads an `opt` field of another type as `null`: a mistyped `limits` or
    // `add_admins` would be dropped without a word. The same bytes read with `reserved` fields
    // say which fields were given at all.
    let given = {
        let mut de =
            candid::de::IDLDeserialize::new_with_config(bytes, &config).map_err(refused)?;
        de.get_value::<shape::HostArg>().map_err(refused)?
    };
    let dropped = match (&arg, &given) {
        (HostArg::Init(a), shape::HostArg::Init(g)) => {
            (a.limits.is_none() && g.limits.is_some()).then_some("limits")
        }
        (HostArg::Upgrade(a), shape::HostArg::Upgrade(g)) => {
            let a = a.clone().unwrap_or_default();
            let g = g.as_ref();
            let given = |f: fn(&shape::UpgradeArgs) -> bool| g.is_some_and(f);
            if a.limits.is_none() && given(|g| g.limits.is_some()) {
                Some("limits")
            } else if a.add_admins.is_none() && given(|g| g.add_admins.is_some()) {
                Some("add_admins")
            } else if a.force.is_none() && given(|g| g.force.is_some()) {
                Some("force")
            } else {
                None
            }
        }
        _ => None,
    };
    match dropped {
        Some(field) => Err(format!(
            "the argument is not a HostArg: its `{field}` is not of the type the .did gives it"
        )),
        None => Ok(Some(arg)),
    }
}

/// `HostArg` with every optional field `reserved`: which fields an argument gives, whatever
/// their types.
mod shape {
    use candid::{CandidType, Deserialize, Reserved};

    #[derive(CandidType, Deserialize)]
    pub enum HostArg {
        Init(InitArgs),
        Upgrade(Option<UpgradeArgs>),
    }
    #[derive(CandidType, Deserialize)]
    pub struct InitArgs {
        pub limits: Option<Reserved>,
    }
    #[derive(CandidType, Deserialize)]
    pub struct UpgradeArgs {
        pub force: Option<Reserved>,
        pub limits: Option<Reserved>,
        pub add_admins: Option<Reserved>,
    }
}

/// `canister_init`: the argument must be `Init` (or absent: no admins, default limits); its
/// admins and limits are checked as `add_admin` and `set_limits` check them before anything is
/// written. An `Err` is the trap message.
pub fn install<R: Runtime>(rt: &R, arg: Option<HostArg>) -> Result<(), String> {
    let args = match arg {
        None => InitArgs::default(),
        Some(HostArg::Init(a)) => a,
        Some(HostArg::Upgrade(_)) => {
            return Err("install refused: the argument is `Upgrade`; install with `(variant { Init = record { admins = vec {}; limits = null } })`".into())
        }
    };
    checked(&args.admins, args.limits.as_ref()).map_err(|e| format!("install refused: {e}"))?;
    apply(rt, &args.admins, args.limits);
    after_init(rt);
    Ok(())
}

/// `canister_post_upgrade`: the argument must be `Upgrade` (or absent, which changes nothing);
/// it is checked whole, then the in-flight rule ([`check_upgrade`]), and only then are the
/// admins and limits it names written. An `Err` is the trap message (the upgrade rolls back).
pub fn upgrade<R: Runtime>(rt: &R, arg: Option<HostArg>) -> Result<(), String> {
    let args = match arg {
        None | Some(HostArg::Upgrade(None)) => UpgradeArgs::default(),
        Some(HostArg::Upgrade(Some(a))) => a,
        Some(HostArg::Init(_)) => {
            return Err("upgrade refused: the argument is `Init`, which only an install takes; upgrade with `(variant { Upgrade = null })` or name what changes in `Upgrade = opt record { ... }`".into())
        }
    };
    let admins = args.add_admins.unwrap_or_default();
    checked(&admins, args.limits.as_ref()).map_err(|e| format!("upgrade refused: {e}"))?;
    check_upgrade(rt, args.force.unwrap_or(false)).map_err(|e| format!("upgrade refused: {e}"))?;
    apply(rt, &admins, args.limits);
    after_upgrade(rt);
    Ok(())
}

/// The checks the methods make: an admin is not anonymous (`add_admin`), limits are in their
/// bounds (`set_limits`). The message is the one those methods refuse with.
fn checked(admins: &[Principal], limits: Option<&Limits>) -> Result<(), String> {
    let refused = |e: crate::types::ApiError| format!("{}: {}", e.code, e.message);
    for a in admins {
        crate::auth::user(a).map_err(|e| format!("admin {a}: {}", refused(e)))?;
    }
    if let Some(l) = limits {
        crate::registry::check_limits(l).map_err(|e| format!("limits: {}", refused(e)))?;
    }
    Ok(())
}

fn apply<R: Runtime>(rt: &R, admins: &[Principal], limits: Option<Limits>) {
    let now = rt.now();
    rt.with_state(|s| {
        for a in admins {
            s.admins.insert(*a, now);
        }
        if let Some(l) = limits {
            s.set_limits(&l);
        }
    });
}

/// After `init`: the refs refresh is scheduled and the timer armed.
pub fn after_init<R: Runtime>(rt: &R) {
    rt.with_state(|s| {
        catalog::bus(s);
    });
    schedule::ensure_refresh(rt);
    schedule::restart(rt);
}

/// Before an upgrade takes effect (`post_upgrade`): with sends in flight it is refused unless
/// forced, since their replies would reach code that no longer knows them; stop the canister
/// first (stopping waits for every reply), then install, then start.
///
/// First, whatever the argument: the memory's layout must be one this code reads, and the
/// records an upgrade reads ones it knows (`State::check_layout`); a downgrade below the
/// release that wrote them is refused here, naming the layout numbers or the record and its
/// version, before anything is changed. (A config of a version this code does not know traps
/// earlier, when the state is opened, with the config's version named: refused all the same.)
pub fn check_upgrade<R: Runtime>(rt: &R, force: bool) -> Result<(), String> {
    rt.with_state(|s| s.check_layout()).map_err(|e| {
        format!(
            "{e}; this release cannot read it: install the release that wrote it (or a later one)"
        )
    })?;
    let n = rt.with_state(|s| s.in_flight.len() + s.in_flight_v1.as_ref().map_or(0, |m| m.len()));
    if n > 0 && !force {
        return Err(format!("{n} send(s) in flight: upgrade a stopped canister (stop, install, start), or pass `force = opt true` to make their outcomes unknown and reconcile them"));
    }
    Ok(())
}

/// After `post_upgrade`: a send that was in flight across a (forced) upgrade lost its reply (an
/// unknown outcome, reconciled); timers are re-armed from the stable task index; the catalog
/// (heap only) is built in a message of its own right after, not here: an upgrade reads no
/// form, so its cost stays flat whatever forms and canisters are held.
pub fn after_upgrade<R: Runtime>(rt: &R) {
    let now = rt.now();
    rt.with_state(|s| {
        // The checks passed: this code's layout is what the next upgrade compares with.
        s.record_layout();
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
        crate::bus::builtins::index_unindexed(s);
    });
    schedule::ensure_refresh(rt);
    schedule::restart(rt);
    rt.build_catalog_soon();
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
    for (id, i) in s.intents.iter() {
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
        s.owner_totals.set(o, n);
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
        due_tasks: s.due.len() + s.expiries_len(),
        stable_bytes,
    })
}

/// Copies a settled intent `n` times under new ids and owners, as a benchmark's stand-in for
/// real traffic: the copies settled one after another over the retention period up to now (the
/// state a canister holds after that period of steady use), each stamped as long before its
/// settlement as the template was. A copy whose stamp is still inside a ledger's window keeps
/// its arguments' floor and its prune task waits to release it; an older one's floor was
/// released already and its task waits for its removal (`send::schedule_prune`). Each copy's
/// prepare is counted in its owner's tool usage, as a call is. Returns the last id used.
pub fn clone_settled_intents<R: Runtime>(rt: &R, template: u64, n: u64) -> Result<u64, String> {
    let now = rt.now();
    rt.with_state(|s| {
        let t = s.intents.get(&template).ok_or("no template intent")?;
        if !t.status.is_final() {
            return Err("the template must be settled".into());
        }
        let settled = t.settled_at.unwrap_or(t.updated_at);
        let span = s
            .limits()
            .retention_seconds
            .saturating_mul(crate::send::SEC)
            .saturating_sub(1);
        let mut last = 0;
        for k in 0..n {
            let id = s.next_intent_id(t.input_json.len() as u64);
            let mut i = t.clone();
            i.id = id;
            i.owner = owner_of_copy(id);
            i.identity = sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(
                id.to_be_bytes(),
            ))
            .into();
            // The n-th copy settles now, the first one `span` ago.
            let age = (span as u128 * (n - 1 - k) as u128 / n.max(1) as u128) as u64;
            let at = now.saturating_sub(age);
            // Every time of the template moved by as much as its settlement.
            let shift = |x: u64| (x as i128 + at as i128 - settled as i128).max(0) as u64;
            i.stamp_ns = i.stamp_ns.map(shift);
            i.max_stamp = i.max_stamp.map(shift);
            i.created_at = shift(i.created_at);
            i.expires_at = shift(i.expires_at);
            i.settled_at = Some(at);
            i.updated_at = at;
            // Its stamp raised its arguments' floor when it was prepared, as every stamp does;
            // the floor is released once the stamp is past every ledger's window.
            if let Some(stamp) = i.highest_stamp() {
                if crate::send::floor_release_at(&i).is_some_and(|r| r > now) {
                    s.raise_stamp_floor(i.owner, i.identity, stamp);
                }
            }
            // Its prepare was a tool call, counted for its owner (to the counts' bound).
            crate::bus::usage::bump(s, &i.owner, &i.tool);
            s.put_intent(i.clone());
            // Stored first: the prune task that released an older copy's floor packed its body.
            crate::send::schedule_prune(s, &i, now, crate::send::PruneBy::Task);
            last = id;
        }
        Ok(last)
    })
}

/// A copy's owner, shaped as a wallet's is (a self-authenticating principal: 28 bytes of a
/// hash and the suffix 2), so the owner-keyed maps hold keys of that size in no order, as
/// they do in use (ascending short ids would fill every node on one side of each map).
fn owner_of_copy(id: u64) -> candid::Principal {
    let h: [u8; 32] = sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(
        [b"owner".as_slice(), &id.to_be_bytes()].concat(),
    ))
    .into();
    let mut bytes = [0u8; 29];
    bytes[..28].copy_from_slice(&h[..28]);
    bytes[28] = 2;
    candid::Principal::from_slice(&bytes)
}
