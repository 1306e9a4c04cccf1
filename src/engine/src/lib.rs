//! The tool host's engine: stable state, roles, tools, intents and the outcome table. Generic
//! over [`runtime::Runtime`] (time, the inter-canister call, the timer, controllers, the
//! state), so that every rule runs natively against a scripted ledger; the canister crate is
//! thin ic-cdk glue over it.

pub mod auth;
pub mod bus;
pub mod catalog;
pub mod consent;
pub mod custody;
pub mod errors;
pub mod form_review;
pub mod hash_table;
pub mod head_table;
pub mod intent_store;
pub mod lifecycle;
pub mod matching;
pub mod mcp;
pub mod memory;
pub mod messages;
pub mod model;
pub mod names;
pub mod outcome;
pub mod owner_counts;
pub mod owner_table;
pub mod owners;
pub mod packed_body;
pub mod reconcile;
pub mod registry;
pub mod results;
pub mod runtime;
pub mod schedule;
pub mod send;
pub mod stamp_floors;
pub mod standard;
pub mod state;
pub mod stored_value;
pub mod tokens;
pub mod tools;
pub mod types;
pub mod views;
pub mod write_back;
