//! The rules across forms ([`combine_tool_plans`](super::combine_tool_plans)) kept up to date
//! one form at a time: a registration changes one form, and only the tool names that form's
//! tools have, or that reads of the methods it confirms have, can change. Combining every
//! form's tools again cost registering the 50th form 1.3 M (a sort of every candidate by
//! name, a search per read); this costs what the changed form has.

use super::*;
use crate::builtin::is_reserved_name;

/// The offered plans of a set of forms, with what keeps them up to date when one changes.
/// Its plans are [`combine_tool_plans`](super::combine_tool_plans)'s of the same forms, the
/// very `Arc`s (a test holds it over random sequences of changes); its skips are left out
/// (`combine_tool_plans` says them, for one form or all). The indexes are sorted lists of the
/// plans themselves, so that setting a form copies no name (string-keyed maps cost ~8 K a
/// candidate, more than combining a few forms again).
#[derive(Clone, Debug, Default)]
pub struct Combination {
    /// Each form's candidates and confirmed methods, as it was set.
    forms: BTreeMap<String, FormTools>,
    /// Every form's candidates, sorted by tool name.
    by_name: Vec<Arc<ToolPlan>>,
    /// Every form's read candidates, sorted by method: a change of who confirms a method
    /// changes them.
    reads: Vec<Arc<ToolPlan>>,
    /// How many forms send each method only after the owner's confirmation.
    confirmations: BTreeMap<String, u32>,
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

    /// The rules over `forms` (by id, each once) at once: what [`Combination::set_form`] of
    /// each in turn comes to, the candidates sorted once and each name decided once (a catalog
    /// built from scratch, after an upgrade).
    pub fn of<'a>(forms: impl IntoIterator<Item = (&'a str, &'a FormTools)>) -> Combination {
        let mut c = Combination::default();
        for (id, tools) in forms {
            debug_assert!(!c.forms.contains_key(id), "form {id} given twice");
            debug_assert!(tools.candidates.iter().all(|p| p.form.id == id));
            c.by_name.extend(tools.candidates.iter().cloned());
            c.reads.extend(
                tools
                    .candidates
                    .iter()
                    .filter(|p| p.kind == ToolKind::Read)
                    .cloned(),
            );
            for m in &tools.confirmed {
                *c.confirmations.entry(m.clone()).or_default() += 1;
            }
            c.forms.insert(id.to_string(), own_copy(tools));
        }
        c.by_name.sort_by(|a, b| a.name.cmp(&b.name));
        c.reads.sort_by(|a, b| a.method.cmp(&b.method));
        let mut plans: Vec<(String, Arc<ToolPlan>)> = vec![];
        for same in c.by_name.chunk_by(|a, b| a.name == b.name) {
            if let Some(p) = c.decide(&same[0].name, same) {
                plans.push((same[0].name.clone(), p));
            }
        }
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
                take_out(&mut self.by_name, p, |q| &q.name);
                if p.kind == ToolKind::Read {
                    take_out(&mut self.reads, p, |q| &q.method);
                }
            }
            for m in &old.confirmed {
                if let Some(n) = self.confirmations.get_mut(m) {
                    *n -= 1;
                    if *n == 0 {
                        self.confirmations.remove(m);
                    }
                }
            }
            touched.extend(old.candidates);
            methods.extend(old.confirmed);
        }
        if let Some(new) = tools {
            // The rule on reads tells forms apart by the id their plans carry.
            debug_assert!(new.candidates.iter().all(|p| p.form.id == id));
            for p in &new.candidates {
                put_in(&mut self.by_name, p, |q| &q.name);
                if p.kind == ToolKind::Read {
                    put_in(&mut self.reads, p, |q| &q.method);
                }
            }
            for m in &new.confirmed {
                match self.confirmations.get_mut(m) {
                    Some(n) => *n += 1,
                    None => {
                        self.confirmations.insert(m.clone(), 1);
                    }
                }
            }
            self.forms.insert(id.to_string(), own_copy(new));
            touched.extend(new.candidates.iter().cloned());
            methods.extend(new.confirmed.iter().cloned());
        }
        for m in &methods {
            touched.extend(
                self.reads[range(&self.reads, m, |q| &q.method)]
                    .iter()
                    .cloned(),
            );
        }
        touched.sort_by(|a, b| a.name.cmp(&b.name));
        touched.dedup_by(|a, b| a.name == b.name);
        let decided: Vec<(Arc<ToolPlan>, Option<Arc<ToolPlan>>)> = touched
            .into_iter()
            .map(|t| {
                let same = &self.by_name[range(&self.by_name, &t.name, |q| &q.name)];
                let p = self.decide(&t.name, same);
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

    /// The plan offered under `name`, of its candidates `same`, by the rules of
    /// `combine_tool_plans`: a read of a method another form confirms is not a candidate; a
    /// name that is `commit`, a builtin's, or two candidates' offers none.
    fn decide(&self, name: &str, same: &[Arc<ToolPlan>]) -> Option<Arc<ToolPlan>> {
        if name == COMMIT_TOOL || is_reserved_name(name) {
            return None;
        }
        let mut kept = same.iter().filter(|p| !self.read_confirmed_elsewhere(p));
        let one = kept.next()?;
        kept.next().is_none().then(|| one.clone())
    }

    /// A read whose method a form other than its own confirms: the confirming forms counted,
    /// less its own when it confirms the method too.
    fn read_confirmed_elsewhere(&self, p: &ToolPlan) -> bool {
        if p.kind != ToolKind::Read {
            return false;
        }
        let Some(n) = self.confirmations.get(&p.method) else {
            return false;
        };
        let own = self
            .forms
            .get(&p.form.id)
            .is_some_and(|t| t.confirmed.contains(&p.method));
        *n > u32::from(own)
    }
}

/// The form's tools as the combination keeps them (its skips are not read).
fn own_copy(tools: &FormTools) -> FormTools {
    FormTools {
        candidates: tools.candidates.clone(),
        skipped: vec![],
        confirmed: tools.confirmed.clone(),
    }
}

/// Where the plans with key `k` are in `list` (sorted by `key`).
fn range(
    list: &[Arc<ToolPlan>],
    k: &str,
    key: impl Fn(&ToolPlan) -> &String,
) -> std::ops::Range<usize> {
    let lo = list.partition_point(|q| key(q).as_str() < k);
    let hi = lo + list[lo..].partition_point(|q| key(q).as_str() == k);
    lo..hi
}

/// `p` put in `list` (sorted by `key`) after the plans of its key.
fn put_in(list: &mut Vec<Arc<ToolPlan>>, p: &Arc<ToolPlan>, key: impl Fn(&ToolPlan) -> &String) {
    let at = list.partition_point(|q| key(q) <= key(p));
    list.insert(at, p.clone());
}

/// `p` (by address) taken out of `list` (sorted by `key`).
fn take_out(list: &mut Vec<Arc<ToolPlan>>, p: &Arc<ToolPlan>, key: impl Fn(&ToolPlan) -> &String) {
    let r = range(list, key(p), &key);
    if let Some(i) = list[r.clone()].iter().position(|q| Arc::ptr_eq(q, p)) {
        list.remove(r.start + i);
    }
}
