//! One tool's declaration: what a model reads (name, title, description, input schema), what a
//! gate reads (the effect label), and the checks every declaration passes before it is offered.

use crate::plan::{is_read_only_effect, ToolPlan, ToolPlans};
use crate::read::Canister;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a tool does. There is no default: a tool that never said is `None`, and unset is not
/// readonly (a default would label every unlabelled tool safe).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectLabel {
    /// No effect outside the host.
    Readonly,
    /// An effect, but twice is the same as once.
    Idempotent,
    /// Neither: never retried on its own.
    Destructive,
}

impl EffectLabel {
    pub fn as_str(self) -> &'static str {
        match self {
            EffectLabel::Readonly => "readonly",
            EffectLabel::Idempotent => "idempotent",
            EffectLabel::Destructive => "destructive",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ToolSource {
    /// A tool a registered form gives.
    Form { form_id: String },
    /// The host's own `commit`.
    Host,
    /// A builtin an admin enabled.
    Builtin,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDecl {
    pub name: String,
    pub title: String,
    pub description: String,
    pub effect: Option<EffectLabel>,
    /// A JSON Schema (draft 2020-12) object schema for the input: MCP's `inputSchema`.
    pub input_schema: Value,
    /// Where the answer has a fixed shape: MCP's `outputSchema`.
    pub output_schema: Option<Value>,
    pub source: ToolSource,
}

/// A form tool's label: a query is readonly (Candid guarantees it); an update is labelled only
/// when its form states the method's `effect`: read-only effects are readonly, an update with an
/// idempotency stamp is idempotent, one without is destructive.
pub fn label_of(plan: &ToolPlan) -> Option<EffectLabel> {
    if plan.mode.is_query() {
        return Some(EffectLabel::Readonly);
    }
    let effect = plan.method_def().effect.as_ref()?;
    Some(if is_read_only_effect(effect) {
        EffectLabel::Readonly
    } else if plan.has_stamp {
        EffectLabel::Idempotent
    } else {
        EffectLabel::Destructive
    })
}

/// A form tool's declaration (its schema as `list_tools` has always given it).
pub fn decl_of_plan(plan: &ToolPlan, canisters: &[Canister]) -> ToolDecl {
    let _ = (plan, canisters);
    unimplemented!("bus helper")
}

/// Every form tool's declaration and `commit` (when there is something to prepare), by name.
pub fn host_decls(plans: &ToolPlans, canisters: &[Canister]) -> Vec<ToolDecl> {
    let _ = (plans, canisters);
    unimplemented!("bus helper")
}

/// Why a declaration is refused: the tool, where in it (`name`, `description`,
/// `inputSchema.properties.mode.enum[1]`, ...) and the reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeclIssue {
    pub tool: String,
    pub path: String,
    pub message: String,
}

/// The checks a provider would otherwise make opaquely (or not at all): a name some provider
/// will not take, an enum with no options, a blank option, a description over its bound.
pub fn check_decl(decl: &ToolDecl) -> Result<(), Vec<DeclIssue>> {
    let _ = decl;
    unimplemented!("bus helper")
}

/// Two tools whose descriptions overlap so much that a model could not tell them apart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overlap {
    pub tools: [String; 2],
    /// The documented similarity, in thousandths.
    pub similarity_permille: u32,
    pub message: String,
}

pub fn overlap_warnings(decls: &[ToolDecl]) -> Vec<Overlap> {
    let _ = decls;
    unimplemented!("bus helper")
}
