//! The declarations in each provider's shape. The effect label survives only where a shape has
//! a field for it (MCP's annotations); the others drop it.

use super::decl::ToolDecl;

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
    let _ = (decls, format);
    unimplemented!("bus helper")
}
