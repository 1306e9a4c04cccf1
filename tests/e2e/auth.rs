//! The authorization matrix: every method of `candid/tool_host.did` called by every role, with
//! who is refused with which code and who gets through. Anonymous update calls are dropped by
//! `canister_inspect_message` (refused at ingress), except the ICRC-21 consent message.
//! Refused calls change nothing: the ledger sees exactly the owner's one confirm.

use crate::Scenario;
use candid::Principal;
use std::fmt::Write;
use tool_host_engine::types::{ApiError, BeginTurnArgs, SelectArgs};
use tool_host_tests::backend::{BackendError, BackendExt, Result as BResult};
use tool_host_tests::check::{ApiOk, Check};
use tool_host_tests::clients::{confirm_args, consent_request, Api};
use tool_host_tests::world::{World, ICRC1_FORM};
use tool_host_tests::{ensure, ensure_eq, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario::new(
        "auth::matrix_every_method_every_role",
        matrix,
    )]
}

/// The roles, in the order each row runs them (the owner last, so that its successful confirm
/// and decline come after every refusal).
const ROLES: [&str; 7] = [
    "anonymous",
    "stranger",
    "other_agent",
    "agent",
    "admin",
    "controller",
    "owner",
];

/// What a call came back with: `ok`, an ApiError code, or `ingress` (refused before running).
fn got<T>(r: BResult<Api<T>>) -> Check<String> {
    match r {
        Ok(Ok(_)) => Ok("ok".into()),
        Ok(Err(ApiError { code, .. })) => Ok(code),
        Err(BackendError::Reject { .. }) => Ok("ingress".into()),
        Err(e) => Err(e.into()),
    }
}

fn plain<T>(r: BResult<T>) -> BResult<Api<T>> {
    r.map(Ok)
}

const NA: &str = "NOT_AUTHORIZED";
const NO: &str = "NOT_OWNER";
const AN: &str = "ANONYMOUS";
const IN: &str = "ingress";
const OK: &str = "ok";
const NF: &str = "NOT_FOUND";
const IU: &str = "IN_USE";

// anonymous, stranger, other_agent, agent, admin, controller, owner
const USER_UPDATE: [&str; 7] = [IN, OK, OK, OK, OK, OK, OK];
const USER_QUERY: [&str; 7] = [AN, OK, OK, OK, OK, OK, OK];
const ADMIN_UPDATE: [&str; 7] = [IN, NA, NA, NA, OK, OK, NA];
const ADMIN_QUERY: [&str; 7] = [AN, NA, NA, NA, OK, OK, NA];
const ADMIN_NOT_FOUND: [&str; 7] = [IN, NA, NA, NA, NF, NF, NA];
const ADMIN_IN_USE: [&str; 7] = [IN, NA, NA, NA, IU, IU, NA];
const CONTROLLER_UPDATE: [&str; 7] = [IN, NA, NA, NA, NA, OK, NA];
const OWNER_UPDATE: [&str; 7] = [IN, NO, NO, NO, NO, NO, OK];
const OWNER_READ: [&str; 7] = [AN, NA, NA, OK, OK, OK, OK];
const FOR_OWNER: [&str; 7] = [IN, NA, NA, OK, NA, NA, OK];
const PUBLIC: [&str; 7] = [OK; 7];
const FOR_OWNER_QUERY: [&str; 7] = [AN, NA, NA, OK, NA, NA, OK];
const OWNER_ONLY_QUERY: [&str; 7] = [AN, NO, NO, NO, NO, NO, OK];
/// A turn is read by its owner and its agents; anyone else gets what a missing turn gets.
const TURN_READ: [&str; 7] = [AN, NF, NF, OK, NF, NF, OK];
/// An agent token is its owner's alone: anyone else finds no such token.
const TOKEN_OWNER: [&str; 7] = [IN, NF, NF, NF, NF, NF, OK];

/// The method names of the tool host's service, from `candid/tool_host.did`.
fn did_methods() -> Vec<String> {
    let did = include_str!("../../candid/tool_host.did");
    let service = did.split("service :").nth(1).unwrap_or("");
    let mut names: Vec<String> = service
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(" : ")?;
            rest.starts_with('(')
                .then(|| name.trim_matches('"').to_string())
        })
        .collect();
    names.sort();
    names
}

fn matrix(w: &mut World) -> Check {
    let p = w.p;
    let callers = [
        Principal::anonymous(),
        p.stranger,
        p.other_agent,
        p.agent,
        p.admin,
        p.controller,
        p.owner,
    ];
    let x = w.prepare_transfer(&w.amt("1"))?;
    let y = w.prepare_transfer(&w.amt("2"))?;
    let log = w.log_length()?;
    let limits = w.limits()?;
    let (h, ledger) = (w.host, w.ledger.0);
    ensure_eq!(
        w.b.controllers(h.0)?,
        vec![p.controller],
        "the controller role"
    );
    ensure!(!did_methods().is_empty());
    let prepare_input = w.transfer_input(&w.amt("0.01"));
    let commit_input = serde_json::json!({ "preview_id": x.id.to_string() }).to_string();
    let consent_arg = candid::encode_one(confirm_args(x.id, &x.digest)).expect("encodes");
    let turn_args = |owner| BeginTurnArgs {
        query: "balance".into(),
        limit: None,
        format: None,
        owner,
    };
    let turn = h
        .begin_turn(w.b(), p.owner, turn_args(None))?
        .ok_or_fail("begin_turn")?
        .turn_id;
    let builtins = h.get_builtins(w.b(), p.owner)?.settings;
    let token = h
        .issue_agent_token(w.b(), p.owner, "matrix", None)?
        .ok_or_fail("issue_agent_token")?
        .id;
    // What the IC's HTTP gateway sends: a POST to /mcp without a token (answered 401, but the
    // call itself is accepted from anyone).
    let http = tool_host_tests::gateway::HttpRequest {
        method: "POST".into(),
        url: "/mcp".into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec(),
        certificate_version: Some(2),
    };
    let http_call = |w: &mut World, c: Principal, method: &str| {
        let r: BResult<(tool_host_tests::gateway::HttpResponse,)> = if method == "http_request" {
            w.b().query_typed(h.0, c, method, (http.clone(),))
        } else {
            w.b().update_typed(h.0, c, method, (http.clone(),))
        };
        got(plain(r))
    };

    type Row<'a> = (
        &'a str,
        [&'a str; 7],
        Box<dyn Fn(&mut World, Principal) -> Check<String> + 'a>,
    );
    let rows: Vec<Row> = vec![
        (
            "add_admin",
            CONTROLLER_UPDATE,
            Box::new(|w, c| got(h.add_admin(w.b(), c, p.recipient))),
        ),
        (
            "authorize_agent",
            USER_UPDATE,
            Box::new(|w, c| got(h.authorize_agent(w.b(), c, p.recipient))),
        ),
        (
            "begin_turn (for the owner)",
            FOR_OWNER,
            Box::new(|w, c| got(h.begin_turn(w.b(), c, turn_args(Some(p.owner))))),
        ),
        (
            "describe_tools",
            PUBLIC,
            Box::new(|w, c| got(plain(h.describe_tools(w.b(), c)))),
        ),
        (
            "get_builtins",
            PUBLIC,
            Box::new(|w, c| got(plain(h.get_builtins(w.b(), c)))),
        ),
        (
            "get_inbox (the owner's)",
            OWNER_ONLY_QUERY,
            Box::new(|w, c| got(h.get_inbox(w.b(), c, Some(p.owner)))),
        ),
        (
            "get_turn (the owner's)",
            TURN_READ,
            Box::new(|w, c| got(h.get_turn(w.b(), c, turn, Some(p.owner)))),
        ),
        (
            "missing_tools",
            PUBLIC,
            Box::new(|w, c| got(h.missing_tools(w.b(), c, vec!["refund".into()]))),
        ),
        (
            "select_tools (with the owner's usage)",
            FOR_OWNER_QUERY,
            Box::new(|w, c| {
                let args = SelectArgs {
                    query: "balance".into(),
                    limit: None,
                    owner: Some(p.owner),
                };
                got(h.select_tools(w.b(), c, args))
            }),
        ),
        (
            "set_builtins (unchanged)",
            ADMIN_UPDATE,
            Box::new(|w, c| got(h.set_builtins(w.b(), c, builtins.clone()))),
        ),
        (
            "set_escalation_handler (none)",
            USER_UPDATE,
            Box::new(|w, c| got(h.set_escalation_handler(w.b(), c, None))),
        ),
        (
            "tool_usage (the owner's)",
            FOR_OWNER_QUERY,
            Box::new(|w, c| got(h.tool_usage(w.b(), c, Some(p.owner)))),
        ),
        (
            "call_tool (prepare for the owner)",
            FOR_OWNER,
            Box::new(|w, c| {
                got(h.call_tool(
                    w.b(),
                    c,
                    "prepare_icrc1_transfer",
                    &prepare_input,
                    Some(p.owner),
                ))
            }),
        ),
        (
            "call_tool (commit, no digest)",
            FOR_OWNER,
            Box::new(|w, c| got(h.call_tool(w.b(), c, "commit", &commit_input, None))),
        ),
        (
            "icrc21_canister_call_consent_message",
            PUBLIC,
            Box::new(|w, c| {
                let req = consent_request("confirm", consent_arg.clone(), false);
                match h.consent_message(w.b(), c, req) {
                    Ok(Ok(_)) => Ok(OK.into()),
                    Ok(Err(e)) => Ok(format!("ICRC21 {e:?}")),
                    Err(e) => got::<()>(Err(e)),
                }
            }),
        ),
        (
            "confirm",
            OWNER_UPDATE,
            Box::new(|w, c| got(h.confirm(w.b(), c, x.id, &x.digest))),
        ),
        (
            "decline",
            OWNER_UPDATE,
            Box::new(|w, c| got(h.decline(w.b(), c, y.id))),
        ),
        (
            "deposit_account",
            USER_QUERY,
            Box::new(|w, c| got(h.deposit_account(w.b(), c))),
        ),
        (
            "get_intent",
            OWNER_READ,
            Box::new(|w, c| got(h.get_intent(w.b(), c, x.id))),
        ),
        (
            "get_limits",
            USER_QUERY,
            Box::new(|w, c| got(h.get_limits(w.b(), c))),
        ),
        (
            "icrc10_supported_standards",
            PUBLIC,
            Box::new(|w, c| got(plain(h.supported_standards(w.b(), c)))),
        ),
        (
            "list_admins",
            ADMIN_QUERY,
            Box::new(|w, c| got(h.list_admins(w.b(), c))),
        ),
        (
            "list_agents",
            USER_QUERY,
            Box::new(|w, c| got(h.list_agents(w.b(), c))),
        ),
        (
            "list_canisters",
            USER_QUERY,
            Box::new(|w, c| got(h.list_canisters(w.b(), c))),
        ),
        (
            "list_forms",
            USER_QUERY,
            Box::new(|w, c| got(h.list_forms(w.b(), c))),
        ),
        (
            "list_intents (the owner's)",
            OWNER_READ,
            Box::new(|w, c| got(h.list_intents(w.b(), c, Some(p.owner)))),
        ),
        (
            "list_tools",
            PUBLIC,
            Box::new(|w, c| got(plain(h.list_tools(w.b(), c)))),
        ),
        (
            "list_tools_page",
            PUBLIC,
            Box::new(|w, c| got(h.list_tools_page(w.b(), c, Default::default()))),
        ),
        (
            "refresh_refs",
            ADMIN_UPDATE,
            Box::new(|w, c| got(h.refresh_refs(w.b(), c, None))),
        ),
        (
            "register_canister (again)",
            ADMIN_UPDATE,
            Box::new(|w, c| {
                let symbol = w.token.symbol.clone();
                got(h.register_canister(w.b(), c, ledger, Some(&symbol), &["icrc1", "icrc2"]))
            }),
        ),
        (
            // Intents x and y use its tools: replacing it is refused, for every role.
            "register_form (replacing a form in use)",
            ADMIN_IN_USE,
            Box::new(|w, c| got(h.register_form(w.b(), c, "icrc1", ICRC1_FORM))),
        ),
        (
            "remove_admin",
            CONTROLLER_UPDATE,
            Box::new(|w, c| got(h.remove_admin(w.b(), c, p.recipient))),
        ),
        (
            "remove_canister (not registered)",
            ADMIN_NOT_FOUND,
            Box::new(|w, c| got(h.remove_canister(w.b(), c, p.recipient))),
        ),
        (
            "remove_form (not registered)",
            ADMIN_NOT_FOUND,
            Box::new(|w, c| got(h.remove_form(w.b(), c, "no-such-form"))),
        ),
        (
            "http_request",
            PUBLIC,
            Box::new(|w, c| http_call(w, c, "http_request")),
        ),
        (
            "http_request_update",
            PUBLIC,
            Box::new(|w, c| http_call(w, c, "http_request_update")),
        ),
        (
            "issue_agent_token",
            USER_UPDATE,
            Box::new(|w, c| got(h.issue_agent_token(w.b(), c, "a row", None))),
        ),
        (
            "list_agent_tokens",
            PUBLIC,
            Box::new(|w, c| got(plain(h.list_agent_tokens(w.b(), c)))),
        ),
        (
            "revoke_agent_token (the owner's)",
            TOKEN_OWNER,
            Box::new(|w, c| got(h.revoke_agent_token(w.b(), c, token))),
        ),
        (
            "revoke_agent",
            USER_UPDATE,
            Box::new(|w, c| got(h.revoke_agent(w.b(), c, p.recipient))),
        ),
        (
            "set_limits (unchanged)",
            ADMIN_UPDATE,
            Box::new(|w, c| got(h.set_limits(w.b(), c, limits.clone()))),
        ),
        ("stats", USER_QUERY, Box::new(|w, c| got(h.stats(w.b(), c)))),
    ];

    // The rows cover every method of the interface.
    let covered: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|(m, _, _)| m.split(' ').next().unwrap_or(m))
        .collect();
    let did = did_methods();
    ensure_eq!(
        covered.iter().copied().collect::<Vec<_>>(),
        did.iter().map(String::as_str).collect::<Vec<_>>(),
        "the matrix and candid/tool_host.did list different methods"
    );

    let mut table = String::new();
    let mut wrong = vec![];
    let _ = writeln!(table, "{:<40} {}", "method", ROLES.join(" | "));
    for (method, expected, call) in &rows {
        let mut line = vec![];
        for (i, caller) in callers.iter().enumerate() {
            let answer = call(w, *caller)?;
            if answer != expected[i] {
                wrong.push(format!(
                    "{method} as {}: {answer}, expected {}",
                    ROLES[i], expected[i]
                ));
            }
            line.push(answer);
        }
        let _ = writeln!(table, "{method:<40} {}", line.join(" | "));
    }
    println!("{table}");
    if !wrong.is_empty() {
        fail!(
            "{} cells differ:\n{}\n{table}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    // Only the owner's confirm reached the ledger; the decline settled Y.
    ensure_eq!(w.log_length()?, log + 1);
    ensure_eq!(w.intent(x.id)?.status, "done");
    ensure_eq!(w.intent(y.id)?.outcome.as_deref(), Some("declined"));
    let admins = h
        .list_admins(w.b(), p.controller)?
        .ok_or_fail("list_admins")?;
    ensure_eq!(admins, vec![p.admin], "the added admin was removed again");
    let agents = h.list_agents(w.b(), p.owner)?.ok_or_fail("list_agents")?;
    ensure_eq!(agents, vec![p.agent]);
    Ok(())
}
