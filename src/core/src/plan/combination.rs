//! The rules across forms ([`combine_tool_plans`](super::combine_tool_plans)) kept up to date
//! one form at a time: a registration changes one form, and only the tool names that form's
//! tools have, or that reads of the methods it confirms have, can change. Combining every
//! form's tools again cost registering the 50th form 1.3 M (a sort of every candidate by
//! name, a search per read); this costs what the changed form has.

use super::catalog::NameRule;
use super::*;

/// The offered plans of a set of forms, with what keeps them up to date when one changes.
/// Its plans are [`combine_tool_plans`](super::combine_tool_plans)'s of the same forms less
/// the plans the caller withholds ([`Combination::withhold`]), the very `Arc`s (a test holds
/// it over random sequences of changes); its skips are left out (`combine_tool_plans` says
/// them, for one form or all). The indexes are sorted lists of the plans themselves, so that
/// setting a form copies no name (string-keyed maps cost ~8 K a candidate, more than
/// combining a few forms again).
#[derive(Clone, Debug, Default)]
pub struct Combination {
    /// Each form's tools as it was set (shared with the caller: a form whose tools are
    /// another `Arc` is set again by [`Combination::sync`]).
    forms: BTreeMap<String, Arc<FormTools>>,
    /// Every form's candidates, sorted by tool name.
    by_name: Vec<Arc<ToolPlan>>,
    /// Every form's read candidates, sorted by method: a change of who confirms a method
    /// changes them.
    reads: Vec<Arc<ToolPlan>>,
    /// How many forms send each method only after the owner's confirmation.
    confirmations: BTreeMap<String, u32>,
    /// Plans of a form the caller holds back, by form: they still take their names under the
    /// rules (a tool withheld on one canister does not hand its name to another form's), but
    /// are not offered.
    withheld: BTreeMap<String, Vec<Arc<ToolPlan>>>,
    /// The plans offered (shared: a catalog hands them out and a call holds them across an
    /// await; changed in place when no one else holds them).
    plans: Arc<ToolPlans>,
}

impl Combination {
    /// The plans offered now, by name (no skips). A form set ([`Combination::set_form`],
    /// [`Combination::sync`]) withholds nothing until [`Combination::withhold`] says again:
    /// a caller that withholds calls it after them, before it reads these.
    pub fn plans(&self) -> &Arc<ToolPlans> {
        &self.plans
    }

    /// The ids of the forms set, in order.
    pub fn form_ids(&self) -> impl Iterator<Item = &str> {
        self.forms.keys().map(String::as_str)
    }

    /// The plan the rules give `name`, offered or withheld.
    pub fn decided(&self, name: &str) -> Option<Arc<ToolPlan>> {
        self.decide(name, &self.by_name[range(&self.by_name, name, |q| &q.name)])
    }

    /// The rules over `forms` (by id, each once) at once: what [`Combination::set_form`] of
    /// each in turn comes to, the candidates sorted once and each name decided once (a catalog
    /// built from scratch, after an upgrade).
    pub fn of<'a>(forms: impl IntoIterator<Item = (&'a str, &'a Arc<FormTools>)>) -> Combination {
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
            c.forms.insert(id.to_string(), tools.clone());
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

    /// Set to `forms` (by id, in order, each once): the forms gone taken away, the forms new
    /// or whose tools are another `Arc` set; all at once when none is set yet.
    pub fn sync<'a>(&mut self, forms: impl IntoIterator<Item = (&'a str, &'a Arc<FormTools>)>) {
        let forms: Vec<(&str, &Arc<FormTools>)> = forms.into_iter().collect();
        debug_assert!(forms.windows(2).all(|w| w[0].0 < w[1].0));
        if self.forms.is_empty() {
            *self = Combination::of(forms);
            return;
        }
        // Both in id order: walked once, side by side (searched form by form, they cost
        // registering the 50th form 0.2 M).
        let mut gone: Vec<String> = vec![];
        let mut set: Vec<(&str, &Arc<FormTools>)> = vec![];
        let mut held = self.forms.iter().peekable();
        for (id, tools) in forms {
            while let Some((was, _)) = held.next_if(|(was, _)| was.as_str() < id) {
                gone.push(was.clone());
            }
            match held.next_if(|(was, _)| was.as_str() == id) {
                Some((_, was)) if Arc::ptr_eq(was, tools) => {}
                _ => set.push((id, tools)),
            }
        }
        gone.extend(held.map(|(was, _)| was.clone()));
        for id in gone {
            self.set_form(&id, None);
        }
        for (id, tools) in set {
            self.set_form(id, Some(tools));
        }
    }

    /// Form `id` set to `tools` (added or replaced), or taken away (`None`). The plans it
    /// withheld were its old tools': it withholds none until [`Combination::withhold`] says.
    pub fn set_form(&mut self, id: &str, tools: Option<&Arc<FormTools>>) {
        // The plans whose names may be decided otherwise now, and the methods whose reads may.
        let mut touched: Vec<Arc<ToolPlan>> = vec![];
        let mut methods: Vec<String> = vec![];
        self.withheld.remove(id);
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
            touched.extend(old.candidates.iter().cloned());
            methods.extend(old.confirmed.iter().cloned());
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
            self.forms.insert(id.to_string(), new.clone());
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
        self.offer_again(touched);
    }

    /// The plans held back now: `held` (by form id, in order, each once) is every form's
    /// plans withheld, its own (a form not named withholds none). A plan withheld is not
    /// offered whatever the rules decide; a plan no longer withheld is offered again when
    /// they give it its name. Costs what changed since the last call, and a lookup a form.
    pub fn withhold<'a>(&mut self, held: impl IntoIterator<Item = (&'a str, &'a [Arc<ToolPlan>])>) {
        let same = |a: &[Arc<ToolPlan>], b: &[Arc<ToolPlan>]| {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| Arc::ptr_eq(p, q))
        };
        let held: Vec<(&str, &[Arc<ToolPlan>])> =
            held.into_iter().filter(|(_, h)| !h.is_empty()).collect();
        debug_assert!(held.windows(2).all(|w| w[0].0 < w[1].0));
        // Both in id order: walked once, side by side.
        let mut released: Vec<String> = vec![];
        let mut added: Vec<(&str, &[Arc<ToolPlan>])> = vec![];
        let mut now = held.iter().peekable();
        for (id, was) in &self.withheld {
            while let Some((f, h)) = now.next_if(|(f, _)| *f < id.as_str()) {
                added.push((f, h));
            }
            match now.next_if(|(f, _)| *f == id.as_str()) {
                Some((_, h)) if same(h, was) => {}
                Some((f, h)) => {
                    released.push(id.clone());
                    added.push((f, h));
                }
                None => released.push(id.clone()),
            }
        }
        added.extend(now.copied());
        let mut touched: Vec<Arc<ToolPlan>> = vec![];
        for id in released {
            touched.extend(self.withheld.remove(&id).into_iter().flatten());
        }
        for (id, h) in added {
            // A form's own candidates, of a form set: anything else would match nothing.
            debug_assert!(self.forms.get(id).is_some_and(|t| h
                .iter()
                .all(|p| t.candidates.iter().any(|q| Arc::ptr_eq(p, q)))));
            self.withheld.insert(id.to_string(), h.to_vec());
            touched.extend(h.iter().cloned());
        }
        self.offer_again(touched);
    }

    /// The names of `touched` decided again, and offered unless withheld.
    fn offer_again(&mut self, mut touched: Vec<Arc<ToolPlan>>) {
        if touched.is_empty() {
            return;
        }
        touched.sort_by(|a, b| a.name.cmp(&b.name));
        touched.dedup_by(|a, b| a.name == b.name);
        let decided: Vec<(Arc<ToolPlan>, Option<Arc<ToolPlan>>)> = touched
            .into_iter()
            .map(|t| {
                let p = self.decided(&t.name).filter(|p| !self.is_withheld(p));
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

    /// A plan the caller withholds (its own form's, by address).
    fn is_withheld(&self, p: &Arc<ToolPlan>) -> bool {
        self.withheld
            .get(&p.form.id)
            .is_some_and(|h| h.iter().any(|q| Arc::ptr_eq(q, p)))
    }

    /// The plan the rules give `name`, of its candidates `same` (see
    /// [`combine_tool_plans`](super::combine_tool_plans)): a read of a method another form
    /// confirms is not a candidate, then [`NameRule`] (`commit`, a builtin's, two candidates').
    fn decide(&self, name: &str, same: &[Arc<ToolPlan>]) -> Option<Arc<ToolPlan>> {
        let mut kept = same.iter().filter(|p| !self.read_confirmed_elsewhere(p));
        let one = kept.next()?;
        let candidates = 1 + kept.count();
        NameRule::of(name, candidates)
            .is_none()
            .then(|| one.clone())
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
