//! The install and upgrade argument (`HostArg`): each kind only where it belongs, checked as the
//! methods check the same values, and an upgrade that changes only what it names. A refusal
//! writes nothing (the canister traps on it, which rolls the install or upgrade back).

mod common;
use candid::Principal;
use common::*;
use ic_stable_structures::VectorMemory;
use tool_host_engine::lifecycle::{decode_host_arg, install, upgrade};
use tool_host_engine::registry;
use tool_host_engine::state::State;
use tool_host_engine::types::*;

/// A world whose state was never installed.
fn uninstalled() -> std::rc::Rc<World> {
    let w = World::new();
    *w.state.borrow_mut() = State::init(VectorMemory::default());
    w
}

fn admins(w: &World) -> Vec<Principal> {
    w.state.borrow().admins.keys().collect()
}

fn limits(w: &World) -> Limits {
    w.state.borrow().limits()
}

fn zero_timeout() -> Limits {
    Limits {
        call_timeout_seconds: 0,
        ..Limits::default()
    }
}

/// The message `set_limits` refuses these limits with.
fn set_limits_refusal(l: Limits) -> String {
    let w = World::new();
    let e = registry::set_limits(&*w, controller(), l).unwrap_err();
    format!("{}: {}", e.code, e.message)
}

#[test]
fn no_argument_reads_as_absent_and_anything_else_must_be_a_host_arg() {
    assert_eq!(decode_host_arg(&[]), Ok(None));
    assert_eq!(decode_host_arg(b"DIDL\x00\x00"), Ok(None));
    let init = HostArg::Init(InitArgs::default());
    assert_eq!(
        decode_host_arg(&candid::encode_one(&init).unwrap()),
        Ok(Some(init))
    );
    // The argument before this release, `opt InitArgs`, is refused, not read as absent.
    let old = candid::encode_one(Some(InitArgs::default())).unwrap();
    let e = decode_host_arg(&old).unwrap_err();
    assert!(e.starts_with("the argument is not a HostArg"), "{e}");
    assert!(decode_host_arg(b"not candid").is_err());
}

/// Review: three ways the argument used to be read leniently.
#[test]
fn an_argument_with_more_than_a_host_arg_or_a_mistyped_field_is_refused() {
    // Extra values after the HostArg.
    let two = candid::encode_args((HostArg::Init(InitArgs::default()), 5u8)).unwrap();
    let e = decode_host_arg(&two).unwrap_err();
    assert!(e.contains("more than one argument value"), "{e}");
    // Trailing bytes after the empty tuple.
    let e = decode_host_arg(b"DIDL\x00\x00junk").unwrap_err();
    assert!(e.starts_with("the argument is not a HostArg"), "{e}");

    // `limits` of another type: Candid would read it as `null` (default limits, no word).
    #[derive(candid::CandidType)]
    struct FewLimits {
        call_timeout_seconds: u32,
    }
    #[derive(candid::CandidType)]
    struct BadInit {
        admins: Vec<candid::Principal>,
        limits: Option<FewLimits>,
    }
    #[derive(candid::CandidType)]
    enum BadArg {
        Init(BadInit),
    }
    let bad = candid::encode_one(BadArg::Init(BadInit {
        admins: vec![],
        limits: Some(FewLimits {
            call_timeout_seconds: 0,
        }),
    }))
    .unwrap();
    let e = decode_host_arg(&bad).unwrap_err();
    assert!(e.contains("`limits` is not of the type"), "{e}");

    // An upgrade whose `force` is text, not bool.
    #[derive(candid::CandidType)]
    struct BadUpgrade {
        force: Option<String>,
    }
    #[derive(candid::CandidType)]
    enum BadUp {
        Upgrade(Option<BadUpgrade>),
    }
    let bad = candid::encode_one(BadUp::Upgrade(Some(BadUpgrade {
        force: Some("yes".into()),
    })))
    .unwrap();
    let e = decode_host_arg(&bad).unwrap_err();
    assert!(e.contains("`force` is not of the type"), "{e}");
    // The same shapes with their fields left out still read.
    let up = HostArg::Upgrade(Some(UpgradeArgs::default()));
    assert_eq!(
        decode_host_arg(&candid::encode_one(&up).unwrap()),
        Ok(Some(up))
    );
}

#[test]
fn install_takes_init_and_its_admins_and_limits() {
    let w = uninstalled();
    let l = Limits {
        max_forms: 17,
        ..Limits::default()
    };
    install(
        &*w,
        Some(HostArg::Init(InitArgs {
            admins: vec![p(9)],
            limits: Some(l.clone()),
        })),
    )
    .unwrap();
    assert_eq!(admins(&w), vec![p(9)]);
    assert_eq!(limits(&w), l);
}

#[test]
fn install_without_an_argument_has_no_admins_and_the_default_limits() {
    let w = uninstalled();
    install(&*w, None).unwrap();
    assert_eq!(admins(&w), vec![]);
    assert_eq!(limits(&w), Limits::default());
}

#[test]
fn install_with_upgrade_is_refused() {
    let w = uninstalled();
    let e = install(&*w, Some(HostArg::Upgrade(None))).unwrap_err();
    assert!(
        e.starts_with("install refused: the argument is `Upgrade`"),
        "{e}"
    );
}

#[test]
fn install_limits_pass_the_checks_set_limits_makes() {
    let w = uninstalled();
    let e = install(
        &*w,
        Some(HostArg::Init(InitArgs {
            admins: vec![p(9)],
            limits: Some(zero_timeout()),
        })),
    )
    .unwrap_err();
    assert_eq!(
        e,
        format!(
            "install refused: limits: {}",
            set_limits_refusal(zero_timeout())
        )
    );
    assert_eq!(
        e,
        "install refused: limits: INVALID_ARGUMENT: call_timeout_seconds is 1 to 300"
    );
    assert_eq!(admins(&w), vec![], "nothing written");
    assert_eq!(limits(&w), Limits::default());
}

#[test]
fn install_refuses_the_anonymous_principal_as_admin() {
    let w = uninstalled();
    let e = install(
        &*w,
        Some(HostArg::Init(InitArgs {
            admins: vec![p(9), Principal::anonymous()],
            limits: None,
        })),
    )
    .unwrap_err();
    assert!(
        e.starts_with("install refused: admin 2vxsx-fae: ANONYMOUS"),
        "{e}"
    );
    assert_eq!(admins(&w), vec![], "nothing written");
}

/// An installed world with one admin and one limit changed.
fn installed() -> std::rc::Rc<World> {
    let w = uninstalled();
    install(
        &*w,
        Some(HostArg::Init(InitArgs {
            admins: vec![p(9)],
            limits: Some(Limits {
                max_forms: 17,
                ..Limits::default()
            }),
        })),
    )
    .unwrap();
    w
}

#[test]
fn upgrade_with_init_is_refused_and_changes_nothing() {
    let w = installed();
    let (a, l) = (admins(&w), limits(&w));
    let e = upgrade(
        &*w,
        Some(HostArg::Init(InitArgs {
            admins: vec![],
            limits: Some(Limits::default()),
        })),
    )
    .unwrap_err();
    assert!(
        e.starts_with("upgrade refused: the argument is `Init`"),
        "{e}"
    );
    assert_eq!((admins(&w), limits(&w)), (a, l));
}

#[test]
fn upgrade_limits_pass_the_checks_set_limits_makes() {
    let w = installed();
    let (a, l) = (admins(&w), limits(&w));
    let e = upgrade(
        &*w,
        Some(HostArg::Upgrade(Some(UpgradeArgs {
            limits: Some(zero_timeout()),
            add_admins: Some(vec![p(10)]),
            force: None,
        }))),
    )
    .unwrap_err();
    assert_eq!(
        e,
        format!(
            "upgrade refused: limits: {}",
            set_limits_refusal(zero_timeout())
        )
    );
    assert_eq!((admins(&w), limits(&w)), (a, l), "nothing written");
}

#[test]
fn an_upgrade_without_an_argument_keeps_admins_and_limits() {
    let w = installed();
    let (a, l) = (admins(&w), limits(&w));
    upgrade(&*w, None).unwrap();
    assert_eq!((admins(&w), limits(&w)), (a.clone(), l.clone()));
    upgrade(&*w, Some(HostArg::Upgrade(None))).unwrap();
    upgrade(&*w, Some(HostArg::Upgrade(Some(UpgradeArgs::default())))).unwrap();
    assert_eq!((admins(&w), limits(&w)), (a, l));
}

#[test]
fn an_upgrade_changes_only_what_it_names() {
    let w = installed();
    let a = admins(&w);
    let l = Limits {
        call_timeout_seconds: 30,
        ..limits(&w)
    };
    upgrade(
        &*w,
        Some(HostArg::Upgrade(Some(UpgradeArgs {
            limits: Some(l.clone()),
            ..Default::default()
        }))),
    )
    .unwrap();
    assert_eq!((admins(&w), limits(&w)), (a, l.clone()));
    upgrade(
        &*w,
        Some(HostArg::Upgrade(Some(UpgradeArgs {
            add_admins: Some(vec![p(10)]),
            ..Default::default()
        }))),
    )
    .unwrap();
    assert_eq!((admins(&w), limits(&w)), (vec![p(9), p(10)], l));
}

/// An upgrade that passes its checks records this code's layout number (from a memory that
/// did not say one, the first upgrade onto this code); one refused for a later layout writes
/// nothing, so the code that wrote it keeps running on what it wrote.
#[test]
fn an_upgrade_records_its_layout_and_a_refused_one_changes_nothing() {
    use tool_host_engine::runtime::Runtime;
    let w = installed();
    w.with_state(|s| s.update_config(|c| c.layout = 0));
    upgrade(&*w, None).unwrap();
    let layout = |w: &World| w.with_state(|s| s.config.get().layout);
    assert_eq!(layout(&w), tool_host_engine::model::LAYOUT);
    let later = tool_host_engine::model::LAYOUT + 1;
    w.with_state(|s| s.update_config(|c| c.layout = later));
    let e = upgrade(&*w, None).unwrap_err();
    assert!(e.contains(&format!("stored layout {later}")), "{e}");
    assert_eq!(layout(&w), later);
    // (Back to this code's, for the checks the world makes when it ends.)
    w.with_state(|s| s.update_config(|c| c.layout = tool_host_engine::model::LAYOUT));
}
