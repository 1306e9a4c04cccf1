//! The ledger state machine: balances, allowances, deduplication and the block log.
//!
//! Pure logic over stable structures: the caller and the time come in as arguments, so the
//! whole ledger runs natively in unit tests (on `VectorMemory`) exactly as in the canister.
//! Every method checks all its preconditions before it writes anything, so an error leaves
//! the state untouched.

use crate::account::{Acct, Party};
use crate::block::{build_block, Kind, Tx};
use crate::dedup::{check_window, oldest_accepted};
use crate::errors::{code, TxError};
use crate::hash::{hash_value, Hash};
use crate::storage::{memory_ids, AllowanceEntry, AllowanceKey, Config, Tip, Tokens};
use crate::types::{
    Account, Allowance, AllowanceArgs, ApproveArgs, BlockWithId, GetBlocksRequest, GetBlocksResult,
    InitArgs, MetadataValue, SupportedStandard, TransferArg, TransferFromArgs, Value,
};
use candid::{Nat, Principal};
use ic_stable_structures::memory_manager::{MemoryManager, VirtualMemory};
use ic_stable_structures::{Memory, StableBTreeMap, StableCell, StableLog};
use serde_bytes::ByteBuf;

/// The longest memo accepted, in bytes.
pub const MAX_MEMO_LEN: usize = 32;
/// At most this many blocks are returned by one `icrc3_get_blocks` call (over all ranges).
pub const MAX_BLOCKS_PER_RESPONSE: u64 = 1_000;
/// At most this many stale dedup entries are dropped per transaction (bounds the work).
const DEDUP_PRUNE_PER_TX: usize = 100;

/// The ledger's whole state, each part in its own stable memory.
pub struct Ledger<M: Memory> {
    config: StableCell<Config, M>,
    tip: StableCell<Tip, M>,
    balances: StableBTreeMap<Acct, Tokens, M>,
    allowances: StableBTreeMap<AllowanceKey, AllowanceEntry, M>,
    blocks: StableLog<Vec<u8>, M, M>,
    /// Dedup key → (block index, created_at_time).
    dedup: StableBTreeMap<Hash, (u64, u64), M>,
    /// (created_at_time, block index) → dedup key, to drop entries that left the window.
    dedup_by_time: StableBTreeMap<(u64, u64), Hash, M>,
}

impl<B: Memory> Ledger<VirtualMemory<B>> {
    /// Opens the ledger in the memories of `mm`, reading back whatever they already hold.
    pub fn open(mm: &MemoryManager<B>) -> Self {
        Self {
            config: StableCell::init(mm.get(memory_ids::CONFIG), Config::default()),
            tip: StableCell::init(mm.get(memory_ids::TIP), Tip::default()),
            balances: StableBTreeMap::init(mm.get(memory_ids::BALANCES)),
            allowances: StableBTreeMap::init(mm.get(memory_ids::ALLOWANCES)),
            blocks: StableLog::init(
                mm.get(memory_ids::BLOCKS_INDEX),
                mm.get(memory_ids::BLOCKS_DATA),
            ),
            dedup: StableBTreeMap::init(mm.get(memory_ids::DEDUP)),
            dedup_by_time: StableBTreeMap::init(mm.get(memory_ids::DEDUP_BY_TIME)),
        }
    }
}

fn zero() -> Nat {
    Nat::from(0u64)
}

fn is_zero(n: &Nat) -> bool {
    *n == zero()
}

/// Normalizes an account, turning a bad subaccount into a `GenericError`.
fn acct(owner: Principal, subaccount: Option<&ByteBuf>) -> Result<Acct, TxError> {
    Acct::new(owner, subaccount.map(|s| &s[..]))
        .map_err(|m| TxError::generic(code::BAD_SUBACCOUNT, m))
}

fn wire_acct(account: &Account) -> Result<Acct, TxError> {
    acct(account.owner, account.subaccount.as_ref())
}

/// Checks shared by the three update methods: a real caller and a short memo.
fn check_caller_and_memo(caller: Principal, memo: Option<&ByteBuf>) -> Result<(), TxError> {
    if caller == Principal::anonymous() {
        return Err(TxError::generic(
            code::ANONYMOUS_CALLER,
            "the anonymous principal cannot send, approve or spend tokens",
        ));
    }
    if let Some(memo) = memo {
        if memo.len() > MAX_MEMO_LEN {
            return Err(TxError::generic(
                code::MEMO_TOO_LONG,
                format!(
                    "the memo is {} bytes long; at most {MAX_MEMO_LEN} bytes are allowed",
                    memo.len()
                ),
            ));
        }
    }
    Ok(())
}

/// A stated fee must equal the fee the ledger charges for this transaction.
fn check_fee(given: Option<&Nat>, charged: &Nat) -> Result<(), TxError> {
    match given {
        Some(fee) if fee != charged => Err(TxError::BadFee {
            expected_fee: charged.clone(),
        }),
        _ => Ok(()),
    }
}

/// How a transaction moves tokens, decided after every check passed.
struct Effects {
    /// Debited from `from` (amount and fee).
    debit: Option<(Acct, Nat)>,
    /// Credited to `to`.
    credit: Option<(Acct, Nat)>,
    minted: Nat,
    burned: Nat,
    /// The fee the ledger charged without the caller stating it (block-level `fee`).
    unstated_fee: Option<Nat>,
}

impl<M: Memory> Ledger<M> {
    // ---------------------------------------------------------------- setup and reads

    /// Applies `InitArgs`: settings, then one mint block per initial balance.
    pub fn initialize(&mut self, args: InitArgs, now: u64) -> Result<(), String> {
        if self.config.get().minting_account.is_some() {
            return Err("the ledger is already initialized".into());
        }
        let minting = Acct::from_account(&args.minting_account)?;
        self.config.set(Config {
            name: args.name,
            symbol: args.symbol,
            decimals: args.decimals,
            fee: args.fee,
            minting_account: Some(minting.to_account()),
        });
        for (account, amount) in args.initial_balances {
            let to = Acct::from_account(&account)?;
            if to == minting {
                return Err("the minting account cannot hold an initial balance".into());
            }
            let tx = Tx {
                kind: Kind::Mint,
                from: None,
                to: Some(Party::given(
                    to,
                    account.subaccount.as_deref().map(|s| &s[..]),
                )),
                spender: None,
                amount: amount.clone(),
                fee: None,
                memo: None,
                created_at_time: None,
                expected_allowance: None,
                expires_at: None,
            };
            let effects = Effects {
                debit: None,
                credit: Some((to, amount.clone())),
                minted: amount,
                burned: zero(),
                unstated_fee: None,
            };
            self.commit(&tx, effects, None, now);
        }
        Ok(())
    }

    /// The settings given at init.
    pub fn config(&self) -> &Config {
        self.config.get()
    }

    /// The minting account (`None` only before init).
    pub fn minting_account(&self) -> Option<Acct> {
        self.config
            .get()
            .minting_account
            .as_ref()
            .and_then(|a| Acct::from_account(a).ok())
    }

    /// The balance of a wire account (0 for a malformed subaccount, which can hold nothing).
    pub fn balance_of(&self, account: &Account) -> Nat {
        Acct::from_account(account)
            .map(|a| self.balance(&a))
            .unwrap_or_default()
    }

    fn balance(&self, a: &Acct) -> Nat {
        self.balances.get(a).map(|t| t.0).unwrap_or_default()
    }

    fn set_balance(&mut self, a: Acct, amount: Nat) {
        if is_zero(&amount) {
            self.balances.remove(&a);
        } else {
            self.balances.insert(a, Tokens(amount));
        }
    }

    /// Tokens held outside the minting account.
    pub fn total_supply(&self) -> Nat {
        self.tip.get().total_supply.clone()
    }

    /// `icrc1_metadata`.
    pub fn metadata(&self) -> Vec<(String, MetadataValue)> {
        let c = self.config.get();
        vec![
            ("icrc1:name".into(), MetadataValue::Text(c.name.clone())),
            ("icrc1:symbol".into(), MetadataValue::Text(c.symbol.clone())),
            (
                "icrc1:decimals".into(),
                MetadataValue::Nat(Nat::from(c.decimals)),
            ),
            ("icrc1:fee".into(), MetadataValue::Nat(c.fee.clone())),
            (
                "icrc1:max_memo_length".into(),
                MetadataValue::Nat(Nat::from(MAX_MEMO_LEN)),
            ),
        ]
    }

    /// The allowance `spender` has on `account` at `now`: zero when absent or expired.
    pub fn allowance(&self, args: &AllowanceArgs, now: u64) -> Allowance {
        let entry = match (wire_acct(&args.account), wire_acct(&args.spender)) {
            (Ok(from), Ok(spender)) => self.active_allowance(&from, &spender, now),
            _ => AllowanceEntry::default(),
        };
        Allowance {
            allowance: entry.amount,
            expires_at: entry.expires_at,
        }
    }

    fn active_allowance(&self, from: &Acct, spender: &Acct, now: u64) -> AllowanceEntry {
        self.allowances
            .get(&(*from, *spender))
            .filter(|e| e.is_active(now))
            .unwrap_or_default()
    }

    fn set_allowance(&mut self, from: Acct, spender: Acct, entry: AllowanceEntry) {
        if is_zero(&entry.amount) {
            self.allowances.remove(&(from, spender));
        } else {
            self.allowances.insert((from, spender), entry);
        }
    }

    // ---------------------------------------------------------------- blocks

    /// Number of blocks in the log.
    pub fn log_length(&self) -> u64 {
        self.blocks.len()
    }

    /// Block `index`, if it exists.
    pub fn block(&self, index: u64) -> Option<Value> {
        self.blocks
            .get(index)
            .map(|bytes| candid::decode_one(&bytes).expect("decoding a stored block"))
    }

    /// `icrc3_get_blocks`: the blocks of every range, in request order, at most
    /// [`MAX_BLOCKS_PER_RESPONSE`] in all. Nothing is archived.
    pub fn get_blocks(&self, requests: &[GetBlocksRequest]) -> GetBlocksResult {
        let len = self.log_length();
        let mut budget = MAX_BLOCKS_PER_RESPONSE;
        let mut blocks = Vec::new();
        for r in requests {
            let start = u64::try_from(&r.start.0).unwrap_or(u64::MAX);
            let length = u64::try_from(&r.length.0).unwrap_or(u64::MAX);
            let end = start.saturating_add(length.min(budget)).min(len);
            for id in start..end {
                if let Some(block) = self.block(id) {
                    blocks.push(BlockWithId {
                        id: Nat::from(id),
                        block,
                    });
                    budget -= 1;
                }
            }
        }
        GetBlocksResult {
            log_length: Nat::from(len),
            blocks,
            archived_blocks: vec![],
        }
    }

    /// Index and hash of the last block, for the tip certificate.
    pub fn tip(&self) -> Option<(u64, Hash)> {
        let len = self.log_length();
        let hash = self.tip.get().last_hash.as_ref()?;
        let hash = <Hash>::try_from(&hash[..]).ok()?;
        len.checked_sub(1).map(|i| (i, hash))
    }

    /// Appends the block for `tx`, moves the tokens and records the dedup entry.
    fn commit(&mut self, tx: &Tx, effects: Effects, dedup_key: Option<Hash>, now: u64) -> u64 {
        if let Some((from, amount)) = effects.debit {
            let balance = self.balance(&from);
            self.set_balance(from, balance - amount);
        }
        if let Some((to, amount)) = effects.credit {
            let balance = self.balance(&to);
            self.set_balance(to, balance + amount);
        }
        let mut tip = self.tip.get().clone();
        tip.total_supply = tip.total_supply + effects.minted - effects.burned;
        let parent = tip
            .last_hash
            .as_ref()
            .and_then(|h| <Hash>::try_from(&h[..]).ok());
        let block = build_block(tx, effects.unstated_fee.as_ref(), now, parent);
        let bytes = candid::encode_one(&block).expect("encoding a block");
        let index = self
            .blocks
            .append(&bytes)
            .expect("stable memory is exhausted");
        tip.last_hash = Some(ByteBuf::from(hash_value(&block).to_vec()));
        self.tip.set(tip);
        if let (Some(key), Some(created)) = (dedup_key, tx.created_at_time) {
            self.dedup.insert(key, (index, created));
            self.dedup_by_time.insert((created, index), key);
        }
        self.prune_dedup(now);
        index
    }

    // ---------------------------------------------------------------- deduplication

    /// `TooOld`, `CreatedInFuture` or `Duplicate`; else the key to record (when dedup applies).
    fn check_dedup(&self, tx: &Tx, now: u64) -> Result<Option<Hash>, TxError> {
        let Some(created) = tx.created_at_time else {
            return Ok(None);
        };
        check_window(created, now)?;
        let key = tx.dedup_key();
        if let Some((index, _)) = self.dedup.get(&key) {
            return Err(TxError::Duplicate {
                duplicate_of: index,
            });
        }
        Ok(Some(key))
    }

    /// Drops dedup entries whose `created_at_time` is older than the window (they could only
    /// be `TooOld` now), a bounded number per call.
    fn prune_dedup(&mut self, now: u64) {
        let oldest = oldest_accepted(now);
        let stale: Vec<((u64, u64), Hash)> = self
            .dedup_by_time
            .iter()
            .take(DEDUP_PRUNE_PER_TX)
            .map(|e| (*e.key(), e.value()))
            .take_while(|((created, _), _)| *created < oldest)
            .collect();
        for (time_key, key) in stale {
            self.dedup_by_time.remove(&time_key);
            self.dedup.remove(&key);
        }
    }

    /// Number of remembered transactions (for tests and diagnostics).
    pub fn dedup_len(&self) -> u64 {
        self.dedup.len()
    }

    // ---------------------------------------------------------------- updates

    /// `icrc1_transfer`: a transfer, a mint (from the minting account) or a burn (to it).
    pub fn transfer(
        &mut self,
        caller: Principal,
        arg: &TransferArg,
        now: u64,
    ) -> Result<u64, TxError> {
        check_caller_and_memo(caller, arg.memo.as_ref())?;
        let from = acct(caller, arg.from_subaccount.as_ref())?;
        let to = wire_acct(&arg.to)?;
        let minting = self.minting_account();
        let kind = match (Some(from) == minting, Some(to) == minting) {
            (true, true) => {
                return Err(TxError::generic(
                    code::MINTING_ACCOUNT,
                    "the minting account cannot send to itself",
                ))
            }
            (true, false) => Kind::Mint,
            (false, true) => Kind::Burn,
            (false, false) => Kind::Transfer,
        };
        let movement = Movement {
            kind,
            from: (from, arg.from_subaccount.as_deref().map(|s| &s[..])),
            to: (to, arg.to.subaccount.as_deref().map(|s| &s[..])),
            spender: None,
            amount: &arg.amount,
            fee: arg.fee.as_ref(),
            memo: arg.memo.as_ref(),
            created_at_time: arg.created_at_time,
        };
        let (charged, tx) = self.charge(&movement)?;
        let dedup_key = self.check_dedup(&tx, now)?;
        let effects = match kind {
            Kind::Mint => Effects {
                debit: None,
                credit: Some((to, arg.amount.clone())),
                minted: arg.amount.clone(),
                burned: zero(),
                unstated_fee: None,
            },
            _ => {
                let total = arg.amount.clone() + charged.clone();
                let balance = self.balance(&from);
                if balance < total {
                    return Err(TxError::InsufficientFunds { balance });
                }
                movement.debit_effects(total, charged)
            }
        };
        Ok(self.commit(&tx, effects, dedup_key, now))
    }

    /// `icrc2_approve`: sets the allowance of `spender` on the caller's account; the caller
    /// pays the fee.
    pub fn approve(
        &mut self,
        caller: Principal,
        arg: &ApproveArgs,
        now: u64,
    ) -> Result<u64, TxError> {
        check_caller_and_memo(caller, arg.memo.as_ref())?;
        let from = acct(caller, arg.from_subaccount.as_ref())?;
        let spender = wire_acct(&arg.spender)?;
        if spender.owner == from.owner {
            return Err(TxError::generic(
                code::SELF_APPROVAL,
                "self approval is not allowed: the spender's owner is the caller",
            ));
        }
        if Some(from) == self.minting_account() {
            return Err(TxError::generic(
                code::MINTING_ACCOUNT,
                "the minting account cannot approve",
            ));
        }
        let fee = self.config.get().fee.clone();
        check_fee(arg.fee.as_ref(), &fee)?;
        if let Some(expires_at) = arg.expires_at {
            if expires_at <= now {
                return Err(TxError::Expired { ledger_time: now });
            }
        }
        let tx = Tx {
            kind: Kind::Approve,
            from: Some(Party::given(
                from,
                arg.from_subaccount.as_deref().map(|s| &s[..]),
            )),
            to: None,
            spender: Some(Party::given(
                spender,
                arg.spender.subaccount.as_deref().map(|s| &s[..]),
            )),
            amount: arg.amount.clone(),
            fee: arg.fee.clone(),
            memo: arg.memo.as_ref().map(|m| m.to_vec()),
            created_at_time: arg.created_at_time,
            expected_allowance: arg.expected_allowance.clone(),
            expires_at: arg.expires_at,
        };
        let dedup_key = self.check_dedup(&tx, now)?;
        let balance = self.balance(&from);
        if balance < fee {
            return Err(TxError::InsufficientFunds { balance });
        }
        let current = self.active_allowance(&from, &spender, now).amount;
        if let Some(expected) = &arg.expected_allowance {
            if *expected != current {
                return Err(TxError::AllowanceChanged {
                    current_allowance: current,
                });
            }
        }
        self.set_allowance(
            from,
            spender,
            AllowanceEntry {
                amount: arg.amount.clone(),
                expires_at: arg.expires_at,
            },
        );
        let effects = Effects {
            debit: Some((from, fee.clone())),
            credit: None,
            minted: zero(),
            burned: fee.clone(),
            unstated_fee: arg.fee.is_none().then_some(fee),
        };
        Ok(self.commit(&tx, effects, dedup_key, now))
    }

    /// `icrc2_transfer_from`: the caller (with `spender_subaccount`) spends from `from` within
    /// its allowance, which shrinks by amount + fee; `from` pays both. To the minting account
    /// it is a burn (no fee).
    pub fn transfer_from(
        &mut self,
        caller: Principal,
        arg: &TransferFromArgs,
        now: u64,
    ) -> Result<u64, TxError> {
        check_caller_and_memo(caller, arg.memo.as_ref())?;
        let spender = acct(caller, arg.spender_subaccount.as_ref())?;
        let from = wire_acct(&arg.from)?;
        let to = wire_acct(&arg.to)?;
        let minting = self.minting_account();
        if Some(from) == minting {
            return Err(TxError::generic(
                code::MINTING_ACCOUNT,
                "the minting account cannot be spent from",
            ));
        }
        let kind = if Some(to) == minting {
            Kind::Burn
        } else {
            Kind::TransferFrom
        };
        let movement = Movement {
            kind,
            from: (from, arg.from.subaccount.as_deref().map(|s| &s[..])),
            to: (to, arg.to.subaccount.as_deref().map(|s| &s[..])),
            spender: Some((spender, arg.spender_subaccount.as_deref().map(|s| &s[..]))),
            amount: &arg.amount,
            fee: arg.fee.as_ref(),
            memo: arg.memo.as_ref(),
            created_at_time: arg.created_at_time,
        };
        let (charged, tx) = self.charge(&movement)?;
        let dedup_key = self.check_dedup(&tx, now)?;
        let total = arg.amount.clone() + charged.clone();
        // Spending from one's own account needs no allowance (ICRC-2 postconditions).
        let allowance = (spender != from).then(|| self.active_allowance(&from, &spender, now));
        if let Some(entry) = &allowance {
            if entry.amount < total {
                return Err(TxError::InsufficientAllowance {
                    allowance: entry.amount.clone(),
                });
            }
        }
        let balance = self.balance(&from);
        if balance < total {
            return Err(TxError::InsufficientFunds { balance });
        }
        if let Some(entry) = allowance {
            self.set_allowance(
                from,
                spender,
                AllowanceEntry {
                    amount: entry.amount - total.clone(),
                    expires_at: entry.expires_at,
                },
            );
        }
        let effects = movement.debit_effects(total, charged);
        Ok(self.commit(&tx, effects, dedup_key, now))
    }

    /// The fee a movement is charged (the one stated must be it; a burn is at least the fee)
    /// and the transaction it records: `icrc1_transfer` and `icrc2_transfer_from` alike.
    fn charge(&self, m: &Movement) -> Result<(Nat, Tx), TxError> {
        let fee = self.config.get().fee.clone();
        let charged = if m.kind.has_fee() {
            fee.clone()
        } else {
            zero()
        };
        check_fee(m.fee, &charged)?;
        if m.kind == Kind::Burn && *m.amount < fee {
            return Err(TxError::BadBurn {
                min_burn_amount: fee,
            });
        }
        let party = |(acct, subaccount): (Acct, Option<&[u8]>)| Party::given(acct, subaccount);
        let tx = Tx {
            kind: m.kind,
            from: (m.kind != Kind::Mint).then(|| party(m.from)),
            to: (m.kind != Kind::Burn).then(|| party(m.to)),
            spender: m.spender.map(party),
            amount: m.amount.clone(),
            fee: m.fee.cloned(),
            memo: m.memo.map(|memo| memo.to_vec()),
            created_at_time: m.created_at_time,
            expected_allowance: None,
            expires_at: None,
        };
        Ok((charged, tx))
    }
}

/// A transfer or a transfer_from as its caller gave it: the accounts with the subaccounts as
/// given (a block records whether one was), the amount, the fee, memo and time stated.
struct Movement<'a> {
    kind: Kind,
    from: (Acct, Option<&'a [u8]>),
    to: (Acct, Option<&'a [u8]>),
    spender: Option<(Acct, Option<&'a [u8]>)>,
    amount: &'a Nat,
    fee: Option<&'a Nat>,
    memo: Option<&'a ByteBuf>,
    created_at_time: Option<u64>,
}

impl Movement<'_> {
    /// The effects of a movement that debits `from` (all but a mint): `total` (the amount and
    /// the fee charged) leaves it; a burn credits no one and burns the amount, otherwise the
    /// fee is burned (and is an unstated fee when the caller gave none).
    fn debit_effects(&self, total: Nat, charged: Nat) -> Effects {
        let burn = self.kind == Kind::Burn;
        Effects {
            debit: Some((self.from.0, total)),
            credit: (!burn).then(|| (self.to.0, self.amount.clone())),
            minted: zero(),
            burned: if burn {
                self.amount.clone()
            } else {
                charged.clone()
            },
            unstated_fee: (!burn && self.fee.is_none()).then_some(charged),
        }
    }
}

/// `icrc1_supported_standards`.
pub fn supported_standards() -> Vec<SupportedStandard> {
    [
        ("ICRC-1", "https://github.com/dfinity/ICRC-1"),
        (
            "ICRC-2",
            "https://github.com/dfinity/ICRC-1/tree/main/standards/ICRC-2",
        ),
        (
            "ICRC-3",
            "https://github.com/dfinity/ICRC-1/tree/main/standards/ICRC-3",
        ),
    ]
    .into_iter()
    .map(|(name, url)| SupportedStandard {
        name: name.into(),
        url: url.into(),
    })
    .collect()
}
