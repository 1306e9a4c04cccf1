//! The tools of all registered forms together: per-method plans, then the rules across forms
//! (a method one form sends only after confirmation is never a read tool in another; a tool name
//! two methods would share, `commit`, or a builtin tool's name, skips them all).

use super::method::plan_method;
use super::*;
use crate::builtin::is_reserved_name;
use std::collections::BTreeSet;

/// Builds every tool the forms give; methods without a rule are in `skipped` with the reason.
pub fn build_tool_plans(forms: &[FormRef]) -> ToolPlans {
    let mut candidates: Vec<ToolPlan> = vec![];
    let mut skipped: Vec<Skip> = vec![];
    // The forms (by index) in which each method is sent only after the owner's confirmation.
    let mut confirmed: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let mut from_form: Vec<usize> = vec![];
    for (fi, fr) in forms.iter().enumerate() {
        for (name, method) in &fr.form.methods {
            let writes =
                !method.mode.is_query() && !method.effect.as_ref().is_some_and(is_read_only_effect);
            if writes {
                confirmed.entry(name.clone()).or_default().insert(fi);
            }
            match plan_method(fr, name, method) {
                Ok((plans, case_skips)) => {
                    for p in plans {
                        match check_plan(&p) {
                            Ok(()) => {
                                if p.kind == ToolKind::Prepare {
                                    confirmed.entry(p.method.clone()).or_default().insert(fi);
                                }
                                candidates.push(p);
                                from_form.push(fi);
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
    }
    // A read tool of a method that another form sends only after confirmation (a prepare tool)
    // would send it at once: whichever form is right about it, it is not a read here.
    let mut kept = vec![];
    for (p, fi) in candidates.into_iter().zip(from_form) {
        let others: Vec<&str> = confirmed
            .get(&p.method)
            .into_iter()
            .flatten()
            .filter(|f| **f != fi)
            .map(|f| forms[*f].id.as_str())
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
            plans.insert(p.name.clone(), p);
        }
    }
    skipped.sort_by(|a, b| (&a.method, &a.reason).cmp(&(&b.method, &b.reason)));
    skipped.dedup();
    ToolPlans { plans, skipped }
}
