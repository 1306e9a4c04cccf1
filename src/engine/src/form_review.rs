//! The bus's review of a form's tools at registration (`bus::review`, the function `tool-host
//! lint` runs too): the declaration checks a model provider would otherwise fail opaquely, a
//! tool name another form's tool has, and the overlaps a model could not tell apart.

use crate::catalog::Catalog;
use crate::errors::ErrorCode;
use crate::types::{ApiError, IssueView, OverlapView};
use std::sync::Arc;
use tool_host_core::bus::{self, DeclIssue, Overlap, ToolDecl, ToolSource};
use tool_host_core::form::Form;
use tool_host_core::plan::{build_tool_plans, FormRef};

/// The issue code of a declaration check a tool fails (`path` says where in the tool).
pub const DECL_ISSUE: &str = "E_DECL";
/// The issue code of a tool name that another registered form's tool has.
pub const NAME_TAKEN: &str = "E_TOOL_NAME_TAKEN";

/// The declarations of a form's own tools, for the canisters it applies to (among
/// `canisters`). Built from the form alone: a tool another form would take away is still
/// checked, and reported by [`taken_names`]. Each is declared with its canister part left out
/// where it can be (`bus::splice::review_decl`): a review reads names and descriptions, and
/// [`FormDecls::review`] checks the part once.
pub fn form_decls<'a>(id: &str, form: &Arc<Form>, cat: &'a Catalog) -> FormDecls<'a> {
    let plans = build_tool_plans(&[FormRef {
        id: id.to_string(),
        form: form.clone(),
    }]);
    let part = cat.part(id);
    let decls = plans
        .plans
        .values()
        .map(|p| bus::splice::review_decl(p, &part))
        .collect();
    FormDecls { part, decls }
}

/// A form's tools as a review reads them (see [`form_decls`]).
pub struct FormDecls<'a> {
    part: tool_host_core::schema::FormCanisters<'a>,
    pub decls: Vec<ToolDecl>,
}

impl FormDecls<'_> {
    /// `bus::review_with` of these tools, each checked as it is declared whole.
    pub fn review(&self, held: &[(&ToolDecl, &tool_host_core::bus::DeclWords)]) -> bus::Review {
        bus::review_checked(&self.decls, held, |d| {
            bus::splice::decl_issues(d, &self.part)
        })
    }
}

/// The declaration issues of a form's tools now (`list_forms` reports them: a form stored
/// before the checks, or a canister's refs changed since; registering a canister asks them
/// of its forms). Those of [`form_decls`]' review, each tool's taken from its last review
/// where it can be (`FormEntry::review_issues`).
pub fn form_issues(cat: &Catalog, id: &str) -> Vec<IssueView> {
    let Some(e) = cat.entries.get(id) else {
        return vec![];
    };
    issue_views(e.review_issues(&cat.part(id)))
}

/// The tools `decls` (of form `id`) whose name another form's tool already has: two forms'
/// tools of one name would both be skipped, the other form's taken away unannounced.
pub fn taken_names(cat: &Catalog, id: &str, decls: &[ToolDecl]) -> Vec<IssueView> {
    let holder = |name: &str| -> Option<String> {
        let planned = cat.plans.plans.get(name).map(|p| p.form.id.clone());
        planned
            .or_else(|| cat.unbound(name).map(|u| u.form))
            .filter(|form| form != id)
    };
    decls
        .iter()
        .filter_map(|d| {
            let other = holder(&d.name)?;
            Some(IssueView {
                param: d.name.clone(),
                path: "name".into(),
                code: NAME_TAKEN.into(),
                message: format!(
                    "the tool name {} is the tool of form '{other}': two forms' tools of one name would both be skipped; register the canister under form '{other}', or name the method otherwise",
                    d.name
                ),
            })
        })
        .collect()
}

/// The tools held now that a new version of form `id` does not replace: every other form's,
/// `commit` and the enabled builtins, each with its words as the bus keeps them.
pub fn held_tools<'a>(
    bus: &'a crate::catalog::Bus,
    id: &str,
) -> Vec<(&'a ToolDecl, &'a tool_host_core::bus::DeclWords)> {
    bus.decls
        .iter()
        .map(|d| &**d)
        .zip(bus.words.iter().map(|w| &**w))
        .filter(|(d, _)| !matches!(&d.source, ToolSource::Form { form_id } if form_id == id))
        .collect()
}

pub fn issue_views(issues: Vec<DeclIssue>) -> Vec<IssueView> {
    issues
        .into_iter()
        .map(|i| IssueView {
            param: i.tool,
            path: i.path,
            code: DECL_ISSUE.into(),
            message: i.message,
        })
        .collect()
}

pub fn overlap_views(overlaps: Vec<Overlap>) -> Vec<OverlapView> {
    overlaps
        .into_iter()
        .map(|o| OverlapView {
            tools: o.tools.to_vec(),
            similarity_permille: o.similarity_permille,
            message: o.message,
        })
        .collect()
}

/// `INVALID_FORM` naming each tool and what it breaks; nothing was stored.
pub fn refusal(issues: Vec<IssueView>) -> ApiError {
    ApiError {
        code: ErrorCode::InvalidForm.as_str().into(),
        message: format!(
            "the form's tools are refused: {} problem{} (a declaration a model provider would refuse, or a tool name another form has); nothing was stored",
            issues.len(),
            if issues.len() == 1 { "" } else { "s" }
        ),
        issues,
    }
}
