//! Inter-canister calls with WAT canisters: replies, rejects, callbacks and cleanup,
//! in-order delivery, bounded-wait timeouts, injected faults, call_perform errors,
//! racing ingress messages, the management canister.

mod common;

use std::time::Duration;

use common::*;
use local_ic::{management_canister, LocalIc, RejectCode};

fn two_canisters() -> (LocalIc, candid::Principal, candid::Principal) {
    let mut ic = LocalIc::new();
    let a = install_wat(&mut ic, CALLER);
    let b = install_wat(&mut ic, CALLER);
    (ic, a, b)
}

#[test]
fn reply_callback_gets_reply_and_env() {
    let (mut ic, a, b) = two_canisters();
    let reply = ic
        .update_call(a, user(), "call", call_arg(0, b, "echo", b"ping"))
        .unwrap();
    assert_eq!(replied(&reply), (9, b"ping".to_vec()));
    assert_eq!(
        i64_of(&ic.query_call(a, user(), "counter", vec![]).unwrap()),
        1
    );
    // A self-call works the same way.
    let reply = ic
        .update_call(a, user(), "call", call_arg(0, a, "echo", b"self"))
        .unwrap();
    assert_eq!(replied(&reply), (9, b"self".to_vec()));
}

#[test]
fn reject_codes_reach_the_reject_callback() {
    let (mut ic, a, b) = two_canisters();
    let call = |ic: &mut LocalIc, callee, method: &str| {
        let reply = ic
            .update_call(a, user(), "call", call_arg(0, callee, method, b""))
            .unwrap();
        rejected(&reply)
    };
    assert_eq!(call(&mut ic, b, "reject"), (4, "nope".to_string()));

    let (code, message) = call(&mut ic, b, "trap");
    assert_eq!(code, 5);
    assert!(message.contains("'callee trap'"), "{message}");

    let (code, message) = call(&mut ic, b, "missing");
    assert_eq!(code, 5);
    assert!(
        message.contains("has no update method 'missing'"),
        "{message}"
    );

    let nobody = local_ic::canister_id_from_counter(1000);
    let (code, message) = call(&mut ic, nobody, "echo");
    assert_eq!(code, 3);
    assert!(message.contains("not found"), "{message}");

    let empty = ic.create_canister(vec![admin()]);
    let (code, message) = call(&mut ic, empty, "echo");
    assert_eq!(code, 5);
    assert!(message.contains("no Wasm module"), "{message}");
}

#[test]
fn trap_in_callback_rolls_back_and_runs_cleanup() {
    let (mut ic, a, b) = two_canisters();
    // Flags: reply callback traps (2) + register cleanup with env 77 (4).
    let err = ic
        .update_call(a, user(), "call", call_arg(2 | 4, b, "echo", b"x"))
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(err.message.contains("'callback trap'"), "{err}");
    // The callback's counter increment was rolled back; the cleanup's marker was kept.
    assert_eq!(
        i64_of(&ic.query_call(a, user(), "counter", vec![]).unwrap()),
        0
    );
    assert_eq!(
        i64_of(&ic.query_call(a, user(), "cleanup_marker", vec![]).unwrap()),
        77
    );

    // Without a cleanup the trap is still reported and nothing is kept.
    ic.update_call(a, user(), "call", call_arg(2, b, "echo", b"x"))
        .unwrap_err();
    assert_eq!(
        i64_of(&ic.query_call(a, user(), "counter", vec![]).unwrap()),
        0
    );
}

#[test]
fn calls_between_two_canisters_are_delivered_in_order() {
    let (mut ic, a, b) = two_canisters();
    // Three calls made in one execution: the third reply callback replies.
    let reply = ic
        .update_call(a, user(), "call3", call_arg(0, b, "append", b""))
        .unwrap();
    assert_eq!(replied(&reply).0, 3);
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"123");
    assert_eq!(
        i64_of(&ic.query_call(a, user(), "counter", vec![]).unwrap()),
        3
    );

    // Calls made by successive executions arrive in the same order.
    let ids: Vec<_> = [b"a", b"b", b"c"]
        .iter()
        .map(|p| {
            ic.submit_update(a, user(), "call", call_arg(0, b, "append", *p))
                .unwrap()
        })
        .collect();
    for id in ids {
        ic.await_message(id).unwrap();
    }
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"123abc");
}

#[test]
fn racing_ingress_messages_interleave() {
    let (mut ic, a, b) = two_canisters();
    let first = ic
        .submit_update(a, user(), "call", call_arg(0, b, "append", b"1"))
        .unwrap();
    let second = ic
        .submit_update(a, user(), "call", call_arg(0, b, "append", b"2"))
        .unwrap();
    assert_eq!(
        ic.message_result(first),
        None,
        "nothing runs before a round"
    );
    ic.tick(); // a: first message (call to b)
    ic.tick(); // a: second message; b: first request
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"1");
    assert_eq!(
        ic.message_result(first),
        None,
        "first is still awaiting its response"
    );
    let r2 = ic.await_message(second).unwrap();
    let r1 = ic.await_message(first).unwrap();
    assert_eq!(replied(&r1).0, 9);
    assert_eq!(replied(&r2).0, 9);
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"12");
}

#[test]
fn bounded_wait_call_times_out_with_sys_unknown() {
    let (mut ic, a, b) = two_canisters();
    // Request still queued at the deadline: b never executes it.
    let id = ic
        .submit_update(a, user(), "call", call_arg(1, b, "append", b"late"))
        .unwrap();
    ic.tick(); // a sends the request
    ic.advance_time(Duration::from_secs(6));
    let (code, message) = rejected(&ic.await_message(id).unwrap());
    assert_eq!(code, 6, "{message}");
    assert!(message.contains("deadline"), "{message}");
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"");

    // Callee executed, but its response arrives after the deadline: it is dropped.
    let id = ic
        .submit_update(a, user(), "call", call_arg(1, b, "append", b"x"))
        .unwrap();
    ic.tick(); // a sends the request
    ic.tick(); // b executes and responds
    ic.advance_time(Duration::from_secs(6));
    let (code, _) = rejected(&ic.await_message(id).unwrap());
    assert_eq!(code, 6);
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"x");
    assert!(ic.is_quiet());
}

#[test]
fn msg_deadline_reflects_the_bounded_wait_timeout() {
    let (mut ic, a, b) = two_canisters();
    let id = ic
        .submit_update(a, user(), "call", call_arg(1, b, "deadline", b""))
        .unwrap();
    let sent_at = ic.time_nanos();
    let (_, data) = replied(&ic.await_message(id).unwrap());
    assert_eq!(i64_of(&data) as u64, sent_at + 5_000_000_000);

    let reply = ic
        .update_call(a, user(), "call", call_arg(0, b, "deadline", b""))
        .unwrap();
    assert_eq!(
        i64_of(&replied(&reply).1),
        0,
        "unbounded calls have no deadline"
    );
    let err = ic.update_call(b, user(), "deadline", vec![]).unwrap();
    assert_eq!(i64_of(&err), 0, "ingress has no deadline");
}

#[test]
fn injected_faults_reject_without_running_the_callee() {
    let (mut ic, a, b) = two_canisters();
    for code in [
        RejectCode::SysFatal,
        RejectCode::SysTransient,
        RejectCode::DestinationInvalid,
        RejectCode::SysUnknown,
    ] {
        ic.inject_call_fault(b, "append", code, "injected fault");
        let reply = ic
            .update_call(a, user(), "call", call_arg(0, b, "append", b"z"))
            .unwrap();
        assert_eq!(
            rejected(&reply),
            (code.as_u32(), "injected fault".to_string())
        );
    }
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"");
    // The fault was consumed: the next call goes through.
    let reply = ic
        .update_call(a, user(), "call", call_arg(0, b, "append", b"z"))
        .unwrap();
    assert_eq!(replied(&reply).0, 9);
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"z");
}

#[test]
#[should_panic(expected = "can be produced by the callee itself")]
fn injecting_a_canister_code_is_refused() {
    let (mut ic, _a, b) = two_canisters();
    ic.inject_call_fault(b, "append", RejectCode::CanisterReject, "no");
}

#[test]
fn call_perform_failure_returns_an_error_code() {
    let (mut ic, a, b) = two_canisters();
    ic.inject_call_perform_failure(a);
    let reply = ic
        .update_call(a, user(), "call", call_arg(0, b, "append", b"q"))
        .unwrap();
    assert_eq!(reply[0], b'F');
    assert_eq!(u32::from_le_bytes(reply[1..5].try_into().unwrap()), 2);
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"");

    // The output queue capacity triggers the same error naturally.
    ic.set_max_outstanding_calls(2);
    let reply = ic
        .update_call(a, user(), "call3", call_arg(0, b, "append", b""))
        .unwrap_err();
    // call3 ignores the error of its third call; with no third reply it never replies.
    assert!(reply.message.contains("did not reply"), "{reply}");
    assert_eq!(ic.query_call(b, user(), "log", vec![]).unwrap(), b"12");
}

#[test]
fn management_canister_raw_rand_and_refusals() {
    let (mut ic, a, _b) = two_canisters();
    let mgmt = management_canister();
    let reply = ic
        .update_call(
            a,
            user(),
            "call",
            call_arg(0, mgmt, "raw_rand", b"DIDL\x00\x00"),
        )
        .unwrap();
    let bytes: Vec<u8> = candid::decode_one(&replied(&reply).1).unwrap();
    assert_eq!(bytes.len(), 32);
    let reply2 = ic
        .update_call(
            a,
            user(),
            "call",
            call_arg(0, mgmt, "raw_rand", b"DIDL\x00\x00"),
        )
        .unwrap();
    assert_ne!(reply, reply2);

    let reply = ic
        .update_call(
            a,
            user(),
            "call",
            call_arg(0, mgmt, "canister_status", b"DIDL\x00\x00"),
        )
        .unwrap();
    let (code, message) = rejected(&reply);
    assert_eq!(code, 4);
    assert!(message.contains("not implemented"), "{message}");

    let err = ic
        .update_call(mgmt, user(), "raw_rand", vec![])
        .unwrap_err();
    assert!(err.message.contains("management canister"), "{err}");
}

#[test]
fn run_until_quiet_and_round_accounting() {
    let (mut ic, a, b) = two_canisters();
    ic.submit_update(a, user(), "call", call_arg(0, b, "append", b"1"))
        .unwrap();
    assert!(!ic.is_quiet());
    // ingress at a, request at b, response at a.
    assert_eq!(ic.run_until_quiet(100).unwrap(), 3);
    assert!(ic.is_quiet());
    ic.submit_update(a, user(), "call", call_arg(0, b, "append", b"1"))
        .unwrap();
    assert!(ic.run_until_quiet(1).is_err());
}

#[test]
fn attached_cycles_are_transferred_and_refunded() {
    let (mut ic, a, b) = two_canisters();
    let (a0, b0) = (ic.cycle_balance(a), ic.cycle_balance(b));
    let reply = ic
        .update_call(a, user(), "call", call_arg(8, b, "accept400", b""))
        .unwrap();
    assert_eq!(replied(&reply).0, 9);
    // The call itself costs its `cost_call` price: "accept400" and no argument.
    let cost = 260_000 + 1_000 * "accept400".len() as u128;
    assert_eq!(ic.cycle_balance(a), a0 - 400 - cost);
    assert_eq!(ic.cycle_balance(b), b0 + 400);
    assert_eq!(
        i64_of(&ic.query_call(a, user(), "refunded", vec![]).unwrap()),
        600
    );

    // Cycles attached to a call that is rejected come back in full.
    let reply = ic
        .update_call(a, user(), "call", call_arg(8, b, "reject", b""))
        .unwrap();
    assert_eq!(rejected(&reply).0, 4);
    let cost2 = 260_000 + 1_000 * "reject".len() as u128;
    assert_eq!(ic.cycle_balance(a), a0 - 400 - cost - cost2);
}

#[test]
fn local_ic_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<LocalIc>();
}
