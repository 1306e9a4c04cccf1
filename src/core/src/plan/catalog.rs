//! The tools of all registered forms together: per-method plans, then the rules across forms
//! (a method one form sends only after confirmation is never a read tool in another; a tool name
//! two methods would share, `commit`, or a builtin tool's name, skips them all).

use super::method::plan_method;
use super::*;
use crate::builtin::is_reserved_name;
use std::collections::BTreeSet;

/// The tools of one form alone, before the rules across forms: what [`build_tool_plans`]
/// makes of each form, kept by a caller that rebuilds the tools of many forms when one of
/// them changes ([`combine_tool_plans`]).
#[derive(Clone, Debug)]
pub struct FormTools {
    /// The plans that passed [`check_plan`], in the form's method order.
    /// Shared (`Arc`): combining forms ([`combine_tool_plans`]) copies pointers, not plans.
    pub candidates: Vec<Arc<ToolPlan>>,
    /// The methods (and cases) without a rule, with the reason.
    pub skipped: Vec<Skip>,
    /// The methods this form sends only after the owner's confirmation.
    pub confirmed: BTreeSet<String>,
    /// The input positions its methods read, skipped ones' as far as they read (at most
    /// [`MAX_FORM_POSITIONS`] and one method's bound): what a host bounds across its forms.
    pub positions: usize,
}

/// Plans one form's methods (see [`FormTools`]).
pub fn plan_form(fr: &FormRef) -> FormTools {
    let mut candidates: Vec<Arc<ToolPlan>> = vec![];
    let mut skipped: Vec<Skip> = vec![];
    let mut confirmed: BTreeSet<String> = BTreeSet::new();
    let mut positions = 0;
    for (name, method) in &fr.form.methods {
        let writes =
            !method.mode.is_query() && !method.effect.as_ref().is_some_and(is_read_only_effect);
        if writes {
            confirmed.insert(name.clone());
        }
        let mut used = Budget::of_method(MAX_FORM_POSITIONS.saturating_sub(positions));
        let planned = plan_method(fr, name, method, &mut used);
        positions += used.used;
        match planned {
            Ok((plans, case_skips)) => {
                for p in plans {
                    match check_plan(&p) {
                        Ok(()) => {
                            if p.kind == ToolKind::Prepare {
                                confirmed.insert(p.method.clone());
                            }
                            candidates.push(Arc::new(p));
                        }
                        Err(reason) => skipped.push(Skip {
                            method: name.clone(),
                            reason,
                        }),
                    }
                }
                skipped.extend(case_skips);
            }
            Err(reason) => skipped.push(Skip {
                method: name.clone(),
                reason,
            }),
        }
    }
    FormTools {
        candidates,
        skipped,
        confirmed,
        positions,
    }
}

/// Builds every tool the forms give; methods without a rule are in `skipped` with the reason.
pub fn build_tool_plans(forms: &[FormRef]) -> ToolPlans {
    let planned: Vec<FormTools> = forms.iter().map(plan_form).collect();
    let pairs: Vec<(&FormRef, &FormTools)> = forms.iter().zip(&planned).collect();
    combine_tool_plans(&pairs)
}

/// Why no tool is offered under a name: the rule on names, one for [`combine_tool_plans`] and
/// [`Combination`](super::Combination) (which decides a name without saying why).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NameRule {
    /// The name is `commit`'s.
    Commit,
    /// The name is a builtin tool's (reserved whether or not an admin enabled that builtin).
    Reserved,
    /// Two methods (or cases) would share the name.
    Shared,
}

impl NameRule {
    /// The rule that refuses `name` to its `candidates` (after the rule on reads); `None`
    /// when the one candidate is offered.
    pub(super) fn of(name: &str, candidates: usize) -> Option<NameRule> {
        if name == COMMIT_TOOL {
            Some(NameRule::Commit)
        } else if is_reserved_name(name) {
            Some(NameRule::Reserved)
        } else {
            (candidates > 1).then_some(NameRule::Shared)
        }
    }

    fn reason(self, name: &str) -> String {
        match self {
            NameRule::Commit => format!("its tool name '{COMMIT_TOOL}' is the commit tool's"),
            NameRule::Reserved => {
                format!("its tool name '{name}' is reserved for the builtin tool of that name")
            }
            NameRule::Shared => format!("its tool name '{name}' is another method's tool name"),
        }
    }
}

/// Tool `p` skipped for `reason` (a case's tool says which case).
fn skip_of(p: &ToolPlan, reason: &str) -> Skip {
    Skip {
        method: p.method.clone(),
        reason: match &p.case {
            Some(c) => format!("case {c}: {reason}"),
            None => reason.to_string(),
        },
    }
}

/// The rules across forms over each form's own tools ([`plan_form`]): the same as
/// [`build_tool_plans`] of those forms, without planning any of them again.
pub fn combine_tool_plans(forms: &[(&FormRef, &FormTools)]) -> ToolPlans {
    let mut skipped: Vec<Skip> = vec![];
    // The forms (by index) in which each method is sent only after the owner's confirmation.
    let mut confirmed: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for (fi, (_, tools)) in forms.iter().enumerate() {
        for m in &tools.confirmed {
            confirmed.entry(m.as_str()).or_default().insert(fi);
        }
        skipped.extend(tools.skipped.iter().cloned());
    }
    // A read tool of a method that another form sends only after confirmation (a prepare tool)
    // would send it at once: whichever form is right about it, it is not a read here.
    let mut candidates: Vec<&Arc<ToolPlan>> = vec![];
    for (fi, (_, tools)) in forms.iter().enumerate() {
        for p in &tools.candidates {
            if p.kind == ToolKind::Read {
                let others: Vec<&str> = confirmed
                    .get(p.method.as_str())
                    .into_iter()
                    .flatten()
                    .filter(|f| **f != fi)
                    .map(|f| forms[*f].0.id.as_str())
                    .collect();
                if !others.is_empty() {
                    let reason = format!(
                        "another form ({}) offers {} as a prepare tool, sent only after the owner's confirmation; it is never also a read tool",
                        others.join(", "),
                        p.method
                    );
                    skipped.push(skip_of(p, &reason));
                    continue;
                }
            }
            candidates.push(p);
        }
    }
    // A tool name that is `commit`, a builtin's (reserved whether or not an admin enabled that
    // builtin, and `http_request`, the reference's builtin not shipped: enabling it later must
    // not change what a form's tool does), or that two methods (or cases) would share, skips
    // them all. By name, so that the plans are built in order (a registration combines every
    // form's tools: searched name by name, it cost 2.5 M at 50 forms).
    candidates.sort_by(|a, b| a.name.cmp(&b.name));
    let mut plans: Vec<(String, Arc<ToolPlan>)> = Vec::with_capacity(candidates.len());
    for same in candidates.chunk_by(|a, b| a.name == b.name) {
        let name = same[0].name.as_str();
        match NameRule::of(name, same.len()) {
            None => plans.push((name.to_string(), same[0].clone())),
            Some(rule) => {
                let reason = rule.reason(name);
                skipped.extend(same.iter().map(|p| skip_of(p, &reason)));
            }
        }
    }
    // In order and unique: built without a search.
    let plans: BTreeMap<String, Arc<ToolPlan>> = plans.into_iter().collect();
    skipped.sort_by(|a, b| (&a.method, &a.reason).cmp(&(&b.method, &b.reason)));
    skipped.dedup();
    ToolPlans { plans, skipped }
}
