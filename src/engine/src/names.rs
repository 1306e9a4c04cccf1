//! Name sets read from the target canister when an intent is prepared (once per preparation).

use crate::runtime::{CallOutcome, Runtime};
use candid::{IDLArgs, IDLValue, Principal};
use std::collections::{BTreeMap, BTreeSet};
use tool_host_core::candid_types::{to_types, type_env};
use tool_host_core::form::Form;
use tool_host_core::plan::{Reader, ToolPlan};
use tool_host_core::read::NameEntry;

/// The name sets a plan's inputs use.
pub fn sets_of(plan: &ToolPlan) -> BTreeSet<String> {
    fn visit(r: &Reader, out: &mut BTreeSet<String>) {
        match r {
            Reader::Named { set, inner } => {
                out.insert(set.clone());
                visit(inner, out);
            }
            Reader::Opt(i) => visit(i, out),
            Reader::Vec { elem, .. } => visit(elem, out),
            Reader::Record(fs) | Reader::Variant(fs) => fs.iter().for_each(|(_, r)| visit(r, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for p in &plan.params {
        visit(&p.reader, &mut out);
    }
    out
}

/// Reads every set a plan uses; a set that cannot be read is left out (inputs that need it get E_NAMES_UNREAD).
pub async fn read_sets<R: Runtime>(
    rt: &R,
    plan: &ToolPlan,
    canister: Principal,
    timeout: u32,
    single_owner: bool,
) -> BTreeMap<String, Vec<NameEntry>> {
    let mut out = BTreeMap::new();
    let form = plan.form.form.clone();
    for set in sets_of(plan) {
        let Some(ns) = form.names.get(&set) else {
            continue;
        };
        // Not called on a shared canister unless the engine knows it as a read: the set is
        // then unread, and a name of it is refused (`E_NAMES_UNREAD`), never guessed.
        if !single_owner && !crate::custody::known_read(&ns.method) {
            continue;
        }
        if let CallOutcome::Replied(bytes) = rt
            .call(
                canister,
                &ns.method,
                crate::registry::NO_ARGS.to_vec(),
                timeout,
            )
            .await
        {
            if let Some(entries) = entries_of(&form, &set, &bytes) {
                out.insert(set, entries);
            }
        }
    }
    out
}

/// The entries of a set in a reply of the method that lists it.
pub fn entries_of(form: &Form, set: &str, bytes: &[u8]) -> Option<Vec<NameEntry>> {
    let ns = form.names.get(set)?;
    let method = form.methods.get(&ns.method)?;
    let reply =
        IDLArgs::from_bytes_with_types(bytes, &type_env(form), &to_types(&method.results)).ok()?;
    // Walk the value along the list's relpath (fields and cases by name, through opts).
    let mut v = reply.args.get(ns.list.index)?;
    for label in &ns.list.labels {
        v = step(v, label)?;
    }
    while let IDLValue::Opt(inner) = v {
        v = inner;
    }
    let IDLValue::Vec(items) = v else { return None };
    let mut entries = vec![];
    for item in items {
        let name = match step(item, &ns.name_field)? {
            IDLValue::Text(t) => t.clone(),
            _ => continue,
        };
        let value = step(item, &ns.value_field)?.clone();
        entries.push(NameEntry { name, value });
    }
    Some(entries)
}

fn step<'a>(v: &'a IDLValue, label: &str) -> Option<&'a IDLValue> {
    let mut v = v;
    while let IDLValue::Opt(inner) = v {
        v = inner;
    }
    match v {
        IDLValue::Record(fs) => fs.iter().find(|f| is_label(&f.id, label)).map(|f| &f.val),
        IDLValue::Variant(vv) if is_label(&vv.0.id, label) => Some(&vv.0.val),
        _ => None,
    }
}

/// Whether a decoded label is `name` (named, or the name's hash when decoded without names).
pub fn is_label(l: &candid::types::Label, name: &str) -> bool {
    match l {
        candid::types::Label::Named(n) => n == name,
        other => other.get_id() == candid::idl_hash(name),
    }
}
