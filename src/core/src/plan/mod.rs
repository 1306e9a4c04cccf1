//! Tool plans: which tools a set of resolved forms gives, and for each how its inputs are read
//! and its argument is built. Methods without a rule are skipped with the reason, never thrown.
//!
//! This module holds the plans themselves; the work is split by concern: [`catalog`] builds the
//! tools of all forms together (one method confirmed in one form is never a read in another;
//! clashing names skip every side), [`method`] plans the tools of one method (and of its
//! variant's cases) and checks its idempotency stamp, [`args`] plans how each argument position
//! is filled (an input, a default, the stamp, the memo), and [`safety`] holds the rules that
//! hold whatever a form says: which effects make a read tool, the methods that move funds, and
//! the guard every plan passes before it is offered.

mod args;
mod catalog;
mod combination;
mod method;
mod reader;
mod safety;

pub use catalog::{build_tool_plans, combine_tool_plans, plan_form, FormTools};
pub use combination::Combination;
pub use reader::{
    host_fill, tag_of, value_tag, Budget, Reader, ReaderBuilder, MAX_FORM_POSITIONS, MAX_POSITIONS,
};
pub use safety::{check_plan, is_read_only_effect, FUNDS_METHODS};

use crate::classify::Classifier;
use crate::form::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

pub const COMMIT_TOOL: &str = "commit";
/// The input that picks the target canister; an argument field of this name skips its method.
pub const CANISTER_PARAM: &str = "canister_id";

pub fn prepare_tool_name(method: &str) -> String {
    format!("prepare_{method}")
}

/// The tool of one case of a method's variant argument.
pub fn case_tool_name(method: &str, case: &str, read: bool) -> String {
    if read {
        format!("{method}_{case}")
    } else {
        format!("prepare_{method}_{case}")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    Read,
    Prepare,
}

/// A form with the id it is registered under (its `name`, or an index when it has none).
#[derive(Clone, Debug)]
pub struct FormRef {
    pub id: String,
    pub form: Arc<Form>,
}

/// One input of a tool.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    /// `$args[0].amount`, or `$args[0]` for a whole argument.
    pub path: String,
    pub node: Node,
    /// An `opt` position: the input may be left out.
    pub optional: bool,
    pub reader: Reader,
    /// The positions its reader reads, against the method's [`MAX_POSITIONS`].
    pub positions: usize,
}

/// How one position of the argument is filled.
#[derive(Clone, Debug)]
pub enum Fill {
    /// From the input of `params[i]`.
    Param(usize),
    /// A default from the canister's refs, the owner, or a literal.
    Auto(Auto),
    /// The idempotency stamp: the clock at preparation.
    Stamp,
    /// A unique memo made at preparation.
    Memo,
    /// Nothing: `null` for opt, `null` and `reserved` as themselves.
    Empty,
}

#[derive(Clone, Debug)]
pub struct Slot {
    /// The record field, or `None` for the whole position.
    pub label: Option<Label>,
    pub node: Node,
    pub fill: Fill,
}

/// How one argument is built.
#[derive(Clone, Debug)]
pub enum ArgPlan {
    /// A record whose fields are filled one by one.
    Fields(Vec<Slot>),
    Whole(Box<Slot>),
    /// A case of a variant argument (one tool per case), with its payload.
    Case {
        label: Label,
        payload: Box<ArgPlan>,
    },
}

#[derive(Clone, Debug)]
pub struct ToolPlan {
    pub name: String,
    pub kind: ToolKind,
    pub form: FormRef,
    pub method: String,
    pub mode: Mode,
    /// A read sent as an update call (certified answer).
    pub replicated: bool,
    pub title: String,
    pub description: String,
    pub effect: Effect,
    pub case: Option<String>,
    pub params: Vec<Param>,
    pub args: Vec<ArgPlan>,
    pub has_stamp: bool,
    pub classifier: Classifier,
}

impl ToolPlan {
    pub fn method_def(&self) -> &Method {
        &self.form.form.methods[&self.method]
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skip {
    pub method: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default)]
pub struct ToolPlans {
    /// By tool name; shared with each form's [`FormTools`], so that combining forms
    /// again after one changed copies no plan.
    pub plans: BTreeMap<String, Arc<ToolPlan>>,
    pub skipped: Vec<Skip>,
}

impl ToolPlans {
    /// Whether `commit` is offered: there is something to prepare.
    pub fn has_commit(&self) -> bool {
        self.plans.values().any(|p| p.kind == ToolKind::Prepare)
    }
    /// Every tool name, `commit` included, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.plans.keys().cloned().collect();
        if self.has_commit() {
            names.push(COMMIT_TOOL.to_string());
        }
        names.sort();
        names
    }
}

/// MCP tool names: letters, digits, `_` and `-`, at most 64.
pub(super) fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
