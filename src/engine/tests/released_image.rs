//! The stable memory the first release left after the walkthrough
//! (`tests/fixtures/released/v0.1.0`, made by `walkthrough --save-image`; see that binary),
//! opened by this code's engine as a `post_upgrade` opens it: every record reads, the indexes
//! agree with the intents, and what the walkthrough did is all there. A later release keeps
//! this fixture as it is: it is the layout that release must still read.

use candid::Principal;
use flate2::read::GzDecoder;
use ic_stable_structures::{Memory, VectorMemory};
use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;
use tool_host_engine::model::Status;
use tool_host_engine::state::State;

fn released(file: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/released/v0.1.0")
        .join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn image() -> Vec<u8> {
    let mut out = vec![];
    GzDecoder::new(&released("stable.bin.gz")[..])
        .read_to_end(&mut out)
        .expect("the image gunzips");
    out
}

fn principal(v: &Value) -> Principal {
    Principal::from_text(v.as_str().expect("text")).expect("a principal")
}

#[test]
fn the_first_release_image_opens_and_holds_the_walkthrough() {
    let facts: Value = serde_json::from_slice(&released("facts.json")).unwrap();
    let bytes = image();
    assert_eq!(bytes.len() as u64, facts["stable_bytes"].as_u64().unwrap());
    assert_eq!(bytes.len() % 65_536, 0, "whole pages");
    let mem = VectorMemory::default();
    mem.grow(bytes.len() as u64 / 65_536);
    mem.write(0, &bytes);

    let s = State::init(mem.clone());
    s.check_records().expect("every record reads");
    s.check_layout().expect("what an upgrade reads");
    s.check_indexes().expect("the indexes agree");
    // The release had the structures up to memory 15; opening gives each structure added since
    // (the bus's 16 to 21, the agent tokens' 22 and 23) its first bucket, and nothing else; the
    // intent body slab (24) and the head table (26, 27) take theirs when the first intent is
    // written, the expiry index (25) with the first preview, the write-back slots (28) and the
    // count tables (29 to 31) with the first count, the tool names (32) with the first name,
    // the stamp floor table (33) with the first floor.
    let added = tool_host_engine::memory::ALL.len() as u64 - 26;
    assert_eq!(
        mem.size() * 65_536,
        bytes.len() as u64 + added * 8 * 65_536,
        "opening wrote one bucket per new structure"
    );

    let forms: Vec<String> = s.forms.keys().collect();
    let expected: Vec<String> = facts["forms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert_eq!(forms, expected);

    let ledger = principal(&facts["ledger"]);
    let target = s.targets.get(&ledger).expect("the ledger target");
    assert_eq!(target.label.as_deref(), facts["ledger_label"].as_str());
    assert_eq!(target.forms, expected);
    assert!(
        target.refs_json.contains("icrc1_decimals"),
        "{}",
        target.refs_json
    );
    assert_eq!(s.targets.len(), 1);

    let f = &facts["intent"];
    let intent = s
        .intents
        .get(&f["id"].as_u64().unwrap())
        .expect("the intent");
    assert_eq!(intent.status, Status::Done);
    assert_eq!(intent.status.as_str(), f["status"].as_str().unwrap());
    assert_eq!(intent.outcome.as_deref(), f["outcome"].as_str());
    assert_eq!(
        intent.attempts.len() as u64,
        f["attempts"].as_u64().unwrap()
    );
    assert_eq!(intent.owner, principal(&f["owner"]));
    assert_eq!(s.intents.len(), 1);

    let admins: Vec<Principal> = s.admins.keys().collect();
    let expected: Vec<Principal> = facts["admins"]
        .as_array()
        .unwrap()
        .iter()
        .map(principal)
        .collect();
    assert_eq!(admins, expected);
    let owner = principal(&facts["owner"]);
    for agent in facts["agents"].as_array().unwrap() {
        assert!(s.is_agent_of(&owner, &principal(agent)));
    }
    let limits = s.limits();
    assert_eq!(
        limits.preview_ttl_seconds,
        facts["limits"]["preview_ttl_seconds"].as_u64().unwrap()
    );
    assert_eq!(
        limits.max_forms as u64,
        facts["limits"]["max_forms"].as_u64().unwrap()
    );
    assert!(s.config.get().indexes_built);
}
