//! MCP tool definitions: a JSON Schema for each tool's inputs, with words that say how each is
//! written (the canisters' decimals and symbol filled in when they agree), and annotations.
//! Keys are sorted (serde_json's map), so the bytes are deterministic.

use crate::form::*;
use crate::plan::{tag_of, Reader, ToolKind, ToolPlan, ToolPlans, CANISTER_PARAM, COMMIT_TOOL};
use crate::read::{Canister, MAX_VEC_ELEMENTS};
use crate::text::{account, amount, bytes, integer, principal, textual::DEFAULT_MAX_TEXT, time};
use serde_json::{json, Map, Value};
use std::rc::Rc;

pub const JSON_SCHEMA_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Every tool's definition, sorted by name; `commit` when there is something to prepare.
pub fn tool_definitions(plans: &ToolPlans, canisters: &[Canister]) -> Vec<Value> {
    let mut defs: Vec<Value> = plans
        .plans
        .values()
        .map(|p| tool_definition(p, canisters))
        .collect();
    if plans.has_commit() {
        defs.push(commit_definition());
    }
    defs.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    defs
}

pub fn tool_definition(plan: &ToolPlan, canisters: &[Canister]) -> Value {
    tool_definition_for(plan, &FormCanisters::new(&plan.form.id, canisters))
}

/// What a tool's schema takes from the canisters its form applies to: the `canister_id`
/// property and the refs they agree on. It is the same for every tool of one form, so a
/// catalog works it out once per form rather than once per tool (with 100 canisters, most of a
/// declaration's cost: a principal's text, the enum, the description, each ref compared).
pub struct FormCanisters<'a> {
    form_id: String,
    applicable: Vec<&'a Canister>,
    shape: Rc<PartShape>,
    agreed: std::cell::RefCell<std::collections::BTreeMap<String, Agreed>>,
    /// The round of asking for refs now (see [`FormCanisters::asking`]).
    round: std::cell::Cell<u32>,
    /// Which making of its canisters this part is over ([`FormCanisters::made`]).
    made: Option<u64>,
}

impl<'a> FormCanisters<'a> {
    pub fn new(form_id: &str, canisters: &'a [Canister]) -> FormCanisters<'a> {
        let applicable: Vec<&Canister> =
            canisters.iter().filter(|c| c.applies_to(form_id)).collect();
        let texts: Vec<String> = applicable.iter().map(|c| c.id.to_text()).collect();
        let shape = Rc::new(PartShape::new(&applicable, &|i| &texts[i]));
        FormCanisters::of(form_id, applicable, shape)
    }

    /// [`FormCanisters::new`] with each canister's principal text given (`texts[i]` is
    /// `canisters[i].id.to_text()`: a catalog makes it once per canister, not per form), and
    /// the part's shape taken from `shapes` where one was made over the same canisters.
    pub fn with_shapes(
        form_id: &str,
        canisters: &'a [Canister],
        texts: &[String],
        shapes: &PartShapes,
    ) -> FormCanisters<'a> {
        debug_assert_eq!(canisters.len(), texts.len(), "a text per canister");
        let (applicable, at): (Vec<&Canister>, Vec<usize>) = canisters
            .iter()
            .enumerate()
            .filter(|(_, c)| c.applies_to(form_id))
            .map(|(i, c)| (c, i))
            .unzip();
        // Texts missing are made (a wrong one would be kept for every later part over the
        // same canisters: the catalog makes them with the canisters).
        let made: Vec<String>;
        let texts = if texts.len() == canisters.len() {
            texts
        } else {
            made = canisters.iter().map(|c| c.id.to_text()).collect();
            &made
        };
        let shape = shapes.shape(&applicable, &|i| &texts[at[i]]);
        FormCanisters::of(form_id, applicable, shape)
    }

    fn of(form_id: &str, applicable: Vec<&'a Canister>, shape: Rc<PartShape>) -> FormCanisters<'a> {
        FormCanisters {
            form_id: form_id.to_string(),
            applicable,
            shape,
            agreed: Default::default(),
            round: Default::default(),
            made: None,
        }
    }

    /// This part as over the making `made` of its canisters: a number its maker gives them
    /// anew whenever one of them changes (registered, removed, labelled or its refs read
    /// again), so that parts over the same canisters and number have the same refs. Such
    /// parts share the refs agreed on through their shape: the forms a registration reviews
    /// and the bus after it declares are mostly over the same canisters, and each worked
    /// every ref out again over every canister (~0.15 M at 100 canisters).
    pub fn made(mut self, made: u64) -> FormCanisters<'a> {
        self.made = Some(made);
        self
    }

    /// The `canister_id` property's schema.
    pub fn schema(&self) -> &Value {
        &self.shape.schema
    }

    /// [`FormCanisters::schema`], shared: a bus keeps it once per form beside the tools that
    /// hold its hole, and forms over the same canisters share it.
    pub fn schema_rc(&self) -> Rc<Value> {
        self.shape.schema.clone()
    }

    /// What is made of the part once, whatever the form (`bus::splice`).
    pub(crate) fn shape(&self) -> &PartShape {
        &self.shape
    }

    /// A ref's value when every canister the form applies to agrees on it (worked out once per
    /// ref), the ref noted as asked in this round.
    pub(crate) fn agreed(&self, src: &str) -> Option<Value> {
        let round = self.round.get();
        if let Some(a) = self.agreed.borrow_mut().get_mut(src) {
            a.round = round;
            return a.value.clone();
        }
        let shared = self.made.and_then(|made| self.shape.agreed(made, src));
        let value = shared.unwrap_or_else(|| {
            let mut vals = self.applicable.iter().map(|c| c.refs.get(src));
            let value = match vals.next() {
                Some(Some(first)) => vals.all(|v| v == Some(first)).then(|| first.clone()),
                _ => None,
            };
            if let Some(made) = self.made {
                self.shape.keep_agreed(made, src, &value);
            }
            value
        });
        let a = Agreed {
            value: value.clone(),
            round,
        };
        self.agreed.borrow_mut().insert(src.to_string(), a);
        value
    }

    /// A new round of asking for refs (one tool's declaration), so that what it read is known
    /// ([`FormCanisters::asked_in`]): `bus::splice` keeps it with the tool, and a later part
    /// that agrees on those refs declares the tool the same.
    pub(crate) fn asking(&self) -> u32 {
        let round = self.round.get() + 1;
        self.round.set(round);
        round
    }

    /// The refs asked for in `round`, with the values agreed on.
    pub(crate) fn asked_in(&self, round: u32) -> Vec<(String, Option<Value>)> {
        self.agreed
            .borrow()
            .iter()
            .filter(|(_, a)| a.round == round)
            .map(|(k, a)| (k.clone(), a.value.clone()))
            .collect()
    }
}

/// A ref's value the form's canisters agree on (`None`: they do not, or lack it), and the
/// last round it was asked in.
#[derive(Debug)]
struct Agreed {
    value: Option<Value>,
    round: u32,
}

/// A form's canister part as the canisters it applies to make it by their ids and labels (in
/// their order), not their refs: the same for every form over the same canisters. Made once
/// per such set where a catalog keeps [`PartShapes`]: a registration's review and the bus
/// after it, and every form the canister names, each made it again (with 100 canisters,
/// 0.16 M for the schema, 0.33 M for its texts and 0.19 M for its checks, each time).
pub struct PartShape {
    /// The canisters it was made over, to tell whether another set makes the same: each one's
    /// principal and where its label ends in `labels` (`None`: it has none).
    made_over: Vec<(candid::Principal, Option<u32>)>,
    /// Their labels, one after another (one copy rather than one a canister).
    labels: String,
    schema: Rc<Value>,
    /// The part as each format writes it, made on first use (`bus::splice`).
    pub(crate) texts: std::cell::OnceCell<crate::bus::splice::PartTexts>,
    /// Whether the declaration checks find nothing in the part, found on first use.
    pub(crate) clean: std::cell::OnceCell<bool>,
    /// The refs its canisters agree on (`None`: they do not), as of one making of them
    /// ([`FormCanisters::made`]); those of an earlier making are let go.
    agreed: std::cell::RefCell<(u64, std::collections::BTreeMap<String, Option<Value>>)>,
}

impl PartShape {
    /// The shape over `applicable` (`text(i)`: the `i`th one's principal as text).
    fn new<'t>(applicable: &[&Canister], text: &dyn Fn(usize) -> &'t str) -> PartShape {
        PartShape::of(applicable, canister_schema(applicable, text))
    }

    fn of(applicable: &[&Canister], schema: Value) -> PartShape {
        let mut labels = String::new();
        let made_over = applicable
            .iter()
            .map(|c| {
                let end = c.label.as_deref().map(|l| {
                    labels.push_str(l);
                    labels.len() as u32
                });
                (c.id, end)
            })
            .collect();
        PartShape {
            made_over,
            labels,
            schema: Rc::new(schema),
            texts: Default::default(),
            clean: Default::default(),
            agreed: Default::default(),
        }
    }

    /// The shape over `applicable` made from `kept`, made over the same canisters but one
    /// (a canister registered): its enum and texts with the new canister's entry put in
    /// rather than every canister's made and written again (with 100 canisters, 0.2 M for the
    /// schema and 0.2 M for its texts at every registration). `None` when `kept` is not
    /// such a shape.
    fn one_more<'t>(
        kept: &PartShape,
        applicable: &[&Canister],
        text: &dyn Fn(usize) -> &'t str,
    ) -> Option<PartShape> {
        if kept.made_over.is_empty() || applicable.len() != kept.made_over.len() + 1 {
            return None;
        }
        // The new canister is where the two first differ; the rest, one place on. (In one
        // walk, each entry taken in turn: its label begins where the last one's ended.)
        let mut entries = kept.entries().peekable();
        let mut new = None;
        for (i, c) in applicable.iter().enumerate() {
            if entries.peek().is_some_and(|e| e.is(c)) {
                entries.next();
            } else if new.is_none() {
                new = Some(i);
            } else {
                return None;
            }
        }
        let new = new?;
        let kept_ids = kept.schema.get("enum")?.as_array()?;
        let new_text = text(new);
        let k = kept_ids.partition_point(|v| v.as_str().is_some_and(|s| s < new_text));
        let mut ids = Vec::with_capacity(kept_ids.len() + 1);
        ids.extend_from_slice(&kept_ids[..k]);
        ids.push(Value::String(new_text.to_string()));
        ids.extend_from_slice(&kept_ids[k..]);
        let description = canister_description(applicable, text);
        let shape = PartShape::of(applicable, part_schema(description, ids));
        if let Some(t) = kept.texts.get() {
            if let Some(t) = crate::bus::splice::one_more(t, &shape.schema, k, new_text) {
                let _ = shape.texts.set(t);
            }
        }
        Some(shape)
    }

    /// The canisters it was made over, each by its principal and label.
    fn entries(&self) -> impl Iterator<Item = Entry<'_>> {
        let mut start = 0;
        self.made_over.iter().map(move |(id, end)| Entry {
            id,
            label: end.map(|end| {
                let l = self.labels.get(start..end as usize);
                start = end as usize;
                l
            }),
        })
    }

    /// Ref `src`'s agreed value as kept for the making `made` of the canisters (`None`: not
    /// kept).
    fn agreed(&self, made: u64, src: &str) -> Option<Option<Value>> {
        let agreed = self.agreed.borrow();
        (agreed.0 == made).then(|| agreed.1.get(src).cloned())?
    }

    fn keep_agreed(&self, made: u64, src: &str, value: &Option<Value>) {
        let mut agreed = self.agreed.borrow_mut();
        if agreed.0 != made {
            *agreed = (made, Default::default());
        }
        agreed.1.insert(src.to_string(), value.clone());
    }

    fn made_over(&self, applicable: &[&Canister]) -> bool {
        self.made_over.len() == applicable.len()
            && self.entries().zip(applicable).all(|(e, c)| e.is(c))
    }
}

/// A canister a [`PartShape`] was made over.
#[derive(Clone, Copy)]
struct Entry<'s> {
    id: &'s candid::Principal,
    /// `Some(None)`: a label not found where it was kept (then no canister's).
    label: Option<Option<&'s str>>,
}

impl Entry<'_> {
    fn is(&self, c: &Canister) -> bool {
        *self.id == c.id && self.label == c.label.as_deref().map(Some)
    }
}

/// The last few [`PartShape`]s made, most recent first: a catalog keeps them across its
/// rebuilds, and a part over the same canisters as one of them takes its shape.
#[derive(Default)]
pub struct PartShapes {
    kept: std::cell::RefCell<Vec<Rc<PartShape>>>,
}

impl PartShapes {
    /// How many are kept: the forms a registration reviews and the bus makes again are over
    /// one set of canisters or a few.
    pub const KEPT: usize = 8;

    /// The shape over `applicable` (`text(i)`: the `i`th one's principal as text): one kept,
    /// or put together from one kept over the same canisters but one, or made.
    fn shape<'t>(
        &self,
        applicable: &[&Canister],
        text: &dyn Fn(usize) -> &'t str,
    ) -> Rc<PartShape> {
        let mut kept = self.kept.borrow_mut();
        let shape = match kept.iter().position(|s| s.made_over(applicable)) {
            Some(i) => kept.remove(i),
            None => Rc::new(
                kept.iter()
                    .find_map(|s| PartShape::one_more(s, applicable, text))
                    .unwrap_or_else(|| PartShape::new(applicable, text)),
            ),
        };
        kept.insert(0, shape.clone());
        kept.truncate(Self::KEPT);
        shape
    }
}

/// What stands where a form's canister part goes in a tool declared to be rendered with the
/// part spliced in (`bus::splice`): a property schema whose texts are found in every format.
pub(crate) const HOLE_MARK: &str = "\u{1}canister_id\u{1}";

pub(crate) fn canister_hole() -> Value {
    json!({ "description": HOLE_MARK, "type": "string" })
}

/// [`tool_definition`] with its form's canister part worked out already (`plan`'s form must be
/// the one `part` was made for).
pub fn tool_definition_for(plan: &ToolPlan, part: &FormCanisters) -> Value {
    definition(plan, part, part.schema().clone())
}

/// [`tool_definition_for`] with [`canister_hole`] where the canister part goes.
pub(crate) fn tool_definition_holed(plan: &ToolPlan, part: &FormCanisters) -> Value {
    definition(plan, part, canister_hole())
}

fn definition(plan: &ToolPlan, part: &FormCanisters, canister: Value) -> Value {
    debug_assert_eq!(plan.form.id, part.form_id, "a part is its own form's");
    let words = Words { part };
    let mut props = Map::new();
    let mut required = vec![CANISTER_PARAM.to_string()];
    props.insert(CANISTER_PARAM.into(), canister);
    for p in &plan.params {
        let describe = tag_of(&plan.form.form, &p.node, |t| t.describe.as_ref()).cloned();
        let schema = words.schema(&p.reader, describe.as_deref());
        if p.optional {
            props.insert(p.name.clone(), nullable(schema));
        } else {
            props.insert(p.name.clone(), schema);
            required.push(p.name.clone());
        }
    }
    required.sort();
    let read = plan.kind == ToolKind::Read;
    let input = object([
        ("$schema", JSON_SCHEMA_DIALECT.into()),
        ("type", "object".into()),
        ("properties", Value::Object(props)),
        ("required", required.into()),
        ("additionalProperties", false.into()),
    ]);
    let annotations = json!({
        "title": plan.title,
        "readOnlyHint": read,
        "destructiveHint": !read && plan.effect.irreversible,
        "idempotentHint": true,
        "openWorldHint": true,
    });
    object([
        ("name", plan.name.as_str().into()),
        ("description", plan.description.as_str().into()),
        ("inputSchema", input),
        ("annotations", annotations),
    ])
}

/// A JSON object of these members, each moved in: `json!` serializes what it is given, so a
/// schema put into its parent by `json!` was copied again at every level above it (a tool of
/// 950 input positions eight records deep cost 70 M to declare).
fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// `schema`, or `null`.
fn or_null(schema: Value) -> Value {
    object([(
        "anyOf",
        Value::Array(vec![schema, json!({ "type": "null" })]),
    )])
}

pub fn commit_definition() -> Value {
    json!({
        "name": COMMIT_TOOL,
        "description": "Asks to send a prepared intent. Nothing is sent until the owner confirms that exact preview with a signed call: an agent's commit answers awaiting_confirmation with the preview the owner will be shown; the owner's own commit with the preview's digest is the confirmation and sends. A settled intent answers its outcome again without sending.",
        "inputSchema": {
            "$schema": JSON_SCHEMA_DIALECT,
            "type": "object",
            "properties": {
                "preview_id": { "type": "string", "description": "The preview_id of a prepared intent." },
                "digest": {
                    "type": "string",
                    "description": "The owner's confirmation: the SHA-256 of the preview's argument bytes, in hex.",
                    "pattern": "^[0-9a-f]{64}$"
                }
            },
            "required": ["preview_id"],
            "additionalProperties": false,
        },
        "annotations": {
            "title": "Commit a prepared intent",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": true,
            "openWorldHint": true,
        }
    })
}

fn canister_schema<'t>(applicable: &[&Canister], text: &dyn Fn(usize) -> &'t str) -> Value {
    if applicable.is_empty() {
        return json!({
            "type": "string",
            "description": "The canister to call, as principal text.",
            "pattern": principal::PRINCIPAL_PATTERN,
        });
    }
    let description = canister_description(applicable, text);
    let mut ids: Vec<&str> = (0..applicable.len()).map(text).collect();
    ids.sort_unstable();
    let ids = ids
        .into_iter()
        .map(|t| Value::String(t.to_string()))
        .collect();
    part_schema(description, ids)
}

/// The `canister_id` property of these canisters (`ids`: their principals' texts, in order).
/// Its strings moved into it, not copied again (`json!` serializes what it is given, copying
/// each string).
fn part_schema(description: String, ids: Vec<Value>) -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), Value::String("string".into()));
    schema.insert("description".into(), Value::String(description));
    schema.insert("enum".into(), Value::Array(ids));
    Value::Object(schema)
}

/// The longest `canister_id` description: the bus refuses a property description over 1 024
/// characters (OpenAI's bound), and a tool may apply to up to 1 024 canisters.
pub const MAX_CANISTER_DESCRIPTION_CHARS: usize = 900;

/// "The canister to call: <id> (<label>), …." while that fits its bound; past it, the
/// canisters that fit and how many more the enum lists (never a cut name). Each canister's
/// words are written only while they fit (a form may apply to 1 024 canisters; some 30 fit).
fn canister_description<'t>(applicable: &[&Canister], text: &dyn Fn(usize) -> &'t str) -> String {
    let items = || {
        applicable
            .iter()
            .enumerate()
            .map(|(i, c)| (text(i), c.label.as_deref()))
    };
    let item_chars = |(t, l): (&str, Option<&str>)| chars(t) + l.map_or(0, |l| chars(l) + 3);
    let push_item = |out: &mut String, (t, l): (&str, Option<&str>)| {
        out.push_str(t);
        if let Some(l) = l {
            out.push_str(" (");
            out.push_str(l);
            out.push(')');
        }
    };
    const LEAD: &str = "The canister to call: ";
    // The whole list, while it fits.
    let mut whole = String::from(LEAD);
    let mut whole_chars = LEAD.len();
    let mut fits = true;
    for (i, item) in items().enumerate() {
        let sep = if i == 0 { 0 } else { 2 };
        whole_chars += sep + item_chars(item);
        if whole_chars + 1 > MAX_CANISTER_DESCRIPTION_CHARS {
            fits = false;
            break;
        }
        if sep > 0 {
            whole.push_str(", ");
        }
        push_item(&mut whole, item);
    }
    if fits {
        whole.push('.');
        return whole;
    }
    let mut out = String::from(LEAD);
    // The characters in `out` so far, kept rather than counted again per item.
    let mut out_chars = LEAD.len();
    let count = applicable.len();
    for (i, item) in items().enumerate() {
        let more = count - i;
        let sep = if i == 0 { "" } else { ", " };
        let with = out_chars + sep.len() + item_chars(item);
        // Room for this one and for the tail that would follow it.
        let tail_after = format!(" and {} more: any value of the enum.", more - 1);
        // (6: room for the "," or "one of" that precedes the tail.)
        if with + tail_after.len() + 6 > MAX_CANISTER_DESCRIPTION_CHARS {
            out.push_str(if i == 0 { "one of" } else { "," });
            out.push_str(&format!(" and {more} more: any value of the enum."));
            return out;
        }
        out.push_str(sep);
        push_item(&mut out, item);
        out_chars = with;
    }
    out.push('.');
    out
}

/// A text's characters (a principal's text is ASCII: its bytes).
fn chars(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

struct Words<'a> {
    part: &'a FormCanisters<'a>,
}

impl Words<'_> {
    fn schema(&self, reader: &Reader, describe: Option<&str>) -> Value {
        let lead = describe
            .map(|d| format!("{} ", d.trim()))
            .unwrap_or_default();
        match reader {
            Reader::Amount {
                decimals, symbol, ..
            } => {
                let d = match decimals {
                    Dyn::Fixed(d) => Some(*d),
                    Dyn::From(src) => self
                        .part
                        .agreed(src)
                        .and_then(|v| v.as_u64())
                        .filter(|d| *d <= 38)
                        .map(|d| d as u8),
                };
                let s = match symbol {
                    Dyn::Fixed(s) => Some(s.clone()),
                    Dyn::From(src) => self
                        .part
                        .agreed(src)
                        .and_then(|v| v.as_str().map(str::to_string)),
                };
                let words = match (d, &s) {
                    (Some(d), Some(s)) => format!("An amount of {s} with at most {d} decimal places, such as \"1.5 {s}\" or \"1.5\"."),
                    (Some(d), None) => format!("An amount in the token's units with at most {d} decimal places, such as \"1.5\"."),
                    (None, Some(s)) => format!("An amount of {s}, such as \"1.5 {s}\", with at most as many decimal places as the token has."),
                    (None, None) => "An amount in the token's units, such as \"1.5\", with at most as many decimal places as the token has, optionally followed by its symbol.".to_string(),
                };
                let words = if s.is_some() {
                    format!("{words} The symbol may be written in either case.")
                } else {
                    words
                };
                json!({ "type": "string", "description": format!("{lead}{words}"), "pattern": amount::amount_pattern(d, s.as_deref()), "maxLength": amount::MAX_AMOUNT_CHARS })
            }
            Reader::Account => json!({
                "type": "string",
                "description": format!("{lead}An ICRC-1 account in its textual encoding: a principal, or <principal>-<checksum>.<subaccount hex> for a subaccount."),
                "pattern": account::ACCOUNT_PATTERN,
                "maxLength": account::MAX_ACCOUNT_CHARS,
            }),
            Reader::Subaccount => json!({
                "type": "string",
                "description": format!("{lead}A subaccount: 32 bytes as up to 64 hex digits (leading zeros may be left out)."),
                "pattern": account::SUBACCOUNT_PATTERN,
            }),
            Reader::Principal => json!({
                "type": "string",
                "description": format!("{lead}A principal in its textual form: groups of up to five characters a-z and 2-7 separated by dashes, such as ryjl3-tyaaa-aaaaa-aaaba-cai or 2vxsx-fae."),
                "pattern": principal::PRINCIPAL_PATTERN,
                "maxLength": principal::MAX_PRINCIPAL_CHARS,
            }),
            Reader::Integer { prim, range } => {
                let mut bounds = match crate::text::integer::prim_bounds(*prim) {
                    Some((lo, hi)) => format!(" ({}: {lo} to {hi})", prim.as_str()),
                    None if prim.is_unsigned() => " (0 or more)".to_string(),
                    None => String::new(),
                };
                if let Some(r) = range {
                    bounds.push_str(&range_words(r, ""));
                }
                json!({
                    "type": "string",
                    "description": format!("{lead}A whole number in decimal digits{bounds}."),
                    "pattern": integer::integer_pattern(*prim, range.as_ref()),
                    "maxLength": integer::MAX_INTEGER_CHARS,
                })
            }
            Reader::Text { tag, range, .. } => {
                let mut m = Map::new();
                m.insert("type".into(), json!("string"));
                // The reader applies `max_len` and the range's max both (or 1 024 without
                // either): the schema states the smaller, in code points as both count.
                let max = match (
                    tag.as_ref().and_then(|t| t.max_len).map(|m| m as i128),
                    range.as_ref().and_then(|r| r.max),
                ) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => DEFAULT_MAX_TEXT as i128,
                };
                let mut words = format!("{lead}Text of at most {max} characters");
                if let Some(min) = range.as_ref().and_then(|r| r.min) {
                    words.push_str(&format!(" and at least {min}"));
                    m.insert("minLength".into(), json!(min));
                }
                m.insert("maxLength".into(), json!(max));
                if let Some(p) = tag.as_ref().and_then(|t| t.pattern.clone()) {
                    words.push_str(&format!(", matching {p}"));
                    m.insert("pattern".into(), json!(p));
                }
                match tag.as_ref().and_then(|t| t.format) {
                    Some(TextFormat::Url) => {
                        words.push_str(", an http or https URL");
                        m.insert("format".into(), json!("uri"));
                    }
                    Some(TextFormat::Email) => {
                        words.push_str(", an email address");
                        m.insert("format".into(), json!("email"));
                    }
                    None => {}
                }
                words.push('.');
                m.insert("description".into(), json!(words));
                Value::Object(m)
            }
            Reader::Bool => {
                json!({ "type": "string", "description": format!("{lead}\"true\" or \"false\"."), "enum": ["false", "true"] })
            }
            Reader::Timestamp { unit, .. } => json!({
                "type": "string",
                "description": format!("{lead}A time: RFC 3339 such as 2026-12-01T10:00:00Z, or relative to now such as \"in 1h30m\"."),
                "pattern": time::timestamp_pattern(*unit),
                "maxLength": time::MAX_TIME_CHARS,
            }),
            Reader::Duration { unit, .. } => json!({
                "type": "string",
                "description": format!("{lead}A span of time such as 1h30m, 90s or 2d (units ns, us, ms, s, m, h, d, w)."),
                "pattern": time::duration_pattern(*unit),
                "maxLength": time::MAX_TIME_CHARS,
            }),
            Reader::Blob { range } => {
                let r = range
                    .as_ref()
                    .map(|r| range_words(r, " bytes"))
                    .unwrap_or_default();
                let (pattern, max_len) = bytes::blob_schema(range.as_ref());
                let mut s = json!({ "type": "string", "description": format!("{lead}Bytes as hex, two digits per byte{r}."), "pattern": pattern });
                if let Some(max_len) = max_len {
                    s["maxLength"] = json!(max_len);
                }
                s
            }
            Reader::Named { set, inner } => {
                let mut s = self.schema(inner, describe);
                if let Some(Value::String(d)) = s.get_mut("description") {
                    d.push_str(&format!(" Or a name from the set '{set}'."));
                }
                // A name is any text: the value's grammar and lengths do not bind it.
                if let Some(m) = s.as_object_mut() {
                    m.remove("pattern");
                    m.remove("maxLength");
                    m.remove("minLength");
                }
                s
            }
            Reader::Opt(inner) => or_null(self.schema(inner, describe)),
            Reader::Empty(_) => json!({ "type": "null" }),
            // Never an input (records and variants leave these out; no input is one).
            Reader::Host(_) => json!(false),
            Reader::Record(fields) => {
                let mut props = Map::new();
                let mut required = vec![];
                for (name, r) in fields {
                    // Positions the host fills are not inputs: not in the schema at all.
                    if matches!(r, Reader::Empty(_) | Reader::Host(_)) {
                        continue;
                    }
                    props.insert(name.clone(), self.schema(r, None));
                    if !matches!(r, Reader::Opt(_)) {
                        required.push(name.clone());
                    }
                }
                object([
                    ("type", "object".into()),
                    ("description", format!("{lead}A JSON object.").into()),
                    ("properties", Value::Object(props)),
                    ("required", required.into()),
                    ("additionalProperties", false.into()),
                ])
            }
            Reader::Variant(cases) => {
                let one_of: Vec<Value> = cases
                    .iter()
                    .map(|(name, r)| match r {
                        Reader::Empty(_) | Reader::Host(_) => json!({
                            "type": "object",
                            "properties": { "tag": { "const": name } },
                            "required": ["tag"],
                            "additionalProperties": false,
                        }),
                        r => object([
                            ("type", "object".into()),
                            (
                                "properties",
                                object([
                                    ("tag", json!({ "const": name })),
                                    ("value", self.schema(r, None)),
                                ]),
                            ),
                            ("required", json!(["tag", "value"])),
                            ("additionalProperties", false.into()),
                        ]),
                    })
                    .collect();
                object([
                    ("oneOf", Value::Array(one_of)),
                    (
                        "description",
                        format!("{lead}One case as {{\"tag\": case, \"value\": ...}}.").into(),
                    ),
                ])
            }
            Reader::Vec { elem, range } => {
                let max = range
                    .as_ref()
                    .and_then(|r| r.max)
                    .map(|m| m.min(MAX_VEC_ELEMENTS as i128))
                    .unwrap_or(MAX_VEC_ELEMENTS as i128);
                let items = match elem.as_ref() {
                    Reader::Opt(inner) => or_null(self.schema(inner, None)),
                    r => self.schema(r, None),
                };
                let mut s = object([
                    ("type", "array".into()),
                    (
                        "description",
                        format!("{lead}A JSON array of at most {max} elements.").into(),
                    ),
                    ("items", items),
                    ("maxItems", json!(max)),
                ]);
                if let Some(min) = range.as_ref().and_then(|r| r.min).filter(|m| *m > 0) {
                    s["minItems"] = json!(min);
                    s["description"] =
                        json!(format!("{lead}A JSON array of {min} to {max} elements."));
                }
                s
            }
        }
    }
}

/// An optional input's schema: `null` allowed too, since `null` and leaving it out both mean
/// none (models in strict modes send `null` for every optional input). A text schema takes
/// `"type": ["string", "null"]` (its pattern and lengths bind strings only; an `enum` gains
/// `null`), so that its description stays where renderers read it; any other is an `anyOf`.
fn nullable(schema: Value) -> Value {
    let note = " Optional: leave it out or give null for none.";
    match schema {
        Value::Object(mut m) if m.get("type") == Some(&json!("string")) => {
            m.insert("type".into(), json!(["string", "null"]));
            if let Some(Value::Array(options)) = m.get_mut("enum") {
                options.push(Value::Null);
            }
            if let Some(Value::String(d)) = m.get_mut("description") {
                d.push_str(note);
            }
            Value::Object(m)
        }
        mut other => {
            let description = other
                .as_object_mut()
                .and_then(|m| m.remove("description"))
                .and_then(|d| d.as_str().map(str::to_string))
                .unwrap_or_default();
            let mut v = or_null(other);
            v["description"] = format!("{description}{note}").trim_start().into();
            v
        }
    }
}

fn range_words(r: &RangeTag, unit: &str) -> String {
    match (r.min, r.max) {
        (Some(a), Some(b)) => format!(", from {a} to {b}{unit}"),
        (Some(a), None) => format!(", at least {a}{unit}"),
        (None, Some(b)) => format!(", at most {b}{unit}"),
        (None, None) => String::new(),
    }
}

#[cfg(test)]
mod canister_description_tests {
    use super::*;
    use candid::Principal;

    fn canister(n: u64, label: Option<&str>) -> Canister {
        let mut id = n.to_be_bytes().to_vec();
        id.extend([1, 1]);
        Canister {
            id: Principal::from_slice(&id),
            label: label.map(Into::into),
            refs: Default::default(),
            forms: None,
        }
    }

    fn texts(cs: &[&Canister]) -> Vec<String> {
        cs.iter().map(|c| c.id.to_text()).collect()
    }

    /// The description as it was written before it was written only while it fits: every
    /// canister's words made, the whole counted, then cut.
    fn canister_description_whole(applicable: &[&Canister], texts: &[String]) -> String {
        let listed: Vec<String> = applicable
            .iter()
            .zip(texts)
            .map(|(c, t)| match &c.label {
                Some(l) => format!("{t} ({l})"),
                None => t.clone(),
            })
            .collect();
        let whole = format!("The canister to call: {}.", listed.join(", "));
        if whole.chars().count() <= MAX_CANISTER_DESCRIPTION_CHARS {
            return whole;
        }
        let mut out = String::from("The canister to call: ");
        // The characters in `out` so far, kept rather than counted again per item.
        let mut out_chars = out.chars().count();
        for (i, item) in listed.iter().enumerate() {
            let more = listed.len() - i;
            let tail = format!(" and {more} more: any value of the enum.");
            let sep = if i == 0 { "" } else { ", " };
            let item_chars = item.chars().count();
            let with = out_chars + sep.len() + item_chars;
            // Room for this one and for the tail that would follow it.
            let tail_after = format!(" and {} more: any value of the enum.", more - 1);
            // (6: room for the "," or "one of" that precedes the tail.)
            if with + tail_after.chars().count() + 6 > MAX_CANISTER_DESCRIPTION_CHARS {
                out.push_str(if i == 0 { "one of" } else { "," });
                out.push_str(&tail);
                return out;
            }
            out.push_str(sep);
            out.push_str(item);
            out_chars = with;
        }
        out.push('.');
        out
    }

    /// Written while it fits, the description is the whole one cut, for any labels and counts
    /// (around the bound: every count of canisters from none to 60, labels of any length and
    /// script).
    #[test]
    fn written_while_it_fits_it_is_the_whole_one_cut() {
        let labels = [
            None,
            Some("T"),
            Some("TOKEN"),
            Some("ĀĀĀ"),
            Some("😀 token"),
            Some("a much longer label for a canister, with words"),
        ];
        // Both ways on one list, the same text.
        let same = |cs: &[Canister], what: &str| -> String {
            let refs: Vec<&Canister> = cs.iter().collect();
            let t = texts(&refs);
            let d = canister_description(&refs, &|i| &t[i]);
            assert_eq!(d, canister_description_whole(&refs, &t), "{what}");
            d
        };
        for n in 0..60u64 {
            for k in 0..labels.len() {
                let cs: Vec<Canister> = (0..n)
                    .map(|i| canister(i, labels[(i as usize * 7 + k) % labels.len()]))
                    .collect();
                same(&cs, &format!("{n} {k}"));
            }
        }
        // Multibyte labels of every length, lists of every length around the bound.
        for k in 0..120usize {
            for n in 3..45u64 {
                let label = "é".repeat(k);
                let cs: Vec<Canister> = (0..n)
                    .map(|i| canister(i, (i % 3 != 1).then_some(label.as_str())))
                    .collect();
                same(&cs, &format!("{n} {k}"));
            }
        }
        // Ten labelled canisters whose whole list is 895 to 905 characters (21 + 10 × 32 and
        // the labels' characters), multibyte labels: whole to 900, cut past it.
        for whole in 895..=905usize {
            let mut left = whole - 341;
            let cs: Vec<Canister> = (0..10u64)
                .map(|i| {
                    let k = left / (10 - i as usize);
                    left -= k;
                    canister(i, Some(&"é".repeat(k)))
                })
                .collect();
            let d = same(&cs, &whole.to_string());
            assert_eq!(
                d.ends_with('.') && !d.contains("more"),
                whole <= 900,
                "{whole}: {d}"
            );
        }
        for n in [100u64, 1_024] {
            let cs: Vec<Canister> = (0..n)
                .map(|i| canister(i, Some(&"L".repeat(i as usize % 40))))
                .collect();
            same(&cs, &n.to_string());
        }
    }

    #[test]
    fn a_short_list_names_every_canister() {
        let cs = [canister(1, Some("TKA")), canister(2, None)];
        let refs: Vec<&Canister> = cs.iter().collect();
        let t = texts(&refs);
        let d = canister_description(&refs, &|i| &t[i]);
        assert_eq!(
            d,
            format!("The canister to call: {} (TKA), {}.", cs[0].id, cs[1].id)
        );
    }

    #[test]
    fn a_long_list_stays_within_its_bound_and_counts_the_rest() {
        for n in [40u64, 100, 1_024] {
            let cs: Vec<Canister> = (0..n)
                .map(|i| canister(i, Some(&format!("TOKEN{i}"))))
                .collect();
            let refs: Vec<&Canister> = cs.iter().collect();
            let t = texts(&refs);
            let d = canister_description(&refs, &|i| &t[i]);
            assert!(
                d.chars().count() <= MAX_CANISTER_DESCRIPTION_CHARS,
                "{n}: {d}"
            );
            let named = cs.iter().filter(|c| d.contains(&c.id.to_text())).count() as u64;
            assert!(named >= 1, "{d}");
            assert!(
                d.ends_with(&format!(" and {} more: any value of the enum.", n - named)),
                "{n}: {d}"
            );
        }
    }
}

#[cfg(test)]
mod agreed_tests {
    use super::*;
    use candid::Principal;

    fn ledger(n: u8, decimals: u64) -> Canister {
        Canister {
            id: Principal::from_slice(&[n, 1, 1]),
            label: None,
            refs: [("query:icrc1_decimals".to_string(), json!(decimals))].into(),
            forms: None,
        }
    }

    fn part<'a>(
        form: &str,
        cs: &'a [Canister],
        shapes: &PartShapes,
        made: Option<u64>,
    ) -> FormCanisters<'a> {
        let texts: Vec<String> = cs.iter().map(|c| c.id.to_text()).collect();
        let part = FormCanisters::with_shapes(form, cs, &texts, shapes);
        match made {
            Some(n) => part.made(n),
            None => part,
        }
    }

    /// Parts over the same canisters and making share what they agree on; another making, or
    /// a part that says none, works it out from the canisters. (The refs differ here under one
    /// number only to show where a value came from: a catalog gives a new number to any
    /// change of refs.)
    #[test]
    fn refs_agreed_are_shared_within_one_making_only() {
        const SRC: &str = "query:icrc1_decimals";
        let shapes = PartShapes::default();
        let eights = [ledger(1, 8), ledger(2, 8)];
        let mixed = [ledger(1, 8), ledger(2, 6)];
        let agreed = |form, set: &[Canister], made| part(form, set, &shapes, made).agreed(SRC);
        assert_eq!(agreed("a", &eights, Some(7)), Some(json!(8)));
        // Another form over the same canisters and making: the value kept.
        assert_eq!(agreed("b", &mixed, Some(7)), Some(json!(8)));
        // Unmade, or of another making: worked out.
        assert_eq!(agreed("b", &mixed, None), None);
        assert_eq!(agreed("b", &mixed, Some(8)), None);
        // The earlier making's values let go.
        assert_eq!(agreed("a", &eights, Some(7)), Some(json!(8)));
        assert_eq!(agreed("b", &mixed, Some(7)), Some(json!(8)));
        // Other canisters (another label) have a shape of their own.
        let mut labelled = mixed.clone();
        labelled[1].label = Some("B".into());
        assert_eq!(agreed("b", &labelled, Some(7)), None);
    }
}
