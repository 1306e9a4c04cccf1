//! A tool's page renderings kept with the catalog, so that a page in any format costs a copy of
//! its bytes rather than a rendering (4–7 M instructions for a 24 KB page of OpenAI's strict
//! schemas on the IC). Each JSON format is the same few members in sorted key order (serde_json's
//! map), so its text is put together from parts serialized once: the input schema, OpenAI's
//! strict form of it, the name and the description. The texts are byte for byte
//! [`render_one`]'s (a test checks every format on every tool it is given).

use super::decl::ToolDecl;
use super::page::{item_hash, render_one};
use super::render::ToolFormat;
use memchr::memmem::Finder;
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// MCP's text, the default format's (`list_tools` reads it).
    pub mcp: String,
    /// `page::item_hash` of `mcp` ([`Rendered::mcp_hash`]).
    mcp_hash: u64,
    name: String,
    description: String,
    /// The input schema, compact.
    schema: String,
    /// The schema without its `$schema` member: Anthropic's and non-strict OpenAI's.
    plain: Plain,
    /// OpenAI's strict parameters, when the schema has a strict form.
    strict: Option<String>,
    markdown: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Plain {
    /// No `$schema`: the schema's text.
    Same,
    /// `{` and the schema's text from here.
    From(usize),
    /// A `$schema` not first: its own text.
    Own(String),
}

/// MCP's text with the schema's text put in rather than serialized again: the shape's other
/// members serialized around a `null` schema (the member follows `description`, so it is the
/// one `,"inputSchema":null` there: inside a string a quote is escaped).
fn mcp_text(d: &ToolDecl, schema: &str) -> String {
    let text = render_one(&d.with_input_schema(Value::Null), ToolFormat::Mcp);
    const HOLE: &str = ",\"inputSchema\":null";
    match text.find(HOLE) {
        Some(at) => {
            let mut out = String::with_capacity(text.len() + schema.len());
            out.push_str(&text[..at + HOLE.len() - 4]);
            out.push_str(schema);
            out.push_str(&text[at + HOLE.len()..]);
            out
        }
        None => render_one(d, ToolFormat::Mcp),
    }
}

/// Compact JSON text (a `str` or a `Value` always serializes).
fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

impl Rendered {
    pub fn new(d: &ToolDecl) -> Rendered {
        let mut r = Rendered::unhashed(d, super::strict_schema(&d.input_schema));
        r.mcp_hash = item_hash(&r.mcp);
        r
    }

    /// `page::item_hash` of the MCP text, hashed when the text was made: the catalog's
    /// fingerprint is made of these.
    pub fn mcp_hash(&self) -> u64 {
        debug_assert_eq!(self.mcp_hash, item_hash(&self.mcp));
        self.mcp_hash
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
                        Plain::Own(json(&s))
                    }
                }
            }
        };
        Rendered {
            mcp: mcp_text(d, &schema),
            mcp_hash: 0,
            name: json(&d.name),
            description: json(&d.description),
            plain,
            strict: strict.map(|s| json(&s)),
            schema,
            markdown: render_one(d, ToolFormat::Markdown),
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
    /// `md_hole`'s in the Markdown by `md_part`; `None` when a text does not hold its hole
    /// exactly once. The name and description texts are given.
    pub(super) fn spliced(
        &self,
        (name, description): (String, String),
        hole: &Finder,
        part: &str,
        strict_part: Option<&str>,
        md_hole: &Finder,
        md_part: &str,
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
            mcp_hash: item_hash(&mcp),
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
                out.push_str(&self.schema[*at..]);
            }
            Plain::Same => out.push_str(&self.schema),
            Plain::Own(s) => out.push_str(s),
        }
    }

    /// OpenAI's `"parameters":…,"strict":…` members.
    fn openai(&self, out: &mut String) {
        out.push_str(",\"parameters\":");
        match &self.strict {
            Some(s) => {
                out.push_str(s);
                out.push_str(",\"strict\":true");
            }
            None => {
                self.plain(out);
                out.push_str(",\"strict\":false");
            }
        }
    }

    /// The tool's Markdown section, as kept (a listing is the header and the sections).
    pub fn markdown(&self) -> &str {
        &self.markdown
    }

    /// The tool's text in `format`: [`render_one`]'s, byte for byte.
    pub fn text(&self, format: ToolFormat) -> String {
        let (name, description) = (&self.name, &self.description);
        let mut out = String::with_capacity(self.schema.len() + description.len() + 96);
        match format {
            ToolFormat::Mcp => return self.mcp.clone(),
            ToolFormat::Markdown => return self.markdown.clone(),
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
                out.push_str(&self.schema);
                out.push('}');
            }
        }
        out
    }
}

/// `text` with `hole`'s one occurrence replaced by `part`, and where the hole was; `None` when
/// it is not there once. (`memmem` rather than `str::find`: on the IC a tool's few KiB are
/// searched at a few instructions a byte rather than ~15.)
fn splice(text: &str, hole: &Finder, part: &str) -> Option<(String, usize)> {
    let at = hole.find(text.as_bytes())?;
    let end = at + hole.needle().len();
    // The hole is whole UTF-8 (a `str`'s bytes found in a `str`): `at` and `end` are char
    // boundaries, and slicing cannot fail.
    let rest = text.get(end..)?;
    if hole.find(rest.as_bytes()).is_some() {
        return None;
    }
    let mut out = String::with_capacity(text.len() - hole.needle().len() + part.len());
    out.push_str(text.get(..at)?);
    out.push_str(part);
    out.push_str(rest);
    Some((out, at))
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
            json!(true),
            json!({ "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": { "a": { "type": "string", "pattern": "^a$" } }, "required": ["a"], "additionalProperties": false }),
        ] {
            let d = decl(s.clone());
            let r = Rendered::new(&d);
            for f in FORMATS {
                assert_eq!(r.text(f), render_one(&d, f), "{f:?} of {s}");
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
