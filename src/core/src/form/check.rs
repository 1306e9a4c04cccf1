//! Whole-form checks after parsing: references resolve and every tag sits on a type it fits.

use super::model::*;
use super::parse::{At, Problem, METHODS, NAMES, TYPES};

/// `parsed_whole`: no part failed to parse (name sets refer to methods that may be missing otherwise).
pub(super) fn check_form(form: &Form, problems: &mut Vec<Problem>, parsed_whole: bool) {
    let mut c = Checker { form, problems };
    for (name, node) in &form.types {
        c.node(node, &TYPES.key(name), false);
    }
    for (name, method) in &form.methods {
        let mp = METHODS.key(name);
        for (i, n) in method.args.iter().enumerate() {
            c.node(n, &mp.field("args").index(i), false);
        }
        for (i, n) in method.results.iter().enumerate() {
            c.node(n, &mp.field("results").index(i), false);
        }
    }
    if parsed_whole {
        for (set, ns) in &form.names {
            c.name_set(set, ns);
        }
    }
}

struct Checker<'a> {
    form: &'a Form,
    problems: &'a mut Vec<Problem>,
}

impl Checker<'_> {
    fn err(&mut self, path: &At<'_>, reason: String) {
        self.problems.push(Problem {
            path: path.to_string(),
            reason,
        });
    }

    fn node(&mut self, node: &Node, path: &At<'_>, is_case: bool) {
        match &node.ty {
            Ty::Ref(name) if !self.form.types.contains_key(name) => {
                self.err(
                    &path.field("type"),
                    format!("'{name}' is neither a Candid type nor one of the form's types"),
                );
                return;
            }
            Ty::Opt(inner) | Ty::Vec(inner) => self.node(inner, &path.field("inner"), false),
            Ty::Record(fields) => {
                for (i, f) in fields.iter().enumerate() {
                    self.node(&f.node, &path.field("fields").index(i), false);
                }
            }
            Ty::Variant(cases) => {
                for (i, f) in cases.iter().enumerate() {
                    self.node(&f.node, &path.field("cases").index(i), true);
                }
            }
            Ty::Func(sig) => self.sig(sig, path),
            Ty::Service(methods) => {
                for (m, sig) in methods {
                    self.sig(sig, &path.field("methods").key(m));
                }
            }
            _ => {}
        }
        self.tags(node, path, is_case);
    }

    fn sig(&mut self, sig: &FuncSig, path: &At<'_>) {
        for (i, n) in sig.args.iter().enumerate() {
            self.node(n, &path.field("args").index(i), false);
        }
        for (i, n) in sig.results.iter().enumerate() {
            self.node(n, &path.field("results").index(i), false);
        }
    }

    fn tags(&mut self, node: &Node, path: &At<'_>, is_case: bool) {
        let t = &node.tags;
        let resolved = resolve(self.form, node);
        // Written out only for a problem (at every node it cost a stored form ~20 K).
        let ty_word = || describe_ty(resolved);
        if !is_case && (t.intent.is_some() || t.effect.is_some()) {
            self.err(
                path,
                "'intent' and 'effect' belong on a method or on a variant case".into(),
            );
        }
        if let Some(v) = &t.value {
            let fits = match v {
                ValueTag::TokenAmount { .. } => {
                    matches!(resolved, Some(Ty::Prim(p)) if p.is_unsigned())
                }
                ValueTag::Account => is_account(self.form, resolved),
                ValueTag::Subaccount => matches!(resolved, Some(Ty::Blob)),
                ValueTag::Timestamp { .. } | ValueTag::Duration { .. } => {
                    matches!(resolved, Some(Ty::Prim(p)) if p.is_integer())
                }
            };
            if !fits {
                let want = match v {
                    ValueTag::TokenAmount { .. } => "an unsigned integer (nat, nat8 ... nat64)",
                    ValueTag::Account => "a record { owner : principal; subaccount : opt blob }",
                    ValueTag::Subaccount => "a blob",
                    _ => "an integer",
                };
                self.err(
                    &path.field("value"),
                    format!("a {} tag needs {want}, not {}", v.kind(), ty_word()),
                );
            }
        }
        if t.text.is_some() && !matches!(resolved, Some(Ty::Prim(Prim::Text))) {
            self.err(
                &path.field("text"),
                format!("a text tag needs a text position, not {}", ty_word()),
            );
        }
        if t.range.is_some() {
            let ok = match resolved {
                Some(Ty::Prim(p)) => p.is_integer() || *p == Prim::Text,
                Some(Ty::Blob) | Some(Ty::Vec(_)) => true,
                _ => false,
            };
            if !ok {
                self.err(
                    &path.field("range"),
                    format!(
                        "a range tag needs an integer, text, blob or vec, not {}",
                        ty_word()
                    ),
                );
            }
        }
        if let Some(set) = &t.named {
            if !self.form.names.contains_key(set) {
                self.err(
                    &path.field("named"),
                    format!("no name set '{set}' in the form's names"),
                );
            }
        }
    }

    fn name_set(&mut self, set: &str, ns: &NameSet) {
        let path = NAMES.key(set);
        let Some(method) = self.form.methods.get(&ns.method) else {
            self.err(
                &path.field("method"),
                format!("the form has no method '{}'", ns.method),
            );
            return;
        };
        if !method.mode.is_query() || !method.args.is_empty() {
            self.err(
                &path.field("method"),
                format!(
                    "'{}' must be a query without arguments to list names",
                    ns.method
                ),
            );
            return;
        }
        let Some(node) = walk(self.form, &method.results, &ns.list) else {
            self.err(
                &path.field("list"),
                format!(
                    "'{}' names no place in the reply of '{}'",
                    ns.list, ns.method
                ),
            );
            return;
        };
        let elem = match resolve(self.form, node) {
            Some(Ty::Vec(e)) => e,
            _ => {
                self.err(&path.field("list"), format!("'{}' is not a vec", ns.list));
                return;
            }
        };
        let Some(Ty::Record(fields)) = resolve(self.form, elem) else {
            self.err(
                &path.field("list"),
                "the list's elements must be records".into(),
            );
            return;
        };
        let field = |n: &str| fields.iter().find(|f| f.label.name() == Some(n));
        match field(&ns.name_field) {
            Some(f) if matches!(resolve(self.form, &f.node), Some(Ty::Prim(Prim::Text))) => {}
            _ => self.err(
                &path.field("name"),
                format!("the elements have no text field '{}'", ns.name_field),
            ),
        }
        if field(&ns.value_field).is_none() {
            self.err(
                &path.field("value"),
                format!("the elements have no field '{}'", ns.value_field),
            );
        }
    }
}

/// The type a node stands for, following named types (None for a dangling or cyclic reference).
pub fn resolve<'a>(form: &'a Form, mut node: &'a Node) -> Option<&'a Ty> {
    for _ in 0..=form.types.len() {
        match &node.ty {
            Ty::Ref(name) => node = form.types.get(name)?,
            ty => return Some(ty),
        }
    }
    None
}

/// The node a relpath names in an argument or result list; `opt` is passed through.
pub fn walk<'a>(form: &'a Form, list: &'a [Node], path: &RelPath) -> Option<&'a Node> {
    let mut node = list.get(path.index)?;
    for label in &path.labels {
        node = step(form, node, label)?;
    }
    Some(node)
}

/// One label down from a node: a record field or variant case, through refs and opts.
pub fn step<'a>(form: &'a Form, node: &'a Node, label: &str) -> Option<&'a Node> {
    let mut ty = resolve(form, node)?;
    let mut guard = 0;
    while let Ty::Opt(inner) = ty {
        ty = resolve(form, inner)?;
        guard += 1;
        if guard > 64 {
            return None;
        }
    }
    match ty {
        Ty::Record(fs) | Ty::Variant(fs) => fs
            .iter()
            .find(|f| match &f.label {
                Label::Named(n) => n == label,
                Label::Id(i) => label.parse::<u32>().ok() == Some(*i),
            })
            .map(|f| &f.node),
        _ => None,
    }
}

pub fn is_account(form: &Form, ty: Option<&Ty>) -> bool {
    let Some(Ty::Record(fields)) = ty else {
        return false;
    };
    if fields.len() != 2 {
        return false;
    }
    let owner = fields.iter().find(|f| f.label.name() == Some("owner"));
    let sub = fields.iter().find(|f| f.label.name() == Some("subaccount"));
    let owner_ok = matches!(
        owner.and_then(|f| resolve(form, &f.node)),
        Some(Ty::Prim(Prim::Principal))
    );
    let sub_ok = match sub.and_then(|f| resolve(form, &f.node)) {
        Some(Ty::Opt(inner)) => matches!(resolve(form, inner), Some(Ty::Blob)),
        _ => false,
    };
    owner_ok && sub_ok
}

pub fn describe_ty(ty: Option<&Ty>) -> String {
    match ty {
        None => "an unresolved type".into(),
        Some(Ty::Prim(p)) => p.as_str().into(),
        Some(Ty::Blob) => "blob".into(),
        Some(Ty::Opt(_)) => "opt".into(),
        Some(Ty::Vec(_)) => "vec".into(),
        Some(Ty::Record(_)) => "record".into(),
        Some(Ty::Variant(_)) => "variant".into(),
        Some(Ty::Ref(n)) => n.clone(),
        Some(Ty::Func(_)) => "func".into(),
        Some(Ty::Service(_)) => "service".into(),
    }
}
