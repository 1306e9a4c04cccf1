//! Whose funds move, checked by the engine on the exact argument bytes whatever a form says.
//!
//! The tool host is one principal holding every owner's deposit and acting for every owner, so
//! for the methods that move funds the bytes themselves must say it is the owner's funds:
//! `icrc1_transfer`, `icrc2_approve` (and the ICP ledger's `transfer`, `send_dfx`, and the
//! batch and NFT methods) spend only from the owner's deposit subaccount of the tool host;
//! `icrc2_transfer_from` (and `icrc37_transfer_from`) only from the owner's own account, as the
//! tool host itself (no spender subaccount). Every element of a batch alike. The bytes are read
//! by field *hash*, as the target reads them: a form that renames or drops a field cannot make
//! the check look at something the target does not.
//!
//! Checked when an intent is prepared and again before every send; a refusal is `CUSTODY` with
//! the place.

use crate::errors::ErrorCode;
use crate::types::{ApiError, IssueView};
use candid::types::value::IDLField;
use candid::{IDLArgs, IDLValue, Principal};
use tool_host_core::funds::deposit_subaccount;
use tool_host_core::wire::field_hash;

/// How a method's funds are tied to their owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// `from_subaccount` is the owner's deposit subaccount.
    FromDeposit,
    /// `from` is an account of the owner, and `spender_subaccount` is none: the tool host
    /// spends an allowance the owner gave it.
    OwnAccountAsHost,
}

/// The methods that move funds, how, and whether their argument is a batch (a `vec`); for
/// NFT approvals the subaccount is inside `approval_info`.
fn rule_of(method: &str) -> Option<(Rule, bool, Option<&'static str>)> {
    Some(match method {
        // The cycles ledger's `withdraw` and `create_canister` spend from `from_subaccount`,
        // their `_from` forms from an allowance, as `icrc2_transfer_from` does.
        "icrc1_transfer" | "icrc2_approve" | "transfer" | "send_dfx" | "withdraw"
        | "create_canister" => (Rule::FromDeposit, false, None),
        "icrc4_transfer_batch" | "icrc7_transfer" => (Rule::FromDeposit, true, None),
        "icrc37_approve_tokens" | "icrc37_approve_collection" => {
            (Rule::FromDeposit, true, Some("approval_info"))
        }
        "icrc2_transfer_from" | "withdraw_from" | "create_canister_from" => {
            (Rule::OwnAccountAsHost, false, None)
        }
        "icrc37_transfer_from" => (Rule::OwnAccountAsHost, true, None),
        _ => return None,
    })
}

/// The hashes of field names, made at compile time.
macro_rules! hashes {
    ($($n:literal),* $(,)?) => {{
        const H: &[u32] = &[$(field_hash($n)),*];
        H
    }};
}

/// The fields each standard gives a covered method's argument record (and, for the NFT
/// approvals, its `approval_info`). A record with any other field is refused: the rule reads
/// the source of funds where the standard has it, and a target whose method of that name takes
/// its source elsewhere (EXT's `transfer` reads `subaccount`) must not pass on a field it
/// ignores. The standards' own optional fields may be absent.
fn standard_fields(method: &str) -> &'static [u32] {
    match method {
        "icrc1_transfer" | "icrc4_transfer_batch" => hashes!(
            "from_subaccount",
            "to",
            "amount",
            "fee",
            "memo",
            "created_at_time"
        ),
        "icrc2_approve" => hashes!(
            "from_subaccount",
            "spender",
            "amount",
            "expected_allowance",
            "expires_at",
            "fee",
            "memo",
            "created_at_time"
        ),
        // The ICP ledger's `TransferArgs` and `SendArgs`.
        "transfer" | "send_dfx" => hashes!(
            "memo",
            "amount",
            "fee",
            "from_subaccount",
            "to",
            "created_at_time"
        ),
        "withdraw" => hashes!("amount", "from_subaccount", "to", "created_at_time"),
        "create_canister" => hashes!(
            "from_subaccount",
            "created_at_time",
            "amount",
            "creation_args"
        ),
        "icrc7_transfer" => hashes!(
            "from_subaccount",
            "to",
            "token_id",
            "memo",
            "created_at_time"
        ),
        "icrc37_approve_tokens" => hashes!("token_id", "approval_info"),
        "icrc37_approve_collection" => hashes!("approval_info"),
        "icrc2_transfer_from" => hashes!(
            "spender_subaccount",
            "from",
            "to",
            "amount",
            "fee",
            "memo",
            "created_at_time"
        ),
        "icrc37_transfer_from" => hashes!(
            "spender_subaccount",
            "from",
            "to",
            "token_id",
            "memo",
            "created_at_time"
        ),
        "withdraw_from" => hashes!(
            "spender_subaccount",
            "from",
            "to",
            "amount",
            "created_at_time"
        ),
        "create_canister_from" => hashes!(
            "from",
            "spender_subaccount",
            "created_at_time",
            "amount",
            "creation_args"
        ),
        _ => hashes!(),
    }
}

/// ICRC-37's `ApprovalInfo`.
const APPROVAL_INFO: &[u32] = hashes!(
    "spender",
    "from_subaccount",
    "expires_at",
    "memo",
    "created_at_time",
);

/// The first field of a record (by hash) that its standard does not give it.
fn unknown_field(mut ids: impl Iterator<Item = u32>, allowed: &[u32]) -> Option<u32> {
    ids.find(|id| !allowed.contains(id))
}

fn not_standard(method: &str, path: &str, label: &str) -> ApiError {
    refuse(
        &format!("{path}.{label}"),
        format!("{method}'s argument has a field its standard does not give it ({label}): a target may read the source of funds there"),
    )
}

/// Refuses a decoded record with a field its standard does not give it.
fn closed_shape(
    fs: &[IDLField],
    allowed: &[u32],
    method: &str,
    path: &str,
) -> Result<(), ApiError> {
    match unknown_field(fs.iter().map(|f| f.id.get_id()), allowed) {
        None => Ok(()),
        Some(id) => {
            let label = fs
                .iter()
                .find(|f| f.id.get_id() == id)
                .map_or_else(|| format!("#{id}"), |f| f.id.to_string());
            Err(not_standard(method, path, &label))
        }
    }
}

/// Why a form's own declaration of a covered method gives argument bytes [`check`] refuses at
/// every prepare (another argument, a field its standard does not give), if it does: such a
/// tool is not offered at all, which tells an agent at once what a refusal per prepare would
/// tell it only after it tried. The check on the bytes stays the rule; this reads the types.
pub fn declared_shape(
    form: &tool_host_core::form::Form,
    method: &str,
    args: &[tool_host_core::form::Node],
) -> Option<String> {
    use tool_host_core::form::{resolve, FieldNode, Ty};
    let (_, batch, nested) = rule_of(method)?;
    let refuse = |why: String| {
        Some(format!(
            "{method}'s declared argument {why}: the tool host refuses to send it (a target may read the source of funds there)"
        ))
    };
    let [arg] = args else {
        return refuse(format!(
            "list has {} arguments; its standard gives it one",
            args.len()
        ));
    };
    let record = |node| match resolve(form, node) {
        Some(Ty::Record(fs)) => Some(fs.as_slice()),
        _ => None,
    };
    let extra = |fs: &[FieldNode], allowed: &[u32]| {
        fs.iter()
            .find(|f| !allowed.contains(&f.label.hash()))
            .map(|f| f.label.to_string())
    };
    let top = match (batch, resolve(form, arg)) {
        (true, Some(Ty::Vec(elem))) => record(elem),
        (false, _) => record(arg),
        _ => None,
    };
    let Some(fs) = top else {
        return refuse(format!(
            "is not {}",
            if batch {
                "a vec of records"
            } else {
                "a record"
            }
        ));
    };
    if let Some(label) = extra(fs, standard_fields(method)) {
        return refuse(format!(
            "has a field its standard does not give it ({label})"
        ));
    }
    let inner = nested.and_then(|n| fs.iter().find(|f| f.label.name() == Some(n)));
    if let Some(f) = inner {
        let inner_fs = match resolve(form, &f.node) {
            Some(Ty::Opt(n)) => record(n),
            _ => record(&f.node),
        };
        if let Some(label) = inner_fs.and_then(|ifs| extra(ifs, APPROVAL_INFO)) {
            return refuse(format!(
                "has a field its standard does not give it ({}.{label})",
                f.label
            ));
        }
    }
    None
}

/// Whether the engine knows how this method's funds are tied to their owner.
pub fn covers(method: &str) -> bool {
    rule_of(method).is_some()
}

/// Whether the engine knows `method` as a read of the standards it serves (ICRC-1/2/3/7/10/37
/// and the ICP ledger): one a read tool may call as the tool host on a canister several owners
/// share. Any other method, whatever a form says of it, may act with the tool host's authority
/// over the owners' funds on that canister (a call runs the target's method as the target
/// defines it, and an inter-canister call is never a query).
pub fn known_read(method: &str) -> bool {
    const READS: &[&str] = &[
        "icrc1_balance_of",
        "icrc1_decimals",
        "icrc1_fee",
        "icrc1_metadata",
        "icrc1_minting_account",
        "icrc1_name",
        "icrc1_supported_standards",
        "icrc1_symbol",
        "icrc1_total_supply",
        "icrc2_allowance",
        "icrc3_get_archives",
        "icrc3_get_blocks",
        "icrc3_get_tip_certificate",
        "icrc3_supported_block_types",
        "icrc7_atomic_batch_transfers",
        "icrc7_balance_of",
        "icrc7_collection_metadata",
        "icrc7_default_take_value",
        "icrc7_description",
        "icrc7_logo",
        "icrc7_max_memo_size",
        "icrc7_max_query_batch_size",
        "icrc7_max_take_value",
        "icrc7_max_update_batch_size",
        "icrc7_name",
        "icrc7_owner_of",
        "icrc7_permitted_drift",
        "icrc7_supply_cap",
        "icrc7_symbol",
        "icrc7_token_metadata",
        "icrc7_tokens",
        "icrc7_tokens_of",
        "icrc7_total_supply",
        "icrc7_tx_window",
        "icrc10_supported_standards",
        "icrc37_get_collection_approvals",
        "icrc37_get_token_approvals",
        "icrc37_is_approved",
        "icrc37_max_approvals_per_token_or_collection",
        "icrc37_max_revoke_approvals",
        "icrc37_metadata",
        "account_balance",
        "account_balance_dfx",
        "archives",
        "decimals",
        "name",
        "query_blocks",
        "query_encoded_blocks",
        "symbol",
        "transfer_fee",
    ];
    READS.contains(&method)
}

fn refuse(path: &str, message: String) -> ApiError {
    ApiError {
        code: ErrorCode::Custody.as_str().into(),
        message: format!("refused: {message}; nothing was stored or sent"),
        issues: vec![IssueView {
            param: String::new(),
            path: path.to_string(),
            code: ErrorCode::Custody.as_str().into(),
            message,
        }],
    }
}

fn field<'a>(fs: &'a [IDLField], name: &str) -> Option<&'a IDLValue> {
    fs.iter()
        .find(|f| f.id.get_id() == candid::idl_hash(name))
        .map(|f| &f.val)
}

/// The blob inside an `opt blob` (none for `null` or an absent field).
fn opt_blob(v: Option<&IDLValue>) -> Result<Option<Vec<u8>>, ()> {
    let v = match v {
        None | Some(IDLValue::None) | Some(IDLValue::Null) => return Ok(None),
        Some(IDLValue::Opt(inner)) => inner.as_ref(),
        Some(other) => other,
    };
    match v {
        IDLValue::Blob(b) => Ok(Some(b.clone())),
        IDLValue::Vec(items) => items
            .iter()
            .map(|x| match x {
                IDLValue::Nat8(b) => Ok(*b),
                _ => Err(()),
            })
            .collect::<Result<Vec<u8>, ()>>()
            .map(Some),
        _ => Err(()),
    }
}

fn check_record(
    fs: &[IDLField],
    rule: Rule,
    nested: Option<&str>,
    owner: Principal,
    path: &str,
) -> Result<(), ApiError> {
    match rule {
        Rule::FromDeposit => {
            let (fs, path) = match nested {
                Some(n) => match field(fs, n) {
                    Some(IDLValue::Record(inner)) => (inner.as_slice(), format!("{path}.{n}")),
                    _ => {
                        return Err(refuse(
                            &format!("{path}.{n}"),
                            format!("'{n}' is not a record"),
                        ))
                    }
                },
                None => (fs, path.to_string()),
            };
            let at = format!("{path}.from_subaccount");
            let deposit = deposit_subaccount(&owner);
            match opt_blob(field(fs, "from_subaccount")) {
                Ok(Some(b)) if b.as_slice() == deposit.as_slice() => Ok(()),
                Ok(Some(_)) => Err(refuse(&at, format!("it spends from a subaccount of the tool host that is not {owner}'s deposit"))),
                Ok(None) => Err(refuse(&at, format!("it spends from the tool host's own account, not {owner}'s deposit subaccount"))),
                Err(()) => Err(refuse(&at, "the source subaccount is not a blob".into())),
            }
        }
        Rule::OwnAccountAsHost => {
            let at = format!("{path}.from");
            match field(fs, "from") {
                Some(IDLValue::Record(acct)) => match field(acct, "owner") {
                    Some(IDLValue::Principal(p)) if *p == owner => {}
                    Some(IDLValue::Principal(p)) => {
                        return Err(refuse(
                            &format!("{at}.owner"),
                            format!("it spends from {p}'s account, not {owner}'s"),
                        ))
                    }
                    _ => {
                        return Err(refuse(
                            &format!("{at}.owner"),
                            "the source account has no owner".into(),
                        ))
                    }
                },
                _ => return Err(refuse(&at, "the source account is not a record".into())),
            }
            let at = format!("{path}.spender_subaccount");
            match opt_blob(field(fs, "spender_subaccount")) {
                Ok(None) => Ok(()),
                Ok(Some(b)) if b.iter().all(|x| *x == 0) => Ok(()),
                Ok(Some(_)) => Err(refuse(&at, "it spends as a subaccount of the tool host; only the tool host itself is the spender owners approve".into())),
                Err(()) => Err(refuse(&at, "the spender subaccount is not a blob".into())),
            }
        }
    }
}

/// The fields custody reads, read straight off the wire for the common shape (one record
/// argument whose source fields are `opt blob` and an account record): a general Candid decode
/// of the whole argument costs hundreds of thousands of instructions on every prepare and send.
/// `None` for any other shape: the general decoder reads it (same result, higher cost).
fn fast_fields(arg: &[u8]) -> Option<(Vec<IDLField>, Vec<u32>)> {
    use tool_host_core::wire::{self, label, Ty};
    let (table, mut r) = wire::parse(arg)?;
    let first = *table.args.first()?;
    let (l_sub, l_from, l_spender, l_owner) = (
        label("from_subaccount"),
        label("from"),
        label("spender_subaccount"),
        label("owner"),
    );
    let opt_blob = |r: &mut wire::Reader, t: Ty| -> Option<IDLValue> {
        let inner = match table.entry(t)? {
            wire::Entry::Opt(inner) if table.is_blob(*inner) => *inner,
            _ => return None,
        };
        match r.u8()? {
            0 => Some(IDLValue::None),
            1 => Some(IDLValue::Opt(Box::new(IDLValue::Blob(
                r.blob(&table, inner)?,
            )))),
            _ => None,
        }
    };
    let mut out = vec![];
    let mut ids = vec![];
    r.record(&table, first, |r, id, ft| {
        ids.push(id);
        let named = |n: &str| IDLField {
            id: candid::types::Label::Named(n.into()),
            val: IDLValue::Null,
        };
        if id == l_sub || id == l_spender {
            let mut f = named(if id == l_sub {
                "from_subaccount"
            } else {
                "spender_subaccount"
            });
            f.val = opt_blob(r, ft)?;
            out.push(f);
        } else if id == l_from {
            let mut owner = None;
            r.record(&table, ft, |r, id, t| {
                if id == l_owner {
                    owner = Some(r.principal(t)?);
                    return Some(true);
                }
                Some(false)
            })?;
            let mut f = named("from");
            f.val = IDLValue::Record(vec![IDLField {
                id: candid::types::Label::Named("owner".into()),
                val: IDLValue::Principal(owner?),
            }]);
            out.push(f);
        } else {
            return Some(false);
        }
        Some(true)
    })?;
    // Nothing after it, as the general decoder has it (trailing bytes are refused there, and a
    // further argument is refused there with its reason).
    (table.args.len() == 1 && r.at_end()).then_some((out, ids))
}

/// The custody check of one send of `method` with argument bytes `arg` for `owner`.
pub fn check(method: &str, arg: &[u8], owner: Principal) -> Result<(), ApiError> {
    check_with(method, arg, owner, true)
}

fn check_with(method: &str, arg: &[u8], owner: Principal, fast: bool) -> Result<(), ApiError> {
    let Some((rule, batch, nested)) = rule_of(method) else {
        return Ok(());
    };
    let allowed = standard_fields(method);
    if fast && !batch && nested.is_none() {
        if let Some((fs, ids)) = fast_fields(arg) {
            if let Some(id) = unknown_field(ids.into_iter(), allowed) {
                return Err(not_standard(method, "$args[0]", &format!("#{id}")));
            }
            return check_record(&fs, rule, None, owner, "$args[0]");
        }
    }
    let mut config = candid::DecoderConfig::new();
    config.set_decoding_quota(20_000_000);
    let args = IDLArgs::from_bytes_with_config(arg, &config)
        .map_err(|e| refuse("$args", format!("the argument bytes do not decode: {e}")))?;
    let first = args
        .args
        .first()
        .ok_or_else(|| refuse("$args[0]", format!("{method} has no argument")))?;
    if args.args.len() > 1 {
        return Err(refuse(
            "$args[1]",
            format!("{method} takes one argument, as its standard gives it: a target may read the source of funds from another"),
        ));
    }
    let records: Vec<(String, &[IDLField])> = if batch {
        let IDLValue::Vec(items) = first else {
            return Err(refuse(
                "$args[0]",
                format!("{method}'s argument is not a vec"),
            ));
        };
        let mut out = vec![];
        for (k, item) in items.iter().enumerate() {
            match item {
                IDLValue::Record(fs) => out.push((format!("$args[0][{k}]"), fs.as_slice())),
                _ => {
                    return Err(refuse(
                        &format!("$args[0][{k}]"),
                        "an element is not a record".into(),
                    ))
                }
            }
        }
        out
    } else {
        match first {
            IDLValue::Record(fs) => vec![("$args[0]".to_string(), fs.as_slice())],
            _ => {
                return Err(refuse(
                    "$args[0]",
                    format!("{method}'s argument is not a record"),
                ))
            }
        }
    };
    for (path, fs) in records {
        closed_shape(fs, allowed, method, &path)?;
        if let Some(n) = nested {
            if let Some(IDLValue::Record(inner)) = field(fs, n) {
                closed_shape(inner, APPROVAL_INFO, method, &format!("{path}.{n}"))?;
            }
        }
        check_record(fs, rule, nested, owner, &path)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use candid::{CandidType, Nat};
    use serde_bytes::ByteBuf;

    #[derive(CandidType)]
    struct Account {
        owner: Principal,
        subaccount: Option<ByteBuf>,
    }
    #[derive(CandidType)]
    struct TransferArg {
        from_subaccount: Option<ByteBuf>,
        to: Account,
        amount: Nat,
    }
    #[derive(CandidType)]
    struct TransferFromArgs {
        spender_subaccount: Option<ByteBuf>,
        from: Account,
        to: Account,
        amount: Nat,
    }

    fn owner() -> Principal {
        Principal::from_slice(&[7; 10])
    }
    fn other() -> Principal {
        Principal::from_slice(&[8; 10])
    }
    fn to() -> Account {
        Account {
            owner: other(),
            subaccount: None,
        }
    }
    fn transfer(sub: Option<Vec<u8>>) -> Vec<u8> {
        candid::encode_one(TransferArg {
            from_subaccount: sub.map(ByteBuf::from),
            to: to(),
            amount: Nat::from(1u8),
        })
        .unwrap()
    }

    #[test]
    fn a_transfer_spends_only_from_its_owners_deposit() {
        let mine = deposit_subaccount(&owner()).to_vec();
        assert!(check("icrc1_transfer", &transfer(Some(mine.clone())), owner()).is_ok());
        let e = check(
            "icrc1_transfer",
            &transfer(Some(deposit_subaccount(&other()).to_vec())),
            owner(),
        )
        .unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.issues[0].path.as_str()),
            ("CUSTODY", "$args[0].from_subaccount")
        );
        let e = check("icrc1_transfer", &transfer(None), owner()).unwrap_err();
        assert!(
            e.message.contains("the tool host's own account"),
            "{}",
            e.message
        );
        assert!(check("icrc2_approve", &transfer(Some(mine)), other()).is_err());
    }

    #[test]
    fn a_field_renamed_by_a_form_is_the_field_the_ledger_reads_as_absent() {
        #[derive(CandidType)]
        struct Renamed {
            source: Option<ByteBuf>,
            to: Account,
            amount: Nat,
        }
        let bytes = candid::encode_one(Renamed {
            source: Some(ByteBuf::from(deposit_subaccount(&owner()).to_vec())),
            to: to(),
            amount: Nat::from(1u8),
        })
        .unwrap();
        assert_eq!(
            check("icrc1_transfer", &bytes, owner()).unwrap_err().code,
            "CUSTODY"
        );
    }

    #[test]
    fn a_batch_checks_every_element() {
        let mine = deposit_subaccount(&owner()).to_vec();
        let batch = |subs: Vec<Option<Vec<u8>>>| {
            let v: Vec<TransferArg> = subs
                .into_iter()
                .map(|s| TransferArg {
                    from_subaccount: s.map(ByteBuf::from),
                    to: to(),
                    amount: Nat::from(1u8),
                })
                .collect();
            candid::encode_one(v).unwrap()
        };
        assert!(check(
            "icrc4_transfer_batch",
            &batch(vec![Some(mine.clone()), Some(mine.clone())]),
            owner()
        )
        .is_ok());
        let e = check(
            "icrc4_transfer_batch",
            &batch(vec![Some(mine), None]),
            owner(),
        )
        .unwrap_err();
        assert_eq!(e.issues[0].path, "$args[0][1].from_subaccount");
    }

    #[test]
    fn a_transfer_from_spends_only_the_owners_own_account_as_the_host() {
        let tf = |from: Principal, spender: Option<Vec<u8>>| {
            candid::encode_one(TransferFromArgs {
                spender_subaccount: spender.map(ByteBuf::from),
                from: Account {
                    owner: from,
                    subaccount: None,
                },
                to: to(),
                amount: Nat::from(1u8),
            })
            .unwrap()
        };
        assert!(check("icrc2_transfer_from", &tf(owner(), None), owner()).is_ok());
        assert!(check(
            "icrc2_transfer_from",
            &tf(owner(), Some(vec![0; 32])),
            owner()
        )
        .is_ok());
        assert_eq!(
            check("icrc2_transfer_from", &tf(other(), None), owner())
                .unwrap_err()
                .issues[0]
                .path,
            "$args[0].from.owner"
        );
        assert_eq!(
            check(
                "icrc2_transfer_from",
                &tf(owner(), Some(vec![1; 32])),
                owner()
            )
            .unwrap_err()
            .issues[0]
                .path,
            "$args[0].spender_subaccount"
        );
    }

    #[test]
    fn the_wire_reading_and_the_general_decoder_agree() {
        // Every combination of source, spender and owner fields, present, absent, or of
        // another type, in transfer, approve and transfer_from shapes.
        #[derive(CandidType)]
        struct Any {
            from_subaccount: Option<Option<ByteBuf>>,
            spender_subaccount: Option<ByteBuf>,
            from: Option<Account>,
            to: Account,
            amount: Nat,
            memo: Option<ByteBuf>,
        }
        #[derive(CandidType)]
        struct Odd {
            from_subaccount: Option<String>,
            to: Account,
        }
        let subs = [
            None,
            Some(deposit_subaccount(&owner()).to_vec()),
            Some(deposit_subaccount(&other()).to_vec()),
            Some(vec![0; 32]),
            Some(vec![1; 3]),
        ];
        let mut cases: Vec<Vec<u8>> = vec![];
        for a in &subs {
            for b in &subs {
                for from in [None, Some(owner()), Some(other())] {
                    for nested in [false, true] {
                        cases.push(
                            candid::encode_one(Any {
                                from_subaccount: if nested {
                                    Some(a.clone().map(ByteBuf::from))
                                } else {
                                    a.clone().map(|x| Some(ByteBuf::from(x)))
                                },
                                spender_subaccount: b.clone().map(ByteBuf::from),
                                from: from.map(|o| Account {
                                    owner: o,
                                    subaccount: a.clone().map(ByteBuf::from),
                                }),
                                to: to(),
                                amount: Nat::from(5u8),
                                memo: Some(ByteBuf::from(vec![1, 2])),
                            })
                            .unwrap(),
                        );
                    }
                }
            }
        }
        cases.push(
            candid::encode_one(Odd {
                from_subaccount: Some("x".into()),
                to: to(),
            })
            .unwrap(),
        );
        cases.push(b"DIDL\x00\x00".to_vec());
        cases.push(b"garbage".to_vec());
        // The owner's own spend, then bytes after the message (the general decoder refuses
        // them; a fast path that stopped after the first argument did not), and a second
        // argument (read by both).
        #[derive(CandidType)]
        struct Own {
            from_subaccount: Option<ByteBuf>,
            to: Account,
            amount: Nat,
        }
        let own = candid::encode_one(Own {
            from_subaccount: Some(ByteBuf::from(deposit_subaccount(&owner()).to_vec())),
            to: to(),
            amount: Nat::from(5u8),
        })
        .unwrap();
        assert!(check_with("icrc1_transfer", &own, owner(), false).is_ok());
        let mut trailing = own.clone();
        trailing.extend_from_slice(b"\xff\xff trailing");
        cases.push(trailing);
        let two = |a: &[u8]| {
            let first = candid::IDLArgs::from_bytes(a).unwrap().args.remove(0);
            candid::IDLArgs::new(&[first, IDLValue::Text("second".into())])
                .to_bytes()
                .unwrap()
        };
        cases.push(two(&own));
        for m in ["icrc1_transfer", "icrc2_approve", "icrc2_transfer_from"] {
            for bytes in &cases {
                let fast =
                    check_with(m, bytes, owner(), true).map_err(|e| e.issues[0].path.clone());
                let slow =
                    check_with(m, bytes, owner(), false).map_err(|e| e.issues[0].path.clone());
                assert_eq!(fast.is_ok(), slow.is_ok(), "{m}: {fast:?} / {slow:?}");
            }
        }
    }

    #[test]
    fn a_second_argument_is_refused_whatever_the_first_says() {
        // The standards give these methods one argument; a target may read its source of
        // funds from another (found by the fourth review: only the first was checked).
        let mine = deposit_subaccount(&owner()).to_vec();
        let first = candid::IDLArgs::from_bytes(&transfer(Some(mine.clone())))
            .unwrap()
            .args
            .remove(0);
        let two =
            candid::IDLArgs::new(&[first, IDLValue::Blob(deposit_subaccount(&other()).to_vec())])
                .to_bytes()
                .unwrap();
        for fast in [true, false] {
            let e = check_with("icrc1_transfer", &two, owner(), fast).unwrap_err();
            assert_eq!(
                (e.code.as_str(), e.issues[0].path.as_str()),
                ("CUSTODY", "$args[1]"),
                "fast {fast}"
            );
        }
        assert!(check("icrc1_transfer", &transfer(Some(mine)), owner()).is_ok());
    }

    #[test]
    fn a_declared_shape_the_bytes_check_would_refuse_is_named() {
        let form = |args: serde_json::Value| {
            let v = serde_json::json!({ "format": "candid-profile-resolved", "format_version": 0, "name": "t",
                "types": { "Approval": { "type": "record", "fields": [
                    { "name": "spender", "type": "principal" }, { "name": "owner", "type": "principal" } ] } },
                "methods": { "m": { "mode": "update", "args": args, "results": [] } } });
            tool_host_core::form::form_from_json(&v).unwrap()
        };
        let shape = |method: &str, args: serde_json::Value| {
            let f = form(args);
            declared_shape(&f, method, &f.methods["m"].args)
        };
        let rec = |names: &[&str]| {
            let fs: Vec<_> = names
                .iter()
                .map(|n| serde_json::json!({ "name": n, "type": "nat" }))
                .collect();
            serde_json::json!({ "type": "record", "fields": fs })
        };
        let std = rec(&[
            "from_subaccount",
            "to",
            "amount",
            "fee",
            "memo",
            "created_at_time",
        ]);
        assert_eq!(
            shape("icrc1_transfer", serde_json::json!([std.clone()])),
            None
        );
        assert_eq!(shape("vote", serde_json::json!([rec(&["x"])])), None);
        for (method, args, want) in [
            (
                "icrc1_transfer",
                serde_json::json!([std.clone(), std.clone()]),
                "list has 2 arguments",
            ),
            (
                "icrc1_transfer",
                serde_json::json!([rec(&["to", "subaccount"])]),
                "(subaccount)",
            ),
            (
                "icrc1_transfer",
                serde_json::json!([{ "type": "vec", "inner": std.clone() }]),
                "is not a record",
            ),
            (
                "icrc4_transfer_batch",
                serde_json::json!([std.clone()]),
                "is not a vec of records",
            ),
            (
                "icrc4_transfer_batch",
                serde_json::json!([{ "type": "vec", "inner": rec(&["to", "extra"]) }]),
                "(extra)",
            ),
            (
                "icrc37_approve_collection",
                serde_json::json!([{ "type": "vec", "inner": { "type": "record", "fields": [
                { "name": "approval_info", "type": "Approval" } ] } }]),
                "(approval_info.owner)",
            ),
        ] {
            let why = shape(method, args).unwrap_or_else(|| panic!("{method}: {want}"));
            assert!(why.contains(want), "{method}: {why}");
        }
    }

    #[test]
    fn other_methods_have_no_rule_here() {
        // Not checked here: the catalog offers their tools only on a canister registered for
        // a single owner (tests/custody.rs).
        assert!(check("vote", b"DIDL\x00\x00", owner()).is_ok());
        assert!(!covers("vote"));
        assert!(!known_read("vote"));
    }

    /// The three lists of the methods that move funds stay one: the core's (never a read tool,
    /// shown irreversible, units from the ledger), the rules here, and their standards' fields
    /// (a covered method without them would refuse every argument).
    #[test]
    fn every_funds_method_has_a_rule_and_its_standards_fields() {
        for m in tool_host_core::plan::FUNDS_METHODS {
            assert!(covers(m), "{m}");
            assert!(!standard_fields(m).is_empty(), "{m}");
            assert!(!known_read(m), "{m}");
        }
        for m in [
            "icrc1_transfer",
            "icrc2_approve",
            "transfer",
            "send_dfx",
            "withdraw",
            "create_canister",
            "icrc4_transfer_batch",
            "icrc7_transfer",
            "icrc37_approve_tokens",
            "icrc37_approve_collection",
            "icrc2_transfer_from",
            "withdraw_from",
            "create_canister_from",
            "icrc37_transfer_from",
        ] {
            assert!(covers(m), "{m}");
            assert!(tool_host_core::plan::FUNDS_METHODS.contains(&m), "{m}");
        }
        assert_eq!(tool_host_core::plan::FUNDS_METHODS.len(), 14);
    }

    #[test]
    fn field_hash_is_candids() {
        for n in [
            "",
            "a",
            "from_subaccount",
            "created_at_time",
            "approval_info",
            "ü",
        ] {
            assert_eq!(field_hash(n), candid::idl_hash(n), "{n}");
        }
        assert_eq!(standard_fields("icrc1_transfer").len(), 6);
        assert_eq!(APPROVAL_INFO[0], candid::idl_hash("spender"));
    }

    #[test]
    fn a_record_with_a_field_its_standard_does_not_give_is_refused() {
        // EXT's `transfer` reads its source from `subaccount`; a form that adds the ICP
        // ledger's `from_subaccount` (which EXT ignores) must not pass.
        #[derive(CandidType)]
        struct Ext {
            from_subaccount: Option<ByteBuf>,
            to: Principal,
            token: String,
            amount: Nat,
            subaccount: Option<ByteBuf>,
        }
        let bytes = candid::encode_one(Ext {
            from_subaccount: Some(ByteBuf::from(deposit_subaccount(&owner()).to_vec())),
            to: other(),
            token: "tok".into(),
            amount: Nat::from(100u8),
            subaccount: Some(ByteBuf::from(deposit_subaccount(&other()).to_vec())),
        })
        .unwrap();
        for fast in [true, false] {
            let e = check_with("transfer", &bytes, owner(), fast).unwrap_err();
            assert!(
                e.issues[0].message.contains("standard does not give"),
                "fast {fast}: {e:?}"
            );
        }
    }

    #[test]
    fn the_cycles_ledgers_spends_are_covered() {
        #[derive(CandidType)]
        struct Withdraw {
            amount: Nat,
            from_subaccount: Option<ByteBuf>,
            to: Principal,
            created_at_time: Option<u64>,
        }
        #[derive(CandidType)]
        struct WithdrawFrom {
            spender_subaccount: Option<ByteBuf>,
            from: Account,
            amount: Nat,
            created_at_time: Option<u64>,
        }
        let withdraw = |sub: Option<Vec<u8>>| {
            candid::encode_one(Withdraw {
                amount: Nat::from(1u8),
                from_subaccount: sub.map(ByteBuf::from),
                to: other(),
                created_at_time: None,
            })
            .unwrap()
        };
        #[derive(CandidType)]
        struct Create {
            from_subaccount: Option<ByteBuf>,
            created_at_time: Option<u64>,
            amount: Nat,
        }
        let create = |sub: Option<Vec<u8>>| {
            candid::encode_one(Create {
                from_subaccount: sub.map(ByteBuf::from),
                created_at_time: None,
                amount: Nat::from(1u8),
            })
            .unwrap()
        };
        let own = Some(deposit_subaccount(&owner()).to_vec());
        let theirs = Some(deposit_subaccount(&other()).to_vec());
        type Encode<'a> = &'a dyn Fn(Option<Vec<u8>>) -> Vec<u8>;
        for (m, encode) in [
            ("withdraw", &withdraw as Encode),
            ("create_canister", &create as Encode),
        ] {
            assert!(covers(m) && !known_read(m));
            assert!(check(m, &encode(own.clone()), owner()).is_ok(), "{m}");
            for sub in [None, theirs.clone()] {
                let e = check(m, &encode(sub), owner()).unwrap_err();
                assert_eq!(e.issues[0].path, "$args[0].from_subaccount", "{m}");
            }
        }
        // `to` is not a field of `create_canister`: a record the standard does not give it.
        let e = check("create_canister", &withdraw(own.clone()), owner()).unwrap_err();
        assert!(
            e.issues[0].message.contains("standard does not give"),
            "{e:?}"
        );
        let from = |who: Principal| {
            candid::encode_one(WithdrawFrom {
                spender_subaccount: None,
                from: Account {
                    owner: who,
                    subaccount: None,
                },
                amount: Nat::from(1u8),
                created_at_time: None,
            })
            .unwrap()
        };
        for m in ["withdraw_from", "create_canister_from"] {
            assert!(covers(m));
            assert!(check(m, &from(owner()), owner()).is_ok(), "{m}");
            let e = check(m, &from(other()), owner()).unwrap_err();
            assert_eq!(e.issues[0].path, "$args[0].from.owner", "{m}");
        }
    }
}
