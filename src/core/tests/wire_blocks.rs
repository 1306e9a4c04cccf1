//! The ICRC-3 block page reader (`wire::blocks`): what it reads from pages written as the test
//! ledger and the cycles ledger write them, the ICRC-3 quirks the general path has (first key
//! wins, values of another kind read as absent), and the shapes it leaves to `candid`. Its
//! agreement with the general decoder, block for block, is checked in the engine's
//! `block_pages` tests.

use candid::{CandidType, Deserialize, Int, Nat, Principal};
use num_bigint::BigUint;
use tool_host_core::wire::blocks::{read_page, Account, BlockPage, Op, Tx};

#[derive(CandidType, Deserialize, Clone, Debug)]
struct Range {
    start: Nat,
    length: Nat,
}

/// The ICRC-3 result types around a given `Value` (one module per variant of the types).
macro_rules! icrc3_types {
    ($m:ident, $($value:tt)*) => {
        #[allow(dead_code)]
        mod $m {
            use super::*;
            #[derive(CandidType, Deserialize, Clone, Debug)]
            pub enum Value { $($value)* }
            #[derive(CandidType, Deserialize, Clone, Debug)]
            pub struct BlockWithId {
                pub id: Nat,
                pub block: Value,
            }
            candid::define_function!(pub ArchiveFn : (Vec<Range>) -> (GetBlocksResult) query);
            #[derive(CandidType, Deserialize, Clone, Debug)]
            pub struct ArchivedBlocks {
                pub args: Vec<Range>,
                pub callback: ArchiveFn,
            }
            #[derive(CandidType, Deserialize, Clone, Debug)]
            pub struct GetBlocksResult {
                pub log_length: Nat,
                pub blocks: Vec<BlockWithId>,
                pub archived_blocks: Vec<ArchivedBlocks>,
            }
            pub fn page(log_length: u64, blocks: Vec<(u64, Value)>) -> GetBlocksResult {
                GetBlocksResult {
                    log_length: Nat::from(log_length),
                    blocks: blocks
                        .into_iter()
                        .map(|(id, block)| BlockWithId { id: Nat::from(id), block })
                        .collect(),
                    archived_blocks: vec![],
                }
            }
        }
    };
}

// The test ledger's `Value` (ICRC-3's), and the cycles ledger's (with `Nat64`).
icrc3_types!(
    test_ledger,
    Blob(Vec<u8>),
    Text(String),
    Nat(Nat),
    Int(Int),
    Array(Vec<Value>),
    Map(Vec<(String, Value)>)
);
icrc3_types!(
    cycles_ledger,
    Int(Int),
    Map(Vec<(String, Value)>),
    Nat(Nat),
    Nat64(u64),
    Blob(Vec<u8>),
    Text(String),
    Array(Vec<Value>)
);
// Types the reader does not know.
icrc3_types!(
    nat_as_nat64,
    Blob(Vec<u8>),
    Text(String),
    Nat(u64),
    Int(Int),
    Array(Vec<Value>),
    Map(Vec<(String, Value)>)
);
icrc3_types!(
    float_case,
    Blob(Vec<u8>),
    Text(String),
    Nat(Nat),
    Int(Int),
    Array(Vec<Value>),
    Map(Vec<(String, Value)>),
    Float(f64)
);
icrc3_types!(
    map_of_triples,
    Blob(Vec<u8>),
    Text(String),
    Nat(Nat),
    Int(Int),
    Array(Vec<Value>),
    Map(Vec<(String, Value, u8)>)
);
icrc3_types!(
    blob_as_text,
    Blob(String),
    Text(String),
    Nat(Nat),
    Int(Int),
    Array(Vec<Value>),
    Map(Vec<(String, Value)>)
);

use test_ledger::Value as V;

fn owner() -> Principal {
    Principal::from_slice(&[1; 10])
}
fn recipient() -> Principal {
    Principal::from_slice(&[2; 10])
}
fn nat(n: u64) -> V {
    V::Nat(Nat::from(n))
}
fn text(s: &str) -> V {
    V::Text(s.into())
}
fn blob(b: &[u8]) -> V {
    V::Blob(b.to_vec())
}
fn map(entries: Vec<(&str, V)>) -> V {
    V::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
}
fn acct(p: Principal, sub: Option<&[u8]>) -> V {
    let mut parts = vec![blob(p.as_slice())];
    if let Some(s) = sub {
        parts.push(blob(s));
    }
    V::Array(parts)
}
fn account(p: Principal, sub: [u8; 32]) -> Account {
    Account {
        owner: p,
        subaccount: sub,
    }
}
fn big(n: u64) -> Option<BigUint> {
    Some(BigUint::from(n))
}

/// A transfer of 7 with memo `order-7` and a stamp, fee not stated, as the test ledger writes it.
fn test_ledger_transfer() -> V {
    map(vec![
        ("btype", text("1xfer")),
        ("fee", nat(10_000)),
        ("phash", blob(&[7; 32])),
        ("ts", nat(1_735_689_600_000_000_001)),
        (
            "tx",
            map(vec![
                ("amt", nat(7)),
                ("from", acct(owner(), None)),
                ("memo", blob(b"order-7")),
                ("to", acct(recipient(), Some(&[3; 32]))),
                ("ts", nat(1_735_689_600_000_000_000)),
            ]),
        ),
    ])
}

fn transfer_tx() -> Tx {
    Tx {
        op: Some(Op::Transfer),
        from: Some(account(owner(), [0; 32])),
        to: Some(account(recipient(), [3; 32])),
        amount: big(7),
        block_fee: big(10_000),
        memo: Some(b"order-7".to_vec()),
        created_at_time: big(1_735_689_600_000_000_000),
        ..Tx::default()
    }
}

fn read_one(block: V) -> Option<Tx> {
    let bytes = candid::encode_one(test_ledger::page(1, vec![(0, block)])).unwrap();
    let page = read_page(&bytes).expect("the fast reader reads it");
    assert_eq!(page.log_length, 1);
    assert_eq!(page.blocks.len(), 1);
    page.blocks.into_iter().next().unwrap().1
}

#[test]
fn the_test_ledgers_blocks_are_read() {
    let approve = map(vec![
        ("btype", text("2approve")),
        ("fee", nat(10_000)),
        (
            "tx",
            map(vec![
                ("amt", nat(500)),
                ("expected_allowance", nat(0)),
                ("expires_at", nat(1_800_000_000_000_000_000)),
                ("from", acct(owner(), Some(&[0; 32]))),
                ("spender", acct(recipient(), None)),
            ]),
        ),
    ]);
    let mint = map(vec![
        ("btype", text("1mint")),
        (
            "tx",
            map(vec![("amt", nat(100)), ("to", acct(owner(), None))]),
        ),
    ]);
    let bytes = candid::encode_one(test_ledger::page(
        12,
        vec![(9, test_ledger_transfer()), (10, approve), (11, mint)],
    ))
    .unwrap();
    let page = read_page(&bytes).expect("read");
    let expected = BlockPage {
        log_length: 12,
        blocks: vec![
            (9, Some(transfer_tx())),
            (
                10,
                Some(Tx {
                    op: Some(Op::Approve),
                    from: Some(account(owner(), [0; 32])),
                    spender: Some(account(recipient(), [0; 32])),
                    amount: big(500),
                    block_fee: big(10_000),
                    expected_allowance: big(0),
                    expires_at: big(1_800_000_000_000_000_000),
                    ..Tx::default()
                }),
            ),
            (
                11,
                Some(Tx {
                    op: Some(Op::Mint),
                    to: Some(account(owner(), [0; 32])),
                    amount: big(100),
                    ..Tx::default()
                }),
            ),
        ],
    };
    assert_eq!(page, expected);
}

#[test]
fn the_cycles_ledgers_blocks_are_read_with_their_op_and_nat64() {
    use cycles_ledger::Value as C;
    let b = |x: &[u8]| C::Blob(x.to_vec());
    let m = |es: Vec<(&str, C)>| C::Map(es.into_iter().map(|(k, v)| (k.into(), v)).collect());
    // A mint (deposit) with the cycles ledger's fee quirks, and a burn with a Nat64 amount.
    let mint = m(vec![
        ("fee", C::Nat(Nat::from(0u8))),
        (
            "tx",
            m(vec![
                ("amt", C::Nat(Nat::from(7u8))),
                ("fee", C::Nat(Nat::from(100_000_000u64))),
                ("op", C::Text("mint".into())),
                ("to", C::Array(vec![b(owner().as_slice())])),
            ]),
        ),
    ]);
    let burn = m(vec![
        ("fee", C::Nat64(100_000_000)),
        (
            "tx",
            m(vec![
                ("amt", C::Nat64(5)),
                ("from", C::Array(vec![b(owner().as_slice()), b(&[4; 32])])),
                ("memo", b(&[0x81, 0x4a])),
                ("op", C::Text("burn".into())),
            ]),
        ),
    ]);
    let bytes = candid::encode_one(cycles_ledger::page(3, vec![(1, mint), (2, burn)])).unwrap();
    let page = read_page(&bytes).expect("read");
    assert_eq!(
        page.blocks,
        vec![
            (
                1,
                Some(Tx {
                    op: Some(Op::Mint),
                    to: Some(account(owner(), [0; 32])),
                    amount: big(7),
                    fee: big(100_000_000),
                    block_fee: big(0),
                    ..Tx::default()
                })
            ),
            (
                2,
                Some(Tx {
                    op: Some(Op::Burn),
                    from: Some(account(owner(), [4; 32])),
                    amount: big(5),
                    block_fee: big(100_000_000),
                    memo: Some(vec![0x81, 0x4a]),
                    ..Tx::default()
                })
            ),
        ]
    );
}

#[test]
fn a_btype_wins_over_tx_op_and_an_unknown_one_is_no_operation() {
    let with = |btype: V, op: Option<&str>| {
        let mut tx = vec![("amt", nat(1))];
        if let Some(o) = op {
            tx.push(("op", text(o)));
        }
        read_one(map(vec![("btype", btype), ("tx", map(tx))]))
            .unwrap()
            .op
    };
    assert_eq!(with(text("2xfer"), Some("approve")), Some(Op::Transfer));
    assert_eq!(with(text("107feecol"), Some("xfer")), None);
    // A btype that is not text reads as absent: tx.op counts.
    assert_eq!(with(nat(1), Some("approve")), Some(Op::Approve));
    assert_eq!(with(nat(1), None), None);
}

#[test]
fn the_first_of_a_repeated_key_counts() {
    let block = map(vec![
        ("fee", text("not a number")),
        ("fee", nat(5)),
        (
            "tx",
            map(vec![
                ("amt", nat(7)),
                ("amt", nat(8)),
                ("memo", blob(b"a")),
                ("memo", blob(b"b")),
            ]),
        ),
        ("tx", map(vec![("amt", nat(9))])),
    ]);
    let tx = read_one(block).unwrap();
    assert_eq!(tx.block_fee, None, "the first fee is text");
    assert_eq!(tx.amount, big(7));
    assert_eq!(tx.memo, Some(b"a".to_vec()));
    // A first `tx` that is not a map: no transaction, whatever follows.
    let block = map(vec![("tx", nat(1)), ("tx", map(vec![("amt", nat(9))]))]);
    assert_eq!(read_one(block), None);
    assert_eq!(read_one(nat(3)), None, "a block that is not a map");
    assert_eq!(read_one(map(vec![("btype", text("1xfer"))])), None);
}

#[test]
fn accounts_read_only_as_owner_and_optional_32_byte_subaccount() {
    let from = |v: V| {
        read_one(map(vec![("tx", map(vec![("from", v)]))]))
            .unwrap()
            .from
    };
    let o = owner();
    assert_eq!(from(acct(o, None)), Some(account(o, [0; 32])));
    assert_eq!(from(acct(o, Some(&[0; 32]))), Some(account(o, [0; 32])));
    assert_eq!(from(acct(o, Some(&[9; 32]))), Some(account(o, [9; 32])));
    assert_eq!(from(acct(o, Some(&[9; 31]))), None, "31 bytes");
    assert_eq!(from(V::Array(vec![])), None);
    assert_eq!(from(V::Array(vec![blob(&[1; 30])])), None, "no principal");
    assert_eq!(from(V::Array(vec![text("x")])), None);
    assert_eq!(
        from(V::Array(vec![
            blob(o.as_slice()),
            blob(&[0; 32]),
            blob(&[])
        ])),
        None,
        "three parts"
    );
    assert_eq!(
        from(V::Array(vec![blob(o.as_slice()), nat(0)])),
        None,
        "a subaccount that is not a blob"
    );
    assert_eq!(from(blob(o.as_slice())), None, "not an array");
}

#[test]
fn numbers_read_as_naturals_of_any_size() {
    let amt = |v: V| {
        read_one(map(vec![("tx", map(vec![("amt", v)]))]))
            .unwrap()
            .amount
    };
    let huge: BigUint = BigUint::from(1u8) << 100usize;
    assert_eq!(amt(V::Nat(Nat(huge.clone()))), Some(huge.clone()));
    assert_eq!(amt(nat(u64::MAX)), big(u64::MAX));
    assert_eq!(amt(V::Int(Int::from(12))), big(12));
    assert_eq!(amt(V::Int(Int::from(-12))), None);
    assert_eq!(
        amt(V::Int(Int(num_bigint::BigInt::from(-1) << 100usize))),
        None
    );
    assert_eq!(amt(V::Int(Int(huge.clone().into()))), Some(huge));
    assert_eq!(amt(text("7")), None);
    assert_eq!(amt(blob(&[7])), None);
}

#[test]
fn a_block_id_beyond_64_bits_is_left_out_and_such_a_log_length_goes_to_candid() {
    let mut page = test_ledger::page(3, vec![(1, nat(0)), (2, nat(0))]);
    page.blocks[0].id = Nat(BigUint::from(1u8) << 64);
    let bytes = candid::encode_one(&page).unwrap();
    let read = read_page(&bytes).expect("read");
    assert_eq!(read.blocks, vec![(2, None)]);
    page.log_length = Nat(BigUint::from(1u8) << 64);
    assert_eq!(read_page(&candid::encode_one(&page).unwrap()), None);
}

#[test]
fn extra_record_fields_are_passed_over() {
    #[derive(CandidType)]
    struct BlockWithMore {
        id: Nat,
        block: test_ledger::Value,
        certified: bool,
    }
    #[derive(CandidType)]
    struct ResultWithMore {
        log_length: Nat,
        blocks: Vec<BlockWithMore>,
        archived_blocks: Vec<test_ledger::ArchivedBlocks>,
        zz_note: Option<String>,
        aa_first: Vec<(String, u64)>,
    }
    let bytes = candid::encode_one(ResultWithMore {
        log_length: Nat::from(5u8),
        blocks: vec![BlockWithMore {
            id: Nat::from(4u8),
            block: test_ledger_transfer(),
            certified: true,
        }],
        archived_blocks: vec![],
        zz_note: Some("é".into()),
        aa_first: vec![("x".into(), 1)],
    })
    .unwrap();
    let page = read_page(&bytes).expect("read");
    assert_eq!(page.blocks, vec![(4, Some(transfer_tx()))]);
}

#[test]
fn other_types_and_archives_go_to_candid() {
    let one = |bytes: Vec<u8>| read_page(&bytes);
    // Sanity: the same page with the expected types is read.
    assert!(one(candid::encode_one(test_ledger::page(1, vec![(0, nat(1))])).unwrap()).is_some());
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "Nat as nat64",
            candid::encode_one(nat_as_nat64::page(
                1,
                vec![(0, nat_as_nat64::Value::Nat(1))],
            ))
            .unwrap(),
        ),
        (
            "a case ICRC-3 does not have",
            candid::encode_one(float_case::page(
                1,
                vec![(0, float_case::Value::Float(1.0))],
            ))
            .unwrap(),
        ),
        (
            "a map of triples",
            candid::encode_one(map_of_triples::page(
                1,
                vec![(0, map_of_triples::Value::Map(vec![]))],
            ))
            .unwrap(),
        ),
        (
            "Blob as text",
            candid::encode_one(blob_as_text::page(
                1,
                vec![(0, blob_as_text::Value::Blob("x".into()))],
            ))
            .unwrap(),
        ),
        ("trailing bytes", {
            let mut b = candid::encode_one(test_ledger::page(1, vec![])).unwrap();
            b.push(0);
            b
        }),
        (
            "two arguments",
            candid::encode_args((test_ledger::page(1, vec![]), 1u8)).unwrap(),
        ),
        ("a page naming an archive", {
            let mut p = test_ledger::page(1, vec![]);
            p.archived_blocks.push(test_ledger::ArchivedBlocks {
                args: vec![Range {
                    start: Nat::from(0u8),
                    length: Nat::from(1u8),
                }],
                callback: test_ledger::ArchiveFn::new(recipient(), "icrc3_get_blocks".into()),
            });
            candid::encode_one(p).unwrap()
        }),
    ];
    for (what, bytes) in cases {
        assert_eq!(one(bytes), None, "{what}");
    }
    #[derive(CandidType)]
    struct NoArchives {
        log_length: Nat,
        blocks: Vec<test_ledger::BlockWithId>,
    }
    #[derive(CandidType)]
    struct LogLength64 {
        log_length: u64,
        blocks: Vec<test_ledger::BlockWithId>,
        archived_blocks: Vec<test_ledger::ArchivedBlocks>,
    }
    #[derive(CandidType)]
    struct NoId {
        block: test_ledger::Value,
    }
    #[derive(CandidType)]
    struct BlocksWithoutId {
        log_length: Nat,
        blocks: Vec<NoId>,
        archived_blocks: Vec<test_ledger::ArchivedBlocks>,
    }
    let no_archives = NoArchives {
        log_length: Nat::from(1u8),
        blocks: vec![],
    };
    assert_eq!(one(candid::encode_one(no_archives).unwrap()), None);
    let log64 = LogLength64 {
        log_length: 1,
        blocks: vec![],
        archived_blocks: vec![],
    };
    assert_eq!(one(candid::encode_one(log64).unwrap()), None);
    let no_id = BlocksWithoutId {
        log_length: Nat::from(1u8),
        blocks: vec![NoId { block: nat(1) }],
        archived_blocks: vec![],
    };
    assert_eq!(one(candid::encode_one(no_id).unwrap()), None);
    // Not Candid at all, or cut short.
    assert_eq!(read_page(b"DIDL"), None);
    let whole =
        candid::encode_one(test_ledger::page(1, vec![(0, test_ledger_transfer())])).unwrap();
    for n in 0..whole.len() {
        assert_eq!(read_page(&whole[..n]), None, "cut at {n}");
    }
}

#[test]
fn text_that_is_not_utf8_goes_to_candid() {
    let bytes =
        candid::encode_one(test_ledger::page(1, vec![(0, map(vec![("k", text("é"))]))])).unwrap();
    assert!(read_page(&bytes).is_some());
    // "é" is c3 a9: make it an invalid sequence.
    let at = bytes.windows(2).position(|w| w == [0xc3, 0xa9]).unwrap();
    let mut bad = bytes.clone();
    bad[at + 1] = 0x41;
    assert_eq!(read_page(&bad), None);
    assert!(candid::decode_one::<test_ledger::GetBlocksResult>(&bad).is_err());
}

#[test]
fn a_block_id_of_another_type_and_values_nested_too_deep_go_to_candid() {
    #[derive(CandidType)]
    struct BlockWithId64 {
        id: u64,
        block: test_ledger::Value,
    }
    #[derive(CandidType)]
    struct Ids64 {
        log_length: Nat,
        blocks: Vec<BlockWithId64>,
        archived_blocks: Vec<test_ledger::ArchivedBlocks>,
    }
    let ids64 = Ids64 {
        log_length: Nat::from(1u8),
        blocks: vec![BlockWithId64 {
            id: 0,
            block: nat(1),
        }],
        archived_blocks: vec![],
    };
    assert_eq!(read_page(&candid::encode_one(ids64).unwrap()), None);
    let nested = |depth: usize| {
        let mut v = nat(1);
        for _ in 0..depth {
            v = V::Array(vec![v]);
        }
        let block = map(vec![("phash", v), ("tx", map(vec![("amt", nat(2))]))]);
        read_page(&candid::encode_one(test_ledger::page(1, vec![(0, block)])).unwrap())
    };
    assert!(nested(60).is_some());
    assert_eq!(nested(100), None);
}
