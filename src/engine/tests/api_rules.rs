//! The API's refusals (each specific, each changing nothing), limits, consent messages, reads,
//! paging, and an upgrade that finds every piece of state again.

mod common;
use candid::Principal;
use common::*;
use serde_json::json;
use tool_host_engine::consent::*;
use tool_host_engine::model::Status;
use tool_host_engine::types::*;
use tool_host_engine::*;

/// Everything a refusal must leave as it was.
fn snapshot(w: &World) -> (u64, u64, u64, u64, u64) {
    let s = w.state.borrow();
    (
        s.intents.len(),
        s.intent_keys.len(),
        s.forms.len(),
        s.targets.len(),
        s.config.get().next_intent_id,
    )
}

fn transfer_input(amount: &str, to: &str) -> serde_json::Value {
    json!({ "canister_id": ledger_id().to_text(), "to": to, "amount": amount })
}

#[test]
fn refusals_are_specific_and_change_nothing() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    let before = snapshot(&w);
    let bad_to = receiver().to_text().replace("oj3xs", "oj3xt");
    let cases: Vec<(&str, ApiResult<ToolResult>)> = vec![
        (
            "UNKNOWN_TOOL",
            w.tool(owner(), "no_such_tool", json!({}), None),
        ),
        (
            "INVALID_INPUT",
            futures::executor::block_on(tools::call_tool(
                &*w,
                owner(),
                CallToolArgs {
                    name: "prepare_icrc1_transfer".into(),
                    input: "{not json".into(),
                    owner: None,
                    turn: None,
                },
            )),
        ),
        (
            "INVALID_INPUT",
            w.tool(
                owner(),
                "prepare_icrc1_transfer",
                transfer_input("1.123456789 XYZ", &bad_to),
                None,
            ),
        ),
        ("NOT_FOUND", w.confirm(owner(), 999, &d)),
        ("DIGEST_MISMATCH", w.confirm(owner(), id, &[0u8; 32])),
        ("NOT_OWNER", w.confirm(stranger(), id, &d)),
        (
            "NOT_FOUND",
            w.tool(owner(), "commit", json!({ "preview_id": "999" }), None),
        ),
        (
            "INVALID_INPUT",
            w.tool(
                owner(),
                "commit",
                json!({ "preview_id": 5, "extra": true }),
                None,
            ),
        ),
    ];
    for (want, got) in cases {
        assert_eq!(got.map(|_| ()).unwrap_err().code, want);
    }
    assert_eq!(snapshot(&w), before);
    assert_eq!(w.sends("icrc1_transfer"), 0);
}

#[test]
fn input_issues_come_all_at_once() {
    let w = World::new().setup();
    let bad_to = receiver().to_text().replace("oj3xs", "oj3xt");
    let e = w
        .tool(
            agent(),
            "prepare_icrc1_transfer",
            transfer_input("1.123456789 TKA", &bad_to),
            Some(owner()),
        )
        .unwrap_err();
    let codes: Vec<&str> = e.issues.iter().map(|i| i.code.as_str()).collect();
    assert_eq!(codes, vec!["E_PRINCIPAL", "E_PRECISION"]);
    let e = w
        .tool(
            agent(),
            "prepare_icrc1_transfer",
            transfer_input("1.5 XYZ", &receiver().to_text()),
            Some(owner()),
        )
        .unwrap_err();
    assert_eq!(e.issues[0].code, "E_UNIT");
}

#[test]
fn the_settled_and_the_held_are_refused_with_their_state() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    w.confirm(owner(), id, &d).unwrap();
    assert_eq!(
        send::decline(&*w, owner(), id, None).unwrap_err().code,
        "SETTLED"
    );
}

#[test]
fn oversized_inputs_and_forms_are_refused_not_cut() {
    let w = World::new().setup();
    let before = snapshot(&w);
    let big =
        json!({ "canister_id": ledger_id().to_text(), "to": "x".repeat(70_000), "amount": "1" });
    assert_eq!(
        w.tool(owner(), "prepare_icrc1_transfer", big, None)
            .unwrap_err()
            .code,
        "TOO_LARGE"
    );
    let mut form: serde_json::Value = serde_json::from_str(tool_host_core::packs::ICRC1).unwrap();
    form["padding"] = json!("x".repeat(300_000));
    let e = registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "big".into(),
            json: form.to_string(),
        },
    )
    .unwrap_err();
    assert_eq!(e.code, "TOO_LARGE");
    let e = registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "bad".into(),
            json: "{\"format\": 1}".into(),
        },
    )
    .unwrap_err();
    assert_eq!(e.code, "INVALID_FORM");
    assert!(e.issues.len() >= 2, "every problem: {:?}", e.issues);
    assert_eq!(
        registry::register_form(
            &*w,
            controller(),
            RegisterFormArgs {
                id: "no spaces".into(),
                json: "{}".into()
            }
        )
        .unwrap_err()
        .code,
        "INVALID_ARGUMENT"
    );
    assert_eq!(snapshot(&w), before);
}

#[test]
fn an_owner_cannot_hold_more_open_intents_than_the_cap() {
    let w = World::new().setup();
    let l = Limits {
        max_open_intents_per_owner: 2,
        ..Limits::default()
    };
    registry::set_limits(&*w, controller(), l).unwrap();
    w.prepare("1");
    w.prepare("2");
    let before = snapshot(&w);
    let e = w
        .tool(
            agent(),
            "prepare_icrc1_transfer",
            transfer_input("3", &receiver().to_text()),
            Some(owner()),
        )
        .unwrap_err();
    assert_eq!(e.code, "LIMIT");
    assert_eq!(snapshot(&w), before);
    // Preparing an intent that exists is not a new one.
    assert!(w
        .tool(
            agent(),
            "prepare_icrc1_transfer",
            transfer_input("2", &receiver().to_text()),
            Some(owner())
        )
        .is_ok());
    // Another owner has its own cap.
    assert!(w
        .tool(
            stranger(),
            "prepare_icrc1_transfer",
            transfer_input("3", &receiver().to_text()),
            None
        )
        .is_ok());
}

#[test]
fn limits_are_checked() {
    let w = World::new();
    let l = Limits {
        call_timeout_seconds: 0,
        ..Limits::default()
    };
    assert_eq!(
        registry::set_limits(&*w, controller(), l).unwrap_err().code,
        "INVALID_ARGUMENT"
    );
    let l = Limits {
        max_input_bytes: 1_000_000,
        ..Limits::default()
    };
    assert_eq!(
        registry::set_limits(&*w, controller(), l).unwrap_err().code,
        "INVALID_ARGUMENT"
    );
}

#[test]
fn preparing_the_same_intent_again_returns_the_same_preview() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1.5");
    w.advance(5 * SEC);
    let (id2, d2) = w.prepare("1.5 TKA");
    assert_eq!((id, d), (id2, d2));
    // Another owner's same inputs are another intent.
    let r = w
        .tool(
            stranger(),
            "prepare_icrc1_transfer",
            transfer_input("1.5", &receiver().to_text()),
            None,
        )
        .unwrap();
    assert_ne!(structured(&r)["intent_id"], json!(id.to_string()));
}

#[test]
fn refs_come_from_the_ledger_itself() {
    let w = World::new().setup();
    let t = registry::list_canisters(&*w, owner()).unwrap();
    let refs: serde_json::Value = serde_json::from_str(&t[0].refs).unwrap();
    assert_eq!(
        refs,
        json!({ "query:icrc1_decimals": 8, "query:icrc1_symbol": "TKA", "query:icrc1_fee": 10000 })
    );
    assert!(t[0].icrc3);
    let defs: serde_json::Value = serde_json::from_str(&tools::list_tools(&*w)).unwrap();
    let transfer = defs
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "prepare_icrc1_transfer")
        .unwrap();
    assert!(
        transfer["inputSchema"]["properties"]["amount"]["description"]
            .as_str()
            .unwrap()
            .contains("TKA with at most 8")
    );
}

#[test]
fn read_tools_call_the_canister_and_show_the_answer() {
    let w = World::new().setup();
    let r = w
        .tool(
            owner(),
            "icrc1_balance_of",
            json!({ "canister_id": ledger_id().to_text(), "account": receiver().to_text() }),
            None,
        )
        .unwrap();
    assert_eq!(structured(&r)["result"], json!("0.00000042 TKA"));
    assert!(!r.is_error);
}

#[test]
fn a_read_of_an_unreachable_canister_says_nothing_was_read() {
    let w = World::new().setup();
    // A registered canister that does not answer.
    let gone = Principal::from_text("aovwi-4maaa-aaaaa-qaagq-cai").unwrap();
    futures::executor::block_on(registry::register_canister(
        &*w,
        controller(),
        RegisterCanisterArgs {
            id: gone,
            label: None,
            forms: vec!["icrc1".into()],
            owner: None,
        },
    ))
    .unwrap();
    let r = w
        .tool(
            owner(),
            "icrc1_balance_of",
            json!({ "canister_id": gone.to_text(), "account": receiver().to_text() }),
            None,
        )
        .unwrap();
    assert!(r.is_error);
    assert!(r.content.contains("nothing was read"));
}

#[test]
fn deposit_accounts_are_the_hosts_subaccounts_per_owner() {
    let w = World::new();
    let a = owners::deposit_account(&*w, owner()).unwrap();
    let b = owners::deposit_account(&*w, stranger()).unwrap();
    assert_eq!(a.account.owner, host_id());
    assert_ne!(a.account.subaccount, b.account.subaccount);
    let parsed = tool_host_core::text::account::parse_account(&a.text).unwrap();
    assert_eq!(
        parsed.subaccount.map(|s| s.to_vec()),
        a.account.subaccount.map(|s| s.into_vec())
    );
}

#[test]
fn list_intents_pages() {
    let w = World::new().setup();
    let ids: Vec<u64> = (1..=5).map(|n| w.prepare(&n.to_string()).0).collect();
    let page = views::list_intents(
        &*w,
        owner(),
        ListIntentsArgs {
            owner: None,
            start_after: None,
            limit: Some(2),
        },
    )
    .unwrap();
    assert_eq!(
        page.intents.iter().map(|i| i.id).collect::<Vec<_>>(),
        ids[..2]
    );
    let page2 = views::list_intents(
        &*w,
        owner(),
        ListIntentsArgs {
            owner: None,
            start_after: page.next,
            limit: Some(2),
        },
    )
    .unwrap();
    assert_eq!(
        page2.intents.iter().map(|i| i.id).collect::<Vec<_>>(),
        ids[2..4]
    );
    let last = views::list_intents(
        &*w,
        owner(),
        ListIntentsArgs {
            owner: None,
            start_after: page2.next,
            limit: Some(2),
        },
    )
    .unwrap();
    assert_eq!((last.intents.len(), last.next), (1, None));
    assert_eq!(
        views::list_intents(
            &*w,
            owner(),
            ListIntentsArgs {
                owner: None,
                start_after: None,
                limit: Some(0)
            }
        )
        .unwrap_err()
        .code,
        "INVALID_ARGUMENT"
    );
}

fn consent(w: &World, method: &str, arg: Vec<u8>, spec: Option<DeviceSpec>) -> ConsentResponse {
    consent_message(w, consent_request(method, arg, spec))
}

fn confirm_arg(id: u64, d: &[u8]) -> Vec<u8> {
    candid::encode_one(ConfirmArgs {
        intent_id: id,
        digest: serde_bytes::ByteBuf::from(d.to_vec()),
    })
    .unwrap()
}

#[test]
fn consent_messages_describe_the_confirm_call() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1.5 TKA");
    let info = consent(
        &w,
        "confirm",
        confirm_arg(id, &d),
        Some(DeviceSpec::GenericDisplay),
    )
    .unwrap();
    let ConsentMessage::GenericDisplayMessage(md) = info.consent_message else {
        panic!()
    };
    assert!(md.starts_with("# Confirm: Transfer tokens"), "{md}");
    for want in [
        "**Amount:** 1.5 TKA",
        &format!("**To:** {}", receiver()),
        "**Fee:** 0.0001 TKA",
        "TKA (ryjl3-tyaaa-aaaaa-aaaba-cai)",
        "cannot be undone",
    ] {
        assert!(md.contains(want), "{want} in {md}");
    }
    let fields = consent(
        &w,
        "confirm",
        confirm_arg(id, &d),
        Some(DeviceSpec::FieldsDisplay),
    )
    .unwrap();
    let ConsentMessage::FieldsDisplayMessage { intent, fields } = fields.consent_message else {
        panic!()
    };
    assert_eq!(intent, "Confirm: Transfer tokens");
    let field = |label: &str| {
        fields
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{label} in {fields:?}"))
    };
    let tka = |amount| {
        Value::TokenAmount(TokenAmount {
            decimals: 8,
            amount,
            symbol: "TKA".into(),
        })
    };
    assert_eq!(field("Amount"), tka(150_000_000));
    assert_eq!(field("Fee"), tka(10_000));
    assert_eq!(
        field("Created at time"),
        Value::TimestampSeconds(TimestampSeconds { amount: T0 / SEC })
    );
    assert_eq!(
        field("Preview expires"),
        Value::TimestampSeconds(TimestampSeconds {
            amount: w.intent(id).expires_at / SEC
        })
    );
    assert_eq!(field("To"), Value::text(receiver().to_text()));
    assert_eq!(field("Intent"), Value::text(id.to_string()));
    assert!(
        matches!(field("Action"), Value::Text(t) if t.content.contains("cannot be undone")),
        "{fields:?}"
    );
}

#[test]
fn a_consent_message_never_stands_for_another_intent() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    let (id2, _) = w.prepare("2");
    // Another intent with this digest, a wrong digest, or no intent at all: the same answer,
    // with nothing about any intent in it.
    let unavailable = |r: ConsentResponse| match r {
        Err(Icrc21Error::ConsentMessageUnavailable(e)) => e.description,
        other => panic!("{other:?}"),
    };
    let a = unavailable(consent(&w, "confirm", confirm_arg(id2, &d), None));
    let b = unavailable(consent(&w, "confirm", confirm_arg(id, &[1; 32]), None));
    let c = unavailable(consent(&w, "confirm", confirm_arg(999, &d), None));
    assert!(a == b && b == c, "{a} / {b} / {c}");
    assert!(!a.contains(&id.to_string()) && !a.contains(&owner().to_text()));
    assert!(matches!(
        consent(&w, "confirm", b"garbage".to_vec(), None),
        Err(Icrc21Error::UnsupportedCanisterCall(_))
    ));
    assert!(matches!(
        consent(&w, "register_form", vec![], None),
        Err(Icrc21Error::UnsupportedCanisterCall(_))
    ));
    w.confirm(owner(), id, &d).unwrap();
    assert!(
        matches!(
            consent(&w, "confirm", confirm_arg(id, &d), None),
            Err(Icrc21Error::ConsentMessageUnavailable(_))
        ),
        "nothing to confirm once done"
    );
}

#[test]
fn consent_messages_for_decline_and_for_commit_with_a_digest() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    // Issue 9: anyone, the anonymous caller included, asking for decline's consent message
    // without the digest learns nothing about the intent.
    let blind = consent(
        &w,
        "decline",
        candid::encode_one(DeclineArgs {
            intent_id: id,
            digest: None,
        })
        .unwrap(),
        None,
    );
    match blind {
        Err(Icrc21Error::ConsentMessageUnavailable(e)) => {
            assert!(
                !e.description.contains(&receiver().to_text()),
                "{}",
                e.description
            );
            assert!(
                !e.description.contains(&owner().to_text()),
                "{}",
                e.description
            );
        }
        other => panic!("a decline consent without the digest: {other:?}"),
    }
    let dec = consent(
        &w,
        "decline",
        candid::encode_one(DeclineArgs {
            intent_id: id,
            digest: Some(serde_bytes::ByteBuf::from(d.clone())),
        })
        .unwrap(),
        None,
    )
    .unwrap();
    let ConsentMessage::GenericDisplayMessage(md) = dec.consent_message else {
        panic!()
    };
    assert!(md.contains("nothing is sent"));
    let commit = CallToolArgs {
        name: "commit".into(),
        input: json!({ "preview_id": id.to_string(), "digest": hex::encode(&d) }).to_string(),
        owner: None,
        turn: None,
    };
    assert!(consent(&w, "call_tool", candid::encode_one(commit).unwrap(), None).is_ok());
    let no_digest = CallToolArgs {
        name: "commit".into(),
        input: json!({ "preview_id": id.to_string() }).to_string(),
        owner: None,
        turn: None,
    };
    assert!(consent(
        &w,
        "call_tool",
        candid::encode_one(no_digest).unwrap(),
        None
    )
    .is_err());
}

#[test]
fn an_upgrade_finds_every_piece_of_state_again() {
    let w = World::new().setup();
    registry::add_admin(&*w, controller(), stranger()).unwrap();
    let l = Limits {
        max_open_intents_per_owner: 7,
        ..Limits::default()
    };
    registry::set_limits(&*w, controller(), l.clone()).unwrap();
    let (open, _) = w.prepare("1");
    let (done, dd) = w.prepare("2");
    w.confirm(owner(), done, &dd).unwrap();
    let (unknown, du) = w.prepare("3");
    w.script(Script::Reject(6));
    w.confirm(owner(), unknown, &du).unwrap();
    let tools_before = tools::list_tools(&*w);
    let intents_before: Vec<IntentView> = views::list_intents(
        &*w,
        owner(),
        ListIntentsArgs {
            owner: None,
            start_after: None,
            limit: None,
        },
    )
    .unwrap()
    .intents;
    w.upgrade();
    assert_eq!(tools::list_tools(&*w), tools_before);
    assert_eq!(
        views::list_intents(
            &*w,
            owner(),
            ListIntentsArgs {
                owner: None,
                start_after: None,
                limit: None
            }
        )
        .unwrap()
        .intents,
        intents_before
    );
    assert_eq!(w.intent(open).status, Status::Open);
    assert_eq!(w.intent(done).status, Status::Done);
    assert_eq!(w.intent(unknown).status, Status::Unknown);
    assert_eq!(registry::get_limits(&*w, owner()).unwrap(), l);
    assert_eq!(
        registry::list_admins(&*w, controller()).unwrap(),
        vec![stranger()]
    );
    assert_eq!(owners::list_agents(&*w, owner()).unwrap(), vec![agent()]);
    assert_eq!(registry::list_forms(&*w, owner()).unwrap().len(), 2);
    assert_eq!(w.state.borrow().open_count(&owner()), 2);
    // Preparing the open intent again still finds it; new ids continue after the old ones.
    assert_eq!(w.prepare("1").0, open);
    assert_eq!(w.prepare("4").0, unknown + 1);
}

#[test]
fn every_memory_id_is_distinct() {
    let ids: std::collections::BTreeSet<String> = tool_host_engine::memory::ALL
        .iter()
        .map(|m| format!("{m:?}"))
        .collect();
    assert_eq!(ids.len(), tool_host_engine::memory::ALL.len());
}

#[test]
fn a_forms_title_writes_no_line_of_its_own_in_a_consent_message() {
    // Found by the fourth review of this stop: a title with line breaks wrote its own Amount
    // and To lines (and an open HTML comment) above the real ones.
    let w = World::new().setup();
    let mut form: serde_json::Value = serde_json::from_str(tool_host_core::packs::ICRC1).unwrap();
    form["methods"]["icrc1_transfer"]["intent"] =
        serde_json::json!("Transfer tokens\n\n- **Amount:** 0.01 TKA\n\n<!--");
    tool_host_engine::registry::register_form(
        &*w,
        controller(),
        RegisterFormArgs {
            id: "icrc1".into(),
            json: form.to_string(),
        },
    )
    .unwrap();
    let (id, d) = w.prepare("900");
    let info = consent(
        &w,
        "confirm",
        confirm_arg(id, &d),
        Some(DeviceSpec::GenericDisplay),
    )
    .unwrap();
    let ConsentMessage::GenericDisplayMessage(md) = info.consent_message else {
        panic!()
    };
    assert!(
        md.starts_with("# Confirm: Transfer tokens\\n\\n- **Amount:** 0.01 TKA\\n\\n<!--\n"),
        "{md}"
    );
    assert_eq!(md.matches("\n- **Amount:**").count(), 1, "{md}");
    assert!(md.contains("**Amount:** 900 TKA"), "{md}");
}
