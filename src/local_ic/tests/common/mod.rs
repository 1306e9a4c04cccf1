//! Hand-written WAT canisters for the host's own tests.
//!
//! Memory layout shared by all of them: `0..16` scratch for helpers, `16..256`
//! canister state, `256..1024` constant strings, `1024..` the copied call argument,
//! `4096..` reply/reject data in callbacks, `8192..` an append-only log.
#![allow(dead_code)]

use candid::Principal;
use local_ic::{InstallMode, LocalIc};

/// Imports and helper functions available to every test canister.
const PRELUDE: &str = r#"
  (import "ic0" "msg_arg_data_size" (func $arg_size (result i32)))
  (import "ic0" "msg_arg_data_copy" (func $arg_copy (param i32 i32 i32)))
  (import "ic0" "msg_caller_size" (func $caller_size (result i32)))
  (import "ic0" "msg_caller_copy" (func $caller_copy (param i32 i32 i32)))
  (import "ic0" "msg_reply_data_append" (func $reply_append (param i32 i32)))
  (import "ic0" "msg_reply" (func $reply))
  (import "ic0" "msg_reject" (func $reject (param i32 i32)))
  (import "ic0" "msg_reject_code" (func $reject_code (result i32)))
  (import "ic0" "msg_reject_msg_size" (func $reject_msg_size (result i32)))
  (import "ic0" "msg_reject_msg_copy" (func $reject_msg_copy (param i32 i32 i32)))
  (import "ic0" "msg_deadline" (func $deadline (result i64)))
  (import "ic0" "msg_method_name_size" (func $method_size (result i32)))
  (import "ic0" "accept_message" (func $accept))
  (import "ic0" "trap" (func $trap (param i32 i32)))
  (import "ic0" "debug_print" (func $print (param i32 i32)))
  (import "ic0" "stable64_size" (func $stable_size (result i64)))
  (import "ic0" "stable64_grow" (func $stable_grow (param i64) (result i64)))
  (import "ic0" "stable64_write" (func $stable_write (param i64 i64 i64)))
  (import "ic0" "stable64_read" (func $stable_read (param i64 i64 i64)))
  (import "ic0" "call_new" (func $call_new (param i32 i32 i32 i32 i32 i32 i32 i32)))
  (import "ic0" "call_data_append" (func $call_data_append (param i32 i32)))
  (import "ic0" "call_on_cleanup" (func $call_on_cleanup (param i32 i32)))
  (import "ic0" "call_with_best_effort_response" (func $call_bounded (param i32)))
  (import "ic0" "call_perform" (func $call_perform (result i32)))
  (import "ic0" "call_cycles_add128" (func $call_cycles_add (param i64 i64)))
  (import "ic0" "msg_cycles_accept128" (func $cycles_accept (param i64 i64 i32)))
  (import "ic0" "msg_cycles_refunded128" (func $cycles_refunded (param i32)))
  (import "ic0" "global_timer_set" (func $timer_set (param i64) (result i64)))
  (import "ic0" "time" (func $time (result i64)))
  (import "ic0" "performance_counter" (func $perf (param i32) (result i64)))
  (import "ic0" "canister_version" (func $version (result i64)))
  (import "ic0" "msg_cycles_available128" (func $cycles_available (param i32)))
  (import "ic0" "canister_cycle_balance128" (func $cycle_balance (param i32)))
  (import "ic0" "canister_liquid_cycle_balance128" (func $liquid_balance (param i32)))
  (import "ic0" "cost_call" (func $cost_call (param i64 i64 i32)))
  (import "ic0" "cycles_burn128" (func $cycles_burn (param i64 i64 i32)))
  (import "ic0" "certified_data_set" (func $certified_data_set (param i32 i32)))
  (import "ic0" "data_certificate_present" (func $certificate_present (result i32)))
  (import "ic0" "data_certificate_size" (func $certificate_size (result i32)))
  (import "ic0" "data_certificate_copy" (func $certificate_copy (param i32 i32 i32)))

  (memory (export "memory") 1)
  (data (i32.const 256) "boom")
  (data (i32.const 260) "nope")
  (data (i32.const 264) "callee trap")
  (data (i32.const 280) "callback trap")
  (data (i32.const 296) "RJF123")

  (func $reply_bytes (param $p i32) (param $n i32)
    (call $reply_append (local.get $p) (local.get $n))
    (call $reply))
  (func $reply_i64 (param $v i64)
    (i64.store (i32.const 0) (local.get $v))
    (call $reply_bytes (i32.const 0) (i32.const 8)))
  (func $arg_i64 (result i64)
    (call $arg_copy (i32.const 8) (i32.const 0) (i32.const 8))
    (i64.load (i32.const 8)))
  (func $load_arg (result i32)
    (local $n i32)
    (local.set $n (call $arg_size))
    (call $arg_copy (i32.const 1024) (i32.const 0) (local.get $n))
    (local.get $n))
  (func $stable_ensure
    (if (i64.eq (call $stable_size) (i64.const 0))
      (then (drop (call $stable_grow (i64.const 1))))))
  (func $bump (param $addr i32) (result i64)
    (i64.store (local.get $addr) (i64.add (i64.load (local.get $addr)) (i64.const 1)))
    (i64.load (local.get $addr)))
"#;

/// Wraps `body` into a module with the prelude.
pub fn wat_canister(body: &str) -> Vec<u8> {
    wat::parse_str(format!("(module {PRELUDE} {body})")).expect("test canister WAT is valid")
}

/// State in heap (16), a non-exported mutable global, and stable memory (offset 0).
pub const COUNTER: &str = r#"
  (global $g (mut i64) (i64.const 0))
  (func $inc
    (drop (call $bump (i32.const 16)))
    (global.set $g (i64.add (global.get $g) (i64.const 1)))
    (call $stable_ensure)
    (call $stable_write (i64.const 0) (i64.const 16) (i64.const 8)))
  (func (export "canister_update inc")
    (call $inc)
    (call $reply_i64 (i64.load (i32.const 16))))
  (func (export "canister_update inc_then_trap")
    (call $inc)
    (call $trap (i32.const 256) (i32.const 4)))
  (func (export "canister_update grow_then_trap")
    (drop (memory.grow (i32.const 2)))
    (call $inc)
    (unreachable))
  (func (export "canister_query get") (call $reply_i64 (i64.load (i32.const 16))))
  (func (export "canister_query get_global") (call $reply_i64 (global.get $g)))
  (func (export "canister_query get_stable")
    (if (i64.eq (call $stable_size) (i64.const 0))
      (then (call $reply_i64 (i64.const 0)) (return)))
    (call $stable_read (i64.const 8) (i64.const 0) (i64.const 8))
    (call $reply_bytes (i32.const 8) (i32.const 8)))
  (func (export "canister_query mem_pages") (call $reply_i64 (i64.extend_i32_u (memory.size))))
  (func (export "canister_query inc_in_query")
    (call $inc)
    (call $reply_i64 (i64.load (i32.const 16))))
  (func (export "canister_query timer_in_query")
    (drop (call $timer_set (i64.const 1)))
    (call $reply_i64 (i64.const 0)))
  (func (export "canister_update reject") (call $reject (i32.const 256) (i32.const 4)))
  (func (export "canister_update no_reply"))
  (func (export "canister_update reply_twice")
    (call $reply_i64 (i64.const 1))
    (call $reply))
  (func (export "canister_update echo")
    (call $reply_bytes (i32.const 1024) (call $load_arg)))
  (func (export "canister_update refused") (call $reply_i64 (i64.const 7)))
  (func (export "canister_update burn")
    (local $i i64) (local $n i64)
    (local.set $n (call $arg_i64))
    (block $done
      (loop $l
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $l)))
    (call $reply_i64 (call $perf (i32.const 0))))
  (func (export "canister_update time") (call $reply_i64 (call $time)))
  (func (export "canister_update get_version") (call $reply_i64 (call $version)))
  (func (export "canister_update caller")
    (call $caller_copy (i32.const 1024) (i32.const 0) (call $caller_size))
    (call $reply_bytes (i32.const 1024) (call $caller_size)))
  (func (export "canister_update print")
    (call $print (i32.const 256) (i32.const 4))
    (call $reply_i64 (i64.const 0)))
  ;; Refuses methods whose name has 7 bytes ("refused"), accepts all others.
  (func (export "canister_inspect_message")
    (if (i32.ne (call $method_size) (i32.const 7)) (then (call $accept))))
"#;

/// A canister that calls others and can be called.
///
/// `call` takes `flags | callee_len | callee | method_len | method | payload` and makes
/// one call; `call3` makes three calls in one execution with payloads "1", "2", "3".
/// Flags: 1 = bounded wait (5 s), 2 = reply callback traps, 4 = register a cleanup,
/// 8 = attach 1000 cycles. The reply callback records the refund at offset 40.
/// Replies: `R` + env (4 bytes) + reply data, `J` + code (4 bytes) + reject message,
/// `F` + call_perform error code (4 bytes).
pub const CALLER: &str = r#"
  (table 8 funcref)
  (elem (i32.const 1) func $on_reply $on_reject $on_cleanup $on_reply_trap)

  ;; Parsed call description (absolute addresses of the copied argument).
  (global $flags (mut i32) (i32.const 0))
  (global $callee_ptr (mut i32) (i32.const 0))
  (global $callee_len (mut i32) (i32.const 0))
  (global $method_ptr (mut i32) (i32.const 0))
  (global $method_len (mut i32) (i32.const 0))
  (global $payload_ptr (mut i32) (i32.const 0))
  (global $payload_len (mut i32) (i32.const 0))

  (func $parse
    (local $n i32) (local $p i32)
    (local.set $n (call $load_arg))
    (global.set $flags (i32.load8_u (i32.const 1024)))
    (global.set $callee_len (i32.load8_u (i32.const 1025)))
    (global.set $callee_ptr (i32.const 1026))
    (local.set $p (i32.add (i32.const 1026) (global.get $callee_len)))
    (global.set $method_len (i32.load8_u (local.get $p)))
    (global.set $method_ptr (i32.add (local.get $p) (i32.const 1)))
    (global.set $payload_ptr (i32.add (global.get $method_ptr) (global.get $method_len)))
    (global.set $payload_len
      (i32.sub (i32.add (i32.const 1024) (local.get $n)) (global.get $payload_ptr))))

  ;; Makes one call with the given payload; reply callback env = $env.
  ;; Returns call_perform's result.
  (func $do_call (param $payload i32) (param $len i32) (param $env i32) (result i32)
    (call $call_new
      (global.get $callee_ptr) (global.get $callee_len)
      (global.get $method_ptr) (global.get $method_len)
      (if (result i32) (i32.and (global.get $flags) (i32.const 2))
        (then (i32.const 4)) (else (i32.const 1)))
      (local.get $env)
      (i32.const 2) (i32.const 0))
    (if (i32.and (global.get $flags) (i32.const 4))
      (then (call $call_on_cleanup (i32.const 3) (i32.const 77))))
    (if (i32.and (global.get $flags) (i32.const 1))
      (then (call $call_bounded (i32.const 5))))
    (if (i32.and (global.get $flags) (i32.const 8))
      (then (call $call_cycles_add (i64.const 0) (i64.const 1000))))
    (call $call_data_append (local.get $payload) (local.get $len))
    (call $call_perform))

  (func $reply_code (param $tag i32) (param $code i32)
    (call $reply_append (local.get $tag) (i32.const 1))
    (i32.store (i32.const 0) (local.get $code))
    (call $reply_append (i32.const 0) (i32.const 4))
    (call $reply))

  (func (export "canister_update call")
    (local $err i32)
    (call $parse)
    (local.set $err
      (call $do_call (global.get $payload_ptr) (global.get $payload_len) (i32.const 9)))
    (if (local.get $err) (then (call $reply_code (i32.const 298) (local.get $err)))))

  (func (export "canister_update call3")
    (call $parse)
    (drop (call $do_call (i32.const 299) (i32.const 1) (i32.const 0)))
    (drop (call $do_call (i32.const 300) (i32.const 1) (i32.const 0)))
    (drop (call $do_call (i32.const 301) (i32.const 1) (i32.const 3))))

  (func $on_reply (param $env i32)
    (local $n i32)
    (drop (call $bump (i32.const 16)))
    (call $cycles_refunded (i32.const 40))
    (if (i32.eqz (local.get $env)) (then (return)))
    (call $reply_append (i32.const 296) (i32.const 1))
    (i32.store (i32.const 0) (local.get $env))
    (call $reply_append (i32.const 0) (i32.const 4))
    (local.set $n (call $arg_size))
    (call $arg_copy (i32.const 4096) (i32.const 0) (local.get $n))
    (call $reply_append (i32.const 4096) (local.get $n))
    (call $reply))

  (func $on_reject (param $env i32)
    (local $n i32)
    (call $reply_append (i32.const 297) (i32.const 1))
    (i32.store (i32.const 0) (call $reject_code))
    (call $reply_append (i32.const 0) (i32.const 4))
    (local.set $n (call $reject_msg_size))
    (call $reject_msg_copy (i32.const 4096) (i32.const 0) (local.get $n))
    (call $reply_append (i32.const 4096) (local.get $n))
    (call $reply))

  (func $on_reply_trap (param $env i32)
    (drop (call $bump (i32.const 16)))
    (call $trap (i32.const 280) (i32.const 13)))

  (func $on_cleanup (param $env i32)
    (i64.store (i32.const 24) (i64.extend_i32_u (local.get $env))))

  ;; Callee side.
  (func (export "canister_update echo")
    (call $reply_bytes (i32.const 1024) (call $load_arg)))
  (func (export "canister_update append")
    (local $n i32) (local $len i32)
    (local.set $n (call $arg_size))
    (local.set $len (i32.load (i32.const 32)))
    (call $arg_copy (i32.add (i32.const 8192) (local.get $len)) (i32.const 0) (local.get $n))
    (i32.store (i32.const 32) (i32.add (local.get $len) (local.get $n)))
    (call $reply))
  (func (export "canister_query log")
    (call $reply_bytes (i32.const 8192) (i32.load (i32.const 32))))
  (func (export "canister_update reject") (call $reject (i32.const 260) (i32.const 4)))
  (func (export "canister_update trap") (call $trap (i32.const 264) (i32.const 11)))
  (func (export "canister_update deadline") (call $reply_i64 (call $deadline)))
  (func (export "canister_update accept400")
    (call $cycles_accept (i64.const 0) (i64.const 400) (i32.const 0))
    (call $reply))
  (func (export "canister_query refunded") (call $reply_i64 (i64.load (i32.const 40))))
  (func (export "canister_query counter") (call $reply_i64 (i64.load (i32.const 16))))
  (func (export "canister_query cleanup_marker") (call $reply_i64 (i64.load (i32.const 24))))
"#;

/// Global timer: `set(ts)` replies the previous timer; the timer counts firings.
pub const TIMER: &str = r#"
  (func (export "canister_update set")
    (call $reply_i64 (call $timer_set (call $arg_i64))))
  (func (export "canister_global_timer")
    (drop (call $bump (i32.const 16)))
    (i64.store (i32.const 24) (call $time)))
  (func (export "canister_query fired") (call $reply_i64 (i64.load (i32.const 16))))
  (func (export "canister_query fired_at") (call $reply_i64 (i64.load (i32.const 24))))
"#;

/// Upgrade v1: `set(x)` keeps x on the heap; pre_upgrade saves it to stable memory.
pub const UPGRADE_V1: &str = r#"
  (func (export "canister_update set")
    (i64.store (i32.const 16) (call $arg_i64))
    (call $reply_i64 (i64.load (i32.const 16))))
  (func (export "canister_query get") (call $reply_i64 (i64.load (i32.const 16))))
  (func (export "canister_pre_upgrade")
    (call $stable_ensure)
    (call $stable_write (i64.const 8) (i64.const 16) (i64.const 8)))
"#;

/// Upgrade v2: post_upgrade restores the value and records its argument.
pub const UPGRADE_V2: &str = r#"
  (func (export "canister_query get") (call $reply_i64 (i64.load (i32.const 16))))
  (func (export "canister_query get_arg") (call $reply_i64 (i64.load (i32.const 24))))
  (func (export "canister_post_upgrade")
    (call $stable_read (i64.const 16) (i64.const 8) (i64.const 8))
    (i64.store (i32.const 24) (call $arg_i64)))
"#;

/// Upgrade v2 whose post_upgrade writes stable memory and then traps.
pub const UPGRADE_V2_TRAPS: &str = r#"
  (func (export "canister_post_upgrade")
    (i64.store (i32.const 16) (i64.const 12345))
    (call $stable_write (i64.const 8) (i64.const 16) (i64.const 8))
    (call $trap (i32.const 256) (i32.const 4)))
"#;

/// A controller used by all tests.
pub fn admin() -> Principal {
    Principal::from_slice(&[0xad; 29])
}

/// A non-controller user.
pub fn user() -> Principal {
    Principal::from_slice(&[0x42; 29])
}

/// Creates a canister and installs a WAT body.
pub fn install_wat(ic: &mut LocalIc, body: &str) -> Principal {
    let id = ic.create_canister(vec![admin()]);
    ic.install(
        id,
        &wat_canister(body),
        vec![],
        InstallMode::Install,
        admin(),
    )
    .expect("install test canister");
    id
}

pub fn i64_of(bytes: &[u8]) -> i64 {
    i64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
}

pub fn call_arg(flags: u8, callee: Principal, method: &str, payload: &[u8]) -> Vec<u8> {
    let mut arg = vec![flags, callee.as_slice().len() as u8];
    arg.extend_from_slice(callee.as_slice());
    arg.push(method.len() as u8);
    arg.extend_from_slice(method.as_bytes());
    arg.extend_from_slice(payload);
    arg
}

/// Decodes a `J` reply of the CALLER canister into (code, message).
pub fn rejected(reply: &[u8]) -> (u32, String) {
    assert_eq!(reply[0], b'J', "expected a reject reply, got {reply:?}");
    let code = u32::from_le_bytes(reply[1..5].try_into().unwrap());
    (code, String::from_utf8_lossy(&reply[5..]).into_owned())
}

/// Decodes an `R` reply of the CALLER canister into (env, data).
pub fn replied(reply: &[u8]) -> (u32, Vec<u8>) {
    assert_eq!(
        reply[0],
        b'R',
        "expected a reply, got {:?}",
        String::from_utf8_lossy(reply)
    );
    let env = u32::from_le_bytes(reply[1..5].try_into().unwrap());
    (env, reply[5..].to_vec())
}
