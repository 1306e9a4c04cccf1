//! Form nodes as `candid` types, so values are encoded and replies decoded exactly as the
//! canister's interface says.

use crate::form::{FieldNode, Form, FuncSig, Label, Node, Prim, Ty};
use candid::types::internal::{Field, FuncMode, Function};
use candid::types::{Label as CLabel, Type, TypeEnv, TypeInner};
use std::rc::Rc;

/// A form's named types as a Candid type environment.
pub fn type_env(form: &Form) -> TypeEnv {
    let mut env = TypeEnv::new();
    for (name, node) in &form.types {
        env.0.insert(name.clone(), to_type(node));
    }
    env
}

/// One node as a Candid type; named types stay references into [`type_env`].
pub fn to_type(node: &Node) -> Type {
    let inner = match &node.ty {
        Ty::Prim(p) => prim(*p),
        Ty::Blob => TypeInner::Vec(TypeInner::Nat8.into()),
        Ty::Opt(n) => TypeInner::Opt(to_type(n)),
        Ty::Vec(n) => TypeInner::Vec(to_type(n)),
        Ty::Record(fs) => TypeInner::Record(fields(fs)),
        Ty::Variant(fs) => TypeInner::Variant(fields(fs)),
        Ty::Ref(name) => TypeInner::Var(name.clone()),
        Ty::Func(sig) => TypeInner::Func(function(sig)),
        Ty::Service(methods) => {
            let mut ms: Vec<(String, Type)> = methods
                .iter()
                .map(|(n, s)| (n.clone(), TypeInner::Func(function(s)).into()))
                .collect();
            ms.sort_by(|a, b| a.0.cmp(&b.0));
            TypeInner::Service(ms)
        }
    };
    inner.into()
}

pub fn to_types(nodes: &[Node]) -> Vec<Type> {
    nodes.iter().map(to_type).collect()
}

pub fn candid_label(label: &Label) -> CLabel {
    match label {
        Label::Named(n) => CLabel::Named(n.clone()),
        Label::Id(i) => CLabel::Id(*i),
    }
}

fn fields(fs: &[FieldNode]) -> Vec<Field> {
    let mut out: Vec<Field> = fs
        .iter()
        .map(|f| Field {
            id: Rc::new(candid_label(&f.label)),
            ty: to_type(&f.node),
        })
        .collect();
    out.sort_by_key(|f| f.id.get_id());
    out
}

fn function(sig: &FuncSig) -> Function {
    let modes = match sig.annotation.as_deref() {
        Some("query") => vec![FuncMode::Query],
        Some("composite_query") => vec![FuncMode::CompositeQuery],
        Some("oneway") => vec![FuncMode::Oneway],
        _ => vec![],
    };
    Function {
        modes,
        args: to_types(&sig.args),
        rets: to_types(&sig.results),
    }
}

fn prim(p: Prim) -> TypeInner {
    match p {
        Prim::Null => TypeInner::Null,
        Prim::Bool => TypeInner::Bool,
        Prim::Nat => TypeInner::Nat,
        Prim::Int => TypeInner::Int,
        Prim::Nat8 => TypeInner::Nat8,
        Prim::Nat16 => TypeInner::Nat16,
        Prim::Nat32 => TypeInner::Nat32,
        Prim::Nat64 => TypeInner::Nat64,
        Prim::Int8 => TypeInner::Int8,
        Prim::Int16 => TypeInner::Int16,
        Prim::Int32 => TypeInner::Int32,
        Prim::Int64 => TypeInner::Int64,
        Prim::Float32 => TypeInner::Float32,
        Prim::Float64 => TypeInner::Float64,
        Prim::Text => TypeInner::Text,
        Prim::Reserved => TypeInner::Reserved,
        Prim::Empty => TypeInner::Empty,
        Prim::Principal => TypeInner::Principal,
    }
}

/// A method's argument and result types with the form's named types inlined, except recursive
/// ones (kept as references in a small environment): encoding and decoding with them needs no
/// environment merge, so they are built once per method and reused.
#[derive(Clone, Debug)]
pub struct MethodTypes {
    pub env: TypeEnv,
    pub args: Vec<Type>,
    pub results: Vec<Type>,
    /// The header `candid` writes for the arguments (it depends on the types only), made from
    /// the types on first use, or kept from the first whole encoding when they name others, so
    /// that encodings write only values ([`crate::codec`]).
    pub args_header: std::cell::OnceCell<(Vec<u8>, crate::wire::Table)>,
    /// Whether the header was made from the types already (made or not: tried once).
    pub args_header_tried: std::cell::Cell<bool>,
}

impl MethodTypes {
    pub fn of(form: &Form, method: &crate::form::Method) -> MethodTypes {
        let mut c = Closer {
            form,
            stack: vec![],
            recursive: Default::default(),
            cache: Default::default(),
            defs: Default::default(),
        };
        let args = method.args.iter().map(|n| c.close(n)).collect();
        let results = method.results.iter().map(|n| c.close(n)).collect();
        let mut env = TypeEnv::new();
        for (name, t) in c.defs {
            env.0.insert(name, t);
        }
        MethodTypes {
            env,
            args,
            results,
            args_header: Default::default(),
            args_header_tried: Default::default(),
        }
    }
}

struct Closer<'a> {
    form: &'a Form,
    stack: Vec<String>,
    recursive: std::collections::BTreeSet<String>,
    cache: std::collections::BTreeMap<String, Type>,
    /// Definitions of the recursive named types.
    defs: std::collections::BTreeMap<String, Type>,
}

impl Closer<'_> {
    fn close(&mut self, node: &Node) -> Type {
        let inner = match &node.ty {
            Ty::Ref(name) => return self.named(name),
            Ty::Prim(p) => prim(*p),
            Ty::Blob => TypeInner::Vec(TypeInner::Nat8.into()),
            Ty::Opt(n) => TypeInner::Opt(self.close(n)),
            Ty::Vec(n) => TypeInner::Vec(self.close(n)),
            Ty::Record(fs) => TypeInner::Record(self.fields(fs)),
            Ty::Variant(fs) => TypeInner::Variant(self.fields(fs)),
            Ty::Func(sig) => TypeInner::Func(Function {
                modes: function(sig).modes,
                args: sig.args.iter().map(|n| self.close(n)).collect(),
                rets: sig.results.iter().map(|n| self.close(n)).collect(),
            }),
            Ty::Service(_) => return to_type(node),
        };
        inner.into()
    }

    fn named(&mut self, name: &str) -> Type {
        if self.stack.iter().any(|n| n == name) || self.recursive.contains(name) {
            self.recursive.insert(name.to_string());
            return TypeInner::Var(name.to_string()).into();
        }
        if let Some(t) = self.cache.get(name) {
            return t.clone();
        }
        let Some(def) = self.form.types.get(name) else {
            // Validated forms have no dangling references; keep the name for a clear decode error.
            return TypeInner::Var(name.to_string()).into();
        };
        self.stack.push(name.to_string());
        let t = self.close(def);
        self.stack.pop();
        if self.recursive.contains(name) {
            self.defs.insert(name.to_string(), t);
            return TypeInner::Var(name.to_string()).into();
        }
        self.cache.insert(name.to_string(), t.clone());
        t
    }

    fn fields(&mut self, fs: &[FieldNode]) -> Vec<Field> {
        let mut out: Vec<Field> = fs
            .iter()
            .map(|f| Field {
                id: Rc::new(candid_label(&f.label)),
                ty: self.close(&f.node),
            })
            .collect();
        out.sort_by_key(|f| f.id.get_id());
        out
    }
}
