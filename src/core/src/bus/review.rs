//! What registration (`register_form`, `list_forms`) and `tool-host lint` say about a set of
//! tools, from one function so both say the same: each new declaration's issues (refusals at
//! registration), and the pairs a model could not tell apart (warnings, never refusals).

use super::decl::{check_decl, DeclIssue, Overlap, ToolDecl};
use super::overlap::{warnings_against_with, MAX_OVERLAPS};
use super::words::{DeclWords, WordSet};

/// The issues of the new tools, and the overlaps each new tool has with another new one or
/// with a tool already held.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Review {
    pub issues: Vec<DeclIssue>,
    /// At most [`MAX_OVERLAPS`] pairs, the first found.
    pub overlaps: Vec<Overlap>,
    /// Another pair was found past those: the review stopped there, and more may overlap.
    pub more_overlaps: bool,
}

/// Reviews `new` (the tools a form adds) against `held` (the tools already offered). A held
/// tool with a new tool's name is the one being replaced, so it is not compared. The held
/// tools are not checked: what is held was checked when it came (or is reported apart).
pub fn review(new: &[ToolDecl], held: &[&ToolDecl]) -> Review {
    let words: Vec<DeclWords> = held
        .iter()
        .map(|d| DeclWords {
            description: WordSet::of(&d.description),
            ..Default::default()
        })
        .collect();
    let held: Vec<(&ToolDecl, &DeclWords)> = held.iter().copied().zip(words.iter()).collect();
    review_with(new, &held)
}

/// [`review`] with each held tool's words already split (the catalog keeps them).
pub fn review_with(new: &[ToolDecl], held: &[(&ToolDecl, &DeclWords)]) -> Review {
    review_checked(new, held, |d| check_decl(d).err().unwrap_or_default())
}

/// [`review_with`] with each new tool's issues found by `check` (a form's tools declared with
/// their canister part left out check it once: `bus::splice`).
pub fn review_checked(
    new: &[ToolDecl],
    held: &[(&ToolDecl, &DeclWords)],
    check: impl Fn(&ToolDecl) -> Vec<DeclIssue>,
) -> Review {
    let issues = new.iter().flat_map(check).collect();
    let held: Vec<(&ToolDecl, &WordSet)> = held
        .iter()
        .filter(|(h, _)| !new.iter().any(|n| n.name == h.name))
        .map(|(h, w)| (*h, &w.description))
        .collect();
    let (overlaps, more_overlaps) = warnings_against_with(new, &held, MAX_OVERLAPS);
    Review {
        issues,
        overlaps,
        more_overlaps,
    }
}
