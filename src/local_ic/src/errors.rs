//! Error types: IC-style rejects for calls, and install errors that name the problem.

use std::fmt;

use candid::Principal;

/// Reject codes as defined by the IC interface specification.
///
/// The numeric values are the ones a canister sees from `ic0.msg_reject_code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum RejectCode {
    /// Fatal system error; retrying is unlikely to help.
    SysFatal = 1,
    /// Transient system error; retrying may help.
    SysTransient = 2,
    /// The destination (canister or method) is invalid.
    DestinationInvalid = 3,
    /// The canister explicitly rejected the message (`ic0.msg_reject`).
    CanisterReject = 4,
    /// The canister failed (trapped, did not reply, ...).
    CanisterError = 5,
    /// The outcome of a bounded-wait call is unknown (e.g. its deadline expired).
    SysUnknown = 6,
}

impl RejectCode {
    /// The numeric code as seen by canisters.
    pub fn as_u32(self) -> u32 {
        self as u32
    }

    /// Converts a numeric reject code; `None` for 0 and unknown codes.
    pub fn from_u32(code: u32) -> Option<Self> {
        Some(match code {
            1 => Self::SysFatal,
            2 => Self::SysTransient,
            3 => Self::DestinationInvalid,
            4 => Self::CanisterReject,
            5 => Self::CanisterError,
            6 => Self::SysUnknown,
            _ => return None,
        })
    }

    /// Codes only the system can produce (a canister can only produce 4 and 5).
    pub fn is_system_code(self) -> bool {
        matches!(
            self,
            Self::SysFatal | Self::SysTransient | Self::DestinationInvalid | Self::SysUnknown
        )
    }
}

impl fmt::Display for RejectCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Self::SysFatal => "SYS_FATAL",
            Self::SysTransient => "SYS_TRANSIENT",
            Self::DestinationInvalid => "DESTINATION_INVALID",
            Self::CanisterReject => "CANISTER_REJECT",
            Self::CanisterError => "CANISTER_ERROR",
            Self::SysUnknown => "SYS_UNKNOWN",
        };
        write!(f, "{} ({name})", self.as_u32())
    }
}

/// A reject response to a call: what a caller (test or canister) sees when a call fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reject {
    /// The reject code.
    pub code: RejectCode,
    /// The human-readable reject message.
    pub message: String,
}

impl Reject {
    /// Builds a reject.
    pub fn new(code: RejectCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "reject code {}: {}", self.code, self.message)
    }
}

impl std::error::Error for Reject {}

/// Why `install` refused or failed; each variant names the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstallError {
    /// No canister with this id was created on this host.
    CanisterNotFound(Principal),
    /// The sender is not a controller of the canister.
    NotController {
        /// The canister.
        canister: Principal,
        /// The principal that attempted the install.
        sender: Principal,
    },
    /// `InstallMode::Install` on a canister that already has code.
    CanisterNotEmpty(Principal),
    /// `InstallMode::Upgrade` on a canister without code.
    CanisterEmpty(Principal),
    /// The bytes are not a valid (optionally gzipped) WebAssembly module.
    InvalidWasm(String),
    /// The module imports a function this host does not implement.
    UnsupportedImport {
        /// Import module name (`ic0` for System API imports).
        module: String,
        /// Import field name.
        name: String,
    },
    /// The module imports a known `ic0` function with the wrong signature.
    ImportSignatureMismatch {
        /// The `ic0` function name.
        name: String,
        /// The signature the host implements.
        expected: String,
        /// The signature the module declares.
        found: String,
    },
    /// The module uses a feature this host refuses (named in the message).
    Unsupported(String),
    /// `(start)`, `canister_init`, `canister_pre_upgrade` or `canister_post_upgrade` trapped;
    /// the canister was left as it was before the install.
    Trapped {
        /// The function that trapped.
        function: String,
        /// The trap message.
        message: String,
    },
}

impl fmt::Display for InstallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CanisterNotFound(c) => write!(f, "canister {c} not found"),
            Self::NotController { canister, sender } => {
                write!(f, "{sender} is not a controller of canister {canister}")
            }
            Self::CanisterNotEmpty(c) => write!(
                f,
                "canister {c} already has a Wasm module; use InstallMode::Reinstall or Upgrade"
            ),
            Self::CanisterEmpty(c) => {
                write!(
                    f,
                    "canister {c} has no Wasm module to upgrade; use InstallMode::Install"
                )
            }
            Self::InvalidWasm(m) => write!(f, "invalid Wasm module: {m}"),
            Self::UnsupportedImport { module, name } => write!(
                f,
                "the module imports `{module}.{name}`, which the local IC host does not implement"
            ),
            Self::ImportSignatureMismatch {
                name,
                expected,
                found,
            } => write!(
                f,
                "the module imports `ic0.{name}` with signature {found}, expected {expected}"
            ),
            Self::Unsupported(m) => write!(f, "unsupported by the local IC host: {m}"),
            Self::Trapped { function, message } => {
                write!(f, "{function} trapped: {message}")
            }
        }
    }
}

impl std::error::Error for InstallError {}

/// Misuse of the host API that is not an IC-level reject (e.g. an unknown message id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostError {
    /// The system did not become quiet within the given number of rounds.
    NotQuiet {
        /// Rounds that were executed.
        rounds: u64,
    },
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotQuiet { rounds } => {
                write!(f, "the local IC was still busy after {rounds} rounds")
            }
        }
    }
}

impl std::error::Error for HostError {}
