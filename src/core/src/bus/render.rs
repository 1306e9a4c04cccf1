//! The declarations in each provider's shape. The effect label survives only where a shape has
//! a field for it (MCP's annotations); the others drop it.

use super::decl::{EffectLabel, ToolDecl, ToolSource};
use super::strict::strict_schema;
use crate::builtin::Builtin;
use serde_json::{json, Map, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolFormat {
    /// MCP `tools/list` entries.
    Mcp,
    /// OpenAI Chat Completions: `{ type: "function", function: { name, description, parameters } }`.
    OpenAi,
    /// OpenAI Responses: flat `{ type: "function", name, description, parameters, strict }`.
    OpenAiResponses,
    /// Anthropic Messages: `{ name, description, input_schema }`.
    Anthropic,
    /// For a model with no tools API.
    Markdown,
    /// `{ name, description, schema }` with the plain JSON Schema.
    JsonSchema,
}

impl ToolFormat {
    pub const ALL: [ToolFormat; 6] = [
        ToolFormat::Mcp,
        ToolFormat::OpenAi,
        ToolFormat::OpenAiResponses,
        ToolFormat::Anthropic,
        ToolFormat::Markdown,
        ToolFormat::JsonSchema,
    ];

    /// The names the CLI and the docs use.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolFormat::Mcp => "mcp",
            ToolFormat::OpenAi => "openai",
            ToolFormat::OpenAiResponses => "openai_responses",
            ToolFormat::Anthropic => "anthropic",
            ToolFormat::Markdown => "markdown",
            ToolFormat::JsonSchema => "jsonschema",
        }
    }

    pub fn from_name(name: &str) -> Option<ToolFormat> {
        ToolFormat::ALL.into_iter().find(|f| f.as_str() == name)
    }
}

/// The text a provider takes: a JSON array for the JSON formats, Markdown for `Markdown`.
pub fn render(decls: &[&ToolDecl], format: ToolFormat) -> String {
    if format == ToolFormat::Markdown {
        return super::markdown::render(decls);
    }
    let shapes: Vec<Value> = decls.iter().map(|d| shape(d, format)).collect();
    // A Vec of Values never fails to serialize.
    serde_json::to_string_pretty(&shapes).unwrap_or_default()
}

/// [`render`] of declarations some of which are copies made to be rendered (a catalog's
/// spliced tools with their canister part put in): a copy's schema is moved into its shape
/// rather than copied again.
pub fn render_owned(decls: Vec<std::borrow::Cow<'_, ToolDecl>>, format: ToolFormat) -> String {
    use std::borrow::Cow;
    if format == ToolFormat::Markdown {
        let refs: Vec<&ToolDecl> = decls.iter().map(|d| &**d).collect();
        return super::markdown::render(&refs);
    }
    let shapes: Vec<Value> = decls
        .into_iter()
        .map(|d| match d {
            Cow::Borrowed(d) => shape(d, format),
            Cow::Owned(d) => shape_owned(d, format),
        })
        .collect();
    serde_json::to_string_pretty(&shapes).unwrap_or_default()
}

/// [`shape`] of a declaration given whole, its schema moved in: the shape is made around no
/// schema, and the schema (OpenAI's parameters of it) put in its place.
fn shape_owned(mut d: ToolDecl, format: ToolFormat) -> Value {
    let schema = std::mem::take(&mut d.input_schema);
    let mut v = shape(&d, format);
    let (schema, strict) = match format {
        ToolFormat::OpenAi | ToolFormat::OpenAiResponses => match strict_schema(&schema) {
            Some(s) => (s, Some(true)),
            None => (without_dialect_owned(schema), Some(false)),
        },
        ToolFormat::Anthropic => (without_dialect_owned(schema), None),
        ToolFormat::Mcp | ToolFormat::JsonSchema | ToolFormat::Markdown => (schema, None),
    };
    let (at, key) = match format {
        ToolFormat::Mcp => (Some(&mut v), "inputSchema"),
        ToolFormat::OpenAi => (v.get_mut("function"), "parameters"),
        ToolFormat::OpenAiResponses => (Some(&mut v), "parameters"),
        ToolFormat::Anthropic => (Some(&mut v), "input_schema"),
        ToolFormat::JsonSchema | ToolFormat::Markdown => (Some(&mut v), "schema"),
    };
    if let Some(Value::Object(m)) = at {
        m.insert(key.into(), schema);
        if let Some(strict) = strict {
            m.insert("strict".into(), Value::Bool(strict));
        }
    }
    v
}

fn without_dialect_owned(mut schema: Value) -> Value {
    if let Some(m) = schema.as_object_mut() {
        m.remove("$schema");
    }
    schema
}

/// One declaration in a JSON format's shape. `Markdown` has no JSON shape (it is text, see
/// `render`); asked for one, this gives the `JsonSchema` shape.
pub fn shape(d: &ToolDecl, format: ToolFormat) -> Value {
    match format {
        ToolFormat::Mcp => mcp(d),
        ToolFormat::OpenAi => {
            let (parameters, strict) = openai_parameters(&d.input_schema);
            json!({ "type": "function", "function": {
                "name": d.name, "description": d.description, "parameters": parameters, "strict": strict,
            }})
        }
        ToolFormat::OpenAiResponses => {
            let (parameters, strict) = openai_parameters(&d.input_schema);
            json!({ "type": "function", "name": d.name, "description": d.description, "parameters": parameters, "strict": strict })
        }
        ToolFormat::Anthropic => {
            json!({ "name": d.name, "description": d.description, "input_schema": without_dialect(&d.input_schema) })
        }
        ToolFormat::JsonSchema | ToolFormat::Markdown => {
            json!({ "name": d.name, "description": d.description, "schema": d.input_schema })
        }
    }
}

/// MCP keeps the label in its annotations. Unset gives no readOnly/destructive/idempotent
/// hint at all, so that MCP's defaults (which assume the worst) apply.
fn mcp(d: &ToolDecl) -> Value {
    mcp_around(d, d.input_schema.clone(), d.output_schema.clone())
}

/// MCP's shape of `d` with these schemas in it (`bus::kept` gives `null`s, to put the
/// schemas' texts in).
pub(super) fn mcp_around(d: &ToolDecl, input_schema: Value, output_schema: Option<Value>) -> Value {
    let mut ann = Map::new();
    ann.insert("title".into(), json!(d.title));
    let hints = match d.effect {
        Some(EffectLabel::Readonly) => Some((true, false, true)),
        Some(EffectLabel::Idempotent) => Some((false, true, true)),
        Some(EffectLabel::Destructive) => Some((false, true, false)),
        None => None,
    };
    if let Some((read_only, destructive, idempotent)) = hints {
        ann.insert("readOnlyHint".into(), json!(read_only));
        ann.insert("destructiveHint".into(), json!(destructive));
        ann.insert("idempotentHint".into(), json!(idempotent));
    }
    // Open-world is reaching outside the tool host: form tools and `commit` call other
    // canisters, and so does `escalate` (the owner's handler); the other builtins do not.
    let open_world = match d.source {
        ToolSource::Builtin => Builtin::from_name(&d.name).is_some_and(Builtin::reaches_outside),
        _ => true,
    };
    ann.insert("openWorldHint".into(), json!(open_world));
    let mut m = Map::new();
    m.insert("name".into(), json!(d.name));
    m.insert("title".into(), json!(d.title));
    m.insert("description".into(), json!(d.description));
    m.insert("inputSchema".into(), input_schema);
    if let Some(o) = output_schema {
        m.insert("outputSchema".into(), o);
    }
    m.insert("annotations".into(), Value::Object(ann));
    Value::Object(m)
}

/// OpenAI's `parameters` and `strict`: the strict form when it loses no rule, else the schema
/// as it is with `strict: false`; `$schema` left out either way.
fn openai_parameters(schema: &Value) -> (Value, bool) {
    match strict_schema(schema) {
        Some(s) => (s, true),
        None => (without_dialect(schema), false),
    }
}

fn without_dialect(schema: &Value) -> Value {
    let mut s = schema.clone();
    if let Some(m) = s.as_object_mut() {
        m.remove("$schema");
    }
    s
}
