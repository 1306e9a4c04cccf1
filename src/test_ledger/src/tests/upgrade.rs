//! Upgrades: reopening the same stable memory keeps every piece of state.

use super::*;
use crate::faults::FaultQueue;
use crate::types::{AllowanceArgs, Fault, FaultPlan, GetBlocksRequest};

fn all_blocks(l: &TestLedger) -> crate::types::GetBlocksResult {
    l.get_blocks(&[GetBlocksRequest {
        start: nat(0),
        length: nat(100),
    }])
}

#[test]
fn reopening_the_memory_keeps_all_state() {
    let memory = VectorMemory::default();
    let mm = memory_manager(memory.clone());
    let mut l: TestLedger = Ledger::open(&mm);
    let mut q = FaultQueue::open(&mm);
    l.initialize(init_args(vec![(Account::of(alice()), 1_000)]), T0)
        .unwrap();
    let stamped = TransferArg {
        created_at_time: Some(T0),
        memo: Some(ByteBuf::from(b"x".to_vec())),
        ..transfer_arg(Account::of(bob()), 10)
    };
    let first = l.transfer(alice(), &stamped, T0).unwrap();
    l.approve(alice(), &approve_arg(Account::of(carol()), 77), T0)
        .unwrap();
    let plans = vec![FaultPlan {
        method: "icrc1_transfer".into(),
        fault: Fault::LoseReply { hold_ns: 9 },
    }];
    q.inject(plans.clone()).unwrap();
    let blocks_before = all_blocks(&l);
    let tip_before = l.tip();
    drop((l, q, mm));

    // The "upgrade": a new memory manager over the same stable memory.
    let mm = memory_manager(memory);
    let mut l: TestLedger = Ledger::open(&mm);
    let q = FaultQueue::open(&mm);
    assert_eq!(balance(&l, alice()), nat(1_000 - 10 - FEE - FEE));
    assert_eq!(balance(&l, bob()), nat(10));
    assert_eq!(l.total_supply(), nat(1_000 - FEE - FEE));
    let allowance = l.allowance(
        &AllowanceArgs {
            account: Account::of(alice()),
            spender: Account::of(carol()),
        },
        T0,
    );
    assert_eq!(allowance.allowance, nat(77));
    assert_eq!(all_blocks(&l), blocks_before);
    assert_eq!(l.tip(), tip_before);
    assert_eq!(l.config().fee, nat(FEE));
    assert_eq!(q.pending(), plans);
    // The dedup index survived: the same call is still a duplicate.
    assert_eq!(
        l.transfer(alice(), &stamped, T0 + 1),
        Err(TxError::Duplicate {
            duplicate_of: first
        })
    );
    // And the chain continues from the old tip.
    let next = l
        .transfer(alice(), &transfer_arg(Account::of(bob()), 1), T0)
        .unwrap();
    assert_eq!(next, first + 2);
    let parent = crate::hash::hash_value(&l.block(next - 1).unwrap());
    assert_eq!(
        l.block(next).unwrap().get("phash"),
        Some(&crate::types::Value::blob(parent.to_vec()))
    );
}
