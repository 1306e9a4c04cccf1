//! One error type for the ledger logic, mapped onto each method's Candid error variant.

use crate::types::{ApproveError, TransferError, TransferFromError};
use candid::Nat;

/// `GenericError.error_code` values.
pub mod code {
    /// The anonymous principal may not send, approve or spend.
    pub const ANONYMOUS_CALLER: u64 = 1;
    /// The memo is longer than [`crate::ledger::MAX_MEMO_LEN`] bytes.
    pub const MEMO_TOO_LONG: u64 = 2;
    /// A subaccount is not 32 bytes long.
    pub const BAD_SUBACCOUNT: u64 = 3;
    /// The minting account is used where it cannot be (both ends, approving, spent from).
    pub const MINTING_ACCOUNT: u64 = 4;
    /// The spender's owner is the approver's owner.
    pub const SELF_APPROVAL: u64 = 5;
}

/// Why a transaction was not executed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxError {
    BadFee { expected_fee: Nat },
    BadBurn { min_burn_amount: Nat },
    InsufficientFunds { balance: Nat },
    InsufficientAllowance { allowance: Nat },
    AllowanceChanged { current_allowance: Nat },
    Expired { ledger_time: u64 },
    TooOld,
    CreatedInFuture { ledger_time: u64 },
    Duplicate { duplicate_of: u64 },
    Generic { code: u64, message: String },
}

impl TxError {
    /// A `GenericError` with a code from [`code`].
    pub fn generic(code: u64, message: impl Into<String>) -> Self {
        TxError::Generic {
            code,
            message: message.into(),
        }
    }

    /// A variant the method cannot produce becomes a `GenericError` (it never happens; the
    /// mapping stays total so no path can panic).
    fn unexpected(&self) -> (Nat, String) {
        (
            Nat::from(0u64),
            format!("unexpected ledger error: {self:?}"),
        )
    }
}

impl From<TxError> for TransferError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::BadFee { expected_fee } => Self::BadFee { expected_fee },
            TxError::BadBurn { min_burn_amount } => Self::BadBurn { min_burn_amount },
            TxError::InsufficientFunds { balance } => Self::InsufficientFunds { balance },
            TxError::TooOld => Self::TooOld,
            TxError::CreatedInFuture { ledger_time } => Self::CreatedInFuture { ledger_time },
            TxError::Duplicate { duplicate_of } => Self::Duplicate {
                duplicate_of: duplicate_of.into(),
            },
            TxError::Generic { code, message } => Self::GenericError {
                error_code: code.into(),
                message,
            },
            other => {
                let (error_code, message) = other.unexpected();
                Self::GenericError {
                    error_code,
                    message,
                }
            }
        }
    }
}

impl From<TxError> for ApproveError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::BadFee { expected_fee } => Self::BadFee { expected_fee },
            TxError::InsufficientFunds { balance } => Self::InsufficientFunds { balance },
            TxError::AllowanceChanged { current_allowance } => {
                Self::AllowanceChanged { current_allowance }
            }
            TxError::Expired { ledger_time } => Self::Expired { ledger_time },
            TxError::TooOld => Self::TooOld,
            TxError::CreatedInFuture { ledger_time } => Self::CreatedInFuture { ledger_time },
            TxError::Duplicate { duplicate_of } => Self::Duplicate {
                duplicate_of: duplicate_of.into(),
            },
            TxError::Generic { code, message } => Self::GenericError {
                error_code: code.into(),
                message,
            },
            other => {
                let (error_code, message) = other.unexpected();
                Self::GenericError {
                    error_code,
                    message,
                }
            }
        }
    }
}

impl From<TxError> for TransferFromError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::BadFee { expected_fee } => Self::BadFee { expected_fee },
            TxError::BadBurn { min_burn_amount } => Self::BadBurn { min_burn_amount },
            TxError::InsufficientFunds { balance } => Self::InsufficientFunds { balance },
            TxError::InsufficientAllowance { allowance } => {
                Self::InsufficientAllowance { allowance }
            }
            TxError::TooOld => Self::TooOld,
            TxError::CreatedInFuture { ledger_time } => Self::CreatedInFuture { ledger_time },
            TxError::Duplicate { duplicate_of } => Self::Duplicate {
                duplicate_of: duplicate_of.into(),
            },
            TxError::Generic { code, message } => Self::GenericError {
                error_code: code.into(),
                message,
            },
            other => {
                let (error_code, message) = other.unexpected();
                Self::GenericError {
                    error_code,
                    message,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_maps_to_nat_index() {
        let e: TransferError = TxError::Duplicate { duplicate_of: 7 }.into();
        assert_eq!(
            e,
            TransferError::Duplicate {
                duplicate_of: Nat::from(7u64)
            }
        );
    }

    #[test]
    fn foreign_variant_becomes_generic() {
        let e: TransferError = TxError::Expired { ledger_time: 1 }.into();
        assert!(matches!(e, TransferError::GenericError { .. }));
        let e: ApproveError = TxError::InsufficientAllowance {
            allowance: Nat::from(1u64),
        }
        .into();
        assert!(matches!(e, ApproveError::GenericError { .. }));
    }
}
