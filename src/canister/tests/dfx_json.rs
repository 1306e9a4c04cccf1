//! dfx.json names what exists: custom canisters that scripts/build.sh builds into
//! `out/<name>.wasm.gz`, with `candid/<name>.did`, for packages of this workspace.
//!
//! The check is scripts/check_dfx_json.py (Python standard library only, like the import check
//! of scripts/build.sh). This test runs its static part with every `cargo test`; after a build,
//! scripts/build.sh runs it with `--built`, which also opens the wasm files dfx.json names.
//! Without python3 the test fails: it never skips.

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
