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
}

/// Plans one form's methods (see [`FormTools`]).
pub fn plan_form(fr: &FormRef) -> FormTools {
    let mut candidates: Vec<Arc<ToolPlan>> = vec![];
    let mut skipped: Vec<Skip> = vec![];
    let mut confirmed: BTreeSet<String> = BTreeSet::new();
    for (name, method) in &fr.form.methods {
        let writes =
            !method.mode.is_query() && !method.effect.as_ref().is_some_and(is_read_only_effect);
        if writes {
            confirmed.insert(name.clone());
        }
        match plan_method(fr, name, method) {
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
    }
}

/// Builds every tool the forms give; methods without a rule are in `skipped` with the reason.
pub fn build_tool_plans(forms: &[FormRef]) -> ToolPlans {
    let planned: Vec<FormTools> = forms.iter().map(plan_form).collect();
    let pairs: Vec<(&FormRef, &FormTools)> = forms.iter().zip(&planned).collect();
    combine_tool_plans(&pairs)
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
    let mut kept = vec![];
    let candidates = forms
        .iter()
        .enumerate()
        .flat_map(|(fi, (_, tools))| tools.candidates.iter().map(move |p| (p, fi)));
    for (p, fi) in candidates {
        let others: Vec<&str> = confirmed
            .get(p.method.as_str())
            .into_iter()
            .flatten()
            .filter(|f| **f != fi)
            .map(|f| forms[*f].0.id.as_str())
            .collect();
        if p.kind == ToolKind::Read && !others.is_empty() {
            let reason = format!(
                "another form ({}) offers {} as a prepare tool, sent only after the owner's confirmation; it is never also a read tool",
                others.join(", "),
                p.method
            );
            skipped.push(Skip {
                method: p.method.clone(),
                reason: match &p.case {
                    Some(c) => format!("case {c}: {reason}"),
                    None => reason,
                },
            });
        } else {
            kept.push(p);
        }
    }
    let candidates = kept;
    // A tool name that is `commit`, a builtin's (reserved whether or not an admin enabled that
    // builtin, and `http_request`, the reference's builtin not shipped: enabling it later must not change what a form's tool does), or that two methods
    // (or cases) would share, skips them all.
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &candidates {
        *count.entry(p.name.as_str()).or_default() += 1;
    }
    let clashing: BTreeSet<String> = count
        .iter()
        .filter(|(n, c)| **c > 1 || **n == COMMIT_TOOL || is_reserved_name(n))
        .map(|(n, _)| n.to_string())
        .collect();
    let mut plans = BTreeMap::new();
    for p in candidates {
        if clashing.contains(&p.name) {
            let reason = if p.name == COMMIT_TOOL {
                format!("its tool name '{COMMIT_TOOL}' is the commit tool's")
            } else if is_reserved_name(&p.name) {
                format!(
                    "its tool name '{}' is reserved for the builtin tool of that name",
                    p.name
                )
            } else {
                format!("its tool name '{}' is another method's tool name", p.name)
            };
            let reason = match &p.case {
                Some(c) => format!("case {c}: {reason}"),
                None => reason,
            };
            skipped.push(Skip {
                method: p.method.clone(),
                reason,
            });
        } else {
            plans.insert(p.name.clone(), p.clone());
        }
    }
    skipped.sort_by(|a, b| (&a.method, &a.reason).cmp(&(&b.method, &b.reason)));
    skipped.dedup();
    ToolPlans { plans, skipped }
}
