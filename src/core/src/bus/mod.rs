//! The tool bus: every tool in one place (the forms' tools, `commit` and the enabled builtins),
//! each declared once with its effect label; the few offered for one request; and the shapes
//! each model provider takes. Pure: the engine keeps usage counts and turns, the bus decides.

pub mod decl;
pub mod render;
pub mod select;

pub use decl::{check_decl, decl_of_plan, host_decls, label_of, overlap_warnings, DeclIssue};
pub use decl::{EffectLabel, Overlap, ToolDecl, ToolSource};
pub use render::{render, ToolFormat};
pub use select::{missing, score, select, Usage, DEFAULT_LIMIT, MAX_LIMIT};
