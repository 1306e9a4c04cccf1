//! Where the canister wasms come from.
//!
//! - `TOOL_HOST_WASM_DIR` set: `tool_host.wasm.gz` (or `tool_host.wasm`) and
//!   `test_ledger.wasm.gz` (or `.wasm`) from that directory, e.g. `out/` as
//!   `scripts/build.sh` writes it. Nothing is built.
//! - otherwise: both crates are built for wasm32 in release mode with
//!   `local_ic::wasm_build::WasmBuild` into `<target>/canisters` (`$CARGO_TARGET_DIR` or the
//!   workspace's `target/`), once per test process; cargo makes later runs no-ops.
//!
//! DFINITY's cycles ledger (a peer this project did not write, never built or committed here):
//! `$CYCLES_LEDGER_WASM` (the `.wasm` or `.wasm.gz`), else
//! `../shared/fixtures/cycles-ledger/cycles-ledger.wasm.gz` beside the checkout; its
//! `depositor` canister from `$CYCLES_DEPOSITOR_WASM`, else `depositor.wasm.gz` beside the
//! ledger's wasm. See [`cycles_ledger`].

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

/// The environment variable naming the cycles ledger's wasm.
pub const CYCLES_LEDGER_ENV: &str = "CYCLES_LEDGER_WASM";
/// The environment variable naming the depositor's wasm (default: beside the ledger's).
pub const CYCLES_DEPOSITOR_ENV: &str = "CYCLES_DEPOSITOR_WASM";

/// DFINITY's cycles ledger and its test depositor, as read from disk.
#[derive(Debug)]
pub struct CyclesLedgerWasm {
    pub ledger: Vec<u8>,
    pub depositor: Vec<u8>,
    /// Where the ledger's wasm was read from.
    pub path: PathBuf,
}

/// Why the cycles ledger cannot be had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CyclesLedgerMissing {
    /// Neither `$CYCLES_LEDGER_WASM` nor the fixture beside the checkout exists: the cycles
    /// ledger runs are reported as not run, with this reason.
    NotFound(String),
    /// `$CYCLES_LEDGER_WASM` (or the depositor) names something that cannot be read: a
    /// configuration error, reported as a failure.
    Unreadable(String),
}

impl std::fmt::Display for CyclesLedgerMissing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CyclesLedgerMissing::NotFound(m) | CyclesLedgerMissing::Unreadable(m) => f.write_str(m),
        }
    }
}

/// `../shared/fixtures/cycles-ledger/` beside the checkout.
pub fn cycles_ledger_fixture_dir() -> PathBuf {
    workspace()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join("shared/fixtures/cycles-ledger")
}

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn read_cycles_ledger() -> Result<CyclesLedgerWasm, CyclesLedgerMissing> {
    read_cycles_ledger_from(
        env_path(CYCLES_LEDGER_ENV),
        env_path(CYCLES_DEPOSITOR_ENV),
        &cycles_ledger_fixture_dir(),
    )
}

/// Reads the wasms from `ledger` (the environment's choice) or else from `fixture_dir`.
fn read_cycles_ledger_from(
    ledger: Option<PathBuf>,
    depositor: Option<PathBuf>,
    fixture_dir: &Path,
) -> Result<CyclesLedgerWasm, CyclesLedgerMissing> {
    let path = match ledger {
        Some(p) => p,
        None => {
            let p = fixture_dir.join("cycles-ledger.wasm.gz");
            if !p.is_file() {
                return Err(CyclesLedgerMissing::NotFound(format!(
                    "cycles ledger wasm not found: {CYCLES_LEDGER_ENV} is not set and {} does not exist",
                    p.display()
                )));
            }
            p
        }
    };
    let read = |p: &Path, what: &str| {
        std::fs::read(p).map_err(|e| {
            CyclesLedgerMissing::Unreadable(format!(
                "cannot read the {what} at {}: {e}",
                p.display()
            ))
        })
    };
    let ledger = read(&path, "cycles ledger wasm")?;
    let depositor_path = depositor.unwrap_or_else(|| {
        path.parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
            .join("depositor.wasm.gz")
    });
    let depositor = read(&depositor_path, "cycles ledger's depositor wasm")?;
    Ok(CyclesLedgerWasm {
        ledger,
        depositor,
        path,
    })
}

static CYCLES_LEDGER: OnceLock<Result<CyclesLedgerWasm, CyclesLedgerMissing>> = OnceLock::new();

/// The cycles ledger and depositor wasms, read once per process.
pub fn cycles_ledger() -> Result<&'static CyclesLedgerWasm, CyclesLedgerMissing> {
    CYCLES_LEDGER
        .get_or_init(read_cycles_ledger)
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycles_ledger_is_not_run_without_its_wasm_and_fails_on_a_bad_path() {
        let nowhere = Path::new("/nonexistent/fixtures");
        match read_cycles_ledger_from(None, None, nowhere) {
            Err(CyclesLedgerMissing::NotFound(m)) => {
                assert!(
                    m.contains(CYCLES_LEDGER_ENV) && m.contains("/nonexistent"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
        let bad = Some(PathBuf::from("/nonexistent/cycles-ledger.wasm.gz"));
        match read_cycles_ledger_from(bad, None, nowhere) {
            Err(CyclesLedgerMissing::Unreadable(m)) => assert!(m.contains("cannot read"), "{m}"),
            other => panic!("{other:?}"),
        }
        // The depositor is looked for beside the ledger's wasm.
        let dir = std::env::temp_dir().join(format!("cl-wasm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cycles-ledger.wasm.gz"), b"ledger").unwrap();
        match read_cycles_ledger_from(None, None, &dir) {
            Err(CyclesLedgerMissing::Unreadable(m)) => assert!(m.contains("depositor"), "{m}"),
            other => panic!("{other:?}"),
        }
        std::fs::write(dir.join("depositor.wasm.gz"), b"depositor").unwrap();
        let w = read_cycles_ledger_from(None, None, &dir).unwrap();
        assert_eq!(
            (w.ledger.as_slice(), w.depositor.as_slice()),
            (&b"ledger"[..], &b"depositor"[..])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
