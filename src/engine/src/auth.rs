//! Roles, checked inside every method (inspect_message only saves cycles):
//! controllers and admins manage forms, canisters and limits; any non-anonymous principal is an
//! owner of its own intents; an agent acts only for the owners that authorized it and never confirms.

use crate::errors::*;
use crate::runtime::Runtime;
use crate::types::ApiResult;
use candid::Principal;

pub fn user(caller: &Principal) -> ApiResult<()> {
    if *caller == Principal::anonymous() {
        return Err(err(
            ErrorCode::Anonymous,
            "the anonymous principal may only list tools and read consent messages; sign in",
        ));
    }
    Ok(())
}

pub fn controller<R: Runtime>(rt: &R, caller: &Principal) -> ApiResult<()> {
    user(caller)?;
    if !rt.is_controller(caller) {
        return Err(err(
            ErrorCode::NotAuthorized,
            format!("{caller} is not a controller of the tool host"),
        ));
    }
    Ok(())
}

pub fn admin<R: Runtime>(rt: &R, caller: &Principal) -> ApiResult<()> {
    user(caller)?;
    if rt.is_controller(caller) || rt.with_state(|s| s.admins.contains_key(caller)) {
        return Ok(());
    }
    Err(err(
        ErrorCode::NotAuthorized,
        format!("{caller} is neither a controller nor an admin of the tool host"),
    ))
}

/// The owner a call acts for: the caller itself, or an owner that authorized the caller as its agent.
/// `caller` is `owner`'s agent at this moment: authorized and not revoked, and for an agent
/// token also not expired (the state keeps no clock, so expiry is read here).
fn acts_now<R: Runtime>(rt: &R, caller: &Principal, owner: &Principal) -> bool {
    let now = rt.now();
    rt.with_state(|s| s.is_agent_of(owner, caller) && crate::tokens::unexpired(s, caller, now))
}

/// Checked again after an await: an agent revoked, or a token revoked or expired, while a call
/// was away stores nothing and makes no further call.
pub fn still_acting<R: Runtime>(rt: &R, caller: &Principal, owner: &Principal) -> ApiResult<()> {
    if caller == owner || acts_now(rt, caller, owner) {
        Ok(())
    } else {
        Err(err(
            ErrorCode::NotAuthorized,
            format!("{caller} stopped acting for {owner} (revoked or expired) while a call was made; nothing was stored or called"),
        ))
    }
}

pub fn acting_owner<R: Runtime>(
    rt: &R,
    caller: &Principal,
    owner: Option<Principal>,
) -> ApiResult<Principal> {
    user(caller)?;
    let owner = owner.unwrap_or(*caller);
    if owner == *caller || acts_now(rt, caller, &owner) {
        Ok(owner)
    } else {
        Err(err(
            ErrorCode::NotAuthorized,
            format!("{caller} is not an agent of {owner}"),
        ))
    }
}
