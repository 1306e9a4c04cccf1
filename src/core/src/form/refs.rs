//! The refs a form reads from its target canisters (`query:<method>` sources).

use super::model::*;
use std::collections::BTreeSet;

/// Every `query:` source a form's tags name: token decimals and symbols, and auto defaults.
pub fn ref_sources(form: &Form) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for node in form.types.values() {
        walk(node, &mut out, 0);
    }
    for m in form.methods.values() {
        for n in m.args.iter().chain(m.results.iter()) {
            walk(n, &mut out, 0);
        }
    }
    out
}

fn walk(node: &Node, out: &mut BTreeSet<String>, depth: usize) {
    if depth > 64 {
        return;
    }
    if let Some(ValueTag::TokenAmount { decimals, symbol }) = &node.tags.value {
        if let Dyn::From(s) = decimals {
            out.insert(s.clone());
        }
        if let Dyn::From(s) = symbol {
            out.insert(s.clone());
        }
    }
    if let Some(Auto::From(s)) = &node.tags.auto {
        if s.starts_with("query:") {
            out.insert(s.clone());
        }
    }
    match &node.ty {
        Ty::Opt(n) | Ty::Vec(n) => walk(n, out, depth + 1),
        Ty::Record(fs) | Ty::Variant(fs) => {
            for f in fs {
                walk(&f.node, out, depth + 1);
            }
        }
        _ => {}
    }
}
