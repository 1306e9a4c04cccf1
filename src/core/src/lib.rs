//! Pure core of the tool host: resolved forms, tool plans, input reading, previews and outcome
//! classes. No ic-cdk: it compiles and tests natively and for `wasm32-unknown-unknown`.

pub mod agent;
pub mod builtin;
pub mod bus;
pub mod candid_types;
pub mod classify;
pub mod codec;
pub mod display;
pub mod form;
pub mod funds;
pub mod issue;
pub mod mcp;
pub mod packs;
pub mod plan;
pub mod read;
pub mod schema;
pub mod text;
pub mod wire;
