//! Text codecs for values people and models type: amounts, principals, accounts, integers,
//! times and bytes. Each reads exactly (no floats) and writes the canonical form back.

pub mod account;
pub mod amount;
pub mod bytes;
pub mod ecma;
pub mod integer;
pub mod pattern;
pub mod principal;
pub mod textual;
pub mod time;
