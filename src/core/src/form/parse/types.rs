//! Type nodes: primitives, references, `opt` / `vec`, records and variants, functions and services.

use super::{kind, short, At, Parser};
use crate::form::limits::*;
use crate::form::model::*;
use serde_json::{Map, Value};

impl Parser {
    pub(super) fn node_list(&mut self, v: Option<&Value>, path: &At<'_>) -> Option<Vec<Node>> {
        match v {
            None => {
                self.err(path, "missing (use [] for none)");
                None
            }
            Some(Value::Array(items)) => {
                if items.len() > MAX_FIELDS {
                    self.err(
                        path,
                        format!("{} entries, over the limit of {MAX_FIELDS}", items.len()),
                    );
                    return None;
                }
                let mut out = Vec::new();
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    match self.node(item, &path.index(i), 1) {
                        Some(n) => out.push(n),
                        None => ok = false,
                    }
                }
                ok.then_some(out)
            }
            Some(other) => {
                self.err(path, format!("expected an array, found {}", kind(other)));
                None
            }
        }
    }

    pub(super) fn node(&mut self, v: &Value, path: &At<'_>, depth: usize) -> Option<Node> {
        self.nodes += 1;
        if depth > MAX_TYPE_DEPTH {
            self.err(path, format!("types nest deeper than {MAX_TYPE_DEPTH}"));
            return None;
        }
        let m = self.object(v, path)?;
        let ty_name = match m.get("type") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                self.err(
                    &path.field("type"),
                    format!("expected a type name, found {}", kind(other)),
                );
                return None;
            }
            None => {
                self.err(&path.field("type"), "missing");
                return None;
            }
        };
        // The keys its constructor reads (besides every node's and the tags).
        let own: &[&str] = match ty_name {
            "opt" | "vec" => &["inner"],
            "record" => &["fields"],
            "variant" => &["cases"],
            "func" => &["args", "results", "annotation"],
            "service" => &["methods"],
            _ => &[],
        };
        let ty = match ty_name {
            "opt" | "vec" => {
                let inner = match m.get("inner") {
                    Some(iv) => self.node(iv, &path.field("inner"), depth + 1)?,
                    None => {
                        self.err(&path.field("inner"), format!("a {ty_name} needs 'inner'"));
                        return None;
                    }
                };
                if ty_name == "opt" {
                    Ty::Opt(Box::new(inner))
                } else {
                    Ty::Vec(Box::new(inner))
                }
            }
            "blob" => Ty::Blob,
            "record" | "variant" => {
                let key = if ty_name == "record" {
                    "fields"
                } else {
                    "cases"
                };
                let fields = self.fields(m.get(key), &path.field(key), depth, key)?;
                if ty_name == "record" {
                    Ty::Record(fields)
                } else {
                    Ty::Variant(fields)
                }
            }
            "func" => Ty::Func(self.func_sig(m, path, depth)?),
            "service" => {
                let mut methods = Vec::new();
                if let Some(mv) = m.get("methods") {
                    let mm = self.object(mv, &path.field("methods"))?;
                    let methods_at = path.field("methods");
                    for (k, fv) in mm {
                        let fp = methods_at.key(k);
                        let fm = self.object(fv, &fp)?;
                        self.known_keys(fm, &fp, &["args", "results", "annotation"]);
                        methods.push((k.clone(), self.func_sig(fm, &fp, depth)?));
                    }
                }
                Ty::Service(methods)
            }
            other => match Prim::parse(other) {
                Some(p) => Ty::Prim(p),
                None => {
                    if other.is_empty() || other.chars().count() > MAX_NAME_CHARS {
                        self.err(&path.field("type"), "a type name has 1 to 128 characters");
                        return None;
                    }
                    Ty::Ref(other.to_string())
                }
            },
        };
        let tags = self.tags(m, path, own)?;
        Some(Node { ty, tags })
    }

    pub(super) fn func_sig(
        &mut self,
        m: &Map<String, Value>,
        path: &At<'_>,
        depth: usize,
    ) -> Option<FuncSig> {
        let list = |p: &mut Parser, key: &str| -> Option<Vec<Node>> {
            match m.get(key) {
                None => Some(vec![]),
                Some(Value::Array(items)) => {
                    let mut out = vec![];
                    for (i, it) in items.iter().enumerate() {
                        out.push(p.node(it, &path.field(key).index(i), depth + 1)?);
                    }
                    Some(out)
                }
                Some(other) => {
                    p.err(
                        &path.field(key),
                        format!("expected an array, found {}", kind(other)),
                    );
                    None
                }
            }
        };
        let args = list(self, "args")?;
        let results = list(self, "results")?;
        let annotation = match m.get("annotation") {
            None => None,
            Some(Value::String(s))
                if ["query", "composite_query", "oneway"].contains(&s.as_str()) =>
            {
                Some(s.clone())
            }
            Some(other) => {
                self.err(
                    &path.field("annotation"),
                    format!(
                        "expected query, composite_query or oneway, found {}",
                        short(other)
                    ),
                );
                return None;
            }
        };
        Some(FuncSig {
            args,
            results,
            annotation,
        })
    }

    pub(super) fn fields(
        &mut self,
        v: Option<&Value>,
        path: &At<'_>,
        depth: usize,
        what: &str,
    ) -> Option<Vec<FieldNode>> {
        let items = match v {
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.err(path, format!("expected an array, found {}", kind(other)));
                return None;
            }
            None => {
                self.err(path, format!("missing (use [] for no {what})"));
                return None;
            }
        };
        if items.len() > MAX_FIELDS {
            self.err(
                path,
                format!("{} {what}, over the limit of {MAX_FIELDS}", items.len()),
            );
            return None;
        }
        let mut out: Vec<FieldNode> = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let ip = path.index(i);
            let label = match item {
                Value::Object(fm) => match (fm.get("name"), fm.get("id")) {
                    (Some(Value::String(s)), None)
                        if !s.is_empty() && s.chars().count() <= MAX_NAME_CHARS =>
                    {
                        Some(Label::Named(s.clone()))
                    }
                    (None, Some(Value::Number(n))) => {
                        match n.as_u64().and_then(|x| u32::try_from(x).ok()) {
                            Some(id) => Some(Label::Id(id)),
                            None => {
                                self.err(&ip.field("id"), "an id is a number from 0 to 4294967295");
                                None
                            }
                        }
                    }
                    (Some(_), Some(_)) => {
                        self.err(&ip, "give 'name' or 'id', not both");
                        None
                    }
                    (None, None) => {
                        self.err(&ip, "a field or case needs 'name' (or a numeric 'id')");
                        None
                    }
                    (Some(_), None) => {
                        self.err(
                            &ip.field("name"),
                            "a name is a non-empty string of at most 128 characters",
                        );
                        None
                    }
                    (None, Some(_)) => {
                        self.err(&ip.field("id"), "an id is a number from 0 to 4294967295");
                        None
                    }
                },
                _ => None,
            };
            let node = self.node(item, &ip, depth + 1);
            match (label, node) {
                (Some(label), Some(node)) => {
                    if let Some(prev) = out.iter().find(|f| f.label.hash() == label.hash()) {
                        self.err(
                            &ip,
                            format!("'{label}' has the same Candid hash as '{}'", prev.label),
                        );
                        ok = false;
                    } else {
                        out.push(FieldNode { label, node });
                    }
                }
                _ => ok = false,
            }
        }
        ok.then_some(out)
    }
}
