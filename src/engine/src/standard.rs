//! The argument types the standards give the methods that move funds, and the check that a
//! form's declared argument is one a ledger reads as the form does.
//!
//! Candid lets a receiver read an `opt` field whose type it does not expect as `null`: a form
//! that declares `expires_at : opt nat` (the standard's is `opt nat64`) showed an expiry in the
//! preview while the ledger read none, so the approval never expired. And fields are matched by
//! the hash of their name: a field named so that its hash is `amount`'s is the ledger's amount,
//! whatever the preview calls it. So a form's argument must be a subtype of the standard's with
//! no `opt` read as `null`, and every field the standard names must carry the standard's name.

use candid::types::subtype::{subtype_with_config, Gamma, OptReport};
use candid::types::{Label, Type, TypeEnv, TypeInner};
use candid::{CandidType, Empty, Nat, Principal};
use serde_bytes::ByteBuf;

type Blob = ByteBuf;

#[derive(CandidType)]
struct Account {
    owner: Principal,
    subaccount: Option<Blob>,
}

#[derive(CandidType)]
struct TransferArg {
    from_subaccount: Option<Blob>,
    to: Account,
    amount: Nat,
    fee: Option<Nat>,
    memo: Option<Blob>,
    created_at_time: Option<u64>,
}

#[derive(CandidType)]
struct ApproveArgs {
    from_subaccount: Option<Blob>,
    spender: Account,
    amount: Nat,
    expected_allowance: Option<Nat>,
    expires_at: Option<u64>,
    fee: Option<Nat>,
    memo: Option<Blob>,
    created_at_time: Option<u64>,
}

#[derive(CandidType)]
struct TransferFromArgs {
    spender_subaccount: Option<Blob>,
    from: Account,
    to: Account,
    amount: Nat,
    fee: Option<Nat>,
    memo: Option<Blob>,
    created_at_time: Option<u64>,
}

/// The ICP ledger's `Tokens` and `TimeStamp`.
#[derive(CandidType)]
struct Tokens {
    e8s: u64,
}

#[derive(CandidType)]
struct TimeStamp {
    timestamp_nanos: u64,
}

/// The ICP ledger's `TransferArgs` (`to` an account identifier's 32 bytes).
#[derive(CandidType)]
struct IcpTransferArgs {
    memo: u64,
    amount: Tokens,
    fee: Tokens,
    from_subaccount: Option<Blob>,
    to: Blob,
    created_at_time: Option<TimeStamp>,
}

/// The ICP ledger's `SendArgs` (`to` an account identifier's hex text).
#[derive(CandidType)]
struct SendArgs {
    memo: u64,
    amount: Tokens,
    fee: Tokens,
    from_subaccount: Option<Blob>,
    to: String,
    created_at_time: Option<TimeStamp>,
}

/// The cycles ledger's withdrawals and canister creations. `creation_args` (the CMC's settings,
/// its controllers among them) has no custody rule yet: a form may only leave it out, so
/// that a canister made with an owner's cycles is never given to a controller a form names
/// (a field named so that its hash is `controllers`' was shown as log viewers).
#[derive(CandidType)]
struct WithdrawArgs {
    amount: Nat,
    from_subaccount: Option<Blob>,
    to: Principal,
    created_at_time: Option<u64>,
}

#[derive(CandidType)]
struct WithdrawFromArgs {
    spender_subaccount: Option<Blob>,
    from: Account,
    to: Principal,
    amount: Nat,
    created_at_time: Option<u64>,
}

#[derive(CandidType)]
struct CreateCanisterArgs {
    from_subaccount: Option<Blob>,
    created_at_time: Option<u64>,
    amount: Nat,
    creation_args: Option<Empty>,
}

#[derive(CandidType)]
struct CreateCanisterFromArgs {
    spender_subaccount: Option<Blob>,
    from: Account,
    amount: Nat,
    created_at_time: Option<u64>,
    creation_args: Option<Empty>,
}

/// ICRC-7's `TransferArg`, ICRC-37's approvals and `TransferFromArg`.
#[derive(CandidType)]
struct NftTransferArg {
    from_subaccount: Option<Blob>,
    to: Account,
    token_id: Nat,
    memo: Option<Blob>,
    created_at_time: Option<u64>,
}

#[derive(CandidType)]
struct ApprovalInfo {
    spender: Account,
    from_subaccount: Option<Blob>,
    expires_at: Option<u64>,
    memo: Option<Blob>,
    created_at_time: u64,
}

#[derive(CandidType)]
struct ApproveTokenArg {
    token_id: Nat,
    approval_info: ApprovalInfo,
}

#[derive(CandidType)]
struct ApproveCollectionArg {
    approval_info: ApprovalInfo,
}

#[derive(CandidType)]
struct NftTransferFromArg {
    spender_subaccount: Option<Blob>,
    from: Account,
    to: Account,
    token_id: Nat,
    memo: Option<Blob>,
    created_at_time: Option<u64>,
}

/// The standard's type of a method's one argument; `None` for a method that moves no funds.
pub fn argument(method: &str) -> Option<Type> {
    Some(match method {
        "icrc1_transfer" => TransferArg::ty(),
        "icrc4_transfer_batch" => Vec::<TransferArg>::ty(),
        "icrc2_approve" => ApproveArgs::ty(),
        "icrc2_transfer_from" => TransferFromArgs::ty(),
        "transfer" => IcpTransferArgs::ty(),
        "send_dfx" => SendArgs::ty(),
        "withdraw" => WithdrawArgs::ty(),
        "withdraw_from" => WithdrawFromArgs::ty(),
        "create_canister" => CreateCanisterArgs::ty(),
        "create_canister_from" => CreateCanisterFromArgs::ty(),
        "icrc7_transfer" => Vec::<NftTransferArg>::ty(),
        "icrc37_approve_tokens" => Vec::<ApproveTokenArg>::ty(),
        "icrc37_approve_collection" => Vec::<ApproveCollectionArg>::ty(),
        "icrc37_transfer_from" => Vec::<NftTransferFromArg>::ty(),
        _ => return None,
    })
}

/// Why a form's declared argument of `method` (`declared`, its named types in `env`) is not
/// read by a ledger as the form reads it, if it is not.
pub fn mismatch(method: &str, env: &TypeEnv, declared: &Type) -> Option<String> {
    let standard = argument(method)?;
    if let Err(e) = subtype_with_config(
        OptReport::Error,
        &mut Gamma::new(),
        env,
        declared,
        &standard,
    ) {
        return Some(format!(
            "{method}'s declared argument is not of its standard's type ({e}): the ledger would read its bytes otherwise than the preview shows them"
        ));
    }
    names_agree(env, declared, &standard, 0).map(|(form, std)| {
        format!(
            "{method}'s declared argument names the standard's field {std} '{form}': the ledger reads it by its hash as {std}, the preview by its name"
        )
    })
}

/// The first field whose hash is a standard field's but whose name is not (form's, standard's).
fn names_agree(
    env: &TypeEnv,
    declared: &Type,
    standard: &Type,
    depth: usize,
) -> Option<(String, String)> {
    if depth > 32 {
        return None;
    }
    let (d, s) = (
        env.trace_type(declared).ok()?,
        env.trace_type(standard).ok()?,
    );
    match (d.as_ref(), s.as_ref()) {
        (TypeInner::Opt(a), TypeInner::Opt(b)) | (TypeInner::Vec(a), TypeInner::Vec(b)) => {
            names_agree(env, a, b, depth + 1)
        }
        (_, TypeInner::Opt(b)) => names_agree(env, &d, b, depth + 1),
        (TypeInner::Record(fd), TypeInner::Record(fs)) => fs.iter().find_map(|sf| {
            let df = fd.iter().find(|f| f.id.get_id() == sf.id.get_id())?;
            match (df.id.as_ref(), sf.id.as_ref()) {
                (Label::Named(a), Label::Named(b)) if a == b => {
                    names_agree(env, &df.ty, &sf.ty, depth + 1)
                }
                (a, b) => Some((a.to_string(), b.to_string())),
            }
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create_canister(creation_args: Option<serde_json::Value>) -> Option<String> {
        let mut fields = vec![
            serde_json::json!({ "name": "from_subaccount", "type": "opt", "inner": { "type": "blob" } }),
            serde_json::json!({ "name": "created_at_time", "type": "opt", "inner": { "type": "nat64" } }),
            serde_json::json!({ "name": "amount", "type": "nat" }),
        ];
        fields.extend(creation_args);
        let v = serde_json::json!({ "format": "candid-profile-resolved", "format_version": 0, "name": "t", "types": {},
            "methods": { "create_canister": { "mode": "update", "args": [{ "type": "record", "fields": fields }], "results": [] } } });
        let form = tool_host_core::form::form_from_json(&v).unwrap();
        let t =
            tool_host_core::candid_types::MethodTypes::of(&form, &form.methods["create_canister"]);
        mismatch("create_canister", &t.env, &t.args[0])
    }

    #[test]
    fn a_canister_made_with_an_owners_cycles_gets_no_settings_from_a_form() {
        // Found by the third review: `idl_hash("log_viewers_adycztja")` is `controllers`'; the
        // preview said log viewers, the CMC made that principal a controller.
        assert_eq!(create_canister(None), None);
        assert_eq!(
            create_canister(Some(
                serde_json::json!({ "name": "creation_args", "type": "null" })
            )),
            None
        );
        let settings = serde_json::json!({ "name": "creation_args", "type": "opt", "inner": { "type": "record", "fields": [
            { "name": "settings", "type": "opt", "inner": { "type": "record", "fields": [
                { "name": "log_viewers_adycztja", "type": "opt", "inner": { "type": "vec", "inner": { "type": "principal" } } } ] } } ] } });
        let why = create_canister(Some(settings)).unwrap();
        assert!(why.contains("not of its standard's type"), "{why}");
    }

    #[test]
    fn every_funds_method_has_its_standards_type() {
        for m in tool_host_core::plan::FUNDS_METHODS {
            assert!(argument(m).is_some(), "{m}");
        }
    }
}
