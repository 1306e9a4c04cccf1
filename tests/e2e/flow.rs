//! The whole path once: deploy, register, fund, authorize, list tools, prepare (twice: the
//! same preview), the agent's commit waits, the owner reads the ICRC-21 consent message and
//! confirms, balances move by amount + fee, and a second commit answers `already_done`
//! without sending.

use crate::Scenario;
use candid::Principal;
use serde_json::Value;
use tool_host_engine::consent::{ConsentMessage, Icrc21Error};
use tool_host_tests::check::{refused, ApiOk, Check};
use tool_host_tests::clients::{confirm_args, consent_request};
use tool_host_tests::ledgers::LedgerKind;
use tool_host_tests::world::{account, structured, World, DEPOSIT_TOKENS, OWN_TOKENS};
use tool_host_tests::{ensure, ensure_eq, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new("flow::transfer_end_to_end", transfer_end_to_end),
        Scenario::new(
            "flow::reads_own_commits_consent_paging",
            reads_own_commits_consent_paging,
        ),
        Scenario::new("flow::instructions_per_message", instructions_per_message),
    ]
}

/// The tool host's ICRC-21 reply, as bytes from the canister, decoded with the standard's own
/// `.did` (`candid/icrc21.did`): what a wallet that knows only the standard reads.
fn as_the_standard_reads_it(
    w: &mut World,
    caller: Principal,
    req: tool_host_engine::consent::ConsentMessageRequest,
) -> Check<candid::IDLValue> {
    let bytes = w.b.update(
        w.host.0,
        caller,
        "icrc21_canister_call_consent_message",
        candid::encode_one(req).expect("encodes"),
    )?;
    standard::decode(&bytes)
}

/// Reading ICRC-21 answers with the standard's types only.
mod standard {
    use candid::types::{Label, TypeInner};
    use candid::{IDLArgs, IDLValue};
    use tool_host_tests::check::Check;
    use tool_host_tests::{ensure, fail};

    pub fn decode(bytes: &[u8]) -> Check<IDLValue> {
        let did = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../candid/icrc21.did");
        let (env, _) = candid_parser::utils::CandidSource::File(&did)
            .load()
            .expect("candid/icrc21.did parses");
        let ty = TypeInner::Var("icrc21_consent_message_response".into()).into();
        match IDLArgs::from_bytes_with_types(bytes, &env, &[ty]) {
            Ok(mut args) if args.args.len() == 1 => Ok(args.args.remove(0)),
            Ok(args) => fail!("one value, not {args}"),
            Err(e) => {
                fail!("the reply does not decode as ICRC-21's icrc21_consent_message_response: {e}")
            }
        }
    }

    /// A record's field or a variant's case, by the standard's name.
    pub fn at<'a>(v: &'a IDLValue, name: &str) -> Check<&'a IDLValue> {
        let named = |l: &Label| matches!(l, Label::Named(n) if n == name);
        match v {
            IDLValue::Record(fs) => match fs.iter().find(|f| named(&f.id)) {
                Some(f) => Ok(&f.val),
                None => fail!("no field {name} in {v}"),
            },
            IDLValue::Variant(c) if named(&c.0.id) => Ok(&c.0.val),
            other => fail!("no {name} in {other}"),
        }
    }

    /// The fields of an `Ok` FieldsDisplayMessage whose intent starts with `heading`.
    pub fn fields(answer: &IDLValue, heading: &str) -> Check<Vec<(String, IDLValue)>> {
        let msg = at(
            at(at(answer, "Ok")?, "consent_message")?,
            "FieldsDisplayMessage",
        )?;
        match at(msg, "intent")? {
            IDLValue::Text(t) => ensure!(t.starts_with(heading), "intent {t}"),
            other => fail!("intent {other}"),
        }
        let IDLValue::Vec(items) = at(msg, "fields")? else {
            fail!("fields in {msg}")
        };
        items
            .iter()
            .map(|item| match item {
                IDLValue::Record(pair) if pair.len() == 2 => match &pair[0].val {
                    IDLValue::Text(label) => Ok((label.clone(), pair[1].val.clone())),
                    other => fail!("label {other}"),
                },
                other => fail!("field {other}"),
            })
            .collect()
    }

    pub fn field(fields: &[(String, IDLValue)], label: &str) -> Check<IDLValue> {
        match fields.iter().find(|(l, _)| l == label) {
            Some((_, v)) => Ok(v.clone()),
            None => fail!("no {label} in {fields:?}"),
        }
    }

    /// A `TokenAmount` value's decimals, amount and symbol.
    pub fn token(v: &IDLValue) -> Check<(u8, u64, String)> {
        let t = at(v, "TokenAmount")?;
        match (at(t, "decimals")?, at(t, "amount")?, at(t, "symbol")?) {
            (IDLValue::Nat8(d), IDLValue::Nat64(a), IDLValue::Text(s)) => Ok((*d, *a, s.clone())),
            other => fail!("TokenAmount {other:?}"),
        }
    }

    /// A `TimestampSeconds` or `DurationSeconds` value's seconds.
    pub fn seconds(v: &IDLValue, kind: &str) -> Check<u64> {
        match at(at(v, kind)?, "amount")? {
            IDLValue::Nat64(s) => Ok(*s),
            other => fail!("{kind} {other}"),
        }
    }

    pub fn text(v: &IDLValue) -> Check<String> {
        match at(at(v, "Text")?, "content")? {
            IDLValue::Text(t) => Ok(t.clone()),
            other => fail!("Text {other}"),
        }
    }
}

fn transfer_end_to_end(w: &mut World) -> Check {
    let p = w.p;
    // The refs come from the ledger itself.
    let symbol = w.ledger.symbol(w.b())?;
    let decimals = w.ledger.decimals(w.b())?;
    let fee = tool_host_tests::clients::nat_u64(&w.ledger.fee(w.b())?);
    ensure_eq!(fee, w.fee());
    // What each ledger is known to answer: the test ledger its init argument, the cycles ledger
    // its code's constants.
    let expected = match w.kind {
        LedgerKind::Test => ("Token A", "TKA", 8, 10_000),
        LedgerKind::Cycles => ("Trillion Cycles", "TCYCLES", 12, 100_000_000),
    };
    let t = &w.token;
    ensure_eq!(
        (t.name.as_str(), t.symbol.as_str(), t.decimals, t.fee),
        expected
    );
    let targets = w
        .host
        .list_canisters(w.b.as_mut(), p.owner)?
        .ok_or_fail("list_canisters")?;
    ensure_eq!(targets.len(), 1);
    let refs: Value = serde_json::from_str(&targets[0].refs)?;
    ensure_eq!(refs["query:icrc1_symbol"], Value::from(symbol.clone()));
    ensure_eq!(refs["query:icrc1_decimals"], Value::from(decimals));
    ensure_eq!(refs["query:icrc1_fee"], Value::from(fee));

    // The owner's deposit account holds what was sent to it, and the owner's own account its
    // initial balance.
    let deposit = w.deposit.clone();
    ensure_eq!(w.balance(&deposit)?, w.tokens(DEPOSIT_TOKENS));
    ensure_eq!(w.balance(&account(p.owner))?, w.tokens(OWN_TOKENS));
    ensure!(
        w.deposit_text.starts_with(&w.host.0.to_text()),
        "{}",
        w.deposit_text
    );

    // The agent lists the tools.
    let tools: Value = serde_json::from_str(&w.host.list_tools(w.b.as_mut(), p.agent)?)?;
    let names: Vec<&str> = tools
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    for expected in [
        "commit",
        "prepare_icrc1_transfer",
        "prepare_icrc2_approve",
        "prepare_icrc2_transfer_from",
        "icrc1_balance_of",
    ] {
        ensure!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }

    // 1.5 tokens in the ledger's own symbol.
    let amount = 3 * 10u64.pow(decimals as u32) / 2;
    let input = w.transfer_input(&format!("1.5 {symbol}"));
    let first = w.prepare("prepare_icrc1_transfer", &input)?;
    ensure_eq!(first.json["status"], "prepared");
    let preview = &first.json["preview"];
    ensure_eq!(preview["method"], "icrc1_transfer");
    ensure_eq!(preview["arguments"]["amount"], format!("1.5 {symbol}"));
    ensure_eq!(preview["arguments"]["to"], p.recipient.to_text());
    let again = w.prepare("prepare_icrc1_transfer", &input)?;
    ensure_eq!(
        again.id,
        first.id,
        "preparing again answers the same intent"
    );
    ensure_eq!(again.digest, first.digest);
    ensure_eq!(again.json["preview"], first.json["preview"]);

    // The agent's commit only asks.
    let log0 = w.log_length()?;
    let commit_input = serde_json::json!({ "preview_id": first.id.to_string() }).to_string();
    let asked = w
        .tool(p.agent, Some(p.owner), "commit", &commit_input)?
        .ok_or_fail("commit")?;
    ensure_eq!(structured(&asked)?["status"], "awaiting_confirmation");
    ensure_eq!(w.log_length()?, log0, "a commit by the agent sends nothing");
    ensure!(w.intent(first.id)?.confirm_requested_at.is_some());

    // The owner reads what a wallet shows, then confirms.
    let arg = candid::encode_one(confirm_args(first.id, &first.digest)).expect("encodes");
    let consent = w.host.consent_message(
        w.b.as_mut(),
        p.owner,
        consent_request("confirm", arg.clone(), false),
    )?;
    let info = match consent {
        Ok(info) => info,
        Err(e) => fail!("consent message refused: {e:?}"),
    };
    let ConsentMessage::GenericDisplayMessage(text) = &info.consent_message else {
        fail!(
            "asked for a generic display message: {:?}",
            info.consent_message
        );
    };
    for needle in [
        format!("1.5 {symbol}"),
        p.recipient.to_text(),
        hex::encode(&first.digest),
    ] {
        ensure!(
            text.contains(&needle),
            "{needle} missing from the consent message:\n{text}"
        );
    }
    // As a wallet reads it: the real wasm's reply decoded with the standard's own types, the
    // amount and fee typed in the ledger's decimals and symbol.
    let fields = as_the_standard_reads_it(w, p.owner, consent_request("confirm", arg, true))?;
    let fields = standard::fields(&fields, "Confirm: ")?;
    let token = |units: u64| (decimals, units, symbol.clone());
    ensure_eq!(
        standard::token(&standard::field(&fields, "Amount")?)?,
        token(amount)
    );
    ensure_eq!(
        standard::token(&standard::field(&fields, "Fee")?)?,
        token(fee)
    );
    ensure_eq!(
        standard::text(&standard::field(&fields, "To")?)?,
        p.recipient.to_text()
    );
    let intent = w.intent(first.id)?;
    let Some(stamp) = intent.stamp else {
        fail!("a transfer is stamped: {intent:?}")
    };
    // A timestamp is typed only in whole seconds; otherwise it is the preview's exact text.
    let created = standard::field(&fields, "Created at time")?;
    if stamp % 1_000_000_000 == 0 {
        ensure_eq!(
            standard::seconds(&created, "TimestampSeconds")?,
            stamp / 1_000_000_000
        );
    } else {
        let shown = standard::text(&created)?;
        let preview: Value = serde_json::from_str(&intent.preview)
            .map_err(|e| tool_host_tests::check::Fail::Failed(e.to_string()))?;
        ensure_eq!(
            Some(shown.as_str()),
            preview["arguments"]["created_at_time"].as_str()
        );
    }
    ensure_eq!(
        standard::seconds(
            &standard::field(&fields, "Preview expires")?,
            "TimestampSeconds"
        )?,
        intent.expires_at / 1_000_000_000
    );

    let recipient = account(p.recipient);
    let confirmed = w.confirm_ok(first.id, &first.digest)?;
    ensure_eq!(
        confirmed.outcome.as_deref(),
        Some("success"),
        "{}",
        confirmed.content
    );
    ensure!(!confirmed.is_error);
    let intent = w.intent(first.id)?;
    ensure_eq!(intent.status, "done");
    ensure_eq!(w.log_length()?, log0 + 1, "exactly one block");
    ensure_eq!(
        w.balance(&deposit)?,
        w.tokens(DEPOSIT_TOKENS) - amount - w.fee()
    );
    ensure_eq!(w.balance(&recipient)?, amount);

    // A second commit (the agent) and a second confirm (the owner) answer already_done, unsent.
    let second = w
        .tool(p.agent, Some(p.owner), "commit", &commit_input)?
        .ok_or_fail("second commit")?;
    ensure_eq!(second.outcome.as_deref(), Some("already_done"));
    let reconfirm = w.confirm_ok(first.id, &first.digest)?;
    ensure_eq!(reconfirm.outcome.as_deref(), Some("already_done"));
    ensure_eq!(w.log_length()?, log0 + 1, "nothing more was sent");
    ensure_eq!(w.balance(&recipient)?, amount);

    // A done intent has no consent message any more: confirming it sends nothing.
    let arg = candid::encode_one(confirm_args(first.id, &first.digest)).expect("encodes");
    match w.host.consent_message(
        w.b.as_mut(),
        p.owner,
        consent_request("confirm", arg, false),
    )? {
        Err(tool_host_engine::consent::Icrc21Error::ConsentMessageUnavailable(_)) => {}
        other => fail!("consent message for a done intent: {other:?}"),
    }
    Ok(())
}

/// A read tool, an owner preparing for itself and committing with the digest through
/// `call_tool`, the consent messages of `call_tool` commit and `decline`, owners kept apart,
/// and paging through intents.
fn reads_own_commits_consent_paging(w: &mut World) -> Check {
    let p = w.p;
    let ledger = w.ledger.0.to_text();

    // A read tool runs as an inter-canister call and shows the answer in tokens.
    let input = serde_json::json!({ "canister_id": ledger, "account": w.deposit_text }).to_string();
    let read = w
        .tool(p.agent, Some(p.owner), "icrc1_balance_of", &input)?
        .ok_or_fail("icrc1_balance_of")?;
    let s = structured(&read)?;
    ensure_eq!(s["status"], "read", "{}", read.structured);
    ensure_eq!(s["result"], w.amt("100"), "{}", read.structured);

    // The owner prepares for itself and commits with the digest: that is a confirmation.
    let input = w.transfer_input(&w.amt("5"));
    let own = w
        .tool(p.owner, None, "prepare_icrc1_transfer", &input)?
        .ok_or_fail("prepare as the owner")?;
    let own = tool_host_tests::world::prepared_of(&own)?;
    let commit = serde_json::json!({
        "preview_id": own.id.to_string(),
        "digest": hex::encode(&own.digest),
    })
    .to_string();
    let commit_arg = candid::encode_one(tool_host_engine::types::CallToolArgs {
        name: "commit".into(),
        input: commit.clone(),
        owner: None,
        turn: None,
    })
    .expect("encodes");
    let consent = w.host.consent_message(
        w.b.as_mut(),
        p.owner,
        consent_request("call_tool", commit_arg.clone(), false),
    )?;
    ensure!(
        consent.is_ok(),
        "a commit with a digest has a consent message: {consent:?}"
    );
    let fields = as_the_standard_reads_it(
        w,
        Principal::anonymous(),
        consent_request("call_tool", commit_arg, true),
    )?;
    let fields = standard::fields(&fields, "Confirm: ")?;
    ensure_eq!(
        standard::text(&standard::field(&fields, "Intent")?)?,
        own.id.to_string()
    );
    // Without the digest nobody (the anonymous caller included) learns anything of the intent.
    let blind_arg = candid::encode_one(tool_host_engine::types::DeclineArgs {
        intent_id: own.id,
        digest: None,
    })
    .expect("encodes");
    match w.host.consent_message(
        w.b.as_mut(),
        Principal::anonymous(),
        consent_request("decline", blind_arg, false),
    )? {
        Err(Icrc21Error::ConsentMessageUnavailable(e)) => {
            ensure!(
                !e.description.contains(&own.id.to_string()),
                "{}",
                e.description
            )
        }
        other => fail!("a decline consent message without the digest: {other:?}"),
    }
    let decline_arg = candid::encode_one(tool_host_engine::types::DeclineArgs {
        intent_id: own.id,
        digest: Some(serde_bytes::ByteBuf::from(own.digest.clone())),
    })
    .expect("encodes");
    match w.host.consent_message(
        w.b.as_mut(),
        p.owner,
        consent_request("decline", decline_arg.clone(), false),
    )? {
        Ok(info) => match info.consent_message {
            ConsentMessage::GenericDisplayMessage(t) => {
                ensure!(t.starts_with("# Decline"), "{t}")
            }
            other => fail!("{other:?}"),
        },
        Err(e) => fail!("decline consent message: {e:?}"),
    }
    let fields = as_the_standard_reads_it(
        w,
        Principal::anonymous(),
        consent_request("decline", decline_arg, true),
    )?;
    let fields = standard::fields(&fields, "Decline: ")?;
    ensure_eq!(
        standard::text(&standard::field(&fields, "Action")?)?,
        "Decline: nothing is sent."
    );
    let unsupported = w.host.consent_message(
        w.b.as_mut(),
        Principal::anonymous(),
        consent_request("register_form", vec![], false),
    )?;
    ensure!(
        unsupported.is_err(),
        "register_form sends nothing: {unsupported:?}"
    );
    let log = w.log_length()?;
    let sent = w
        .tool(p.owner, None, "commit", &commit)?
        .ok_or_fail("commit with digest")?;
    ensure_eq!(sent.outcome.as_deref(), Some("success"), "{}", sent.content);
    ensure_eq!(w.log_length()?, log + 1);

    // Another owner's same inputs are another intent, from another deposit account.
    let mine = w.prepare_transfer(&w.amt("1"))?;
    let theirs = w
        .tool(
            p.other_agent,
            Some(p.other_owner),
            "prepare_icrc1_transfer",
            &w.transfer_input(&w.amt("1")),
        )?
        .ok_or_fail("the other owner's prepare")?;
    let theirs = tool_host_tests::world::prepared_of(&theirs)?;
    ensure!(theirs.id != mine.id);
    ensure!(
        theirs.json["preview"]["arguments"]["from_subaccount"]
            != mine.json["preview"]["arguments"]["from_subaccount"],
        "each owner sends from its own deposit subaccount"
    );

    // Paging: the owner has three intents now; two per page.
    w.prepare_transfer(&w.amt("2"))?;
    let h = w.host;
    let page = h
        .list_intents_page(w.b.as_mut(), p.agent, Some(p.owner), None, Some(2))?
        .ok_or_fail("page 1")?;
    ensure_eq!(page.intents.len(), 2);
    let Some(next) = page.next else {
        fail!("a next page");
    };
    let rest = h
        .list_intents_page(w.b.as_mut(), p.agent, Some(p.owner), Some(next), Some(2))?
        .ok_or_fail("page 2")?;
    ensure_eq!(rest.intents.len(), 1);
    ensure_eq!(rest.next, None);
    ensure!(page
        .intents
        .iter()
        .chain(&rest.intents)
        .all(|i| i.owner == p.owner));
    refused(
        h.list_intents_page(w.b.as_mut(), p.owner, None, None, Some(0))?,
        "INVALID_ARGUMENT",
        "a page of 0",
    )?;
    Ok(())
}

/// Instructions of a prepare and of a confirm (with its two inter-canister calls): reported,
/// and far below the 40 B per-message limit.
fn instructions_per_message(w: &mut World) -> Check {
    let prepared = w.prepare_transfer(&w.amt("2"))?;
    let prepare = w.b.last_instructions()?;
    let r = w.confirm_ok(prepared.id, &prepared.digest)?;
    ensure_eq!(r.outcome.as_deref(), Some("success"));
    let confirm = w.b.last_instructions()?;
    println!("instructions: prepare {prepare}, confirm {confirm}");
    for (what, n) in [("prepare", prepare), ("confirm", confirm)] {
        ensure!(n > 0, "{what} used no instructions");
        ensure!(n < 4_000_000_000, "{what} used {n} instructions");
    }
    Ok(())
}
