//! What owners do: authorize and revoke agents, and read their deposit account.

use crate::auth;
use crate::errors::*;
use crate::runtime::Runtime;
use crate::types::*;
use candid::Principal;
use serde_bytes::ByteBuf;
use tool_host_core::funds::deposit_subaccount;
use tool_host_core::text::account::{format_account, Account as TextAccount};

pub fn authorize_agent<R: Runtime>(rt: &R, caller: Principal, agent: Principal) -> ApiResult<()> {
    auth::user(&caller)?;
    if agent == Principal::anonymous() {
        return Err(err(
            ErrorCode::InvalidArgument,
            "the anonymous principal cannot be an agent",
        ));
    }
    if crate::tokens::token_id_of(&agent).is_some() {
        return Err(err(
            ErrorCode::InvalidArgument,
            "an agent token's principal acts only for the owner that issued the token",
        ));
    }
    if agent == caller {
        return Err(err(
            ErrorCode::InvalidArgument,
            "an owner acts for itself without authorizing itself",
        ));
    }
    let max = rt.with_state(|s| s.limits().max_agents_per_owner);
    let now = rt.now();
    rt.with_state(|s| {
        if s.agents.contains_key(&(caller, agent)) {
            return Ok(());
        }
        let n = s
            .agents
            .keys_range((caller, Principal::from_slice(&[]))..)
            .take_while(|(o, _)| *o == caller)
            .count();
        if n >= max as usize {
            return Err(err(
                ErrorCode::Limit,
                format!("an owner authorizes at most {max} agents"),
            ));
        }
        let total = s.limits().max_agents_total;
        if s.agents.len() >= total {
            return Err(err(
                ErrorCode::Limit,
                format!("the tool host keeps at most {total} agent authorizations"),
            ));
        }
        s.agents.insert((caller, agent), now);
        Ok(())
    })
}

pub fn revoke_agent<R: Runtime>(rt: &R, caller: Principal, agent: Principal) -> ApiResult<()> {
    auth::user(&caller)?;
    rt.with_state(|s| s.agents.remove(&(caller, agent)))
        .map(|_| ())
        .ok_or_else(|| {
            err(
                ErrorCode::NotFound,
                format!("{agent} is not an agent of {caller}"),
            )
        })
}

pub fn list_agents<R: Runtime>(rt: &R, caller: Principal) -> ApiResult<Vec<Principal>> {
    auth::user(&caller)?;
    Ok(rt.with_state(|s| {
        s.agents
            .keys_range((caller, Principal::from_slice(&[]))..)
            .take_while(|(o, _)| *o == caller)
            .map(|(_, a)| a)
            .collect()
    }))
}

/// The caller's deposit account: a subaccount of the tool host derived from the caller's principal.
pub fn deposit_account<R: Runtime>(rt: &R, caller: Principal) -> ApiResult<DepositAccount> {
    auth::user(&caller)?;
    let sub = deposit_subaccount(&caller);
    let owner = rt.self_id();
    Ok(DepositAccount {
        account: Account {
            owner,
            subaccount: Some(ByteBuf::from(sub.to_vec())),
        },
        text: format_account(&TextAccount {
            owner,
            subaccount: Some(sub),
        }),
    })
}
