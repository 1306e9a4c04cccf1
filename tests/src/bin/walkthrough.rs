//! The tool host end to end on the local IC host, with cargo alone (no dfx, no replica):
//! `cargo run -q -p tool-host-tests --bin walkthrough [-- --ledger test|cycles]`. It deploys the
//! tool host and a ledger — the test ledger (default) or DFINITY's cycles ledger, whose amounts
//! are TCYCLES — and prints each step: deposit → prepare → consent message → confirm → outcome →
//! balances.

use serde_json::Value;
use std::process::ExitCode;
use tool_host_engine::consent::ConsentMessage;
use tool_host_tests::check::{ApiOk, Check, Fail};
use tool_host_tests::clients::{confirm_args, consent_request, nat_u64};
use tool_host_tests::ledgers::LedgerKind;
use tool_host_tests::local::LocalBackend;
use tool_host_tests::wasm::{CYCLES_DEPOSITOR_ENV, CYCLES_LEDGER_ENV};
use tool_host_tests::world::{account, structured, World};

fn step(n: u32, title: &str) {
    println!("\n── {n}. {title}");
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn walk(kind: LedgerKind) -> Check {
    step(
        1,
        &format!(
            "Deploy the tool host and the {} on the local IC host; register the ICRC packs and the ledger",
            kind.label()
        ),
    );
    let mut w = World::deploy(Box::new(LocalBackend::new()), kind)?;
    let p = w.p;
    let t = w.token.clone();
    let tokens = |units: u64| t.show(units);
    println!("tool host  {}", w.host.0);
    println!(
        "ledger     {} ({} \"{}\", {} decimals, fee {})",
        w.ledger.0,
        t.symbol,
        t.name,
        t.decimals,
        tokens(t.fee)
    );
    if let Some(d) = w.depositor {
        println!(
            "depositor  {} (mints by depositing cycles it attaches to its call to `deposit`)",
            d.0
        );
    }
    let targets = w
        .host
        .list_canisters(w.b.as_mut(), p.controller)?
        .ok_or_fail("list_canisters")?;
    println!("refs read from the ledger: {}", targets[0].refs);

    step(
        2,
        "The owner's deposit account (a subaccount of the tool host derived from the owner)",
    );
    println!("owner      {}", p.owner);
    println!("deposit    {}", w.deposit_text);
    let deposit = w.deposit.clone();
    println!("balance    {}", tokens(w.balance(&deposit)?));

    step(
        3,
        "The owner authorizes an agent; the agent lists the tools",
    );
    println!("agent      {}", p.agent);
    let defs: Value = serde_json::from_str(&w.host.list_tools(w.b.as_mut(), p.agent)?)?;
    let names: Vec<&str> = defs
        .as_array()
        .map(|a| a.iter().filter_map(|d| d["name"].as_str()).collect())
        .unwrap_or_default();
    println!("{} tools: {}", names.len(), names.join(", "));

    step(
        4,
        &format!(
            "The agent prepares a transfer of 1.5 {} for the owner (nothing is sent)",
            t.symbol
        ),
    );
    let input = w.transfer_input(&w.amt("1.5"));
    println!("input      {input}");
    let prepared = w.prepare("prepare_icrc1_transfer", &input)?;
    println!("preview    {}", pretty(&prepared.json["preview"]));
    println!("digest     {}", hex::encode(&prepared.digest));

    step(
        5,
        "The agent commits: only the owner's signed confirmation sends",
    );
    let commit = serde_json::json!({ "preview_id": prepared.id.to_string() }).to_string();
    let r = w
        .tool(p.agent, Some(p.owner), "commit", &commit)?
        .ok_or_fail("commit")?;
    println!("status     {}", structured(&r)?["status"]);

    step(
        6,
        "The owner's wallet reads the ICRC-21 consent message for confirm",
    );
    let arg = candid::encode_one(confirm_args(prepared.id, &prepared.digest)).expect("encodes");
    let consent = w.host.consent_message(
        w.b.as_mut(),
        p.owner,
        consent_request("confirm", arg, false),
    )?;
    match consent {
        Ok(info) => match info.consent_message {
            ConsentMessage::GenericDisplayMessage(md) => println!("{md}"),
            other => println!("{other:?}"),
        },
        Err(e) => return Err(Fail::Failed(format!("consent message refused: {e:?}"))),
    }

    step(
        7,
        "The owner confirms that exact preview; the tool host sends it to the ledger",
    );
    let log_before = w.log_length()?;
    let r = w.confirm_ok(prepared.id, &prepared.digest)?;
    println!("outcome    {}", r.outcome.as_deref().unwrap_or("-"));
    println!("           {}", r.content);
    println!("reply      {}", structured(&r)?["reply"]);

    step(8, "The intent and the balances");
    let intent = w.intent(prepared.id)?;
    println!(
        "intent     {} ({}), {} attempt(s)",
        intent.status,
        intent.outcome.as_deref().unwrap_or("-"),
        intent.attempts.len()
    );
    println!("ledger log {} → {} blocks", log_before, w.log_length()?);
    println!("deposit    {}", tokens(w.balance(&deposit)?));
    let recipient = account(p.recipient);
    println!("recipient  {}", tokens(w.balance(&recipient)?));

    step(9, "Confirming again sends nothing");
    let again = w.confirm_ok(prepared.id, &prepared.digest)?;
    println!(
        "outcome    {} (ledger log still {} blocks)",
        again.outcome.as_deref().unwrap_or("-"),
        w.log_length()?
    );
    let fee = nat_u64(&w.ledger.fee(w.b.as_mut())?);
    println!(
        "\nDone: {} moved from the owner's deposit account to the recipient, plus the fee of {}.",
        w.amt("1.5"),
        tokens(fee)
    );
    Ok(())
}

const USAGE: &str = "usage: walkthrough [--ledger test|cycles]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kind = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => LedgerKind::Test,
        ["--ledger", name] => match LedgerKind::parse(name) {
            Some(k) => k,
            None => {
                eprintln!("unknown ledger `{name}`: test or cycles\n{USAGE}");
                return ExitCode::from(2);
            }
        },
        ["--help" | "-h"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(why) = kind.available() {
        eprintln!(
            "walkthrough: {why} (set {CYCLES_LEDGER_ENV}, and {CYCLES_DEPOSITOR_ENV} if the \
             depositor is elsewhere)"
        );
        return ExitCode::FAILURE;
    }
    match walk(kind) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("walkthrough failed: {e}");
            ExitCode::FAILURE
        }
    }
}
