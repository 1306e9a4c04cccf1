//! The ICRC packs: resolved forms for ICRC-1 and ICRC-2 ledgers, shipped with the crate.

use crate::form::parse_form;
use crate::plan::FormRef;
use std::sync::Arc;

pub const ICRC1: &str = include_str!("../packs/icrc1.json");
pub const ICRC2: &str = include_str!("../packs/icrc2.json");

/// Pack names and their form JSON.
pub const PACKS: [(&str, &str); 2] = [("icrc1", ICRC1), ("icrc2", ICRC2)];

/// A pack's form, registered under the pack's name.
pub fn pack(name: &str) -> Option<FormRef> {
    let (_, json) = PACKS.iter().find(|(n, _)| *n == name)?;
    let form = parse_form(json.as_bytes()).ok()?;
    Some(FormRef {
        id: name.to_string(),
        form: Arc::new(form),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pack_is_a_valid_form() {
        for (name, json) in PACKS {
            if let Err(problems) = parse_form(json.as_bytes()) {
                panic!("pack {name} is invalid: {problems:#?}");
            }
        }
    }
}
