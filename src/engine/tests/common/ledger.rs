//! A model ICRC-1/2/3 ledger for the engine's tests: balances, fees, allowances, the 24 h
//! deduplication window with its 60 s drift (`Duplicate`, `TooOld`, `CreatedInFuture`),
//! and an ICRC-3 log with an archive that may answer short pages. Its blocks are written as
//! the ICRC-3 standard defines them, in either style (`btype` or `tx.op`), so that the
//! engine's reading is checked against the standard and not against itself.

use candid::types::value::{IDLField, VariantValue};
use candid::types::Label;
use candid::{IDLArgs, IDLValue, Nat, Principal};
use std::collections::BTreeMap;
use tool_host_engine::reconcile::icrc3::{
    ArchiveFn, ArchivedBlocks, BlockWithId, GetBlocksRequest, GetBlocksResult, Value,
};

pub const WINDOW: u64 = 24 * 3_600 * 1_000_000_000;
pub const DRIFT: u64 = 60 * 1_000_000_000;

pub type Acct = (Principal, [u8; 32]);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Mint,
    Transfer,
    Approve,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub op: Op,
    pub from: Option<Acct>,
    pub to: Option<Acct>,
    pub spender: Option<Acct>,
    pub amount: u128,
    /// The fee the caller gave (in the transaction), if any.
    pub fee: Option<u128>,
    /// The fee charged.
    pub effective_fee: u128,
    pub memo: Option<Vec<u8>>,
    pub created_at_time: Option<u64>,
    pub expected_allowance: Option<u128>,
    pub expires_at: Option<u64>,
    /// The ledger's clock when the block was made.
    pub timestamp: u64,
    /// Who called (for the tests' bookkeeping; not in the ICRC-3 value).
    pub caller: Principal,
    /// The exact argument bytes the block came from.
    pub arg: Vec<u8>,
}

/// What a call of an update method did.
pub struct Executed {
    /// The reply value (`Ok` / `Err` variant), encoded with the method's result type.
    pub reply: Vec<u8>,
    /// The block it appended, if it executed.
    pub block: Option<u64>,
}

pub struct ModelLedger {
    pub id: Principal,
    pub archive_id: Principal,
    pub fee: u128,
    pub balances: BTreeMap<Acct, u128>,
    pub allowances: BTreeMap<(Acct, Acct), (u128, Option<u64>)>,
    pub blocks: Vec<Block>,
    /// Transactions with a `created_at_time` → their block, for deduplication.
    pub seen: BTreeMap<Vec<u8>, u64>,
    /// Blocks below this index are only in the archive.
    pub archived_below: u64,
    /// Blocks one call answers at most: the ledger, and the archive.
    pub page_limit: u64,
    pub archive_page_limit: u64,
    /// Blocks the archive leaves out of the end of each range it is asked (a short answer).
    pub archive_short_by: u64,
    /// Write `btype` (true) or `tx.op` (false).
    pub btype_style: bool,
}

fn zero() -> [u8; 32] {
    [0; 32]
}

pub fn variant(case: &str, val: IDLValue) -> IDLValue {
    IDLValue::Variant(VariantValue(
        Box::new(IDLField {
            id: Label::Named(case.into()),
            val,
        }),
        0,
    ))
}

pub fn record(fields: &[(&str, IDLValue)]) -> IDLValue {
    IDLValue::Record(
        fields
            .iter()
            .map(|(n, v)| IDLField {
                id: Label::Named((*n).into()),
                val: v.clone(),
            })
            .collect(),
    )
}

pub fn nat(n: u128) -> IDLValue {
    IDLValue::Nat(Nat::from(n))
}

/// A method's reply encoded with its result type in the ICRC packs.
pub fn reply_bytes(method: &str, v: &IDLValue) -> Vec<u8> {
    let pack = if method == "icrc1_transfer" {
        "icrc1"
    } else {
        "icrc2"
    };
    let form = tool_host_core::packs::pack(pack).unwrap();
    let m = &form.form.methods[method];
    let env = tool_host_core::candid_types::type_env(&form.form);
    IDLArgs::new(std::slice::from_ref(v))
        .to_bytes_with_types(&env, &tool_host_core::candid_types::to_types(&m.results))
        .unwrap()
}

fn field<'a>(fs: &'a [IDLField], name: &str) -> Option<&'a IDLValue> {
    fs.iter()
        .find(|f| f.id.get_id() == candid::idl_hash(name))
        .map(|f| &f.val)
}

fn opt(v: Option<&IDLValue>) -> Option<&IDLValue> {
    match v? {
        IDLValue::Opt(inner) => Some(inner),
        IDLValue::None | IDLValue::Null => None,
        other => Some(other),
    }
}

fn blob(v: &IDLValue) -> Vec<u8> {
    match v {
        IDLValue::Blob(b) => b.clone(),
        IDLValue::Vec(items) => items
            .iter()
            .map(|x| {
                if let IDLValue::Nat8(b) = x {
                    *b
                } else {
                    panic!("not a blob")
                }
            })
            .collect(),
        other => panic!("not a blob: {other:?}"),
    }
}

fn uint(v: &IDLValue) -> u128 {
    u128::try_from(tool_host_core::read::value::value_uint(v).expect("a natural number")).unwrap()
}

fn sub(v: Option<&IDLValue>) -> [u8; 32] {
    opt(v).map_or(zero(), |v| blob(v).try_into().expect("32 bytes"))
}

fn account(v: Option<&IDLValue>) -> Acct {
    let Some(IDLValue::Record(fs)) = v else {
        panic!("an account")
    };
    let owner = match field(fs, "owner") {
        Some(IDLValue::Principal(p)) => *p,
        other => panic!("an owner: {other:?}"),
    };
    (owner, sub(field(fs, "subaccount")))
}

fn err(case: &str, payload: IDLValue) -> IDLValue {
    variant("Err", variant(case, payload))
}

impl ModelLedger {
    pub fn new(id: Principal) -> Self {
        ModelLedger {
            id,
            archive_id: Principal::from_slice(&[0xa5, 1, 1]),
            fee: 10_000,
            balances: BTreeMap::new(),
            allowances: BTreeMap::new(),
            blocks: vec![],
            seen: BTreeMap::new(),
            archived_below: 0,
            page_limit: 1_000,
            archive_page_limit: 1_000,
            archive_short_by: 0,
            btype_style: true,
        }
    }

    pub fn balance(&self, a: &Acct) -> u128 {
        self.balances.get(a).copied().unwrap_or(0)
    }

    /// Gives an account a balance from before the log began (no block).
    pub fn credit(&mut self, to: Acct, amount: u128) {
        *self.balances.entry(to).or_default() += amount;
    }

    pub fn mint(&mut self, to: Acct, amount: u128, now: u64) {
        *self.balances.entry(to).or_default() += amount;
        self.blocks.push(Block {
            op: Op::Mint,
            from: None,
            to: Some(to),
            spender: None,
            amount,
            fee: None,
            effective_fee: 0,
            memo: None,
            created_at_time: None,
            expected_allowance: None,
            expires_at: None,
            timestamp: now,
            caller: Principal::anonymous(),
            arg: vec![],
        });
    }

    /// Deduplication and time checks of ICRC-1 for a transaction with `created_at_time`.
    fn time_checks(&self, key: &[u8], created: Option<u64>, now: u64) -> Option<IDLValue> {
        let t = created?;
        if t.saturating_add(WINDOW + DRIFT) < now {
            return Some(err("TooOld", IDLValue::Null));
        }
        if t > now + DRIFT {
            return Some(err(
                "CreatedInFuture",
                record(&[("ledger_time", IDLValue::Nat64(now))]),
            ));
        }
        self.seen
            .get(key)
            .map(|b| err("Duplicate", record(&[("duplicate_of", nat(*b as u128))])))
    }

    /// Executes an update call as the ledger would, at the ledger's clock `now`.
    pub fn execute(&mut self, caller: Principal, method: &str, arg: &[u8], now: u64) -> Executed {
        let args = IDLArgs::from_bytes(arg).expect("the argument decodes");
        let Some(IDLValue::Record(fs)) = args.args.first() else {
            panic!("a record argument")
        };
        let amount = uint(field(fs, "amount").expect("an amount"));
        let fee = opt(field(fs, "fee")).map(uint);
        let memo = opt(field(fs, "memo")).map(blob);
        let created = opt(field(fs, "created_at_time")).map(|v| uint(v) as u64);
        // The deduplication key: the caller and the whole argument.
        let mut key = caller.as_slice().to_vec();
        key.push(0xff);
        key.extend_from_slice(method.as_bytes());
        key.push(0xff);
        key.extend_from_slice(arg);
        let reply = |v: IDLValue, block| Executed {
            reply: reply_bytes(method, &v),
            block,
        };
        if let Some(e) = self.time_checks(&key, created, now) {
            return reply(e, None);
        }
        if let Some(f) = fee {
            if f != self.fee {
                return reply(
                    err("BadFee", record(&[("expected_fee", nat(self.fee))])),
                    None,
                );
            }
        }
        let mut block = Block {
            op: Op::Transfer,
            from: None,
            to: None,
            spender: None,
            amount,
            fee,
            effective_fee: self.fee,
            memo,
            created_at_time: created,
            expected_allowance: None,
            expires_at: None,
            timestamp: now,
            caller,
            arg: arg.to_vec(),
        };
        match method {
            "icrc1_transfer" => {
                let from = (caller, sub(field(fs, "from_subaccount")));
                let to = account(field(fs, "to"));
                let bal = self.balance(&from);
                if bal < amount + self.fee {
                    return reply(
                        err("InsufficientFunds", record(&[("balance", nat(bal))])),
                        None,
                    );
                }
                *self.balances.get_mut(&from).unwrap() -= amount + self.fee;
                *self.balances.entry(to).or_default() += amount;
                block.from = Some(from);
                block.to = Some(to);
            }
            "icrc2_approve" => {
                let from = (caller, sub(field(fs, "from_subaccount")));
                let spender = account(field(fs, "spender"));
                let expected = opt(field(fs, "expected_allowance")).map(uint);
                let expires = opt(field(fs, "expires_at")).map(|v| uint(v) as u64);
                if let Some(x) = expires {
                    if x < now {
                        return reply(
                            err("Expired", record(&[("ledger_time", IDLValue::Nat64(now))])),
                            None,
                        );
                    }
                }
                let current = self.allowance(&from, &spender, now);
                if let Some(e) = expected {
                    if e != current {
                        return reply(
                            err(
                                "AllowanceChanged",
                                record(&[("current_allowance", nat(current))]),
                            ),
                            None,
                        );
                    }
                }
                let bal = self.balance(&from);
                if bal < self.fee {
                    return reply(
                        err("InsufficientFunds", record(&[("balance", nat(bal))])),
                        None,
                    );
                }
                *self.balances.get_mut(&from).unwrap() -= self.fee;
                self.allowances.insert((from, spender), (amount, expires));
                block.op = Op::Approve;
                block.from = Some(from);
                block.spender = Some(spender);
                block.expected_allowance = expected;
                block.expires_at = expires;
            }
            "icrc2_transfer_from" => {
                let spender = (caller, sub(field(fs, "spender_subaccount")));
                let from = account(field(fs, "from"));
                let to = account(field(fs, "to"));
                let allowance = self.allowance(&from, &spender, now);
                if allowance < amount + self.fee {
                    return reply(
                        err(
                            "InsufficientAllowance",
                            record(&[("allowance", nat(allowance))]),
                        ),
                        None,
                    );
                }
                let bal = self.balance(&from);
                if bal < amount + self.fee {
                    return reply(
                        err("InsufficientFunds", record(&[("balance", nat(bal))])),
                        None,
                    );
                }
                *self.balances.get_mut(&from).unwrap() -= amount + self.fee;
                *self.balances.entry(to).or_default() += amount;
                self.allowances.get_mut(&(from, spender)).unwrap().0 -= amount + self.fee;
                block.from = Some(from);
                block.to = Some(to);
                block.spender = Some(spender);
            }
            other => panic!("the model ledger has no method {other}"),
        }
        self.blocks.push(block);
        let index = (self.blocks.len() - 1) as u64;
        if created.is_some() {
            self.seen.insert(key, index);
        }
        reply(variant("Ok", nat(index as u128)), Some(index))
    }

    pub fn allowance(&self, from: &Acct, spender: &Acct, now: u64) -> u128 {
        match self.allowances.get(&(*from, *spender)) {
            Some((a, exp)) if exp.is_none_or(|x| x >= now) => *a,
            _ => 0,
        }
    }

    /// The ICRC-3 value of block `i`.
    pub fn value(&self, i: u64) -> Value {
        let b = &self.blocks[i as usize];
        let acct = |a: &Acct| {
            let mut parts = vec![Value::Blob(serde_bytes::ByteBuf::from(
                a.0.as_slice().to_vec(),
            ))];
            if a.1 != zero() {
                parts.push(Value::Blob(serde_bytes::ByteBuf::from(a.1.to_vec())));
            }
            Value::Array(parts)
        };
        let n = |x: u128| Value::Nat(Nat::from(x));
        let mut tx = vec![("amt".to_string(), n(b.amount))];
        let (btype, op) = match b.op {
            Op::Mint => ("1mint", "mint"),
            Op::Transfer if b.spender.is_some() => ("2xfer", "xfer"),
            Op::Transfer => ("1xfer", "xfer"),
            Op::Approve => ("2approve", "approve"),
        };
        if !self.btype_style {
            tx.push(("op".to_string(), Value::Text(op.into())));
        }
        for (k, a) in [("from", &b.from), ("to", &b.to), ("spender", &b.spender)] {
            if let Some(a) = a {
                tx.push((k.to_string(), acct(a)));
            }
        }
        if let Some(f) = b.fee {
            tx.push(("fee".to_string(), n(f)));
        }
        if let Some(m) = &b.memo {
            tx.push((
                "memo".to_string(),
                Value::Blob(serde_bytes::ByteBuf::from(m.clone())),
            ));
        }
        if let Some(t) = b.created_at_time {
            tx.push(("ts".to_string(), n(t as u128)));
        }
        if let Some(e) = b.expected_allowance {
            tx.push(("expected_allowance".to_string(), n(e)));
        }
        if let Some(x) = b.expires_at {
            tx.push(("expires_at".to_string(), n(x as u128)));
        }
        let mut block = vec![
            ("ts".to_string(), n(b.timestamp as u128)),
            ("tx".to_string(), Value::Map(tx)),
        ];
        if b.fee.is_none() && b.op != Op::Mint {
            block.push(("fee".to_string(), n(b.effective_fee)));
        }
        if self.btype_style {
            block.push(("btype".to_string(), Value::Text(btype.into())));
        }
        Value::Map(block)
    }

    fn blocks_in(&self, start: u64, len: u64, below: u64, limit: u64) -> Vec<BlockWithId> {
        let end = start
            .saturating_add(len.min(limit))
            .min(below)
            .min(self.blocks.len() as u64);
        (start..end.max(start))
            .map(|i| BlockWithId {
                id: Nat::from(i),
                block: self.value(i),
            })
            .collect()
    }

    /// `icrc3_get_blocks` on the ledger: recent blocks itself, older ones by their archive.
    pub fn get_blocks(&self, reqs: &[GetBlocksRequest]) -> GetBlocksResult {
        let mut blocks = vec![];
        let mut archived = vec![];
        for r in reqs {
            let start = u64::try_from(r.start.0.clone()).unwrap();
            let len = u64::try_from(r.length.0.clone()).unwrap();
            let end = start.saturating_add(len).min(self.blocks.len() as u64);
            if start < self.archived_below && start < end {
                let a_end = end.min(self.archived_below);
                archived.push(GetBlocksRequest {
                    start: Nat::from(start),
                    length: Nat::from(a_end - start),
                });
            }
            let own = start.max(self.archived_below);
            if own < end {
                blocks.extend(self.blocks_in(own, end - own, u64::MAX, self.page_limit));
            }
        }
        GetBlocksResult {
            log_length: Nat::from(self.blocks.len() as u64),
            blocks,
            archived_blocks: if archived.is_empty() {
                vec![]
            } else {
                vec![ArchivedBlocks {
                    args: archived,
                    callback: ArchiveFn::new(self.archive_id, "icrc3_get_blocks".into()),
                }]
            },
        }
    }

    /// `icrc3_get_blocks` on the archive: at most `archive_page_limit` per range, and
    /// `archive_short_by` fewer than asked.
    pub fn archive_get_blocks(&self, reqs: &[GetBlocksRequest]) -> GetBlocksResult {
        let mut blocks = vec![];
        for r in reqs {
            let start = u64::try_from(r.start.0.clone()).unwrap();
            let len = u64::try_from(r.length.0.clone()).unwrap();
            let len = len.saturating_sub(self.archive_short_by);
            blocks.extend(self.blocks_in(start, len, self.archived_below, self.archive_page_limit));
        }
        GetBlocksResult {
            log_length: Nat::from(self.archived_below),
            blocks,
            archived_blocks: vec![],
        }
    }
}
