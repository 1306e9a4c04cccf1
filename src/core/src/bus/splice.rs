//! A form tool declared and rendered with its form's canister part spliced in. Every tool of a
//! form has the same `canister_id` property (the enum and description of every canister the
//! form applies to: `schema::FormCanisters`), so declaring and rendering each tool with it cost
//! each tool as much again per canister (most of registering the 100th ledger). Here the
//! part is written once per form in each format, each tool is declared and rendered with a
//! small hole where it goes, and the part's texts are put in the hole's place. The texts are
//! byte for byte those of the tool declared and rendered whole ([`Rendered::new`] of
//! [`decl_of_plan_for`]); where the hole is not found exactly once in a text (a form whose
//! words hold it), the tool is declared and rendered whole.

use super::decl::{decl_holed, decl_of_plan_for, DeclIssue, ToolDecl};
use super::kept::Rendered;
use super::{check, markdown, strict};
use crate::plan::{ToolPlan, CANISTER_PARAM};
use crate::schema::{canister_hole, FormCanisters};
use memchr::memmem::Finder;
use serde_json::Value;
use std::rc::Rc;

/// A form's canister part as each format writes it, made once per set of canisters (kept with
/// its `schema::PartShape`).
pub(crate) struct PartTexts {
    /// The property's schema, compact (MCP, Anthropic, JSON Schema and non-strict OpenAI).
    json: Rc<str>,
    /// Its strict form, compact; `None` when it has none on its own (then no tool has one).
    strict: Option<Rc<str>>,
    /// Its Markdown line after the name.
    markdown: Rc<str>,
    /// Its enum options, counted against strict mode's budget.
    enum_values: usize,
    /// Where the enum's first option begins in `json` and in `markdown` (a part of one
    /// canister more is made by putting its option in: [`one_more`]).
    enum_at: Option<(usize, usize)>,
    /// The hole's texts, made once with the part's.
    holes: Holes,
}

/// The hole's texts per format, each ready to be searched for.
#[derive(Clone)]
struct Holes {
    json: Finder<'static>,
    markdown: Finder<'static>,
}

fn holes() -> Holes {
    let hole = canister_hole();
    let json = serde_json::to_string(&hole).unwrap_or_default();
    let markdown = markdown::property_rest(&hole, "required");
    Holes {
        json: Finder::new(json.as_bytes()).into_owned(),
        markdown: Finder::new(markdown.as_bytes()).into_owned(),
    }
}

fn texts<'p>(part: &'p FormCanisters) -> &'p PartTexts {
    part.shape().texts.get_or_init(|| {
        let schema = part.schema();
        let json = serde_json::to_string(schema).unwrap_or_default();
        let enum_values = schema
            .get("enum")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let (markdown, markdown_at) = markdown::property_rest_at(schema, "required");
        // The enum follows the description, a JSON string in which no quote stands alone: the
        // first `,"enum":[` is the member's.
        let json_at = memchr::memmem::find(json.as_bytes(), JSON_ENUM.as_bytes())
            .map(|i| i + JSON_ENUM.len());
        // Options are put in only among options written as they are (see `one_more`).
        let plain = schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.iter().all(|v| v.as_str().is_some_and(plain)));
        let json: Rc<str> = json.into();
        PartTexts {
            strict: strict_text(schema, &json, enum_values),
            json,
            markdown: markdown.into(),
            enum_values,
            enum_at: json_at.zip(markdown_at).filter(|_| plain),
            holes: holes(),
        }
    })
}

const JSON_ENUM: &str = ",\"enum\":[";

/// Whether enum option `t` is written as it is between quotes in JSON and in Markdown (a
/// principal's text is): `kept`'s texts in [`one_more`] hold only such options, so where each
/// begins is counted from their lengths.
fn plain(t: &str) -> bool {
    t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}
const JSON_TAIL: &str = "],\"type\":\"string\"}";

/// How a format writes a part's enum options: each between `open` and `close`, apart by `sep`.
struct Options {
    open: &'static str,
    close: &'static str,
    sep: &'static str,
}

/// `"id","id"`
const JSON_OPTIONS: Options = Options {
    open: "\"",
    close: "\"",
    sep: ",",
};

/// `` `"id"`, `"id"` ``
const MARKDOWN_OPTIONS: Options = Options {
    open: "`\"",
    close: "\"`",
    sep: ", ",
};

impl Options {
    /// `options` (`n` of them, written so) with `new` written in as the `k`th, after options
    /// `before` bytes long in all (their ids alone).
    fn put_in(
        &self,
        out: &mut String,
        options: &str,
        (k, n, before): (usize, usize, usize),
        new: &str,
    ) -> Option<()> {
        let push_new = |out: &mut String| {
            out.push_str(self.open);
            out.push_str(new);
            out.push_str(self.close);
        };
        if k < n {
            let at = before + k * (self.open.len() + self.close.len() + self.sep.len());
            out.push_str(options.get(..at)?);
            push_new(out);
            out.push_str(self.sep);
            out.push_str(options.get(at..)?);
        } else {
            out.push_str(options);
            out.push_str(self.sep);
            push_new(out);
        }
        Some(())
    }
}

/// The texts of a part of one canister more than `kept`'s: `schema` is its schema, whose
/// enum is `kept`'s with `new` put in at `k`. Each option is copied from `kept`'s texts and
/// `new`'s written in, the description written anew, rather than every option written again
/// (a principal's text is written as it is in both formats, between quotes). `None` where the
/// texts are not of the form made here: then they are made whole.
pub(crate) fn one_more(kept: &PartTexts, schema: &Value, k: usize, new: &str) -> Option<PartTexts> {
    let ids = schema.get("enum")?.as_array()?;
    let description = schema.get("description")?.as_str()?;
    let n = kept.enum_values;
    if ids.len() != n + 1 || k > n || !plain(new) {
        return None;
    }
    // The length of the options before the new one (each written as it is between quotes).
    let before: usize = ids[..k]
        .iter()
        .map(|v| v.as_str().map_or(0, str::len))
        .sum();
    let (json_at, md_at) = kept.enum_at?;
    let options = kept.json.strip_suffix(JSON_TAIL)?.get(json_at..)?;
    let mut json = String::with_capacity(kept.json.len() + description.len() + new.len() + 4);
    json.push_str("{\"description\":");
    json.push_str(&serde_json::to_string(description).ok()?);
    json.push_str(JSON_ENUM);
    let new_json_at = json.len();
    JSON_OPTIONS.put_in(&mut json, options, (k, n, before), new)?;
    json.push_str(JSON_TAIL);
    let options = kept.markdown.strip_suffix('.')?.get(md_at..)?;
    let mut md = markdown::property_head(schema, "required");
    md.push_str(markdown::ALLOWED);
    let new_md_at = md.len();
    MARKDOWN_OPTIONS.put_in(&mut md, options, (k, n, before), new)?;
    md.push('.');
    let json: Rc<str> = json.into();
    Some(PartTexts {
        strict: strict_text(schema, &json, n + 1),
        json,
        markdown: md.into(),
        enum_values: n + 1,
        enum_at: Some((new_json_at, new_md_at)),
        holes: kept.holes.clone(),
    })
}

/// The part's strict form as text. A schema of a string's keywords only, all in strict mode's
/// list, with no more options than its budget is its own strict form (`strict::node_of`
/// copies every member then), so its text is its JSON's: the enum is not copied to find it.
fn strict_text(schema: &Value, json: &Rc<str>, enum_values: usize) -> Option<Rc<str>> {
    let own = |k: &String| matches!(k.as_str(), "type" | "description" | "enum" | "pattern");
    let plain_string = schema.get("type").and_then(Value::as_str) == Some("string")
        && schema.as_object().is_some_and(|m| m.keys().all(own))
        && schema.get("enum").is_none_or(Value::is_array);
    if plain_string && enum_values <= strict::MAX_ENUM_VALUES {
        return Some(json.clone());
    }
    strict::property_node(schema).map(|s| serde_json::to_string(&s).unwrap_or_default().into())
}

/// Whether the declaration checks find nothing in the part (a review asks only this).
fn clean(part: &FormCanisters) -> bool {
    *part.shape().clean.get_or_init(|| {
        let path = format!("inputSchema.properties.{CANISTER_PARAM}");
        check::property_issues("", part.schema(), &path).is_empty()
    })
}

/// Whether `d` holds the hole where its canister part goes.
fn holed(d: &ToolDecl) -> bool {
    d.input_schema
        .get("properties")
        .and_then(|p| p.get(CANISTER_PARAM))
        .is_some_and(|s| *s == canister_hole())
}

/// `d` with `part`'s schema put in its `canister_id` property (where the hole was).
fn with_part(mut d: ToolDecl, part: &FormCanisters) -> ToolDecl {
    let slot = d
        .input_schema
        .get_mut("properties")
        .and_then(|p| p.get_mut(CANISTER_PARAM));
    if let Some(slot) = slot {
        *slot = part.schema().clone();
    }
    d
}

/// The canisters from which a form's part is spliced into its tools rather than rendered with
/// each: searching a tool's texts for the hole and copying them costs about what rendering
/// three or four canisters in each format does (measured on the IC cost model: with one ledger
/// the catalog cost 4 % more spliced, with ten 3 % less).
pub const SPLICE_FROM_CANISTERS: usize = 4;

/// A form tool's declaration and renderings: those of [`decl_of_plan_for`], made with the
/// canister part written once per form when it names [`SPLICE_FROM_CANISTERS`] or more
/// (`part` must be the plan's form's).
pub fn form_tool(plan: &ToolPlan, part: &FormCanisters) -> (ToolDecl, Rendered) {
    let (d, r, _) = form_tool_holed(plan, part);
    (d, r)
}

/// [`form_tool`], and the tool with a hole where its part goes when it was spliced, to fill
/// another part of the same form in later ([`refill`]).
pub fn form_tool_holed(
    plan: &ToolPlan,
    part: &FormCanisters,
) -> (ToolDecl, Rendered, Option<HoledTool>) {
    let (d, r, holed) = form_tool_parted(plan, part);
    match holed {
        Some(h) => (with_part(d, part), r, Some(h)),
        None => (d, r, None),
    }
}

/// [`form_tool_holed`] with the declaration left with its hole when the tool was spliced (the
/// part is the same for every tool of a form, and a copy of it in each declaration cost
/// registering the 100th ledger 0.6 M): [`with_part_of`] makes the tool's whole declaration
/// when one is asked for. The declaration is whole when the third is `None`.
pub fn form_tool_parted(
    plan: &ToolPlan,
    part: &FormCanisters,
) -> (ToolDecl, Rendered, Option<HoledTool>) {
    let spliced = splices(part).then(|| spliced(plan, part)).flatten();
    match spliced {
        Some((d, r, holed)) => (d, r, Some(holed)),
        None => {
            let d = decl_of_plan_for(plan, part);
            let r = Rendered::new(&d);
            (d, r, None)
        }
    }
}

/// A spliced form tool's renderings with the hole where its canister part goes (but its name
/// and description, which are its whole renderings'), and the refs
/// its declaration read from the part with the values the canisters agreed on. A catalog
/// keeps it with the tool: when the form's canisters change (a canister registered, a label)
/// but agree on those refs as before, the tool is the same but for its part, which
/// [`refill`] puts in place of the hole rather than declaring and rendering the tool again
/// (most of registering a canister).
#[derive(Debug)]
pub struct HoledTool {
    /// Made with the strict form the tool has with no part counted.
    text: Rendered,
    /// The enum values the strict form counts besides the part's.
    enum_rest: usize,
    agreed: Vec<(String, Option<serde_json::Value>)>,
}

/// The tool `holed` was made of (with its declaration and renderings `whole`, as
/// [`form_tool_holed`] gave them) declared and rendered for `part`, another part of the same
/// form: byte for byte [`form_tool`]'s. `None` when `part` does not agree on a ref the
/// declaration read as the earlier part did, or is not spliced: then the tool is declared
/// again.
pub fn refill(
    holed: &HoledTool,
    (whole, text): (&ToolDecl, &Rendered),
    part: &FormCanisters,
) -> Option<(ToolDecl, Rendered)> {
    let r = refill_text(holed, text, part)?;
    Some((with_part_of(whole, part.schema()), r))
}

/// [`refill`]'s renderings alone: a catalog keeps the tool's declaration with its hole
/// ([`form_tool_parted`]), the same for every part its canisters agree on.
pub fn refill_text(holed: &HoledTool, text: &Rendered, part: &FormCanisters) -> Option<Rendered> {
    if !splices(part) || holed.agreed.iter().any(|(k, v)| part.agreed(k) != *v) {
        return None;
    }
    let t = texts(part);
    holed.text.spliced(
        text.words(),
        &t.holes.json,
        &t.json,
        strict_part(t, holed.enum_rest),
        &t.holes.markdown,
        &t.markdown,
    )
}

/// The part's strict text when the tool's strict form holds with it (see `strict_schema_with`).
fn strict_part(t: &PartTexts, enum_rest: usize) -> Option<&Rc<str>> {
    t.strict
        .as_ref()
        .filter(|_| strict::part_fits(t.enum_values, enum_rest))
}

/// A copy of `whole` with `part` (a form's canister part's schema) in its `canister_id`
/// property, its own left out (copying it first would copy every canister's entry to drop
/// it). Of a declaration with a hole ([`form_tool_parted`]), the tool declared whole.
pub fn with_part_of(whole: &ToolDecl, part: &Value) -> ToolDecl {
    let properties = |props: &serde_json::Map<String, Value>| -> Value {
        let copy = |(name, s): (&String, &Value)| {
            let s = if name == CANISTER_PARAM { part } else { s };
            (name.clone(), s.clone())
        };
        Value::Object(props.iter().map(copy).collect())
    };
    let schema = match whole.input_schema.as_object() {
        Some(m) => Value::Object(
            m.iter()
                .map(|(k, v)| match v.as_object() {
                    Some(props) if k == "properties" => (k.clone(), properties(props)),
                    _ => (k.clone(), v.clone()),
                })
                .collect(),
        ),
        None => whole.input_schema.clone(),
    };
    whole.with_input_schema(schema)
}

/// Whether [`form_tool`] splices `part` (by the canisters it names).
fn splices(part: &FormCanisters) -> bool {
    let canisters = part
        .schema()
        .get("enum")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    canisters >= SPLICE_FROM_CANISTERS
}

/// The tool spliced whatever the part's size (what [`form_tool`] does from
/// [`SPLICE_FROM_CANISTERS`] canisters), `None` where a text does not hold the hole once: for
/// tests, which compare it with the tool made whole on parts of every size.
#[doc(hidden)]
pub fn spliced_tool(plan: &ToolPlan, part: &FormCanisters) -> Option<(ToolDecl, Rendered)> {
    spliced(plan, part).map(|(d, r, _)| (with_part(d, part), r))
}

/// The tool spliced, its declaration with the hole.
fn spliced(plan: &ToolPlan, part: &FormCanisters) -> Option<(ToolDecl, Rendered, HoledTool)> {
    let round = part.asking();
    let d = decl_holed(plan, part);
    if !holed(&d) {
        return None;
    }
    let agreed = part.asked_in(round);
    let t = texts(part);
    let h = &t.holes;
    // The whole schema is strict when the part is on its own and the rest is with the part's
    // options counted (see `strict_schema_counted`).
    let (strict, enum_rest) = match strict::strict_schema_counted(&d.input_schema) {
        Some((s, rest)) => (Some(s), rest),
        None => (None, 0),
    };
    let mut text = Rendered::unhashed(&d, strict);
    let words = text.take_words();
    let r = text.spliced(
        words,
        &h.json,
        &t.json,
        strict_part(t, enum_rest),
        &h.markdown,
        &t.markdown,
    )?;
    let holed = HoledTool {
        text,
        enum_rest,
        agreed,
    };
    Some((d, r, holed))
}

/// A form tool's declaration for a review (names, descriptions and [`decl_issues`]): its
/// canister part left as a hole where it can be, so that a review declares each tool without
/// copying the part.
pub fn review_decl(plan: &ToolPlan, part: &FormCanisters) -> ToolDecl {
    let d = decl_holed(plan, part);
    if holed(&d) {
        d
    } else {
        decl_of_plan_for(plan, part)
    }
}

/// The declaration checks' issues of a tool [`review_decl`] gave, as they are for the tool
/// declared whole: the part's own checked once per form.
pub fn decl_issues(d: &ToolDecl, part: &FormCanisters) -> Vec<DeclIssue> {
    if !holed(d) || clean(part) {
        // A hole has no issue of its own (a short description, no enum), and a clean part
        // none either: the rest are the whole declaration's.
        return check::issues(d);
    }
    check::issues(&with_part(d.clone(), part))
}

/// A form tool's declaration issues as a review found them on one part (those of the tool
/// declared with a hole where its part goes), and the refs its declaration read with the
/// values agreed on. A catalog keeps it with the form: registering a canister reviews each
/// of its forms' tools again, and on a part that agrees on those refs as before the tool is
/// declared as it was (most of what a registration's review cost: each tool declared and
/// checked again).
#[derive(Clone, Debug)]
pub struct ReviewedTool {
    agreed: Vec<(String, Option<Value>)>,
    issues: Vec<DeclIssue>,
}

/// The declaration checks' issues of `plan`'s tool on `part`: those of
/// [`decl_issues`] of [`review_decl`]. Taken from `kept` where it was reviewed on a part that
/// agreed on the refs it read as `part` does and `part`'s own checks find nothing; else the tool
/// is declared and checked, and `kept` is what was found (`None` for a tool declared whole).
pub fn tool_issues(
    plan: &ToolPlan,
    part: &FormCanisters,
    kept: &mut Option<ReviewedTool>,
) -> Vec<DeclIssue> {
    if let Some(k) = kept.as_ref() {
        if clean(part) && k.agreed.iter().all(|(r, v)| part.agreed(r) == *v) {
            return k.issues.clone();
        }
    }
    let round = part.asking();
    let d = decl_holed(plan, part);
    if !holed(&d) {
        *kept = None;
        return check::issues(&decl_of_plan_for(plan, part));
    }
    let own = check::issues(&d);
    let issues = if clean(part) {
        own.clone()
    } else {
        check::issues(&with_part(d, part))
    };
    *kept = Some(ReviewedTool {
        agreed: part.asked_in(round),
        issues: own,
    });
    issues
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::build_tool_plans;
    use crate::read::Canister;

    fn canisters(n: u64) -> Vec<Canister> {
        (0..n)
            .map(|i| Canister {
                id: candid::Principal::from_slice(&i.to_be_bytes()),
                label: Some(format!("T{i}")),
                refs: Default::default(),
                forms: None,
            })
            .collect()
    }

    /// The packs' tools are spliced (not declared and rendered whole), on no canister too.
    #[test]
    fn the_packs_tools_are_spliced() {
        let plans = build_tool_plans(&[
            crate::packs::pack("icrc1").unwrap(),
            crate::packs::pack("icrc2").unwrap(),
        ]);
        for n in [0, 1, 100] {
            let set = canisters(n);
            for p in plans.plans.values() {
                let part = FormCanisters::new(&p.form.id, &set);
                assert!(spliced(p, &part).is_some(), "{} on {n}", p.name);
                assert!(holed(&review_decl(p, &part)), "{} on {n}", p.name);
            }
        }
    }

    /// Parts of fewer than four canisters are rendered with each tool, of four or more spliced.
    #[test]
    fn the_threshold_is_four_canisters() {
        for n in 0..8u64 {
            let set = canisters(n);
            let part = FormCanisters::new("icrc1", &set);
            assert_eq!(splices(&part), n >= 4, "{n}");
        }
    }

    /// A tool whose description holds the hole's Markdown is declared and rendered whole.
    #[test]
    fn words_holding_the_hole_are_not_spliced() {
        let words = markdown::property_rest(&canister_hole(), "required");
        let json = serde_json::json!({ "format": "candid-profile-resolved", "format_version": 0,
            "name": "t", "types": {}, "methods": { "t": { "mode": "query", "describe": words,
            "args": [], "results": [{ "type": "text" }] } } });
        let form = crate::form::parse_form(json.to_string().as_bytes()).unwrap();
        let plans = build_tool_plans(&[crate::plan::FormRef {
            id: "t".into(),
            form: std::sync::Arc::new(form),
        }]);
        let set = canisters(2);
        let p = &plans.plans["t"];
        let part = FormCanisters::new("t", &set);
        assert!(spliced(p, &part).is_none());
        assert_eq!(form_tool(p, &part).0, decl_of_plan_for(p, &part));
    }

    /// What a part's texts are, to compare one put together with one made fresh.
    fn texts_of(
        t: &PartTexts,
    ) -> (
        String,
        Option<String>,
        String,
        usize,
        Option<(usize, usize)>,
    ) {
        (
            t.json.to_string(),
            t.strict.as_deref().map(str::to_string),
            t.markdown.to_string(),
            t.enum_values,
            t.enum_at,
        )
    }

    /// A canister of a principal `len` bytes long (1 to 29: its text 8 to 63 characters).
    fn of_length(n: u8, len: usize, label: Option<&str>) -> Canister {
        let id = vec![n; len.clamp(1, 29)];
        Canister {
            id: candid::Principal::from_slice(&id),
            label: label.map(str::to_string),
            refs: Default::default(),
            forms: None,
        }
    }

    /// The part over `set` through `shapes`, and whether its texts were there before it was
    /// used (put together from a kept shape's: [`one_more`]).
    fn part_texts(set: &[Canister], shapes: &crate::schema::PartShapes) -> (PartTexts, bool) {
        let ids: Vec<String> = set.iter().map(|c| c.id.to_text()).collect();
        let part = FormCanisters::with_shapes("f", set, &ids, shapes);
        let put_together = part.shape().texts.get().is_some();
        let t = texts(&part);
        let copy = PartTexts {
            json: t.json.clone(),
            strict: t.strict.clone(),
            markdown: t.markdown.clone(),
            enum_values: t.enum_values,
            enum_at: t.enum_at,
            holes: t.holes.clone(),
        };
        (copy, put_together)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// Sets grown one canister at a time, principals of every length among them, labels
        /// of any text: each part's texts are put together from the kept ones (never made
        /// fresh), and are byte for byte those made fresh.
        #[test]
        fn texts_put_together_are_texts_made_fresh(
            start in proptest::collection::vec((proptest::prelude::any::<u8>(), 1usize..30,
                proptest::option::of("\\PC{0,12}|\"|\\\\| x ")), 1..6),
            adds in proptest::collection::vec((proptest::prelude::any::<u8>(), 1usize..30,
                proptest::option::of("\\PC{0,12}|\"|\\\\| x "),
                proptest::prelude::any::<proptest::sample::Index>()), 1..12),
        ) {
            let shapes = crate::schema::PartShapes::default();
            let mut set: Vec<Canister> =
                start.iter().map(|(n, len, l)| of_length(*n, *len, l.as_deref())).collect();
            part_texts(&set, &shapes);
            for (n, len, l, at) in &adds {
                let c = of_length(*n, *len, l.as_deref());
                let before = set.len();
                set.insert(at.index(set.len() + 1), c);
                let (kept, put_together) = part_texts(&set, &shapes);
                let (fresh, _) = part_texts(&set, &crate::schema::PartShapes::default());
                proptest::prop_assert!(put_together, "from {before} canisters");
                proptest::prop_assert_eq!(texts_of(&kept), texts_of(&fresh));
            }
        }
    }

    /// From 1 000 options (strict mode's budget) to 1 001, and back to a fresh 1 000: the
    /// strict text is the JSON's while the options fit, and the property's own strict form
    /// past them, put together or made fresh.
    #[test]
    fn texts_put_together_past_strict_modes_budget() {
        let set: Vec<Canister> = (0..1001u64)
            .map(|i| Canister {
                id: candid::Principal::from_slice(&(i * 7919).to_be_bytes()),
                label: None,
                refs: Default::default(),
                forms: None,
            })
            .collect();
        let shapes = crate::schema::PartShapes::default();
        let (at_budget, _) = part_texts(&set[..1000], &shapes);
        assert_eq!(at_budget.strict.as_deref(), Some(&*at_budget.json));
        let (past, put_together) = part_texts(&set, &shapes);
        let (fresh, _) = part_texts(&set, &crate::schema::PartShapes::default());
        assert!(put_together);
        assert_eq!(texts_of(&past), texts_of(&fresh));
        assert_ne!(past.strict.as_deref(), Some(&*past.json));
    }
}
