//! A form tool declared and rendered with its canister part spliced in (`bus::splice`) is the
//! tool declared and rendered whole, byte for byte in every format, its declaration checks
//! included: for the packs and for forms near strict mode's enum budget, on any set of
//! canisters (none, one, many, past the description's bound, past the enum budget, the same
//! canister twice), and for a form whose own words hold the hole. The splice is compared on
//! parts of every size, and so is `form_tool` (which renders a part of fewer than four
//! canisters whole). A tool kept with its hole and filled with another part of its form
//! (`splice::refill`, what a catalog does when canisters change) is the tool declared and
//! rendered for that part, or refused when the part does not agree on a ref the tool read.

mod common;
use candid::Principal;
use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tool_host_core::bus::kept::{Rendered, FORMATS};
use tool_host_core::bus::splice::{
    decl_issues, form_tool, form_tool_holed, form_tool_parted, refill, refill_text, review_decl,
    spliced_tool, tool_issues, with_part_of,
};
use tool_host_core::bus::{check_decl, decl_of_plan_for, page, ToolFormat};
use tool_host_core::packs::pack;
use tool_host_core::plan::{build_tool_plans, FormRef, ToolPlans};
use tool_host_core::read::Canister;
use tool_host_core::schema::{FormCanisters, PartShapes};

fn canister(
    n: u64,
    label: Option<&str>,
    decimals: Option<u64>,
    forms: Option<&[&str]>,
) -> Canister {
    let mut refs = BTreeMap::new();
    if let Some(d) = decimals {
        refs.insert("query:icrc1_decimals".to_string(), json!(d));
        refs.insert("query:icrc1_symbol".to_string(), json!("TKA"));
    }
    Canister {
        id: Principal::from_slice(&n.to_be_bytes()),
        label: label.map(str::to_string),
        refs,
        forms: forms.map(|f| f.iter().map(|s| s.to_string()).collect()),
    }
}

/// Every tool of `plans` on `canisters`: spliced as the whole (the splice itself, and
/// `form_tool`). Returns how many tools the splice made (the others hold the hole's texts).
fn check_same(plans: &ToolPlans, canisters: &[Canister]) -> usize {
    let mut made = 0;
    for p in plans.plans.values() {
        let part = FormCanisters::new(&p.form.id, canisters);
        let whole = decl_of_plan_for(p, &part);
        let rendered = Rendered::new(&whole);
        let spliced = spliced_tool(p, &part);
        made += spliced.is_some() as usize;
        let ways = spliced
            .map(|s| ("spliced", s))
            .into_iter()
            .chain([("form_tool", form_tool(p, &part))]);
        for (how, (d, r)) in ways {
            let n = canisters.len();
            assert_eq!(d, whole, "{} on {n} canisters, {how}: declaration", p.name);
            for f in FORMATS {
                let text = r.text(f);
                assert_eq!(
                    text,
                    rendered.text(f),
                    "{} on {n} canisters, {how}, {f:?}",
                    p.name
                );
                // As the bus renders it (not only as a text kept whole gives it).
                assert_eq!(text, page::render_one(&whole, f), "{} {how}, {f:?}", p.name);
            }
            assert_eq!(r, rendered);
        }
        let want = check_decl(&whole).err().unwrap_or_default();
        let review = review_decl(p, &part);
        assert_eq!(review.name, whole.name);
        assert_eq!(review.description, whole.description);
        assert_eq!(decl_issues(&review, &part), want, "{} issues", p.name);
    }
    made
}

/// Every tool of `plans` made on `from` and kept with its hole, then filled with its part on
/// `to`: what `form_tool` makes on `to`, byte for byte, or refused. Returns how many were
/// filled and how many refused.
fn check_refill(plans: &ToolPlans, from: &[Canister], to: &[Canister]) -> (usize, usize) {
    let (mut filled, mut refused) = (0, 0);
    // One part per form, shared by its tools, as a catalog does (a ref asked by one tool is
    // known to the next).
    let mut froms = BTreeMap::new();
    let mut tos = BTreeMap::new();
    for p in plans.plans.values() {
        let id = p.form.id.as_str();
        let kept_on = froms
            .entry(id)
            .or_insert_with(|| FormCanisters::new(id, from));
        let part = tos.entry(id).or_insert_with(|| FormCanisters::new(id, to));
        // A review kept from `from` and asked on `to` finds what a review on `to` alone does.
        let mut reviewed = None;
        let (n, m) = (from.len(), to.len());
        assert_eq!(
            tool_issues(p, kept_on, &mut reviewed),
            decl_issues(&review_decl(p, kept_on), kept_on),
            "{} on {n} canisters: issues",
            p.name
        );
        let alone = FormCanisters::new(id, to);
        assert_eq!(
            tool_issues(p, part, &mut reviewed),
            decl_issues(&review_decl(p, &alone), &alone),
            "{} from {n} to {m} canisters: issues",
            p.name
        );
        let (whole, text, holed) = form_tool_holed(p, kept_on);
        let Some(holed) = holed else {
            continue;
        };
        // As a catalog keeps it: the declaration with its hole, and the new part's texts.
        let (holed_decl, _, _) = form_tool_parted(p, kept_on);
        let parted =
            refill_text(&holed, &text, part).map(|t| (with_part_of(&holed_decl, part.schema()), t));
        let refilled = refill(&holed, (&whole, &text), part);
        assert_eq!(
            refilled, parted,
            "{} from {n} to {m}: as a catalog keeps it",
            p.name
        );
        let Some((d, r)) = refilled else {
            refused += 1;
            continue;
        };
        filled += 1;
        let (want, rendered) = form_tool(p, &FormCanisters::new(id, to));
        let (n, m) = (from.len(), to.len());
        assert_eq!(d, want, "{} from {n} to {m} canisters: declaration", p.name);
        assert_eq!(d.input_schema.to_string(), want.input_schema.to_string());
        for f in FORMATS {
            assert_eq!(
                r.text(f),
                rendered.text(f),
                "{} from {n} to {m} canisters, {f:?}",
                p.name
            );
        }
        assert_eq!(r, rendered);
    }
    (filled, refused)
}

/// `n` canisters whose symbol is too long for an amount's description.
fn long_symbol(n: u64) -> Vec<Canister> {
    (0..n)
        .map(|i| {
            let mut c = canister(i, None, Some(8), None);
            c.refs
                .insert("query:icrc1_symbol".to_string(), json!("X".repeat(990)));
            c
        })
        .collect()
}

/// Whether every canister of the set that applies to a pack has the same decimals and symbol
/// (and so every pack tool reads refs the canisters agree on), and there are four or more.
fn agree_on_eight(set: &[Canister]) -> bool {
    set.len() >= 4
        && set.iter().all(|c| {
            c.forms.is_none()
                && c.refs.get("query:icrc1_decimals") == Some(&json!(8))
                && c.refs.get("query:icrc1_symbol") == Some(&json!("TKA"))
        })
}

fn packs() -> ToolPlans {
    build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()])
}

#[test]
fn the_packs_on_every_kind_of_canister_set() {
    let plans = packs();
    let long = "L".repeat(120);
    let sets: Vec<Vec<Canister>> = vec![
        vec![],
        vec![ledger()],
        vec![canister(1, None, None, None)],
        vec![
            canister(1, Some("A"), Some(8), None),
            canister(2, Some("B \"quoted\" \u{1F600}"), Some(8), None),
            canister(3, None, Some(6), None),
        ],
        // Applying to one pack only, and to none.
        vec![
            canister(1, Some("A"), Some(8), Some(&["icrc1"])),
            canister(2, Some("B"), Some(8), Some(&["icrc2"])),
            canister(3, Some("C"), Some(8), Some(&["other"])),
        ],
        // Past the description's bound.
        (0..40)
            .map(|i| canister(i, Some(&long), Some(8), None))
            .collect(),
        (0..100).map(|i| canister(i, None, Some(8), None)).collect(),
        // The same canister twice: its enum has an option twice (a check's issue).
        vec![
            canister(7, Some("A"), Some(8), None),
            canister(7, Some("A"), Some(8), None),
        ],
        // A label that is blank: not an enum option, nothing to refuse.
        vec![canister(9, Some("  "), None, None)],
        // Four to ten canisters (from four `form_tool` splices too): labels of every kind,
        // refs that disagree, the same canister twice, forms applying to four and to three.
        vec![
            canister(1, Some("A"), Some(8), None),
            canister(2, Some("B \"quoted\" \u{1F600}"), Some(8), None),
            canister(3, None, Some(6), None),
            canister(4, Some("  "), None, None),
        ],
        vec![
            canister(7, Some("A"), Some(8), None),
            canister(7, Some("A"), Some(8), None),
            canister(8, None, Some(8), None),
            canister(9, Some("C"), Some(8), None),
        ],
        (0..7)
            .map(|i| {
                let forms: &[&str] = if i < 4 { &["icrc1"] } else { &["icrc2"] };
                canister(i, Some("T"), Some(8), Some(forms))
            })
            .collect(),
        vec![
            canister(1, Some("\u{1}canister_id\u{1}"), Some(8), None),
            canister(
                2,
                Some("(string, required): \u{1}canister_id\u{1}"),
                Some(8),
                None,
            ),
            canister(
                3,
                Some("{\"description\":\"\\u0001canister_id\\u0001\",\"type\":\"string\"}"),
                Some(8),
                None,
            ),
            canister(4, Some("back\\slash\nline \u{7f} \u{2028}"), Some(8), None),
            canister(5, Some("`code` *em*"), Some(8), None),
        ],
        // Ten labelled canisters whose description is cut (multibyte labels past the bound).
        (0..10)
            .map(|i| canister(i, Some(&"é".repeat(60)), Some(8), None))
            .collect(),
        // A symbol that puts every amount's description past its bound (a check's issue in
        // the tool's own words, not in its part), on four canisters and on five.
        long_symbol(4),
        long_symbol(5),
    ];
    for set in &sets {
        // Every pack tool is spliced (the hole is found in every text), whatever the size.
        assert_eq!(
            check_same(&plans, set),
            plans.plans.len(),
            "{} canisters",
            set.len()
        );
    }
    // Each set's tools kept and filled with every other set's part.
    let (mut filled, mut refused) = (0, 0);
    for from in &sets {
        for to in &sets {
            let (f, r) = check_refill(&plans, from, to);
            filled += f;
            refused += r;
            if agree_on_eight(from) && agree_on_eight(to) {
                assert_eq!(r, 0, "{} to {} canisters: refused", from.len(), to.len());
            }
        }
    }
    assert!(
        filled > 500 && refused > 500,
        "{filled} filled, {refused} refused"
    );
}

/// A tool kept on canisters that agree on the decimals is refused another part whose
/// canisters do not (its description says the decimals), filled one where they still do.
#[test]
fn a_part_that_disagrees_on_a_ref_read_is_refused() {
    let plans = packs();
    let agreeing: Vec<Canister> = (0..5).map(|i| canister(i, None, Some(8), None)).collect();
    let mut more = agreeing.clone();
    more.push(canister(9, Some("N"), Some(8), None));
    let mut other = agreeing.clone();
    other.push(canister(9, Some("N"), Some(6), None));
    let (filled, refused) = check_refill(&plans, &agreeing, &more);
    assert_eq!((filled, refused), (plans.plans.len(), 0));
    let (filled, refused) = check_refill(&plans, &agreeing, &other);
    assert!(
        refused > 0 && filled > 0,
        "{filled} filled, {refused} refused"
    );
    // Fewer than four canisters: rendered whole, never filled.
    assert_eq!(check_refill(&plans, &agreeing, &agreeing[..3]).0, 0);
}

/// A tool filled again and again (each time from the declaration and texts the last filling
/// made, as a catalog keeps them) is the tool made for the last part.
#[test]
fn a_tool_filled_again_and_again_is_the_last_parts() {
    let plans = packs();
    let sets: Vec<Vec<Canister>> = (4..9u64)
        .map(|n| {
            (0..n)
                .map(|i| canister(i, Some(&format!("T{n}")), Some(8), None))
                .collect()
        })
        .collect();
    for p in plans.plans.values() {
        let (mut d, mut r, holed) = form_tool_holed(p, &FormCanisters::new(&p.form.id, &sets[0]));
        let holed = holed.expect("spliced");
        let mut reviewed = None;
        for (k, set) in sets.iter().chain([&long_symbol(6), &sets[0]]).enumerate() {
            // Reviewed again and again, the refs read changing and back: a fresh review's.
            let part = FormCanisters::new(&p.form.id, set);
            let alone = FormCanisters::new(&p.form.id, set);
            let want = decl_issues(&review_decl(p, &alone), &alone);
            assert_eq!(
                tool_issues(p, &part, &mut reviewed),
                want,
                "{} review {k}",
                p.name
            );
        }
        for set in &sets[1..] {
            let part = FormCanisters::new(&p.form.id, set);
            (d, r) = refill(&holed, (&d, &r), &part).expect("the refs agree");
            let (want, rendered) = form_tool(p, &part);
            assert_eq!(d, want, "{} on {} canisters", p.name, set.len());
            assert_eq!(r, rendered, "{} on {} canisters", p.name, set.len());
        }
    }
}

/// A form whose inputs hold `others` enum values besides the canisters' (bools: `true` and
/// `false`; an optional one `null` too) on `n` canisters: strict mode's budget of 1 000 enum
/// values is met or passed by the canisters' enum with the rest, wherever the rest is (an
/// input sorting before `canister_id` or after it, nested in a record or an array's items).
#[test]
fn the_enum_budget_counts_the_part_with_the_rest() {
    let bool_ = || json!({ "type": "bool" });
    let cases: Vec<(Vec<Value>, usize)> = vec![
        (vec![], 0),
        (vec![json!({ "name": "flag0", "type": "bool" })], 2),
        (
            (0..3)
                .map(|i| json!({ "name": format!("flag{i}"), "type": "bool" }))
                .collect(),
            6,
        ),
        // Before `canister_id`, and no enum after it.
        (vec![json!({ "name": "a_flag", "type": "bool" })], 2),
        // Optional: `null` is an option too.
        (
            vec![json!({ "name": "maybe", "type": "opt", "inner": bool_() })],
            3,
        ),
        (
            vec![
                json!({ "name": "b", "type": "opt", "inner": bool_() }),
                json!({ "name": "z", "type": "bool" }),
            ],
            5,
        ),
        // Nested.
        (
            vec![
                json!({ "name": "inner", "type": "record", "fields": [{ "name": "f", "type": "bool" }, { "name": "g", "type": "bool" }] }),
            ],
            4,
        ),
        (
            vec![json!({ "name": "list", "type": "vec", "inner": bool_() })],
            2,
        ),
    ];
    for (fields, others) in cases {
        let plans = plans(
            json!({ "t": { "mode": "query", "args": [{ "type": "record", "fields": fields }], "results": [{ "type": "text" }] } }),
            json!({}),
        );
        for total in [998usize, 999, 1000, 1001] {
            let n = total - others;
            let set: Vec<Canister> = (0..n as u64)
                .map(|i| canister(i, None, None, None))
                .collect();
            check_same(&plans, &set);
            // Kept on a part within the budget or past it, filled with this one.
            for from in [990usize, 1001] {
                let from: Vec<Canister> = (0..(from - others) as u64)
                    .map(|i| canister(i, None, None, None))
                    .collect();
                assert_eq!(check_refill(&plans, &from, &set), (1, 0));
            }
            let p = &plans.plans["t"];
            let (_, r) = form_tool(p, &FormCanisters::new("t", &set));
            let strict = r.text(ToolFormat::OpenAi).contains("\"strict\":true");
            assert_eq!(
                strict,
                total <= 1000,
                "{others} other options on {n} canisters"
            );
        }
    }
}

/// A form whose words hold the hole's texts: the tool is declared and rendered whole.
#[test]
fn a_form_whose_words_hold_the_hole_is_rendered_whole() {
    for words in [
        "Do \u{1}canister_id\u{1} it",
        "{\"description\":\"\\u0001canister_id\\u0001\",\"type\":\"string\"}",
        "(string, required): \u{1}canister_id\u{1}",
    ] {
        let methods = json!({
            "t": { "mode": "query", "describe": words, "args": [{ "type": "record", "fields": [
                { "name": "note", "type": "text", "describe": words }
            ] }], "results": [{ "type": "text" }] }
        });
        let f =
            tool_host_core::form::parse_form(form_json(methods, json!({})).to_string().as_bytes())
                .unwrap_or_else(|p| panic!("{p:?}"));
        let plans = build_tool_plans(&[FormRef {
            id: "t".into(),
            form: std::sync::Arc::new(f),
        }]);
        // Four canisters or more: `form_tool` tries the splice, finds the hole twice, and
        // renders the tool whole.
        let set = [
            ledger(),
            canister(5, Some(words), None, None),
            canister(6, None, None, None),
            canister(7, None, None, None),
        ];
        let p = &plans.plans["t"];
        let (d, _) = form_tool(p, &FormCanisters::new("t", &set));
        assert!(
            d.description.contains(words)
                || d.input_schema
                    .to_string()
                    .contains(&json!(words).to_string()),
            "{d:?}"
        );
        check_same(&plans, &set);
    }
}

/// A label of any text, or one holding the hole's texts (a ledger chooses its own symbol).
/// The forms a drawn canister names: every form (none named), `icrc1`, `icrc2`, or both.
fn forms_of(n: u8) -> Option<&'static [&'static str]> {
    match n {
        0 => None,
        1 => Some(&["icrc1"]),
        2 => Some(&["icrc2"]),
        _ => Some(&["icrc1", "icrc2"]),
    }
}

fn label() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,24}",
        Just("\u{1}canister_id\u{1}".to_string()),
        Just("(string, required): \u{1}canister_id\u{1}".to_string()),
        Just("{\"description\":\"\\u0001canister_id\\u0001\",\"type\":\"string\"}".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any set of canisters: labels of any text, refs that agree or not, forms that apply or not.
    #[test]
    fn any_canister_set_splices_as_the_whole(
        set in prop::collection::vec(
            (0u64..40, prop::option::of(label()), prop::option::of(0u64..40), 0u8..4),
            0..60,
        )
    ) {
        let plans = packs();
        let set: Vec<Canister> = set
            .iter()
            .map(|(n, label, decimals, forms)| {
                canister(*n, label.as_deref(), *decimals, forms_of(*forms))
            })
            .collect();
        check_same(&plans, &set);
        // Kept on the first half (or the whole) and filled with the whole (or the first half).
        let half = &set[..set.len() / 2];
        check_refill(&plans, half, &set);
        check_refill(&plans, &set, half);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Parts taken from kept shapes, over sets of canisters one after another (added, taken
    /// away, labelled again, of other forms), are those made fresh: schema and every tool's
    /// renderings, and the declaration checks' issues. Forms over the same canisters share one
    /// shape.
    #[test]
    fn parts_from_kept_shapes_are_fresh_ones(
        sets in prop::collection::vec(
            prop::collection::vec(
                (
                    0u64..6,
                    prop::option::of(prop_oneof![Just("TKA"), Just("TKB"), Just("T"), Just("TKBB")]),
                    0u8..4,
                ),
                0..8,
            ),
            1..6,
        )
    ) {
        let plans = packs();
        let shapes = PartShapes::default();
        for set in &sets {
            let set: Vec<Canister> = set
                .iter()
                .map(|(n, label, forms)| {
                    canister(*n, *label, Some(8), forms_of(*forms))
                })
                .collect();
            let texts: Vec<String> = set.iter().map(|c| c.id.to_text()).collect();
            let mut made = BTreeMap::new();
            for p in plans.plans.values() {
                let kept = FormCanisters::with_shapes(&p.form.id, &set, &texts, &shapes);
                let fresh = FormCanisters::new(&p.form.id, &set);
                prop_assert_eq!(kept.schema(), fresh.schema());
                prop_assert_eq!(form_tool(p, &kept), form_tool(p, &fresh), "{}", p.name);
                // The part's own checks, kept with the shape (a canister twice is an issue).
                prop_assert_eq!(
                    tool_issues(p, &kept, &mut None),
                    tool_issues(p, &fresh, &mut None)
                );
                prop_assert_eq!(
                    decl_issues(&review_decl(p, &kept), &kept),
                    decl_issues(&review_decl(p, &fresh), &fresh)
                );
                made.insert(p.form.id.clone(), kept.schema_rc());
            }
            let applies = |form: &str| -> Vec<(Principal, Option<String>)> {
                set.iter()
                    .filter(|c| c.applies_to(form))
                    .map(|c| (c.id, c.label.clone()))
                    .collect()
            };
            if applies("icrc1") == applies("icrc2") {
                prop_assert!(std::rc::Rc::ptr_eq(&made["icrc1"], &made["icrc2"]));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Sets grown one canister at a time, anywhere among them (labelled with any text, of
    /// other forms, sometimes a canister given twice), as registrations grow a form's
    /// canisters: each part is taken from the kept shape of the set before, its enum and texts
    /// with the new canister's entry put in, and is the part made fresh (schema, every tool's
    /// renderings in every format, the checks' issues).
    #[test]
    fn parts_grown_by_one_canister_are_fresh_ones(
        start in prop::collection::vec((0u64..1000, prop::option::of(label())), 0..8),
        adds in prop::collection::vec(
            (0u64..1000, prop::option::of(label()), 0u8..4, any::<prop::sample::Index>()),
            1..10,
        )
    ) {
        let plans = packs();
        let shapes = PartShapes::default();
        let mut set: Vec<Canister> = start
            .iter()
            .map(|(n, label)| canister(*n, label.as_deref(), Some(8), None))
            .collect();
        let step = |set: &[Canister]| -> Result<(), TestCaseError> {
            let texts: Vec<String> = set.iter().map(|c| c.id.to_text()).collect();
            for p in plans.plans.values() {
                let kept = FormCanisters::with_shapes(&p.form.id, set, &texts, &shapes);
                let fresh = FormCanisters::new(&p.form.id, set);
                prop_assert_eq!(kept.schema(), fresh.schema());
                prop_assert_eq!(form_tool(p, &kept), form_tool(p, &fresh), "{}", p.name);
                prop_assert_eq!(
                    tool_issues(p, &kept, &mut None),
                    tool_issues(p, &fresh, &mut None)
                );
            }
            Ok(())
        };
        step(&set)?;
        for (n, label, forms, at) in &adds {
            let c = canister(*n, label.as_deref(), Some(8), forms_of(*forms));
            set.insert(at.index(set.len() + 1), c);
            step(&set)?;
        }
    }
}
