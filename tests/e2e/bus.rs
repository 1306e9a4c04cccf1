//! The tool bus on the real wasm: a turn offers a shortlist, a call outside it is refused
//! (`NOT_OFFERED`) and recorded, the record shows what was offered and what was called, and
//! `current_time` answers in a zone on the canister's clock.

use crate::Scenario;
use serde_json::{json, Value};
use tool_host_engine::types::*;
use tool_host_tests::check::{refused, ApiOk, Check};
use tool_host_tests::world::World;
use tool_host_tests::{ensure, ensure_eq};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "bus::a_turn_offers_a_shortlist_and_records_a_call_outside_it_as_not_offered",
            a_turn_offers_a_shortlist_and_records_a_call_outside_it_as_not_offered,
        ),
        Scenario::new(
            "bus::list_tools_without_an_argument_is_the_mcp_list",
            list_tools_without_an_argument_is_the_mcp_list,
        ),
        Scenario::new(
            "bus::list_tools_page_pages_through_the_whole_list_and_refuses_a_stale_cursor",
            list_tools_page_pages_through_the_whole_list_and_refuses_a_stale_cursor,
        ),
        Scenario::new(
            "bus::current_time_answers_in_a_zone",
            current_time_answers_in_a_zone,
        ),
    ]
}

fn a_turn_offers_a_shortlist_and_records_a_call_outside_it_as_not_offered(w: &mut World) -> Check {
    let (agent, owner) = (w.p.agent, w.p.owner);
    let all = w.host.describe_tools(w.b.as_mut(), agent)?.len();
    let t = w
        .host
        .begin_turn(
            w.b.as_mut(),
            agent,
            BeginTurnArgs {
                query: "what is my token balance".into(),
                limit: Some(2),
                format: Some(ToolFormat::Anthropic),
                owner: Some(owner),
            },
        )?
        .ok_or_fail("begin_turn")?;
    ensure!(t.offered.len() <= 2 && all > 2, "{:?} of {all}", t.offered);
    ensure!(
        t.offered.contains(&"icrc1_balance_of".to_string()),
        "{:?}",
        t.offered
    );
    let rendered: Value = serde_json::from_str(&t.tools).map_err(|e| {
        tool_host_tests::check::Fail::Failed(format!("the rendering is not JSON: {e}"))
    })?;
    let names: Vec<&str> = rendered
        .as_array()
        .map(|a| a.iter().filter_map(|d| d["name"].as_str()).collect())
        .unwrap_or_default();
    ensure_eq!(
        names,
        t.offered,
        "the offered tools, rendered for Anthropic"
    );
    ensure!(rendered[0].get("input_schema").is_some(), "{rendered}");

    let balance = json!({ "canister_id": w.ledger.0.to_text(), "account": owner.to_text() });
    let r = w
        .host
        .call_tool_in_turn(
            w.b.as_mut(),
            agent,
            t.turn_id,
            "icrc1_balance_of",
            &balance.to_string(),
            Some(owner),
        )?
        .ok_or_fail("icrc1_balance_of in the turn")?;
    ensure!(!r.is_error, "{}", r.content);
    let outside = w.transfer_input(&w.amt("1"));
    ensure!(!t.offered.contains(&"prepare_icrc1_transfer".to_string()));
    let e = w.host.call_tool_in_turn(
        w.b.as_mut(),
        agent,
        t.turn_id,
        "prepare_icrc1_transfer",
        &outside,
        Some(owner),
    )?;
    refused(e, "NOT_OFFERED", "a tool the turn did not offer")?;
    let intents = w
        .host
        .list_intents(w.b.as_mut(), owner, None)?
        .ok_or_fail("list_intents")?;
    ensure!(intents.intents.is_empty(), "nothing was prepared");

    let got = w
        .host
        .get_turn(w.b.as_mut(), agent, t.turn_id, Some(owner))?
        .ok_or_fail("get_turn")?;
    ensure_eq!(got.offered_tools, t.offered);
    let steps: Vec<(&str, &str, bool)> = got
        .steps
        .iter()
        .map(|s| (s.tool.as_str(), s.outcome.as_str(), s.is_error))
        .collect();
    ensure_eq!(
        steps,
        vec![
            ("icrc1_balance_of", "read", false),
            ("prepare_icrc1_transfer", "NOT_OFFERED", true)
        ]
    );
    ensure!(!got.finished && got.answer.is_none());
    // Another owner asking gets what a missing turn gets.
    let other = w.p.other_owner;
    let e = w.host.get_turn(w.b.as_mut(), other, t.turn_id, None)?;
    refused(e, "NOT_FOUND", "another owner's turn")?;
    Ok(())
}

fn list_tools_without_an_argument_is_the_mcp_list(w: &mut World) -> Check {
    let agent = w.p.agent;
    let plain = w.host.list_tools(w.b.as_mut(), agent)?;
    let mcp = w
        .host
        .list_tools_in(w.b.as_mut(), agent, Some(ToolFormat::Mcp))?;
    ensure_eq!(plain, mcp, "a call with no argument answers MCP, as before");
    let openai = w
        .host
        .list_tools_in(w.b.as_mut(), agent, Some(ToolFormat::OpenAi))?;
    let v: Value = serde_json::from_str(&openai)
        .map_err(|e| tool_host_tests::check::Fail::Failed(format!("openai: {e}")))?;
    ensure_eq!(v[0]["type"], "function", "{openai}");
    Ok(())
}

fn json_of(text: &str) -> Check<Value> {
    serde_json::from_str(text)
        .map_err(|e| tool_host_tests::check::Fail::Failed(format!("not JSON: {e}: {text}")))
}

/// Pages of 1 KiB as the anonymous caller: every tool once, in the order of `list_tools`, no
/// page over the bound unless it holds one tool; the cursor refused once a builtin changes the
/// list; bounds and cursors the host did not give refused.
fn list_tools_page_pages_through_the_whole_list_and_refuses_a_stale_cursor(w: &mut World) -> Check {
    let anon = candid::Principal::anonymous();
    let whole = json_of(&w.host.list_tools(w.b.as_mut(), anon)?)?;
    let args = |cursor: Option<String>, max: Option<u32>| ListToolsArgs {
        format: None,
        cursor,
        max_bytes: max,
    };
    let mut seen: Vec<Value> = vec![];
    let mut cursor = None;
    let mut pages = 0;
    let mut second = None;
    loop {
        let p = w
            .host
            .list_tools_page(w.b.as_mut(), anon, args(cursor.clone(), Some(1024)))?
            .ok_or_fail("list_tools_page")?;
        ensure!(
            p.tools.len() <= 1024 || p.count == 1,
            "a page of {} tools is {} bytes",
            p.count,
            p.tools.len()
        );
        let v = json_of(&p.tools)?;
        ensure_eq!(v.as_array().map(Vec::len), Some(p.count as usize), "count");
        seen.extend(v.as_array().cloned().unwrap_or_default());
        pages += 1;
        if pages == 1 {
            second = p.next.clone();
        }
        cursor = p.next;
        if cursor.is_none() {
            break;
        }
        ensure!(pages < 500, "pages without end");
    }
    ensure_eq!(Value::Array(seen), whole, "the pages are the whole list");
    ensure!(pages > 2, "{pages} pages of 1 KiB");
    let controller = w.p.controller;
    w.host
        .set_builtins(
            w.b.as_mut(),
            controller,
            BuiltinSettings {
                enabled: vec!["calculate".into()],
                pinned: vec![],
                unpinned: None,
                default_time_zone: None,
            },
        )?
        .ok_or_fail("set_builtins")?;
    let stale = w
        .host
        .list_tools_page(w.b.as_mut(), anon, args(second, Some(1024)))?;
    refused(
        stale,
        "STALE_CURSOR",
        "a cursor of the list before calculate",
    )?;
    let big = w
        .host
        .list_tools_page(w.b.as_mut(), anon, args(None, Some(2 << 20)))?;
    refused(big, "INVALID_ARGUMENT", "max_bytes over 1 MiB")?;
    let forged = w
        .host
        .list_tools_page(w.b.as_mut(), anon, args(Some("0.61".into()), None))?;
    refused(forged, "INVALID_ARGUMENT", "a cursor the host did not give")?;
    Ok(())
}

fn current_time_answers_in_a_zone(w: &mut World) -> Check {
    let (controller, owner) = (w.p.controller, w.p.owner);
    w.host
        .set_builtins(
            w.b.as_mut(),
            controller,
            BuiltinSettings {
                enabled: vec!["current_time".into()],
                pinned: vec![],
                unpinned: None,
                default_time_zone: Some("Europe/London".into()),
            },
        )?
        .ok_or_fail("set_builtins")?;
    let r = w
        .tool(
            owner,
            None,
            "current_time",
            &json!({ "timezone": "Asia/Kolkata", "format": "human" }).to_string(),
        )?
        .ok_or_fail("current_time")?;
    ensure!(!r.is_error, "{}", r.content);
    let v: Value = serde_json::from_str(&r.structured)
        .map_err(|e| tool_host_tests::check::Fail::Failed(format!("{e}")))?;
    ensure_eq!(v["timezone"], "Asia/Kolkata", "{v}");
    ensure_eq!(v["utc_offset"], "+05:30", "{v}");
    ensure!(
        v["weekday"].as_str().is_some_and(|d| d.ends_with("day")),
        "{v}"
    );
    let default = w
        .tool(
            owner,
            None,
            "current_time",
            &json!({ "format": "date" }).to_string(),
        )?
        .ok_or_fail("current_time")?;
    ensure!(
        default.structured.contains("Europe/London"),
        "{}",
        default.structured
    );
    let e = w.tool(
        owner,
        None,
        "current_time",
        &json!({ "timezone": "Europe/Atlantis" }).to_string(),
    )?;
    refused(e, "INVALID_INPUT", "an unknown zone")?;
    Ok(())
}
