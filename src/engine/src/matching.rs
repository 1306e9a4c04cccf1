//! Whether an ICRC-3 block is an intent's transaction: its whole transaction is compared with
//! the intent's exact argument bytes. Operation, source account, spender, memo and stamp
//! (`created_at_time`) say whose it is: only the tool host can move funds from its owners'
//! deposit subaccounts or spend their allowances, and memo and stamp are unique per intent, so
//! a block with all five is this intent's; a decoy made by anyone else differs in one of them.
//! The rest (recipient, amount, fee where given, allowance terms) must then be equal too: a
//! block that has the first five and differs in the rest is a conflict, never a guess.
//!
//! Blocks are read as the ICRC-3 standard defines them for ICRC-1/2 transactions: the
//! operation from `btype` (`1xfer`, `2xfer`, `2approve`, ...) or from `tx.op` (`xfer`,
//! `approve`, ...), accounts as `[owner blob, subaccount blob?]` (a default subaccount may be
//! left out or written as 32 zero bytes), numbers as `Nat`, `tx.ts` the transaction's
//! `created_at_time`, a fee in `tx.fee` when the caller gave one (or the block's own `fee`).

use crate::reconcile::icrc3::Value;
use candid::{IDLArgs, IDLValue, Principal};
use num_bigint::BigUint;

use tool_host_core::wire::blocks::op_of;
pub use tool_host_core::wire::blocks::{Account, Op, Tx};

/// The transaction an intent's bytes make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub op: Op,
    pub from: Account,
    pub to: Option<Account>,
    pub spender: Option<Account>,
    pub amount: BigUint,
    pub fee: Option<BigUint>,
    pub memo: Option<Vec<u8>>,
    pub created_at_time: Option<u64>,
    pub expected_allowance: Option<BigUint>,
    pub expires_at: Option<u64>,
}

/// How a block compares with an intent's transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// This intent's transaction.
    Same,
    /// This intent's operation, account, spender, memo and stamp, but not the same: why.
    Conflict(String),
    /// Someone else's.
    Other,
}

fn field<'a>(fields: &'a [candid::types::value::IDLField], name: &str) -> Option<&'a IDLValue> {
    fields
        .iter()
        .find(|f| crate::names::is_label(&f.id, name))
        .map(|f| &f.val)
}

/// The value inside an `opt` (none for `null`), or the value itself.
fn opt(v: Option<&IDLValue>) -> Option<&IDLValue> {
    match v? {
        IDLValue::Opt(inner) => Some(inner),
        IDLValue::None | IDLValue::Null => None,
        other => Some(other),
    }
}

fn blob(v: &IDLValue) -> Option<Vec<u8>> {
    match v {
        IDLValue::Blob(b) => Some(b.clone()),
        IDLValue::Vec(items) => items
            .iter()
            .map(|x| match x {
                IDLValue::Nat8(b) => Some(*b),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn subaccount(v: Option<&IDLValue>) -> Result<[u8; 32], String> {
    match opt(v) {
        None => Ok([0; 32]),
        Some(v) => blob(v)
            .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
            .ok_or_else(|| "a subaccount is not 32 bytes".to_string()),
    }
}

fn account(v: Option<&IDLValue>) -> Result<Account, String> {
    let Some(IDLValue::Record(fs)) = v else {
        return Err("an account is not a record".into());
    };
    let owner = match field(fs, "owner") {
        Some(IDLValue::Principal(p)) => *p,
        _ => return Err("an account has no owner".into()),
    };
    Ok(Account {
        owner,
        subaccount: subaccount(field(fs, "subaccount"))?,
    })
}

fn nat(v: Option<&IDLValue>, what: &str) -> Result<BigUint, String> {
    v.and_then(tool_host_core::read::value::value_uint)
        .ok_or_else(|| format!("the {what} is not a natural number"))
}

fn opt_nat(v: Option<&IDLValue>) -> Option<BigUint> {
    opt(v).and_then(tool_host_core::read::value::value_uint)
}

fn opt_u64(v: Option<&IDLValue>) -> Option<u64> {
    opt_nat(v).and_then(|n| u64::try_from(n).ok())
}

/// The transaction an ICRC-1/2 method's argument bytes make when the tool host sends them;
/// `Err` for a method whose transactions have no ICRC-3 form this reads.
pub fn expected(method: &str, arg: &[u8], host: Principal) -> Result<Expected, String> {
    let args =
        IDLArgs::from_bytes(arg).map_err(|e| format!("the intent's bytes do not decode: {e}"))?;
    let Some(IDLValue::Record(fs)) = args.args.first() else {
        return Err(format!("{method}'s argument is not a record"));
    };
    let host_account = |name: &str| -> Result<Account, String> {
        Ok(Account {
            owner: host,
            subaccount: subaccount(field(fs, name))?,
        })
    };
    let common = |op, from, to, spender| -> Result<Expected, String> {
        Ok(Expected {
            op,
            from,
            to,
            spender,
            amount: nat(field(fs, "amount"), "amount")?,
            fee: opt_nat(field(fs, "fee")),
            memo: opt(field(fs, "memo")).and_then(blob),
            created_at_time: opt_u64(field(fs, "created_at_time")),
            expected_allowance: opt_nat(field(fs, "expected_allowance")),
            expires_at: opt_u64(field(fs, "expires_at")),
        })
    };
    match method {
        "icrc1_transfer" => common(
            Op::Transfer,
            host_account("from_subaccount")?,
            Some(account(field(fs, "to"))?),
            None,
        ),
        "icrc2_approve" => common(
            Op::Approve,
            host_account("from_subaccount")?,
            None,
            Some(account(field(fs, "spender"))?),
        ),
        "icrc2_transfer_from" => common(
            Op::Transfer,
            account(field(fs, "from"))?,
            Some(account(field(fs, "to"))?),
            Some(host_account("spender_subaccount")?),
        ),
        other => Err(format!(
            "{other} is not an ICRC-1/2 method, so its transactions have no ICRC-3 block form to compare"
        )),
    }
}

fn value_nat(v: Option<&Value>) -> Option<BigUint> {
    match v? {
        Value::Nat(n) => Some(n.0.clone()),
        Value::Int(i) => i.0.to_biguint(),
        Value::Nat64(n) => Some(BigUint::from(*n)),
        _ => None,
    }
}

fn value_account(v: Option<&Value>) -> Option<Account> {
    let Value::Array(parts) = v? else { return None };
    let owner = match parts.first()? {
        Value::Blob(b) => Principal::try_from_slice(b).ok()?,
        _ => return None,
    };
    let subaccount = match parts.get(1) {
        None => [0; 32],
        Some(Value::Blob(b)) => <[u8; 32]>::try_from(b.as_slice()).ok()?,
        Some(_) => return None,
    };
    if parts.len() > 2 {
        return None;
    }
    Some(Account { owner, subaccount })
}

/// Reads a block's transaction (`None` when the block has no `tx` map).
pub fn read_tx(block: &Value) -> Option<Tx> {
    let tx = block.get("tx")?;
    if !matches!(tx, Value::Map(_)) {
        return None;
    }
    let text = |v: Option<&Value>| match v {
        Some(Value::Text(t)) => Some(t.clone()),
        _ => None,
    };
    let op = match (text(block.get("btype")), text(tx.get("op"))) {
        (Some(b), _) => op_of(&b),
        (None, Some(o)) => op_of(&o),
        (None, None) => None,
    };
    Some(Tx {
        op,
        from: value_account(tx.get("from")),
        to: value_account(tx.get("to")),
        spender: value_account(tx.get("spender")),
        amount: value_nat(tx.get("amt")),
        fee: value_nat(tx.get("fee")),
        block_fee: value_nat(block.get("fee")),
        memo: match tx.get("memo") {
            Some(Value::Blob(b)) => Some(b.to_vec()),
            _ => None,
        },
        created_at_time: value_nat(tx.get("ts")),
        expected_allowance: value_nat(tx.get("expected_allowance")),
        expires_at: value_nat(tx.get("expires_at")),
    })
}

/// Compares a block with an intent's transaction.
pub fn compare(block: &Value, e: &Expected) -> Verdict {
    compare_tx(read_tx(block).as_ref(), e)
}

/// Compares a block's transaction (`None`: the block has none) with an intent's, whichever
/// way the block was read (the general decoder and [`read_tx`], or the wire reader).
pub fn compare_tx(tx: Option<&Tx>, e: &Expected) -> Verdict {
    let Some(tx) = tx else {
        return Verdict::Other;
    };
    let ts = e.created_at_time.map(BigUint::from);
    let stamp = tx.memo == e.memo && tx.created_at_time == ts;
    let from = tx.from.as_ref() == Some(&e.from);
    let whose = tx.op == Some(e.op) && from && tx.spender == e.spender && stamp;
    if !whose {
        // The intent's memo and stamp from its account (or from one that does not read) on a
        // block of another kind, or whose account does not read, may be its own written
        // otherwise: a transfer to the minting account is written as a burn. Held, never
        // passed over: a scan that passes over the original reports it absent, and the
        // owner may send again. Only a readable other account, operation or spender is
        // someone else's (an approve always names its spender: none read is one that does
        // not read).
        let unread_spender = tx.op == Some(Op::Approve) && tx.spender.is_none();
        if stamp && (tx.from.is_none() || (from && (tx.op != Some(e.op) || unread_spender))) {
            let op = match tx.op {
                None => "an operation this reader does not know".to_string(),
                Some(o) if unread_spender => format!("{o:?} whose spender does not read"),
                Some(o) => format!("{o:?}"),
            };
            return Verdict::Conflict(format!(
                "the intent's memo and stamp on a block of {op} from {}, where the intent is a {:?} from {}",
                tx.from
                    .as_ref()
                    .map_or("an account that does not read".to_string(), |a| a.to_string()),
                e.op,
                e.from
            ));
        }
        return Verdict::Other;
    }
    let shown = |v: &Option<BigUint>| v.as_ref().map_or("none".to_string(), |n| n.to_string());
    if tx.to != e.to {
        let to = |a: &Option<Account>| a.as_ref().map_or("none".to_string(), |a| a.to_string());
        return Verdict::Conflict(format!(
            "to {} where the intent has {}",
            to(&tx.to),
            to(&e.to)
        ));
    }
    if tx.amount.as_ref() != Some(&e.amount) {
        return Verdict::Conflict(format!(
            "amount {} where the intent has {}",
            shown(&tx.amount),
            e.amount
        ));
    }
    // A fee the intent gave is in the transaction (or, for some ledgers, the block); one it
    // left to the ledger is in the block only.
    let fee_ok = match &e.fee {
        Some(f) => {
            tx.fee.as_ref() == Some(f) || (tx.fee.is_none() && tx.block_fee.as_ref() == Some(f))
        }
        None => tx.fee.is_none(),
    };
    if !fee_ok {
        return Verdict::Conflict(format!(
            "fee {} where the intent has {}",
            shown(&tx.fee),
            shown(&e.fee)
        ));
    }
    if e.op == Op::Approve {
        if tx.expected_allowance != e.expected_allowance {
            return Verdict::Conflict(format!(
                "expected allowance {} where the intent has {}",
                shown(&tx.expected_allowance),
                shown(&e.expected_allowance)
            ));
        }
        let expires = e.expires_at.map(BigUint::from);
        if tx.expires_at != expires {
            return Verdict::Conflict(format!(
                "expiry {} where the intent has {}",
                shown(&tx.expires_at),
                shown(&expires)
            ));
        }
    }
    Verdict::Same
}

#[cfg(test)]
mod tests {
    use super::*;
    use candid::Nat;
    use serde_bytes::ByteBuf;

    fn owner() -> Principal {
        Principal::from_slice(&[1; 10])
    }
    fn to() -> Principal {
        Principal::from_slice(&[2; 10])
    }
    fn map(entries: Vec<(&str, Value)>) -> Value {
        Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }
    fn acct(p: Principal, sub: Option<[u8; 32]>) -> Value {
        let mut parts = vec![Value::Blob(ByteBuf::from(p.as_slice().to_vec()))];
        if let Some(s) = sub {
            parts.push(Value::Blob(ByteBuf::from(s.to_vec())));
        }
        Value::Array(parts)
    }
    fn nat(n: u64) -> Value {
        Value::Nat(Nat::from(n))
    }
    fn expected() -> Expected {
        Expected {
            op: Op::Transfer,
            from: Account {
                owner: owner(),
                subaccount: [0; 32],
            },
            to: Some(Account {
                owner: to(),
                subaccount: [0; 32],
            }),
            spender: None,
            amount: BigUint::from(7u8),
            fee: None,
            memo: Some(b"order-7".to_vec()),
            created_at_time: Some(1_735_689_600_000_000_000),
            expected_allowance: None,
            expires_at: None,
        }
    }
    /// "A transfer of 7 with memo order-7" as docs/test-ledger.md shows each ledger writes it.
    fn transfer_block(btype: bool, fee_in_block: u64) -> Value {
        let mut tx = vec![
            ("amt", nat(7)),
            ("from", acct(owner(), None)),
            ("memo", Value::Blob(ByteBuf::from(b"order-7".to_vec()))),
            ("to", acct(to(), None)),
            ("ts", nat(1_735_689_600_000_000_000)),
        ];
        let mut block = vec![
            ("fee", nat(fee_in_block)),
            ("ts", nat(1_735_689_600_000_000_003)),
        ];
        if btype {
            block.push(("btype", Value::Text("1xfer".into())));
        } else {
            tx.push(("op", Value::Text("xfer".into())));
        }
        block.push(("tx", map(tx)));
        map(block)
    }

    /// A transfer to the minting account is written as a burn: the intent's memo and stamp
    /// from its account on a burn, a mint or an operation that does not read, or on a block
    /// whose account does not read, is held as a conflict, never passed over (passing over
    /// the original reports the intent absent, and its owner may send again).
    #[test]
    fn the_intents_stamp_on_a_block_of_another_kind_is_held_not_passed_over() {
        let e = expected();
        let ours = || Tx {
            op: Some(Op::Burn),
            from: Some(e.from.clone()),
            to: None,
            spender: None,
            amount: Some(BigUint::from(7u8)),
            fee: None,
            block_fee: None,
            memo: e.memo.clone(),
            created_at_time: e.created_at_time.map(BigUint::from),
            expected_allowance: None,
            expires_at: None,
        };
        for tx in [
            ours(),
            Tx { op: None, ..ours() },
            Tx {
                op: Some(Op::Mint),
                from: None,
                ..ours()
            },
            Tx {
                op: Some(Op::Transfer),
                from: None,
                ..ours()
            },
        ] {
            match compare_tx(Some(&tx), &e) {
                Verdict::Conflict(why) => {
                    assert!(why.contains("the intent's memo and stamp"), "{why}")
                }
                v => panic!("{tx:?}: {v:?}"),
            }
        }
        // A readable other account, or another memo or stamp, is someone else's.
        let other = Account {
            owner: to(),
            subaccount: [0; 32],
        };
        for tx in [
            Tx {
                from: Some(other),
                ..ours()
            },
            Tx {
                memo: Some(b"order-8".to_vec()),
                ..ours()
            },
            Tx {
                created_at_time: Some(BigUint::from(1u8)),
                ..ours()
            },
            Tx {
                op: Some(Op::Burn),
                memo: None,
                ..ours()
            },
        ] {
            assert_eq!(compare_tx(Some(&tx), &e), Verdict::Other, "{tx:?}");
        }
    }

    #[test]
    fn both_ledgers_transfers_are_read_alike() {
        assert_eq!(
            compare(&transfer_block(true, 10_000), &expected()),
            Verdict::Same
        );
        assert_eq!(
            compare(&transfer_block(false, 100_000_000), &expected()),
            Verdict::Same
        );
    }

    #[test]
    fn a_default_subaccount_written_as_zeros_is_the_same_account() {
        let mut b = transfer_block(false, 0);
        if let Value::Map(es) = &mut b {
            let tx = es.iter_mut().find(|(k, _)| k == "tx").unwrap();
            if let Value::Map(t) = &mut tx.1 {
                t.iter_mut().find(|(k, _)| k == "from").unwrap().1 = acct(owner(), Some([0; 32]));
            }
        }
        assert_eq!(compare(&b, &expected()), Verdict::Same);
    }

    /// Found by the third review: an approve of the intent's memo and stamp from its account
    /// whose spender does not read was passed over as someone else's.
    #[test]
    fn an_approve_whose_spender_does_not_read_is_held() {
        let spender = Account {
            owner: Principal::from_slice(&[2; 10]),
            subaccount: [0; 32],
        };
        let mut e = expected();
        e.op = Op::Approve;
        e.to = None;
        e.spender = Some(spender.clone());
        let tx = |spender: Option<Account>| Tx {
            op: Some(Op::Approve),
            from: Some(e.from.clone()),
            to: None,
            spender,
            amount: Some(e.amount.clone()),
            fee: None,
            block_fee: None,
            memo: e.memo.clone(),
            created_at_time: e.created_at_time.map(BigUint::from),
            expected_allowance: None,
            expires_at: None,
        };
        assert!(matches!(
            compare_tx(Some(&tx(None)), &e),
            Verdict::Conflict(_)
        ));
        // Another readable spender is someone else's approve; the intent's is the intent's.
        let other = Account {
            owner: Principal::from_slice(&[3; 10]),
            subaccount: [0; 32],
        };
        assert_eq!(compare_tx(Some(&tx(Some(other))), &e), Verdict::Other);
        assert_eq!(compare_tx(Some(&tx(Some(spender))), &e), Verdict::Same);
    }

    #[test]
    fn a_transfer_from_is_xfer_with_a_spender_in_either_style() {
        let host = Principal::from_slice(&[9; 10]);
        let mut e = expected();
        e.spender = Some(Account {
            owner: host,
            subaccount: [0; 32],
        });
        for btype in [true, false] {
            let mut tx = vec![
                ("amt", nat(7)),
                ("from", acct(owner(), None)),
                ("memo", Value::Blob(ByteBuf::from(b"order-7".to_vec()))),
                ("spender", acct(host, None)),
                ("to", acct(to(), None)),
                ("ts", nat(1_735_689_600_000_000_000)),
            ];
            let mut block = vec![("fee", nat(100))];
            if btype {
                block.push(("btype", Value::Text("2xfer".into())));
            } else {
                tx.push(("op", Value::Text("xfer".into())));
            }
            block.push(("tx", map(tx)));
            assert_eq!(compare(&map(block), &e), Verdict::Same, "btype {btype}");
            // Without its spender it is someone else's transfer.
            assert_eq!(compare(&transfer_block(btype, 0), &e), Verdict::Other);
        }
    }

    #[test]
    fn a_mint_with_the_cycles_ledgers_fees_is_never_a_transfer() {
        let mint = map(vec![
            ("fee", nat(0)),
            (
                "tx",
                map(vec![
                    ("amt", nat(7)),
                    ("fee", nat(100_000_000)),
                    ("op", Value::Text("mint".into())),
                    ("to", acct(to(), None)),
                ]),
            ),
        ]);
        assert_eq!(compare(&mint, &expected()), Verdict::Other);
    }

    #[test]
    fn a_stated_fee_is_the_transactions_and_a_nat64_reads_as_its_number() {
        let mut e = expected();
        e.fee = Some(BigUint::from(10_000u32));
        let mut b = transfer_block(false, 0);
        if let Value::Map(es) = &mut b {
            es.retain(|(k, _)| k != "fee");
            let tx = es.iter_mut().find(|(k, _)| k == "tx").unwrap();
            if let Value::Map(t) = &mut tx.1 {
                t.push(("fee".into(), Value::Nat64(10_000)));
            }
        }
        assert_eq!(compare(&b, &e), Verdict::Same);
        e.fee = Some(BigUint::from(9_999u32));
        assert!(matches!(compare(&b, &e), Verdict::Conflict(_)));
    }
}
