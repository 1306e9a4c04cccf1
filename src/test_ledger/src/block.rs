//! Transactions and the ICRC-3 blocks that record them.
//!
//! A block is a `Value::Map` with `btype`, `ts` (ledger time), `phash` (hash of the previous
//! block, absent for block 0), `fee` (only when the ledger charged a fee the caller did not
//! state) and `tx`, the caller's intent: `amt`, `from`/`to`/`spender`, `memo`, `ts`
//! (`created_at_time`), `fee` (as given), `expected_allowance`, `expires_at`. Optional
//! arguments the caller left out are left out of `tx`.

use crate::account::Party;
use crate::hash::{hash_value, Hash};
use crate::types::{BlockType, Value};
use candid::Nat;

const ICRC1_URL: &str = "https://github.com/dfinity/ICRC-1/tree/main/standards/ICRC-1";
const ICRC2_URL: &str = "https://github.com/dfinity/ICRC-1/tree/main/standards/ICRC-2";

/// What a transaction does; each kind is one ICRC-3 block type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `icrc1_transfer` between two ordinary accounts.
    Transfer,
    /// A transfer from the minting account.
    Mint,
    /// A transfer to the minting account (`icrc1_transfer` or `icrc2_transfer_from`).
    Burn,
    /// `icrc2_approve`.
    Approve,
    /// `icrc2_transfer_from` between two ordinary accounts.
    TransferFrom,
}

impl Kind {
    /// All kinds, in the order `icrc3_supported_block_types` lists them.
    pub const ALL: [Kind; 5] = [
        Kind::Transfer,
        Kind::Mint,
        Kind::Burn,
        Kind::Approve,
        Kind::TransferFrom,
    ];

    /// The ICRC-3 `btype`.
    pub fn btype(self) -> &'static str {
        match self {
            Kind::Transfer => "1xfer",
            Kind::Mint => "1mint",
            Kind::Burn => "1burn",
            Kind::Approve => "2approve",
            Kind::TransferFrom => "2xfer",
        }
    }

    /// Whether the caller can state a fee for this kind (mints and burns are free).
    pub fn has_fee(self) -> bool {
        matches!(self, Kind::Transfer | Kind::Approve | Kind::TransferFrom)
    }

    /// The standard that defines the block type.
    fn url(self) -> &'static str {
        match self {
            Kind::Transfer | Kind::Mint | Kind::Burn => ICRC1_URL,
            Kind::Approve | Kind::TransferFrom => ICRC2_URL,
        }
    }
}

/// The block types this ledger writes, for `icrc3_supported_block_types`.
pub fn supported_block_types() -> Vec<BlockType> {
    Kind::ALL
        .iter()
        .map(|k| BlockType {
            block_type: k.btype().to_string(),
            url: k.url().to_string(),
        })
        .collect()
}

/// A transaction as the caller determined it (accounts normalized, with whether each
/// subaccount was given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub kind: Kind,
    /// The accounts as the caller gave them (see [`Party`]).
    pub from: Option<Party>,
    pub to: Option<Party>,
    pub spender: Option<Party>,
    pub amount: Nat,
    /// The fee exactly as the caller gave it.
    pub fee: Option<Nat>,
    pub memo: Option<Vec<u8>>,
    pub created_at_time: Option<u64>,
    pub expected_allowance: Option<Nat>,
    pub expires_at: Option<u64>,
}

impl Tx {
    /// The `tx` map of the block, keys in sorted order.
    pub fn to_value(&self) -> Value {
        let mut m: Vec<(String, Value)> = Vec::new();
        let mut put = |k: &str, v: Value| m.push((k.to_string(), v));
        put("amt", Value::Nat(self.amount.clone()));
        if let Some(e) = &self.expected_allowance {
            put("expected_allowance", Value::Nat(e.clone()));
        }
        if let Some(e) = self.expires_at {
            put("expires_at", Value::nat(e));
        }
        if let (true, Some(fee)) = (self.kind.has_fee(), &self.fee) {
            put("fee", Value::Nat(fee.clone()));
        }
        if let Some(a) = &self.from {
            put("from", a.to_value());
        }
        if let Some(memo) = &self.memo {
            put("memo", Value::blob(memo.clone()));
        }
        if let Some(a) = &self.spender {
            put("spender", a.to_value());
        }
        if let Some(a) = &self.to {
            put("to", a.to_value());
        }
        if let Some(t) = self.created_at_time {
            put("ts", Value::nat(t));
        }
        Value::Map(m)
    }

    /// The deduplication key: the hash of everything the caller determined — the kind, the
    /// `tx` map (accounts, amount, memo, `created_at_time`, approve fields) and the fee as given
    /// (kept even where the block leaves it out, so `fee = opt 0` on a mint is its own call).
    pub fn dedup_key(&self) -> Hash {
        let mut m = vec![
            ("btype".to_string(), Value::text(self.kind.btype())),
            ("tx".to_string(), self.to_value()),
        ];
        if let Some(fee) = &self.fee {
            m.push(("fee".to_string(), Value::Nat(fee.clone())));
        }
        hash_value(&Value::Map(m))
    }
}

/// Builds the block for `tx`.
///
/// `charged_fee` is the fee the ledger took when the caller did not state one; it goes to the
/// block-level `fee` field.
pub fn build_block(tx: &Tx, charged_fee: Option<&Nat>, now: u64, parent: Option<Hash>) -> Value {
    let mut m: Vec<(String, Value)> = vec![("btype".to_string(), Value::text(tx.kind.btype()))];
    if let Some(fee) = charged_fee {
        m.push(("fee".to_string(), Value::Nat(fee.clone())));
    }
    if let Some(p) = parent {
        m.push(("phash".to_string(), Value::blob(p.to_vec())));
    }
    m.push(("ts".to_string(), Value::nat(now)));
    m.push(("tx".to_string(), tx.to_value()));
    Value::Map(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candid::Principal;

    use crate::account::{Acct, DEFAULT_SUBACCOUNT};

    fn acct(n: u8) -> Party {
        Acct::default_of(Principal::from_slice(&[n; 10])).into()
    }

    fn transfer() -> Tx {
        Tx {
            kind: Kind::Transfer,
            from: Some(acct(1)),
            to: Some(acct(2)),
            spender: None,
            amount: Nat::from(500u64),
            fee: None,
            memo: Some(vec![1, 2, 3]),
            created_at_time: Some(77),
            expected_allowance: None,
            expires_at: None,
        }
    }

    #[test]
    fn transfer_block_fields() {
        let tx = transfer();
        let block = build_block(&tx, Some(&Nat::from(10u64)), 1_000, None);
        assert_eq!(block.get("btype"), Some(&Value::text("1xfer")));
        assert_eq!(block.get("fee"), Some(&Value::nat(10u64)));
        assert_eq!(block.get("ts"), Some(&Value::nat(1_000u64)));
        assert_eq!(block.get("phash"), None);
        let t = block.get("tx").unwrap();
        assert_eq!(t.get("amt"), Some(&Value::nat(500u64)));
        assert_eq!(t.get("from"), Some(&acct(1).to_value()));
        assert_eq!(t.get("to"), Some(&acct(2).to_value()));
        assert_eq!(t.get("memo"), Some(&Value::blob(vec![1, 2, 3])));
        assert_eq!(t.get("ts"), Some(&Value::nat(77u64)));
        assert_eq!(t.get("fee"), None);
        assert_eq!(t.get("spender"), None);
    }

    #[test]
    fn caller_fee_goes_into_tx_and_parent_hash_into_block() {
        let mut tx = transfer();
        tx.fee = Some(Nat::from(10u64));
        let block = build_block(&tx, None, 5, Some([9u8; 32]));
        assert_eq!(block.get("fee"), None);
        assert_eq!(block.get("phash"), Some(&Value::blob(vec![9u8; 32])));
        assert_eq!(
            block.get("tx").unwrap().get("fee"),
            Some(&Value::nat(10u64))
        );
    }

    #[test]
    fn mint_and_burn_leave_fee_and_missing_side_out() {
        let mint = Tx {
            kind: Kind::Mint,
            from: None,
            fee: Some(Nat::from(0u64)),
            ..transfer()
        };
        let v = mint.to_value();
        assert_eq!(v.get("fee"), None);
        assert_eq!(v.get("from"), None);
        // The given fee still distinguishes the call for deduplication.
        let mint_no_fee = Tx {
            fee: None,
            ..mint.clone()
        };
        assert_ne!(mint.dedup_key(), mint_no_fee.dedup_key());
    }

    #[test]
    fn approve_fields() {
        let tx = Tx {
            kind: Kind::Approve,
            to: None,
            spender: Some(acct(3)),
            expected_allowance: Some(Nat::from(4u64)),
            expires_at: Some(99),
            ..transfer()
        };
        let v = tx.to_value();
        assert_eq!(v.get("spender"), Some(&acct(3).to_value()));
        assert_eq!(v.get("expected_allowance"), Some(&Value::nat(4u64)));
        assert_eq!(v.get("expires_at"), Some(&Value::nat(99u64)));
        assert_eq!(v.get("to"), None);
    }

    #[test]
    fn dedup_key_depends_on_kind_and_content() {
        let a = transfer();
        let mut b = transfer();
        assert_eq!(a.dedup_key(), b.dedup_key());
        b.memo = Some(vec![1, 2, 4]);
        assert_ne!(a.dedup_key(), b.dedup_key());
        let c = Tx {
            kind: Kind::TransferFrom,
            spender: Some(acct(1)),
            ..transfer()
        };
        assert_ne!(a.dedup_key(), c.dedup_key());
    }

    #[test]
    fn a_default_subaccount_given_is_written_and_is_another_transaction() {
        let a = transfer();
        let given = Party::given(acct(2).acct, Some(&DEFAULT_SUBACCOUNT));
        let b = Tx {
            to: Some(given),
            ..transfer()
        };
        assert_eq!(
            b.to_value().get("to"),
            Some(&Value::Array(vec![
                Value::blob(vec![2u8; 10]),
                Value::blob(DEFAULT_SUBACCOUNT.to_vec())
            ]))
        );
        assert_eq!(
            a.to_value().get("to"),
            Some(&Value::Array(vec![Value::blob(vec![2u8; 10])]))
        );
        assert_ne!(
            a.dedup_key(),
            b.dedup_key(),
            "null and 32 zero bytes are two calls"
        );
    }

    #[test]
    fn five_block_types() {
        let types: Vec<String> = supported_block_types()
            .into_iter()
            .map(|t| t.block_type)
            .collect();
        assert_eq!(types, ["1xfer", "1mint", "1burn", "2approve", "2xfer"]);
    }
}
