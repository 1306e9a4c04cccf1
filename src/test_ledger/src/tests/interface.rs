//! The exported interface is exactly `candid/test_ledger.did`.

use candid_parser::utils::{service_equal, CandidSource};
use std::path::Path;

#[test]
fn the_did_file_matches_the_exported_interface() {
    let exported = crate::__export_service();
    let did = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../candid/test_ledger.did");
    if std::env::var_os("PRINT_DID").is_some() {
        println!("{exported}");
    }
    if let Err(e) = service_equal(CandidSource::Text(&exported), CandidSource::File(&did)) {
        panic!(
            "the exported interface differs from {}: {e}\n\nexported:\n{exported}",
            did.display()
        );
    }
}

#[test]
fn the_check_notices_a_changed_method() {
    let exported = crate::__export_service();
    let did = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../candid/test_ledger.did"),
    )
    .unwrap();
    let changed = did.replace(
        "icrc1_fee : () -> (nat) query",
        "icrc1_fee : () -> (nat64) query",
    );
    assert_ne!(changed, did);
    assert!(service_equal(CandidSource::Text(&exported), CandidSource::Text(&changed)).is_err());
}
