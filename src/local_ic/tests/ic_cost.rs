//! The IC cost model (`CostModel::Ic`): small canisters whose count is worked out by hand
//! from the replica's rules (docs/local-ic.md, "Counting instructions as the IC does").
//!
//! Every count is the sum of: per basic block, 1 for a function body plus each operator's
//! cost (const/local/arith 1, drop 1, call 5, br_if 2, memory.fill 100, structure 0); the
//! System API overheads (500, call_new 1 500, call_perform 5 000, stable64_* 20,
//! stable64_grow 100, performance_counter 200); 50 per byte of reply and call argument;
//! 1 per byte of stable memory, of a memory.fill and of a `*_copy`; 2 + 50 per byte logged;
//! 1 000 per newly dirtied 4 KiB page.

use candid::Principal;
use local_ic::{CostModel, InstallMode, Limits, LocalIc};

const IMPORTS: &str = r#"
  (import "ic0" "msg_reply" (func $reply))
  (import "ic0" "msg_reply_data_append" (func $append (param i32 i32)))
  (import "ic0" "stable64_grow" (func $grow (param i64) (result i64)))
  (import "ic0" "stable64_write" (func $write (param i64 i64 i64)))
  (import "ic0" "performance_counter" (func $perf (param i32) (result i64)))
  (import "ic0" "call_new" (func $call_new (param i32 i32 i32 i32 i32 i32 i32 i32)))
  (import "ic0" "call_data_append" (func $call_data_append (param i32 i32)))
  (import "ic0" "call_perform" (func $call_perform (result i32)))
  (import "ic0" "debug_print" (func $print (param i32 i32)))
  (import "ic0" "msg_arg_data_size" (func $arg_size (result i32)))
  (import "ic0" "msg_arg_data_copy" (func $arg_copy (param i32 i32 i32)))
  (memory 1)
"#;

fn admin() -> Principal {
    Principal::from_slice(&[7; 29])
}

fn install(ic: &mut LocalIc, body: &str) -> Principal {
    let wasm = wat::parse_str(format!("(module {IMPORTS} {body})")).expect("valid wat");
    let canister = ic.create_canister(vec![admin()]);
    ic.install(canister, &wasm, vec![], InstallMode::Install, admin())
        .expect("installs");
    canister
}

fn ic_host() -> LocalIc {
    LocalIc::with_cost_model(CostModel::Ic)
}

/// Runs `method` (no argument) and returns the reply and the IC count of its call context.
fn run(ic: &mut LocalIc, canister: Principal, method: &str) -> (Vec<u8>, u64) {
    let reply = ic
        .update_call(canister, admin(), method, vec![])
        .expect("replies");
    (reply, ic.last_instructions())
}

const LOOP: &str = r#"
  (func (export "canister_update count_down")
    (local $i i32)
    (local.set $i (i32.const 10))
    (loop $again
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $again (local.get $i)))
    (call $reply))
"#;

#[test]
fn a_loop_is_charged_its_body_per_iteration_and_each_block_once() {
    let mut ic = ic_host();
    let canister = install(&mut ic, LOOP);
    let (_, count) = run(&mut ic, canister, "count_down");
    // Entry block: 1 (function) + i32.const 1 + local.set 1 + loop 0 = 3.
    // Loop body: local.get, i32.const, i32.sub, local.set, local.get (1 each) + br_if 2 = 7,
    // ten times. After the loop: call 5 + end 0 = 5. msg_reply: 500.
    assert_eq!(count, 3 + 10 * 7 + 5 + 500);
}

#[test]
fn memory_fill_costs_100_plus_one_per_byte() {
    let mut ic = ic_host();
    let fill = |n: u32| {
        format!(
            r#"(func (export "canister_update fill")
                 (memory.fill (i32.const 0) (i32.const 7) (i32.const {n}))
                 (call $reply))"#
        )
    };
    for n in [0u64, 1_000, 40_000] {
        let canister = install(&mut ic, &fill(n as u32));
        let (_, count) = run(&mut ic, canister, "fill");
        // 1 + three i32.const + memory.fill 100 + call 5 = 109, n bytes, msg_reply 500.
        assert_eq!(count, 109 + n + 500, "memory.fill of {n} bytes");
    }
}

#[test]
fn stable_writes_pay_per_byte_and_per_page_first_dirtied_in_the_message() {
    let mut ic = ic_host();
    // 5 000 bytes at offset 4 000 touch pages 0, 1 and 2 (4 KiB each); the second write of
    // the same range in the same message dirties nothing new.
    let canister = install(
        &mut ic,
        r#"(func (export "canister_update write")
             (drop (call $grow (i64.const 1)))
             (call $write (i64.const 4000) (i64.const 0) (i64.const 5000))
             (call $reply))
           (func (export "canister_update write_twice")
             (drop (call $grow (i64.const 1)))
             (call $write (i64.const 4000) (i64.const 0) (i64.const 5000))
             (call $write (i64.const 4000) (i64.const 0) (i64.const 5000))
             (call $reply))"#,
    );
    // Block: 1 + i64.const 1 + call 5 + drop 1 + three i64.const 3 + call 5 + call 5 = 21.
    // stable64_grow 100; stable64_write 20 + 5 000 bytes + 3 pages × 1 000; msg_reply 500.
    let one_write = 21 + 100 + (20 + 5_000 + 3 * 1_000) + 500;
    assert_eq!(run(&mut ic, canister, "write").1, one_write);
    // A new message dirties the pages again.
    assert_eq!(run(&mut ic, canister, "write").1, one_write);
    // The second write adds three i64.const + call (8) and 20 + 5 000, no pages.
    assert_eq!(
        run(&mut ic, canister, "write_twice").1,
        one_write + 8 + 20 + 5_000
    );
}

#[test]
fn reply_bytes_cost_fifty_each() {
    let mut ic = ic_host();
    for n in [0u64, 100, 10_000] {
        let canister = install(
            &mut ic,
            &format!(
                r#"(func (export "canister_update echo")
                     (call $append (i32.const 0) (i32.const {n}))
                     (call $reply))"#
            ),
        );
        let (reply, count) = run(&mut ic, canister, "echo");
        assert_eq!(reply.len() as u64, n);
        // 1 + two i32.const + two calls (10) = 13; msg_reply_data_append 500 + 50 n; msg_reply 500.
        assert_eq!(count, 13 + 500 + 50 * n + 500, "a reply of {n} bytes");
    }
}

#[test]
fn a_call_costs_call_new_call_perform_and_fifty_per_argument_byte() {
    let mut ic = ic_host();
    // The callee is the first canister: id = 8 zero bytes, then 0x01 0x01.
    let callee = install(
        &mut ic,
        r#"(func (export "canister_update ping") (call $reply))"#,
    );
    assert_eq!(callee.as_slice(), &[0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    let caller = install(
        &mut ic,
        r#"(data (i32.const 0) "\00\00\00\00\00\00\00\00\01\01")
           (data (i32.const 100) "ping")
           (table 1 funcref)
           (elem (i32.const 0) $on_reply)
           (func $on_reply (param i32) (call $reply))
           (func (export "canister_update go")
             (call $call_new (i32.const 0) (i32.const 10) (i32.const 100) (i32.const 4)
                             (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))
             (call $call_data_append (i32.const 200) (i32.const 300))
             (drop (call $call_perform)))"#,
    );
    let (_, count) = run(&mut ic, caller, "go");
    // The update: 1 + eight i32.const + call 5 + two i32.const + call 5 + call 5 + drop 1 = 27;
    // call_new 1 500 + 10 + 4 bytes of callee and method; call_data_append 500 + 50 × 300;
    // call_perform 5 000.
    let update = 27 + (1_500 + 14) + (500 + 50 * 300) + 5_000;
    // The reply callback: 1 + call 5, msg_reply 500.
    let callback = 6 + 500;
    assert_eq!(count, update + callback);
    assert_eq!(ic.instructions_total(caller), update + callback);
    // The callee's share: 1 + call 5 + msg_reply 500.
    assert_eq!(ic.instructions_total(callee), 506);
}

#[test]
fn performance_counter_answers_the_ic_count_including_its_own_overhead() {
    let mut ic = ic_host();
    let canister = install(
        &mut ic,
        r#"(func (export "canister_update perf")
             (i64.store (i32.const 0) (call $perf (i32.const 0)))
             (call $append (i32.const 0) (i32.const 8))
             (call $reply))"#,
    );
    let (reply, count) = run(&mut ic, canister, "perf");
    // One block, charged when it starts: 1 + two i32.const + call 5 + i64.store 1 + two
    // i32.const + two calls 10 = 21; then performance_counter's 200 before it reads.
    let seen = i64::from_le_bytes(reply.try_into().expect("8 bytes"));
    assert_eq!(seen, 21 + 200);
    assert_eq!(count, 21 + 200 + (500 + 50 * 8) + 500);
}

#[test]
fn the_instruction_limit_applies_to_the_ic_count() {
    let mut ic = ic_host();
    ic.set_limits(Limits {
        update_instructions: 10_000,
        ..Limits::default()
    });
    let canister = install(
        &mut ic,
        r#"(func (export "canister_update big_reply")
             (call $append (i32.const 0) (i32.const 1000))
             (call $reply))
           (func (export "canister_update forever") (loop $l (br $l)))"#,
    );
    // 13 + 500 + 50 000 + 500 is over 10 000: the append's charge stops the execution.
    for method in ["big_reply", "forever"] {
        let err = ic
            .update_call(canister, admin(), method, vec![])
            .expect_err("over the limit");
        assert!(
            err.message
                .contains("exceeded the limit of 10000 instructions"),
            "{method}: {}",
            err.message
        );
        assert_eq!(
            ic.last_instructions(),
            10_000,
            "{method} is charged the limit"
        );
    }
}

#[test]
fn fuel_is_recorded_beside_the_ic_count_and_is_the_count_without_the_model() {
    let mut ic = ic_host();
    let canister = install(&mut ic, LOOP);
    run(&mut ic, canister, "count_down");
    assert_eq!(ic.last_instructions(), 578);
    assert!(ic.last_fuel() > 0);
    assert_ne!(ic.last_fuel(), ic.last_instructions());
    assert_eq!(ic.fuel_total(canister), ic.last_fuel());

    let mut plain = LocalIc::with_cost_model(CostModel::WasmiFuel);
    let canister = install(&mut plain, LOOP);
    run(&mut plain, canister, "count_down");
    assert_eq!(plain.cost_model(), CostModel::WasmiFuel);
    assert_eq!(plain.last_instructions(), plain.last_fuel());
    assert_ne!(plain.last_instructions(), 578);
}

#[test]
fn each_arm_of_an_if_is_its_own_block_and_only_the_taken_one_is_charged() {
    let mut ic = ic_host();
    let canister = install(
        &mut ic,
        r#"(func $pick (param $x i32) (result i32)
             (if (result i32) (local.get $x)
               (then (i32.const 10))
               (else (i32.const 20))))
           (func (export "canister_update branch")
             (drop (call $pick (i32.const 1)))
             (drop (call $pick (i32.const 0)))
             (call $reply))"#,
    );
    let (_, count) = run(&mut ic, canister, "branch");
    // $pick: 1 + local.get 1 + if 2 = 4 before the arms; either arm: i32.const 1 (else/end 0).
    let pick = 4 + 1;
    // The update: 1 + two (i32.const 1 + call 5 + drop 1) + call 5 = 20; msg_reply 500.
    assert_eq!(count, 20 + 2 * pick + 500);
}

#[test]
fn a_received_argument_costs_one_per_byte_copied_and_a_print_fifty_two_per_byte_logged() {
    let mut ic = ic_host();
    let canister = install(
        &mut ic,
        r#"(func (export "canister_update take")
             (call $arg_copy (i32.const 0) (i32.const 0) (call $arg_size))
             (call $reply))
           (func (export "canister_update print")
             (call $print (i32.const 0) (i32.const 40))
             (call $reply))"#,
    );
    ic.update_call(canister, admin(), "take", vec![9; 3_000])
        .expect("replies");
    // 1 + two i32.const + three calls 15 = 18; msg_arg_data_size 500; msg_arg_data_copy
    // 500 + 3 000 bytes; msg_reply 500.
    assert_eq!(ic.last_instructions(), 18 + 500 + (500 + 3_000) + 500);
    // 1 + two i32.const + two calls = 13; debug_print 100 + (2 + 50) × 40 bytes logged;
    // msg_reply 500.
    assert_eq!(run(&mut ic, canister, "print").1, 13 + 100 + 52 * 40 + 500);
}
