//! The global timer and upgrades with WAT canisters.

mod common;

use std::time::Duration;

use common::*;
use local_ic::{InstallError, InstallMode, LocalIc};

#[test]
fn global_timer_fires_once_when_time_passes_it() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, TIMER);
    let at = ic.time_nanos() + 1_000_000_000;
    let previous = ic
        .update_call(c, user(), "set", (at as i64).to_le_bytes().to_vec())
        .unwrap();
    assert_eq!(i64_of(&previous), 0);
    assert_eq!(ic.global_timer(c), Some(at));
    ic.tick();
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "fired", vec![]).unwrap()),
        0
    );
    assert!(ic.is_quiet(), "a timer in the future is not work");

    ic.advance_time(Duration::from_secs(1));
    assert!(!ic.is_quiet());
    ic.tick();
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "fired", vec![]).unwrap()),
        1
    );
    let fired_at = i64_of(&ic.query_call(c, user(), "fired_at", vec![]).unwrap()) as u64;
    assert!(fired_at >= at);
    assert_eq!(ic.global_timer(c), None, "the timer is one-shot");
    ic.advance_time(Duration::from_secs(10));
    ic.run_until_quiet(10).unwrap();
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "fired", vec![]).unwrap()),
        1
    );

    // Setting it again returns the previous (deactivated) value.
    let previous = ic
        .update_call(c, user(), "set", 5i64.to_le_bytes().to_vec())
        .unwrap();
    assert_eq!(i64_of(&previous), 0);
    ic.tick();
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "fired", vec![]).unwrap()),
        2
    );
}

#[test]
fn upgrade_keeps_stable_memory_and_runs_hooks() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, UPGRADE_V1);
    ic.update_call(c, user(), "set", 42i64.to_le_bytes().to_vec())
        .unwrap();
    let version = ic.canister_version(c);
    ic.install(
        c,
        &wat_canister(UPGRADE_V2),
        7i64.to_le_bytes().to_vec(),
        InstallMode::Upgrade,
        admin(),
    )
    .unwrap();
    assert_eq!(ic.canister_version(c), version + 1);
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "get", vec![]).unwrap()),
        42
    );
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "get_arg", vec![]).unwrap()),
        7
    );
}

#[test]
fn failed_upgrade_rolls_everything_back() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, UPGRADE_V1);
    ic.update_call(c, user(), "set", 42i64.to_le_bytes().to_vec())
        .unwrap();
    ic.install(
        c,
        &wat_canister(UPGRADE_V2_TRAPS),
        vec![],
        InstallMode::Upgrade,
        admin(),
    )
    .unwrap_err();
    let err = ic
        .install(
            c,
            &wat_canister(UPGRADE_V2_TRAPS),
            vec![],
            InstallMode::Upgrade,
            admin(),
        )
        .unwrap_err();
    assert!(
        matches!(&err, InstallError::Trapped { function, .. } if function == "canister_post_upgrade"),
        "{err}"
    );
    // Old code, old heap, and stable memory as before the attempt (pre_upgrade's
    // write of 42 and post_upgrade's write of 12345 are both undone).
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "get", vec![]).unwrap()),
        42
    );
    assert_eq!(ic.stable_memory_pages(c), 0);
    ic.update_call(c, user(), "set", 43i64.to_le_bytes().to_vec())
        .unwrap();

    // A trapping pre_upgrade also aborts the upgrade.
    let v1_bad = format!(
        "{}{}",
        UPGRADE_V1.replace("canister_pre_upgrade", "unused_pre_upgrade"),
        r#"(func (export "canister_pre_upgrade") (call $trap (i32.const 256) (i32.const 4)))"#
    );
    ic.install(
        c,
        &wat_canister(&v1_bad),
        vec![],
        InstallMode::Upgrade,
        admin(),
    )
    .unwrap();
    let err = ic
        .install(
            c,
            &wat_canister(UPGRADE_V2),
            vec![],
            InstallMode::Upgrade,
            admin(),
        )
        .unwrap_err();
    assert!(
        matches!(&err, InstallError::Trapped { function, .. } if function == "canister_pre_upgrade"),
        "{err}"
    );
    assert!(ic
        .update_call(c, user(), "set", 44i64.to_le_bytes().to_vec())
        .is_ok());
}

#[test]
fn upgrade_deactivates_the_global_timer() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, TIMER);
    let at = ic.time_nanos() + 1_000;
    ic.update_call(c, user(), "set", (at as i64).to_le_bytes().to_vec())
        .unwrap();
    ic.install(
        c,
        &wat_canister(TIMER),
        vec![],
        InstallMode::Upgrade,
        admin(),
    )
    .unwrap();
    assert_eq!(ic.global_timer(c), None);
    ic.advance_time(Duration::from_secs(1));
    ic.run_until_quiet(10).unwrap();
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "fired", vec![]).unwrap()),
        0
    );
}

/// A saved stable-memory image loaded into a new canister is what the upgraded code reads:
/// whole pages, zero-filled past the image, and kept by the upgrade.
#[test]
fn a_stable_image_is_loaded_and_upgraded_into() {
    let mut ic = LocalIc::new();
    let c = install_wat(&mut ic, "");
    let mut image = vec![0u8; 70_000];
    image[8..16].copy_from_slice(&777i64.to_le_bytes());
    image[69_999] = 9;
    ic.set_stable_memory(c, &image);
    assert_eq!(ic.stable_memory_pages(c), 2);
    let mut back = ic.read_stable_memory(c, 0, 131_072);
    assert!(back[70_000..].iter().all(|b| *b == 0));
    back.truncate(70_000);
    assert_eq!(back, image);
    ic.install(
        c,
        &wat_canister(UPGRADE_V2),
        5i64.to_le_bytes().to_vec(),
        InstallMode::Upgrade,
        admin(),
    )
    .unwrap();
    assert_eq!(
        i64_of(&ic.query_call(c, user(), "get", vec![]).unwrap()),
        777
    );
    assert_eq!(ic.read_stable_memory(c, 69_999, 1), vec![9]);
}
