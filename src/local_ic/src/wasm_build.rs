//! Building a canister crate to Wasm from a test, so tests can run real canisters
//! without a separate build step.
//!
//! The build runs `cargo build --target wasm32-unknown-unknown --release` with
//! `RUSTFLAGS="-C link-arg=--export-table"` in its own target directory, so it does
//! not contend with (or invalidate) the host build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What to build.
#[derive(Clone, Debug)]
pub struct WasmBuild {
    /// `Cargo.toml` of the canister crate.
    pub manifest_path: PathBuf,
    /// Name of the library target (`my-canister` → `my_canister.wasm`).
    pub crate_name: String,
    /// Target directory for the Wasm build.
    pub target_dir: PathBuf,
}

impl WasmBuild {
    /// Path of the `.wasm` file the build produces.
    pub fn output(&self) -> PathBuf {
        self.target_dir
            .join("wasm32-unknown-unknown")
            .join("release")
            .join(format!("{}.wasm", self.crate_name.replace('-', "_")))
    }

    /// Builds the crate and returns the Wasm bytes.
    pub fn build(&self) -> Result<Vec<u8>, String> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args([
                "build",
                "--target",
                "wasm32-unknown-unknown",
                "--release",
                "--manifest-path",
            ])
            .arg(&self.manifest_path)
            .env("CARGO_TARGET_DIR", &self.target_dir)
            .env("RUSTFLAGS", "-C link-arg=--export-table")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .current_dir(self.manifest_path.parent().unwrap_or(Path::new(".")))
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "building {} failed:\n{}",
                self.manifest_path.display(),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        std::fs::read(self.output())
            .map_err(|e| format!("cannot read {}: {e}", self.output().display()))
    }
}
