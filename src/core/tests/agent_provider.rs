//! The agent method's provider wire formats: request bodies for Chat Completions and Responses
//! pinned as goldens, the provider settings, and realistic reply bodies for every answer kind of
//! both APIs (tests/fixtures/agent/). Set `UPDATE_GOLDEN=1` to write the request goldens anew
//! after an intended change, then review the diff by hand against the providers' documentation.

use serde_json::Value;
use tool_host_core::agent::finish::finish;
use tool_host_core::agent::json::{self, Json, DOCUMENT};
use tool_host_core::agent::provider::{
    read_settings, DEFAULT_MAX_COMPLETION_TOKENS, MAX_COMPLETION_TOKENS, SCHEMA_NAME,
};
use tool_host_core::agent::{
    finish_agent, prepare_agent, project_response_schema, request_body, transport_result,
    AgentError, AgentErrorCode, Api, Outcome, PreparedAgent, ProviderSettings, Stop,
    StructuredOutput, TransportResult, DIALECT,
};

// ---- helpers ----

fn dir() -> String {
    format!("{}/tests/fixtures/agent", env!("CARGO_MANIFEST_DIR"))
}

/// A fixture, read as the method reads any document.
fn fixture(name: &str) -> Json {
    let path = format!("{}/{name}", dir());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    json::parse(&text, &DOCUMENT, name).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A value written inline (serde_json sorts its members: only for values whose order is moot).
fn j(v: Value) -> Json {
    json::parse(&v.to_string(), &DOCUMENT, "").unwrap()
}

fn with(mut v: Json, key: &str, x: Json) -> Json {
    if let Json::Object(m) = &mut v {
        match m.iter_mut().find(|(k, _)| k == key) {
            Some((_, slot)) => *slot = x,
            None => m.push((key.to_string(), x)),
        }
    }
    v
}

fn without(mut v: Json, key: &str) -> Json {
    if let Json::Object(m) = &mut v {
        m.retain(|(k, _)| k != key);
    }
    v
}

fn settings(api: Api, structured_output: StructuredOutput) -> ProviderSettings {
    ProviderSettings {
        model: "gpt-4.1-mini".into(),
        api,
        structured_output,
        max_completion_tokens: 2048,
    }
}

fn prepared(schema: bool) -> PreparedAgent {
    let mut input = fixture("input.json");
    if schema {
        input = with(input, "response_schema", fixture("schema.json"));
    }
    prepare_agent(&input, None).unwrap()
}

fn body(schema: bool, api: Api, so: StructuredOutput) -> Json {
    request_body(&prepared(schema).to_json(), &settings(api, so)).unwrap()
}

/// Compares a request body with its golden: the parsed values are equal, and so is the compact
/// text, which pins the members' order too.
fn golden(name: &str, body: &Json) {
    let path = format!("{}/golden/{name}", dir());
    let text = serde_json::to_string_pretty(body).unwrap() + "\n";
    if std::env::var("UPDATE_GOLDEN").is_ok() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{path} missing; run with UPDATE_GOLDEN=1 and review it"));
    let parsed = json::parse(&want, &DOCUMENT, name).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&want).unwrap(),
        serde_json::from_str::<Value>(&body.compact()).unwrap(),
        "{name} changed; compare with UPDATE_GOLDEN=1 and git diff"
    );
    assert_eq!(
        parsed.compact(),
        body.compact(),
        "{name}: the members' order changed"
    );
    assert_eq!(want, text, "{name}: the golden's text is not the body's");
}

fn reply(api: Api, name: &str) -> Result<TransportResult, AgentError> {
    transport_result(api, 200, &fixture(name))
}

fn ok(api: Api, name: &str) -> TransportResult {
    reply(api, name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn refused(api: Api, name: &str, place: &str) -> AgentError {
    let e = reply(api, name).expect_err(name);
    assert_eq!(e.code, AgentErrorCode::InvalidResult, "{name}: {e}");
    assert_eq!(e.place, place, "{name}: {e}");
    e
}

/// Every string value in `v`, for checking an error repeats none of the provider's words.
fn strings(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::String(s) => out.push(s.clone()),
        Json::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Json::Object(m) => m.iter().for_each(|(_, x)| strings(x, out)),
        _ => {}
    }
}

/// The error names neither the secret-looking marker nor any text of the body's `error`.
fn echoes_nothing(e: &AgentError, body: &Json) {
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains("SECRET-MARKER"), "{shown}");
    let mut texts = Vec::new();
    strings(body.get("error").unwrap_or(&Json::Null), &mut texts);
    assert!(!texts.is_empty());
    for t in texts.iter().filter(|t| t.len() >= 6) {
        assert!(
            !e.message.contains(t.as_str()) && !e.place.contains(t.as_str()),
            "the error repeats {t:?} from the body: {e}"
        );
    }
}

const CHAT: Api = Api::ChatCompletions;
const RESP: Api = Api::Responses;
const PROMPT: StructuredOutput = StructuredOutput::Prompt;
const STRICT: StructuredOutput = StructuredOutput::JsonSchema;

// ---- request bodies ----

#[test]
fn a_chat_request_without_a_schema_is_its_golden_body() {
    golden("chat_text.json", &body(false, CHAT, PROMPT));
}

#[test]
fn a_chat_request_with_a_schema_in_prompt_mode_is_its_golden_body() {
    golden("chat_schema_prompt.json", &body(true, CHAT, PROMPT));
}

#[test]
fn a_chat_request_with_a_schema_in_json_schema_mode_is_its_golden_body() {
    golden("chat_schema_strict.json", &body(true, CHAT, STRICT));
}

#[test]
fn a_responses_request_without_a_schema_is_its_golden_body() {
    golden("responses_text.json", &body(false, RESP, PROMPT));
}

#[test]
fn a_responses_request_with_a_schema_in_prompt_mode_is_its_golden_body() {
    golden("responses_schema_prompt.json", &body(true, RESP, PROMPT));
}

#[test]
fn a_responses_request_with_a_schema_in_json_schema_mode_is_its_golden_body() {
    golden("responses_schema_strict.json", &body(true, RESP, STRICT));
}

#[test]
fn without_a_schema_json_schema_mode_requests_ordinary_text() {
    for api in [CHAT, RESP] {
        assert_eq!(
            body(false, api, STRICT),
            body(false, api, PROMPT),
            "{api:?}"
        );
    }
}

#[test]
fn prompt_mode_sends_the_schema_in_the_prompt_alone() {
    let chat = body(true, CHAT, PROMPT);
    assert_eq!(chat.get("response_format"), None);
    let resp = body(true, RESP, PROMPT);
    assert_eq!(resp.get("text"), None);
    let prompt = prepared(true).prompt;
    assert!(
        prompt.contains("\"additionalProperties\":false"),
        "{prompt}"
    );
    assert!(
        !prompt.contains(DIALECT),
        "the prompt shows the projected schema"
    );
    for b in [&chat, &resp] {
        let sent = b
            .get("messages")
            .and_then(|m| m.items()?.first()?.get("content"))
            .or_else(|| b.get("input"));
        assert_eq!(sent, Some(&Json::str(&prompt)));
    }
}

#[test]
fn every_body_stores_nothing_offers_no_tools_and_bounds_its_tokens() {
    for schema in [false, true] {
        for so in [PROMPT, STRICT] {
            let chat = body(schema, CHAT, so);
            let resp = body(schema, RESP, so);
            for b in [&chat, &resp] {
                assert_eq!(b.get("store"), Some(&Json::Bool(false)));
                assert_eq!(b.get("model"), Some(&Json::str("gpt-4.1-mini")));
                for absent in [
                    "tools",
                    "tool_choice",
                    "functions",
                    "stream",
                    "background",
                    "max_tokens",
                ] {
                    assert_eq!(b.get(absent), None, "{absent}");
                }
            }
            assert_eq!(chat.get("n"), Some(&Json::int(1)));
            assert_eq!(chat.get("max_completion_tokens"), Some(&Json::int(2048)));
            assert_eq!(chat.get("max_output_tokens"), None);
            assert_eq!(resp.get("max_output_tokens"), Some(&Json::int(2048)));
            assert_eq!(resp.get("max_completion_tokens"), None);
            assert_eq!(resp.get("n"), None);
            let messages = chat.get("messages").and_then(Json::items).unwrap();
            assert_eq!(messages.len(), 1);
            assert_eq!(messages[0].get("role"), Some(&Json::str("user")));
            assert!(matches!(resp.get("input"), Some(Json::String(_))));
        }
    }
}

#[test]
fn both_strict_forms_send_strict_true_and_the_projected_schema() {
    let projected = project_response_schema(&fixture("schema.json")).unwrap();
    assert_eq!(projected.get("$schema"), None);
    assert_eq!(projected, without(fixture("schema.json"), "$schema"));
    let chat = body(true, CHAT, STRICT);
    let format = chat.get("response_format").unwrap();
    assert_eq!(format.get("type"), Some(&Json::str("json_schema")));
    let js = format.get("json_schema").unwrap();
    assert_eq!(js.get("name"), Some(&Json::str(SCHEMA_NAME)));
    assert_eq!(js.get("strict"), Some(&Json::Bool(true)));
    assert_eq!(js.get("schema"), Some(&projected));
    let resp = body(true, RESP, STRICT);
    let format = resp.get("text").and_then(|t| t.get("format")).unwrap();
    assert_eq!(format.get("type"), Some(&Json::str("json_schema")));
    assert_eq!(format.get("name"), Some(&Json::str(SCHEMA_NAME)));
    assert_eq!(format.get("strict"), Some(&Json::Bool(true)));
    assert_eq!(format.get("schema"), Some(&projected));
    // The name is one OpenAI takes: a-z, A-Z, 0-9, _ and -, at most 64 characters.
    assert!(
        SCHEMA_NAME.len() <= 64
            && SCHEMA_NAME
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
    );
}

#[test]
fn the_token_bound_goes_to_the_selected_apis_field() {
    let p = prepared(false).to_json();
    for n in [1, DEFAULT_MAX_COMPLETION_TOKENS, MAX_COMPLETION_TOKENS] {
        let mut s = settings(CHAT, PROMPT);
        s.max_completion_tokens = n;
        let b = request_body(&p, &s).unwrap();
        assert_eq!(b.get("max_completion_tokens"), Some(&Json::int(n)));
        s.api = RESP;
        let b = request_body(&p, &s).unwrap();
        assert_eq!(b.get("max_output_tokens"), Some(&Json::int(n)));
    }
}

#[test]
fn a_request_body_checks_the_prepared_value_again() {
    let s = settings(CHAT, STRICT);
    let bad = [
        j(serde_json::json!({ "request": { "prompt": "" } })),
        j(serde_json::json!({ "request": { "prompt": "x", "tools": [] } })),
        j(
            serde_json::json!({ "request": { "prompt": "x", "response_schema": { "type": "object" } } }),
        ),
        j(serde_json::json!({ "prompt": "x" })),
    ];
    for p in bad {
        let e = request_body(&p, &s).unwrap_err();
        assert_eq!(e.code, AgentErrorCode::InvalidInput, "{e}");
        assert!(e.place.starts_with("prepared"), "{e}");
    }
}

// ---- settings ----

fn settings_error(v: Value) -> AgentError {
    let e = read_settings(&j(v)).unwrap_err();
    assert_eq!(e.code, AgentErrorCode::InvalidInput, "{e}");
    e
}

#[test]
fn settings_default_to_chat_completions_prompt_and_4096_tokens() {
    let s = read_settings(&j(serde_json::json!({ "model": "gpt-4.1-mini" }))).unwrap();
    assert_eq!(
        s,
        ProviderSettings {
            model: "gpt-4.1-mini".into(),
            api: CHAT,
            structured_output: PROMPT,
            max_completion_tokens: 4096,
        }
    );
    assert_eq!(DEFAULT_MAX_COMPLETION_TOKENS, 4096);
}

#[test]
fn every_setting_is_read_when_given() {
    let s = read_settings(&j(serde_json::json!({
        "model": "o4-mini", "api": "responses", "structured_output": "json-schema", "max_completion_tokens": 300
    })))
    .unwrap();
    assert_eq!(s.api, RESP);
    assert_eq!(s.structured_output, STRICT);
    assert_eq!(s.max_completion_tokens, 300);
    let s = read_settings(&j(serde_json::json!({
        "model": "m", "api": "chat-completions", "structured_output": "prompt"
    })))
    .unwrap();
    assert_eq!((s.api, s.structured_output), (CHAT, PROMPT));
}

#[test]
fn max_completion_tokens_of_1_and_65536_are_accepted() {
    for n in [1, 65_536] {
        let s = read_settings(&j(
            serde_json::json!({ "model": "m", "max_completion_tokens": n }),
        ))
        .unwrap();
        assert_eq!(s.max_completion_tokens, n);
    }
    assert_eq!(MAX_COMPLETION_TOKENS, 65_536);
}

#[test]
fn max_completion_tokens_of_0_and_65537_are_refused() {
    for n in [
        serde_json::json!(0),
        serde_json::json!(65_537),
        serde_json::json!(-1),
        serde_json::json!(1.5),
        serde_json::json!("4096"),
        serde_json::json!(null),
    ] {
        let e = settings_error(serde_json::json!({ "model": "m", "max_completion_tokens": n }));
        assert_eq!(e.place, "settings.max_completion_tokens", "{e}");
    }
}

#[test]
fn an_empty_model_is_refused() {
    for v in [
        serde_json::json!({ "model": "" }),
        serde_json::json!({ "model": "   " }),
        serde_json::json!({ "model": 4 }),
        serde_json::json!({}),
    ] {
        assert_eq!(settings_error(v).place, "settings.model");
    }
}

#[test]
fn an_unknown_setting_is_refused() {
    for key in [
        "temperature",
        "maxCompletionTokens",
        "structuredOutput",
        "url",
    ] {
        let mut v = serde_json::json!({ "model": "m" });
        v[key] = serde_json::json!(1);
        assert_eq!(settings_error(v).place, format!("settings.{key}"));
    }
}

#[test]
fn an_unknown_api_is_refused() {
    for api in [
        serde_json::json!("completions"),
        serde_json::json!("Responses"),
        serde_json::json!("chat_completions"),
        serde_json::json!(null),
        serde_json::json!(1),
    ] {
        let e = settings_error(serde_json::json!({ "model": "m", "api": api }));
        assert_eq!(e.place, "settings.api");
    }
}

#[test]
fn an_unknown_structured_output_is_refused() {
    for so in [
        serde_json::json!("json_schema"),
        serde_json::json!("strict"),
        serde_json::json!(true),
        serde_json::json!(null),
    ] {
        let e = settings_error(serde_json::json!({ "model": "m", "structured_output": so }));
        assert_eq!(e.place, "settings.structured_output");
    }
}

#[test]
fn settings_are_an_object() {
    for v in [
        serde_json::json!("gpt-4.1"),
        serde_json::json!(["gpt-4.1"]),
        serde_json::json!(null),
    ] {
        assert_eq!(settings_error(v).place, "settings");
    }
}

// ---- Chat Completions replies ----

#[test]
fn a_chat_reply_that_stops_is_an_end_turn_with_its_content() {
    let t = ok(CHAT, "chat/stop.json");
    assert_eq!(t.stop, Stop::EndTurn);
    assert_eq!(
        t.text,
        "Transfer 1 TKA to alice; the balance covers it and the fee."
    );
}

#[test]
fn a_chat_refusal_is_a_refusal_with_the_refusal_text() {
    let t = ok(CHAT, "chat/refusal.json");
    assert_eq!(t.stop, Stop::Refusal);
    assert_eq!(
        t.text,
        "I'm sorry, I can't help with moving funds out of someone else's account."
    );
}

#[test]
fn a_chat_reply_cut_at_the_token_bound_is_a_limit_with_the_text_so_far() {
    let t = ok(CHAT, "chat/length.json");
    assert_eq!(t.stop, Stop::Limit);
    assert_eq!(
        t.text,
        r#"{"action":"transfer","amount_e8s":100000000,"memo":"March invo"#
    );
}

#[test]
fn a_chat_reply_stopped_by_the_content_filter_is_a_refusal() {
    let t = ok(CHAT, "chat/content_filter.json");
    assert_eq!(t.stop, Stop::Refusal);
    assert_eq!(t.text, "Here is how");
}

#[test]
fn a_chat_tool_call_is_refused() {
    refused(
        CHAT,
        "chat/tool_calls.json",
        "response.choices[0].message.tool_calls",
    );
}

#[test]
fn a_chat_tool_calls_finish_reason_is_refused_even_without_calls() {
    for reason in ["tool_calls", "function_call"] {
        let mut b = fixture("chat/stop.json");
        set_choice(&mut b, "finish_reason", Json::str(reason));
        let e = transport_result(CHAT, 200, &b).unwrap_err();
        assert_eq!(e.code, AgentErrorCode::InvalidResult);
        assert_eq!(e.place, "response.choices[0].finish_reason", "{reason}");
    }
}

#[test]
fn a_chat_legacy_function_call_is_refused() {
    let mut b = fixture("chat/stop.json");
    set_message(
        &mut b,
        "function_call",
        j(serde_json::json!({ "name": "icrc1_transfer", "arguments": "{}" })),
    );
    let e = transport_result(CHAT, 200, &b).unwrap_err();
    assert_eq!(e.place, "response.choices[0].message.function_call");
}

#[test]
fn a_chat_reply_with_zero_choices_is_refused() {
    refused(CHAT, "chat/no_choices.json", "response.choices");
}

#[test]
fn a_chat_reply_with_two_choices_is_refused() {
    let e = refused(CHAT, "chat/two_choices.json", "response.choices");
    assert!(e.message.contains("2 choices"), "{e}");
}

#[test]
fn a_chat_reply_without_choices_is_refused() {
    let b = without(fixture("chat/stop.json"), "choices");
    let e = transport_result(CHAT, 200, &b).unwrap_err();
    assert_eq!(
        (e.code, e.place.as_str()),
        (AgentErrorCode::InvalidResult, "response.choices")
    );
}

#[test]
fn a_chat_reply_without_a_finish_reason_is_refused() {
    refused(
        CHAT,
        "chat/no_finish_reason.json",
        "response.choices[0].finish_reason",
    );
}

#[test]
fn a_chat_reply_with_an_unknown_finish_reason_is_refused() {
    refused(
        CHAT,
        "chat/unknown_finish_reason.json",
        "response.choices[0].finish_reason",
    );
}

#[test]
fn a_chat_refusal_with_an_unsettled_or_unknown_finish_reason_is_refused() {
    for reason in [Json::Null, Json::str("insufficient_system_resource")] {
        let mut b = fixture("chat/refusal.json");
        set_choice(&mut b, "finish_reason", reason.clone());
        let e = transport_result(CHAT, 200, &b)
            .expect_err("a refusal is settled only with a known finish reason");
        assert_eq!(e.place, "response.choices[0].finish_reason", "{reason:?}");
    }
}

#[test]
fn a_chat_reply_whose_content_is_not_a_string_is_refused() {
    refused(
        CHAT,
        "chat/content_not_string.json",
        "response.choices[0].message.content",
    );
}

#[test]
fn a_chat_reply_that_stops_without_content_is_refused() {
    let mut b = fixture("chat/stop.json");
    set_message(&mut b, "content", Json::Null);
    let e = transport_result(CHAT, 200, &b).unwrap_err();
    assert_eq!(e.place, "response.choices[0].message.content");
}

#[test]
fn a_chat_reply_whose_refusal_is_not_a_string_is_refused() {
    let mut b = fixture("chat/refusal.json");
    set_message(&mut b, "refusal", j(serde_json::json!(["no"])));
    let e = transport_result(CHAT, 200, &b).unwrap_err();
    assert_eq!(e.place, "response.choices[0].message.refusal");
}

#[test]
fn a_chat_reply_from_another_role_is_refused() {
    for role in [Json::str("user"), Json::str("tool"), Json::int(1)] {
        let mut b = fixture("chat/stop.json");
        set_message(&mut b, "role", role);
        let e = transport_result(CHAT, 200, &b).unwrap_err();
        assert_eq!(e.place, "response.choices[0].message.role");
    }
}

#[test]
fn a_chat_choice_without_a_message_is_refused() {
    let mut b = fixture("chat/stop.json");
    set_choice(&mut b, "message", Json::str("hello"));
    let e = transport_result(CHAT, 200, &b).unwrap_err();
    assert_eq!(e.place, "response.choices[0].message");
}

#[test]
fn a_non_200_chat_reply_fails_without_echoing_its_body() {
    let b = fixture("chat/error_401.json");
    for status in [401, 400, 429, 500, 503, 201, 204] {
        let e = transport_result(CHAT, status, &b).unwrap_err();
        assert_eq!(e.code, AgentErrorCode::InvalidResult);
        assert_eq!(e.place, "response");
        assert!(e.message.contains(&status.to_string()), "{e}");
        echoes_nothing(&e, &b);
    }
}

#[test]
fn a_200_reply_carrying_an_error_is_refused_without_echoing_it() {
    let b = fixture("chat/error_401.json");
    for api in [CHAT, RESP] {
        let e = transport_result(api, 200, &b).unwrap_err();
        assert_eq!(
            (e.code, e.place.as_str()),
            (AgentErrorCode::InvalidResult, "response.error")
        );
        echoes_nothing(&e, &b);
    }
}

#[test]
fn a_reply_body_that_is_not_an_object_is_refused() {
    for api in [CHAT, RESP] {
        for b in [Json::Null, Json::str("ok"), Json::Array(vec![])] {
            let e = transport_result(api, 200, &b).unwrap_err();
            assert_eq!(
                (e.code, e.place.as_str()),
                (AgentErrorCode::InvalidResult, "response")
            );
        }
    }
}

fn set_choice(body: &mut Json, key: &str, v: Json) {
    let Json::Object(m) = body else { panic!() };
    let (_, Json::Array(choices)) = m.iter_mut().find(|(k, _)| k == "choices").unwrap() else {
        panic!()
    };
    choices[0] = with(choices[0].clone(), key, v);
}

fn set_message(body: &mut Json, key: &str, v: Json) {
    let Json::Object(m) = body else { panic!() };
    let (_, Json::Array(choices)) = m.iter_mut().find(|(k, _)| k == "choices").unwrap() else {
        panic!()
    };
    let message = with(choices[0].get("message").unwrap().clone(), key, v);
    choices[0] = with(choices[0].clone(), "message", message);
}

// ---- Responses replies ----

#[test]
fn a_completed_response_is_an_end_turn_with_its_output_text_and_reasoning_ignored() {
    let t = ok(RESP, "responses/completed.json");
    assert_eq!(t.stop, Stop::EndTurn);
    assert_eq!(
        t.text,
        "Transfer 1 TKA to alice; the balance covers it and the fee."
    );
}

#[test]
fn a_response_refusal_part_is_a_refusal_with_its_text() {
    let t = ok(RESP, "responses/refusal.json");
    assert_eq!(t.stop, Stop::Refusal);
    assert_eq!(
        t.text,
        "I'm sorry, I can't help with moving funds out of someone else's account."
    );
}

#[test]
fn a_response_incomplete_at_max_output_tokens_is_a_limit_with_the_text_so_far() {
    let t = ok(RESP, "responses/incomplete_max_output_tokens.json");
    assert_eq!(t.stop, Stop::Limit);
    assert_eq!(
        t.text,
        r#"{"action":"transfer","amount_e8s":100000000,"memo":"March invo"#
    );
}

#[test]
fn a_response_that_spent_its_tokens_reasoning_is_an_empty_limit() {
    let b = fixture("responses/incomplete_max_output_tokens.json");
    let output = b.get("output").and_then(Json::items).unwrap()[..1].to_vec();
    let t = transport_result(RESP, 200, &with(b, "output", Json::Array(output))).unwrap();
    assert_eq!((t.stop, t.text.as_str()), (Stop::Limit, ""));
}

#[test]
fn a_response_incomplete_by_the_content_filter_is_a_refusal() {
    let t = ok(RESP, "responses/incomplete_content_filter.json");
    assert_eq!(t.stop, Stop::Refusal);
    assert_eq!(t.text, "Here is how");
}

#[test]
fn a_response_incomplete_for_an_unknown_reason_is_refused() {
    let b = fixture("responses/incomplete_content_filter.json");
    for details in [
        j(serde_json::json!({ "reason": "turn_limit" })),
        j(serde_json::json!({})),
        Json::Null,
    ] {
        let e = transport_result(RESP, 200, &with(b.clone(), "incomplete_details", details))
            .unwrap_err();
        assert_eq!(e.place, "response.incomplete_details.reason");
    }
}

#[test]
fn a_response_function_call_is_refused() {
    refused(
        RESP,
        "responses/function_call.json",
        "response.output[1].type",
    );
}

#[test]
fn a_response_hosted_tool_call_is_refused() {
    for t in [
        "web_search_call",
        "file_search_call",
        "computer_call",
        "mcp_call",
    ] {
        let b = fixture("responses/function_call.json");
        let mut output = b.get("output").and_then(Json::items).unwrap().to_vec();
        output[1] = with(output[1].clone(), "type", Json::str(t));
        let e = transport_result(RESP, 200, &with(b, "output", Json::Array(output))).unwrap_err();
        assert_eq!(e.place, "response.output[1].type", "{t}");
        assert!(e.message.contains("tool"), "{e}");
    }
}

#[test]
fn an_in_progress_response_is_refused() {
    refused(RESP, "responses/in_progress.json", "response.status");
}

#[test]
fn a_queued_response_is_refused() {
    refused(RESP, "responses/queued.json", "response.status");
}

#[test]
fn a_failed_response_is_refused_without_echoing_its_error() {
    let b = fixture("responses/failed.json");
    let e = refused(RESP, "responses/failed.json", "response.error");
    echoes_nothing(&e, &b);
}

#[test]
fn a_failed_response_without_its_error_is_refused_by_its_status() {
    let b = with(fixture("responses/failed.json"), "error", Json::Null);
    let e = transport_result(RESP, 200, &b).unwrap_err();
    assert_eq!(
        (e.code, e.place.as_str()),
        (AgentErrorCode::InvalidResult, "response.status")
    );
}

#[test]
fn a_cancelled_response_is_refused() {
    refused(RESP, "responses/cancelled.json", "response.status");
}

#[test]
fn an_unknown_or_missing_response_status_is_refused() {
    for status in [Some(Json::str("expired")), Some(Json::int(200)), None] {
        let b = fixture("responses/completed.json");
        let b = match status {
            Some(s) => with(b, "status", s),
            None => without(b, "status"),
        };
        let e = transport_result(RESP, 200, &b).unwrap_err();
        assert_eq!(e.place, "response.status");
    }
}

#[test]
fn a_response_with_an_unknown_output_item_is_refused() {
    refused(
        RESP,
        "responses/unknown_item.json",
        "response.output[0].type",
    );
}

#[test]
fn a_response_message_from_the_user_is_refused() {
    refused(
        RESP,
        "responses/user_message.json",
        "response.output[0].role",
    );
}

#[test]
fn a_response_with_an_unknown_content_part_is_refused() {
    let b = fixture("responses/completed.json");
    let mut output = b.get("output").and_then(Json::items).unwrap().to_vec();
    let part = j(serde_json::json!({ "type": "output_audio", "data": "", "transcript": "hi" }));
    output[1] = with(output[1].clone(), "content", Json::Array(vec![part]));
    let e = transport_result(RESP, 200, &with(b, "output", Json::Array(output))).unwrap_err();
    assert_eq!(e.place, "response.output[1].content[0].type");
}

#[test]
fn a_completed_response_without_an_assistant_message_is_refused() {
    let b = fixture("responses/completed.json");
    let output = b.get("output").and_then(Json::items).unwrap()[..1].to_vec();
    let e =
        transport_result(RESP, 200, &with(b.clone(), "output", Json::Array(output))).unwrap_err();
    assert_eq!(e.place, "response.output");
    let e = transport_result(RESP, 200, &without(b, "output")).unwrap_err();
    assert_eq!(e.place, "response.output");
}

#[test]
fn a_non_200_response_fails_without_echoing_its_body() {
    let b = fixture("responses/error_429.json");
    for status in [429, 400, 401, 500] {
        let e = transport_result(RESP, status, &b).unwrap_err();
        assert_eq!(
            (e.code, e.place.as_str()),
            (AgentErrorCode::InvalidResult, "response")
        );
        echoes_nothing(&e, &b);
    }
    // Even a body that would otherwise be a fine answer.
    let e = transport_result(RESP, 500, &fixture("responses/completed.json")).unwrap_err();
    assert_eq!(e.place, "response");
}

#[test]
fn a_response_with_a_non_null_error_is_refused() {
    let error = j(serde_json::json!({ "code": "server_error", "message": "SECRET-MARKER-0e5f11" }));
    let b = with(fixture("responses/completed.json"), "error", error);
    let e = transport_result(RESP, 200, &b).unwrap_err();
    assert_eq!(
        (e.code, e.place.as_str()),
        (AgentErrorCode::InvalidResult, "response.error")
    );
    echoes_nothing(&e, &b);
}

#[test]
fn each_api_refuses_the_other_apis_reply() {
    let e = transport_result(CHAT, 200, &fixture("responses/completed.json")).unwrap_err();
    assert_eq!(e.place, "response.choices");
    let e = transport_result(RESP, 200, &fixture("chat/stop.json")).unwrap_err();
    assert_eq!(e.place, "response.status");
}

#[test]
fn answer_text_over_8_mib_is_refused_and_8_mib_is_read() {
    let at = 8 << 20;
    for (n, fits) in [(at, true), (at + 1, false)] {
        let mut b = fixture("chat/stop.json");
        set_message(&mut b, "content", Json::str("a".repeat(n)));
        match transport_result(CHAT, 200, &b) {
            Ok(t) => assert!(fits && t.text.len() == n),
            Err(e) => assert!(!fits && e.code == AgentErrorCode::ResourceExhausted, "{e}"),
        }
    }
}

// ---- end to end ----

fn structured_answer() -> Json {
    json::parse(
        r#"{"action": "transfer", "amount_e8s": 100000000, "memo": "March invoice", "checks": [
            {"name": "balance covers amount and fee", "passed": "yes"},
            {"name": "recipient named by the caller", "passed": null}]}"#,
        &DOCUMENT,
        "",
    )
    .unwrap()
}

#[test]
fn a_strict_request_round_trips_to_a_structured_answer_on_both_apis() {
    let input = with(
        fixture("input.json"),
        "response_schema",
        fixture("schema.json"),
    );
    let prepared = prepare_agent(&input, None).unwrap();
    let pj = prepared.to_json();
    for (api, reply) in [
        (CHAT, "chat/structured.json"),
        (RESP, "responses/structured.json"),
    ] {
        let b = request_body(&pj, &settings(api, STRICT)).unwrap();
        assert!(b.get("response_format").or(b.get("text")).is_some());
        let t = ok(api, reply);
        assert_eq!(t.stop, Stop::EndTurn);
        let r = finish(&prepared, &t).unwrap();
        assert_eq!(r.outcome, Outcome::Done);
        assert_eq!(r.structured, Some(structured_answer()));
        assert_eq!(r.text, t.text);
        assert_eq!(r.session, None);
        assert_eq!(finish_agent(&pj, &t.to_json()).unwrap(), r);
    }
}

#[test]
fn a_refusal_finishes_blocked_without_a_structured_answer() {
    let prepared = prepared(true);
    for (api, reply) in [
        (CHAT, "chat/refusal.json"),
        (RESP, "responses/refusal.json"),
    ] {
        let r = finish(&prepared, &ok(api, reply)).unwrap();
        assert_eq!((r.outcome, r.structured), (Outcome::Blocked, None));
    }
}

#[test]
fn a_reply_cut_at_the_token_bound_finishes_limit_without_a_structured_answer() {
    let prepared = prepared(true);
    for (api, reply) in [
        (CHAT, "chat/length.json"),
        (RESP, "responses/incomplete_max_output_tokens.json"),
    ] {
        let r = finish(&prepared, &ok(api, reply)).unwrap();
        assert_eq!((r.outcome, r.structured), (Outcome::Limit, None));
    }
}

#[test]
fn a_completed_reply_that_does_not_match_the_schema_fails_finishing() {
    let prepared = prepared(true);
    // Plain prose where a structured answer was asked for.
    let e = finish(&prepared, &ok(CHAT, "chat/stop.json")).unwrap_err();
    assert_eq!(
        (e.code, e.place.as_str()),
        (AgentErrorCode::InvalidResult, "output.text")
    );
    // JSON that breaks the schema.
    let mut b = fixture("chat/structured.json");
    let bad = with(structured_answer(), "action", Json::str("burn"));
    set_message(&mut b, "content", Json::str(bad.compact()));
    let t = transport_result(CHAT, 200, &b).unwrap();
    let e = finish(&prepared, &t).unwrap_err();
    assert_eq!(
        (e.code, e.place.as_str()),
        (AgentErrorCode::InvalidResult, "output.structured.action")
    );
}
