//! Where the canister wasms come from.
//!
//! - `TOOL_HOST_WASM_DIR` set: `tool_host.wasm.gz` (or `tool_host.wasm`) and
//!   `test_ledger.wasm.gz` (or `.wasm`) from that directory, e.g. `out/` as
//!   `scripts/build.sh` writes it. Nothing is built.
//! - otherwise: both crates are built for wasm32 in release mode with
//!   `local_ic::wasm_build::WasmBuild` into `<target>/canisters` (`$CARGO_TARGET_DIR` or the
//!   workspace's `target/`), once per test process; cargo makes later runs no-ops.

use local_ic::wasm_build::WasmBuild;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable naming a directory of prebuilt wasms.
pub const WASM_DIR_ENV: &str = "TOOL_HOST_WASM_DIR";

/// The two canisters the scenarios deploy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Canister {
    ToolHost,
    TestLedger,
}

impl Canister {
    /// The crate's library name, which is also the wasm's file name.
    pub fn name(self) -> &'static str {
        match self {
            Canister::ToolHost => "tool_host",
            Canister::TestLedger => "test_ledger",
        }
    }

    fn manifest(self) -> PathBuf {
        let dir = match self {
            Canister::ToolHost => "src/canister",
            Canister::TestLedger => "src/test_ledger",
        };
        workspace().join(dir).join("Cargo.toml")
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// Where [`build`] puts the wasm builds.
pub fn build_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| {
            if t.is_relative() {
                workspace().join(t)
            } else {
                t
            }
        })
        .unwrap_or_else(|| workspace().join("target"))
        .join("canisters")
}

/// Reads `<name>.wasm.gz` or `<name>.wasm` from `dir`.
fn from_dir(dir: &Path, c: Canister) -> Result<Vec<u8>, String> {
    for file in [
        format!("{}.wasm.gz", c.name()),
        format!("{}.wasm", c.name()),
    ] {
        let path = dir.join(&file);
        if path.exists() {
            return std::fs::read(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()));
        }
    }
    Err(format!(
        "{WASM_DIR_ENV}={} has neither {name}.wasm.gz nor {name}.wasm",
        dir.display(),
        name = c.name()
    ))
}

/// Builds one canister crate for wasm32 (release) into [`build_dir`].
fn build(c: Canister) -> Result<Vec<u8>, String> {
    WasmBuild {
        manifest_path: c.manifest(),
        crate_name: c.name().to_string(),
        target_dir: build_dir(),
    }
    .build()
}

fn load(c: Canister) -> Result<Vec<u8>, String> {
    match std::env::var_os(WASM_DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => from_dir(Path::new(&dir), c),
        None => build(c),
    }
}

type Loaded = Result<Vec<u8>, String>;

static TOOL_HOST: OnceLock<Loaded> = OnceLock::new();
static TEST_LEDGER: OnceLock<Loaded> = OnceLock::new();

/// The canister's wasm, loaded or built once per process (later callers wait for the first).
pub fn wasm(c: Canister) -> Result<&'static [u8], String> {
    let cell = match c {
        Canister::ToolHost => &TOOL_HOST,
        Canister::TestLedger => &TEST_LEDGER,
    };
    cell.get_or_init(|| load(c))
        .as_deref()
        .map_err(|e| format!("the {} wasm: {e}", c.name()))
}
