//! A tool's page renderings kept with the catalog, so that a page in any format costs a copy of
//! its bytes rather than a rendering (4–7 M instructions for a 24 KB page of OpenAI's strict
//! schemas on the IC). Each JSON format is the same few members in sorted key order (serde_json's
//! map), so its text is put together from parts serialized once: the input schema, OpenAI's
//! strict form of it, the name and the description. The texts are byte for byte
//! [`render_one`]'s (a test checks every format on every tool it is given).

use super::decl::ToolDecl;
use super::page::{item_hash, item_hash_of, render_one};
use super::render::ToolFormat;
use memchr::memmem::Finder;
use serde_json::Value;
use std::borrow::Cow;
use std::rc::Rc;

/// A text kept with a tool: whole, or around its form's canister part, which every tool of
/// the form (and every form over the same canisters) shares rather than each holding a copy
/// (with 100 canisters, ~4 KB in each of a tool's four texts, copied at each registration).
#[derive(Clone, Debug)]
pub struct Text(Repr);

/// Made only by `From<String>` and [`splice`], which cuts `around` where the hole was found (a
/// char boundary): its slices cannot fail.
#[derive(Clone, Debug)]
enum Repr {
    Whole(String),
    /// `around[..at]`, the part, then `around[at..]`.
    Parted {
        around: String,
        at: usize,
        part: Rc<str>,
    },
}

impl Text {
    /// Its bytes.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Whole(s) => s.len(),
            Repr::Parted { around, part, .. } => around.len() + part.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its pieces in order.
    fn pieces(&self) -> [&str; 3] {
        match &self.0 {
            Repr::Whole(s) => [s, "", ""],
            Repr::Parted { around, at, part } => [&around[..*at], part, &around[*at..]],
        }
    }

    /// The text appended to `out`.
    pub fn push_to(&self, out: &mut String) {
        match &self.0 {
            Repr::Whole(s) => out.push_str(s),
            Repr::Parted { around, at, part } => {
                out.push_str(&around[..*at]);
                out.push_str(part);
                out.push_str(&around[*at..]);
            }
        }
    }

    /// The text from byte `from` on appended to `out`.
    fn push_from(&self, from: usize, out: &mut String) {
        let mut skip = from;
        for p in self.pieces() {
            let n = skip.min(p.len());
            out.push_str(&p[n..]);
            skip -= n;
        }
    }

    /// The text as one `str` (put together when it is parted).
    pub fn as_str(&self) -> Cow<'_, str> {
        match &self.0 {
            Repr::Whole(s) => Cow::Borrowed(s),
            Repr::Parted { .. } => {
                let mut out = String::with_capacity(self.len());
                self.push_to(&mut out);
                Cow::Owned(out)
            }
        }
    }

    /// [`page::item_hash`](super::page::item_hash) of the text.
    fn hash(&self) -> u64 {
        item_hash_of(&self.pieces())
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(Repr::Whole(s))
    }
}

/// Texts are equal by their bytes, whole or parted.
impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.len() == other.len() && self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// MCP's text, the default format's (`list_tools` reads it).
    mcp: Text,
    /// `page::item_hash` of `mcp` ([`Rendered::mcp_hash`]).
    mcp_hash: u64,
    name: String,
    description: String,
    /// The input schema, compact.
    schema: Text,
    /// The schema without its `$schema` member: Anthropic's and non-strict OpenAI's.
    plain: Plain,
    /// OpenAI's strict parameters, when the schema has a strict form.
    strict: Option<Text>,
    markdown: Text,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Plain {
    /// No `$schema`: the schema's text.
    Same,
    /// `{` and the schema's text from here.
    From(usize),
    /// A `$schema` not first: its own text.
    Own(Text),
}

/// MCP's text with the schema's text put in rather than serialized again, and the output
/// schema's (a prepare tool's answer) written from its value rather than copied twice with the
/// declaration: the shape's other members serialized around `null` schemas. Each is the one
/// `,"inputSchema":null` or `,"outputSchema":null` there (inside a string a quote is
/// escaped), the output's after the input's (the members are sorted), and both are found
/// before either text is put in.
fn mcp_text(d: &ToolDecl, schema: &str) -> String {
    const INPUT: &str = ",\"inputSchema\":null";
    const OUTPUT: &str = ",\"outputSchema\":null";
    let output = d.output_schema.as_ref();
    let shape = super::render::mcp_around(d, Value::Null, output.map(|_| Value::Null));
    let head = json(&shape);
    // Where `null` starts in a hole found at `at`.
    let null_at = |at: usize, hole: &str| at + hole.len() - 4;
    let Some(i) = head.find(INPUT) else {
        return render_one(d, ToolFormat::Mcp);
    };
    let rest = &head[i + INPUT.len()..];
    let output = match output {
        None => None,
        Some(o) => match rest.find(OUTPUT) {
            Some(k) => Some((k, json(o))),
            None => return render_one(d, ToolFormat::Mcp),
        },
    };
    let room = head.len() + schema.len() + output.as_ref().map_or(0, |(_, o)| o.len());
    let mut out = String::with_capacity(room);
    out.push_str(&head[..null_at(i, INPUT)]);
    out.push_str(schema);
    match output {
        None => out.push_str(rest),
        Some((k, o)) => {
            out.push_str(&rest[..null_at(k, OUTPUT)]);
            out.push_str(&o);
            out.push_str(&rest[k + OUTPUT.len()..]);
        }
    }
    out
}

/// Compact JSON text (a `str` or a `Value` always serializes).
fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

impl Rendered {
    pub fn new(d: &ToolDecl) -> Rendered {
        let mut r = Rendered::unhashed(d, super::strict_schema(&d.input_schema));
        r.mcp_hash = r.mcp.hash();
        r
    }

    /// `page::item_hash` of the MCP text, hashed when the text was made: the catalog's
    /// fingerprint is made of these.
    pub fn mcp_hash(&self) -> u64 {
        debug_assert_eq!(self.mcp_hash, item_hash(&self.mcp.as_str()));
        self.mcp_hash
    }

    /// MCP's text (`list_tools` and MCP's `tools/list` copy it).
    pub fn mcp(&self) -> &Text {
        &self.mcp
    }

    /// The renderings with OpenAI's strict form of the schema given (`bus::splice` works it
    /// out with a part's enum counted), not yet hashed: `bus::splice` makes texts with a hole
    /// and [`Rendered::spliced`] hashes the text it makes of them.
    pub(super) fn unhashed(d: &ToolDecl, strict: Option<Value>) -> Rendered {
        let schema = json(&d.input_schema);
        let plain = match d.input_schema.get("$schema") {
            None => Plain::Same,
            Some(dialect) => {
                // `{"$schema":<dialect>` then `,` or `}`: the member is first when no key sorts
                // before `$` (the usual case); otherwise the schema is serialized without it.
                let lead = format!("{{\"$schema\":{}", json(dialect));
                match schema.strip_prefix(&lead) {
                    Some(rest) if rest.starts_with(',') => Plain::From(lead.len() + 1),
                    Some("}") => Plain::From(lead.len()),
                    _ => {
                        let mut s = d.input_schema.clone();
                        if let Some(m) = s.as_object_mut() {
                            m.remove("$schema");
                        }
                        Plain::Own(json(&s).into())
                    }
                }
            }
        };
        Rendered {
            mcp: mcp_text(d, &schema).into(),
            mcp_hash: 0,
            name: json(&d.name),
            description: json(&d.description),
            plain,
            strict: strict.map(|s| json(&s).into()),
            schema: schema.into(),
            markdown: render_one(d, ToolFormat::Markdown).into(),
        }
    }

    /// The name and description texts, taken out (a tool kept with its hole needs neither:
    /// they are its renderings').
    pub(super) fn take_words(&mut self) -> (String, String) {
        (
            std::mem::take(&mut self.name),
            std::mem::take(&mut self.description),
        )
    }

    /// The name and description texts, copied.
    pub(super) fn words(&self) -> (String, String) {
        (self.name.clone(), self.description.clone())
    }

    /// These renderings with `hole`'s one occurrence in each JSON text replaced by `part`
    /// (by `strict_part` in the strict form, which is left out when it is `None`) and
    /// `md_hole`'s in the Markdown by `md_part`, each text kept around the part shared;
    /// `None` when a text does not hold its hole exactly once. The name and description
    /// texts are given.
    pub(super) fn spliced(
        &self,
        (name, description): (String, String),
        hole: &Finder,
        part: &Rc<str>,
        strict_part: Option<&Rc<str>>,
        md_hole: &Finder,
        md_part: &Rc<str>,
    ) -> Option<Rendered> {
        let (schema, hole_at) = splice(&self.schema, hole, part)?;
        let plain = match &self.plain {
            Plain::Same => Plain::Same,
            // The offset is the `$schema` member's end: the hole must come after it.
            Plain::From(at) if hole_at >= *at => Plain::From(*at),
            Plain::From(_) => return None,
            Plain::Own(s) => Plain::Own(splice(s, hole, part)?.0),
        };
        let strict = match (&self.strict, strict_part) {
            (Some(s), Some(strict_part)) => Some(splice(s, hole, strict_part)?.0),
            _ => None,
        };
        let (mcp, _) = splice(&self.mcp, hole, part)?;
        let (markdown, _) = splice(&self.markdown, md_hole, md_part)?;
        Some(Rendered {
            mcp_hash: mcp.hash(),
            mcp,
            name,
            description,
            schema,
            plain,
            strict,
            markdown,
        })
    }

    /// The schema without `$schema`.
    fn plain(&self, out: &mut String) {
        match &self.plain {
            Plain::From(at) => {
                out.push('{');
                self.schema.push_from(*at, out);
            }
            Plain::Same => self.schema.push_to(out),
            Plain::Own(s) => s.push_to(out),
        }
    }

    /// OpenAI's `"parameters":…,"strict":…` members.
    fn openai(&self, out: &mut String) {
        out.push_str(",\"parameters\":");
        match &self.strict {
            Some(s) => {
                s.push_to(out);
                out.push_str(",\"strict\":true");
            }
            None => {
                self.plain(out);
                out.push_str(",\"strict\":false");
            }
        }
    }

    /// The tool's Markdown section, as kept (a listing is the header and the sections).
    pub fn markdown(&self) -> &Text {
        &self.markdown
    }

    /// The tool's text in `format`: [`render_one`]'s, byte for byte.
    pub fn text(&self, format: ToolFormat) -> String {
        let (name, description) = (&self.name, &self.description);
        let mut out = String::with_capacity(self.schema.len() + description.len() + 96);
        match format {
            ToolFormat::Mcp => return self.mcp.as_str().into_owned(),
            ToolFormat::Markdown => return self.markdown.as_str().into_owned(),
            ToolFormat::OpenAi => {
                out.push_str("{\"function\":{\"description\":");
                out.push_str(description);
                out.push_str(",\"name\":");
                out.push_str(name);
                self.openai(&mut out);
                out.push_str("},\"type\":\"function\"}");
            }
            ToolFormat::OpenAiResponses => {
                out.push_str("{\"description\":");
                out.push_str(description);
                out.push_str(",\"name\":");
                out.push_str(name);
                self.openai(&mut out);
                out.push_str(",\"type\":\"function\"}");
            }
            ToolFormat::Anthropic => {
                out.push_str("{\"description\":");
                out.push_str(description);
                out.push_str(",\"input_schema\":");
                self.plain(&mut out);
                out.push_str(",\"name\":");
                out.push_str(name);
                out.push('}');
            }
            ToolFormat::JsonSchema => {
                out.push_str("{\"description\":");
                out.push_str(description);
                out.push_str(",\"name\":");
                out.push_str(name);
                out.push_str(",\"schema\":");
                self.schema.push_to(&mut out);
                out.push('}');
            }
        }
        out
    }
}

/// `text` with `hole`'s one occurrence replaced by `part` (kept around it, not copied in),
/// and where the hole was; `None` when it is not there once. (`memmem` rather than
/// `str::find`: on the IC a tool's few KiB are searched at a few instructions a byte rather
/// than ~15.)
fn splice(text: &Text, hole: &Finder, part: &Rc<str>) -> Option<(Text, usize)> {
    // A text with a hole is whole (made of a declaration with the hole).
    let Text(Repr::Whole(text)) = text else {
        return None;
    };
    let at = hole.find(text.as_bytes())?;
    let end = at + hole.needle().len();
    // The hole is whole UTF-8 (a `str`'s bytes found in a `str`): `at` and `end` are char
    // boundaries, and slicing cannot fail.
    let rest = text.get(end..)?;
    if hole.find(rest.as_bytes()).is_some() {
        return None;
    }
    let mut around = String::with_capacity(text.len() - hole.needle().len());
    around.push_str(text.get(..at)?);
    around.push_str(rest);
    let part = part.clone();
    Some((Text(Repr::Parted { around, at, part }), at))
}

/// Every format, for tests that compare the kept texts with [`render_one`].
pub const FORMATS: [ToolFormat; 6] = [
    ToolFormat::Mcp,
    ToolFormat::OpenAi,
    ToolFormat::OpenAiResponses,
    ToolFormat::Anthropic,
    ToolFormat::JsonSchema,
    ToolFormat::Markdown,
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decl(schema: Value) -> ToolDecl {
        ToolDecl {
            name: "t\"x".into(),
            title: "T".into(),
            description: "Says \"hi\"\n\u{1F600} ,\"inputSchema\":null".into(),
            effect: None,
            input_schema: schema,
            output_schema: None,
            source: super::super::decl::ToolSource::Builtin,
        }
    }

    /// A parted text reads as its pieces put together: its length, bytes from any offset,
    /// its hash, and equality with the same text whole.
    #[test]
    fn a_parted_text_is_its_pieces_put_together() {
        for (around, at, part) in [
            ("ab", 1, "XYZ"),
            ("", 0, ""),
            ("héllo", 1, "é"),
            ("ab", 2, "c"),
        ] {
            let parted = Text(Repr::Parted {
                around: around.to_string(),
                at,
                part: Rc::from(part),
            });
            let whole = format!("{}{part}{}", &around[..at], &around[at..]);
            assert_eq!(parted.len(), whole.len());
            assert_eq!(parted.as_str(), whole.as_str());
            assert_eq!(parted, Text::from(whole.clone()));
            assert_eq!(parted.hash(), item_hash(&whole));
            for from in (0..=whole.len()).filter(|&i| whole.is_char_boundary(i)) {
                let mut out = String::new();
                parted.push_from(from, &mut out);
                assert_eq!(out, whole[from..], "{whole} from {from}");
            }
        }
        let one = |around: &str, at| {
            Text(Repr::Parted {
                around: around.into(),
                at,
                part: Rc::from("x"),
            })
        };
        assert_ne!(one("ab", 0), one("ab", 1));
    }

    #[test]
    fn odd_schemas_give_render_ones_bytes() {
        for s in [
            json!({}),
            json!({ "$schema": "x" }),
            json!({ "$schema": "x\"y", "type": "object" }),
            json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"], "additionalProperties": false }),
            json!({ "$schema": 3, "type": "object" }),
            json!({ "$schema": "x", "!first": 1, " ": { "$schema": "y" } }),
            json!({ "$schema": "x", "#": 1 }),
            json!({ "a": 1, "outputSchema": null, "z": ",\"outputSchema\":null" }),
            json!(true),
            json!({ "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": { "a": { "type": "string", "pattern": "^a$" } }, "required": ["a"], "additionalProperties": false }),
        ] {
            let d = decl(s.clone());
            let r = Rendered::new(&d);
            for f in FORMATS {
                assert_eq!(r.text(f), render_one(&d, f), "{f:?} of {s}");
            }
            // With an output schema (MCP's text puts it in too), whatever either holds, and
            // every label.
            for (output, effect) in [
                (json!({ "type": "object" }), None),
                (
                    json!({ "a": 1, "outputSchema": null, "b": ",\"outputSchema\":null" }),
                    Some(super::super::EffectLabel::Readonly),
                ),
                (json!(null), Some(super::super::EffectLabel::Destructive)),
                (
                    crate::mcp::intent_answer_schema(),
                    Some(super::super::EffectLabel::Idempotent),
                ),
            ] {
                let mut d = decl(s.clone());
                d.output_schema = Some(output.clone());
                d.effect = effect;
                d.title = "T ,\"outputSchema\":null".into();
                // The one member between the two holes.
                d.name = "n ,\"outputSchema\":null ,\"inputSchema\":null".into();
                let r = Rendered::new(&d);
                for f in FORMATS {
                    assert_eq!(r.text(f), render_one(&d, f), "{f:?} of {s} with {output}");
                }
            }
            // A copy given to be rendered (its schema moved into its shape), alone and beside
            // a declaration lent: `render`'s bytes.
            let mut with_output = d.clone();
            with_output.output_schema = Some(json!({ "type": "object" }));
            with_output.effect = Some(super::super::EffectLabel::Readonly);
            for f in super::super::ToolFormat::ALL {
                let owned = super::super::render_owned(
                    vec![
                        std::borrow::Cow::Owned(d.clone()),
                        std::borrow::Cow::Borrowed(&d),
                        std::borrow::Cow::Owned(with_output.clone()),
                    ],
                    f,
                );
                let lent = super::super::render(&[&d, &d, &with_output], f);
                assert_eq!(owned, lent, "{f:?} of {s}");
            }
        }
    }
}
