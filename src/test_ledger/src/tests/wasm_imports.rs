//! The release wasm imports nothing but `ic0` functions.
//!
//! It checks the wasm that `cargo build -p test_ledger --target wasm32-unknown-unknown
//! --release` left in the target directory (or `$TEST_LEDGER_WASM`); with none built yet it
//! says so and passes.

use std::path::PathBuf;
use wasmparser::{Parser, Payload, TypeRef};

fn wasm_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TEST_LEDGER_WASM") {
        return Some(PathBuf::from(p));
    }
    let rel = "wasm32-unknown-unknown/release/test_ledger.wasm";
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        candidates.push(PathBuf::from(dir).join(rel));
    }
    // The test binary lives in <target>/<profile>/deps/.
    if let Some(target) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(PathBuf::from))
    {
        candidates.push(target.join(rel));
    }
    candidates.push(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../target")
            .join(rel),
    );
    candidates.into_iter().find(|p| p.exists())
}

/// `(module, name)` of every import of the wasm.
pub fn imports(wasm: &[u8]) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for payload in Parser::new(0).parse_all(wasm) {
        if let Ok(Payload::ImportSection(reader)) = payload {
            for import in reader.into_iter().flatten() {
                let is_func = matches!(import.ty, TypeRef::Func(_));
                out.push((import.module.to_string(), import.name.to_string(), is_func));
            }
        }
    }
    out
}

#[test]
fn the_wasm_imports_only_ic0_functions() {
    let Some(path) = wasm_path() else {
        eprintln!("skipped: no release wasm built yet (set TEST_LEDGER_WASM or build it)");
        return;
    };
    let wasm = std::fs::read(&path).expect("reading the wasm");
    let imports = imports(&wasm);
    assert!(!imports.is_empty(), "{} imports nothing", path.display());
    let names: Vec<&str> = imports.iter().map(|(_, n, _)| n.as_str()).collect();
    eprintln!("{} imports: {}", path.display(), names.join(", "));
    for (module, name, is_func) in &imports {
        assert_eq!(module, "ic0", "import {module}.{name}");
        assert!(is_func, "ic0.{name} is not a function import");
    }
}
