//! How often each owner called each tool: bumped when a call is made (never on a refusal
//! before it, such as `NOT_OFFERED`), read by selection and by `tool_usage`.

use super::records::UsageKey;
use crate::auth;
use crate::runtime::Runtime;
use crate::state::State;
use crate::types::*;
use candid::Principal;
use ic_stable_structures::Memory;
use tool_host_core::bus::Usage;

/// An owner's counts, by tool name (one range read).
pub fn counts<M: Memory>(s: &State<M>, owner: &Principal) -> Usage {
    s.usage
        .range(UsageKey::start(owner)..)
        .take_while(|e| e.key().is_of(owner))
        .map(|e| {
            let (k, n) = e.into_pair();
            (k.tool().to_string(), n)
        })
        .collect()
}

/// One call made by (or for) `owner`.
pub fn bump<M: Memory>(s: &mut State<M>, owner: &Principal, tool: &str) {
    let key = UsageKey::new(owner, tool);
    let n = s.usage.get(&key).unwrap_or(0);
    s.usage.insert(key, n.saturating_add(1));
}

/// `tool_usage`: the owner's counts, for the owner and its agents.
pub fn tool_usage<R: Runtime>(
    rt: &R,
    caller: Principal,
    owner: Option<Principal>,
) -> ApiResult<Vec<ToolUsage>> {
    let owner = auth::acting_owner(rt, &caller, owner)?;
    Ok(rt.with_state(|s| {
        counts(s, &owner)
            .into_iter()
            .map(|(name, calls)| ToolUsage { name, calls })
            .collect()
    }))
}
