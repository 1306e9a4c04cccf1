//! dfx.json names what exists: custom canisters that scripts/build.sh builds into
//! `out/<name>.wasm.gz`, with `candid/<name>.did`, for packages of this workspace.
//!
//! The check is scripts/check_dfx_json.py (Python standard library only, like the import check
//! of scripts/build.sh). This test runs its static part with every `cargo test`; after a build,
//! scripts/build.sh runs it with `--built`, which also opens the wasm files dfx.json names.
//! Without python3 the test fails: it never skips. A second test holds the `candid:args`
//! metadata build.sh derives from each .did to the Candid parser's reading of it.

use std::path::Path;
use std::process::Command;

#[test]
fn dfx_json_names_what_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .arg(root.join("scripts/check_dfx_json.py"))
        .current_dir(&root)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 (scripts/build.sh needs it too): {e}"));
    assert!(
        out.status.success(),
        "scripts/check_dfx_json.py failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `candid:args` metadata scripts/build.sh writes (scripts/release_facts.py reads the
/// .did's service line as text, with no Candid parser at hand) is what DFINITY's Candid parser
/// and printer make of the service's install arguments, as dfx writes that section.
#[test]
fn candid_args_metadata_is_what_the_candid_parser_reads() {
    use candid::pretty::candid::pp_args;
    use candid::types::TypeInner;
    use candid_parser::utils::CandidSource;

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for name in ["tool_host", "test_ledger"] {
        let did = root.join(format!("candid/{name}.did"));
        let (_, actor) = CandidSource::File(&did)
            .load()
            .unwrap_or_else(|e| panic!("candid/{name}.did does not parse: {e}"));
        let actor = actor.unwrap_or_else(|| panic!("candid/{name}.did has no service"));
        let args = match actor.as_ref() {
            TypeInner::Class(args, _) => args.clone(),
            _ => vec![],
        };
        let parsed = pp_args(&args).pretty(usize::MAX).to_string();

        let out = Command::new("python3")
            .arg(root.join("scripts/release_facts.py"))
            .arg("candid-args")
            .arg(&did)
            .output()
            .unwrap_or_else(|e| panic!("cannot run python3 (scripts/build.sh needs it too): {e}"));
        assert!(
            out.status.success(),
            "release_facts.py candid-args candid/{name}.did failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let written = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(
            written, parsed,
            "candid:args for {name}: release_facts.py reads {written:?}, the Candid parser {parsed:?}"
        );
    }
}
