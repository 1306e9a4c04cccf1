//! Single-canister semantics with hand-written WAT canisters: replies and rejects,
//! rollback on trap, queries, inspect_message, time, instructions, install checks.

mod common;

use std::time::Duration;

use common::*;
use local_ic::{InstallError, InstallMode, Limits, LocalIc, RejectCode};

#[test]
fn reply_reject_and_did_not_reply() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    assert_eq!(
        ic.update_call(c, user(), "echo", b"hi".to_vec()).unwrap(),
        b"hi"
    );

    let err = ic.update_call(c, user(), "reject", vec![]).unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterReject);
    assert_eq!(err.message, "boom");

    let err = ic.update_call(c, user(), "no_reply", vec![]).unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(err.message.contains("did not reply"), "{err}");

    let err = ic
        .update_call(c, user(), "reply_twice", vec![])
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(err.message.contains("already been responded"), "{err}");

    let err = ic
        .update_call(c, user(), "no_such_method", vec![])
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(
        err.message
            .contains("has no update method 'no_such_method'"),
        "{err}"
    );

    let missing = local_ic::canister_id_from_counter(99);
    let err = ic.update_call(missing, user(), "echo", vec![]).unwrap_err();
    assert_eq!(err.code, RejectCode::DestinationInvalid);
}

#[test]
fn trap_rolls_back_heap_globals_and_stable_memory() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    assert_eq!(
        i64_of(&ic.update_call(c, user(), "inc", vec![]).unwrap()),
        1
    );
    let version = ic.canister_version(c);

    let err = ic
        .update_call(c, user(), "inc_then_trap", vec![])
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(
        err.message
            .contains("Canister called `ic0.trap` with message: 'boom'"),
        "{err}"
    );
    assert_eq!(
        ic.canister_version(c),
        version,
        "a trap does not bump the version"
    );
    assert_eq!(i64_of(&ic.query_call(c, user(), "get", vec![]).unwrap()), 1);
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "get_global", vec![]).unwrap()),
        1
    );
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "get_stable", vec![]).unwrap()),
        1
    );

    // A trap after memory.grow: the heap shrinks back (the instance is re-created).
    let err = ic
        .update_call(c, user(), "grow_then_trap", vec![])
        .unwrap_err();
    assert!(
        err.message.contains("Canister trapped: unreachable"),
        "{err}"
    );
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "mem_pages", vec![]).unwrap()),
        1
    );
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "get_global", vec![]).unwrap()),
        1
    );
    assert_eq!(
        i64_of(&ic.update_call(c, user(), "inc", vec![]).unwrap()),
        2
    );
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "get_global", vec![]).unwrap()),
        2
    );
    assert_eq!(ic.read_stable_memory(c, 0, 8), 2i64.to_le_bytes());
    assert!(ic.logs().iter().any(|l| l.message.starts_with("[TRAP]")));
}

#[test]
fn queries_never_commit() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    for _ in 0..2 {
        assert_eq!(
            i64_of(&ic.query_call(c, user(), "inc_in_query", vec![]).unwrap()),
            1
        );
    }
    // A query method called as an update (replicated mode) does not commit either.
    assert_eq!(
        i64_of(&ic.update_call(c, user(), "inc_in_query", vec![]).unwrap()),
        1
    );
    assert_eq!(i64_of(&ic.query_call(c, user(), "get", vec![]).unwrap()), 0);
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "get_stable", vec![]).unwrap()),
        0
    );
    assert_eq!(ic.stable_memory_pages(c), 0);

    let err = ic.query_call(c, user(), "inc", vec![]).unwrap_err();
    assert!(err.message.contains("has no query method 'inc'"), "{err}");
}

#[test]
fn system_api_availability_is_enforced() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    let err = ic
        .query_call(c, user(), "timer_in_query", vec![])
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(
        err.message
            .contains("\"ic0.global_timer_set\" cannot be executed in non-replicated query mode"),
        "{err}"
    );
    assert_eq!(ic.global_timer(c), None);
}

#[test]
fn inspect_message_refuses_ingress_but_not_queries() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    let err = ic.update_call(c, user(), "refused", vec![]).unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterReject);
    assert!(
        err.message.contains("did not call ic0.accept_message"),
        "{err}"
    );
    let err = ic.submit_update(c, user(), "refused", vec![]).unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterReject);
    assert_eq!(ic.rounds(), 0, "a refused message never executes");
    assert_eq!(
        i64_of(&ic.update_call(c, user(), "inc", vec![]).unwrap()),
        1
    );
}

#[test]
fn time_is_constant_per_execution_and_increases_between_rounds() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    let before = ic.time_nanos();
    let t1 = i64_of(&ic.update_call(c, user(), "time", vec![]).unwrap()) as u64;
    assert_eq!(t1, before, "the first round runs at the current time");
    let t2 = i64_of(&ic.update_call(c, user(), "time", vec![]).unwrap()) as u64;
    assert!(t2 > t1);
    ic.advance_time(Duration::from_secs(60));
    let t3 = i64_of(&ic.update_call(c, user(), "time", vec![]).unwrap()) as u64;
    assert_eq!(t3, t2 + 1 + 60_000_000_000);
    let caller = ic.update_call(c, user(), "caller", vec![]).unwrap();
    assert_eq!(caller, user().as_slice());
}

#[test]
fn instructions_are_counted_and_limited() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    let small = i64_of(
        &ic.update_call(c, user(), "burn", 1_000i64.to_le_bytes().to_vec())
            .unwrap(),
    );
    let small_total = ic.last_instructions();
    let big = i64_of(
        &ic.update_call(c, user(), "burn", 100_000i64.to_le_bytes().to_vec())
            .unwrap(),
    );
    assert!(small > 1_000 && big > 100_000, "{small} {big}");
    assert!(big > 50 * small, "{small} {big}");
    assert!(ic.last_instructions() >= big as u64);
    assert!(small_total >= small as u64);

    ic.set_limits(Limits {
        update_instructions: 50_000,
        ..Limits::default()
    });
    let err = ic
        .update_call(c, user(), "burn", 1_000_000i64.to_le_bytes().to_vec())
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(
        err.message
            .contains("exceeded the limit of 50000 instructions"),
        "{err}"
    );
    assert!(
        ic.last_instructions() >= 50_000,
        "{}",
        ic.last_instructions()
    );
}

#[test]
fn debug_print_is_collected() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    ic.update_call(c, user(), "print", vec![]).unwrap();
    let logs = ic.take_logs();
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].canister, c);
    assert_eq!(logs[0].message, "boom");
    assert!(ic.logs().is_empty());
}

#[test]
fn install_checks() {
    let mut ic = LocalIc::new();
    let c = ic.create_canister(vec![admin()]);
    let wasm = wat_canister(COUNTER);
    assert_eq!(
        ic.install(c, &wasm, vec![], InstallMode::Install, user()),
        Err(InstallError::NotController {
            canister: c,
            sender: user()
        })
    );
    assert_eq!(
        ic.install(c, &wasm, vec![], InstallMode::Upgrade, admin()),
        Err(InstallError::CanisterEmpty(c))
    );
    let err = ic.update_call(c, user(), "inc", vec![]).unwrap_err();
    assert!(err.message.contains("no Wasm module"), "{err}");
    ic.install(c, &wasm, vec![], InstallMode::Install, admin())
        .unwrap();
    assert_eq!(
        ic.install(c, &wasm, vec![], InstallMode::Install, admin()),
        Err(InstallError::CanisterNotEmpty(c))
    );

    let unknown =
        wat::parse_str(r#"(module (import "ic0" "stable_size" (func (result i32))) (memory 1))"#)
            .unwrap();
    let err = ic
        .install(c, &unknown, vec![], InstallMode::Reinstall, admin())
        .unwrap_err();
    assert_eq!(
        err,
        InstallError::UnsupportedImport {
            module: "ic0".into(),
            name: "stable_size".into()
        }
    );
    assert!(err.to_string().contains("ic0.stable_size"), "{err}");
    // The failed reinstall left the canister untouched.
    assert_eq!(
        i64_of(&ic.update_call(c, user(), "inc", vec![]).unwrap()),
        1
    );
}

#[test]
fn init_trap_leaves_canister_empty_and_gzip_is_accepted() {
    use std::io::Write;
    let mut ic = LocalIc::new();
    let c = ic.create_canister(vec![admin()]);
    let trapping = wat_canister(
        r#"(func (export "canister_init") (call $trap (i32.const 256) (i32.const 4)))"#,
    );
    let err = ic
        .install(c, &trapping, vec![], InstallMode::Install, admin())
        .unwrap_err();
    assert_eq!(
        err,
        InstallError::Trapped {
            function: "canister_init".into(),
            message: "Canister called `ic0.trap` with message: 'boom'".into()
        }
    );
    assert!(!ic.has_code(c));

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&wat_canister(COUNTER)).unwrap();
    ic.install(
        c,
        &gz.finish().unwrap(),
        vec![],
        InstallMode::Install,
        admin(),
    )
    .unwrap();
    assert_eq!(
        i64_of(&ic.update_call(c, user(), "inc", vec![]).unwrap()),
        1
    );
}

#[test]
fn reinstall_wipes_state() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    ic.update_call(c, user(), "inc", vec![]).unwrap();
    ic.install(
        c,
        &wat_canister(COUNTER),
        vec![],
        InstallMode::Reinstall,
        admin(),
    )
    .unwrap();
    assert_eq!(i64_of(&ic.query_call(c, user(), "get", vec![]).unwrap()), 0);
    assert_eq!(ic.stable_memory_pages(c), 0);
}

#[test]
fn canister_version_counts_installs_and_updates() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, COUNTER);
    assert_eq!(ic.canister_version(c), 1);
    let seen = i64_of(&ic.update_call(c, user(), "get_version", vec![]).unwrap());
    assert_eq!(seen, 1);
    assert_eq!(ic.canister_version(c), 2);
    ic.query_call(c, user(), "get", vec![]).unwrap();
    assert_eq!(ic.canister_version(c), 2);
}
