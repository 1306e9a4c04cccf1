//! The tool bus: every tool in one place (the forms' tools, `commit` and the enabled builtins),
//! each declared once with its effect label; the few offered for one request; and the shapes
//! each model provider takes. Pure: the engine keeps usage counts and turns, the bus decides.

mod check;
pub mod decl;
pub mod kept;
mod markdown;
mod overlap;
pub mod page;
pub mod render;
mod review;
pub mod select;
pub mod splice;
mod strict;
mod words;

pub use check::{
    NameRule, MAX_DESCRIPTION_CHARS, MAX_PROPERTY_DESCRIPTION_CHARS, PROPERTY_KEY_RULE,
    TOOL_NAME_RULES,
};
pub use decl::{
    check_decl, decl_of_plan, decl_of_plan_for, host_decls, label_of, overlap_warnings, DeclIssue,
};
pub use decl::{commit_decl, destructive, effect_of, unannotated};
pub use decl::{EffectLabel, Overlap, ToolDecl, ToolSource};
pub use markdown::header as markdown_header;
pub use overlap::{similarity_permille, MAX_OVERLAPS, OVERLAP_THRESHOLD_PERMILLE};
pub use render::{render, render_owned, ToolFormat};
pub use review::{review, review_checked, review_with, Review};
pub use select::{missing, score, select, select_with, Usage, DEFAULT_LIMIT, MAX_LIMIT};
pub use strict::strict_schema;
pub use words::{words, DeclWords, WordSet, WordSig, STOP_WORDS};
