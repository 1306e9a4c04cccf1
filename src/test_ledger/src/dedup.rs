//! The ICRC-1 deduplication window.
//!
//! A transaction with `created_at_time` is accepted only inside
//! `[now - TX_WINDOW - PERMITTED_DRIFT, now + PERMITTED_DRIFT]` (both edges included), and an
//! identical one seen inside that window is answered with the first one's block index.

use crate::errors::TxError;

/// How long the ledger remembers transactions: 24 hours.
pub const TX_WINDOW_NS: u64 = 24 * 60 * 60 * 1_000_000_000;
/// The clock drift the ledger tolerates between caller and ledger: 60 seconds.
pub const PERMITTED_DRIFT_NS: u64 = 60 * 1_000_000_000;

/// The oldest `created_at_time` still accepted at `now`.
pub fn oldest_accepted(now: u64) -> u64 {
    now.saturating_sub(TX_WINDOW_NS + PERMITTED_DRIFT_NS)
}

/// `TooOld` / `CreatedInFuture` for a `created_at_time` outside the window.
pub fn check_window(created_at_time: u64, now: u64) -> Result<(), TxError> {
    if created_at_time < oldest_accepted(now) {
        return Err(TxError::TooOld);
    }
    if created_at_time > now.saturating_add(PERMITTED_DRIFT_NS) {
        return Err(TxError::CreatedInFuture { ledger_time: now });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_700_000_000_000_000_000;

    #[test]
    fn old_edge_is_inclusive() {
        let edge = NOW - TX_WINDOW_NS - PERMITTED_DRIFT_NS;
        assert_eq!(check_window(edge, NOW), Ok(()));
        assert_eq!(check_window(edge - 1, NOW), Err(TxError::TooOld));
    }

    #[test]
    fn future_edge_is_inclusive() {
        let edge = NOW + PERMITTED_DRIFT_NS;
        assert_eq!(check_window(edge, NOW), Ok(()));
        assert_eq!(
            check_window(edge + 1, NOW),
            Err(TxError::CreatedInFuture { ledger_time: NOW })
        );
    }

    #[test]
    fn now_is_inside() {
        assert_eq!(check_window(NOW, NOW), Ok(()));
    }

    #[test]
    fn early_clock_does_not_underflow() {
        assert_eq!(check_window(0, 5), Ok(()));
    }
}
