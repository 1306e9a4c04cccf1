//! The catalog: tool plans built from the stored forms and targets, and the bus over them (the
//! form tools' declarations, `commit` and the enabled builtins', each rendered once in every
//! page format). It is heap only, rebuilt when the catalog revision moves (after registration
//! changes and refs refreshes; after an upgrade, by a timer message of its own); the bus also
//! when the builtin settings change. Listing tools costs a lookup, not a parse.

use crate::model::Target;
use crate::state::State;
use candid::Principal;
use ic_stable_structures::Memory;
use serde_json::Value;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use tool_host_core::builtin::Builtin;
use tool_host_core::bus::kept::Rendered;
use tool_host_core::bus::splice::{self, HoledTool};
use tool_host_core::bus::DeclWords;
use tool_host_core::bus::{render, ToolDecl, ToolFormat, ToolSource};
use tool_host_core::candid_types::MethodTypes;
use tool_host_core::form::{parse_form, ref_sources};
use tool_host_core::plan::{plan_form, Combination, FormRef, FormTools, ToolPlan, ToolPlans};
use tool_host_core::read::Canister;
use tool_host_core::schema::PartShapes;

pub struct Catalog {
    pub revision: u64,
    pub plans: Arc<ToolPlans>,
    /// Shared, so that a call holds them across its awaits without a copy.
    pub canisters: Rc<Vec<Canister>>,
    /// Each canister's principal as text, made with it (the tools' schemas name every
    /// canister of their form: made per form, it cost more than the rest of a part).
    pub canister_texts: Rc<Vec<String>>,
    /// The forms' canister parts made last, shared by forms over the same canisters and kept
    /// across rebuilds (a registration's review and the bus after it make the same; a catalog
    /// built whole, as after an upgrade, starts with none).
    pub shapes: Rc<PartShapes>,
    /// Which making of each form's canisters these are (`TargetsPart::made`).
    made: FormsMade,
    /// The targets that keep an ICRC-3 log (a send journals their log length first).
    pub icrc3: std::collections::BTreeSet<Principal>,
    /// Targets registered for a single owner, and that owner.
    pub single_owner: BTreeMap<Principal, Principal>,
    /// How many of them name each form (`TargetsPart::single_owner_forms`).
    single_owner_forms: BTreeMap<String, u32>,
    /// The bus over these plans and the builtin settings, built on first use.
    pub bus: Option<Rc<Bus>>,
    /// The bus before the last change, until the next is built: the form tools it declared
    /// are kept where their form and the canisters are unchanged (see `build_bus`).
    prev_bus: Option<Rc<Bus>>,
    /// Each stored form as parsed and planned, by id: kept across rebuilds, so that a change
    /// rebuilds only what it touches (see [`current`]).
    pub entries: BTreeMap<String, Rc<FormEntry>>,
    /// Every form's tools under the rules across forms, less the tools the targets' rule
    /// withholds (`plans` is its plans): kept up to date with the forms that changed and what
    /// the targets withhold.
    combined: Combination,
    /// What changed since this catalog was built: forms to read again, and whether targets did.
    stale: Stale,
}

/// What changed since a catalog was built, for [`current`] to rebuild just that.
#[derive(Default)]
struct Stale {
    /// Forms stored, replaced or removed: read again from the stored forms.
    forms: std::collections::BTreeSet<String>,
    /// Forms' entries changed: their tools are combined again.
    combine: bool,
    /// Targets changed in ways not said one by one: every canister is made again.
    targets: bool,
    /// Targets registered, removed, or their refs or ICRC-3 flag changed: made again alone.
    changed: std::collections::BTreeSet<Principal>,
}

impl Stale {
    fn targets(&self) -> bool {
        self.targets || !self.changed.is_empty()
    }
}

/// The targets' part of a catalog (what [`with_targets`] makes from the stored targets), kept
/// across a rebuild so that a change of one target makes that one again.
struct TargetsPart {
    /// In the stored map's order (the principals' order), as reading them all gives them.
    canisters: Rc<Vec<Canister>>,
    texts: Rc<Vec<String>>,
    shapes: Rc<PartShapes>,
    icrc3: std::collections::BTreeSet<Principal>,
    single_owner: BTreeMap<Principal, Principal>,
    /// How many canisters registered for a single owner name each form: kept with each
    /// change of a target, so that the rule on tools that bind no owner finds the forms no
    /// such canister applies to without reading every canister's forms at every rebuild.
    single_owner_forms: BTreeMap<String, u32>,
    /// Which making of each form's canisters this is: a bus built over the same one keeps
    /// that form's tools (see `build_bus`).
    made: FormsMade,
}

/// Which making of the targets' part each form's canisters (those it applies to, with their
/// labels and refs: what its tools' canister part is made of) are as of now. A change of a
/// target gives a new number to the forms it names (before and after), and only to them: a
/// bus built over the same number keeps that form's tools as they are (registering a
/// canister for two forms of fifty then makes two forms' tools again, not fifty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct FormsMade {
    /// The number of a form not in `forms`: that of the last reading of every target.
    all: u64,
    forms: BTreeMap<String, u64>,
}

impl FormsMade {
    fn of(&self, form: &str) -> u64 {
        self.forms.get(form).copied().unwrap_or(self.all)
    }

    /// The forms canister `c` applies to given number `made` (every form, for a canister
    /// that names none).
    fn moved(&mut self, c: &Canister, made: u64) {
        match &c.forms {
            None => {
                self.all = made;
                self.forms.clear();
            }
            Some(forms) => {
                for f in forms {
                    self.forms.insert(f.clone(), made);
                }
            }
        }
    }
}

thread_local! {
    /// The last [`TargetsPart::made`] given (heap only: a catalog never outlives the module).
    static TARGETS_MADE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn next_made() -> u64 {
    TARGETS_MADE.with(|m| {
        m.set(m.get() + 1);
        m.get()
    })
}

impl TargetsPart {
    /// Every stored target made.
    fn read<M: Memory>(state: &State<M>) -> TargetsPart {
        let mut part = TargetsPart {
            canisters: Default::default(),
            texts: Default::default(),
            shapes: Default::default(),
            icrc3: Default::default(),
            single_owner: Default::default(),
            single_owner_forms: Default::default(),
            made: FormsMade {
                all: next_made(),
                forms: BTreeMap::new(),
            },
        };
        let mut canisters = vec![];
        let mut texts = vec![];
        // The single-owner canisters' forms counted by runs of the same list (canisters
        // registered alike usually name the same forms): counted one canister at a time, they
        // cost the catalog after an upgrade 11 M at 50 forms on 100 ledgers.
        let mut run: Option<(Vec<String>, u32)> = None;
        for e in state.targets.iter() {
            let (id, t) = e.into_pair();
            canisters.push(part.canister(id, &t));
            texts.push(id.to_text());
            if t.owner.is_some() {
                match &mut run {
                    Some((forms, times)) if *forms == t.forms => *times += 1,
                    _ => {
                        if let Some((forms, times)) = run.replace((t.forms, 1)) {
                            part.count_single_owner_forms(&forms, times);
                        }
                    }
                }
            }
        }
        if let Some((forms, times)) = run {
            part.count_single_owner_forms(&forms, times);
        }
        debug_assert!(
            canisters.windows(2).all(|w| w[0].id < w[1].id),
            "the stored map is ordered by the principals' Ord"
        );
        part.canisters = Rc::new(canisters);
        part.texts = Rc::new(texts);
        part
    }

    /// Target `id` as stored, its flags noted.
    fn canister(&mut self, id: Principal, t: &Target) -> Canister {
        if t.icrc3 {
            self.icrc3.insert(id);
        }
        if let Some(o) = t.owner {
            self.single_owner.insert(id, o);
        }
        target_canister(id, t)
    }

    /// `forms` counted `times` more among the forms single-owner canisters name.
    fn count_single_owner_forms(&mut self, forms: &[String], times: u32) {
        for f in forms {
            match self.single_owner_forms.get_mut(f) {
                Some(n) => *n += times,
                None => {
                    self.single_owner_forms.insert(f.clone(), times);
                }
            }
        }
    }

    /// Target `id`'s flags as noted for canister `was` taken back (it is made again, or gone).
    fn forget(&mut self, id: &Principal, was: Option<&Canister>) {
        self.icrc3.remove(id);
        if self.single_owner.remove(id).is_some() {
            debug_assert!(
                was.is_some(),
                "a single-owner target is among the canisters"
            );
            for f in was.and_then(|c| c.forms.as_ref()).into_iter().flatten() {
                let n = self.single_owner_forms.get_mut(f);
                debug_assert!(n.is_some(), "form {f} of a single-owner target counted");
                if let Some(n) = n {
                    *n -= 1;
                    if *n == 0 {
                        self.single_owner_forms.remove(f);
                    }
                }
            }
        }
    }

    /// This part with the targets `changed` made again from the stored ones (registered,
    /// replaced or removed), each put where reading them all would (the stored map is
    /// ordered by the principals' `Ord`, as `canisters` is), the others kept.
    fn update<M: Memory>(
        mut self,
        state: &State<M>,
        changed: &std::collections::BTreeSet<Principal>,
    ) -> TargetsPart {
        // Not shared but by a call holding the canisters across an await (then copied).
        let mut canisters = Rc::try_unwrap(std::mem::take(&mut self.canisters))
            .unwrap_or_else(|shared| (*shared).clone());
        let mut texts = Rc::try_unwrap(std::mem::take(&mut self.texts))
            .unwrap_or_else(|shared| (*shared).clone());
        // A canister that differs now (registered, removed, another label, refs or forms)
        // gives this number to the forms it names before and after; a change of a flag alone
        // (ICRC-3, the owner) leaves the canisters as they were, and the bus's form tools
        // with them.
        let made = next_made();
        for id in changed {
            let at = canisters.binary_search_by(|c| c.id.cmp(id));
            self.forget(id, at.ok().map(|i| &canisters[i]));
            let now = state.targets.get(id).map(|t| {
                if t.owner.is_some() {
                    self.count_single_owner_forms(&t.forms, 1);
                }
                self.canister(*id, &t)
            });
            match (at, now) {
                (Ok(i), Some(c)) => {
                    if canisters[i] != c {
                        self.made.moved(&canisters[i], made);
                        self.made.moved(&c, made);
                        canisters[i] = c;
                    }
                }
                (Err(i), Some(c)) => {
                    self.made.moved(&c, made);
                    canisters.insert(i, c);
                    texts.insert(i, id.to_text());
                }
                (Ok(i), None) => {
                    self.made.moved(&canisters[i], made);
                    canisters.remove(i);
                    texts.remove(i);
                }
                (Err(_), None) => {}
            }
        }
        self.canisters = Rc::new(canisters);
        self.texts = Rc::new(texts);
        self
    }
}

/// A tool the engine cannot tie to its owner on a canister several owners share (see
/// [`with_targets`]). Its reason is text made when it is shown: a catalog is rebuilt on every
/// registration change, and formatting it for every such tool of every form made registering
/// the 50th form cost 8 M more than the 10th.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unbound {
    pub form: String,
    kind: tool_host_core::plan::ToolKind,
    method: String,
}

impl Unbound {
    /// The rule's verdict on a tool: `None` when the engine ties its call to the owner (a
    /// prepare tool of a method with a custody rule, a read tool of a read the engine knows).
    fn of(p: &ToolPlan) -> Option<Unbound> {
        use tool_host_core::plan::ToolKind;
        let unbound = match p.kind {
            ToolKind::Prepare => !crate::custody::covers(&p.method),
            ToolKind::Read => !crate::custody::known_read(&p.method),
        };
        unbound.then(|| Unbound {
            form: p.form.id.clone(),
            kind: p.kind,
            method: p.method.clone(),
        })
    }

    /// Why the tool is offered only on a canister registered for a single owner.
    pub fn why(&self) -> String {
        use tool_host_core::plan::ToolKind;
        match self.kind {
            ToolKind::Prepare => format!(
                "the engine has no custody rule for {}: on a canister several owners share, its call would act with the tool host's authority over every owner's funds there, whatever positions the form binds to the owner; offered only on a canister registered for a single owner",
                self.method
            ),
            ToolKind::Read => format!(
                "{} is not a read the engine knows (ICRC-1/2/3/7/10/37, the ICP ledger): sent without a confirmation, its call would act with the tool host's authority over every owner's funds there, whatever the form says it does; offered only on a canister registered for a single owner",
                self.method
            ),
        }
    }
}

/// One stored form as the catalog holds it: parsed once, its own tools planned once and each
/// tool's method types built once, reused by every rebuild while the form stays as stored.
pub struct FormEntry {
    pub form: FormRef,
    /// Shared with the rules across forms ([`Combination`]): a form whose tools are another
    /// `Arc` is a form set again.
    pub tools: Arc<FormTools>,
    /// Method types of each candidate tool (the tools of one method share them).
    pub types: BTreeMap<String, Rc<MethodTypes>>,
    /// The refs the form reads (`query:…`), and the queries it declares without arguments
    /// (the only methods a ref is read from): what a refs refresh reads.
    pub ref_sources: std::collections::BTreeSet<String>,
    pub ref_queries: std::collections::BTreeSet<String>,
    /// Its tools the engine cannot tie to their owner ([`Unbound::of`]), found once: a
    /// rebuild reads them, not every tool of every form. The very plans of `tools` (the
    /// combined plans share them), so that a combined plan is one of them by its address.
    unbound: Vec<Arc<ToolPlan>>,
    /// Every tool the form plans (those the custody check refuses too: a review reads them),
    /// each as last reviewed: planned on the first review, not at each (see
    /// [`FormEntry::review_issues`]).
    review: std::cell::OnceCell<FormReview>,
}

/// A form's own tools as a registration's review declares them, and each as last reviewed
/// (in the plans' order).
struct FormReview {
    plans: ToolPlans,
    reviewed: std::cell::RefCell<Vec<Option<tool_host_core::bus::splice::ReviewedTool>>>,
}

impl FormEntry {
    /// Plans a parsed form (the work a stored form costs, done once).
    pub fn new(id: String, form: Arc<tool_host_core::form::Form>) -> FormEntry {
        let form = FormRef { id, form };
        let mut tools = plan_form(&form);
        let mut by_method: BTreeMap<&str, Rc<MethodTypes>> = BTreeMap::new();
        let mut types = BTreeMap::new();
        for p in &tools.candidates {
            let t = by_method
                .entry(p.method.as_str())
                .or_insert_with(|| Rc::new(tool_host_core::codec::method_types(p)));
            types.insert(p.name.clone(), t.clone());
        }
        // A method that moves funds whose declared argument the custody check would refuse at
        // every prepare, or that a ledger would read otherwise than the preview shows it, is
        // not offered (the check on the bytes stays the rule).
        let mut refused = vec![];
        for p in &tools.candidates {
            if p.kind != tool_host_core::plan::ToolKind::Prepare {
                continue;
            }
            let args = &p.method_def().args;
            let why = crate::custody::declared_shape(&form.form, &p.method, args).or_else(|| {
                let t = types.get(&p.name)?;
                crate::standard::mismatch(&p.method, &t.env, t.args.first()?)
            });
            if let Some(reason) = why {
                refused.push(p.name.clone());
                tools.skipped.push(tool_host_core::plan::Skip {
                    method: p.method.clone(),
                    reason,
                });
            }
        }
        if !refused.is_empty() {
            tools.candidates.retain(|p| !refused.contains(&p.name));
            for name in &refused {
                types.remove(name);
            }
        }
        let mut ref_sources: std::collections::BTreeSet<String> =
            ref_sources(&form.form).into_iter().collect();
        let mut ref_queries: std::collections::BTreeSet<String> = form
            .form
            .methods
            .iter()
            .filter(|(_, m)| m.mode.is_query() && m.args.is_empty())
            .map(|(n, _)| n.clone())
            .collect();
        // A form with a method that moves funds: the ledger's own decimals and symbol are read
        // whatever the form declares, so that an amount is never read or shown in a form's
        // units that are not the ledger's (`read::leaf`).
        let funds = form
            .form
            .methods
            .keys()
            .any(|m| tool_host_core::plan::FUNDS_METHODS.contains(&m.as_str()));
        if funds {
            for m in ["icrc1_decimals", "icrc1_symbol"] {
                ref_sources.insert(format!("query:{m}"));
                ref_queries.insert(m.to_string());
            }
        }
        let unbound = tools
            .candidates
            .iter()
            .filter(|p| Unbound::of(p).is_some())
            .cloned()
            .collect();
        FormEntry {
            form,
            tools: Arc::new(tools),
            types,
            ref_sources,
            ref_queries,
            unbound,
            review: Default::default(),
        }
    }

    /// The declaration issues of every tool the form plans on its own, on `part` (its
    /// canister part now): a registration's review (`form_review::form_issues`). A tool's are
    /// taken from its last review where the canisters agree on the refs its declaration read
    /// as then (`bus::splice::tool_issues`).
    pub fn review_issues(
        &self,
        part: &tool_host_core::schema::FormCanisters,
    ) -> Vec<tool_host_core::bus::DeclIssue> {
        let review = self.review.get_or_init(|| {
            let plans = tool_host_core::plan::build_tool_plans(std::slice::from_ref(&self.form));
            let reviewed = std::cell::RefCell::new(vec![None; plans.plans.len()]);
            FormReview { plans, reviewed }
        });
        let mut reviewed = review.reviewed.borrow_mut();
        review
            .plans
            .plans
            .values()
            .zip(reviewed.iter_mut())
            .flat_map(|(p, kept)| tool_host_core::bus::splice::tool_issues(p, part, kept))
            .collect()
    }

    /// A stored form's entry; `None` for a form that no longer parses (a rule added since it
    /// was registered): it gives no tools, as before.
    fn parse(id: String, json: &str) -> Option<FormEntry> {
        let form = parse_form(json.as_bytes()).ok()?;
        Some(FormEntry::new(id, Arc::new(form)))
    }
}

/// Every tool in one place, declared once: what `list_tools`, selection and turns read.
pub struct Bus {
    /// Form tools, `commit` and the enabled builtins, by name (shared: a rebuild keeps an
    /// unchanged tool without copying its schema).
    pub decls: Vec<Rc<ToolDecl>>,
    /// The pins in force that name a tool here (the admin's and the default ones).
    pub pinned: std::collections::BTreeSet<String>,
    /// The builtins an admin enabled.
    pub builtins: std::collections::BTreeSet<Builtin>,
    /// `current_time`'s zone when the caller names none.
    pub zone: String,
    /// Each tool of `decls` rendered once in every page format (MCP's compact JSON, and the
    /// parts the others are put together from): `list_tools` and `list_tools_page` copy them.
    pub items: Vec<Rc<Rendered>>,
    /// Each tool's words as selection and the overlap review count them, split once.
    pub words: Vec<Rc<DeclWords>>,
    /// The catalog's fingerprint (`bus::page::fingerprint` of the tools' MCP texts): a page's
    /// cursor carries it.
    pub fingerprint: u64,
    /// What each tool of `decls` was declared from: a form tool's plan (the very `Arc`),
    /// `None` for `commit` and the builtins. The next bus keeps a tool's declaration and
    /// rendering when it is the same and so are its form's canisters (a form registered then
    /// costs its own tools, not every form's; a canister registered, the tools of its forms).
    plans: Vec<Option<Arc<ToolPlan>>>,
    /// Which making of its form's canisters each form tool was declared over (`FormsMade`).
    made: Vec<u64>,
    /// A spliced form tool with a hole where its canister part goes: when the canisters
    /// change, the next bus fills the new part in (`bus::splice::refill_text`).
    holed: Vec<Option<Rc<HoledTool>>>,
    /// A spliced form tool's canister part (its form's, shared by its tools): its declaration
    /// in `decls` holds the hole, and [`Bus::whole`] puts the part in (a copy of the part in
    /// each declaration was most of what registering a canister still grew by).
    parts: Vec<Option<Rc<Value>>>,
    /// The prepare tools' declarations (of `decls`, which keeps them alive), by address.
    prepares: Vec<*const ToolDecl>,
}

impl Bus {
    pub fn decl(&self, name: &str) -> Option<&ToolDecl> {
        self.decls
            .binary_search_by(|d| d.name.as_str().cmp(name))
            .ok()
            .map(|i| &*self.decls[i])
    }

    pub fn names(&self) -> Vec<&str> {
        self.decls.iter().map(|d| d.name.as_str()).collect()
    }

    /// Whether `d`, one of this bus's declarations, is a prepare tool's (a selection that
    /// offers one offers `commit` too): found by its address (a set of names made again at
    /// every rebuild cost registering the 50th form 16 K; a search by name, a selection 2 %).
    pub fn is_prepare(&self, d: &ToolDecl) -> bool {
        self.prepares.binary_search(&(d as *const ToolDecl)).is_ok()
    }

    /// An enabled builtin of this name (a disabled one is no tool at all).
    pub fn builtin(&self, name: &str) -> Option<Builtin> {
        Builtin::from_name(name).filter(|b| self.builtins.contains(b))
    }

    /// `decls` (of this bus) rendered in `format`, each declared whole: as Markdown, the
    /// sections kept with the tools; in a JSON format, a spliced tool's declaration copied
    /// with its part.
    pub fn render(&self, decls: &[&ToolDecl], format: ToolFormat) -> String {
        // Tool `d`'s index here (a declaration not of this bus has none).
        let own = |d: &ToolDecl| {
            self.index(&d.name)
                .filter(|&i| std::ptr::eq(&*self.decls[i], d))
        };
        if format == ToolFormat::Markdown {
            let mut out = tool_host_core::bus::markdown_header();
            for d in decls {
                match own(d) {
                    Some(i) => self.items[i].markdown().push_to(&mut out),
                    None => out.push_str(&tool_host_core::bus::page::render_one(d, format)),
                }
            }
            return out;
        }
        if self.parts.iter().all(Option::is_none) {
            // No tool spliced (its form's canisters are fewer than four): each is whole.
            return render(decls, format);
        }
        let whole = decls
            .iter()
            .map(|d| match own(d) {
                Some(i) => self.whole(i),
                None => std::borrow::Cow::Borrowed(*d),
            })
            .collect();
        tool_host_core::bus::render_owned(whole, format)
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.decls
            .binary_search_by(|d| d.name.as_str().cmp(name))
            .ok()
    }

    /// Tool `i`'s declaration whole: `decls[i]` with its canister part put in where it holds
    /// the hole. What a provider is given; `decls` serves names, words and what a review
    /// reads.
    pub fn whole(&self, i: usize) -> std::borrow::Cow<'_, ToolDecl> {
        match self.parts.get(i).and_then(Option::as_ref) {
            Some(part) => std::borrow::Cow::Owned(splice::with_part_of(&self.decls[i], part)),
            None => std::borrow::Cow::Borrowed(&*self.decls[i]),
        }
    }

    /// Form tool `i` with a hole for its canister part, when it was spliced (tests tell a
    /// tool filled again from one declared again by its address).
    pub fn holed(&self, i: usize) -> Option<&Rc<HoledTool>> {
        self.holed.get(i)?.as_ref()
    }

    /// Tool `i` as held, to keep in the next bus.
    fn tool(&self, i: usize) -> Tool {
        Tool {
            decl: self.decls[i].clone(),
            text: self.items[i].clone(),
            words: self.words[i].clone(),
            plan: self.plans[i].clone(),
            made: self.made[i],
            holed: self.holed[i].clone(),
            part: self.parts[i].clone(),
        }
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

/// The form tools `prev` holds, looked up in name order (the plans' order, and the bus's): a
/// rebuild walks both lists once rather than searching one for each tool of the other (each
/// search by name and by form cost registering the 50th form 0.6 M on 10 ledgers).
struct KeptTools<'a> {
    prev: Option<&'a Bus>,
    /// Where in `prev`'s tools the walk is.
    at: usize,
}

impl KeptTools<'_> {
    /// Plan `p`'s tool as `prev` holds it when `prev` declared it from this very plan (a plan
    /// is made once, with its form's entry; the same plan is the same name, so the walk by
    /// name found it): its declaration and renderings are still this
    /// catalog's when the canisters are the same too, its words whatever they are (they are
    /// the tool's name, title, description and input names). Asked in name order.
    fn of(&mut self, p: &Arc<ToolPlan>) -> Option<Tool> {
        let b = self.prev?;
        while self.at < b.decls.len() && b.decls[self.at].name < p.name {
            self.at += 1;
        }
        let same = b
            .plans
            .get(self.at)?
            .as_ref()
            .is_some_and(|q| Arc::ptr_eq(q, p));
        same.then(|| b.tool(self.at))
    }
}

/// A tool as the bus holds it: its declaration, its texts, its words, and its plan and the
/// tool with a hole for its canister part (a form tool's).
struct Tool {
    decl: Rc<ToolDecl>,
    text: Rc<Rendered>,
    words: Rc<DeclWords>,
    plan: Option<Arc<ToolPlan>>,
    /// Which making of its form's canisters it was declared over (a form tool's).
    made: u64,
    holed: Option<Rc<HoledTool>>,
    /// Its canister part, when `decl` holds the hole.
    part: Option<Rc<Value>>,
}

impl Tool {
    /// `commit` or a builtin, declared as `d`.
    fn host(d: ToolDecl) -> Tool {
        Tool {
            text: Rc::new(Rendered::new(&d)),
            words: Rc::new(DeclWords::of(&d)),
            decl: Rc::new(d),
            plan: None,
            made: 0,
            holed: None,
            part: None,
        }
    }
}

fn build_bus(cat: &Catalog, c: &crate::model::BusConfig, prev: Option<&Bus>) -> Bus {
    // Each form's canister part, worked out on its first tool made again (a canister's change
    // changes every declaration of its forms, their `canister_id`, and only theirs).
    let mut parts: BTreeMap<&str, tool_host_core::schema::FormCanisters> = BTreeMap::new();
    let mut kept_tools = KeptTools { prev, at: 0 };
    let mut tools: Vec<Tool> = cat
        .plans
        .plans
        .values()
        .map(|p| {
            let made = cat.made.of(&p.form.id);
            let kept = match kept_tools.of(p) {
                Some(tool) if tool.made == made => return tool,
                kept => kept,
            };
            let part = parts
                .entry(p.form.id.as_str())
                .or_insert_with(|| cat.part(&p.form.id));
            let schema = || part.schema_rc();
            // The same plan on other canisters: its part filled in again where the canisters
            // agree on what its declaration read (the declaration, with its hole, kept),
            // declared again otherwise.
            if let Some(k) = &kept {
                let refilled = k
                    .holed
                    .as_ref()
                    .and_then(|h| splice::refill_text(h, &k.text, part));
                if let Some(t) = refilled {
                    return Tool {
                        words: k.words.clone(),
                        decl: k.decl.clone(),
                        text: Rc::new(t),
                        plan: Some(p.clone()),
                        made,
                        holed: k.holed.clone(),
                        part: Some(schema()),
                    };
                }
            }
            let (d, t, holed) = splice::form_tool_parted(p, part);
            Tool {
                words: kept
                    .map(|k| k.words)
                    .unwrap_or_else(|| Rc::new(DeclWords::of(&d))),
                decl: Rc::new(d),
                text: Rc::new(t),
                plan: Some(p.clone()),
                made,
                part: holed.is_some().then(schema),
                holed: holed.map(Rc::new),
            }
        })
        .collect();
    let zone = c
        .default_time_zone
        .clone()
        .unwrap_or_else(|| "UTC".to_string());
    // `commit` and the builtins are always the same tools, but for `current_time`'s zone (a
    // builtin's declaration is made of its name and the zone alone): kept from `prev` rather
    // than rendered again at every rebuild (0.4 M of each registration with three builtins
    // enabled).
    let host_tool = |name: &str, source: &ToolSource, reads_zone: bool| -> Option<Tool> {
        let b = prev.filter(|b| !reads_zone || b.zone == zone)?;
        let i = b
            .decls
            .binary_search_by(|d| d.name.as_str().cmp(name))
            .ok()?;
        (b.decls[i].source == *source).then(|| b.tool(i))
    };
    if cat.plans.has_commit() {
        let commit = tool_host_core::plan::COMMIT_TOOL;
        tools.push(
            host_tool(commit, &ToolSource::Host, false)
                .unwrap_or_else(|| Tool::host(tool_host_core::bus::commit_decl())),
        );
    }
    let builtins: std::collections::BTreeSet<Builtin> = c
        .enabled
        .iter()
        .filter_map(|n| Builtin::from_name(n))
        .collect();
    tools.extend(builtins.iter().map(|b| {
        host_tool(b.name(), &ToolSource::Builtin, b.decl_reads_zone())
            .unwrap_or_else(|| Tool::host(b.decl(&zone)))
    }));
    tools.sort_by(|a, b| a.decl.name.cmp(&b.decl.name));
    tools.dedup_by(|a, b| a.decl.name == b.decl.name);
    let mut decls = Vec::with_capacity(tools.len());
    let mut items = Vec::with_capacity(tools.len());
    let mut words = Vec::with_capacity(tools.len());
    let mut plans = Vec::with_capacity(tools.len());
    let mut holed = Vec::with_capacity(tools.len());
    let mut made = Vec::with_capacity(tools.len());
    let mut parts = Vec::with_capacity(tools.len());
    let mut prepares = vec![];
    for t in tools {
        if t.plan
            .as_ref()
            .is_some_and(|p| p.kind == tool_host_core::plan::ToolKind::Prepare)
        {
            prepares.push(Rc::as_ptr(&t.decl));
        }
        decls.push(t.decl);
        items.push(t.text);
        words.push(t.words);
        plans.push(t.plan);
        holed.push(t.holed);
        made.push(t.made);
        parts.push(t.part);
    }
    let pinned = pins_of(c)
        .into_iter()
        .filter(|n| decls.iter().any(|d| &d.name == n))
        .collect();
    prepares.sort_unstable();
    let fingerprint = tool_host_core::bus::page::fingerprint_of(items.iter().map(|t| t.mcp_hash()));
    Bus {
        decls,
        pinned,
        builtins,
        zone,
        items,
        words,
        fingerprint,
        plans,
        holed,
        made,
        parts,
        prepares,
    }
}

impl Catalog {
    /// Form `form_id`'s canister part over these canisters, its shape kept with the catalog.
    pub fn part(&self, form_id: &str) -> tool_host_core::schema::FormCanisters<'_> {
        tool_host_core::schema::FormCanisters::with_shapes(
            form_id,
            &self.canisters,
            &self.canister_texts,
            &self.shapes,
        )
        .made(self.made.of(form_id))
    }

    /// A tool's method types, built once with its form's entry (encoding and decoding reuse
    /// them): looked up through its plan's form rather than gathered into a map of every tool
    /// at every rebuild (0.24 M of registering the 50th form, and the map's drop).
    pub fn types(&self, name: &str) -> Option<&Rc<MethodTypes>> {
        let p = self.plans.plans.get(name)?;
        self.entries.get(&p.form.id)?.types.get(name)
    }

    /// A tool's plan and method types, cheap to hold across an await.
    pub fn tool(&self, name: &str) -> Option<ToolRef> {
        Some(ToolRef {
            types: self.types(name)?.clone(),
            plans: self.plans.clone(),
            name: name.to_string(),
        })
    }

    pub fn canister(&self, id: &Principal) -> Option<&Canister> {
        self.canisters.iter().find(|c| &c.id == id)
    }

    /// Tool `name` when it is a tool the engine cannot tie to its owner: offered only on a
    /// canister of its form registered for a single owner (see [`with_targets`]).
    pub fn unbound(&self, name: &str) -> Option<Unbound> {
        Unbound::of(&*self.combined.decided(name)?)
    }

    /// How many canisters registered for a single owner name each form (kept as targets
    /// change; a test compares it with a catalog built from scratch).
    pub fn single_owner_forms(&self) -> &BTreeMap<String, u32> {
        &self.single_owner_forms
    }

    /// Every such tool of the forms `form` takes (by id), by name.
    pub fn unbound_tools(&self, form: impl Fn(&str) -> bool) -> Vec<(String, Unbound)> {
        let mut tools: Vec<(String, Unbound)> = self
            .entries
            .values()
            .filter(|e| form(&e.form.id))
            .flat_map(|e| {
                // The form's own tool of its name: combining forms may have given the name to
                // another form's tool, or to none.
                e.unbound
                    .iter()
                    .filter(|p| {
                        self.combined
                            .decided(&p.name)
                            .is_some_and(|c| Arc::ptr_eq(&c, p))
                    })
                    .filter_map(|p| Some((p.name.clone(), Unbound::of(p)?)))
            })
            .collect();
        tools.sort_by(|a, b| a.0.cmp(&b.0));
        tools
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

/// Builds the catalog from stored state, every form parsed. Forms were validated when
/// registered.
pub fn build<M: Memory>(state: &State<M>) -> Catalog {
    let entries = state
        .forms
        .iter()
        .filter_map(|e| {
            let (id, stored) = e.into_pair();
            FormEntry::parse(id.clone(), &stored.json).map(|f| (id, Rc::new(f)))
        })
        .collect();
    with_forms(
        state,
        entries,
        Combination::default(),
        TargetsPart::read(state),
    )
}

/// The catalog over these form entries (one per stored form that parses) and the stored
/// targets.
fn with_forms<M: Memory>(
    state: &State<M>,
    entries: BTreeMap<String, Rc<FormEntry>>,
    mut combined: Combination,
    targets: TargetsPart,
) -> Catalog {
    combined.sync(entries.iter().map(|(id, e)| (id.as_str(), &e.tools)));
    with_targets(state, entries, combined, targets)
}

/// The catalog over these forms' tools and the stored targets: the canisters, and the rule on
/// tools that bind no owner (which reads the targets' forms and owners).
fn with_targets<M: Memory>(
    state: &State<M>,
    entries: BTreeMap<String, Rc<FormEntry>>,
    mut combined: Combination,
    targets: TargetsPart,
) -> Catalog {
    let revision = state.config.get().catalog_revision;
    let TargetsPart {
        canisters,
        texts: canister_texts,
        shapes,
        icrc3,
        single_owner,
        single_owner_forms,
        made,
    } = targets;
    // A call the tool host makes acts with all its authority on the target, over every
    // owner's funds there, whatever the form says the call is or binds (a target ignores a
    // field it does not have, and runs its method as it defines it). On a target several
    // owners share, a tool is offered only when the engine itself ties the call to its owner:
    // a prepare tool of a method with a custody rule, a read tool of a read the engine knows.
    // Any other is offered only where a target of its form is registered for a single owner.
    // Such a tool is not among the plans, nor among their skips: `Catalog::unbound` says why
    // when asked (formatted at every rebuild for every such tool taken away, the reasons cost
    // registering the 50th form 4.4 M when each form's tools were taken away).

    // The forms with such tools that no canister registered for a single owner applies to:
    // the entries and the forms such canisters name (counted as targets change) walked side
    // by side, both in id order (each single-owner canister's forms looked up at every
    // rebuild, they cost registering the 50th form 0.2 M on 10 ledgers; every canister's
    // forms gathered at every rebuild, the catalog 10 M more on 100).
    let mut single = single_owner_forms.keys().peekable();
    let shared_only: Vec<(&str, &[Arc<ToolPlan>])> = entries
        .iter()
        .filter(|(_, e)| !e.unbound.is_empty())
        .filter(|(id, _)| {
            while single.next_if(|f| f < id).is_some() {}
            single.peek() != Some(id)
        })
        .map(|(id, e)| (id.as_str(), e.unbound.as_slice()))
        .collect();
    // Their tools are not offered, withheld by their plans' addresses: a plan is its own
    // form's, so the rule takes away a form's tool, never another form's tool of a name it
    // also planned. The rules across forms withhold them, changing what changed since the
    // last catalog (the offered plans copied less those, it cost registering the 50th form
    // 0.5 M).
    combined.withhold(shared_only);
    let plans = combined.plans().clone();
    Catalog {
        revision,
        plans,
        canisters,
        canister_texts,
        shapes,
        made,
        icrc3,
        single_owner,
        single_owner_forms,
        bus: None,
        prev_bus: None,
        entries,
        combined,
        stale: Stale::default(),
    }
}

/// The catalog brought up to date with what changed since `old` was built: the forms named
/// stale are read again (the others keep their parse, plans and types), and the targets' part
/// is made again; a catalog with nothing named stale (the revision moved some other way) is
/// built whole.
fn rebuild<M: Memory>(state: &State<M>, old: Catalog) -> Catalog {
    let Catalog {
        mut entries,
        stale,
        plans,
        combined,
        bus,
        prev_bus,
        canisters,
        canister_texts,
        shapes,
        made,
        icrc3,
        single_owner,
        single_owner_forms,
        ..
    } = old;
    if stale.forms.is_empty() && !stale.combine && !stale.targets() {
        return build(state);
    }
    // The offered plans let go of, so that the rules across forms change theirs in place
    // (unless a call holds them across an await: then they are copied).
    drop(plans);
    let prev_bus = bus.or(prev_bus);
    let kept = TargetsPart {
        canisters,
        texts: canister_texts,
        shapes,
        icrc3,
        single_owner,
        single_owner_forms,
        made,
    };
    let targets = if stale.targets {
        TargetsPart {
            shapes: kept.shapes,
            ..TargetsPart::read(state)
        }
    } else if stale.changed.is_empty() {
        kept
    } else {
        kept.update(state, &stale.changed)
    };
    if stale.forms.is_empty() && !stale.combine {
        let mut fresh = with_targets(state, entries, combined, targets);
        fresh.prev_bus = prev_bus;
        return fresh;
    }
    for id in &stale.forms {
        entries.remove(id);
        if let Some(stored) = state.forms.get(id) {
            if let Some(e) = FormEntry::parse(id.clone(), &stored.json) {
                entries.insert(id.clone(), Rc::new(e));
            }
        }
    }
    let mut fresh = with_forms(state, entries, combined, targets);
    fresh.prev_bus = prev_bus;
    fresh
}

/// The current catalog, built if stale (only what changed: see [`rebuild`]). In a query the
/// rebuilt catalog is not kept (queries never commit), which is why updates build it, and
/// after an upgrade a timer message of its own (`Runtime::build_catalog_soon`).
pub fn current<M: Memory>(state: &mut State<M>) -> &Catalog {
    let revision = state.config.get().catalog_revision;
    let fresh = match state.catalog.take() {
        Some(c) if c.revision == revision => c,
        Some(old) => rebuild(state, old),
        None => build(state),
    };
    state.catalog.insert(fresh)
}

/// Form `id` was stored, replaced or removed: the next [`current`] reads it again, and only it.
/// `parsed` is the form just stored, already parsed (registration parsed it to check it): kept
/// as its entry, so that it is not parsed twice.
pub(crate) fn form_changed(cat: &mut Catalog, id: &str, parsed: Option<FormEntry>) {
    match parsed {
        Some(e) => {
            cat.entries.insert(id.to_string(), Rc::new(e));
            cat.stale.forms.remove(id);
            cat.stale.combine = true;
        }
        None => {
            cat.stale.forms.insert(id.to_string());
        }
    }
}

/// Form `id`'s entry, without rebuilding the catalog when only targets changed since it was
/// built (an entry depends on its form alone); `None` for a form not stored, or stored but no
/// longer parsing.
pub fn form_entry<M: Memory>(state: &mut State<M>, id: &str) -> Option<Rc<FormEntry>> {
    match state.catalog.as_ref() {
        Some(c) if !c.stale.forms.contains(id) => c.entries.get(id).cloned(),
        _ => current(state).entries.get(id).cloned(),
    }
}

/// Targets were registered or removed, or their refs or ICRC-3 flag changed: the next
/// [`current`] makes the targets' part again; the forms' plans stay.
pub(crate) fn targets_changed(cat: &mut Catalog) {
    cat.stale.targets = true;
}

/// Target `id` was registered, replaced or removed, or its refs or ICRC-3 flag changed: the
/// next [`current`] makes that canister again, and keeps the others.
pub(crate) fn target_changed(cat: &mut Catalog, id: Principal) {
    cat.stale.changed.insert(id);
}

/// The bus over the current catalog and builtin settings, built if stale. As with
/// [`current`], a query's build is not kept: updates and the timer message after an upgrade
/// build it.
pub fn bus<M: Memory>(state: &mut State<M>) -> Rc<Bus> {
    current(state);
    let settings = &state.config.get().bus;
    let cat = state.catalog.as_mut().expect("just built");
    if cat.bus.is_none() {
        let built = build_bus(cat, settings, cat.prev_bus.as_deref());
        cat.bus = Some(Rc::new(built));
        cat.prev_bus = None;
    }
    cat.bus.clone().expect("just built")
}

/// The builtin settings changed: the bus is built again on next use (the plans stay).
pub fn settings_changed<M: Memory>(state: &mut State<M>) {
    if let Some(c) = state.catalog.as_mut() {
        c.prev_bus = c.bus.take().or(c.prev_bus.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canister(forms: Option<&[&str]>) -> Canister {
        Canister {
            id: Principal::anonymous(),
            label: None,
            refs: BTreeMap::new(),
            forms: forms.map(|f| f.iter().map(|s| s.to_string()).collect()),
        }
    }

    /// A canister's change gives a new number to the forms it names, and to every form when
    /// it names none (it applies to all).
    #[test]
    fn a_moved_canister_renumbers_its_forms() {
        let mut made = FormsMade {
            all: 1,
            forms: BTreeMap::new(),
        };
        made.moved(&canister(Some(&["a", "b"])), 2);
        assert_eq!([made.of("a"), made.of("b"), made.of("c")], [2, 2, 1]);
        made.moved(&canister(None), 3);
        assert_eq!([made.of("a"), made.of("b"), made.of("c")], [3, 3, 3]);
        made.moved(&canister(Some(&["c"])), 4);
        assert_eq!([made.of("a"), made.of("c")], [3, 4]);
    }
}
