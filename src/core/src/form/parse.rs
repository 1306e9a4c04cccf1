//! Reading a resolved form from JSON: every problem at once, each with its JSON path.

use super::limits::*;
use super::model::*;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One reason a form is refused, at a JSON path (`$.methods.icrc1_transfer.args[0]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: String,
    pub reason: String,
}

pub const FORMAT: &str = "candid-profile-resolved";
pub const FORMAT_VERSION: u64 = 0;

/// Parses and validates a form from raw bytes; never panics.
pub fn parse_form(bytes: &[u8]) -> Result<Form, Vec<Problem>> {
    if bytes.len() > MAX_FORM_BYTES {
        return Err(vec![problem(
            "$",
            format!(
                "the form is {} bytes, over the limit of {MAX_FORM_BYTES}",
                bytes.len()
            ),
        )]);
    }
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| vec![problem("$", format!("not JSON: {e}"))])?;
    form_from_json(&value)
}

/// Validates a form already parsed as JSON.
pub fn form_from_json(value: &Value) -> Result<Form, Vec<Problem>> {
    let mut p = Parser::default();
    let form = p.form(value);
    if let Some(form) = &form {
        // Checked even when parts failed to parse, so that every problem is listed at once.
        let parsed_whole = p.problems.is_empty();
        super::check::check_form(form, &mut p.problems, parsed_whole);
    }
    match form {
        Some(form) if p.problems.is_empty() => Ok(form),
        _ => Err(p.problems),
    }
}

fn problem(path: &str, reason: impl Into<String>) -> Problem {
    Problem {
        path: path.to_string(),
        reason: reason.into(),
    }
}

/// `$.a.b` for plain keys, `$.a["odd key"]` otherwise.
pub(crate) fn key_path(base: &str, key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("{base}.{key}")
    } else {
        format!("{base}[{}]", Value::String(key.to_string()))
    }
}

#[derive(Default)]
struct Parser {
    problems: Vec<Problem>,
    nodes: usize,
}

impl Parser {
    fn err(&mut self, path: &str, reason: impl Into<String>) {
        self.problems.push(problem(path, reason));
    }

    fn object<'a>(&mut self, v: &'a Value, path: &str) -> Option<&'a Map<String, Value>> {
        match v {
            Value::Object(m) => Some(m),
            _ => {
                self.err(path, format!("expected an object, found {}", kind(v)));
                None
            }
        }
    }

    fn known_keys(&mut self, m: &Map<String, Value>, path: &str, known: &[&str]) {
        for k in m.keys() {
            if !known.contains(&k.as_str()) {
                self.err(
                    &key_path(path, k),
                    format!("unknown key '{k}' (expected one of: {})", known.join(", ")),
                );
            }
        }
    }

    fn text(&mut self, v: &Value, path: &str, max_chars: usize) -> Option<String> {
        match v {
            Value::String(s) => {
                let n = s.chars().count();
                if n > max_chars {
                    self.err(
                        path,
                        format!("{n} characters, over the limit of {max_chars}"),
                    );
                    None
                } else {
                    Some(s.clone())
                }
            }
            _ => {
                self.err(path, format!("expected a string, found {}", kind(v)));
                None
            }
        }
    }

    fn name(&mut self, v: &Value, path: &str) -> Option<String> {
        let s = self.text(v, path, MAX_NAME_CHARS)?;
        if s.is_empty() {
            self.err(path, "a name may not be empty");
            return None;
        }
        Some(s)
    }

    fn boolean(&mut self, v: &Value, path: &str) -> Option<bool> {
        match v {
            Value::Bool(b) => Some(*b),
            _ => {
                self.err(path, format!("expected true or false, found {}", kind(v)));
                None
            }
        }
    }

    fn form(&mut self, v: &Value) -> Option<Form> {
        let m = self.object(v, "$")?;
        match m.get("format") {
            Some(Value::String(s)) if s == FORMAT => {}
            Some(other) => self.err(
                "$.format",
                format!("expected \"{FORMAT}\", found {}", short(other)),
            ),
            None => self.err("$.format", format!("missing; expected \"{FORMAT}\"")),
        }
        match m.get("format_version") {
            Some(Value::Number(n)) if n.as_u64() == Some(FORMAT_VERSION) => {}
            Some(other) => self.err(
                "$.format_version",
                format!("expected {FORMAT_VERSION}, found {}", short(other)),
            ),
            None => self.err("$.format_version", "missing; expected 0"),
        }
        if let Some(chain) = m.get("chain") {
            if chain != &Value::String("icp".into()) {
                self.err(
                    "$.chain",
                    format!(
                        "chain {} is not supported: only Internet Computer canisters (\"icp\") have tools here",
                        short(chain)
                    ),
                );
            }
        }
        let name = m.get("name").and_then(|v| self.name(v, "$.name"));

        let mut types = BTreeMap::new();
        if let Some(tv) = m.get("types") {
            if let Some(tm) = self.object(tv, "$.types") {
                if tm.len() > MAX_TYPES {
                    self.err(
                        "$.types",
                        format!("{} types, over the limit of {MAX_TYPES}", tm.len()),
                    );
                } else {
                    for (k, v) in tm {
                        let path = key_path("$.types", k);
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
            if let Some(nm) = self.object(nv, "$.names") {
                if nm.len() > MAX_NAME_SETS {
                    self.err(
                        "$.names",
                        format!("{} name sets, over the limit of {MAX_NAME_SETS}", nm.len()),
                    );
                } else {
                    for (k, v) in nm {
                        let path = key_path("$.names", k);
                        if let Some(set) = self.name_set(v, &path) {
                            names.insert(k.clone(), set);
                        }
                    }
                }
            }
        }

        let mut methods = BTreeMap::new();
        match m.get("methods") {
            None => self.err("$.methods", "missing"),
            Some(mv) => {
                if let Some(mm) = self.object(mv, "$.methods") {
                    if mm.len() > MAX_METHODS {
                        self.err(
                            "$.methods",
                            format!("{} methods, over the limit of {MAX_METHODS}", mm.len()),
                        );
                    } else {
                        for (k, v) in mm {
                            let path = key_path("$.methods", k);
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
                "$",
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

    fn name_set(&mut self, v: &Value, path: &str) -> Option<NameSet> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["method", "list", "name", "value"]);
        let field = |p: &mut Parser, key: &str| match m.get(key) {
            Some(v) => p.name(v, &key_path(path, key)),
            None => {
                p.err(&key_path(path, key), "missing");
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
                self.err(&key_path(path, "list"), e);
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

    fn method(&mut self, v: &Value, path: &str) -> Option<Method> {
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
                        &format!("{path}.mode"),
                        format!("'{s}' is not a mode (query, composite_query, update)"),
                    );
                    None
                }
            },
            Some(other) => {
                self.err(
                    &format!("{path}.mode"),
                    format!("expected a string, found {}", kind(other)),
                );
                None
            }
            None => {
                self.err(&format!("{path}.mode"), "missing");
                None
            }
        };
        let args = self.node_list(m.get("args"), &format!("{path}.args"));
        let results = self.node_list(m.get("results"), &format!("{path}.results"));
        let intent = m
            .get("intent")
            .and_then(|v| self.text(v, &format!("{path}.intent"), MAX_TEXT_CHARS));
        let describe = m
            .get("describe")
            .and_then(|v| self.text(v, &format!("{path}.describe"), MAX_TEXT_CHARS));
        let effect = m
            .get("effect")
            .and_then(|v| self.effect(v, &format!("{path}.effect")));
        let idempotency = m
            .get("idempotency")
            .and_then(|v| self.idempotency(v, &format!("{path}.idempotency")));
        let outcome = m
            .get("outcome")
            .and_then(|v| self.outcome(v, &format!("{path}.outcome")));
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

    fn node_list(&mut self, v: Option<&Value>, path: &str) -> Option<Vec<Node>> {
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
                    match self.node(item, &format!("{path}[{i}]"), 1) {
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

    fn effect(&mut self, v: &Value, path: &str) -> Option<Effect> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["kind", "irreversible", "replicated"]);
        let kind = match m.get("kind") {
            Some(v) => self.name(v, &format!("{path}.kind")),
            None => {
                self.err(&format!("{path}.kind"), "missing");
                None
            }
        };
        let irreversible = match m.get("irreversible") {
            Some(v) => self.boolean(v, &format!("{path}.irreversible")),
            None => Some(false),
        };
        let replicated = match m.get("replicated") {
            Some(v) => self.boolean(v, &format!("{path}.replicated")),
            None => Some(false),
        };
        Some(Effect {
            kind: kind?,
            irreversible: irreversible?,
            replicated: replicated?,
        })
    }

    fn relpath(&mut self, v: &Value, path: &str) -> Option<RelPath> {
        let s = self.text(v, path, 256)?;
        match RelPath::parse(&s) {
            Ok(r) => Some(r),
            Err(e) => {
                self.err(path, e);
                None
            }
        }
    }

    fn idempotency(&mut self, v: &Value, path: &str) -> Option<Idempotency> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["stamp", "memo"]);
        let stamp = match m.get("stamp") {
            Some(v) => self.relpath(v, &format!("{path}.stamp")),
            None => {
                self.err(&format!("{path}.stamp"), "missing");
                None
            }
        };
        let memo = match m.get("memo") {
            Some(v) => Some(self.relpath(v, &format!("{path}.memo"))?),
            None => None,
        };
        Some(Idempotency {
            stamp: stamp?,
            memo,
        })
    }

    fn outcome(&mut self, v: &Value, path: &str) -> Option<OutcomeTag> {
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
            let kp = key_path(path, k);
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

    fn node(&mut self, v: &Value, path: &str, depth: usize) -> Option<Node> {
        self.nodes += 1;
        if depth > MAX_TYPE_DEPTH {
            self.err(path, format!("types nest deeper than {MAX_TYPE_DEPTH}"));
            return None;
        }
        let m = self.object(v, path)?;
        let ty_name = match m.get("type") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                self.err(
                    &format!("{path}.type"),
                    format!("expected a type name, found {}", kind(other)),
                );
                return None;
            }
            None => {
                self.err(&format!("{path}.type"), "missing");
                return None;
            }
        };
        let mut known: Vec<&str> = TAG_KEYS.to_vec();
        known.extend(["type", "name", "id"]);
        let ty = match ty_name.as_str() {
            "opt" | "vec" => {
                known.push("inner");
                let inner = match m.get("inner") {
                    Some(iv) => self.node(iv, &format!("{path}.inner"), depth + 1)?,
                    None => {
                        self.err(
                            &format!("{path}.inner"),
                            format!("a {ty_name} needs 'inner'"),
                        );
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
                known.push(key);
                let fields = self.fields(m.get(key), &format!("{path}.{key}"), depth, key)?;
                if ty_name == "record" {
                    Ty::Record(fields)
                } else {
                    Ty::Variant(fields)
                }
            }
            "func" => {
                known.extend(["args", "results", "annotation"]);
                Ty::Func(self.func_sig(m, path, depth)?)
            }
            "service" => {
                known.push("methods");
                let mut methods = Vec::new();
                if let Some(mv) = m.get("methods") {
                    let mm = self.object(mv, &format!("{path}.methods"))?;
                    for (k, fv) in mm {
                        let fp = key_path(&format!("{path}.methods"), k);
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
                        self.err(
                            &format!("{path}.type"),
                            "a type name has 1 to 128 characters",
                        );
                        return None;
                    }
                    Ty::Ref(other.to_string())
                }
            },
        };
        self.known_keys(m, path, &known);
        let tags = self.tags(m, path)?;
        Some(Node { ty, tags })
    }

    fn func_sig(&mut self, m: &Map<String, Value>, path: &str, depth: usize) -> Option<FuncSig> {
        let list = |p: &mut Parser, key: &str| -> Option<Vec<Node>> {
            match m.get(key) {
                None => Some(vec![]),
                Some(Value::Array(items)) => {
                    let mut out = vec![];
                    for (i, it) in items.iter().enumerate() {
                        out.push(p.node(it, &format!("{path}.{key}[{i}]"), depth + 1)?);
                    }
                    Some(out)
                }
                Some(other) => {
                    p.err(
                        &format!("{path}.{key}"),
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
                    &format!("{path}.annotation"),
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

    fn fields(
        &mut self,
        v: Option<&Value>,
        path: &str,
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
            let ip = format!("{path}[{i}]");
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
                                self.err(
                                    &format!("{ip}.id"),
                                    "an id is a number from 0 to 4294967295",
                                );
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
                            &format!("{ip}.name"),
                            "a name is a non-empty string of at most 128 characters",
                        );
                        None
                    }
                    (None, Some(_)) => {
                        self.err(
                            &format!("{ip}.id"),
                            "an id is a number from 0 to 4294967295",
                        );
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

    fn tags(&mut self, m: &Map<String, Value>, path: &str) -> Option<Tags> {
        let mut t = Tags::default();
        let mut ok = true;
        if let Some(v) = m.get("value") {
            t.value = self.value_tag(v, &format!("{path}.value"));
            ok &= t.value.is_some();
        }
        if let Some(v) = m.get("describe") {
            t.describe = self.text(v, &format!("{path}.describe"), MAX_TEXT_CHARS);
            ok &= t.describe.is_some();
        }
        if let Some(v) = m.get("intent") {
            t.intent = self.text(v, &format!("{path}.intent"), MAX_TEXT_CHARS);
            ok &= t.intent.is_some();
        }
        if let Some(v) = m.get("effect") {
            t.effect = self.effect(v, &format!("{path}.effect"));
            ok &= t.effect.is_some();
        }
        if let Some(v) = m.get("auto") {
            t.auto = self.auto(v, &format!("{path}.auto"));
            ok &= t.auto.is_some();
        }
        if let Some(v) = m.get("ui") {
            let up = format!("{path}.ui");
            match self.object(v, &up) {
                Some(um) => {
                    self.known_keys(um, &up, &["hidden"]);
                    if let Some(h) = um.get("hidden") {
                        match self.boolean(h, &format!("{up}.hidden")) {
                            Some(b) => t.hidden = b,
                            None => ok = false,
                        }
                    }
                }
                None => ok = false,
            }
        }
        if let Some(v) = m.get("text") {
            t.text = self.text_tag(v, &format!("{path}.text"));
            ok &= t.text.is_some();
        }
        if let Some(v) = m.get("range") {
            t.range = self.range(v, &format!("{path}.range"));
            ok &= t.range.is_some();
        }
        if let Some(v) = m.get("named") {
            t.named = self.name(v, &format!("{path}.named"));
            ok &= t.named.is_some();
        }
        ok.then_some(t)
    }

    fn dyn_u8(&mut self, v: &Value, path: &str) -> Option<Dyn<u8>> {
        match v {
            Value::Number(n) => match n.as_u64().filter(|d| *d <= 38) {
                Some(d) => Some(Dyn::Fixed(d as u8)),
                None => {
                    self.err(path, "decimals is a whole number from 0 to 38");
                    None
                }
            },
            Value::Object(_) => self.dyn_from(v, path).map(Dyn::From),
            other => {
                self.err(
                    path,
                    format!(
                        "expected a number or {{\"from\": ...}}, found {}",
                        kind(other)
                    ),
                );
                None
            }
        }
    }

    fn dyn_text(&mut self, v: &Value, path: &str) -> Option<Dyn<String>> {
        match v {
            Value::String(_) => self.name(v, path).map(Dyn::Fixed),
            Value::Object(_) => self.dyn_from(v, path).map(Dyn::From),
            other => {
                self.err(
                    path,
                    format!(
                        "expected a string or {{\"from\": ...}}, found {}",
                        kind(other)
                    ),
                );
                None
            }
        }
    }

    fn dyn_from(&mut self, v: &Value, path: &str) -> Option<String> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["from"]);
        match m.get("from") {
            Some(f) => {
                let s = self.name(f, &format!("{path}.from"))?;
                match s.strip_prefix("query:") {
                    Some(method) if !method.is_empty() => Some(s),
                    _ => {
                        self.err(
                            &format!("{path}.from"),
                            format!("'{s}' is not a ref; refs are 'query:<method>' (and an auto default may be {})", OWNER_SOURCES.join(", ")),
                        );
                        None
                    }
                }
            }
            None => {
                self.err(&format!("{path}.from"), "missing");
                None
            }
        }
    }

    fn value_tag(&mut self, v: &Value, path: &str) -> Option<ValueTag> {
        let m = self.object(v, path)?;
        let kind_name = match m.get("kind") {
            Some(Value::String(s)) => s.clone(),
            _ => {
                self.err(
                    &format!("{path}.kind"),
                    "missing; one of token_amount, account, subaccount, timestamp, duration",
                );
                return None;
            }
        };
        match kind_name.as_str() {
            "token_amount" => {
                self.known_keys(m, path, &["kind", "decimals", "symbol"]);
                let decimals = match m.get("decimals") {
                    Some(d) => self.dyn_u8(d, &format!("{path}.decimals")),
                    None => {
                        self.err(&format!("{path}.decimals"), "missing");
                        None
                    }
                };
                let symbol = match m.get("symbol") {
                    Some(s) => self.dyn_text(s, &format!("{path}.symbol")),
                    None => {
                        self.err(&format!("{path}.symbol"), "missing");
                        None
                    }
                };
                Some(ValueTag::TokenAmount {
                    decimals: decimals?,
                    symbol: symbol?,
                })
            }
            "account" => {
                self.known_keys(m, path, &["kind"]);
                Some(ValueTag::Account)
            }
            "subaccount" => {
                self.known_keys(m, path, &["kind"]);
                Some(ValueTag::Subaccount)
            }
            "timestamp" | "duration" => {
                self.known_keys(m, path, &["kind", "unit"]);
                let unit = match m.get("unit") {
                    None => TimeUnit::Nanoseconds,
                    Some(Value::String(u)) => match TimeUnit::parse(u) {
                        Some(u) => u,
                        None => {
                            self.err(
                                &format!("{path}.unit"),
                                format!("'{u}' is not a unit (ns, us, ms, s)"),
                            );
                            return None;
                        }
                    },
                    Some(other) => {
                        self.err(
                            &format!("{path}.unit"),
                            format!("expected a string, found {}", kind(other)),
                        );
                        return None;
                    }
                };
                Some(if kind_name == "timestamp" {
                    ValueTag::Timestamp { unit }
                } else {
                    ValueTag::Duration { unit }
                })
            }
            other => {
                self.err(
                    &format!("{path}.kind"),
                    format!("'{other}' is not a value kind (token_amount, account, subaccount, timestamp, duration)"),
                );
                None
            }
        }
    }

    fn auto(&mut self, v: &Value, path: &str) -> Option<Auto> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["from", "value"]);
        match (m.get("from"), m.get("value")) {
            (Some(Value::String(src)), None) if OWNER_SOURCES.contains(&src.as_str()) => {
                Some(Auto::From(src.clone()))
            }
            (Some(_), None) => self.dyn_from(v, path).map(Auto::From),
            (None, Some(Value::String(s))) => Some(Auto::Value(s.clone())),
            (None, Some(other)) => {
                self.err(
                    &format!("{path}.value"),
                    format!("expected the value as input text, found {}", kind(other)),
                );
                None
            }
            _ => {
                self.err(path, "give 'from' (a ref) or 'value' (input text)");
                None
            }
        }
    }

    fn text_tag(&mut self, v: &Value, path: &str) -> Option<TextTag> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["max_len", "pattern", "format"]);
        let mut t = TextTag::default();
        if let Some(ml) = m.get("max_len") {
            match ml.as_u64().and_then(|x| u32::try_from(x).ok()) {
                Some(n) => t.max_len = Some(n),
                None => {
                    self.err(&format!("{path}.max_len"), "a whole number of characters");
                    return None;
                }
            }
        }
        if let Some(p) = m.get("pattern") {
            // Whether the layer will run the pattern is decided per method (a skip, not a refusal).
            t.pattern = Some(self.text(p, &format!("{path}.pattern"), 4096)?);
        }
        if let Some(f) = m.get("format") {
            t.format = match f {
                Value::String(s) if s == "url" => Some(TextFormat::Url),
                Value::String(s) if s == "email" => Some(TextFormat::Email),
                other => {
                    self.err(
                        &format!("{path}.format"),
                        format!("expected \"url\" or \"email\", found {}", short(other)),
                    );
                    return None;
                }
            };
        }
        Some(t)
    }

    fn range(&mut self, v: &Value, path: &str) -> Option<RangeTag> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["min", "max"]);
        let bound = |p: &mut Parser, key: &str| -> Result<Option<i128>, ()> {
            match m.get(key) {
                None => Ok(None),
                Some(Value::Number(n)) => match n.as_i64() {
                    Some(x) => Ok(Some(x as i128)),
                    None => match n.as_u64() {
                        Some(x) => Ok(Some(x as i128)),
                        None => {
                            p.err(
                                &format!("{path}.{key}"),
                                "a whole number (give large ones as a string of digits)",
                            );
                            Err(())
                        }
                    },
                },
                Some(Value::String(s)) => s.parse::<i128>().map(Some).map_err(|_| {
                    p.err(
                        &format!("{path}.{key}"),
                        format!("'{s}' is not a whole number"),
                    );
                }),
                Some(other) => {
                    p.err(
                        &format!("{path}.{key}"),
                        format!("expected a number, found {}", kind(other)),
                    );
                    Err(())
                }
            }
        };
        let min = bound(self, "min").ok()?;
        let max = bound(self, "max").ok()?;
        if let (Some(a), Some(b)) = (min, max) {
            if a > b {
                self.err(path, format!("min {a} is above max {b}"));
                return None;
            }
        }
        Some(RangeTag { min, max })
    }
}

/// Defaults the host fills from the owner of the intent, never from the input.
pub const OWNER_SOURCES: [&str; 3] = ["owner:subaccount", "owner:account", "owner:principal"];

const CONSTRUCTORS: [&str; 7] = ["opt", "vec", "record", "variant", "blob", "func", "service"];
const TAG_KEYS: [&str; 10] = [
    "value", "describe", "auto", "ui", "text", "range", "named", "intent", "effect", "type",
];

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value shown in a message, cut short so a message stays small.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}
