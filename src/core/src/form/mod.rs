//! Resolved forms: the model, the JSON reader, and the checks that refuse a malformed form whole.

mod check;
pub mod limits;
mod model;
mod parse;
mod refs;

pub use check::{describe_ty, is_account, resolve, step, walk};
pub use model::*;
pub use parse::{form_from_json, parse_form, Problem, FORMAT, FORMAT_VERSION};
pub use refs::ref_sources;
