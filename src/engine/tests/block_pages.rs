//! The scan's two readings of an `icrc3_get_blocks` reply agree: the wire reader
//! (`tool_host_core::wire::blocks`) gives, block for block, the transaction the general path
//! gives (`candid` decoding the whole reply into ICRC-3 `Value`s, then `matching::read_tx`), or
//! declines and the general path reads the reply. Checked on replies captured from both real
//! ledgers (the test ledger and DFINITY's cycles ledger on the local IC host), on the model
//! ledger's pages in both block styles and with archives, on random pages and on mutated bytes.

mod common;

use candid::{Int, Nat, Principal};
use common::ledger::{Block, ModelLedger, Op as ModelOp};
use num_bigint::BigUint;
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_bytes::ByteBuf;
use tool_host_core::wire::blocks;
use tool_host_engine::matching::{self, Account, Expected, Op, Verdict};
use tool_host_engine::reconcile::icrc3::{
    ArchiveFn, ArchivedBlocks, BlockWithId, GetBlocksRequest, GetBlocksResult, Value,
};
use tool_host_engine::reconcile::{decode_page, read_page};

/// Whatever the fast reader reads, the general path reads the same; and the scan's reading
/// (`read_page`) is the general path's, whichever way it went. Answers whether the fast reader
/// read it.
fn agree(bytes: &[u8]) -> bool {
    let general = decode_page(bytes);
    let fast = blocks::read_page(bytes);
    if let Some(fast) = &fast {
        let general = general
            .as_ref()
            .expect("what the fast reader reads, the general decoder reads");
        assert!(
            general.archives.is_empty(),
            "a page with archives is declined"
        );
        assert_eq!(fast.log_length, general.log_length);
        assert_eq!(fast.blocks, general.blocks);
    }
    assert_eq!(
        read_page(bytes),
        general,
        "the scan reads as the general path"
    );
    fast.is_some()
}

/// A reply captured from a ledger on the local IC host (see `fixtures/blocks/README.md`).
fn captured(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/blocks/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The operations and shapes a captured page holds, so that a fixture that lost them fails.
fn coverage(page: &tool_host_engine::reconcile::Page) -> Vec<&'static str> {
    let mut out = vec![];
    let txs: Vec<&matching::Tx> = page.blocks.iter().filter_map(|(_, t)| t.as_ref()).collect();
    let mut note = |what: &'static str, present: bool| {
        if present {
            out.push(what);
        }
    };
    note(
        "transfer",
        txs.iter()
            .any(|t| t.op == Some(Op::Transfer) && t.spender.is_none()),
    );
    note(
        "transfer_from",
        txs.iter()
            .any(|t| t.op == Some(Op::Transfer) && t.spender.is_some()),
    );
    note("approve", txs.iter().any(|t| t.op == Some(Op::Approve)));
    note("mint", txs.iter().any(|t| t.op == Some(Op::Mint)));
    note("burn", txs.iter().any(|t| t.op == Some(Op::Burn)));
    note("memo", txs.iter().any(|t| t.memo.is_some()));
    note("stated fee", txs.iter().any(|t| t.fee.is_some()));
    note("block fee", txs.iter().any(|t| t.block_fee.is_some()));
    note("stamp", txs.iter().any(|t| t.created_at_time.is_some()));
    let sub = |a: &Option<Account>| a.as_ref().is_some_and(|a| a.subaccount != [0; 32]);
    note("subaccount", txs.iter().any(|t| sub(&t.from) || sub(&t.to)));
    out
}

#[test]
fn replies_captured_from_both_ledgers_read_alike() {
    let want = [
        "transfer",
        "transfer_from",
        "approve",
        "mint",
        "burn",
        "memo",
        "stated fee",
        "block fee",
        "stamp",
        "subaccount",
    ];
    for file in ["test_ledger.bin", "cycles_ledger.bin"] {
        let bytes = captured(file);
        assert!(agree(&bytes), "{file}: the fast reader reads a real reply");
        let page = read_page(&bytes).unwrap();
        let covered = coverage(&page);
        for w in want {
            assert!(covered.contains(&w), "{file} has no {w}: {covered:?}");
        }
    }
}

fn acct(n: u8, sub: u8) -> (Principal, [u8; 32]) {
    (Principal::from_slice(&[n; 10]), [sub; 32])
}

/// The model ledger's blocks of every kind, in `btype` or `tx.op` style.
fn model_ledger(btype_style: bool) -> ModelLedger {
    let mut l = ModelLedger::new(Principal::from_slice(&[0xa0; 10]));
    l.btype_style = btype_style;
    l.mint(acct(1, 0), 1_000_000, 5);
    let base = Block {
        op: ModelOp::Transfer,
        from: Some(acct(1, 0)),
        to: Some(acct(2, 7)),
        spender: None,
        amount: 7,
        fee: None,
        effective_fee: 10_000,
        memo: Some(b"order-7".to_vec()),
        created_at_time: Some(1_735_689_600_000_000_000),
        expected_allowance: None,
        expires_at: None,
        timestamp: 1_735_689_600_000_000_001,
        caller: Principal::anonymous(),
        arg: vec![],
    };
    l.blocks.push(base.clone());
    l.blocks.push(Block {
        fee: Some(10_000),
        memo: None,
        created_at_time: None,
        ..base.clone()
    });
    l.blocks.push(Block {
        op: ModelOp::Approve,
        to: None,
        spender: Some(acct(3, 0)),
        expected_allowance: Some(0),
        expires_at: Some(1_800_000_000_000_000_000),
        ..base.clone()
    });
    l.blocks.push(Block {
        spender: Some(acct(3, 9)),
        amount: u128::from(u64::MAX) * 3,
        ..base
    });
    l
}

#[test]
fn the_model_ledgers_pages_read_alike_in_both_styles_and_archives_go_to_the_general_path() {
    let all = [GetBlocksRequest {
        start: Nat::from(0u8),
        length: Nat::from(100u8),
    }];
    for style in [true, false] {
        let mut l = model_ledger(style);
        let bytes = candid::encode_one(l.get_blocks(&all)).unwrap();
        assert!(agree(&bytes), "btype style {style}");
        assert_eq!(read_page(&bytes).unwrap().blocks.len(), 5);
        l.archived_below = 2;
        let bytes = candid::encode_one(l.get_blocks(&all)).unwrap();
        assert!(
            !agree(&bytes),
            "a page with archives goes to the general path"
        );
        let page = read_page(&bytes).unwrap();
        assert_eq!(
            page.archives,
            vec![(l.archive_id, "icrc3_get_blocks".into(), vec![(0, 2)])]
        );
        assert_eq!(page.blocks.len(), 3);
        let archive = candid::encode_one(l.archive_get_blocks(&all)).unwrap();
        assert!(agree(&archive), "the archive's own page has none");
    }
}

/// Verdicts are the same either way: they are `compare_tx` on the same transaction. This pins
/// that the fast reading feeds matching the fields matching reads (the exactly-once rules).
#[test]
fn verdicts_on_the_fast_reading_are_the_general_ones() {
    let l = model_ledger(false);
    let e = Expected {
        op: Op::Transfer,
        from: Account {
            owner: Principal::from_slice(&[1; 10]),
            subaccount: [0; 32],
        },
        to: Some(Account {
            owner: Principal::from_slice(&[2; 10]),
            subaccount: [7; 32],
        }),
        spender: None,
        amount: BigUint::from(7u8),
        fee: None,
        memo: Some(b"order-7".to_vec()),
        created_at_time: Some(1_735_689_600_000_000_000),
        expected_allowance: None,
        expires_at: None,
    };
    let mut near = e.clone();
    near.amount = BigUint::from(8u8);
    let bytes = candid::encode_one(l.get_blocks(&[GetBlocksRequest {
        start: Nat::from(0u8),
        length: Nat::from(10u8),
    }]))
    .unwrap();
    let fast = blocks::read_page(&bytes).unwrap();
    let verdicts = |e: &Expected| -> Vec<Verdict> {
        fast.blocks
            .iter()
            .map(|(_, tx)| matching::compare_tx(tx.as_ref(), e))
            .collect()
    };
    let general: Vec<Verdict> = (0..5).map(|i| matching::compare(&l.value(i), &e)).collect();
    assert_eq!(verdicts(&e), general);
    assert_eq!(verdicts(&e)[1], Verdict::Same);
    assert!(
        matches!(verdicts(&near)[1], Verdict::Conflict(_)),
        "a near-match holds"
    );
}

// Random pages: blocks made of the keys matching reads and others, values of every kind
// (naturals beyond 64 bits, negative integers, accounts of every length, repeated keys).

fn any_nat() -> impl Strategy<Value = Nat> {
    prop_oneof![
        (0u64..300).prop_map(Nat::from),
        any::<u64>().prop_map(Nat::from),
        any::<u128>().prop_map(Nat::from),
        (any::<u128>(), any::<u64>())
            .prop_map(|(a, b)| Nat((BigUint::from(a) << 64) + BigUint::from(b))),
    ]
}

fn any_blob() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..40),
        Just(vec![0; 32]),
        Just(vec![1; 10]),
        Just(vec![2; 29]),
        Just(vec![3; 30]),
    ]
    .prop_map(|b| Value::Blob(ByteBuf::from(b)))
}

fn any_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any_blob(),
        any_nat().prop_map(Value::Nat),
        any::<i128>().prop_map(|i| Value::Int(Int::from(i))),
        any::<u64>().prop_map(Value::Nat64),
        prop_oneof![
            Just("1xfer"),
            Just("2xfer"),
            Just("xfer"),
            Just("approve"),
            Just("2approve"),
            Just("mint"),
            Just("1burn"),
            Just("burn"),
            Just("other"),
            Just("é"),
        ]
        .prop_map(|s| Value::Text(s.into())),
    ]
}

fn any_account() -> impl Strategy<Value = Value> {
    prop::collection::vec(any_blob(), 0..4).prop_map(Value::Array)
}

fn any_value() -> impl Strategy<Value = Value> {
    any_leaf().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{0,3}", inner), 0..4).prop_map(Value::Map),
        ]
    })
}

const TX_KEYS: &[&str] = &[
    "op",
    "from",
    "to",
    "spender",
    "amt",
    "fee",
    "memo",
    "ts",
    "expected_allowance",
    "expires_at",
    "other",
];

fn any_tx_entry() -> impl Strategy<Value = (String, Value)> {
    (
        prop::sample::select(TX_KEYS),
        prop_oneof![any_account(), any_leaf(), any_value()],
    )
        .prop_map(|(k, v)| (k.to_string(), v))
}

fn any_block() -> impl Strategy<Value = Value> {
    let tx = prop_oneof![
        4 => prop::collection::vec(any_tx_entry(), 0..9).prop_map(Value::Map),
        1 => any_value(),
    ];
    let entry = prop_oneof![
        (Just("tx"), tx),
        (Just("btype"), any_leaf()),
        (Just("fee"), any_leaf()),
        (Just("phash"), any_blob()),
        (Just("ts"), any_value()),
    ]
    .prop_map(|(k, v)| (k.to_string(), v));
    prop_oneof![
        6 => prop::collection::vec(entry, 0..6).prop_map(Value::Map),
        1 => any_value(),
    ]
}

fn any_page() -> impl Strategy<Value = GetBlocksResult> {
    (
        any_nat(),
        prop::collection::vec((any_nat(), any_block()), 0..6),
        0usize..5,
    )
        .prop_map(|(log_length, blocks, archives)| GetBlocksResult {
            log_length,
            blocks: blocks
                .into_iter()
                .map(|(id, block)| BlockWithId { id, block })
                .collect(),
            // Mostly none, as both ledgers answer.
            archived_blocks: (0..archives.saturating_sub(3))
                .map(|i| ArchivedBlocks {
                    args: vec![GetBlocksRequest {
                        start: Nat::from(i),
                        length: Nat::from(1u8),
                    }],
                    callback: ArchiveFn::new(
                        Principal::from_slice(&[5; 10]),
                        "icrc3_get_blocks".into(),
                    ),
                })
                .collect(),
        })
}

proptest! {
    #![proptest_config(Config::with_cases(600))]

    #[test]
    fn random_pages_read_alike(page in any_page()) {
        let bytes = candid::encode_one(&page).unwrap();
        let archives = !page.archived_blocks.is_empty();
        let small_log = u64::try_from(page.log_length.0.clone()).is_ok();
        // Every page of the expected types without archives is the fast reader's.
        prop_assert_eq!(agree(&bytes), !archives && small_log);
    }

    #[test]
    fn mutated_pages_read_alike_or_go_to_the_general_path(
        page in any_page(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = candid::encode_one(&page).unwrap();
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        agree(&bytes);
    }
}

// Found by the third review: the wire reader took a type's constructor as a signed LEB128 of
// any length, where `candid` takes one magic byte (and refuses `ee 7f` for `opt`).

fn leb_len(b: &[u8]) -> usize {
    b.iter().position(|x| x & 0x80 == 0).unwrap() + 1
}
fn leb(b: &[u8]) -> u64 {
    b[..leb_len(b)]
        .iter()
        .enumerate()
        .fold(0, |v, (i, x)| v | (u64::from(x & 0x7f) << (7 * i)))
}

/// The same message with every constructor opcode written in two bytes.
fn overlong(bytes: &[u8]) -> Vec<u8> {
    assert_eq!(&bytes[..4], b"DIDL");
    let mut out = b"DIDL".to_vec();
    let mut p = 4;
    let n = leb(&bytes[p..]);
    let l = leb_len(&bytes[p..]);
    out.extend_from_slice(&bytes[p..p + l]);
    p += l;
    for _ in 0..n {
        let op = bytes[p];
        p += 1;
        out.push(op | 0x80);
        out.push(0x7f);
        let start = p;
        match op {
            0x6e | 0x6d => p += leb_len(&bytes[p..]),
            0x6c | 0x6b => {
                let k = leb(&bytes[p..]);
                p += leb_len(&bytes[p..]);
                for _ in 0..k {
                    p += leb_len(&bytes[p..]);
                    p += leb_len(&bytes[p..]);
                }
            }
            0x6a => {
                for _ in 0..2 {
                    let k = leb(&bytes[p..]);
                    p += leb_len(&bytes[p..]);
                    for _ in 0..k {
                        p += leb_len(&bytes[p..]);
                    }
                }
                let a = bytes[p] as usize;
                p += 1 + a;
            }
            other => panic!("opcode {other:#x}"),
        }
        out.extend_from_slice(&bytes[start..p]);
    }
    out.extend_from_slice(&bytes[p..]);
    out
}

#[test]
fn an_opcode_written_overlong_goes_to_candid_as_candid_refuses_it() {
    // A blocks page (no archives): the scan's fast reader.
    let page = GetBlocksResult {
        log_length: Nat::from(7u8),
        blocks: vec![BlockWithId {
            id: Nat::from(6u8),
            block: Value::Map(vec![(
                "tx".into(),
                Value::Map(vec![("op".into(), Value::Text("xfer".into()))]),
            )]),
        }],
        archived_blocks: vec![],
    };
    let bytes = overlong(&candid::encode_one(&page).unwrap());
    let fast = tool_host_core::wire::blocks::read_page(&bytes);
    let general = decode_page(&bytes);
    let scan = read_page(&bytes);

    // A typed reply (`opt nat`), as `codec::decode` reads a ledger's reply.
    let reply = overlong(&candid::encode_one(Some(Nat::from(5u8))).unwrap());
    let env = candid::types::TypeEnv::new();
    use candid::types::TypeInner;
    let ty = vec![TypeInner::Opt(TypeInner::Nat.into()).into()];
    let fast_reply = tool_host_core::wire::decode_with_types(&reply, &env, &ty);
    let candid_reply = candid::IDLArgs::from_bytes_with_types(&reply, &env, &ty);

    let diverges =
        (fast.is_some() && general.is_err()) || (fast_reply.is_some() && candid_reply.is_err());
    assert!(
        !diverges,
        "page: fast {:?}, candid {:?}, scan {:?}\nreply: fast {:?}, candid {:?}",
        fast.is_some(),
        general.err(),
        scan.map(|p| p.log_length),
        fast_reply.map(|a| a.args),
        candid_reply.err().map(|e| e.to_string())
    );
}
