//! The tool host end to end on the local IC host, with cargo alone (no dfx, no replica):
//! `cargo run -q -p tool-host-tests --bin walkthrough [-- --ledger test|cycles]`. It deploys the
//! tool host and a ledger — the test ledger (default) or DFINITY's cycles ledger, whose amounts
//! are TCYCLES — and prints each step: deposit → prepare → consent message → confirm → outcome →
//! balances.
//!
//! `-- --save-image <dir>` then saves the tool host's whole stable memory, the released layout
//! fixture: `<dir>/stable.bin.gz` (gzip: the image is mostly zeroes) and `<dir>/facts.json`
//! (what a reader must find in it). Before saving it sets two limits away from their defaults,
//! so that a reader that falls back to defaults is caught. The committed one is
//! `tests/fixtures/released/v0.1.0/`, made with the test ledger by the first release:
//! `cargo run -q -p tool-host-tests --bin walkthrough -- --save-image tests/fixtures/released/v0.1.0`
//! (with `TOOL_HOST_WASM_DIR=$PWD/out` after `scripts/build.sh`); a later release never
//! rewrites it, it adds its own.
//!
//! `-- --mcp <port>` then serves the tool host as a remote MCP server: the owner issues an agent
//! token, and the local HTTP gateway (`tool_host_tests::gateway`) listens on
//! `http://127.0.0.1:<port>/mcp` (0: any free port) until interrupted; the URL and the token are
//! printed, ready for an MCP client (`docs/mcp.md`).

use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tool_host_engine::consent::{ConsentMessage, Value as ConsentValue};
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

fn walk(kind: LedgerKind) -> Check<(World, u64)> {
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
        consent_request("confirm", arg.clone(), false),
    )?;
    match consent {
        Ok(info) => match info.consent_message {
            ConsentMessage::GenericDisplayMessage(md) => println!("{md}"),
            other => println!("{other:?}"),
        },
        Err(e) => return Err(Fail::Failed(format!("consent message refused: {e:?}"))),
    }
    // The same for a wallet with a fields display: typed values it formats itself.
    let consent =
        w.host
            .consent_message(w.b.as_mut(), p.owner, consent_request("confirm", arg, true))?;
    match consent {
        Ok(info) => match info.consent_message {
            ConsentMessage::FieldsDisplayMessage { intent, fields } => {
                println!("fields display: {intent}");
                for (label, value) in fields {
                    println!("  {label:<16} {}", shown(&value));
                }
            }
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
    Ok((w, prepared.id))
}

/// Saves the tool host's stable memory and the facts a reader must find in it.
fn save_image(mut w: World, intent_id: u64, dir: &Path) -> Check {
    let mut limits = w.limits()?;
    limits.preview_ttl_seconds = 7_200;
    limits.max_forms = 40;
    let limits = w.set_limits(limits)?;
    let (p, b, h) = (w.p, w.b.as_mut(), w.host);
    let admins = h.list_admins(b, p.controller)?.ok_or_fail("list_admins")?;
    let agents = h.list_agents(b, p.owner)?.ok_or_fail("list_agents")?;
    let deposit = h
        .deposit_account(b, p.owner)?
        .ok_or_fail("deposit_account")?;
    let forms = h.list_forms(b, p.owner)?.ok_or_fail("list_forms")?;
    let intent = w.intent(intent_id)?;
    let image = w.b.stable_memory(w.host.0)?;
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    let io = |e: std::io::Error| Fail::Failed(format!("saving the image: {e}"));
    gz.write_all(&image).map_err(io)?;
    let gz = gz.finish().map_err(io)?;
    let facts = serde_json::json!({
        "release": env!("CARGO_PKG_VERSION"),
        "stable_bytes": image.len(),
        "host": w.host.0.to_text(),
        "ledger": w.ledger.0.to_text(),
        "ledger_label": w.token.symbol,
        "forms": forms.iter().map(|f| f.id.clone()).collect::<Vec<_>>(),
        "intent": {
            "id": intent_id,
            "owner": intent.owner.to_text(),
            "status": intent.status,
            "outcome": intent.outcome,
            "attempts": intent.attempts.len(),
        },
        "admins": admins.iter().map(|a| a.to_text()).collect::<Vec<_>>(),
        "owner": p.owner.to_text(),
        "agents": agents.iter().map(|a| a.to_text()).collect::<Vec<_>>(),
        "deposit_subaccount": deposit.account.subaccount.as_ref().map(hex::encode),
        "limits": {
            "preview_ttl_seconds": limits.preview_ttl_seconds,
            "max_forms": limits.max_forms,
        },
    });
    std::fs::create_dir_all(dir).map_err(io)?;
    std::fs::write(dir.join("stable.bin.gz"), &gz).map_err(io)?;
    std::fs::write(
        dir.join("facts.json"),
        serde_json::to_string_pretty(&facts)? + "\n",
    )
    .map_err(io)?;
    println!(
        "\nSaved the stable memory ({} bytes, {} gzipped) and its facts in {}",
        image.len(),
        gz.len(),
        dir.display()
    );
    Ok(())
}

const USAGE: &str = "usage: walkthrough [--ledger test|cycles] [--save-image <dir>] [--mcp <port>]";

/// The owner issues a token; the gateway serves MCP on `port` until the process is stopped.
fn serve_mcp(mut w: World, port: u16) -> Check {
    step(10, "Serve MCP over HTTP through the local HTTP gateway");
    let owner = w.p.owner;
    let token = w
        .host
        .issue_agent_token(w.b.as_mut(), owner, "walkthrough", None)?
        .ok_or_fail("issue_agent_token")?;
    let server = tiny_http::Server::http(("127.0.0.1", port))
        .map_err(|x| Fail::Failed(format!("listening on 127.0.0.1:{port}: {x}")))?;
    let addr = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| Fail::Failed("the gateway has no TCP address".into()))?;
    println!("MCP server  http://{addr}/mcp");
    println!("header      Authorization: Bearer {}", token.secret);
    println!("(the owner's agent token {}; stop with Ctrl-C)", token.id);
    let gw = tool_host_tests::gateway::Gateway::new(w.host.0);
    gw.serve_until(w.b.as_mut(), &server, || false)
        .map_err(|x| Fail::Failed(format!("gateway: {x}")))?;
    Ok(())
}

fn main() -> ExitCode {
    let mut kind = LedgerKind::Test;
    let mut save: Option<PathBuf> = None;
    let mut mcp: Option<u16> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--ledger", Some(name)) => match LedgerKind::parse(&name) {
                Some(k) => kind = k,
                None => {
                    eprintln!("unknown ledger `{name}`: test or cycles\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            ("--save-image", Some(dir)) => save = Some(PathBuf::from(dir)),
            ("--mcp", Some(port)) => match port.parse() {
                Ok(p) => mcp = Some(p),
                Err(_) => {
                    eprintln!("--mcp takes a TCP port (0: any free one), not `{port}`\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            ("--help" | "-h", None) => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    if let Err(why) = kind.available() {
        eprintln!(
            "walkthrough: {why} (set {CYCLES_LEDGER_ENV}, and {CYCLES_DEPOSITOR_ENV} if the \
             depositor is elsewhere)"
        );
        return ExitCode::FAILURE;
    }
    if save.is_some() && mcp.is_some() {
        eprintln!("--save-image and --mcp do not go together\n{USAGE}");
        return ExitCode::from(2);
    }
    let done = walk(kind).and_then(|(w, id)| match (&save, mcp) {
        (Some(dir), _) => save_image(w, id, dir),
        (None, Some(port)) => serve_mcp(w, port),
        (None, None) => Ok(()),
    });
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("walkthrough failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A fields display's value as the walkthrough prints it: its ICRC-21 case and what it holds.
fn shown(v: &ConsentValue) -> String {
    match v {
        ConsentValue::TokenAmount(t) => format!(
            "TokenAmount {} base units ({} decimals) {}",
            t.amount, t.decimals, t.symbol
        ),
        ConsentValue::TimestampSeconds(t) => format!("TimestampSeconds {}", t.amount),
        ConsentValue::DurationSeconds(d) => format!("DurationSeconds {}", d.amount),
        ConsentValue::Text(t) => t.content.clone(),
    }
}
