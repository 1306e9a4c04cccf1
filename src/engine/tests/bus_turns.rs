//! Turns: selected once, remembered, every call recorded as a step; a tool the turn did not
//! offer refused with `NOT_OFFERED` and recorded as such; only the owner and its agents read a
//! turn; bounded per owner and in steps; pruned after the retention; kept across upgrades.

mod common;
use common::*;
use serde_json::json;
use sha2::{Digest, Sha256};
use tool_host_engine::bus::turns::{MAX_STEPS, MAX_TURNS_PER_OWNER};
use tool_host_engine::types::*;

fn transfer_input() -> serde_json::Value {
    json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "1.5" })
}

fn balance_input() -> serde_json::Value {
    json!({ "canister_id": ledger_id().to_text(), "account": owner().to_text() })
}

fn code(r: ApiResult<ToolResult>) -> String {
    r.expect_err("refused").code
}

#[test]
fn a_turn_offers_a_shortlist_rendered_in_its_format() {
    let w = World::new().setup();
    let all = tool_host_engine::bus::describe_tools(&*w).len();
    let t = w
        .begin(agent(), "send tokens to bob", Some(3), Some(owner()))
        .unwrap();
    assert!(
        !t.offered.is_empty() && t.offered.len() <= 3,
        "{:?}",
        t.offered
    );
    assert!(all > 3);
    let tools: serde_json::Value = serde_json::from_str(&t.tools).unwrap();
    let rendered: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        rendered, t.offered,
        "MCP by default, in the selection's order"
    );
    let md = tool_host_engine::bus::turns::begin_turn(
        &*w,
        owner(),
        BeginTurnArgs {
            query: "balance".into(),
            limit: None,
            format: Some(ToolFormat::Markdown),
            owner: None,
        },
    )
    .unwrap();
    assert!(md.offered.len() <= 6, "the default limit is 6");
    assert!(
        serde_json::from_str::<serde_json::Value>(&md.tools).is_err(),
        "markdown"
    );
    for name in &md.offered {
        assert!(md.tools.contains(name.as_str()), "{name} in the markdown");
    }
    assert_eq!(
        w.get_turn(owner(), md.turn_id, None).unwrap().format,
        ToolFormat::Markdown
    );
}

#[test]
fn a_prepare_tool_comes_with_commit() {
    let w = World::new().setup();
    for limit in [2, 3, 6] {
        let t = w
            .begin(
                owner(),
                "prepare icrc1 transfer of tokens",
                Some(limit),
                None,
            )
            .unwrap();
        let prepares = t
            .offered
            .iter()
            .filter(|n| n.starts_with("prepare_"))
            .count();
        assert!(prepares > 0, "{:?}", t.offered);
        assert!(
            t.offered.contains(&"commit".to_string()),
            "{limit}: {:?}",
            t.offered
        );
        assert!(t.offered.len() <= limit as usize);
    }
}

/// `commit` comes with a prepare tool only: a set of reads is offered without it (the bus
/// tells a prepare tool by its plan).
#[test]
fn a_set_of_reads_comes_without_commit() {
    let w = World::new().setup();
    for limit in [1, 2, 3] {
        let t = w
            .begin(owner(), "icrc1 balance", Some(limit), None)
            .unwrap();
        assert!(
            t.offered.contains(&"icrc1_balance_of".to_string()),
            "{limit}: {:?}",
            t.offered
        );
        assert!(
            !t.offered.iter().any(|n| n.starts_with("prepare_")),
            "{limit}: {:?}",
            t.offered
        );
        assert!(
            !t.offered.contains(&"commit".to_string()),
            "{limit}: {:?}",
            t.offered
        );
    }
}

#[test]
fn a_call_in_a_turn_is_recorded_as_a_step() {
    let w = World::new().setup();
    let t = w
        .begin(agent(), "what is my balance", Some(6), Some(owner()))
        .unwrap();
    assert!(
        t.offered.contains(&"icrc1_balance_of".to_string()),
        "{:?}",
        t.offered
    );
    w.advance(SEC);
    let input = balance_input();
    w.turn_tool(
        agent(),
        t.turn_id,
        "icrc1_balance_of",
        input.clone(),
        Some(owner()),
    )
    .unwrap();
    let got = w.get_turn(owner(), t.turn_id, None).unwrap();
    assert_eq!(got.query, "what is my balance");
    assert_eq!(got.offered_tools, t.offered);
    assert_eq!(got.steps.len(), 1);
    let st = &got.steps[0];
    assert_eq!(st.tool, "icrc1_balance_of");
    assert_eq!(st.outcome, "read");
    assert!(!st.is_error);
    assert_eq!(st.at, T0 + SEC);
    assert_eq!(st.caller, agent());
    assert_eq!(
        st.input_sha256,
        hex::encode(Sha256::digest(input.to_string().as_bytes()))
    );
    assert!(!got.finished && got.answer.is_none());
}

#[test]
fn a_prepare_in_a_turn_is_recorded_as_prepared_and_an_error_by_its_code() {
    let w = World::new().setup();
    let t = w
        .begin(agent(), "prepare icrc1 transfer", Some(6), Some(owner()))
        .unwrap();
    assert!(t.offered.contains(&"prepare_icrc1_transfer".to_string()));
    w.turn_tool(
        agent(),
        t.turn_id,
        "prepare_icrc1_transfer",
        transfer_input(),
        Some(owner()),
    )
    .unwrap();
    let bad = w.turn_tool(
        agent(),
        t.turn_id,
        "prepare_icrc1_transfer",
        json!({ "amount": "x" }),
        Some(owner()),
    );
    assert_eq!(code(bad), "INVALID_INPUT");
    let steps = w.get_turn(agent(), t.turn_id, Some(owner())).unwrap().steps;
    let classes: Vec<(&str, bool)> = steps
        .iter()
        .map(|s| (s.outcome.as_str(), s.is_error))
        .collect();
    assert_eq!(classes, vec![("prepared", false), ("INVALID_INPUT", true)]);
}

#[test]
fn a_tool_the_turn_did_not_offer_is_refused_and_recorded() {
    let w = World::new().setup();
    let t = w.begin(owner(), "balance", Some(1), None).unwrap();
    assert_eq!(t.offered.len(), 1);
    let other = ["icrc1_fee", "icrc1_balance_of"]
        .into_iter()
        .find(|n| !t.offered.contains(&n.to_string()))
        .unwrap();
    let e = w
        .turn_tool(
            owner(),
            t.turn_id,
            other,
            json!({ "canister_id": ledger_id().to_text() }),
            None,
        )
        .unwrap_err();
    assert_eq!(e.code, "NOT_OFFERED");
    assert!(e.message.contains(other), "{}", e.message);
    // A tool the bus does not have at all was never offered either.
    assert_eq!(
        code(w.turn_tool(owner(), t.turn_id, "refund", json!({}), None)),
        "NOT_OFFERED"
    );
    let got = w.get_turn(owner(), t.turn_id, None).unwrap();
    let steps: Vec<(&str, &str, bool)> = got
        .steps
        .iter()
        .map(|s| (s.tool.as_str(), s.outcome.as_str(), s.is_error))
        .collect();
    assert_eq!(
        steps,
        vec![
            (other, "NOT_OFFERED", true),
            ("refund", "NOT_OFFERED", true)
        ]
    );
    assert!(w.calls.borrow().is_empty(), "nothing was called");
    let usage = tool_host_engine::bus::usage::tool_usage(&*w, owner(), None).unwrap();
    assert!(
        usage.is_empty(),
        "a NOT_OFFERED refusal is not a call made: {usage:?}"
    );
}

#[test]
fn another_owners_turn_is_not_found() {
    let w = World::new().setup();
    let t = w.begin(owner(), "balance", None, None).unwrap();
    let missing = w.get_turn(owner(), t.turn_id + 100, None).unwrap_err();
    for (caller, as_owner) in [
        (other_owner(), None),
        (stranger(), Some(owner())),
        (other_owner(), Some(owner())),
    ] {
        let e = w.get_turn(caller, t.turn_id, as_owner).unwrap_err();
        assert_eq!(e.code, "NOT_FOUND");
        assert_eq!(
            e.message.replace(&t.turn_id.to_string(), "N"),
            missing.message.replace(&(t.turn_id + 100).to_string(), "N"),
            "the same answer as a missing turn"
        );
    }
    // Another owner calling in it: the same.
    let e = w
        .turn_tool(
            other_owner(),
            t.turn_id,
            "icrc1_balance_of",
            balance_input(),
            None,
        )
        .unwrap_err();
    assert_eq!(e.code, "NOT_FOUND");
    assert!(w
        .get_turn(owner(), t.turn_id, None)
        .unwrap()
        .steps
        .is_empty());
}

#[test]
fn an_agent_of_the_owner_reads_its_turns() {
    let w = World::new().setup();
    let t = w.begin(owner(), "balance", None, None).unwrap();
    let got = w.get_turn(agent(), t.turn_id, Some(owner())).unwrap();
    assert_eq!(got.owner, owner());
    tool_host_engine::owners::revoke_agent(&*w, owner(), agent()).unwrap();
    assert_eq!(
        w.get_turn(agent(), t.turn_id, Some(owner()))
            .unwrap_err()
            .code,
        "NOT_FOUND"
    );
}

#[test]
fn begin_turn_checks_its_caller_query_and_limit() {
    let w = World::new().setup();
    let e = w
        .begin(candid::Principal::anonymous(), "x", None, None)
        .unwrap_err();
    assert_eq!(e.code, "ANONYMOUS");
    assert_eq!(
        w.begin(stranger(), "x", None, Some(owner()))
            .unwrap_err()
            .code,
        "NOT_AUTHORIZED"
    );
    for bad in [0, 33] {
        let e = w.begin(owner(), "x", Some(bad), None).unwrap_err();
        assert_eq!(e.code, "INVALID_ARGUMENT");
        assert!(e.message.contains("limit is 1 to 32"), "{}", e.message);
    }
    let e = w.begin(owner(), &"x".repeat(2049), None, None).unwrap_err();
    assert_eq!(e.code, "TOO_LARGE");
    assert!(w.begin(owner(), &"x".repeat(2048), Some(32), None).is_ok());
    assert_eq!(
        w.state.borrow().turns.len(),
        1,
        "only the accepted turn is kept"
    );
}

fn finish_enabled() -> std::rc::Rc<World> {
    let w = World::new().setup();
    w.builtins(&["finish", "think", "escalate"], &["finish"])
        .unwrap();
    w
}

#[test]
fn finish_records_the_answer_and_a_finished_turn_refuses() {
    let w = finish_enabled();
    let t = w.begin(agent(), "anything", None, Some(owner())).unwrap();
    assert!(
        t.offered.contains(&"finish".to_string()),
        "pinned: {:?}",
        t.offered
    );
    let r = w
        .turn_tool(
            agent(),
            t.turn_id,
            "finish",
            json!({ "answer": "done: 42" }),
            Some(owner()),
        )
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    let got = w.get_turn(owner(), t.turn_id, None).unwrap();
    assert!(got.finished);
    assert_eq!(got.answer.as_deref(), Some("done: 42"));
    assert_eq!(got.finished_at, Some(T0));
    assert_eq!(got.steps.last().unwrap().outcome, "ok");
    for name in ["think", "finish", "icrc1_balance_of"] {
        let e = w
            .turn_tool(
                agent(),
                t.turn_id,
                name,
                json!({ "thought": "x" }),
                Some(owner()),
            )
            .unwrap_err();
        assert_eq!(e.code, "TURN_FINISHED", "{name}");
    }
    assert_eq!(w.get_turn(owner(), t.turn_id, None).unwrap().steps.len(), 1);
}

#[test]
fn finish_without_a_turn_is_refused() {
    let w = finish_enabled();
    let e = w
        .tool(owner(), "finish", json!({ "answer": "x" }), None)
        .unwrap_err();
    assert_eq!(e.code, "INVALID_ARGUMENT");
    assert!(e.message.contains("finish ends a turn"), "{}", e.message);
}

#[test]
fn steps_past_the_bound_are_refused_never_dropped() {
    let w = finish_enabled();
    let t = w.begin(owner(), "think", None, None).unwrap();
    assert!(t.offered.contains(&"think".to_string()), "{:?}", t.offered);
    for k in 0..MAX_STEPS {
        w.turn_tool(
            owner(),
            t.turn_id,
            "think",
            json!({ "thought": format!("step {k}") }),
            None,
        )
        .unwrap();
    }
    let e = w
        .turn_tool(
            owner(),
            t.turn_id,
            "think",
            json!({ "thought": "one more" }),
            None,
        )
        .unwrap_err();
    assert_eq!(e.code, "LIMIT");
    let got = w.get_turn(owner(), t.turn_id, None).unwrap();
    assert_eq!(got.steps.len(), MAX_STEPS);
    let first = Sha256::digest(json!({ "thought": "step 0" }).to_string().as_bytes());
    assert_eq!(
        got.steps[0].input_sha256,
        hex::encode(first),
        "the first is kept"
    );
}

#[test]
fn at_the_turn_bound_the_oldest_finished_turn_makes_room() {
    let w = finish_enabled();
    let mut ids = vec![];
    // Two pins (escalate by default, finish): a limit of 2 offers both.
    for _ in 0..MAX_TURNS_PER_OWNER {
        ids.push(w.begin(owner(), "x", Some(2), None).unwrap().turn_id);
    }
    let e = w.begin(owner(), "x", Some(2), None).unwrap_err();
    assert_eq!(e.code, "LIMIT");
    assert!(e.message.contains("none of them finished"), "{}", e.message);
    // Another owner is not held back by this one's bound.
    assert!(w.begin(other_owner(), "x", None, None).is_ok());
    for id in [ids[10], ids[3]] {
        w.turn_tool(owner(), id, "finish", json!({ "answer": "ok" }), None)
            .unwrap();
    }
    let next = w.begin(owner(), "x", Some(2), None).unwrap().turn_id;
    assert_eq!(
        w.get_turn(owner(), ids[3], None).unwrap_err().code,
        "NOT_FOUND",
        "the oldest finished left"
    );
    assert!(w.get_turn(owner(), ids[10], None).unwrap().finished);
    assert!(
        w.get_turn(owner(), ids[0], None).is_ok(),
        "unfinished turns stay"
    );
    assert!(w.get_turn(owner(), next, None).is_ok());
}

#[test]
fn turns_are_pruned_after_the_retention() {
    let w = World::new().setup();
    let t = w.begin(owner(), "balance", None, None).unwrap();
    let retention = w.state.borrow().limits().retention_seconds * SEC;
    w.advance(retention - SEC);
    w.run_timers();
    assert!(w.get_turn(owner(), t.turn_id, None).is_ok());
    w.advance(SEC);
    // Expired: no longer readable or callable, even before the timer ran.
    assert_eq!(
        w.get_turn(owner(), t.turn_id, None).unwrap_err().code,
        "NOT_FOUND"
    );
    assert_eq!(
        code(w.turn_tool(
            owner(),
            t.turn_id,
            "icrc1_balance_of",
            balance_input(),
            None
        )),
        "NOT_FOUND"
    );
    w.run_timers();
    assert!(w.state.borrow().turns.is_empty(), "pruned by the timer");
    assert!(w.state.borrow().owner_turns.is_empty());
}

#[test]
fn a_longer_retention_keeps_a_turn_longer() {
    let w = World::new().setup();
    let t = w.begin(owner(), "balance", None, None).unwrap();
    let mut l = w.state.borrow().limits();
    let before = l.retention_seconds * SEC;
    l.retention_seconds *= 2;
    tool_host_engine::registry::set_limits(&*w, controller(), l).unwrap();
    w.advance(before);
    w.run_timers();
    assert!(
        w.get_turn(owner(), t.turn_id, None).is_ok(),
        "moved to the new retention"
    );
    w.advance(before);
    w.run_timers();
    assert!(w.state.borrow().turns.is_empty());
}

/// Usage counts are bounded in all: past `MAX_USAGE_ENTRIES` (owner, tool) pairs a call of a
/// new pair is made but not counted; a pair counted already goes on counting.
#[test]
fn usage_counts_stop_taking_new_pairs_at_their_bound() {
    use tool_host_engine::bus::usage::{bump, tool_usage, MAX_USAGE_ENTRIES};
    let w = World::new().setup();
    let fee = |who| {
        let r = w
            .tool(
                who,
                "icrc1_fee",
                json!({ "canister_id": ledger_id().to_text() }),
                None,
            )
            .unwrap();
        assert!(!r.is_error, "{r:?}");
    };
    fee(owner());
    {
        let mut s = w.state.borrow_mut();
        // Other owners' pairs, through the engine's own insert path, up to one short of the bound.
        for n in 0..MAX_USAGE_ENTRIES as u32 - 2 {
            let mut b = [7u8; 5];
            b[1..].copy_from_slice(&n.to_be_bytes());
            bump(&mut s, &candid::Principal::from_slice(&b), "icrc1_fee");
        }
        assert_eq!(s.usage.len(), MAX_USAGE_ENTRIES - 1);
    }
    // The last pair the bound has room for is counted.
    fee(other_owner());
    assert_eq!(w.state.borrow().usage.len(), MAX_USAGE_ENTRIES);
    // At the bound: a new pair (an owner's first call) is made and answered, not counted...
    fee(stranger());
    assert!(tool_usage(&*w, stranger(), None).unwrap().is_empty());
    assert_eq!(w.state.borrow().usage.len(), MAX_USAGE_ENTRIES);
    // ...while the pairs counted already go on counting.
    fee(owner());
    fee(other_owner());
    let calls = |who| tool_usage(&*w, who, None).unwrap()[0].calls;
    assert_eq!((calls(owner()), calls(other_owner())), (2, 2));
}

#[test]
fn usage_counts_calls_made_and_selection_weighs_them() {
    let w = World::new().setup();
    for _ in 0..3 {
        w.tool(
            owner(),
            "icrc1_fee",
            json!({ "canister_id": ledger_id().to_text() }),
            None,
        )
        .unwrap();
    }
    let usage = tool_host_engine::bus::usage::tool_usage(&*w, agent(), Some(owner())).unwrap();
    assert_eq!(
        usage,
        vec![ToolUsage {
            name: "icrc1_fee".into(),
            calls: 3
        }]
    );
    assert!(
        tool_host_engine::bus::usage::tool_usage(&*w, other_owner(), None)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        tool_host_engine::bus::usage::tool_usage(&*w, stranger(), Some(owner()))
            .unwrap_err()
            .code,
        "NOT_AUTHORIZED"
    );
    // With no words to go on, the owner's usage decides; another owner's does not.
    let mine = w.begin(owner(), "", Some(1), None).unwrap();
    assert_eq!(mine.offered, vec!["icrc1_fee".to_string()]);
    let select = |who| {
        tool_host_engine::bus::select_tools(
            &*w,
            who,
            SelectArgs {
                query: String::new(),
                limit: Some(1),
                owner: None,
            },
        )
        .unwrap()
    };
    assert_eq!(select(owner())[0].name, "icrc1_fee");
    assert_eq!(select(agent()).len(), 1);
}

/// The step is written before the call's await: an upgrade at that await keeps it (pending:
/// its outcome never came back), and the turn goes on.
#[test]
fn a_step_written_before_the_await_survives_an_upgrade_at_it() {
    let w = World::new().setup();
    let t = w.begin(owner(), "balance", Some(6), None).unwrap();
    assert!(t.offered.contains(&"icrc1_balance_of".to_string()));
    w.yield_after.borrow_mut().insert("icrc1_balance_of".into());
    {
        let mut call = Box::pin(tool_host_engine::tools::call_tool(
            &*w,
            owner(),
            CallToolArgs {
                name: "icrc1_balance_of".into(),
                input: balance_input().to_string(),
                owner: None,
                turn: Some(t.turn_id),
            },
        ));
        assert!(poll_once(call.as_mut()).is_pending(), "at its await");
        // The upgrade: the call's future is gone with the old code.
    }
    w.upgrade();
    let got = w.get_turn(owner(), t.turn_id, None).unwrap();
    assert_eq!(got.steps.len(), 1);
    assert_eq!(got.steps[0].outcome, "pending");
    w.turn_tool(
        owner(),
        t.turn_id,
        "icrc1_balance_of",
        balance_input(),
        None,
    )
    .unwrap();
    let got = w.get_turn(owner(), t.turn_id, None).unwrap();
    assert_eq!(got.steps[1].outcome, "read");
}

#[test]
fn an_upgrade_keeps_turns_usage_settings_and_inbox() {
    let w = finish_enabled();
    tool_host_engine::bus::builtins::set_escalation_handler(&*w, owner(), Some(handler_id()))
        .unwrap();
    let t = w.begin(owner(), "help", None, None).unwrap();
    w.turn_tool(
        owner(),
        t.turn_id,
        "escalate",
        json!({ "reason": "stuck" }),
        None,
    )
    .unwrap();
    let turn = w.get_turn(owner(), t.turn_id, None).unwrap();
    let usage = tool_host_engine::bus::usage::tool_usage(&*w, owner(), None).unwrap();
    let inbox = tool_host_engine::bus::builtins::get_inbox(&*w, owner(), None).unwrap();
    let settings = tool_host_engine::bus::settings::get_builtins(&*w);
    assert_eq!(inbox.len(), 1);
    w.upgrade();
    assert_eq!(w.get_turn(owner(), t.turn_id, None).unwrap(), turn);
    assert_eq!(
        tool_host_engine::bus::usage::tool_usage(&*w, owner(), None).unwrap(),
        usage
    );
    assert_eq!(
        tool_host_engine::bus::builtins::get_inbox(&*w, owner(), None).unwrap(),
        inbox
    );
    assert_eq!(tool_host_engine::bus::settings::get_builtins(&*w), settings);
    let next = w.begin(owner(), "help", None, None).unwrap();
    assert!(next.turn_id > t.turn_id, "ids go on");
    assert_eq!(w.state.borrow().handlers.get(&owner()), Some(handler_id()));
}

/// The counts `bump` remembers (the last 16 pairs) are the map's: pairs called in turn, more of
/// them than it remembers and some again soon after, count as a model of every call says, with
/// the remembered counts checked against the map after every call; an upgrade (which empties
/// the heap) loses no count.
#[test]
fn usage_counts_remembered_in_the_heap_stay_the_maps() {
    use std::collections::BTreeMap;
    use tool_host_engine::bus::usage::{bump, counts};
    let w = World::new().setup();
    let owners: Vec<candid::Principal> = (0..12u8).map(|n| p(100 + n)).collect();
    let tools = ["icrc1_fee", "icrc1_balance_of", "prepare_icrc1_transfer"];
    let mut model: BTreeMap<(candid::Principal, &str), u64> = BTreeMap::new();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for step in 0..600 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Mostly a few pairs (remembered), now and then any of 36 (forgotten in between).
        let (o, t) = if seed.is_multiple_of(4) {
            (
                owners[(seed >> 8) as usize % 12],
                tools[(seed >> 16) as usize % 3],
            )
        } else {
            (
                owners[(seed >> 8) as usize % 3],
                tools[(seed >> 16) as usize % 2],
            )
        };
        bump(&mut w.state.borrow_mut(), &o, t);
        *model.entry((o, t)).or_default() += 1;
        w.state.borrow().check_indexes().unwrap();
        if step == 300 {
            w.upgrade();
        }
    }
    for o in &owners {
        let want: BTreeMap<String, u64> = model
            .iter()
            .filter(|((m, _), _)| m == o)
            .map(|((_, t), n)| (t.to_string(), *n))
            .collect();
        let got: BTreeMap<String, u64> = counts(&w.state.borrow(), o).into_iter().collect();
        assert_eq!(got, want, "{o}");
    }
}
