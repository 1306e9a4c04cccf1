//! ICRC-21 as a wallet reads it: the tool host's consent messages decoded with the standard's
//! own `.did` (`candid/icrc21.did`, copied from dfinity/wg-identity-authentication), for both
//! display kinds and for `confirm`, `decline` and `commit`; typed values in the fields display.

mod common;

use candid::types::{Label, Type, TypeInner};
use candid::{IDLArgs, IDLValue, TypeEnv};
use candid_parser::utils::CandidSource;
use common::*;
use serde_json::json;
use tool_host_core::display::Typed;
use tool_host_engine::consent::*;
use tool_host_engine::types::*;

fn standard() -> (TypeEnv, Type) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../candid/icrc21.did");
    let (env, _) = CandidSource::File(&path)
        .load()
        .expect("the standard's .did parses");
    let response: Type = TypeInner::Var("icrc21_consent_message_response".into()).into();
    env.find_type("icrc21_consent_message_response")
        .expect("the standard names its response type");
    (env, response)
}

fn request(method: &str, arg: Vec<u8>, spec: DeviceSpec) -> ConsentMessageRequest {
    consent_request(method, arg, Some(spec))
}

/// The canister's answer as bytes (as `icrc21_canister_call_consent_message` replies), decoded
/// as a wallet decodes it: with the standard's types only.
fn as_wallet_reads_it(w: &World, req: ConsentMessageRequest) -> IDLValue {
    let answer: icrc21_consent_message_response = consent_message(w, req).into();
    let bytes = candid::encode_one(&answer).unwrap();
    let (env, response) = standard();
    let mut args = IDLArgs::from_bytes_with_types(&bytes, &env, &[response])
        .expect("the answer decodes with the standard's icrc21_consent_message_response");
    assert_eq!(args.args.len(), 1);
    args.args.remove(0)
}

/// A record's field or a variant's case by name (the decoded value carries the standard's
/// labels).
fn at<'a>(v: &'a IDLValue, name: &str) -> &'a IDLValue {
    let named = |l: &Label| matches!(l, Label::Named(n) if n == name);
    match v {
        IDLValue::Record(fs) => {
            &fs.iter()
                .find(|f| named(&f.id))
                .unwrap_or_else(|| panic!("no field {name} in {v}"))
                .val
        }
        IDLValue::Variant(c) if named(&c.0.id) => &c.0.val,
        other => panic!("no {name} in {other}"),
    }
}

fn text(v: &IDLValue) -> &str {
    match v {
        IDLValue::Text(t) => t,
        other => panic!("not text: {other}"),
    }
}

/// The fields of a decoded FieldsDisplayMessage: label → value.
fn fields_of(msg: &IDLValue) -> Vec<(String, IDLValue)> {
    let IDLValue::Vec(items) = at(at(msg, "FieldsDisplayMessage"), "fields") else {
        panic!("fields is a vec in {msg}")
    };
    items
        .iter()
        .map(|item| {
            let IDLValue::Record(pair) = item else {
                panic!("{item}")
            };
            (text(&pair[0].val).to_string(), pair[1].val.clone())
        })
        .collect()
}

fn field<'a>(fields: &'a [(String, IDLValue)], label: &str) -> &'a IDLValue {
    &fields
        .iter()
        .find(|(l, _)| l == label)
        .unwrap_or_else(|| panic!("{label} in {fields:?}"))
        .1
}

fn token_amount(v: &IDLValue) -> (u8, u64, String) {
    let t = at(v, "TokenAmount");
    match (at(t, "decimals"), at(t, "amount"), at(t, "symbol")) {
        (IDLValue::Nat8(d), IDLValue::Nat64(a), IDLValue::Text(s)) => (*d, *a, s.clone()),
        other => panic!("TokenAmount {other:?}"),
    }
}

fn seconds(v: &IDLValue, case: &str) -> u64 {
    match at(at(v, case), "amount") {
        IDLValue::Nat64(s) => *s,
        other => panic!("{case} {other}"),
    }
}

/// The three calls that need consent, each with the intent's current digest.
fn calls(id: u64, d: &[u8]) -> [(&'static str, Vec<u8>); 3] {
    [
        (
            "confirm",
            candid::encode_one(ConfirmArgs {
                intent_id: id,
                digest: serde_bytes::ByteBuf::from(d.to_vec()),
            })
            .unwrap(),
        ),
        (
            "decline",
            candid::encode_one(DeclineArgs {
                intent_id: id,
                digest: Some(serde_bytes::ByteBuf::from(d.to_vec())),
            })
            .unwrap(),
        ),
        (
            "call_tool",
            candid::encode_one(CallToolArgs {
                name: "commit".into(),
                input: json!({ "preview_id": id.to_string(), "digest": hex::encode(d) })
                    .to_string(),
                owner: None,
                turn: None,
            })
            .unwrap(),
        ),
    ]
}

#[test]
fn fields_displays_decode_with_the_standards_types_and_carry_typed_values() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1.5 TKA");
    let expires = w.intent(id).expires_at / SEC;
    for (method, arg) in calls(id, &d) {
        let answer = as_wallet_reads_it(&w, request(method, arg, DeviceSpec::FieldsDisplay));
        let info = at(&answer, "Ok");
        assert_eq!(text(at(at(info, "metadata"), "language")), "en");
        let msg = at(info, "consent_message");
        let intent = text(at(at(msg, "FieldsDisplayMessage"), "intent"));
        let fields = fields_of(msg);
        assert_eq!(
            token_amount(field(&fields, "Amount")),
            (8, 150_000_000, "TKA".into()),
            "{method}"
        );
        assert_eq!(
            token_amount(field(&fields, "Fee")),
            (8, 10_000, "TKA".into())
        );
        assert_eq!(
            seconds(field(&fields, "Created at time"), "TimestampSeconds"),
            T0 / SEC
        );
        assert_eq!(
            text(at(at(field(&fields, "To"), "Text"), "content")),
            receiver().to_text()
        );
        assert_eq!(
            text(at(at(field(&fields, "Intent"), "Text"), "content")),
            id.to_string()
        );
        assert_eq!(
            text(at(at(field(&fields, "Digest"), "Text"), "content")),
            hex::encode(&d)
        );
        let action = text(at(at(field(&fields, "Action"), "Text"), "content"));
        if method == "decline" {
            assert_eq!(intent, "Decline: Transfer tokens");
            assert!(action.contains("nothing is sent"), "{action}");
            assert!(!fields.iter().any(|(l, _)| l == "Preview expires"));
        } else {
            assert_eq!(intent, "Confirm: Transfer tokens", "{method}");
            assert!(action.contains("cannot be undone"), "{action}");
            assert_eq!(
                seconds(field(&fields, "Preview expires"), "TimestampSeconds"),
                expires
            );
        }
    }
}

#[test]
fn generic_displays_decode_with_the_standards_types() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1.5 TKA");
    for (method, arg) in calls(id, &d) {
        let answer = as_wallet_reads_it(&w, request(method, arg, DeviceSpec::GenericDisplay));
        let md = text(at(
            at(at(&answer, "Ok"), "consent_message"),
            "GenericDisplayMessage",
        ));
        for want in [
            "**Amount:** 1.5 TKA",
            "**Fee:** 0.0001 TKA",
            &hex::encode(&d),
        ] {
            assert!(md.contains(want), "{method}: {want} in {md}");
        }
        let heading = if method == "decline" {
            "# Decline: Transfer tokens"
        } else {
            "# Confirm: Transfer tokens"
        };
        assert!(md.starts_with(heading), "{method}: {md}");
        assert_eq!(md.contains("**Preview expires:**"), method != "decline");
    }
}

#[test]
fn refusals_decode_with_the_standards_types() {
    let w = World::new().setup();
    let (id, _) = w.prepare("1");
    let [(_, wrong_digest), ..] = calls(id, &[7; 32]);
    let answer = as_wallet_reads_it(
        &w,
        request("confirm", wrong_digest, DeviceSpec::FieldsDisplay),
    );
    let e = at(at(&answer, "Err"), "ConsentMessageUnavailable");
    assert!(text(at(e, "description")).contains("current digest"));
    let answer = as_wallet_reads_it(
        &w,
        request("register_form", vec![], DeviceSpec::GenericDisplay),
    );
    at(at(&answer, "Err"), "UnsupportedCanisterCall");
}

/// ICRC-1 amounts are `nat`; the standard's TokenAmount holds a `nat64`. A larger amount is
/// shown whole, as text, never cut to fit.
#[test]
fn an_amount_above_nat64_is_shown_as_text_whole() {
    let w = World::new().setup();
    // 200 000 000 000 TKA at 8 decimals: 2 × 10^19 base units, above u64::MAX (≈ 1.8 × 10^19).
    let (id, d) = w.prepare("200000000000 TKA");
    let [(method, arg), ..] = calls(id, &d);
    let answer = as_wallet_reads_it(&w, request(method, arg, DeviceSpec::FieldsDisplay));
    let fields = fields_of(at(at(&answer, "Ok"), "consent_message"));
    assert_eq!(
        text(at(at(field(&fields, "Amount"), "Text"), "content")),
        "200000000000 TKA"
    );
    // The fee still fits and stays typed.
    assert_eq!(
        token_amount(field(&fields, "Fee")),
        (8, 10_000, "TKA".into())
    );
}

/// A typed value says only what the preview the owner confirms says: after the target's refs
/// changed (another symbol), the amount is the preview's text, not a value read anew.
#[test]
fn a_typed_value_never_differs_from_the_preview() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1.5 TKA");
    {
        let mut s = w.state.borrow_mut();
        let mut t = s.targets.get(&ledger_id()).unwrap();
        let mut refs: serde_json::Value = serde_json::from_str(&t.refs_json).unwrap();
        refs["query:icrc1_symbol"] = json!("TKB");
        t.refs_json = refs.to_string();
        s.targets.insert(ledger_id(), t);
        s.bump_catalog();
    }
    let [(method, arg), ..] = calls(id, &d);
    let answer = as_wallet_reads_it(&w, request(method, arg, DeviceSpec::FieldsDisplay));
    let fields = fields_of(at(at(&answer, "Ok"), "consent_message"));
    assert_eq!(
        text(at(at(field(&fields, "Amount"), "Text"), "content")),
        "1.5 TKA"
    );
}

#[test]
fn typed_values_in_the_standards_units_or_none() {
    let big = num_bigint::BigUint::from(u64::MAX) + 1u8;
    let amount = |a: num_bigint::BigUint| Typed::TokenAmount {
        amount: a,
        decimals: 8,
        symbol: "TKA".into(),
    };
    assert_eq!(
        typed_value(&amount(u64::MAX.into())),
        Some(Value::TokenAmount(TokenAmount {
            decimals: 8,
            amount: u64::MAX,
            symbol: "TKA".into()
        }))
    );
    assert_eq!(typed_value(&amount(big)), None);
    // Timestamps in whole seconds only (review: an approve's expiry shown a fraction early is
    // another allowance); none before 1970.
    assert_eq!(
        typed_value(&Typed::Timestamp {
            ns: 1_500_000_000_000
        }),
        Some(Value::TimestampSeconds(TimestampSeconds { amount: 1_500 }))
    );
    assert_eq!(
        typed_value(&Typed::Timestamp {
            ns: 1_500_000_000_999
        }),
        None
    );
    assert_eq!(typed_value(&Typed::Timestamp { ns: -1 }), None);
    // Durations in whole seconds only: 1.5 s is not 1 s.
    assert_eq!(
        typed_value(&Typed::Duration {
            ns: 90 * 1_000_000_000
        }),
        Some(Value::DurationSeconds(DurationSeconds { amount: 90 }))
    );
    assert_eq!(typed_value(&Typed::Duration { ns: 1_500_000_000 }), None);
    assert_eq!(
        typed_value(&Typed::Duration {
            ns: (u64::MAX as u128 + 1) * 1_000_000_000
        }),
        None
    );
}

/// The fields display of a confirm of intent `id`, decoded as a wallet decodes it.
fn confirm_fields(w: &World, id: u64, d: &[u8]) -> Vec<(String, IDLValue)> {
    let [(method, arg), ..] = calls(id, d);
    let answer = as_wallet_reads_it(w, request(method, arg, DeviceSpec::FieldsDisplay));
    fields_of(at(at(&answer, "Ok"), "consent_message"))
}

/// Rewrites the stored preview's arguments (what a form's own fields would put there).
fn with_preview_arguments(w: &World, id: u64, arguments: serde_json::Value) {
    let mut s = w.state.borrow_mut();
    let mut i = s.intents.get(&id).expect("intent exists");
    let mut preview: serde_json::Value = serde_json::from_str(&i.preview_json).unwrap();
    preview["arguments"] = arguments;
    i.preview_json = preview.to_string();
    s.put_intent(i);
}

/// Review: an intent whose send had an unknown outcome has no expiry (a confirm sends it
/// again at any time), so its consent message states none.
#[test]
fn an_unknown_intent_states_no_preview_expiry() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    assert!(confirm_fields(&w, id, &d)
        .iter()
        .any(|(l, _)| l == "Preview expires"));
    w.script(Script::Reject(6));
    let r = w.confirm(owner(), id, &d).unwrap();
    assert_eq!(r.outcome.as_deref(), Some("unknown"));
    w.advance(3_601 * SEC);
    let fields = confirm_fields(&w, id, &d);
    assert!(
        !fields.iter().any(|(l, _)| l == "Preview expires"),
        "{fields:?}"
    );
    let action = text(at(at(field(&fields, "Action"), "Text"), "content"));
    assert!(action.contains("sends the same bytes again"), "{action}");
}

/// Review: a form's argument named like one of the host's own lines (`action`, `digest`, ...)
/// is shown as `Argument <name>`, never as the host's line; markdown text stays on its line.
#[test]
fn an_argument_cannot_pass_for_the_hosts_own_lines() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    with_preview_arguments(
        &w,
        id,
        json!({ "action": "Decline: nothing is sent.", "Digest": "00", "memo": "x\n# Confirm: nothing" }),
    );
    let fields = confirm_fields(&w, id, &d);
    let labels: Vec<&str> = fields.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels.iter().filter(|l| **l == "Action").count(),
        1,
        "{labels:?}"
    );
    assert_eq!(
        labels.iter().filter(|l| **l == "Digest").count(),
        1,
        "{labels:?}"
    );
    assert!(labels.contains(&"Argument action"), "{labels:?}");
    assert!(labels.contains(&"Argument Digest"), "{labels:?}");
    let action = text(at(at(field(&fields, "Action"), "Text"), "content"));
    assert!(action.starts_with("Confirm to send"), "{action}");

    let [(method, arg), ..] = calls(id, &d);
    let answer = as_wallet_reads_it(&w, request(method, arg, DeviceSpec::GenericDisplay));
    let md = text(at(
        at(at(&answer, "Ok"), "consent_message"),
        "GenericDisplayMessage",
    ));
    assert_eq!(md.lines().filter(|l| l.starts_with('#')).count(), 1, "{md}");
    assert!(md.contains("**Memo:** x\\n# Confirm: nothing"), "{md}");
}

/// Review: the 8 KiB bound is on the message as built (the generic display's markdown with
/// its header and markup), not on the fields' text alone.
#[test]
fn the_message_bound_counts_the_markdown_as_built() {
    let w = World::new().setup();
    let (id, d) = w.prepare("1");
    let many: serde_json::Map<String, serde_json::Value> =
        (0..1_000).map(|n| (format!("f{n}"), json!("x"))).collect();
    with_preview_arguments(&w, id, serde_json::Value::Object(many));
    let [(method, arg), ..] = calls(id, &d);
    let answer = as_wallet_reads_it(&w, request(method, arg, DeviceSpec::GenericDisplay));
    let why = text(at(
        at(at(&answer, "Err"), "ConsentMessageUnavailable"),
        "description",
    ));
    assert!(why.contains("over 8192"), "{why}");
}
