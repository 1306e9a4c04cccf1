//! Golden tests: the ICRC packs' tools in every provider format, pinned byte for byte (one
//! ledger with refs, so decimals and symbol appear). `UPDATE_GOLDEN=1` writes them anew.

mod common;
use common::*;
use tool_host_core::bus::{host_decls, render, ToolDecl, ToolFormat};
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;

fn rendered(format: ToolFormat) -> String {
    let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let decls = host_decls(&plans, &[ledger()]);
    let refs: Vec<&ToolDecl> = decls.iter().collect();
    render(&refs, format) + "\n"
}

fn file(format: ToolFormat) -> String {
    let ext = if format == ToolFormat::Markdown {
        "md"
    } else {
        "json"
    };
    format!("bus_icrc_{}.{ext}", format.as_str())
}

#[test]
fn icrc_tools_in_mcp() {
    check_golden(&file(ToolFormat::Mcp), &rendered(ToolFormat::Mcp));
}

#[test]
fn icrc_tools_in_openai_chat_completions() {
    check_golden(&file(ToolFormat::OpenAi), &rendered(ToolFormat::OpenAi));
}

#[test]
fn icrc_tools_in_openai_responses() {
    check_golden(
        &file(ToolFormat::OpenAiResponses),
        &rendered(ToolFormat::OpenAiResponses),
    );
}

#[test]
fn icrc_tools_in_anthropic() {
    check_golden(
        &file(ToolFormat::Anthropic),
        &rendered(ToolFormat::Anthropic),
    );
}

#[test]
fn icrc_tools_in_markdown() {
    let text = rendered(ToolFormat::Markdown);
    check_golden(&file(ToolFormat::Markdown), &text);
    assert!(text.contains("TKA"), "the ledger's symbol appears");
}

#[test]
fn icrc_tools_in_json_schema() {
    check_golden(
        &file(ToolFormat::JsonSchema),
        &rendered(ToolFormat::JsonSchema),
    );
}

#[test]
fn renderings_are_deterministic_bytes() {
    for f in ToolFormat::ALL {
        assert_eq!(rendered(f), rendered(f), "{f:?}");
    }
}
