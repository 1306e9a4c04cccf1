//! What registration (`register_form`, `list_forms`) and `tool-host lint` say about a set of
//! tools, from one function so both say the same: each new declaration's issues (refusals at
//! registration), and the pairs a model could not tell apart (warnings, never refusals).

use super::decl::{check_decl, DeclIssue, Overlap, ToolDecl};
use super::overlap::warnings_against;

/// The issues of the new tools, and the overlaps each new tool has with another new one or
/// with a tool already held.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Review {
    pub issues: Vec<DeclIssue>,
    pub overlaps: Vec<Overlap>,
}

/// Reviews `new` (the tools a form adds) against `held` (the tools already offered). A held
/// tool with a new tool's name is the one being replaced, so it is not compared. The held
/// tools are not checked: what is held was checked when it came (or is reported apart).
pub fn review(new: &[ToolDecl], held: &[&ToolDecl]) -> Review {
    let issues = new
        .iter()
        .filter_map(|d| check_decl(d).err())
        .flatten()
        .collect();
    let held: Vec<&ToolDecl> = held
        .iter()
        .copied()
        .filter(|h| !new.iter().any(|n| n.name == h.name))
        .collect();
    Review {
        issues,
        overlaps: warnings_against(new, &held),
    }
}
