//! Agent tokens: what an MCP client sends (`Authorization: Bearer <secret>`) to act as an agent
//! of the owner that issued it (docs/mcp.md).
//!
//! - The secret is `thk_<id>_<64 hex digits>`: 32 bytes from the management canister's
//!   `raw_rand`, shown once by `issue_agent_token`. Only its SHA-256 is stored (memory 22); the
//!   id in it finds the record, and the hash is compared in constant time (`subtle`).
//! - A token acts through a principal of its own, [`token_principal`]: a reserved principal
//!   (class `0x7f`, which no key can sign for, so no ingress message ever carries it) made of a
//!   hash of (owner, id) and the id. The engine's rules see it as an agent of the owner
//!   ([`acts_for`], from `State::is_agent_of`) while the token is not revoked, and of no one
//!   else: it is never in the authorizations (`authorize_agent` refuses it), and the hash binds
//!   it to its owner. It never confirms or declines (only an intent's owner does), and intents
//!   it prepares name it as `prepared_by`.
//! - At most [`MAX_LIVE_PER_OWNER`] live tokens per owner (not revoked, not expired), at most
//!   [`MAX_KEPT_PER_OWNER`] kept (dead ones are dropped, oldest first, when an owner issues
//!   another), at most [`MAX_TOKENS_TOTAL`] in all.

use crate::auth;
use crate::errors::*;
use crate::runtime::Runtime;
use crate::state::State;
use crate::types::*;
use candid::Principal;
use ic_stable_structures::Memory;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub const MAX_LIVE_PER_OWNER: usize = 8;
pub const MAX_KEPT_PER_OWNER: usize = 16;
pub const MAX_TOKENS_TOTAL: u64 = 100_000;
pub const MAX_LABEL_BYTES: usize = 64;
/// A token whose `raw_rand` never came back (an upgrade at its await) stops counting after this.
pub const PENDING_NS: u64 = 10 * 60 * 1_000_000_000;
const PREFIX: &str = "thk_";

/// One agent token as stored (versioned, with a golden fixture).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentToken {
    pub owner: Principal,
    /// SHA-256 of the secret's text; `None` while `raw_rand` is awaited (the record holds the
    /// id and the owner's bound before the await).
    pub secret_sha256: Option<[u8; 32]>,
    pub label: String,
    pub created_at: u64,
    pub expires_at: Option<u64>,
    pub revoked_at: Option<u64>,
    pub last_used_at: Option<u64>,
}

impl AgentToken {
    /// Authenticates now: issued, not revoked, not expired.
    pub fn live(&self, now: u64) -> bool {
        self.secret_sha256.is_some()
            && self.revoked_at.is_none()
            && self.expires_at.is_none_or(|e| now < e)
    }
    /// Counts at the owner's bound: live, or awaiting its randomness for less than [`PENDING_NS`].
    fn counts(&self, now: u64) -> bool {
        self.live(now)
            || (self.secret_sha256.is_none() && now < self.created_at.saturating_add(PENDING_NS))
    }
    fn view(&self, id: u64) -> AgentTokenView {
        AgentTokenView {
            id,
            label: self.label.clone(),
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
            last_used_at: self.last_used_at,
        }
    }
}

crate::model::single_version!(AgentToken, "agent token");

/// The principal token `id` of `owner` acts as: 20 bytes of
/// `sha256("\x17tool-host:agent-token" ‖ len ‖ owner ‖ id)`, the id (8 bytes, big-endian) and
/// `0x7f` (a reserved principal: never the sender of an ingress message).
pub fn token_principal(owner: &Principal, id: u64) -> Principal {
    let mut h = Sha256::new();
    h.update(b"\x17tool-host:agent-token");
    h.update([owner.as_slice().len() as u8]);
    h.update(owner.as_slice());
    h.update(id.to_be_bytes());
    let d = h.finalize();
    let mut b = [0u8; 29];
    b[..20].copy_from_slice(&d[..20]);
    b[20..28].copy_from_slice(&id.to_be_bytes());
    b[28] = 0x7f;
    Principal::from_slice(&b)
}

/// The token id a principal of [`token_principal`]'s shape names (not yet checked).
/// An agent token's principal is not past its token's expiry; any other principal is.
pub fn unexpired<M: Memory>(s: &State<M>, p: &Principal, now: u64) -> bool {
    match token_id_of(p) {
        Some(id) => s.agent_tokens.get(&id).is_some_and(|t| t.live(now)),
        None => true,
    }
}

pub fn token_id_of(p: &Principal) -> Option<u64> {
    let b = p.as_slice();
    if b.len() != 29 || b[28] != 0x7f {
        return None;
    }
    Some(u64::from_be_bytes(b[20..28].try_into().ok()?))
}

/// Whether `p` is token `id`'s principal and that token is `owner`'s and not revoked. (Expiry
/// is checked where a request is authenticated, [`authenticate`]: the state has no clock.)
pub fn acts_for<M: Memory>(s: &State<M>, owner: &Principal, p: &Principal, id: u64) -> bool {
    match s.agent_tokens.get(&id) {
        Some(t) => {
            t.owner == *owner
                && t.secret_sha256.is_some()
                && t.revoked_at.is_none()
                && token_principal(owner, id) == *p
        }
        None => false,
    }
}

fn check_label(label: &str) -> ApiResult<()> {
    if label.is_empty() || label.len() > MAX_LABEL_BYTES || label.chars().any(char::is_control) {
        return Err(err(
            ErrorCode::InvalidArgument,
            format!("a token's label is 1 to {MAX_LABEL_BYTES} bytes without control characters"),
        ));
    }
    Ok(())
}

fn owner_ids<M: Memory>(s: &State<M>, owner: &Principal) -> Vec<u64> {
    s.owner_tokens
        .keys_range((*owner, 0)..=(*owner, u64::MAX))
        .map(|(_, id)| id)
        .collect()
}

fn remove<M: Memory>(s: &mut State<M>, owner: &Principal, id: u64) {
    s.agent_tokens.remove(&id);
    s.owner_tokens.remove(&(*owner, id));
}

/// `issue_agent_token`: a new token for the caller's agent. The record (with the id and the
/// owner's bound) is written before `raw_rand` is awaited; after it only the hash is written.
pub async fn issue<R: Runtime>(
    rt: &R,
    caller: Principal,
    args: IssueAgentTokenArgs,
) -> ApiResult<IssuedAgentToken> {
    auth::user(&caller)?;
    check_label(&args.label)?;
    let now = rt.now();
    if let Some(e) = args.expires_at {
        if e <= now {
            return Err(err(
                ErrorCode::InvalidArgument,
                format!("expires_at {e} is not after now ({now} ns since the epoch)"),
            ));
        }
    }
    let id = rt.with_state(|s| -> ApiResult<u64> {
        let ids = owner_ids(s, &caller);
        let tokens: Vec<(u64, AgentToken)> = ids
            .iter()
            .filter_map(|id| s.agent_tokens.get(id).map(|t| (*id, t)))
            .collect();
        if tokens.iter().filter(|(_, t)| t.counts(now)).count() >= MAX_LIVE_PER_OWNER {
            return Err(err(
                ErrorCode::Limit,
                format!("an owner holds at most {MAX_LIVE_PER_OWNER} live agent tokens: revoke one first"),
            ));
        }
        // Room among those kept: the oldest dead ones go (never the newest id of all, so that
        // an id is never handed out twice).
        let last = s.agent_tokens.last_key_value().map(|(k, _)| k);
        let mut kept = tokens.len();
        for (id, t) in &tokens {
            if kept < MAX_KEPT_PER_OWNER {
                break;
            }
            if !t.counts(now) && Some(*id) != last {
                remove(s, &caller, *id);
                kept -= 1;
            }
        }
        if s.agent_tokens.len() >= MAX_TOKENS_TOTAL {
            return Err(err(
                ErrorCode::Limit,
                format!("the tool host keeps at most {MAX_TOKENS_TOTAL} agent tokens"),
            ));
        }
        let id = last.map_or(1, |l| l + 1);
        s.agent_tokens.insert(
            id,
            AgentToken {
                owner: caller,
                secret_sha256: None,
                label: args.label.clone(),
                created_at: now,
                expires_at: args.expires_at,
                revoked_at: None,
                last_used_at: None,
            },
        );
        s.owner_tokens.insert((caller, id), ());
        Ok(id)
    })?;
    let random = match rt.raw_rand().await {
        Ok(r) => r,
        Err(why) => {
            rt.with_state(|s| remove(s, &caller, id));
            return Err(err(
                ErrorCode::Retry,
                format!("no randomness from the management canister ({why}); nothing was kept: issue the token again"),
            ));
        }
    };
    let secret = format!("{PREFIX}{id}_{}", hex::encode(random));
    let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
    let stored = rt.with_state(|s| {
        let mut t = s.agent_tokens.get(&id)?;
        t.secret_sha256 = Some(digest);
        s.agent_tokens.insert(id, t.clone());
        Some(t)
    });
    let t = stored.ok_or_else(|| {
        err(
            ErrorCode::Retry,
            format!("token {id} was removed while its randomness was awaited: issue it again"),
        )
    })?;
    Ok(IssuedAgentToken {
        id,
        secret,
        label: t.label,
        expires_at: t.expires_at,
        created_at: t.created_at,
    })
}

/// `list_agent_tokens`: the caller's tokens (never a secret or its hash), oldest first.
pub fn list<R: Runtime>(rt: &R, caller: Principal) -> Vec<AgentTokenView> {
    rt.with_state(|s| {
        owner_ids(s, &caller)
            .into_iter()
            .filter_map(|id| s.agent_tokens.get(&id).map(|t| (id, t)))
            .filter(|(_, t)| t.secret_sha256.is_some())
            .map(|(id, t)| t.view(id))
            .collect()
    })
}

/// `revoke_agent_token`: the caller's token stops authenticating at once (and its principal
/// stops acting for the caller, in calls already under way too). Another owner's token, or no
/// token, is `NOT_FOUND` alike; revoking a revoked token changes nothing.
pub fn revoke<R: Runtime>(rt: &R, caller: Principal, id: u64) -> ApiResult<()> {
    auth::user(&caller)?;
    let now = rt.now();
    rt.with_state(|s| {
        let mut t = s
            .agent_tokens
            .get(&id)
            .filter(|t| t.owner == caller && t.secret_sha256.is_some())
            .ok_or_else(|| {
                err(
                    ErrorCode::NotFound,
                    format!("{caller} has no agent token {id}"),
                )
            })?;
        if t.revoked_at.is_none() {
            t.revoked_at = Some(now);
            s.agent_tokens.insert(id, t);
        }
        Ok(())
    })
}

/// Who a bearer secret acts for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bearer {
    pub id: u64,
    pub owner: Principal,
    /// [`token_principal`]: the caller the engine's rules see.
    pub principal: Principal,
}

/// Reads a secret's id (a secret is `thk_<id>_<64 hex>`), without looking at the rest.
fn secret_id(secret: &str) -> Option<u64> {
    let rest = secret.strip_prefix(PREFIX)?;
    let (id, random) = rest.split_once('_')?;
    if id.is_empty() || id.len() > 20 || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if random.len() != 64 {
        return None;
    }
    id.parse().ok()
}

/// Authenticates a bearer secret at `now`. The SHA-256 of the whole secret is compared with
/// the stored one in constant time (`subtle`); an unknown id is compared with a hash no secret
/// has, so both paths do the same work. The reason never contains the secret.
pub fn authenticate<R: Runtime>(rt: &R, secret: &str, now: u64) -> Result<Bearer, &'static str> {
    let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
    let id = secret_id(secret);
    let token = id.and_then(|id| rt.with_state(|s| s.agent_tokens.get(&id)));
    let stored = token
        .as_ref()
        .and_then(|t| t.secret_sha256)
        .unwrap_or([0u8; 32]);
    let equal: bool = digest.ct_eq(&stored).into();
    let (Some(id), Some(t), true) = (id, token, equal) else {
        return Err("the bearer token is not one the tool host issued");
    };
    if t.revoked_at.is_some() {
        return Err("the bearer token was revoked by its owner");
    }
    if !t.live(now) {
        return Err("the bearer token has expired");
    }
    Ok(Bearer {
        id,
        owner: t.owner,
        principal: token_principal(&t.owner, id),
    })
}

/// Records a token's use (update calls only: a query keeps nothing).
pub fn touch<R: Runtime>(rt: &R, id: u64, now: u64) {
    rt.with_state(|s| {
        if let Some(mut t) = s.agent_tokens.get(&id) {
            t.last_used_at = Some(now);
            s.agent_tokens.insert(id, t);
        }
    });
}
