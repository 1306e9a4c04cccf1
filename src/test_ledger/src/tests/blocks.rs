//! ICRC-3: the block log, its hash chain, block ranges and the tip.

use super::*;
use crate::certification::certified_data;
use crate::hash::hash_value;
use crate::types::{GetBlocksRequest, Value};

fn range(start: u64, length: u64) -> GetBlocksRequest {
    GetBlocksRequest {
        start: nat(start),
        length: nat(length),
    }
}

/// Alice and Bob from init (blocks 0, 1), then three transfers (blocks 2, 3, 4).
fn five_blocks() -> TestLedger {
    let mut l = ledger();
    for n in 1..=3 {
        l.transfer(alice(), &transfer_arg(Account::of(carol()), n), T0 + n)
            .unwrap();
    }
    assert_eq!(l.log_length(), 5);
    l
}

#[test]
fn every_block_links_to_the_hash_of_its_parent() {
    let l = five_blocks();
    assert_eq!(l.block(0).unwrap().get("phash"), None);
    for i in 1..l.log_length() {
        let parent = hash_value(&l.block(i - 1).unwrap());
        assert_eq!(
            l.block(i).unwrap().get("phash"),
            Some(&Value::blob(parent.to_vec())),
            "block {i}"
        );
    }
    let last = hash_value(&l.block(4).unwrap());
    assert_eq!(l.tip(), Some((4, last)));
}

#[test]
fn get_blocks_serves_several_ranges() {
    let l = five_blocks();
    let r = l.get_blocks(&[range(0, 2), range(3, 10), range(9, 1)]);
    assert_eq!(r.log_length, nat(5));
    assert!(r.archived_blocks.is_empty());
    let ids: Vec<Nat> = r.blocks.iter().map(|b| b.id.clone()).collect();
    assert_eq!(ids, [nat(0), nat(1), nat(3), nat(4)]);
    assert_eq!(r.blocks[2].block, l.block(3).unwrap());
}

#[test]
fn get_blocks_edge_cases() {
    let l = five_blocks();
    assert!(l.get_blocks(&[]).blocks.is_empty());
    assert!(l.get_blocks(&[range(2, 0)]).blocks.is_empty());
    assert!(l.get_blocks(&[range(5, 1)]).blocks.is_empty());
    let huge = GetBlocksRequest {
        start: Nat::from(u128::MAX),
        length: Nat::from(u128::MAX),
    };
    assert!(l.get_blocks(&[huge]).blocks.is_empty());
    assert_eq!(l.get_blocks(&[range(0, u64::MAX)]).blocks.len(), 5);
}

#[test]
fn get_blocks_is_capped_per_response() {
    use crate::ledger::MAX_BLOCKS_PER_RESPONSE;
    let mut l = ledger();
    for _ in 0..MAX_BLOCKS_PER_RESPONSE {
        l.transfer(minter(), &transfer_arg(Account::of(carol()), 1), T0)
            .unwrap();
    }
    let r = l.get_blocks(&[range(0, 10), range(0, u64::MAX)]);
    assert_eq!(r.blocks.len() as u64, MAX_BLOCKS_PER_RESPONSE);
    assert_eq!(r.log_length, nat(MAX_BLOCKS_PER_RESPONSE + 2));
}

#[test]
fn the_certified_data_follows_the_tip() {
    let mut l = ledger();
    let before = certified_data(l.tip());
    l.transfer(alice(), &transfer_arg(Account::of(bob()), 1), T0)
        .unwrap();
    let after = certified_data(l.tip());
    assert_ne!(before, after);
    let (index, _) = l.tip().unwrap();
    assert_eq!(index, 2);
    // An empty log has no tip.
    let (empty, _) = ledger_with(vec![]);
    assert_eq!(empty.tip(), None);
}

#[test]
fn a_block_round_trips_through_candid_unchanged() {
    let l = five_blocks();
    let block = l.block(2).unwrap();
    let bytes = candid::encode_one(&block).unwrap();
    let back: Value = candid::decode_one(&bytes).unwrap();
    assert_eq!(hash_value(&back), hash_value(&block));
}
