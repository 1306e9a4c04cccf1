//! A real ic-cdk 0.20 canister (`probe/`) on the local IC: updates, queries, stable
//! structures, bounded-wait calls, ic-cdk-timers, upgrades, inspect_message.
//!
//! The probe is built on first use with `cargo build --target wasm32-unknown-unknown
//! --release` into `$LOCAL_IC_PROBE_TARGET_DIR` (default: `<target dir>/local-ic-probe`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use candid::{decode_one, encode_args, encode_one, Principal};
use local_ic::wasm_build::WasmBuild;
use local_ic::{InstallMode, LocalIc, RejectCode};

fn probe_wasm() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let target_dir = std::env::var_os("LOCAL_IC_PROBE_TARGET_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("CARGO_TARGET_DIR")
                    .map(|d| PathBuf::from(d).join("local-ic-probe"))
            })
            .unwrap_or_else(|| crate_dir.join("../../target/local-ic-probe"));
        let build = WasmBuild {
            manifest_path: crate_dir.join("probe/Cargo.toml"),
            crate_name: "local-ic-probe".into(),
            target_dir,
        };
        build
            .build()
            .unwrap_or_else(|e| panic!("building the probe canister: {e}"))
    })
}

fn admin() -> Principal {
    Principal::from_slice(&[0xad; 29])
}

fn user() -> Principal {
    Principal::from_slice(&[0x42; 29])
}

fn install_probe(ic: &mut LocalIc) -> Principal {
    let id = ic.create_canister(vec![admin()]);
    ic.install(
        id,
        probe_wasm(),
        encode_args(()).unwrap(),
        InstallMode::Install,
        admin(),
    )
    .expect("install probe");
    id
}

fn update<R: candid::CandidType + for<'de> candid::Deserialize<'de>>(
    ic: &mut LocalIc,
    canister: Principal,
    method: &str,
    arg: Vec<u8>,
) -> R {
    let reply = ic
        .update_call(canister, user(), method, arg)
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    decode_one(&reply).unwrap()
}

fn query<R: candid::CandidType + for<'de> candid::Deserialize<'de>>(
    ic: &mut LocalIc,
    canister: Principal,
    method: &str,
    arg: Vec<u8>,
) -> R {
    let reply = ic
        .query_call(canister, user(), method, arg)
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    decode_one(&reply).unwrap()
}

#[test]
fn probe_updates_queries_stable_structures_and_rollback() {
    let mut ic = LocalIc::new();
    let p = install_probe(&mut ic);
    assert!(ic.logs().iter().any(|l| l.message == "probe init"));

    let old: Option<String> = update(&mut ic, p, "put", encode_args((1u64, "one")).unwrap());
    assert_eq!(old, None);
    let got: Option<String> = query(&mut ic, p, "get", encode_one(1u64).unwrap());
    assert_eq!(got.as_deref(), Some("one"));

    // A query's writes are discarded.
    let _: u64 = query(&mut ic, p, "query_writes", encode_one(2u64).unwrap());
    let got: Option<String> = query(&mut ic, p, "get", encode_one(2u64).unwrap());
    assert_eq!(got, None);
    let counter: u64 = query(&mut ic, p, "counter", encode_args(()).unwrap());
    assert_eq!(counter, 0);

    // A trap rolls back the stable-structure write and the heap.
    let err = ic
        .update_call(
            p,
            user(),
            "put_then_trap",
            encode_args((3u64, "three")).unwrap(),
        )
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterError);
    assert!(err.message.contains("probe: trap after write"), "{err}");
    let got: Option<String> = query(&mut ic, p, "get", encode_one(3u64).unwrap());
    assert_eq!(got, None);
    let counter: u64 = query(&mut ic, p, "counter", encode_args(()).unwrap());
    assert_eq!(counter, 0);

    // Many records in one update, journaled without copying stable memory.
    let len: u64 = update(
        &mut ic,
        p,
        "put_many",
        encode_args((10u64, 3_000u64)).unwrap(),
    );
    assert_eq!(len, 3_001);
    let got: Option<String> = query(&mut ic, p, "get", encode_one(3_009u64).unwrap());
    assert_eq!(got.as_deref(), Some("value-3009"));

    let (me, caller, time, is_ctl, version): (Principal, Principal, u64, bool, u64) = {
        let reply = ic
            .query_call(p, admin(), "info", encode_args(()).unwrap())
            .unwrap();
        candid::decode_args(&reply).unwrap()
    };
    assert_eq!((me, caller, time), (p, admin(), ic.time_nanos()));
    assert!(is_ctl);
    assert_eq!(version, ic.canister_version(p));
}

#[test]
fn probe_bounded_wait_calls_and_timeouts() {
    let mut ic = LocalIc::new();
    let a = install_probe(&mut ic);
    let b = install_probe(&mut ic);

    let r: Result<u64, String> = update(
        &mut ic,
        a,
        "call_bounded",
        encode_args((a, "echo", 5u64)).unwrap(),
    );
    assert_eq!(r, Ok(5), "bounded-wait self-call");
    let r: Result<u64, String> = update(
        &mut ic,
        a,
        "call_bounded",
        encode_args((b, "echo", 7u64)).unwrap(),
    );
    assert_eq!(r, Ok(7), "bounded-wait call to another probe");

    let sent = ic.time_nanos();
    let r: Result<u64, String> = update(
        &mut ic,
        a,
        "call_bounded",
        encode_args((b, "deadline", 0u64)).unwrap(),
    );
    assert_eq!(
        r,
        Ok(sent + 300 * 1_000_000_000),
        "ic-cdk's default bounded wait is 300 s"
    );
    let r: Result<u64, String> = update(
        &mut ic,
        a,
        "call_unbounded",
        encode_args((b, "deadline", 0u64)).unwrap(),
    );
    assert_eq!(r, Ok(0));

    let r: Result<u64, String> = update(
        &mut ic,
        a,
        "call_bounded",
        encode_args((b, "missing", 0u64)).unwrap(),
    );
    assert!(r.as_ref().unwrap_err().starts_with("5:"), "{r:?}");

    // The deadline passes while the request waits: SYS_UNKNOWN.
    let id = ic
        .submit_update(
            a,
            user(),
            "call_bounded",
            encode_args((b, "echo", 1u64)).unwrap(),
        )
        .unwrap();
    ic.tick();
    ic.advance_time(Duration::from_secs(301));
    let r: Result<u64, String> = decode_one(&ic.await_message(id).unwrap()).unwrap();
    assert!(r.as_ref().unwrap_err().starts_with("6:"), "{r:?}");

    // Injected system rejects reach the canister's error handling.
    ic.inject_call_fault(b, "echo", RejectCode::SysTransient, "try again");
    let r: Result<u64, String> = update(
        &mut ic,
        a,
        "call_bounded",
        encode_args((b, "echo", 1u64)).unwrap(),
    );
    assert_eq!(r, Err("2:try again".to_string()));

    let bytes: Vec<u8> = update(&mut ic, a, "rand", encode_args(()).unwrap());
    assert_eq!(bytes.len(), 32);
}

#[test]
fn probe_timer_fires_via_self_call() {
    let mut ic = LocalIc::new();
    let p = install_probe(&mut ic);
    let () = update(
        &mut ic,
        p,
        "schedule",
        encode_one(1_000_000_000u64).unwrap(),
    );
    ic.run_until_quiet(100).unwrap();
    let fired: u64 = query(&mut ic, p, "timer_fired", encode_args(()).unwrap());
    assert_eq!(fired, 0);

    ic.advance_time(Duration::from_secs(2));
    // global timer -> self-call to the timer executor -> callback.
    let rounds = ic.run_until_quiet(100).unwrap();
    assert!(rounds >= 3, "{rounds}");
    let fired: u64 = query(&mut ic, p, "timer_fired", encode_args(()).unwrap());
    assert_eq!(fired, 1);
    let got: Option<String> = query(&mut ic, p, "get", encode_one(u64::MAX).unwrap());
    assert_eq!(got.as_deref(), Some("timer"));
}

#[test]
fn probe_upgrade_inspect_and_instructions() {
    let mut ic = LocalIc::new();
    let p = install_probe(&mut ic);
    let _: Option<String> = update(&mut ic, p, "put", encode_args((1u64, "kept")).unwrap());
    let _: u64 = update(&mut ic, p, "bump", encode_args(()).unwrap());

    ic.install(
        p,
        probe_wasm(),
        encode_args(()).unwrap(),
        InstallMode::Upgrade,
        admin(),
    )
    .unwrap();
    let upgrades: u64 = query(&mut ic, p, "upgrades", encode_args(()).unwrap());
    assert_eq!(upgrades, 1);
    let got: Option<String> = query(&mut ic, p, "get", encode_one(1u64).unwrap());
    assert_eq!(got.as_deref(), Some("kept"));
    let counter: u64 = query(&mut ic, p, "counter", encode_args(()).unwrap());
    assert_eq!(counter, 0, "the heap does not survive an upgrade");
    assert!(ic.logs().iter().any(|l| l.message == "probe pre_upgrade"));

    let err = ic
        .update_call(p, user(), "forbidden", encode_args(()).unwrap())
        .unwrap_err();
    assert_eq!(err.code, RejectCode::CanisterReject);

    let (_, small): (u64, u64) = {
        let r = ic
            .update_call(p, user(), "burn", encode_one(1_000u64).unwrap())
            .unwrap();
        candid::decode_args(&r).unwrap()
    };
    let (_, big): (u64, u64) = {
        let r = ic
            .update_call(p, user(), "burn", encode_one(1_000_000u64).unwrap())
            .unwrap();
        candid::decode_args(&r).unwrap()
    };
    assert!(big > small + 1_000_000, "{small} {big}");
    assert!(ic.last_instructions() >= big);
}

/// Scale check: 100 000 records in stable structures, then cheap updates and a
/// cheap rollback. Ignored by default (slow in debug builds); run with `--ignored`.
#[test]
#[ignore]
fn probe_hundred_thousand_records() {
    let mut ic = LocalIc::new();
    let p = install_probe(&mut ic);
    let start = std::time::Instant::now();
    for batch in 0..10u64 {
        let len: u64 = update(
            &mut ic,
            p,
            "put_many",
            encode_args((batch * 10_000, 10_000u64)).unwrap(),
        );
        assert_eq!(len, (batch + 1) * 10_000);
        eprintln!(
            "batch {batch}: {} instructions, {:?} so far",
            ic.last_instructions(),
            start.elapsed()
        );
    }
    let t = std::time::Instant::now();
    let _: Option<String> = update(&mut ic, p, "put", encode_args((5u64, "x")).unwrap());
    eprintln!("single put with 100k records: {:?}", t.elapsed());
    let t = std::time::Instant::now();
    ic.update_call(
        p,
        user(),
        "put_then_trap",
        encode_args((6u64, "y")).unwrap(),
    )
    .unwrap_err();
    eprintln!("trap + rollback with 100k records: {:?}", t.elapsed());
    let len: u64 = query(&mut ic, p, "len", encode_args(()).unwrap());
    assert_eq!(len, 100_000);
}
