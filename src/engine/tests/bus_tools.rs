//! The bus's queries (`list_tools` in each format, `describe_tools`, `select_tools`,
//! `missing_tools`) and the pure builtins through `call_tool`, on the canister's clock.

mod common;
use common::*;
use serde_json::{json, Value};
use tool_host_engine::bus::{describe_tools, list_tools, missing_tools, select_tools};
use tool_host_engine::types::*;

fn select(w: &World, query: &str, limit: Option<u32>) -> ApiResult<Vec<ToolInfo>> {
    select_tools(
        w,
        owner(),
        SelectArgs {
            query: query.into(),
            limit,
            owner: None,
        },
    )
}

#[test]
fn list_tools_without_a_format_is_the_mcp_rendering() {
    let w = World::new().setup();
    let plain = list_tools(&*w, None);
    assert_eq!(plain, list_tools(&*w, Some(ToolFormat::Mcp)));
    assert_eq!(plain, tool_host_engine::tools::list_tools(&*w));
    let v: Value = serde_json::from_str(&plain).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let described: Vec<String> = describe_tools(&*w).into_iter().map(|t| t.name).collect();
    assert_eq!(names, described);
}

#[test]
fn every_format_renders_every_tool() {
    let w = World::new().setup();
    w.builtins(&["calculate", "current_time"], &[]).unwrap();
    let names: Vec<String> = describe_tools(&*w).into_iter().map(|t| t.name).collect();
    for f in [
        ToolFormat::Mcp,
        ToolFormat::OpenAi,
        ToolFormat::OpenAiResponses,
        ToolFormat::Anthropic,
        ToolFormat::Markdown,
        ToolFormat::JsonSchema,
    ] {
        let text = list_tools(&*w, Some(f));
        if f != ToolFormat::Markdown {
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{f:?}: {e}"));
            assert_eq!(v.as_array().unwrap().len(), names.len(), "{f:?}");
        }
        for n in &names {
            assert!(text.contains(n.as_str()), "{f:?} lacks {n}");
        }
    }
}

#[test]
fn describe_tools_gives_labels_sources_and_pins() {
    let w = World::new().setup();
    w.builtins(&["calculate", "escalate"], &[]).unwrap();
    let info = describe_tools(&*w);
    let of = |n: &str| info.iter().find(|t| t.name == n).unwrap().clone();
    assert_eq!(of("icrc1_balance_of").effect, Some(EffectLabel::Readonly));
    assert_eq!(
        of("icrc1_balance_of").source,
        ToolSourceView::Form("icrc1".into())
    );
    assert_eq!(of("commit").source, ToolSourceView::Host);
    assert_eq!(of("calculate").effect, Some(EffectLabel::Readonly));
    assert_eq!(of("escalate").effect, None);
    assert!(of("escalate").pinned && !of("calculate").pinned);
}

#[test]
fn selection_limits_are_checked() {
    let w = World::new().setup();
    assert_eq!(select(&w, "balance", None).unwrap().len(), 6);
    assert_eq!(select(&w, "balance", Some(1)).unwrap().len(), 1);
    for bad in [0, 33] {
        assert_eq!(
            select(&w, "x", Some(bad)).unwrap_err().code,
            "INVALID_ARGUMENT"
        );
    }
    assert_eq!(
        select(&w, &"q".repeat(2049), None).unwrap_err().code,
        "TOO_LARGE"
    );
    let anonymous = select_tools(
        &*w,
        candid::Principal::anonymous(),
        SelectArgs {
            query: "balance".into(),
            limit: None,
            owner: None,
        },
    );
    assert_eq!(
        anonymous.unwrap().len(),
        6,
        "open like list_tools, with no usage"
    );
}

#[test]
fn selection_is_deterministic_and_pins_come_first() {
    let w = World::new().setup();
    w.builtins(&["escalate", "calculate"], &[]).unwrap();
    let a = select(&w, "what is my balance", Some(4)).unwrap();
    assert_eq!(a, select(&w, "what is my balance", Some(4)).unwrap());
    assert_eq!(a[0].name, "escalate", "pinned, first");
    assert!(a.iter().any(|t| t.name == "icrc1_balance_of"), "{a:?}");
}

#[test]
fn missing_tools_lists_what_the_bus_lacks() {
    let w = World::new().setup();
    let got = missing_tools(
        &*w,
        vec![
            "refund".into(),
            "icrc1_balance_of".into(),
            "calculate".into(),
            "refund".into(),
        ],
    )
    .unwrap();
    assert_eq!(got, vec!["refund".to_string(), "calculate".to_string()]);
    assert_eq!(
        missing_tools(&*w, vec!["x".into(); 257]).unwrap_err().code,
        "TOO_LARGE"
    );
    assert_eq!(
        missing_tools(&*w, vec!["x".repeat(129)]).unwrap_err().code,
        "TOO_LARGE"
    );
}

#[test]
fn calculate_answers_through_call_tool() {
    let w = World::new().setup();
    w.builtins(&["calculate"], &[]).unwrap();
    let r = w
        .tool(
            agent(),
            "calculate",
            json!({ "expression": "(1250 * 0.2) + 99" }),
            Some(owner()),
        )
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    assert!(r.structured.contains("349"), "{}", r.structured);
    let e = w
        .tool(
            owner(),
            "calculate",
            json!({ "expression": "alert(1)" }),
            None,
        )
        .unwrap_err();
    assert_eq!(e.code, "INVALID_INPUT");
    let usage = tool_host_engine::bus::usage::tool_usage(&*w, owner(), None).unwrap();
    assert_eq!(usage[0].calls, 2, "both calls were made");
}

#[test]
fn current_time_answers_on_the_canisters_clock_in_the_default_zone() {
    let w = World::new().setup();
    let mut s = BuiltinSettings {
        enabled: vec!["current_time".into()],
        pinned: vec![],
        unpinned: None,
        default_time_zone: Some("Asia/Tokyo".into()),
    };
    tool_host_engine::bus::settings::set_builtins(&*w, controller(), s.clone()).unwrap();
    // T0 is 2026-12-01T10:00:00Z: 19:00 on a Tuesday in Tokyo.
    let r = w
        .tool(owner(), "current_time", json!({ "format": "time" }), None)
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    let v = structured(&r);
    assert_eq!(v["timezone"], "Asia/Tokyo", "{v}");
    assert!(v["time"].as_str().unwrap().contains("19:00"), "{v}");
    assert_eq!(v["unix_seconds"], 1_796_119_200u64);
    // An iso answer is UTC throughout, whatever the zone.
    let iso = w
        .tool(owner(), "current_time", json!({ "format": "iso" }), None)
        .unwrap();
    assert_eq!(structured(&iso)["time"], "2026-12-01T10:00:00Z");
    let e = w
        .tool(
            owner(),
            "current_time",
            json!({ "timezone": "Mars/Olympus" }),
            None,
        )
        .unwrap_err();
    assert_eq!(e.code, "INVALID_INPUT");
    s.default_time_zone = None;
    tool_host_engine::bus::settings::set_builtins(&*w, controller(), s).unwrap();
    let utc = w
        .tool(owner(), "current_time", json!({ "format": "time" }), None)
        .unwrap();
    assert_eq!(structured(&utc)["timezone"], "UTC");
}
