//! The form's top level: its header, types, name sets and methods, with their effects,
//! idempotency and outcomes.

use super::{
    kind, short, At, Parser, CONSTRUCTORS, FORMAT, FORMAT_VERSION, METHODS, NAMES, ROOT, TYPES,
};
use crate::form::limits::*;
use crate::form::model::*;
use serde_json::Value;
use std::collections::BTreeMap;

impl Parser {
    pub(super) fn form(&mut self, v: &Value) -> Option<Form> {
        let m = self.object(v, &ROOT)?;
        match m.get("format") {
            Some(Value::String(s)) if s == FORMAT => {}
            Some(other) => self.err(
                &ROOT.field("format"),
                format!("expected \"{FORMAT}\", found {}", short(other)),
            ),
            None => self.err(
                &ROOT.field("format"),
                format!("missing; expected \"{FORMAT}\""),
            ),
        }
        match m.get("format_version") {
            Some(Value::Number(n)) if n.as_u64() == Some(FORMAT_VERSION) => {}
            Some(other) => self.err(
                &ROOT.field("format_version"),
                format!("expected {FORMAT_VERSION}, found {}", short(other)),
            ),
            None => self.err(&ROOT.field("format_version"), "missing; expected 0"),
        }
        if let Some(chain) = m.get("chain") {
            if chain != &Value::String("icp".into()) {
                self.err(
                    &ROOT.field("chain"),
                    format!(
                        "chain {} is not supported: only Internet Computer canisters (\"icp\") have tools here",
                        short(chain)
                    ),
                );
            }
        }
        let name = m
            .get("name")
            .and_then(|v| self.name(v, &ROOT.field("name")));

        let mut types = BTreeMap::new();
        if let Some(tv) = m.get("types") {
            if let Some(tm) = self.object(tv, &TYPES) {
                if tm.len() > MAX_TYPES {
                    self.err(
                        &TYPES,
                        format!("{} types, over the limit of {MAX_TYPES}", tm.len()),
                    );
                } else {
                    for (k, v) in tm {
                        let path = TYPES.key(k);
                        if Prim::parse(k).is_some() || CONSTRUCTORS.contains(&k.as_str()) {
                            self.err(&path, format!("'{k}' is a Candid type; pick another name"));
                            continue;
                        }
                        if let Some(n) = self.node(v, &path, 1) {
                            types.insert(k.clone(), n);
                        }
                    }
                }
            }
        }

        let mut names = BTreeMap::new();
        if let Some(nv) = m.get("names") {
            if let Some(nm) = self.object(nv, &NAMES) {
                if nm.len() > MAX_NAME_SETS {
                    self.err(
                        &NAMES,
                        format!("{} name sets, over the limit of {MAX_NAME_SETS}", nm.len()),
                    );
                } else {
                    for (k, v) in nm {
                        let path = NAMES.key(k);
                        if let Some(set) = self.name_set(v, &path) {
                            names.insert(k.clone(), set);
                        }
                    }
                }
            }
        }

        let mut methods = BTreeMap::new();
        match m.get("methods") {
            None => self.err(&METHODS, "missing"),
            Some(mv) => {
                if let Some(mm) = self.object(mv, &METHODS) {
                    if mm.len() > MAX_METHODS {
                        self.err(
                            &METHODS,
                            format!("{} methods, over the limit of {MAX_METHODS}", mm.len()),
                        );
                    } else {
                        for (k, v) in mm {
                            let path = METHODS.key(k);
                            if k.is_empty() || k.chars().count() > MAX_NAME_CHARS {
                                self.err(
                                    &path,
                                    format!("a method name has 1 to {MAX_NAME_CHARS} characters"),
                                );
                                continue;
                            }
                            if let Some(method) = self.method(v, &path) {
                                methods.insert(k.clone(), method);
                            }
                        }
                    }
                }
            }
        }
        if self.nodes > MAX_NODES {
            self.err(
                &ROOT,
                format!("{} type nodes, over the limit of {MAX_NODES}", self.nodes),
            );
        }
        Some(Form {
            name,
            types,
            names,
            methods,
        })
    }

    pub(super) fn name_set(&mut self, v: &Value, path: &At<'_>) -> Option<NameSet> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["method", "list", "name", "value"]);
        let field = |p: &mut Parser, key: &str| match m.get(key) {
            Some(v) => p.name(v, &path.key(key)),
            None => {
                p.err(&path.key(key), "missing");
                None
            }
        };
        let method = field(self, "method");
        let list = field(self, "list");
        let name_field = field(self, "name");
        let value_field = field(self, "value");
        let list = list.and_then(|l| match RelPath::parse(&l) {
            Ok(r) => Some(r),
            Err(e) => {
                self.err(&path.field("list"), e);
                None
            }
        });
        Some(NameSet {
            method: method?,
            list: list?,
            name_field: name_field?,
            value_field: value_field?,
        })
    }

    pub(super) fn method(&mut self, v: &Value, path: &At<'_>) -> Option<Method> {
        let m = self.object(v, path)?;
        self.known_keys(
            m,
            path,
            &[
                "mode",
                "args",
                "results",
                "intent",
                "describe",
                "effect",
                "idempotency",
                "outcome",
            ],
        );
        let mode = match m.get("mode") {
            Some(Value::String(s)) => match s.as_str() {
                "query" => Some(Mode::Query),
                "composite_query" => Some(Mode::CompositeQuery),
                "update" => Some(Mode::Update),
                _ => {
                    self.err(
                        &path.field("mode"),
                        format!("'{s}' is not a mode (query, composite_query, update)"),
                    );
                    None
                }
            },
            Some(other) => {
                self.err(
                    &path.field("mode"),
                    format!("expected a string, found {}", kind(other)),
                );
                None
            }
            None => {
                self.err(&path.field("mode"), "missing");
                None
            }
        };
        let args = self.node_list(m.get("args"), &path.field("args"));
        let results = self.node_list(m.get("results"), &path.field("results"));
        let intent = m
            .get("intent")
            .and_then(|v| self.text(v, &path.field("intent"), MAX_TEXT_CHARS));
        let describe = m
            .get("describe")
            .and_then(|v| self.text(v, &path.field("describe"), MAX_TEXT_CHARS));
        let effect = m
            .get("effect")
            .and_then(|v| self.effect(v, &path.field("effect")));
        let idempotency = m
            .get("idempotency")
            .and_then(|v| self.idempotency(v, &path.field("idempotency")));
        let outcome = m
            .get("outcome")
            .and_then(|v| self.outcome(v, &path.field("outcome")));
        Some(Method {
            mode: mode?,
            args: args?,
            results: results?,
            intent,
            describe,
            effect,
            idempotency,
            outcome,
        })
    }

    pub(super) fn effect(&mut self, v: &Value, path: &At<'_>) -> Option<Effect> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["kind", "irreversible", "replicated"]);
        let kind = match m.get("kind") {
            Some(v) => self.name(v, &path.field("kind")),
            None => {
                self.err(&path.field("kind"), "missing");
                None
            }
        };
        let irreversible = match m.get("irreversible") {
            Some(v) => self.boolean(v, &path.field("irreversible")),
            None => Some(false),
        };
        let replicated = match m.get("replicated") {
            Some(v) => self.boolean(v, &path.field("replicated")),
            None => Some(false),
        };
        Some(Effect {
            kind: kind?,
            irreversible: irreversible?,
            replicated: replicated?,
        })
    }

    pub(super) fn relpath(&mut self, v: &Value, path: &At<'_>) -> Option<RelPath> {
        let s = self.text(v, path, 256)?;
        match RelPath::parse(&s) {
            Ok(r) => Some(r),
            Err(e) => {
                self.err(path, e);
                None
            }
        }
    }

    pub(super) fn idempotency(&mut self, v: &Value, path: &At<'_>) -> Option<Idempotency> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["stamp", "memo"]);
        let stamp = match m.get("stamp") {
            Some(v) => self.relpath(v, &path.field("stamp")),
            None => {
                self.err(&path.field("stamp"), "missing");
                None
            }
        };
        let memo = match m.get("memo") {
            Some(v) => Some(self.relpath(v, &path.field("memo"))?),
            None => None,
        };
        Some(Idempotency {
            stamp: stamp?,
            memo,
        })
    }

    pub(super) fn outcome(&mut self, v: &Value, path: &At<'_>) -> Option<OutcomeTag> {
        let m = self.object(v, path)?;
        if m.len() > MAX_OUTCOME_KEYS {
            self.err(
                path,
                format!("{} keys, over the limit of {MAX_OUTCOME_KEYS}", m.len()),
            );
            return None;
        }
        let mut keys: Vec<(RelPath, OutcomeClass)> = Vec::new();
        let mut default = None;
        let mut ok = true;
        for (k, v) in m {
            let kp = path.key(k);
            let class = match v {
                Value::String(s) => match OutcomeClass::parse(s) {
                    Some(c) => c,
                    None => {
                        self.err(
                            &kp,
                            format!(
                                "'{s}' is not an outcome class (success, already_done, retry_same, retry_new, fix_input, fail)"
                            ),
                        );
                        ok = false;
                        continue;
                    }
                },
                other => {
                    self.err(&kp, format!("expected a class name, found {}", kind(other)));
                    ok = false;
                    continue;
                }
            };
            if k == "default" {
                default = Some(class);
                continue;
            }
            match RelPath::parse(k) {
                Ok(r) => {
                    if keys.iter().any(|(p, _)| p == &r) {
                        self.err(
                            &kp,
                            format!("key '{k}' names the same place as another key"),
                        );
                        ok = false;
                    } else {
                        keys.push((r, class));
                    }
                }
                Err(e) => {
                    self.err(&kp, e);
                    ok = false;
                }
            }
        }
        ok.then_some(OutcomeTag { keys, default })
    }
}
