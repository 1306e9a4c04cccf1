//! A test ICRC-1/ICRC-2/ICRC-3 ledger canister with fault injection.
