//! How often each owner called each tool: bumped when a call is made (never on a refusal
//! before it, such as `NOT_OFFERED`), read by selection and by `tool_usage`.

use crate::auth;
use crate::runtime::Runtime;
use crate::state::State;
use crate::types::*;
use candid::Principal;
use ic_stable_structures::Memory;
use tool_host_core::bus::Usage;

/// An owner's counts, by tool name (one range read).
pub fn counts<M: Memory>(s: &State<M>, owner: &Principal) -> Usage {
    s.usage.counts(owner)
}

/// (owner, tool) pairs counted, all owners together: any principal may call a tool, and
/// principals are free, so the map is bounded as the other bus maps are. At the bound a new
/// pair is not counted (the call is made all the same); a pair counted already still counts.
/// The pairs' number is the table's header and the B-tree's own count (O(1), with the held
/// pairs), so no counter is kept beside them.
pub const MAX_USAGE_ENTRIES: u64 = 250_000;

/// One call made by (or for) `owner`: counted unless it would be a new pair past
/// `MAX_USAGE_ENTRIES`. A pair is a record of a hash table (`super::usage_counts`), found in
/// its owner's page whatever the number of pairs.
pub fn bump<M: Memory + Clone>(s: &mut State<M>, owner: &Principal, tool: &str) {
    s.usage.bump(owner, tool, MAX_USAGE_ENTRIES);
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
