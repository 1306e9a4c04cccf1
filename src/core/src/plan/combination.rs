//! The rules across forms ([`combine_tool_plans`](super::combine_tool_plans)) kept up to date
//! one form at a time: a registration changes one form, and only the tool names that form's
//! tools have, or that reads of the methods it confirms have, can change. Combining every
//! form's tools again cost registering the 50th form 1.3 M (a sort of every candidate by
//! name, a search per read); this costs what the changed form has.

use super::*;
use crate::builtin::is_reserved_name;
use std::collections::BTreeSet;

/// The offered plans of a set of forms, with what keeps them up to date when one changes.
/// Its plans are [`combine_tool_plans`](super::combine_tool_plans)'s of the same forms, the
/// very `Arc`s (a test holds it over random sequences of changes); its skips are left out
/// (`combine_tool_plans` says them, for one form or all).
#[derive(Clone, Debug, Default)]
pub struct Combination {
    /// Each form's candidates and confirmed methods, as it was set.
    forms: BTreeMap<String, FormTools>,
    /// Every form's candidates, by tool name.
    by_name: BTreeMap<String, Vec<Arc<ToolPlan>>>,
    /// The forms that send each method only after the owner's confirmation.
    confirmed_by: BTreeMap<String, BTreeSet<String>>,
    /// Every form's read candidates, by method: a change of who confirms a method changes them.
    reads_by_method: BTreeMap<String, Vec<Arc<ToolPlan>>>,
    /// The plans offered (shared: a catalog hands them out and a call holds them across an
    /// await; changed in place when no one else holds them).
    plans: Arc<ToolPlans>,
}

impl Combination {
    /// The plans offered now, by name (no skips).
    pub fn plans(&self) -> &Arc<ToolPlans> {
        &self.plans
    }

    /// The ids of the forms set, in order.
    pub fn form_ids(&self) -> impl Iterator<Item = &str> {
        self.forms.keys().map(String::as_str)
    }

    /// The rules over `forms` (by id) at once: what [`Combination::set_form`] of each in turn
    /// comes to, each name decided once (a catalog built from scratch, after an upgrade).
    pub fn of<'a>(forms: impl IntoIterator<Item = (&'a str, &'a FormTools)>) -> Combination {
        let mut c = Combination::default();
        for (id, tools) in forms {
            c.index(id, tools);
        }
        let plans: Vec<(String, Arc<ToolPlan>)> = c
            .by_name
            .keys()
            .filter_map(|n| Some((n.clone(), c.offered(n)?)))
            .collect();
        // In name order: built without a search.
        c.plans = Arc::new(ToolPlans {
            plans: plans.into_iter().collect(),
            skipped: vec![],
        });
        c
    }

    /// Form `id` set to `tools` (added or replaced), or taken away (`None`).
    pub fn set_form(&mut self, id: &str, tools: Option<&FormTools>) {
        // The plans whose names may be decided otherwise now, and the methods whose reads may.
        let mut touched: Vec<Arc<ToolPlan>> = vec![];
        let mut methods: Vec<String> = vec![];
        if let Some(old) = self.forms.remove(id) {
            for p in &old.candidates {
                remove_plan(&mut self.by_name, &p.name, p);
                if p.kind == ToolKind::Read {
                    remove_plan(&mut self.reads_by_method, &p.method, p);
                }
            }
            for m in &old.confirmed {
                if let Some(forms) = self.confirmed_by.get_mut(m) {
                    forms.remove(id);
                    if forms.is_empty() {
                        self.confirmed_by.remove(m);
                    }
                }
            }
            touched.extend(old.candidates);
            methods.extend(old.confirmed);
        }
        if let Some(new) = tools {
            self.index(id, new);
            touched.extend(new.candidates.iter().cloned());
            methods.extend(new.confirmed.iter().cloned());
        }
        for m in &methods {
            if let Some(reads) = self.reads_by_method.get(m) {
                touched.extend(reads.iter().cloned());
            }
        }
        touched.sort_by(|a, b| a.name.cmp(&b.name));
        touched.dedup_by(|a, b| a.name == b.name);
        let decided: Vec<(Arc<ToolPlan>, Option<Arc<ToolPlan>>)> = touched
            .into_iter()
            .map(|t| {
                let p = self.offered(&t.name);
                (t, p)
            })
            .collect();
        let plans = &mut Arc::make_mut(&mut self.plans).plans;
        for (t, p) in decided {
            match p {
                Some(p) => match plans.get_mut(&t.name) {
                    Some(was) => *was = p,
                    None => {
                        plans.insert(t.name.clone(), p);
                    }
                },
                None => {
                    plans.remove(&t.name);
                }
            }
        }
    }

    /// `tools` entered in the indexes as form `id`'s (none of its tools there yet).
    fn index(&mut self, id: &str, tools: &FormTools) {
        // The rule on reads tells forms apart by the id their plans carry.
        debug_assert!(tools.candidates.iter().all(|p| p.form.id == id));
        for p in &tools.candidates {
            push_plan(&mut self.by_name, &p.name, p);
            if p.kind == ToolKind::Read {
                push_plan(&mut self.reads_by_method, &p.method, p);
            }
        }
        for m in &tools.confirmed {
            match self.confirmed_by.get_mut(m) {
                Some(forms) => {
                    forms.insert(id.to_string());
                }
                None => {
                    self.confirmed_by
                        .insert(m.clone(), BTreeSet::from([id.to_string()]));
                }
            }
        }
        self.forms.insert(
            id.to_string(),
            FormTools {
                candidates: tools.candidates.clone(),
                skipped: vec![],
                confirmed: tools.confirmed.clone(),
            },
        );
    }

    /// The plan offered under `name`, by the rules of `combine_tool_plans`: a read of a method
    /// another form confirms is not a candidate; a name that is `commit`, a builtin's, or two
    /// candidates' offers none.
    fn offered(&self, name: &str) -> Option<Arc<ToolPlan>> {
        if name == COMMIT_TOOL || is_reserved_name(name) {
            return None;
        }
        let mut kept = self
            .by_name
            .get(name)?
            .iter()
            .filter(|p| !self.read_confirmed_elsewhere(p));
        let one = kept.next()?;
        kept.next().is_none().then(|| one.clone())
    }

    fn read_confirmed_elsewhere(&self, p: &ToolPlan) -> bool {
        p.kind == ToolKind::Read
            && self
                .confirmed_by
                .get(&p.method)
                .is_some_and(|forms| forms.iter().any(|f| *f != p.form.id))
    }
}

/// `p` put in `key`'s list (the key copied only when it is new).
fn push_plan(map: &mut BTreeMap<String, Vec<Arc<ToolPlan>>>, key: &str, p: &Arc<ToolPlan>) {
    match map.get_mut(key) {
        Some(list) => list.push(p.clone()),
        None => {
            map.insert(key.to_string(), vec![p.clone()]);
        }
    }
}

/// `p` (by address) taken out of `key`'s list, and the key when its list is empty.
fn remove_plan(map: &mut BTreeMap<String, Vec<Arc<ToolPlan>>>, key: &str, p: &Arc<ToolPlan>) {
    if let Some(list) = map.get_mut(key) {
        list.retain(|q| !Arc::ptr_eq(q, p));
        if list.is_empty() {
            map.remove(key);
        }
    }
}
