//! The stable layout on the real wasm: a fresh install's stable memory is within its budget,
//! and the first release's stable memory (`tests/fixtures/released/v0.1.0`, saved after the
//! walkthrough) loaded into a new canister is upgraded into by this wasm with everything found
//! again.

use crate::Scenario;
use candid::Principal;
use flate2::read::GzDecoder;
use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;
use tool_host_tests::backend::InstallMode;
use tool_host_tests::check::{ApiOk, Check, Fail};
use tool_host_tests::clients::{host_arg, HostArg, ToolHost};
use tool_host_tests::wasm::{self, Canister};
use tool_host_tests::world::World;
use tool_host_tests::{ensure, ensure_eq};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "stable::a_fresh_install_takes_at_most_12_mib",
            a_fresh_install_takes_at_most_12_mib,
        ),
        Scenario::new(
            "stable::the_first_release_image_is_upgraded_into",
            the_first_release_image_is_upgraded_into,
        ),
        Scenario::new(
            "stable::an_unknown_record_version_refuses_the_upgrade",
            an_unknown_record_version_refuses_the_upgrade,
        ),
    ]
}

/// The budget of a fresh install (docs/stable-layout.md): one header page and one 512 KiB
/// bucket per structure, 10.56 MiB.
const FRESH_BUDGET: u64 = 12 * 1024 * 1024;

fn a_fresh_install_takes_at_most_12_mib(w: &mut World) -> Check {
    // Deployed: the packs and the ledger registered, a deposit minted, agents authorized.
    let stats = w.stats()?;
    ensure!(
        stats.stable_bytes <= FRESH_BUDGET,
        "{} bytes of stable memory",
        stats.stable_bytes
    );
    ensure_eq!(
        stats.stable_bytes,
        (1 + 23 * 8) * 65_536,
        "a header page, 23 buckets of 8 pages"
    );
    Ok(())
}

/// The upgrade argument of this scenario, in one place: an upgrade that changes nothing.
fn upgrade_arg() -> Vec<u8> {
    host_arg(HostArg::Upgrade(None))
}

fn released(file: &str) -> Check<Vec<u8>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/released/v0.1.0")
        .join(file);
    std::fs::read(&path).map_err(|e| Fail::Failed(format!("{}: {e}", path.display())))
}

fn principal(v: &Value) -> Check<Principal> {
    v.as_str()
        .and_then(|t| Principal::from_text(t).ok())
        .ok_or_else(|| Fail::Failed(format!("not a principal: {v}")))
}

fn principals(v: &Value) -> Check<Vec<Principal>> {
    v.as_array()
        .ok_or_else(|| Fail::Failed(format!("not a list: {v}")))?
        .iter()
        .map(principal)
        .collect()
}

fn image() -> Check<Vec<u8>> {
    let mut image = vec![];
    GzDecoder::new(&released("stable.bin.gz")?[..])
        .read_to_end(&mut image)
        .map_err(|e| Fail::Failed(format!("the image does not gunzip: {e}")))?;
    Ok(image)
}

/// A new canister holding `image`: any code first (an empty module), then the image; the
/// caller upgrades into it.
fn canister_with(w: &mut World, image: &[u8]) -> Check<Principal> {
    let controller = w.p.controller;
    let c = w.b.create_canister(&[controller])?;
    let empty = wat::parse_str("(module)").expect("valid");
    w.b.install(c, &empty, vec![], InstallMode::Install, controller)?;
    w.b.set_stable_memory(c, image)?;
    Ok(c)
}

fn the_first_release_image_is_upgraded_into(w: &mut World) -> Check {
    let facts: Value = serde_json::from_slice(&released("facts.json")?)?;
    let (controller, owner) = (w.p.controller, w.p.owner);
    let c = canister_with(w, &image()?)?;
    let host_wasm = wasm::wasm(Canister::ToolHost).map_err(Fail::Failed)?;
    w.b.install(
        c,
        host_wasm,
        upgrade_arg(),
        InstallMode::Upgrade,
        controller,
    )?;
    let h = ToolHost(c);
    let b = w.b.as_mut();

    let forms: Vec<String> = h
        .list_forms(b, owner)?
        .ok_or_fail("list_forms")?
        .into_iter()
        .map(|f| f.id)
        .collect();
    ensure_eq!(serde_json::to_value(&forms)?, facts["forms"]);

    let targets = h.list_canisters(b, owner)?.ok_or_fail("list_canisters")?;
    ensure_eq!(targets.len(), 1);
    ensure_eq!(targets[0].id, principal(&facts["ledger"])?);
    ensure_eq!(targets[0].label.as_deref(), facts["ledger_label"].as_str());
    ensure_eq!(serde_json::to_value(&targets[0].forms)?, facts["forms"]);

    let f = &facts["intent"];
    let id = f["id"]
        .as_u64()
        .ok_or_else(|| Fail::Failed("intent id".into()))?;
    let intent = h.get_intent(b, owner, id)?.ok_or_fail("get_intent")?;
    ensure_eq!(Some(intent.status.as_str()), f["status"].as_str());
    ensure_eq!(intent.outcome.as_deref(), f["outcome"].as_str());
    ensure_eq!(Some(intent.attempts.len() as u64), f["attempts"].as_u64());
    ensure_eq!(intent.owner, owner);

    ensure_eq!(
        h.list_admins(b, controller)?.ok_or_fail("list_admins")?,
        principals(&facts["admins"])?
    );
    ensure_eq!(
        h.list_agents(b, owner)?.ok_or_fail("list_agents")?,
        principals(&facts["agents"])?
    );
    let limits = h.get_limits(b, owner)?.ok_or_fail("get_limits")?;
    ensure_eq!(
        Some(limits.preview_ttl_seconds),
        facts["limits"]["preview_ttl_seconds"].as_u64()
    );
    ensure_eq!(
        Some(limits.max_forms as u64),
        facts["limits"]["max_forms"].as_u64()
    );
    // The deposit account is the new canister's, under the owner's same subaccount.
    let deposit = h.deposit_account(b, owner)?.ok_or_fail("deposit_account")?;
    ensure_eq!(deposit.account.owner, c);
    ensure_eq!(
        deposit
            .account
            .subaccount
            .as_ref()
            .map(hex::encode)
            .as_deref(),
        facts["deposit_subaccount"].as_str()
    );
    let stats = h.stats(b, controller)?.ok_or_fail("stats")?;
    ensure_eq!((stats.forms, stats.canisters, stats.intents), (2, 1, 1));
    // The release had memories 0 to 15; the upgrade gives each structure added since (the bus's
    // 16 to 21, the agent tokens' 22 and 23) its first 512 KiB bucket, and nothing else grows.
    ensure_eq!(
        facts["stable_bytes"].as_u64().map(|n| n + 8 * 8 * 65_536),
        Some(stats.stable_bytes),
        "the upgrade added one bucket per new structure"
    );
    Ok(())
}

/// The image with its one intent's version byte made 9 (as a later release might write): the
/// upgrade is refused naming the record, and the canister keeps its old code and memory.
fn an_unknown_record_version_refuses_the_upgrade(w: &mut World) -> Check {
    let mut image = image()?;
    // The intent record: version 2, its id 1 (varint), the owner's principal (length, bytes).
    let owner = w.p.owner;
    let mut record = vec![2u8, 1, owner.as_slice().len() as u8];
    record.extend_from_slice(owner.as_slice());
    let at: Vec<usize> = image
        .windows(record.len())
        .enumerate()
        .filter(|(_, win)| *win == record.as_slice())
        .map(|(i, _)| i)
        .collect();
    ensure_eq!(at.len(), 1, "the intent record is found once in the image");
    image[at[0]] = 9;
    let c = canister_with(w, &image)?;
    let host_wasm = wasm::wasm(Canister::ToolHost).map_err(Fail::Failed)?;
    let controller = w.p.controller;
    match w
        .b
        .install(c, host_wasm, upgrade_arg(), InstallMode::Upgrade, controller)
    {
        Err(e) => ensure!(
            e.to_string().contains(
                "upgrade refused: stored intent: key 1: version 9 is not one this code reads ([1, 2, 3, 4])"
            ),
            "{e}"
        ),
        Ok(()) => {
            return Err(Fail::Failed(
                "an upgrade over an unknown record version was not refused".into(),
            ))
        }
    }
    ensure_eq!(
        w.b.stable_memory(c)?,
        image,
        "the refused upgrade changed nothing"
    );
    Ok(())
}
