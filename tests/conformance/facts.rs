//! placeholder
use crate::env::Env;
use tool_host_tests::ledgers::LedgerKind;

pub type Fact = fn(&Env, LedgerKind) -> Result<(), String>;

pub fn facts() -> Vec<(&'static str, Fact)> {
    vec![]
}
