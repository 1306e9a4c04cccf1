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
