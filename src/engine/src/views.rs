//! Intents as callers read them, and an owner's intents in pages.

use crate::auth;
use crate::errors::*;
use crate::model::{AttemptResult, Intent};
use crate::runtime::Runtime;
use crate::types::*;
use candid::Principal;
use serde_bytes::ByteBuf;

pub const DEFAULT_PAGE: u32 = 50;
pub const MAX_PAGE: u32 = 100;

pub fn intent_view(i: &Intent) -> IntentView {
    IntentView {
        id: i.id,
        owner: i.owner,
        preparer: i.preparer,
        canister: i.canister,
        tool: i.tool.clone(),
        method: i.method.clone(),
        status: i.status.as_str().into(),
        outcome: i.outcome.clone(),
        finding: i.finding.clone(),
        preview: i.preview_text(),
        arg: ByteBuf::from(i.arg.clone()),
        digest: ByteBuf::from(i.digest.to_vec()),
        stamp: i.stamp_ns,
        memo: i.memo.clone().map(ByteBuf::from),
        reply: i.reply_json.clone(),
        created_at: i.created_at,
        updated_at: i.updated_at,
        expires_at: i.expires_at,
        settled_at: i.settled_at,
        generation: i.generation,
        confirm_requested_at: i.confirm_requested_at,
        attempts: i
            .attempts
            .iter()
            .map(|a| {
                let (kind, class, code, message) = match &a.result {
                    AttemptResult::Pending => ("pending", None, None, None),
                    AttemptResult::Replied { class, .. } => {
                        ("replied", Some(class.clone()), None, None)
                    }
                    AttemptResult::Rejected { code, message } => {
                        ("rejected", None, Some(*code), Some(message.clone()))
                    }
                    AttemptResult::Undecodable { message } => {
                        ("undecodable", None, None, Some(message.clone()))
                    }
                    AttemptResult::NotSent { message } => {
                        ("not_sent", None, None, Some(message.clone()))
                    }
                };
                AttemptView {
                    at: a.at,
                    digest: ByteBuf::from(a.digest.to_vec()),
                    kind: kind.into(),
                    class,
                    reject_code: code,
                    message,
                }
            })
            .collect(),
    }
}

/// The owner, the owner's agents and admins read an owner's intents.
fn may_read<R: Runtime>(rt: &R, caller: &Principal, owner: &Principal) -> ApiResult<()> {
    auth::user(caller)?;
    if caller == owner
        || rt.with_state(|s| s.is_agent_of(owner, caller))
        || auth::admin(rt, caller).is_ok()
    {
        Ok(())
    } else {
        Err(err(
            ErrorCode::NotAuthorized,
            format!("{caller} may not read {owner}'s intents"),
        ))
    }
}

pub fn get_intent<R: Runtime>(rt: &R, caller: Principal, id: u64) -> ApiResult<IntentView> {
    auth::user(&caller)?;
    let i = rt
        .with_state(|s| s.intents.get(&id))
        .ok_or_else(|| err(ErrorCode::NotFound, format!("no intent {id}")))?;
    may_read(rt, &caller, &i.owner)?;
    Ok(intent_view(&i))
}

pub fn list_intents<R: Runtime>(
    rt: &R,
    caller: Principal,
    args: ListIntentsArgs,
) -> ApiResult<IntentPage> {
    let owner = args.owner.unwrap_or(caller);
    may_read(rt, &caller, &owner)?;
    let limit = args.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(err(
            ErrorCode::InvalidArgument,
            format!("limit is 1 to {MAX_PAGE}"),
        ));
    }
    let from = args.start_after.map_or(0, |a| a.saturating_add(1));
    Ok(rt.with_state(|s| {
        let ids: Vec<u64> = s
            .owner_intents
            .keys_range((owner, from)..=(owner, u64::MAX))
            .take(limit as usize + 1)
            .map(|(_, id)| id)
            .collect();
        let more = ids.len() > limit as usize;
        let intents: Vec<IntentView> = ids
            .iter()
            .take(limit as usize)
            .filter_map(|id| s.intents.get(id))
            .map(|i| intent_view(&i))
            .collect();
        let next = if more {
            intents.last().map(|i| i.id)
        } else {
            None
        };
        IntentPage { intents, next }
    }))
}
