//! The catalog: tool plans built from the stored forms and targets, and the bus over them (the
//! form tools' declarations, `commit` and the enabled builtins'). It is heap only, rebuilt when
//! the catalog revision moves (after registration changes, refs refreshes and upgrades); the
//! bus also when the builtin settings change. Listing tools costs a lookup, not a parse.

use crate::model::Target;
use crate::state::State;
use candid::Principal;
use ic_stable_structures::Memory;
use serde_json::Value;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use tool_host_core::builtin::Builtin;
use tool_host_core::bus::{render, ToolDecl, ToolFormat};
use tool_host_core::candid_types::MethodTypes;
use tool_host_core::form::parse_form;
use tool_host_core::plan::{build_tool_plans, FormRef, ToolPlan, ToolPlans};
use tool_host_core::read::Canister;

pub struct Catalog {
    pub revision: u64,
    /// Each tool's method types, built once (encoding and decoding reuse them).
    pub types: BTreeMap<String, Rc<MethodTypes>>,
    pub forms: Vec<FormRef>,
    pub plans: Arc<ToolPlans>,
    /// Shared, so that a call holds them across its awaits without a copy.
    pub canisters: Rc<Vec<Canister>>,
    /// The targets that keep an ICRC-3 log (a send journals their log length first).
    pub icrc3: std::collections::BTreeSet<Principal>,
    /// Targets registered for a single owner, and that owner.
    pub single_owner: BTreeMap<Principal, Principal>,
    /// Prepare tools with no position bound to the owner (and no custody rule of the engine):
    /// offered only on single-owner targets. Tool → (its form, why not elsewhere).
    pub unbound: BTreeMap<String, (String, String)>,
    /// The bus over these plans and the builtin settings, built on first use.
    pub bus: Option<Rc<Bus>>,
}

/// Every tool in one place, declared once: what `list_tools`, selection and turns read.
pub struct Bus {
    /// Form tools, `commit` and the enabled builtins, by name.
    pub decls: Vec<ToolDecl>,
    /// The pins in force that name a tool here (the admin's and the default ones).
    pub pinned: std::collections::BTreeSet<String>,
    /// The builtins an admin enabled.
    pub builtins: std::collections::BTreeSet<Builtin>,
    /// `current_time`'s zone when the caller names none.
    pub zone: String,
    /// Prepare tools (a selection that offers one offers `commit` too).
    pub prepare_tools: std::collections::BTreeSet<String>,
    /// `list_tools`'s MCP answer, rendered once.
    pub mcp: String,
}

impl Bus {
    pub fn decl(&self, name: &str) -> Option<&ToolDecl> {
        self.decls
            .binary_search_by(|d| d.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.decls[i])
    }

    pub fn names(&self) -> Vec<&str> {
        self.decls.iter().map(|d| d.name.as_str()).collect()
    }

    /// An enabled builtin of this name (a disabled one is no tool at all).
    pub fn builtin(&self, name: &str) -> Option<Builtin> {
        Builtin::from_name(name).filter(|b| self.builtins.contains(b))
    }

    pub fn render(&self, decls: &[&ToolDecl], format: ToolFormat) -> String {
        render(decls, format)
    }
}

/// The pins a configuration puts in force: the admin's, and each enabled builtin pinned by
/// default that the admin did not unpin.
pub fn pins_of(c: &crate::model::BusConfig) -> std::collections::BTreeSet<String> {
    let mut pins: std::collections::BTreeSet<String> = c.pinned.iter().cloned().collect();
    for name in &c.enabled {
        if let Some(b) = Builtin::from_name(name) {
            if b.pinned_by_default() && !c.unpinned.contains(&b.name().to_string()) {
                pins.insert(b.name().to_string());
            }
        }
    }
    pins
}

fn build_bus(cat: &Catalog, c: &crate::model::BusConfig) -> Bus {
    let mut decls = tool_host_core::bus::host_decls(&cat.plans, &cat.canisters);
    let zone = c
        .default_time_zone
        .clone()
        .unwrap_or_else(|| "UTC".to_string());
    let builtins: std::collections::BTreeSet<Builtin> = c
        .enabled
        .iter()
        .filter_map(|n| Builtin::from_name(n))
        .collect();
    decls.extend(builtins.iter().map(|b| b.decl(&zone)));
    decls.sort_by(|a, b| a.name.cmp(&b.name));
    decls.dedup_by(|a, b| a.name == b.name);
    let pinned = pins_of(c)
        .into_iter()
        .filter(|n| decls.iter().any(|d| &d.name == n))
        .collect();
    let prepare_tools = cat
        .plans
        .plans
        .values()
        .filter(|p| p.kind == tool_host_core::plan::ToolKind::Prepare)
        .map(|p| p.name.clone())
        .collect();
    let refs: Vec<&ToolDecl> = decls.iter().collect();
    let mcp = render(&refs, ToolFormat::Mcp);
    Bus {
        decls,
        pinned,
        builtins,
        zone,
        prepare_tools,
        mcp,
    }
}

impl Catalog {
    /// A tool's plan and method types, cheap to hold across an await.
    pub fn tool(&self, name: &str) -> Option<ToolRef> {
        self.plans.plans.get(name)?;
        Some(ToolRef {
            plans: self.plans.clone(),
            name: name.to_string(),
            types: self.types.get(name)?.clone(),
        })
    }

    pub fn canister(&self, id: &Principal) -> Option<&Canister> {
        self.canisters.iter().find(|c| &c.id == id)
    }
}

/// Whether a plan fills some position from the owner (`auto: owner:*`), at any depth: then the
/// target can tell whose funds or data a call is about.
pub fn binds_owner(plan: &ToolPlan) -> bool {
    use tool_host_core::form::Auto;
    use tool_host_core::plan::{ArgPlan, Fill, Reader, Slot};
    fn slot(s: &Slot, plan: &ToolPlan) -> bool {
        match &s.fill {
            Fill::Auto(Auto::From(src)) => src.starts_with("owner:"),
            Fill::Param(i) => plan.params.get(*i).is_some_and(|p| reader(&p.reader, plan)),
            _ => false,
        }
    }
    fn reader(r: &Reader, plan: &ToolPlan) -> bool {
        match r {
            Reader::Host(s) => slot(s, plan),
            Reader::Named { inner, .. } | Reader::Opt(inner) => reader(inner, plan),
            Reader::Vec { elem, .. } => reader(elem, plan),
            Reader::Record(fs) | Reader::Variant(fs) => fs.iter().any(|(_, r)| reader(r, plan)),
            _ => false,
        }
    }
    fn arg(a: &ArgPlan, plan: &ToolPlan) -> bool {
        match a {
            ArgPlan::Fields(slots) => slots.iter().any(|s| slot(s, plan)),
            ArgPlan::Whole(s) => slot(s, plan),
            ArgPlan::Case { payload, .. } => arg(payload, plan),
        }
    }
    plan.args.iter().any(|a| arg(a, plan))
}

/// A tool of the catalog: shares the plans rather than copying one.
#[derive(Clone)]
pub struct ToolRef {
    plans: Arc<ToolPlans>,
    name: String,
    pub types: Rc<MethodTypes>,
}

impl ToolRef {
    pub fn plan(&self) -> &ToolPlan {
        &self.plans.plans[&self.name]
    }
}

pub fn target_canister(id: Principal, t: &Target) -> Canister {
    let refs: BTreeMap<String, Value> = match serde_json::from_str::<Value>(&t.refs_json) {
        Ok(Value::Object(m)) => m.into_iter().collect(),
        _ => BTreeMap::new(),
    };
    Canister {
        id,
        label: t.label.clone(),
        refs,
        forms: Some(t.forms.clone()),
    }
}

/// Builds the catalog from stored state. Forms were validated when registered.
pub fn build<M: Memory>(state: &State<M>) -> Catalog {
    let revision = state.config.get().catalog_revision;
    let mut forms = vec![];
    for entry in state.forms.iter() {
        let (id, stored) = entry.into_pair();
        if let Ok(form) = parse_form(stored.json.as_bytes()) {
            forms.push(FormRef {
                id,
                form: Arc::new(form),
            });
        }
    }
    let mut icrc3 = std::collections::BTreeSet::new();
    let canisters: Vec<Canister> = state
        .targets
        .iter()
        .map(|e| {
            let (id, t) = e.into_pair();
            if t.icrc3 {
                icrc3.insert(id);
            }
            target_canister(id, &t)
        })
        .collect();
    let mut plans = build_tool_plans(&forms);
    let single_owner: BTreeMap<Principal, Principal> = state
        .targets
        .iter()
        .filter_map(|e| {
            let (id, t) = e.into_pair();
            t.owner.map(|o| (id, o))
        })
        .collect();
    // A prepare tool that binds no position to the owner, on a target shared by several
    // owners, would let any of them act with the tool host's authority over the others' funds:
    // it is offered only where a target of its form is registered for a single owner.
    let mut unbound = BTreeMap::new();
    let unbound_tools: Vec<(String, String)> = plans
        .plans
        .values()
        .filter(|p| p.kind == tool_host_core::plan::ToolKind::Prepare)
        .filter(|p| !crate::custody::covers(&p.method) && !binds_owner(p))
        .map(|p| (p.name.clone(), p.form.id.clone()))
        .collect();
    for (name, form) in unbound_tools {
        let reason = "no position binds the owner (auto: owner:*), so the target could not tell the tool host's owners apart; offered only on a canister registered for a single owner".to_string();
        let on_single = canisters
            .iter()
            .any(|c| c.applies_to(&form) && single_owner.contains_key(&c.id));
        if !on_single {
            if let Some(p) = plans.plans.remove(&name) {
                plans.skipped.push(tool_host_core::plan::Skip {
                    method: p.method.clone(),
                    reason: reason.clone(),
                });
            }
        }
        unbound.insert(name, (form, reason));
    }
    let types = plans
        .plans
        .iter()
        .map(|(name, p)| {
            (
                name.clone(),
                Rc::new(tool_host_core::codec::method_types(p)),
            )
        })
        .collect();
    Catalog {
        revision,
        types,
        forms,
        plans: Arc::new(plans),
        canisters: Rc::new(canisters),
        icrc3,
        single_owner,
        unbound,
        bus: None,
    }
}

/// The current catalog, built if stale. In a query the rebuilt catalog is not kept (queries
/// never commit), which is why updates and `post_upgrade` build it.
pub fn current<M: Memory>(state: &mut State<M>) -> &Catalog {
    let revision = state.config.get().catalog_revision;
    if state
        .catalog
        .as_ref()
        .is_none_or(|c| c.revision != revision)
    {
        state.catalog = Some(build(state));
    }
    state.catalog.as_ref().expect("just built")
}

/// The bus over the current catalog and builtin settings, built if stale. As with
/// [`current`], a query's build is not kept: updates and `post_upgrade` build it.
pub fn bus<M: Memory>(state: &mut State<M>) -> Rc<Bus> {
    current(state);
    let settings = &state.config.get().bus;
    let cat = state.catalog.as_mut().expect("just built");
    if cat.bus.is_none() {
        let built = build_bus(cat, settings);
        cat.bus = Some(Rc::new(built));
    }
    cat.bus.clone().expect("just built")
}

/// The builtin settings changed: the bus is built again on next use (the plans stay).
pub fn settings_changed<M: Memory>(state: &mut State<M>) {
    if let Some(c) = state.catalog.as_mut() {
        c.bus = None;
    }
}
