//! The builtin settings (`set_builtins`, `get_builtins`): none on by default, admins only,
//! every name checked, `escalate` pinned by default and unpinned by name, and the bus rebuilt
//! when they change. Builtin names are reserved for the builtins, enabled or not.

mod common;
use common::*;
use serde_json::json;
use tool_host_engine::bus::settings::{get_builtins, set_builtins, MAX_PINS};
use tool_host_engine::types::*;

fn settings(enabled: &[&str], pinned: &[&str]) -> BuiltinSettings {
    BuiltinSettings {
        enabled: enabled.iter().map(|s| s.to_string()).collect(),
        pinned: pinned.iter().map(|s| s.to_string()).collect(),
        unpinned: None,
        default_time_zone: None,
    }
}

fn refused(r: ApiResult<BuiltinsView>, code: &str, needle: &str) {
    let e = r.expect_err("refused");
    assert_eq!(e.code, code, "{e:?}");
    assert!(e.message.contains(needle), "{}", e.message);
}

fn names(w: &World) -> Vec<String> {
    tool_host_engine::bus::describe_tools(w)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[test]
fn no_builtin_is_on_until_an_admin_enables_it() {
    let w = World::new().setup();
    let v = get_builtins(&*w);
    assert!(v.settings.enabled.is_empty());
    assert_eq!(v.available.len(), 7);
    assert!(v.pins.is_empty());
    for b in &v.available {
        assert!(
            !names(&w).contains(b),
            "{b} is offered before it is enabled"
        );
    }
}

#[test]
fn only_admins_set_builtins() {
    let w = World::new().setup();
    for who in [owner(), agent(), stranger()] {
        refused(
            set_builtins(&*w, who, settings(&["calculate"], &[])),
            "NOT_AUTHORIZED",
            "neither a controller nor an admin",
        );
    }
    refused(
        set_builtins(&*w, candid::Principal::anonymous(), settings(&[], &[])),
        "ANONYMOUS",
        "sign in",
    );
    assert!(
        get_builtins(&*w).settings.enabled.is_empty(),
        "nothing changed"
    );
}

#[test]
fn an_unknown_builtin_name_is_refused() {
    let w = World::new().setup();
    refused(
        w.builtins(&["calculate", "http_request"], &[]),
        "INVALID_ARGUMENT",
        "'http_request' is not a builtin tool",
    );
    assert!(get_builtins(&*w).settings.enabled.is_empty());
}

#[test]
fn a_builtin_named_twice_is_refused() {
    let w = World::new().setup();
    refused(
        w.builtins(&["think", "think"], &[]),
        "INVALID_ARGUMENT",
        "enabled names 'think' twice",
    );
    refused(
        w.builtins(&["think", "calculate"], &["think", "think"]),
        "INVALID_ARGUMENT",
        "pinned names 'think' twice",
    );
}

#[test]
fn an_unknown_time_zone_is_refused() {
    let w = World::new().setup();
    let mut s = settings(&["current_time"], &[]);
    s.default_time_zone = Some("Europe/Atlantis".into());
    refused(
        set_builtins(&*w, controller(), s),
        "INVALID_ARGUMENT",
        "default_time_zone 'Europe/Atlantis'",
    );
    let mut s = settings(&["current_time"], &[]);
    s.default_time_zone = Some("Europe/London".into());
    let v = set_builtins(&*w, controller(), s).unwrap();
    assert_eq!(
        v.settings.default_time_zone.as_deref(),
        Some("Europe/London")
    );
}

#[test]
fn escalate_is_pinned_by_default_when_enabled() {
    let w = World::new().setup();
    let v = w.builtins(&["escalate", "think"], &[]).unwrap();
    assert_eq!(v.pins, vec!["escalate".to_string()]);
    let info = tool_host_engine::bus::describe_tools(&*w);
    let esc = info.iter().find(|t| t.name == "escalate").unwrap();
    assert!(esc.pinned);
    assert_eq!(esc.effect, None, "escalate is unlabelled on purpose");
    assert_eq!(esc.source, ToolSourceView::Builtin);
    assert!(!info.iter().find(|t| t.name == "think").unwrap().pinned);
}

#[test]
fn an_admin_unpins_escalate_by_naming_it_in_unpinned() {
    let w = World::new().setup();
    let mut s = settings(&["escalate"], &[]);
    s.unpinned = Some(vec!["escalate".into()]);
    let v = set_builtins(&*w, controller(), s).unwrap();
    assert!(v.pins.is_empty());
    assert_eq!(v.settings.unpinned, Some(vec!["escalate".to_string()]));
    let mut s = settings(&["escalate", "think"], &[]);
    s.unpinned = Some(vec!["think".into()]);
    refused(
        set_builtins(&*w, controller(), s),
        "INVALID_ARGUMENT",
        "'think' is not pinned by default",
    );
    let mut s = settings(&["escalate"], &["escalate"]);
    s.unpinned = Some(vec!["escalate".into()]);
    refused(
        set_builtins(&*w, controller(), s),
        "INVALID_ARGUMENT",
        "both pinned and unpinned",
    );
}

#[test]
fn a_pin_must_name_a_tool_the_bus_has() {
    let w = World::new().setup();
    refused(
        w.builtins(&["think"], &["calculate"]),
        "INVALID_ARGUMENT",
        "'calculate' is pinned but not enabled",
    );
    refused(
        w.builtins(&[], &["refund"]),
        "INVALID_ARGUMENT",
        "'refund' is pinned but the bus has no such tool",
    );
    let v = w.builtins(&[], &["icrc1_balance_of"]).unwrap();
    assert_eq!(
        v.pins,
        vec!["icrc1_balance_of".to_string()],
        "a form tool pins too"
    );
}

#[test]
fn pins_are_bounded() {
    let w = World::new().setup();
    let all: Vec<&str> = tool_host_core::builtin::Builtin::ALL
        .iter()
        .map(|b| b.name())
        .collect();
    let many = [&all[..], &["icrc1_balance_of", "icrc1_fee"]].concat();
    assert!(many.len() > MAX_PINS);
    refused(
        w.builtins(&all, &many),
        "INVALID_ARGUMENT",
        "pins, over the limit of 8",
    );
    // Eight named pins and the default escalate: nine in force.
    let six: Vec<&str> = all.iter().copied().filter(|n| *n != "escalate").collect();
    let eight = [&six[..], &["icrc1_balance_of", "icrc1_fee"]].concat();
    let v = w.builtins(&all, &eight).unwrap_err();
    assert!(v.message.contains("9 pins in force"), "{}", v.message);
    let seven = [&six[..], &["icrc1_balance_of"]].concat();
    assert_eq!(
        w.builtins(&all, &seven).unwrap().pins.len(),
        8,
        "eight in force"
    );
}

#[test]
fn enabling_a_builtin_puts_it_on_the_bus_and_disabling_takes_it_off() {
    let w = World::new().setup();
    let before = tool_host_engine::tools::list_tools(&*w);
    w.builtins(&["calculate"], &[]).unwrap();
    assert!(names(&w).contains(&"calculate".to_string()));
    let with = tool_host_engine::tools::list_tools(&*w);
    assert!(with.contains("\"calculate\""), "list_tools is rebuilt");
    w.builtins(&[], &[]).unwrap();
    assert!(!names(&w).contains(&"calculate".to_string()));
    assert_eq!(tool_host_engine::tools::list_tools(&*w), before);
}

#[test]
fn a_disabled_builtin_is_an_unknown_tool() {
    let w = World::new().setup();
    let e = w
        .tool(owner(), "calculate", json!({ "expression": "1 + 1" }), None)
        .unwrap_err();
    assert_eq!(e.code, "UNKNOWN_TOOL");
    assert_eq!(tool_usage(&w).len(), 0, "a refused call is not counted");
}

fn tool_usage(w: &World) -> Vec<ToolUsage> {
    tool_host_engine::bus::usage::tool_usage(w, owner(), None).unwrap()
}

/// A form's method named like a builtin gives no tool (whether or not the builtin is on), and
/// the registration says why; enabling the builtin then offers the builtin, not the form's.
#[test]
fn a_form_tool_with_a_builtin_name_is_skipped_with_its_reason() {
    let w = World::new().setup();
    let form = json!({
        "format": "candid-profile-resolved",
        "format_version": 0,
        "name": "named",
        "types": {},
        "methods": {
            "calculate": { "mode": "query", "args": [], "results": [{ "type": "text" }] },
            "shout": { "mode": "query", "args": [], "results": [{ "type": "text" }] }
        }
    });
    let info = tool_host_engine::registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "named".into(),
            json: form.to_string(),
        },
    )
    .unwrap();
    assert!(!info.tools.contains(&"calculate".to_string()));
    let skip = info
        .skipped
        .iter()
        .find(|s| s.method == "calculate")
        .unwrap();
    assert!(
        skip.reason.contains("reserved for the builtin tool"),
        "{}",
        skip.reason
    );
    w.builtins(&["calculate"], &[]).unwrap();
    let info = tool_host_engine::bus::describe_tools(&*w);
    let calc = info.iter().find(|t| t.name == "calculate").unwrap();
    assert_eq!(calc.source, ToolSourceView::Builtin);
}

#[test]
fn settings_survive_an_upgrade() {
    let w = World::new().setup();
    let mut s = settings(&["escalate", "current_time"], &["current_time"]);
    s.default_time_zone = Some("Asia/Tokyo".into());
    let v = set_builtins(&*w, controller(), s).unwrap();
    w.upgrade();
    assert_eq!(get_builtins(&*w), v);
    assert!(names(&w).contains(&"current_time".to_string()));
}
