//! The builtin settings: which builtins are on (none by default), the pins, and
//! `current_time`'s default zone. Admins set them; anyone reads them.

use crate::auth;
use crate::catalog;
use crate::errors::*;
use crate::model::BusConfig;
use crate::runtime::Runtime;
use crate::types::*;
use candid::Principal;
use std::collections::BTreeSet;
use tool_host_core::builtin::{check_zone, Builtin};

/// Pins in force at most (the admin's and the default ones together): pins count against
/// every selection's limit, and the limit's default is 6.
pub const MAX_PINS: usize = 8;

fn view(c: &BusConfig, present: &BTreeSet<String>) -> BuiltinsView {
    BuiltinsView {
        settings: BuiltinSettings {
            enabled: c.enabled.clone(),
            pinned: c.pinned.clone(),
            unpinned: Some(c.unpinned.clone()),
            default_time_zone: c.default_time_zone.clone(),
        },
        available: Builtin::ALL.iter().map(|b| b.name().to_string()).collect(),
        pins: catalog::pins_of(c)
            .into_iter()
            .filter(|p| present.contains(p))
            .collect(),
    }
}

pub fn get_builtins<R: Runtime>(rt: &R) -> BuiltinsView {
    rt.with_state(|s| {
        let bus = catalog::bus(s);
        let present = bus.decls.iter().map(|d| d.name.clone()).collect();
        view(&s.config.get().bus, &present)
    })
}

fn refuse(why: String) -> ApiError {
    err(ErrorCode::InvalidArgument, why)
}

/// Names once each, or the first repeated one.
fn distinct<'a>(what: &str, names: &'a [String]) -> ApiResult<BTreeSet<&'a str>> {
    let mut seen = BTreeSet::new();
    for n in names {
        if !seen.insert(n.as_str()) {
            return Err(refuse(format!("{what} names '{n}' twice")));
        }
    }
    Ok(seen)
}

/// `set_builtins` (admins only): every name is checked before anything is written, so a
/// refused setting changes nothing.
pub fn set_builtins<R: Runtime>(
    rt: &R,
    caller: Principal,
    args: BuiltinSettings,
) -> ApiResult<BuiltinsView> {
    auth::admin(rt, &caller)?;
    let unpinned = args.unpinned.clone().unwrap_or_default();
    if args.pinned.len() > MAX_PINS {
        return Err(refuse(format!(
            "{} pins, over the limit of {MAX_PINS}",
            args.pinned.len()
        )));
    }
    let all = || {
        Builtin::ALL
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    distinct("enabled", &args.enabled)?;
    for n in &args.enabled {
        if Builtin::from_name(n).is_none() {
            return Err(refuse(format!("'{n}' is not a builtin tool ({})", all())));
        }
    }
    distinct("unpinned", &unpinned)?;
    for n in &unpinned {
        if !Builtin::from_name(n).is_some_and(Builtin::pinned_by_default) {
            return Err(refuse(format!(
                "'{n}' is not pinned by default, so there is nothing to unpin (only escalate is)"
            )));
        }
    }
    distinct("pinned", &args.pinned)?;
    if let Some(z) = &args.default_time_zone {
        check_zone(z).map_err(|why| refuse(format!("default_time_zone '{z}': {why}")))?;
    }
    let enabled: Vec<String> = Builtin::ALL
        .iter()
        .filter(|b| args.enabled.iter().any(|n| n == b.name()))
        .map(|b| b.name().to_string())
        .collect();
    let next = |c: &BusConfig| BusConfig {
        enabled: enabled.clone(),
        pinned: args.pinned.clone(),
        unpinned: unpinned.clone(),
        default_time_zone: args.default_time_zone.clone(),
        ..c.clone()
    };
    rt.with_state(|s| {
        let bus = catalog::bus(s);
        let c = next(&s.config.get().bus);
        for n in &args.pinned {
            if unpinned.contains(n) {
                return Err(refuse(format!("'{n}' is both pinned and unpinned")));
            }
            let builtin = Builtin::from_name(n);
            let present = match builtin {
                Some(b) => c.enabled.iter().any(|e| e == b.name()),
                None => bus.decl(n).is_some(),
            };
            if !present {
                return Err(refuse(match builtin {
                    Some(_) => format!("'{n}' is pinned but not enabled; enable it too"),
                    None => format!("'{n}' is pinned but the bus has no such tool"),
                }));
            }
        }
        let pins = catalog::pins_of(&c);
        if pins.len() > MAX_PINS {
            return Err(refuse(format!(
                "{} pins in force ({}), over the limit of {MAX_PINS}",
                pins.len(),
                pins.into_iter().collect::<Vec<_>>().join(", ")
            )));
        }
        s.update_config(|cfg| cfg.bus = c);
        catalog::settings_changed(s);
        let bus = catalog::bus(s);
        let present = bus.decls.iter().map(|d| d.name.clone()).collect();
        Ok(view(&s.config.get().bus, &present))
    })
}
