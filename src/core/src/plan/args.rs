//! How each position of a method's argument is filled: an input read by its reader, a default,
//! the idempotency stamp, the memo, or nothing.

use super::*;

/// Plans the argument list: one argument's record fields become inputs; several arguments are
/// inputs `arg0`, `arg1`, ...
pub(super) fn plan_args(
    form: &Form,
    method: &Method,
    args: &[Node],
    params: &mut Vec<Param>,
    used: &mut Budget,
) -> Result<Vec<ArgPlan>, String> {
    if args.len() == 1 {
        return Ok(vec![plan_arg(
            form, method, &args[0], "$args[0]", params, used, true,
        )?]);
    }
    let mut out = vec![];
    for (i, node) in args.iter().enumerate() {
        let path = format!("$args[{i}]");
        let slot = whole_slot(form, method, node, &path, &format!("arg{i}"), params, used)?;
        out.push(ArgPlan::Whole(Box::new(slot)));
    }
    Ok(out)
}

/// One argument (or case payload): a record that no value tag reads is split into its fields.
pub(super) fn plan_arg(
    form: &Form,
    method: &Method,
    node: &Node,
    path: &str,
    params: &mut Vec<Param>,
    used: &mut Budget,
    split: bool,
) -> Result<ArgPlan, String> {
    let ty = resolve(form, node).ok_or_else(|| format!("{path}: an unresolved type"))?;
    if let (true, Ty::Record(fields), None) = (split, ty, value_tag(form, node)) {
        let mut slots = vec![];
        for f in fields {
            let Label::Named(fname) = &f.label else {
                return Err(format!(
                    "{path}: a field named by a number (#{})",
                    f.label.hash()
                ));
            };
            if fname == crate::plan::CANISTER_PARAM {
                return Err(format!(
                    "an argument field named '{CANISTER_PARAM}' (the canister selector's input)"
                ));
            }
            let fpath = format!("{path}.{fname}");
            let fill = field_fill(form, method, fname, &f.node, &fpath, params, used)?;
            slots.push(Slot {
                label: Some(f.label.clone()),
                node: f.node.clone(),
                fill,
            });
        }
        return Ok(ArgPlan::Fields(slots));
    }
    let name = match reader_probe(form, node) {
        Some(r) => r.whole_name().to_string(),
        None => "input".into(),
    };
    Ok(ArgPlan::Whole(Box::new(whole_slot(
        form, method, node, path, &name, params, used,
    )?)))
}

/// Positions a whole argument's name is read within: a name is a leaf's under its options and
/// names; a deeper reader is an `input` (read in full, and uncounted, it was up to a method's
/// bound again per argument, past the form's bound).
const NAME_POSITIONS: usize = 8;

fn reader_probe(form: &Form, node: &Node) -> Option<Reader> {
    let peeled = match resolve(form, node) {
        Some(Ty::Opt(inner)) if value_tag(form, node).is_none() => inner.as_ref(),
        _ => node,
    };
    Budget::of_method(NAME_POSITIONS)
        .builder(form)
        .reader(peeled, "$")
        .ok()
}

fn whole_slot(
    form: &Form,
    method: &Method,
    node: &Node,
    path: &str,
    name: &str,
    params: &mut Vec<Param>,
    used: &mut Budget,
) -> Result<Slot, String> {
    let fill = position_fill(form, node, path, name, params, used)?;
    let _ = method;
    Ok(Slot {
        label: None,
        node: node.clone(),
        fill,
    })
}

/// A field of the argument record: the stamp, the memo, a hidden or auto position, or an input.
fn field_fill(
    form: &Form,
    method: &Method,
    fname: &str,
    node: &Node,
    path: &str,
    params: &mut Vec<Param>,
    used: &mut Budget,
) -> Result<Fill, String> {
    if let Some(id) = &method.idempotency {
        if id.stamp.labels.len() == 1 && id.stamp.labels[0] == fname {
            if !is_nat64_or_opt(form, node) {
                return Err(format!(
                    "the stamp '{}' must be a nat64 or opt nat64",
                    id.stamp
                ));
            }
            return Ok(Fill::Stamp);
        }
        if let Some(memo) = &id.memo {
            if memo.index == 0 && memo.labels.len() == 1 && memo.labels[0] == fname {
                if !is_blob_or_opt(form, node) {
                    return Err(format!("the memo '{memo}' must be a blob or opt blob"));
                }
                return Ok(Fill::Memo);
            }
        }
    }
    position_fill(form, node, path, fname, params, used)
}

fn position_fill(
    form: &Form,
    node: &Node,
    path: &str,
    name: &str,
    params: &mut Vec<Param>,
    used: &mut Budget,
) -> Result<Fill, String> {
    // One builder for the position, within what the method's other positions left: a host
    // fill's check (a literal default read by its rule) counts too.
    let left = used.left();
    let mut rb = used.builder(form);
    let fill = rb.host_fill(node, path);
    used.used += left - rb.left();
    if let Some(fill) = fill? {
        return Ok(fill);
    }
    // The same builder reads the input: what it has left is what the position may read.
    let left = rb.left();
    let ty = resolve(form, node).ok_or_else(|| format!("{path}: an unresolved type"))?;
    if matches!(ty, Ty::Prim(Prim::Null | Prim::Reserved)) {
        return Ok(Fill::Empty);
    }
    let (optional, inner) = match ty {
        Ty::Opt(inner) if value_tag(form, node).is_none() => (true, inner.as_ref()),
        _ => (false, node),
    };
    // The use site's own tags apply to the inner value of an opt.
    let reader = if optional {
        let mut merged = inner.clone();
        merge_tags(&mut merged.tags, &node.tags);
        rb.reader(&merged, path)
    } else {
        rb.reader(inner, path)
    };
    let positions = left - rb.left();
    used.used += positions;
    let reader = reader?;
    params.push(Param {
        name: name.to_string(),
        path: path.to_string(),
        node: node.clone(),
        optional,
        reader,
        positions,
    });
    Ok(Fill::Param(params.len() - 1))
}

/// Tags on an `opt` position that describe its value (describe, named) pass to the inner node.
fn merge_tags(inner: &mut Tags, outer: &Tags) {
    if inner.describe.is_none() {
        inner.describe = outer.describe.clone();
    }
    if inner.named.is_none() {
        inner.named = outer.named.clone();
    }
}

pub(super) fn is_nat64_or_opt(form: &Form, node: &Node) -> bool {
    match resolve(form, node) {
        Some(Ty::Prim(Prim::Nat64)) => true,
        Some(Ty::Opt(inner)) => matches!(resolve(form, inner), Some(Ty::Prim(Prim::Nat64))),
        _ => false,
    }
}

pub(super) fn is_blob_or_opt(form: &Form, node: &Node) -> bool {
    match resolve(form, node) {
        Some(Ty::Blob) => true,
        Some(Ty::Opt(inner)) => matches!(resolve(form, inner), Some(Ty::Blob)),
        _ => false,
    }
}
