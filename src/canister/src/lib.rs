//! The tool host canister: a thin ic-cdk layer over the core engine.
