//! How a scenario fails: with a message saying where and why, or as unsupported on its backend
//! (which the harness reports as ignored with the reason, never as passed).

use crate::backend::BackendError;
use crate::clients::Api;
use std::fmt;

#[derive(Debug)]
pub enum Fail {
    /// The backend cannot do what the scenario needs.
    Unsupported(String),
    Failed(String),
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fail::Unsupported(m) | Fail::Failed(m) => f.write_str(m),
        }
    }
}

impl From<BackendError> for Fail {
    fn from(e: BackendError) -> Self {
        match e {
            BackendError::Unsupported { .. } => Fail::Unsupported(e.to_string()),
            other => Fail::Failed(other.to_string()),
        }
    }
}

impl From<serde_json::Error> for Fail {
    fn from(e: serde_json::Error) -> Self {
        Fail::Failed(format!("JSON: {e}"))
    }
}

pub type Check<T = ()> = Result<T, Fail>;

/// Fails the scenario with a formatted message and the place it failed.
#[macro_export]
macro_rules! fail {
    ($($arg:tt)*) => {
        return Err($crate::check::Fail::Failed(format!("{}:{}: {}", file!(), line!(), format!($($arg)*))))
    };
}

/// Fails unless the condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr) => {
        if !$cond { $crate::fail!("`{}` does not hold", stringify!($cond)); }
    };
    ($cond:expr, $($arg:tt)*) => {
        if !$cond { $crate::fail!("`{}` does not hold: {}", stringify!($cond), format!($($arg)*)); }
    };
}

/// Fails unless the two values are equal, showing both.
#[macro_export]
macro_rules! ensure_eq {
    ($left:expr, $right:expr) => {
        $crate::ensure_eq!($left, $right, "")
    };
    ($left:expr, $right:expr, $($arg:tt)*) => {
        match (&$left, &$right) {
            (l, r) => if l != r {
                $crate::fail!(
                    "`{}` != `{}`: {:?} != {:?} {}",
                    stringify!($left), stringify!($right), l, r, format!($($arg)*)
                );
            }
        }
    };
}

/// A tool host answer that must be `Ok`.
pub trait ApiOk<T> {
    fn ok_or_fail(self, what: &str) -> Check<T>;
}

impl<T> ApiOk<T> for Api<T> {
    fn ok_or_fail(self, what: &str) -> Check<T> {
        self.map_err(|e| {
            Fail::Failed(format!(
                "{what}: refused with {} ({}) {:?}",
                e.code, e.message, e.issues
            ))
        })
    }
}

/// A tool host answer that must be refused with `code`; answers the error.
pub fn refused<T: fmt::Debug>(
    r: Api<T>,
    code: &str,
    what: &str,
) -> Check<tool_host_engine::types::ApiError> {
    match r {
        Err(e) if e.code == code => Ok(e),
        Err(e) => Err(Fail::Failed(format!(
            "{what}: refused with {} ({}), expected {code}",
            e.code, e.message
        ))),
        Ok(v) => Err(Fail::Failed(format!(
            "{what}: succeeded with {v:?}, expected {code}"
        ))),
    }
}
