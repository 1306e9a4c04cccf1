//! The tools of one method: a read or a prepare tool, or one tool per case of a variant
//! argument whose cases carry an intent or an effect; their titles and descriptions.

use super::args::{is_blob_or_opt, is_nat64_or_opt, plan_arg, plan_args};
use super::safety::{default_effect, is_read};
use super::*;

pub(super) type MethodPlans = (Vec<ToolPlan>, Vec<Skip>);

/// `used`: the method's positions, against its bound and what its form left.
pub(super) fn plan_method(
    fr: &FormRef,
    name: &str,
    method: &Method,
    used: &mut Budget,
) -> Result<MethodPlans, String> {
    let form = &fr.form;
    let effect = method
        .effect
        .clone()
        .unwrap_or_else(|| default_effect(method.mode));
    let read = is_read(name, method.mode, &effect)?;
    if method.mode.is_query() && method.results.len() > 1 {
        return Err(format!(
            "a query with more than one result ({})",
            method.results.len()
        ));
    }
    if read && method.idempotency.is_some() {
        return Err("a stamped read: a read has no idempotency stamp".into());
    }
    let classifier = Classifier::new(form, method)?;
    if !read && method.idempotency.is_none() && classifier.can_retry_new() {
        return Err(
            "an outcome class retry_new renews a stamp, but the method has no idempotency stamp"
                .into(),
        );
    }
    if let Some(id) = &method.idempotency {
        if method.args.len() != 1 {
            return Err(format!("an idempotency stamp with {} arguments (a stamp is a field of the one argument record)", method.args.len()));
        }
        if id.stamp.labels.is_empty() {
            return Err(format!(
                "the stamp '{}' is the whole argument; it must be a field of the argument record",
                id.stamp
            ));
        }
    }
    // The case tools of a variant argument whose cases carry an intent or an effect.
    if method.args.len() == 1 {
        if let Some(Ty::Variant(cases)) = resolve(form, &method.args[0]) {
            if cases
                .iter()
                .any(|c| c.node.tags.intent.is_some() || c.node.tags.effect.is_some())
            {
                if method.idempotency.is_some() {
                    return Err("stamped case tools: a method with an idempotency stamp gets no case tools yet".into());
                }
                return Ok(plan_cases(
                    fr,
                    name,
                    method,
                    cases,
                    &effect,
                    &classifier,
                    used,
                ));
            }
        }
    }
    if let Some(id) = &method.idempotency {
        check_idempotency(form, method, id)?;
    }
    let tool_name = if read {
        name.to_string()
    } else {
        prepare_tool_name(name)
    };
    if !valid_tool_name(&tool_name) {
        return Err(format!("the tool name '{tool_name}' is not a valid tool name (letters, digits, '_' or '-', at most 64)"));
    }
    let mut params = vec![];
    let args = plan_args(form, method, &method.args, &mut params, used)?;
    let title = method
        .intent
        .clone()
        .or_else(|| method.describe.as_deref().map(title_of))
        .unwrap_or_else(|| name.to_string());
    let description = describe_tool(
        method.describe.as_deref(),
        name,
        read,
        method.mode,
        method.idempotency.is_some(),
        effect.replicated && !method.mode.is_query(),
    );
    Ok((
        vec![ToolPlan {
            name: tool_name,
            kind: if read {
                ToolKind::Read
            } else {
                ToolKind::Prepare
            },
            form: fr.clone(),
            method: name.to_string(),
            mode: method.mode,
            replicated: read && !method.mode.is_query(),
            title,
            description,
            effect,
            case: None,
            params,
            args,
            has_stamp: method.idempotency.is_some(),
            classifier,
        }],
        vec![],
    ))
}

fn plan_cases(
    fr: &FormRef,
    name: &str,
    method: &Method,
    cases: &[FieldNode],
    method_effect: &Effect,
    classifier: &Classifier,
    used: &mut Budget,
) -> MethodPlans {
    let form = &fr.form;
    let mut plans = vec![];
    let mut skips = vec![];
    // The positions the cases' inputs read, all of them against the method's bound (`used`):
    // each case is a tool of its own, and a variant of many cases would otherwise be as many
    // times the bound.
    for case in cases {
        let skip = |reason: String| Skip {
            method: name.to_string(),
            reason: format!("case {}: {reason}", case.label),
        };
        let Label::Named(case_name) = &case.label else {
            skips.push(skip("a case named by a number has no tool name".into()));
            continue;
        };
        let effect = case
            .node
            .tags
            .effect
            .clone()
            .unwrap_or_else(|| method_effect.clone());
        let read = match is_read(name, method.mode, &effect) {
            Ok(r) => r,
            Err(reason) => {
                skips.push(skip(reason));
                continue;
            }
        };
        let intent = case
            .node
            .tags
            .intent
            .clone()
            .or_else(|| method.intent.clone());
        if !read && intent.is_none() {
            skips.push(skip(
                "a prepare tool needs an intent (the case's or the method's)".into(),
            ));
            continue;
        }
        let tool_name = case_tool_name(name, case_name, read);
        if !valid_tool_name(&tool_name) {
            skips.push(skip(format!(
                "the tool name '{tool_name}' is not a valid tool name"
            )));
            continue;
        }
        let mut params = vec![];
        let payload = match plan_arg(
            form,
            method,
            &case.node,
            &format!("$args[0].{case_name}"),
            &mut params,
            used,
            true,
        ) {
            Ok(p) => p,
            Err(reason) => {
                skips.push(skip(reason));
                continue;
            }
        };
        let title = case
            .node
            .tags
            .intent
            .clone()
            .or_else(|| case.node.tags.describe.clone())
            .unwrap_or_else(|| format!("{name} {case_name}"));
        let words = case
            .node
            .tags
            .describe
            .as_deref()
            .or(method.describe.as_deref());
        plans.push(ToolPlan {
            name: tool_name,
            kind: if read {
                ToolKind::Read
            } else {
                ToolKind::Prepare
            },
            form: fr.clone(),
            method: name.to_string(),
            mode: method.mode,
            replicated: read && !method.mode.is_query(),
            title,
            description: describe_tool(
                words,
                &format!("{name} {case_name}"),
                read,
                method.mode,
                false,
                effect.replicated && !method.mode.is_query(),
            ),
            effect,
            case: Some(case_name.clone()),
            params,
            args: vec![ArgPlan::Case {
                label: case.label.clone(),
                payload: Box::new(payload),
            }],
            has_stamp: false,
            classifier: classifier.clone(),
        });
    }
    (plans, skips)
}

/// The stamp and the memo are top-level fields of the one argument record, of their types: the
/// host fills only those. A stamp the host did not fill would be treated as stamped after an
/// unknown outcome and sent again, with nothing in the bytes for the ledger to deduplicate on.
fn check_idempotency(form: &Form, method: &Method, id: &Idempotency) -> Result<(), String> {
    let arg = &method.args[0];
    let fields = match resolve(form, arg) {
        Some(Ty::Record(fields)) if value_tag(form, arg).is_none() => fields,
        ty => {
            return Err(format!(
                "the stamp '{}' must be a field of the argument record, but the argument is {}",
                id.stamp,
                describe_ty(ty)
            ))
        }
    };
    let field = |what: &str, rp: &RelPath| -> Result<&FieldNode, String> {
        if rp.index != 0 {
            return Err(format!(
                "the {what} '{rp}' names argument {}, but the method has one argument",
                rp.index
            ));
        }
        match rp.labels.as_slice() {
            [] => Err(format!(
                "the {what} '{rp}' is the whole argument; it must be a field of the argument record"
            )),
            [label] => fields
                .iter()
                .find(|f| f.label.name() == Some(label.as_str()))
                .ok_or_else(|| format!("the {what} '{rp}' names no field of the argument record")),
            _ => Err(format!(
                "the {what} '{rp}' is not a top-level field of the argument record: the host fills only those (not one inside a vec element, a nested record or a variant case; batch methods are not offered yet)"
            )),
        }
    };
    let stamp = field("stamp", &id.stamp)?;
    if !is_nat64_or_opt(form, &stamp.node) {
        return Err(format!(
            "the stamp '{}' must be a nat64 or opt nat64",
            id.stamp
        ));
    }
    if let Some(memo) = &id.memo {
        let m = field("memo", memo)?;
        if m.label == stamp.label {
            return Err(format!("the memo '{memo}' is the stamp's field"));
        }
        if !is_blob_or_opt(form, &m.node) {
            return Err(format!("the memo '{memo}' must be a blob or opt blob"));
        }
    }
    Ok(())
}

/// A title from describe words: their first sentence, without its full stop.
fn title_of(words: &str) -> String {
    let first = words.trim().split(". ").next().unwrap_or("");
    first.trim_end_matches('.').to_string()
}

fn describe_tool(
    words: Option<&str>,
    what: &str,
    read: bool,
    mode: Mode,
    stamped: bool,
    certified: bool,
) -> String {
    let mut d = match words {
        Some(w) => w.trim().to_string(),
        None => format!("Calls {what}."),
    };
    if read {
        if certified {
            d.push_str(
                " A read sent as an update call, so its answer is certified; nothing changes.",
            );
        } else {
            d.push_str(" Reads only; nothing changes.");
        }
    } else {
        d.push_str(" Prepares the call and answers with a preview; nothing is sent until the owner confirms it (commit).");
        if !stamped && mode == Mode::Update {
            d.push_str(" This method has no idempotency stamp: after an unknown outcome it is never sent again.");
        }
    }
    d
}
