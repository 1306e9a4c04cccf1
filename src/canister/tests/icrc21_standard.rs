//! The tool host's ICRC-21 and ICRC-10 methods are the standard's: checked against
//! `candid/icrc21.did` (a copy of the standard's `.did`) with candid's own subtype and equality
//! checks, and every type the standard names is exported under that name with the same shape,
//! so that clients generated from either file are the same. `candid/tool_host.did` is the
//! code's interface (the crate's `.did` test keeps them equal).

use candid::types::subtype::{equal, subtype_with_config, OptReport};
use candid::types::{Type, TypeInner};
use candid::TypeEnv;
use candid_parser::utils::CandidSource;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

const METHODS: [&str; 2] = [
    "icrc21_canister_call_consent_message",
    "icrc10_supported_standards",
];

/// Both interfaces in one environment: the tool host's service, and the standard's with its
/// types renamed `name/1` where the names meet (a name only the standard has keeps it); and
/// the names the tool host's `.did` has.
fn both() -> (TypeEnv, Type, Type, TypeEnv, BTreeSet<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../candid");
    let (mut env, ours) = CandidSource::File(&root.join("tool_host.did"))
        .load()
        .expect("tool_host.did parses");
    let (standard_env, standard) = CandidSource::File(&root.join("icrc21.did"))
        .load()
        .expect("icrc21.did parses");
    let ours = ours.expect("tool_host.did has a service");
    let names = env.0.keys().cloned().collect();
    // `service : (HostArg) -> { ... }`: the methods are the class's service.
    let ours = match ours.as_ref() {
        TypeInner::Class(_, service) => service.clone(),
        _ => ours,
    };
    let standard = env.merge_type(
        standard_env.clone(),
        standard.expect("icrc21.did has a service"),
    );
    (env, ours, standard, standard_env, names)
}

#[test]
fn the_tool_host_serves_the_standards_methods_with_its_types() {
    let (env, ours, standard, _, _) = both();
    let mut gamma = HashSet::new();
    // Strict about `opt`: the special opt rule would let any type pass for an optional one.
    subtype_with_config(OptReport::Error, &mut gamma, &env, &ours, &standard)
        .unwrap_or_else(|e| panic!("the tool host's service is not a subtype of ICRC-21's: {e}"));
    for m in METHODS {
        let a = env
            .get_method(&ours, m)
            .expect("the tool host has the method");
        let b = env
            .get_method(&standard, m)
            .expect("the standard has the method");
        let (a, b): (Type, Type) = (
            TypeInner::Func(a.clone()).into(),
            TypeInner::Func(b.clone()).into(),
        );
        equal(&mut HashSet::new(), &env, &a, &b)
            .unwrap_or_else(|e| panic!("{m} differs from the standard's: {e}"));
    }
}

/// Candid's exporter gives identical types one name, the shorter: the standard's
/// `TimestampSeconds` and `DurationSeconds` are both `record { amount : nat64 }`, and the
/// tool host's `.did` names both `DurationSeconds` (the same type on the wire and in clients).
const MERGED: [(&str, &str); 1] = [("TimestampSeconds", "DurationSeconds")];

#[test]
fn the_standards_type_names_are_exported_with_their_shapes() {
    let (env, _, _, standard_env, ours) = both();
    for (name, as_named) in MERGED {
        assert!(
            !ours.contains(name),
            "{name} is exported now: drop it from MERGED"
        );
        let theirs = env.find_type(name).unwrap();
        equal(
            &mut HashSet::new(),
            &env,
            env.find_type(as_named).unwrap(),
            theirs,
        )
        .unwrap_or_else(|e| panic!("{as_named} is not ICRC-21's {name}: {e}"));
    }
    for name in standard_env.0.keys() {
        if MERGED.iter().any(|(n, _)| n == name) {
            continue;
        }
        assert!(
            ours.contains(name),
            "tool_host.did has no type {name}, as ICRC-21 names it"
        );
        let theirs = env.find_type(&format!("{name}/1")).unwrap();
        equal(
            &mut HashSet::new(),
            &env,
            env.find_type(name).unwrap(),
            theirs,
        )
        .unwrap_or_else(|e| panic!("{name} differs from ICRC-21's: {e}"));
    }
    assert!(
        standard_env
            .0
            .contains_key("icrc21_consent_message_response")
            && standard_env.0.contains_key("Value"),
        "the standard's names were read"
    );
}
