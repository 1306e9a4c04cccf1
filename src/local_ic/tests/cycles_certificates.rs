//! Cycles and certification with WAT canisters: attached cycles, partial accepts, refunds on
//! reply, reject and trap, balances, `cost_call` and what a call is charged, `cycles_burn128`,
//! `certified_data_set` and the data certificate of a query; and the host's call faults that
//! need a real callee (a lost reply, an injected reply) and a canister clock running ahead.

mod common;

use std::time::Duration;

use candid::Principal;
use common::*;
use ic_certification::{Certificate, LookupResult};
use local_ic::{certificate, InstallMode, LocalIc, RejectCode};

/// A wallet that is caller and callee at once.
///
/// `send`: `amount: u64 | flags: u8 | callee_len: u8 | callee | method_len: u8 | method |
/// payload`; attaches `amount` cycles (flag 1: bounded wait, 5 s). The reply callback answers
/// `R` + refunded (16 bytes) + the reply, the reject callback `J` + code (4) + refunded (16) +
/// message, a failed `call_perform` `F` + its code (4).
const WALLET: &str = r#"
  (table 4 funcref)
  (elem (i32.const 1) func $on_reply $on_reject)

  (func $u128_reply (param $ptr i32) (call $reply_bytes (local.get $ptr) (i32.const 16)))

  (func (export "canister_update send")
    (local $n i32) (local $p i32) (local $callee_len i32) (local $method_len i32)
    (local $err i32)
    (local.set $n (call $load_arg))
    (local.set $callee_len (i32.load8_u (i32.const 1033)))
    (local.set $p (i32.add (i32.const 1034) (local.get $callee_len)))
    (local.set $method_len (i32.load8_u (local.get $p)))
    (call $call_new
      (i32.const 1034) (local.get $callee_len)
      (i32.add (local.get $p) (i32.const 1)) (local.get $method_len)
      (i32.const 1) (i32.const 0) (i32.const 2) (i32.const 0))
    (if (i32.and (i32.load8_u (i32.const 1032)) (i32.const 1))
      (then (call $call_bounded (i32.const 5))))
    (call $call_cycles_add (i64.const 0) (i64.load (i32.const 1024)))
    (local.set $p (i32.add (i32.add (local.get $p) (i32.const 1)) (local.get $method_len)))
    (call $call_data_append
      (local.get $p) (i32.sub (i32.add (i32.const 1024) (local.get $n)) (local.get $p)))
    (local.set $err (call $call_perform))
    (if (local.get $err)
      (then
        (i32.store8 (i32.const 0) (i32.const 70))
        (i32.store (i32.const 1) (local.get $err))
        (call $reply_bytes (i32.const 0) (i32.const 5)))))

  (func $on_reply (param $env i32)
    (local $n i32)
    (i32.store8 (i32.const 4096) (i32.const 82))
    (call $cycles_refunded (i32.const 4097))
    (local.set $n (call $arg_size))
    (call $arg_copy (i32.const 4113) (i32.const 0) (local.get $n))
    (call $reply_bytes (i32.const 4096) (i32.add (local.get $n) (i32.const 17))))

  (func $on_reject (param $env i32)
    (local $n i32)
    (i32.store8 (i32.const 4096) (i32.const 74))
    (i32.store (i32.const 4097) (call $reject_code))
    (call $cycles_refunded (i32.const 4101))
    (local.set $n (call $reject_msg_size))
    (call $reject_msg_copy (i32.const 4117) (i32.const 0) (local.get $n))
    (call $reply_bytes (i32.const 4096) (i32.add (local.get $n) (i32.const 21))))

  ;; Callee side. `accept(n)`: available before, accepted, available after (16 bytes each).
  (func (export "canister_update accept")
    (call $cycles_available (i32.const 4096))
    (call $cycles_accept (i64.const 0) (call $arg_i64) (i32.const 4112))
    (call $cycles_available (i32.const 4128))
    (call $reply_bytes (i32.const 4096) (i32.const 48)))
  (func (export "canister_update accept_then_reject")
    (call $cycles_accept (i64.const 0) (call $arg_i64) (i32.const 4112))
    (call $reject (i32.const 260) (i32.const 4)))
  (func (export "canister_update accept_then_trap")
    (call $cycles_accept (i64.const 0) (call $arg_i64) (i32.const 4112))
    (call $trap (i32.const 256) (i32.const 4)))
  (func (export "canister_update accept_reply_then_trap")
    (call $cycles_accept (i64.const 0) (call $arg_i64) (i32.const 4112))
    (call $reply_bytes (i32.const 4112) (i32.const 16))
    (call $trap (i32.const 256) (i32.const 4)))
  (func (export "canister_query available_in_query")
    (call $cycles_available (i32.const 4096))
    (call $u128_reply (i32.const 4096)))

  (func (export "canister_update balances")
    (call $cycle_balance (i32.const 4096))
    (call $liquid_balance (i32.const 4112))
    (call $reply_bytes (i32.const 4096) (i32.const 32)))
  ;; `cost(method_len, payload_len)`, two u64.
  (func (export "canister_update cost")
    (call $arg_copy (i32.const 0) (i32.const 0) (i32.const 16))
    (call $cost_call (i64.load (i32.const 0)) (i64.load (i32.const 8)) (i32.const 4096))
    (call $u128_reply (i32.const 4096)))
  (func (export "canister_update burn")
    (call $cycles_burn (i64.const 0) (call $arg_i64) (i32.const 4096))
    (call $u128_reply (i32.const 4096)))
  (func (export "canister_update burn_then_trap")
    (call $cycles_burn (i64.const 0) (call $arg_i64) (i32.const 4096))
    (call $trap (i32.const 256) (i32.const 4)))

  ;; Certified data: the argument becomes the certified data.
  (func (export "canister_update certify")
    (call $certified_data_set (i32.const 1024) (call $load_arg))
    (call $reply_i64 (i64.extend_i32_u (call $certificate_present))))
  (func (export "canister_update certify_then_trap")
    (call $certified_data_set (i32.const 1024) (call $load_arg))
    (call $trap (i32.const 256) (i32.const 4)))
  (func (export "canister_query certify_in_query")
    (call $certified_data_set (i32.const 1024) (call $load_arg))
    (call $reply_i64 (i64.const 0)))
  ;; `certificate`: 1 byte present, then the certificate if there is one.
  (func (export "canister_query certificate")
    (local $n i32)
    (i32.store8 (i32.const 8192) (call $certificate_present))
    (if (i32.load8_u (i32.const 8192))
      (then
        (local.set $n (call $certificate_size))
        (call $certificate_copy (i32.const 8193) (i32.const 0) (local.get $n))))
    (call $reply_bytes (i32.const 8192) (i32.add (local.get $n) (i32.const 1))))
  (func (export "canister_update certificate_in_update")
    (call $reply_i64 (i64.extend_i32_u (call $certificate_size))))
  (func (export "canister_update time") (call $reply_i64 (call $time)))
  (func (export "canister_update set_timer")
    (call $reply_i64 (call $timer_set (call $arg_i64))))
  (func (export "canister_global_timer")
    (i64.store (i32.const 24) (call $time)))
  (func (export "canister_query fired_at") (call $reply_i64 (i64.load (i32.const 24))))
  (func (export "canister_update count")
    (drop (call $bump (i32.const 16)))
    (call $reply_i64 (i64.load (i32.const 16))))
  (func (export "canister_query counter") (call $reply_i64 (i64.load (i32.const 16))))
"#;

fn wallets() -> (LocalIc, Principal, Principal) {
    let mut ic = LocalIc::new();
    let a = install_wat(&mut ic, WALLET);
    let b = install_wat(&mut ic, WALLET);
    (ic, a, b)
}

fn send_arg(
    amount: u64,
    bounded: bool,
    callee: Principal,
    method: &str,
    payload: &[u8],
) -> Vec<u8> {
    let mut arg = amount.to_le_bytes().to_vec();
    arg.push(u8::from(bounded));
    arg.push(callee.as_slice().len() as u8);
    arg.extend_from_slice(callee.as_slice());
    arg.push(method.len() as u8);
    arg.extend_from_slice(method.as_bytes());
    arg.extend_from_slice(payload);
    arg
}

fn u128_at(bytes: &[u8], at: usize) -> u128 {
    u128::from_le_bytes(bytes[at..at + 16].try_into().expect("16 bytes"))
}

/// What `send` charges besides the attached cycles: the call's `cost_call` price.
fn cost(method: &str, payload: &[u8]) -> u128 {
    260_000 + 1_000 * (method.len() + payload.len()) as u128
}

/// An `R` answer: (refunded, reply data).
fn sent_reply(r: &[u8]) -> (u128, Vec<u8>) {
    assert_eq!(
        r[0],
        b'R',
        "expected a reply, got {:?}",
        String::from_utf8_lossy(r)
    );
    (u128_at(r, 1), r[17..].to_vec())
}

/// A `J` answer: (code, refunded, message).
fn sent_reject(r: &[u8]) -> (u32, u128, String) {
    assert_eq!(
        r[0],
        b'J',
        "expected a reject, got {:?}",
        String::from_utf8_lossy(r)
    );
    let code = u32::from_le_bytes(r[1..5].try_into().unwrap());
    (
        code,
        u128_at(r, 5),
        String::from_utf8_lossy(&r[21..]).into_owned(),
    )
}

#[test]
fn cycles_available_accept_in_parts_and_refund_on_reply() {
    let (mut ic, a, b) = wallets();
    let (a0, b0) = (ic.cycle_balance(a), ic.cycle_balance(b));
    let payload = 300u64.to_le_bytes();
    let r = ic
        .update_call(
            a,
            user(),
            "send",
            send_arg(1_000, false, b, "accept", &payload),
        )
        .unwrap();
    let (refunded, data) = sent_reply(&r);
    // available 1000, accepted 300, then 700 available.
    assert_eq!(
        (u128_at(&data, 0), u128_at(&data, 16), u128_at(&data, 32)),
        (1_000, 300, 700)
    );
    assert_eq!(
        refunded, 700,
        "what was not accepted comes back with the reply"
    );
    assert_eq!(ic.cycle_balance(b), b0 + 300);
    assert_eq!(ic.cycle_balance(a), a0 - 300 - cost("accept", &payload));

    // Accepting more than is available accepts what is available.
    let payload = 5_000u64.to_le_bytes();
    let r = ic
        .update_call(
            a,
            user(),
            "send",
            send_arg(1_000, false, b, "accept", &payload),
        )
        .unwrap();
    let (refunded, data) = sent_reply(&r);
    assert_eq!(
        (u128_at(&data, 0), u128_at(&data, 16), u128_at(&data, 32)),
        (1_000, 1_000, 0)
    );
    assert_eq!(refunded, 0);
    assert_eq!(ic.cycle_balance(b), b0 + 1_300);
}

#[test]
fn refunds_on_reject_trap_and_missing_callee() {
    let (mut ic, a, b) = wallets();
    let b0 = ic.cycle_balance(b);
    let payload = 400u64.to_le_bytes();
    // A reject keeps what the callee accepted before it.
    let r = ic
        .update_call(
            a,
            user(),
            "send",
            send_arg(1_000, false, b, "accept_then_reject", &payload),
        )
        .unwrap();
    let (code, refunded, message) = sent_reject(&r);
    assert_eq!((code, refunded, message.as_str()), (4, 600, "nope"));
    assert_eq!(ic.cycle_balance(b), b0 + 400);

    // A trap rolls the accept back: everything is refunded.
    let r = ic
        .update_call(
            a,
            user(),
            "send",
            send_arg(1_000, false, b, "accept_then_trap", &payload),
        )
        .unwrap();
    let (code, refunded, _) = sent_reject(&r);
    assert_eq!((code, refunded), (5, 1_000));
    assert_eq!(ic.cycle_balance(b), b0 + 400);

    // A reply followed by a trap: the reply (and its accept) are discarded with the execution.
    let r = ic
        .update_call(
            a,
            user(),
            "send",
            send_arg(1_000, false, b, "accept_reply_then_trap", &payload),
        )
        .unwrap();
    let (code, refunded, _) = sent_reject(&r);
    assert_eq!((code, refunded), (5, 1_000));
    assert_eq!(ic.cycle_balance(b), b0 + 400);

    // No such canister, no such method: refunded in full.
    let nobody = local_ic::canister_id_from_counter(99);
    let before = ic.cycle_balance(a);
    let r = ic
        .update_call(
            a,
            user(),
            "send",
            send_arg(1_000, false, nobody, "accept", b""),
        )
        .unwrap();
    assert_eq!((sent_reject(&r).0, sent_reject(&r).1), (3, 1_000));
    let r = ic
        .update_call(a, user(), "send", send_arg(1_000, false, b, "missing", b""))
        .unwrap();
    assert_eq!((sent_reject(&r).0, sent_reject(&r).1), (5, 1_000));
    assert_eq!(
        ic.cycle_balance(a),
        before - cost("accept", b"") - cost("missing", b""),
        "only the calls' price was spent"
    );
}

#[test]
fn cycles_api_availability() {
    let (mut ic, a, _) = wallets();
    // msg_cycles_available128 is not available in a non-replicated query.
    let err = ic
        .query_call(a, user(), "available_in_query", vec![])
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(
        err.message.contains(
            "\"ic0.msg_cycles_available128\" cannot be executed in non-replicated query mode"
        ),
        "{err}"
    );
    // Ingress carries no cycles.
    let r = ic
        .update_call(a, user(), "accept", 10u64.to_le_bytes().to_vec())
        .unwrap();
    assert_eq!((u128_at(&r, 0), u128_at(&r, 16)), (0, 0));
}

#[test]
fn balances_cost_call_and_what_a_call_is_charged() {
    let (mut ic, a, b) = wallets();
    let r = ic.update_call(a, user(), "balances", vec![]).unwrap();
    assert_eq!(u128_at(&r, 0), ic.cycle_balance(a));
    assert_eq!(
        u128_at(&r, 16),
        u128_at(&r, 0),
        "no freezing threshold: liquid = balance"
    );
    ic.add_cycles(a, 5);
    let r2 = ic.update_call(a, user(), "balances", vec![]).unwrap();
    assert_eq!(u128_at(&r2, 0), u128_at(&r, 0) + 5);

    let mut arg = 6u64.to_le_bytes().to_vec();
    arg.extend(10u64.to_le_bytes());
    let r = ic.update_call(a, user(), "cost", arg).unwrap();
    assert_eq!(u128_at(&r, 0), 260_000 + 16_000);

    // A call costs exactly its cost_call price (plus what it attaches).
    let before = ic.cycle_balance(a);
    let payload = b"0123456789";
    ic.update_call(a, user(), "send", send_arg(0, false, b, "accept", payload))
        .unwrap();
    assert_eq!(ic.cycle_balance(a), before - cost("accept", payload));

    // A canister that cannot pay the price: call_perform answers 2 and nothing is charged.
    let low = ic.cycle_balance(a) - 200_000;
    ic.update_call(a, user(), "burn", (low as u64).to_le_bytes().to_vec())
        .unwrap();
    let before = ic.cycle_balance(a);
    assert!(before < cost("accept", b""), "{before}");
    let r = ic
        .update_call(a, user(), "send", send_arg(0, false, b, "accept", b""))
        .unwrap();
    assert_eq!(&r[..5], &[b'F', 2, 0, 0, 0]);
    assert_eq!(ic.cycle_balance(a), before);
}

#[test]
fn cycles_burn_caps_at_the_balance_and_rolls_back_on_trap() {
    let mut ic = LocalIc::new();
    let a = install_wat(&mut ic, WALLET);
    let b0 = ic.cycle_balance(a);
    let r = ic
        .update_call(a, user(), "burn", 500u64.to_le_bytes().to_vec())
        .unwrap();
    assert_eq!(u128_at(&r, 0), 500);
    assert_eq!(ic.cycle_balance(a), b0 - 500);
    let err = ic
        .update_call(a, user(), "burn_then_trap", 500u64.to_le_bytes().to_vec())
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert_eq!(ic.cycle_balance(a), b0 - 500, "the burn was rolled back");

    // Burning more than the balance burns the balance.
    let small = install_wat(&mut ic, WALLET);
    let all = ic.cycle_balance(small);
    ic.update_call(
        small,
        user(),
        "burn",
        (all as u64 - 10).to_le_bytes().to_vec(),
    )
    .unwrap();
    let left = ic.cycle_balance(small);
    assert_eq!(left, 10);
    let r = ic
        .update_call(small, user(), "burn", u64::MAX.to_le_bytes().to_vec())
        .unwrap();
    assert_eq!(u128_at(&r, 0), left);
    assert_eq!(ic.cycle_balance(small), 0);
}

#[test]
fn attaching_more_than_the_balance_traps() {
    let (mut ic, a, b) = wallets();
    let all = ic.cycle_balance(a);
    assert!(all < u128::from(u64::MAX), "the test attaches u64::MAX");
    let err = ic
        .update_call(
            a,
            user(),
            "send",
            send_arg(u64::MAX, false, b, "accept", b""),
        )
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(err.message.contains("cannot attach"), "{err}");
    assert_eq!(ic.cycle_balance(a), all);
}

fn certificate_of(reply: &[u8]) -> Option<Certificate> {
    match reply[0] {
        0 => {
            assert_eq!(reply.len(), 1);
            None
        }
        1 => Some(serde_cbor::from_slice(&reply[1..]).expect("the certificate is CBOR")),
        other => panic!("present = {other}"),
    }
}

fn found<'a>(c: &'a Certificate, path: &[&[u8]]) -> &'a [u8] {
    match c.tree.lookup_path(path.iter()) {
        LookupResult::Found(v) => v,
        other => panic!("{path:?}: {other:?}"),
    }
}

#[test]
fn certified_data_and_the_data_certificate_of_a_query() {
    let (mut ic, a, b) = wallets();
    // Before anything is set the certified data is empty, and a query still has a certificate.
    let r = ic.query_call(a, user(), "certificate", vec![]).unwrap();
    let c = certificate_of(&r).expect("a query call has a certificate");
    assert_eq!(
        found(&c, &[b"canister", a.as_slice(), b"certified_data"]),
        b""
    );

    let present = ic
        .update_call(a, user(), "certify", b"abc".to_vec())
        .unwrap();
    assert_eq!(i64_of(&present), 0, "no certificate in an update");
    assert_eq!(ic.certified_data(a), b"abc");

    let r = ic.query_call(a, user(), "certificate", vec![]).unwrap();
    let bytes = &r[1..];
    assert_eq!(&bytes[..3], &[0xd9, 0xd9, 0xf7], "the self-describing tag");
    let c = certificate_of(&r).unwrap();
    assert_eq!(
        found(&c, &[b"canister", a.as_slice(), b"certified_data"]),
        b"abc"
    );
    assert_eq!(
        found(&c, &[b"time"]),
        certificate::leb128(ic.time_nanos()).as_slice()
    );
    assert_eq!(c.signature, vec![0; certificate::SIGNATURE_LEN], "unsigned");
    assert!(c.delegation.is_none());
    assert_eq!(
        bytes,
        certificate::data_certificate(a, b"abc", ic.time_nanos()).as_slice()
    );
    // Another canister's data is not in it.
    assert!(matches!(
        c.tree
            .lookup_path([b"canister".as_slice(), b.as_slice()].iter()),
        LookupResult::Absent
    ));

    // A trap discards the new certified data; more than 32 bytes traps.
    ic.update_call(a, user(), "certify_then_trap", b"xyz".to_vec())
        .unwrap_err();
    assert_eq!(ic.certified_data(a), b"abc");
    let err = ic
        .update_call(a, user(), "certify", vec![7; 33])
        .unwrap_err();
    assert!(err.message.contains("more than 32 bytes"), "{err}");
    ic.update_call(a, user(), "certify", vec![7; 32]).unwrap();
    assert_eq!(ic.certified_data(a), vec![7; 32]);

    // Not settable in a query; not readable in an update.
    let err = ic
        .query_call(a, user(), "certify_in_query", b"q".to_vec())
        .unwrap_err();
    assert!(
        err.message
            .contains("\"ic0.certified_data_set\" cannot be executed"),
        "{err}"
    );
    let err = ic
        .update_call(a, user(), "certificate_in_update", vec![])
        .unwrap_err();
    assert!(
        err.message
            .contains("\"ic0.data_certificate_size\" cannot be executed"),
        "{err}"
    );

    // A query run in replicated mode (called by another canister) has no certificate.
    let r = ic
        .update_call(b, user(), "send", send_arg(0, false, a, "certificate", b""))
        .unwrap();
    let (_, data) = sent_reply(&r);
    assert_eq!(data, vec![0]);

    // Install (and reinstall) starts from empty certified data.
    ic.install(
        a,
        &wat_canister(WALLET),
        vec![],
        InstallMode::Reinstall,
        admin(),
    )
    .unwrap();
    assert_eq!(ic.certified_data(a), b"");
}

#[test]
fn a_lost_reply_executes_the_call_and_ends_in_sys_unknown() {
    let (mut ic, a, b) = wallets();
    ic.inject_lost_reply(b, "count");
    // A guaranteed-response call is not matched: its reply arrives.
    let r = ic
        .update_call(a, user(), "send", send_arg(0, false, b, "count", b""))
        .unwrap();
    assert_eq!(i64_of(&sent_reply(&r).1), 1);
    assert_eq!(ic.pending_call_faults().len(), 1);

    // A bounded-wait call executes at the callee; the caller learns nothing before its deadline.
    let before = ic.cycle_balance(b);
    let msg = ic
        .submit_update(a, user(), "send", send_arg(1_000, true, b, "count", b""))
        .unwrap();
    ic.run_until_quiet(100).unwrap();
    assert_eq!(
        i64_of(&ic.query_call(b, user(), "counter", vec![]).unwrap()),
        2
    );
    assert!(ic.message_result(msg).is_none(), "still waiting");
    assert!(ic.pending_call_faults().is_empty());
    ic.advance_time(Duration::from_secs(6));
    let r = ic.await_message(msg).unwrap();
    let (code, refunded, message) = sent_reject(&r);
    assert_eq!((code, refunded), (6, 0), "{message}");
    assert_eq!(
        ic.cycle_balance(b),
        before,
        "the callee accepted nothing: the cycles are lost"
    );
}

#[test]
fn an_injected_reply_answers_without_the_callee() {
    let (mut ic, a, b) = wallets();
    ic.inject_call_reply(b, "count", b"stale".to_vec());
    let r = ic
        .update_call(a, user(), "send", send_arg(1_000, false, b, "count", b""))
        .unwrap();
    assert_eq!(sent_reply(&r), (1_000, b"stale".to_vec()));
    assert_eq!(
        i64_of(&ic.query_call(b, user(), "counter", vec![]).unwrap()),
        0
    );
    // The next call reaches the callee again.
    let r = ic
        .update_call(a, user(), "send", send_arg(0, false, b, "count", b""))
        .unwrap();
    assert_eq!(i64_of(&sent_reply(&r).1), 1);
}

#[test]
fn a_clock_ahead_moves_time_timer_and_certificate() {
    let (mut ic, a, b) = wallets();
    ic.set_clock_ahead(a, Duration::from_secs(300));
    let t_b = i64_of(&ic.update_call(b, user(), "time", vec![]).unwrap()) as u64;
    let t_a = i64_of(&ic.update_call(a, user(), "time", vec![]).unwrap()) as u64;
    assert!(t_a >= t_b + 300_000_000_000, "{t_a} vs {t_b}");
    assert_eq!(ic.clock_ahead(a), Duration::from_secs(300));

    // The timer is set and fires in the canister's own time.
    let at = t_a + 1_000;
    ic.update_call(a, user(), "set_timer", at.to_le_bytes().to_vec())
        .unwrap();
    ic.run_until_quiet(10_000).unwrap();
    assert_eq!(
        i64_of(&ic.query_call(a, user(), "fired_at", vec![]).unwrap()),
        0
    );
    ic.advance_time(Duration::from_micros(1));
    ic.run_until_quiet(10_000).unwrap();
    let fired = i64_of(&ic.query_call(a, user(), "fired_at", vec![]).unwrap()) as u64;
    assert!(fired >= at && fired < at + 1_000_000, "{fired} vs {at}");

    let r = ic.query_call(a, user(), "certificate", vec![]).unwrap();
    let c = certificate_of(&r).unwrap();
    assert_eq!(
        found(&c, &[b"time"]),
        certificate::leb128(ic.time_nanos() + 300_000_000_000).as_slice()
    );
    ic.set_clock_ahead(a, Duration::from_secs(400));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ic.set_clock_ahead(a, Duration::from_secs(1))
    }));
    assert!(result.is_err(), "a clock cannot go backwards");
}

#[test]
fn deposit_cycles_moves_attached_cycles_to_the_target() {
    #[derive(candid::CandidType)]
    struct DepositCyclesArgs {
        canister_id: Principal,
    }
    let (mut ic, a, b) = wallets();
    let mgmt = local_ic::management_canister();
    let (a0, b0) = (ic.cycle_balance(a), ic.cycle_balance(b));
    let payload = candid::encode_one(DepositCyclesArgs { canister_id: b }).unwrap();
    let r = ic
        .update_call(
            a,
            user(),
            "send",
            send_arg(5_000, false, mgmt, "deposit_cycles", &payload),
        )
        .unwrap();
    let (refunded, _) = sent_reply(&r);
    assert_eq!(refunded, 0);
    assert_eq!(ic.cycle_balance(b), b0 + 5_000);
    assert_eq!(
        ic.cycle_balance(a),
        a0 - 5_000 - cost("deposit_cycles", &payload)
    );

    // To a canister that does not exist: rejected (3), everything refunded.
    let nobody = local_ic::canister_id_from_counter(77);
    let payload = candid::encode_one(DepositCyclesArgs {
        canister_id: nobody,
    })
    .unwrap();
    let r = ic
        .update_call(
            a,
            user(),
            "send",
            send_arg(5_000, false, mgmt, "deposit_cycles", &payload),
        )
        .unwrap();
    let (code, refunded, message) = sent_reject(&r);
    assert_eq!((code, refunded), (3, 5_000), "{message}");
}
