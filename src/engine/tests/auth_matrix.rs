//! The authorization matrix: every method of the API, called by the anonymous principal, a
//! stranger, another owner's agent, the owner's agent, the owner and a controller.

mod common;
use candid::Principal;
use common::*;
use serde_json::json;
use std::rc::Rc;
use tool_host_engine::types::*;
use tool_host_engine::*;

const ROLES: [&str; 6] = [
    "anonymous",
    "stranger",
    "other_agent",
    "agent",
    "owner",
    "controller",
];

fn who(role: &str) -> Principal {
    match role {
        "anonymous" => Principal::anonymous(),
        "stranger" => stranger(),
        "other_agent" => other_agent(),
        "agent" => agent(),
        "owner" => owner(),
        "controller" => controller(),
        _ => unreachable!(),
    }
}

/// A world with an open intent of the owner and another owner's agent.
fn world() -> (Rc<World>, u64, Vec<u8>) {
    let w = World::new().setup();
    owners::authorize_agent(&*w, other_owner(), other_agent()).unwrap();
    let (id, d) = w.prepare("1");
    (w, id, d)
}

fn code<T>(r: ApiResult<T>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => e.code,
    }
}

/// Runs `call` for every role on a fresh world and compares the codes with `want` (in ROLES order).
fn check(
    method: &str,
    want: [&str; 6],
    call: impl Fn(&Rc<World>, Principal, u64, &[u8]) -> String,
) {
    for (role, want) in ROLES.iter().zip(want) {
        let (w, id, d) = world();
        let got = call(&w, who(role), id, &d);
        assert_eq!(got, want, "{method} called by {role}");
    }
}

const OWNER_SELF: [&str; 6] = ["ANONYMOUS", "ok", "ok", "ok", "ok", "ok"];
const ADMIN: [&str; 6] = [
    "ANONYMOUS",
    "NOT_AUTHORIZED",
    "NOT_AUTHORIZED",
    "NOT_AUTHORIZED",
    "NOT_AUTHORIZED",
    "ok",
];
const OWNERS_ONLY: [&str; 6] = [
    "ANONYMOUS",
    "NOT_OWNER",
    "NOT_OWNER",
    "NOT_OWNER",
    "ok",
    "NOT_OWNER",
];
const FOR_THE_OWNER: [&str; 6] = [
    "ANONYMOUS",
    "NOT_AUTHORIZED",
    "NOT_AUTHORIZED",
    "ok",
    "ok",
    "NOT_AUTHORIZED",
];
const READ_INTENTS: [&str; 6] = [
    "ANONYMOUS",
    "NOT_AUTHORIZED",
    "NOT_AUTHORIZED",
    "ok",
    "ok",
    "ok",
];

#[test]
fn list_tools_is_open_to_everyone() {
    for role in ROLES {
        let (w, _, _) = world();
        let _ = who(role);
        assert!(tools::list_tools(&*w).starts_with('['));
    }
}

#[test]
fn call_tool_read_for_the_owner() {
    check(
        "call_tool (read, for the owner)",
        FOR_THE_OWNER,
        |w, c, _, _| {
            code(w.tool(
                c,
                "icrc1_balance_of",
                json!({ "canister_id": ledger_id().to_text(), "account": receiver().to_text() }),
                Some(owner()),
            ))
        },
    );
}

#[test]
fn call_tool_for_oneself_is_any_signed_in_principal() {
    check(
        "call_tool (prepare, for oneself)",
        OWNER_SELF,
        |w, c, _, _| {
            code(w.tool(c, "prepare_icrc1_transfer", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "2" }), None))
        },
    );
}

#[test]
fn call_tool_prepare_for_the_owner() {
    check(
        "call_tool (prepare, for the owner)",
        FOR_THE_OWNER,
        |w, c, _, _| {
            code(w.tool(c, "prepare_icrc1_transfer", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "2" }), Some(owner())))
        },
    );
}

#[test]
fn commit_by_the_owner_or_its_agent() {
    check("commit (no digest)", FOR_THE_OWNER, |w, c, id, _| {
        code(w.tool(c, "commit", json!({ "preview_id": id.to_string() }), None))
    });
}

#[test]
fn commit_with_the_digest_sends_only_for_the_owner() {
    for role in ROLES {
        let (w, id, d) = world();
        let r = w.tool(
            who(role),
            "commit",
            json!({ "preview_id": id.to_string(), "digest": hex::encode(&d) }),
            None,
        );
        let sent = w.sends("icrc1_transfer");
        match role {
            "owner" => assert_eq!((r.unwrap().outcome.as_deref(), sent), (Some("success"), 1)),
            "agent" => {
                assert_eq!(
                    structured(&r.unwrap())["status"],
                    json!("awaiting_confirmation"),
                    "an agent never confirms, even with the digest"
                );
                assert_eq!(sent, 0);
            }
            "anonymous" => assert_eq!((code(r), sent), ("ANONYMOUS".into(), 0)),
            _ => assert_eq!((code(r), sent), ("NOT_AUTHORIZED".into(), 0), "{role}"),
        }
    }
}

#[test]
fn confirm_only_the_owner() {
    check("confirm", OWNERS_ONLY, |w, c, id, d| {
        code(w.confirm(c, id, d))
    });
}

#[test]
fn decline_only_the_owner() {
    check("decline", OWNERS_ONLY, |w, c, id, _| {
        code(send::decline(&**w, c, id, None))
    });
}

#[test]
fn get_intent_owner_agent_and_admins() {
    check("get_intent", READ_INTENTS, |w, c, id, _| {
        code(views::get_intent(&**w, c, id))
    });
}

#[test]
fn list_intents_owner_agent_and_admins() {
    check("list_intents", READ_INTENTS, |w, c, _, _| {
        code(views::list_intents(
            &**w,
            c,
            ListIntentsArgs {
                owner: Some(owner()),
                start_after: None,
                limit: None,
            },
        ))
    });
}

#[test]
fn owners_manage_their_own_agents_and_deposit_account() {
    check("authorize_agent", OWNER_SELF, |w, c, _, _| {
        code(owners::authorize_agent(&**w, c, p(77)))
    });
    check(
        "revoke_agent",
        [
            "ANONYMOUS",
            "NOT_FOUND",
            "NOT_FOUND",
            "NOT_FOUND",
            "ok",
            "NOT_FOUND",
        ],
        |w, c, _, _| code(owners::revoke_agent(&**w, c, agent())),
    );
    check("list_agents", OWNER_SELF, |w, c, _, _| {
        code(owners::list_agents(&**w, c))
    });
    check("deposit_account", OWNER_SELF, |w, c, _, _| {
        code(owners::deposit_account(&**w, c))
    });
}

#[test]
fn admins_manage_forms_canisters_and_limits() {
    check("register_form", ADMIN, |w, c, _, _| {
        code(registry::register_form(
            &**w,
            c,
            RegisterFormArgs {
                id: "spare".into(),
                json: spare_form(),
            },
        ))
    });
    check("remove_form", ADMIN, |w, c, _, _| {
        registry::register_form(
            &**w,
            controller(),
            RegisterFormArgs {
                id: "spare".into(),
                json: spare_form(),
            },
        )
        .unwrap();
        code(registry::remove_form(&**w, c, "spare".into()))
    });
    check("register_canister", ADMIN, |w, c, _, _| {
        code(futures::executor::block_on(registry::register_canister(
            &**w,
            c,
            RegisterCanisterArgs {
                id: ledger_id(),
                label: None,
                forms: vec!["icrc1".into()],
                owner: None,
            },
        )))
    });
    check(
        "remove_canister",
        [
            "ANONYMOUS",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "IN_USE",
        ],
        |w, c, _, _| code(registry::remove_canister(&**w, c, ledger_id())),
    );
    check("refresh_refs", ADMIN, |w, c, _, _| {
        code(futures::executor::block_on(registry::refresh_refs(
            &**w, c, None,
        )))
    });
    check("set_limits", ADMIN, |w, c, _, _| {
        code(registry::set_limits(&**w, c, Limits::default()))
    });
    check("list_admins", ADMIN, |w, c, _, _| {
        code(registry::list_admins(&**w, c))
    });
}

/// A form of one query method that shares no tool name with the packs.
fn spare_form() -> String {
    let mut f: serde_json::Value = serde_json::from_str(tool_host_core::packs::ICRC1).unwrap();
    let m = f["methods"]["icrc1_symbol"].clone();
    f["methods"] = serde_json::json!({ "spare_symbol": m });
    f["name"] = serde_json::json!("spare");
    f.to_string()
}

#[test]
fn reading_the_catalog_needs_a_signed_in_caller() {
    check("list_forms", OWNER_SELF, |w, c, _, _| {
        code(registry::list_forms(&**w, c))
    });
    check("list_canisters", OWNER_SELF, |w, c, _, _| {
        code(registry::list_canisters(&**w, c))
    });
    check("get_limits", OWNER_SELF, |w, c, _, _| {
        code(registry::get_limits(&**w, c))
    });
}

#[test]
fn controllers_manage_admins_and_admins_then_act_as_admins() {
    check("add_admin", ADMIN, |w, c, _, _| {
        code(registry::add_admin(&**w, c, p(88)))
    });
    check(
        "remove_admin",
        [
            "ANONYMOUS",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "NOT_FOUND",
        ],
        |w, c, _, _| code(registry::remove_admin(&**w, c, p(88))),
    );
    let (w, _, _) = world();
    registry::add_admin(&*w, controller(), stranger()).unwrap();
    assert!(
        registry::set_limits(&*w, stranger(), Limits::default()).is_ok(),
        "an admin sets limits"
    );
    assert_eq!(
        registry::add_admin(&*w, stranger(), p(99))
            .unwrap_err()
            .code,
        "NOT_AUTHORIZED",
        "only controllers name admins"
    );
}

#[test]
fn consent_messages_are_open_to_everyone() {
    for role in ROLES {
        let (w, id, d) = world();
        let _ = who(role);
        let req = consent_request(
            "confirm",
            candid::encode_one(ConfirmArgs {
                intent_id: id,
                digest: serde_bytes::ByteBuf::from(d),
            })
            .unwrap(),
            None,
        );
        assert!(consent::consent_message(&*w, req).is_ok());
        assert_eq!(consent::supported_standards().len(), 2);
    }
}

// The refusals of issue 9 (custody), for every role: the six above and an admin that is not a
// controller.

fn admin() -> Principal {
    p(9)
}

/// As [`check`], with an admin (not a controller) as a seventh role, last.
fn check7(
    method: &str,
    want: [&str; 7],
    call: impl Fn(&Rc<World>, Principal, u64, &[u8]) -> String,
) {
    for (k, want) in want.iter().enumerate() {
        let (w, id, d) = world();
        registry::add_admin(&*w, controller(), admin()).unwrap();
        let (role, caller) = match ROLES.get(k) {
            Some(r) => (*r, who(r)),
            None => ("admin", admin()),
        };
        let got = call(&w, caller, id, &d);
        assert_eq!(&got, want, "{method} called by {role}");
    }
}

#[test]
fn the_custody_refusals_hold_for_every_role() {
    // A transfer out of another owner's deposit, through a form that makes the source an input:
    // refused for whoever prepares it, the controller included.
    check7(
        "call_tool (prepare from another owner's deposit)",
        [
            "ANONYMOUS",
            "CUSTODY",
            "CUSTODY",
            "CUSTODY",
            "CUSTODY",
            "CUSTODY",
            "CUSTODY",
        ],
        |w, c, _, _| {
            let mut form: serde_json::Value =
                serde_json::from_str(tool_host_core::packs::ICRC1).unwrap();
            for f in form["types"]["TransferArg"]["fields"]
                .as_array_mut()
                .unwrap()
            {
                if f["name"] == "from_subaccount" {
                    f.as_object_mut().unwrap().remove("ui");
                    f.as_object_mut().unwrap().remove("auto");
                }
            }
            // Replacing the form is refused while the owner's intent is open: settle it first.
            let (id, _) = (w.state.borrow().intents.keys().next().unwrap(), ());
            send::decline(&**w, owner(), id, None).unwrap();
            registry::register_form(
                &**w,
                controller(),
                RegisterFormArgs {
                    id: "icrc1".into(),
                    json: form.to_string(),
                },
            )
            .unwrap();
            let victim = hex::encode(tool_host_core::funds::deposit_subaccount(&other_owner()));
            code(w.tool(c, "prepare_icrc1_transfer", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "2", "from_subaccount": victim }), None))
        },
    );
    // A canister registered for the owner alone: only the owner and its agent use its tools.
    check7(
        "call_tool (prepare on the owner's own canister)",
        [
            "ANONYMOUS",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "ok",
            "ok",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
        ],
        |w, c, id, _| {
            send::decline(&**w, owner(), id, None).unwrap();
            futures::executor::block_on(registry::register_canister(
                &**w,
                controller(),
                RegisterCanisterArgs {
                    id: ledger_id(),
                    label: None,
                    forms: vec!["icrc1".into()],
                    owner: Some(owner()),
                },
            ))
            .unwrap();
            let on_behalf = (c == agent()).then_some(owner());
            code(w.tool(c, "prepare_icrc1_transfer", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": "3" }), on_behalf))
        },
    );
    // Replacing a form its open intent uses: IN_USE for those who may register forms.
    check7(
        "register_form (replacing a form in use)",
        [
            "ANONYMOUS",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "NOT_AUTHORIZED",
            "IN_USE",
            "IN_USE",
        ],
        |w, c, _, _| {
            code(registry::register_form(
                &**w,
                c,
                RegisterFormArgs {
                    id: "icrc1".into(),
                    json: tool_host_core::packs::ICRC1.replace("Transfer tokens", "Send tokens"),
                },
            ))
        },
    );
    // Declining another preview than the current one.
    check7(
        "decline (with another digest)",
        [
            "ANONYMOUS",
            "NOT_OWNER",
            "NOT_OWNER",
            "NOT_OWNER",
            "DIGEST_MISMATCH",
            "NOT_OWNER",
            "NOT_OWNER",
        ],
        |w, c, id, _| code(send::decline(&**w, c, id, Some(&[7; 32]))),
    );
    // decline's consent message without the digest: nobody learns anything.
    for role in ROLES.iter().copied().chain(["admin"]) {
        let (w, id, _) = world();
        let arg = candid::encode_one(DeclineArgs {
            intent_id: id,
            digest: None,
        })
        .unwrap();
        let r = consent::consent_message(&*w, consent_request("decline", arg, None));
        assert!(
            matches!(r, Err(consent::Icrc21Error::ConsentMessageUnavailable(_))),
            "{role}: {r:?}"
        );
    }
}
