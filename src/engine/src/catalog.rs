//! The catalog: tool plans and MCP definitions built from the stored forms and targets. It is
//! heap only, rebuilt when the catalog revision moves (after registration changes, refs refreshes
//! and upgrades), so that listing tools costs a lookup, not a parse.

use crate::model::Target;
use crate::state::State;
use candid::Principal;
use ic_stable_structures::Memory;
use serde_json::Value;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use tool_host_core::candid_types::MethodTypes;
use tool_host_core::form::parse_form;
use tool_host_core::plan::{build_tool_plans, FormRef, ToolPlan, ToolPlans};
use tool_host_core::read::Canister;
use tool_host_core::schema::tool_definitions;

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
    /// `list_tools`'s answer, serialized once.
    pub definitions_json: String,
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
    let plans = build_tool_plans(&forms);
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
    let definitions_json = serde_json::to_string(&tool_definitions(&plans, &canisters))
        .unwrap_or_else(|_| "[]".into());
    Catalog {
        revision,
        types,
        forms,
        plans: Arc::new(plans),
        canisters: Rc::new(canisters),
        icrc3,
        definitions_json,
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
