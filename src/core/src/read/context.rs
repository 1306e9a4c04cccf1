//! What reading needs besides the input: the target canisters and their refs, the clock, the
//! owner, the name sets read from the canister, and the memo the host made.

use candid::{IDLValue, Principal};
use serde_json::Value;
use std::collections::BTreeMap;

/// A target canister and its dynamic tag values, keyed by their `from` (`query:icrc1_decimals`).
#[derive(Clone, Debug, PartialEq)]
pub struct Canister {
    pub id: Principal,
    /// A short name for people and models, such as the token's symbol.
    pub label: Option<String>,
    pub refs: BTreeMap<String, Value>,
    /// The form ids whose tools apply to this canister; `None` for all.
    pub forms: Option<Vec<String>>,
}

impl Canister {
    pub fn applies_to(&self, form_id: &str) -> bool {
        self.forms
            .as_ref()
            .is_none_or(|f| f.iter().any(|x| x == form_id))
    }
}

/// One entry of a name set: a name a person may type and the value it stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct NameEntry {
    pub name: String,
    pub value: IDLValue,
}

#[derive(Clone, Debug, Default)]
pub struct ReadContext<'a> {
    pub canisters: &'a [Canister],
    /// The target canister's clock, ns since the Unix epoch; stamps and relative times need it.
    pub now_ns: Option<u64>,
    /// The principal on whose behalf the call is made (for `owner:` defaults).
    pub owner: Option<Principal>,
    /// Name sets read from the target canister, by set name.
    pub names: Option<&'a BTreeMap<String, Vec<NameEntry>>>,
    /// The memo to put in the memo position; made from the intent when not given.
    pub memo: Option<Vec<u8>>,
}
