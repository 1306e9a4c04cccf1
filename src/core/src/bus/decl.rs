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

impl ToolDecl {
    /// A copy with `input_schema` in place of its own (which is not copied: it can hold every
    /// canister of a form).
    pub fn with_input_schema(&self, input_schema: Value) -> ToolDecl {
        ToolDecl {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            effect: self.effect,
            input_schema,
            output_schema: self.output_schema.clone(),
            source: self.source.clone(),
        }
    }
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
    decl_of_plan_for(
        plan,
        &crate::schema::FormCanisters::new(&plan.form.id, canisters),
    )
}

/// [`decl_of_plan`] with the canister part of `plan`'s form worked out once for all its tools.
pub fn decl_of_plan_for(plan: &ToolPlan, part: &crate::schema::FormCanisters) -> ToolDecl {
    decl_of_definition(plan, crate::schema::tool_definition_for(plan, part))
}

/// [`decl_of_plan_for`] with the canister part left as a hole (`bus::splice`).
pub(super) fn decl_holed(plan: &ToolPlan, part: &crate::schema::FormCanisters) -> ToolDecl {
    decl_of_definition(plan, crate::schema::tool_definition_holed(plan, part))
}

fn decl_of_definition(plan: &ToolPlan, mut def: Value) -> ToolDecl {
    ToolDecl {
        name: plan.name.clone(),
        title: plan.title.clone(),
        description: plan.description.clone(),
        effect: label_of(plan),
        // Taken, not cloned: it holds the enum of every canister the form applies to.
        input_schema: def
            .get_mut("inputSchema")
            .map(Value::take)
            .unwrap_or_default(),
        // A prepare answers the intent (a fixed shape); a read tool answers the canister's reply.
        output_schema: (plan.kind == crate::plan::ToolKind::Prepare)
            .then(crate::mcp::intent_answer_schema),
        source: ToolSource::Form {
            form_id: plan.form.id.clone(),
        },
    }
}

/// `commit`'s declaration: idempotent, since the engine answers a second commit of one preview
/// with the first outcome and never sends twice.
pub fn commit_decl() -> ToolDecl {
    let def = crate::schema::commit_definition();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    ToolDecl {
        name: text(&def["name"]),
        title: text(&def["annotations"]["title"]),
        description: text(&def["description"]),
        effect: Some(EffectLabel::Idempotent),
        input_schema: def["inputSchema"].clone(),
        output_schema: Some(crate::mcp::intent_answer_schema()),
        source: ToolSource::Host,
    }
}

/// Every form tool's declaration and `commit` (when there is something to prepare), by name.
pub fn host_decls(plans: &ToolPlans, canisters: &[Canister]) -> Vec<ToolDecl> {
    let mut parts: std::collections::BTreeMap<&str, crate::schema::FormCanisters> =
        Default::default();
    let mut decls: Vec<ToolDecl> = plans
        .plans
        .values()
        .map(|p| {
            let part = parts
                .entry(p.form.id.as_str())
                .or_insert_with(|| crate::schema::FormCanisters::new(&p.form.id, canisters));
            decl_of_plan_for(p, part)
        })
        .collect();
    if plans.has_commit() {
        decls.push(commit_decl());
    }
    decls.sort_by(|a, b| a.name.cmp(&b.name));
    decls
}

/// The names of the destructive tools among `decls`, in their order.
pub fn destructive(decls: &[ToolDecl]) -> Vec<&str> {
    decls
        .iter()
        .filter(|d| d.effect == Some(EffectLabel::Destructive))
        .map(|d| d.name.as_str())
        .collect()
}

/// The names of the tools that carry no label (a gate must treat them as the worst case).
pub fn unannotated(decls: &[ToolDecl]) -> Vec<&str> {
    decls
        .iter()
        .filter(|d| d.effect.is_none())
        .map(|d| d.name.as_str())
        .collect()
}

/// A tool's label by name: `None` when the tool is absent, `Some(None)` when it is unlabelled.
pub fn effect_of(decls: &[ToolDecl], name: &str) -> Option<Option<EffectLabel>> {
    decls.iter().find(|d| d.name == name).map(|d| d.effect)
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
    let issues = super::check::issues(decl);
    if issues.is_empty() {
        Ok(())
    } else {
        Err(issues)
    }
}

/// Two tools whose descriptions overlap so much that a model could not tell them apart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overlap {
    pub tools: [String; 2],
    /// The documented similarity, in thousandths.
    pub similarity_permille: u32,
    pub message: String,
}

/// Every pair of `decls` whose descriptions' similarity (`bus::overlap`) is at or over
/// `OVERLAP_THRESHOLD_PERMILLE`: each pair once, its names sorted, pairs in name order.
pub fn overlap_warnings(decls: &[ToolDecl]) -> Vec<Overlap> {
    super::overlap::warnings(decls)
}
