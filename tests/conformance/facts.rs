//! What each ledger answers where the test ledger and DFINITY's cycles ledger differ (and where
//! they agree, so a reader of the tool host's code knows what both do): the ICRC-3 block of
//! every kind of transaction, `icrc3_get_blocks` paging, the standards and metadata they list,
//! error answers, the tip certificate. Each fact asserts the exact answer of each ledger; the
//! list of differences in `docs/test-ledger.md` is taken from here.

use crate::env::{caller, Env};
use candid::{Nat, Principal};
use serde_bytes::ByteBuf;
use test_ledger::hash::hash_value;
use test_ledger::types::{self as lt, Value};
use tool_host_tests::backend::{Backend, BackendError, BackendExt};
use tool_host_tests::clients::{nat_u64, CyclesLedgerArgs, CyclesLedgerUpgrade, Depositor, Ledger};
use tool_host_tests::ledgers::LedgerKind;
use tool_host_tests::world::account;

pub type Fact = fn(&Env, LedgerKind) -> Result<(), String>;

pub fn facts() -> Vec<(&'static str, Fact)> {
    vec![
        ("transfer_approve_transfer_from_blocks", transfer_blocks),
        ("mint_and_burn_blocks", mint_and_burn_blocks),
        ("get_blocks_ranges_and_page_limit", get_blocks_paging),
        ("standards_block_types_metadata", standards_and_metadata),
        ("error_answers", error_answers),
        ("tip_certificate", tip_certificate),
    ]
}

type R<T = ()> = Result<T, String>;

fn e(err: BackendError) -> String {
    err.to_string()
}

fn check<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> R {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}:\n  got  {got:?}\n  want {want:?}"))
    }
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// `Array [Blob owner]` or `Array [Blob owner, Blob subaccount]`.
fn acc(owner: Principal, sub: Option<[u8; 32]>) -> Value {
    let mut parts = vec![Value::blob(owner.as_slice())];
    if let Some(s) = sub {
        parts.push(Value::blob(s.to_vec()));
    }
    Value::Array(parts)
}

fn blocks(b: &mut dyn Backend, ledger: Principal, ranges: &[(u64, u64)]) -> R<lt::GetBlocksResult> {
    let args: lt::GetBlocksArgs = ranges
        .iter()
        .map(|(s, l)| lt::GetBlocksRequest {
            start: Nat::from(*s),
            length: Nat::from(*l),
        })
        .collect();
    b.query_typed(ledger, Principal::anonymous(), "icrc3_get_blocks", (args,))
        .map(|(r,)| r)
        .map_err(e)
}

/// Block `i`'s `ts` and `phash` (the ICRC-3 hash of block `i - 1`, checked): what an expected
/// block takes from the real one.
fn ts_phash(all: &[Value], i: usize) -> R<(Value, Option<Value>)> {
    let ts = all[i]
        .get("ts")
        .cloned()
        .ok_or(format!("block {i} has no ts"))?;
    let phash = match i {
        0 => None,
        _ => Some(Value::blob(hash_value(&all[i - 1]).to_vec())),
    };
    check(
        &format!(
            "block {i}'s phash is the ICRC-3 hash of block {}",
            i.saturating_sub(1)
        ),
        all[i].get("phash").cloned(),
        phash.clone(),
    )?;
    Ok((ts, phash))
}

/// A whole block: top-level `fee` (what the ledger charged, when written), `phash`, `ts`, `tx`;
/// `btype` on the test ledger. Keys in the order both ledgers write them (sorted).
fn block(
    kind: LedgerKind,
    btype: &str,
    fee: Option<u64>,
    (ts, phash): (Value, Option<Value>),
    tx: Value,
) -> Value {
    let mut m = vec![];
    if kind == LedgerKind::Test {
        m.push(("btype", Value::text(btype)));
    }
    if let Some(f) = fee {
        m.push(("fee", Value::nat(f)));
    }
    if let Some(p) = phash {
        m.push(("phash", p));
    }
    m.push(("ts", ts));
    m.push(("tx", tx));
    map(m)
}

/// `tx.op` on the cycles ledger (it writes no `btype`): inserted at its sorted place.
fn with_op(kind: LedgerKind, op: &str, mut tx: Vec<(&'static str, Value)>) -> Value {
    if kind == LedgerKind::Cycles {
        tx.push(("op", Value::text(op)));
        tx.sort_by(|a, b| a.0.cmp(b.0));
    }
    map(tx)
}

fn all_blocks(b: &mut dyn Backend, ledger: Principal) -> R<Vec<Value>> {
    let r = blocks(b, ledger, &[(0, 1_000)])?;
    Ok(r.blocks.into_iter().map(|b| b.block).collect())
}

/// `icrc1_transfer` (memo and `created_at_time`, fee not stated; then fee stated with the
/// default subaccount given), `icrc2_approve` (every optional field) and `icrc2_transfer_from`.
fn transfer_blocks(env: &Env, kind: LedgerKind) -> R {
    env.with_backend(|b, ledger, _| {
        let l = Ledger(ledger);
        let fee = nat_u64(&l.fee(b).map_err(e)?);
        let (root, to, spender, dest) = (caller(0), caller(101), caller(102), caller(103));
        let t0 = b.time_nanos();
        let first = l.log_length(b).map_err(e)? as usize;
        let transfer = |b: &mut dyn Backend, arg| -> R {
            l.transfer(b, root, arg)
                .map_err(e)?
                .map(|_| ())
                .map_err(|x| format!("{x:?}"))
        };
        transfer(
            b,
            lt::TransferArg {
                from_subaccount: None,
                to: account(to),
                amount: Nat::from(7u8),
                fee: None,
                memo: Some(ByteBuf::from(b"order-7".to_vec())),
                created_at_time: Some(t0),
            },
        )?;
        transfer(
            b,
            lt::TransferArg {
                from_subaccount: Some(ByteBuf::from(vec![0; 32])),
                to: lt::Account {
                    owner: to,
                    subaccount: Some(ByteBuf::from(vec![1; 32])),
                },
                amount: Nat::from(8u8),
                fee: Some(Nat::from(fee)),
                memo: None,
                created_at_time: None,
            },
        )?;
        let expires = t0 + 3_600_000_000_000;
        l.approve(
            b,
            root,
            lt::ApproveArgs {
                from_subaccount: None,
                spender: account(spender),
                amount: Nat::from(10 * fee),
                expected_allowance: Some(Nat::from(0u8)),
                expires_at: Some(expires),
                fee: None,
                memo: Some(ByteBuf::from(b"ap".to_vec())),
                created_at_time: Some(t0),
            },
        )
        .map_err(e)?
        .map_err(|x| format!("{x:?}"))?;
        let arg = lt::TransferFromArgs {
            spender_subaccount: None,
            from: account(root),
            to: account(dest),
            amount: Nat::from(9u8),
            fee: None,
            memo: None,
            created_at_time: Some(t0),
        };
        let (r,): (Result<Nat, lt::TransferFromError>,) = b
            .update_typed(ledger, spender, "icrc2_transfer_from", (arg,))
            .map_err(e)?;
        r.map_err(|x| format!("{x:?}"))?;

        let all = all_blocks(b, ledger)?;
        if all.len() != first + 4 {
            return Err(format!("{} blocks, expected {}", all.len(), first + 4));
        }
        let zero = Some([0u8; 32]);
        let want = [
            block(
                kind,
                "1xfer",
                Some(fee),
                ts_phash(&all, first)?,
                with_op(
                    kind,
                    "xfer",
                    vec![
                        ("amt", Value::nat(7u8)),
                        ("from", acc(root, None)),
                        ("memo", Value::blob(b"order-7".to_vec())),
                        ("to", acc(to, None)),
                        ("ts", Value::nat(t0)),
                    ],
                ),
            ),
            // A stated fee is in `tx`, and the block has no `fee` of its own.
            block(
                kind,
                "1xfer",
                None,
                ts_phash(&all, first + 1)?,
                with_op(
                    kind,
                    "xfer",
                    vec![
                        ("amt", Value::nat(8u8)),
                        ("fee", Value::nat(fee)),
                        ("from", acc(root, zero)),
                        ("to", acc(to, Some([1; 32]))),
                    ],
                ),
            ),
            block(
                kind,
                "2approve",
                Some(fee),
                ts_phash(&all, first + 2)?,
                with_op(
                    kind,
                    "approve",
                    vec![
                        ("amt", Value::nat(10 * fee)),
                        ("expected_allowance", Value::nat(0u8)),
                        ("expires_at", Value::nat(expires)),
                        ("from", acc(root, None)),
                        ("memo", Value::blob(b"ap".to_vec())),
                        ("spender", acc(spender, None)),
                        ("ts", Value::nat(t0)),
                    ],
                ),
            ),
            // transfer_from: `2xfer` on the test ledger, `xfer` with a `spender` on the cycles
            // ledger.
            block(
                kind,
                "2xfer",
                Some(fee),
                ts_phash(&all, first + 3)?,
                with_op(
                    kind,
                    "xfer",
                    vec![
                        ("amt", Value::nat(9u8)),
                        ("from", acc(root, None)),
                        ("spender", acc(spender, None)),
                        ("to", acc(dest, None)),
                        ("ts", Value::nat(t0)),
                    ],
                ),
            ),
        ];
        for (i, want) in want.iter().enumerate() {
            check(&format!("block {}", first + i), &all[first + i], want)?;
        }
        // `ts` is the ledger's time when the block was made.
        for (i, blk) in all[first..].iter().enumerate() {
            match blk.get("ts") {
                Some(Value::Nat(n)) if n.0 >= t0.into() => {}
                other => return Err(format!("block {}: ts {other:?} before {t0}", first + i)),
            }
        }
        Ok(())
    })
}

#[derive(candid::CandidType)]
struct WithdrawArgs {
    amount: Nat,
    from_subaccount: Option<ByteBuf>,
    to: Principal,
    created_at_time: Option<u64>,
}

/// Mints and burns. Test ledger: an initial balance and a transfer from the minting account
/// are `1mint` blocks (no fee), a transfer to the minting account a `1burn` (no fee). Cycles
/// ledger: initial balances and `deposit` are `op = "mint"` blocks whose `tx.fee` is the
/// deposit fee (10^8) and whose block `fee` is 0; `withdraw` is an `op = "burn"` block with the
/// withdrawal's target principal in `memo` and the fee as the block's `fee`.
fn mint_and_burn_blocks(env: &Env, kind: LedgerKind) -> R {
    env.with_backend(|b, ledger, depositor| {
        let l = Ledger(ledger);
        let fee = nat_u64(&l.fee(b).map_err(e)?);
        let (root, who) = (caller(0), caller(111));
        let unit = 10u64.pow(u32::from(l.decimals(b).map_err(e)?));
        match kind {
            LedgerKind::Test => {
                let minter = crate::minter();
                l.transfer(
                    b,
                    minter,
                    lt::TransferArg {
                        from_subaccount: None,
                        to: account(who),
                        amount: Nat::from(unit),
                        fee: None,
                        memo: None,
                        created_at_time: None,
                    },
                )
                .map_err(e)?
                .map_err(|x| format!("{x:?}"))?;
                l.transfer(
                    b,
                    root,
                    lt::TransferArg {
                        from_subaccount: None,
                        to: account(minter),
                        amount: Nat::from(fee),
                        fee: None,
                        memo: None,
                        created_at_time: None,
                    },
                )
                .map_err(e)?
                .map_err(|x| format!("{x:?}"))?;
                let all = all_blocks(b, ledger)?;
                let mint = |a: Principal, amt: u64| {
                    map(vec![("amt", Value::nat(amt)), ("to", acc(a, None))])
                };
                let want = [
                    block(
                        kind,
                        "1mint",
                        None,
                        ts_phash(&all, 0)?,
                        mint(root, 1_000 * unit),
                    ),
                    block(kind, "1mint", None, ts_phash(&all, 1)?, mint(who, unit)),
                    block(
                        kind,
                        "1burn",
                        None,
                        ts_phash(&all, 2)?,
                        map(vec![("amt", Value::nat(fee)), ("from", acc(root, None))]),
                    ),
                ];
                check("the blocks", all.as_slice(), &want[..])
            }
            LedgerKind::Cycles => {
                let d = Depositor(depositor.ok_or("no depositor")?);
                let cycles = u128::from(unit) + u128::from(fee);
                b.add_cycles(d.0, cycles).map_err(e)?;
                let r = d.deposit(b, root, &account(who), cycles).map_err(e)?;
                check(
                    "deposit answers the minted balance",
                    nat_u64(&r.balance),
                    unit,
                )?;
                let target = b.create_canister(&[crate::controller()]).map_err(e)?;
                let before = b.cycle_balance(target).map_err(e)?;
                let arg = WithdrawArgs {
                    amount: Nat::from(unit),
                    from_subaccount: None,
                    to: target,
                    created_at_time: None,
                };
                let (r,): (Result<Nat, candid::Reserved>,) = b
                    .update_typed(ledger, root, "withdraw", (arg,))
                    .map_err(e)?;
                r.map_err(|_| "withdraw failed".to_string())?;
                check(
                    "withdraw deposits the cycles into the target",
                    b.cycle_balance(target).map_err(e)? - before,
                    u128::from(unit),
                )?;
                let all = all_blocks(b, ledger)?;
                let mint = |a: Principal, amt: u64| {
                    map(vec![
                        ("amt", Value::nat(amt)),
                        ("fee", Value::nat(fee)),
                        ("op", Value::text("mint")),
                        ("to", acc(a, None)),
                    ])
                };
                // The burn's memo: CBOR of the target principal (array of one byte string).
                let mut memo = vec![0x81, 0x40 + target.as_slice().len() as u8];
                memo.extend_from_slice(target.as_slice());
                let want = [
                    block(
                        kind,
                        "",
                        Some(0),
                        ts_phash(&all, 0)?,
                        mint(root, 1_000 * unit),
                    ),
                    block(kind, "", Some(0), ts_phash(&all, 1)?, mint(who, unit)),
                    block(
                        kind,
                        "",
                        Some(fee),
                        ts_phash(&all, 2)?,
                        map(vec![
                            ("amt", Value::nat(unit)),
                            ("from", acc(root, None)),
                            ("memo", Value::blob(memo)),
                            ("op", Value::text("burn")),
                        ]),
                    ),
                ];
                check("the blocks", all.as_slice(), &want[..])
            }
        }
    })
}

/// `icrc3_get_blocks` with several ranges: blocks in request order, overlaps repeated, ranges
/// past the end give nothing; no archives. The cycles ledger caps a call at its
/// `max_blocks_per_request` (install argument; 1 000 here, 3 after an upgrade below) in all,
/// the test ledger at a fixed 1 000.
fn get_blocks_paging(env: &Env, kind: LedgerKind) -> R {
    env.with_backend(|b, ledger, _| {
        let l = Ledger(ledger);
        for n in 0..4u8 {
            l.transfer(
                b,
                caller(0),
                lt::TransferArg {
                    from_subaccount: None,
                    to: account(caller(120 + u32::from(n))),
                    amount: Nat::from(1u8),
                    fee: None,
                    memo: None,
                    created_at_time: None,
                },
            )
            .map_err(e)?
            .map_err(|x| format!("{x:?}"))?;
        }
        let ids = |r: &lt::GetBlocksResult| -> Vec<u64> {
            r.blocks.iter().map(|b| nat_u64(&b.id)).collect()
        };
        let r = blocks(b, ledger, &[(1, 2), (0, 2), (50, 2), (4, 10)])?;
        check("ids in request order", ids(&r), vec![1, 2, 0, 1, 4])?;
        check("log length", nat_u64(&r.log_length), 5)?;
        check("archived blocks", r.archived_blocks.len(), 0)?;
        let (archives,): (Vec<lt::ICRC3ArchiveInfo>,) = b
            .query_typed(
                ledger,
                Principal::anonymous(),
                "icrc3_get_archives",
                (lt::GetArchivesArgs { from: None },),
            )
            .map_err(e)?;
        check("archives", archives.len(), 0)?;
        if kind == LedgerKind::Cycles {
            let arg = CyclesLedgerArgs::Upgrade(Some(CyclesLedgerUpgrade {
                max_blocks_per_request: Some(3),
            }));
            b.install(
                ledger,
                &tool_host_tests::wasm::cycles_ledger()
                    .map_err(|x| x.to_string())?
                    .ledger,
                candid::encode_args((Some(arg),)).expect("encodes"),
                tool_host_tests::backend::InstallMode::Upgrade,
                crate::controller(),
            )
            .map_err(e)?;
            let r = blocks(b, ledger, &[(0, 2), (1, 5)])?;
            check("at most 3 blocks in all", ids(&r), vec![0, 1, 1])?;
            check("log length", nat_u64(&r.log_length), 5)?;
        }
        Ok(())
    })
}

fn standards_and_metadata(env: &Env, kind: LedgerKind) -> R {
    env.with_backend(|b, ledger, _| {
        let anon = Principal::anonymous();
        let (standards,): (Vec<lt::SupportedStandard>,) = b
            .query_typed(ledger, anon, "icrc1_supported_standards", ())
            .map_err(e)?;
        let got: Vec<(String, String)> = standards.into_iter().map(|s| (s.name, s.url)).collect();
        let own = |n: &str, u: &str| (n.to_string(), u.to_string());
        let want = match kind {
            LedgerKind::Test => vec![
                own("ICRC-1", "https://github.com/dfinity/ICRC-1"),
                own(
                    "ICRC-2",
                    "https://github.com/dfinity/ICRC-1/tree/main/standards/ICRC-2",
                ),
                own(
                    "ICRC-3",
                    "https://github.com/dfinity/ICRC-1/tree/main/standards/ICRC-3",
                ),
            ],
            LedgerKind::Cycles => vec![
                own(
                    "ICRC-1",
                    "https://github.com/dfinity/ICRC-1/blob/main/standards/ICRC-1/README.md",
                ),
                own(
                    "ICRC-2",
                    "https://github.com/dfinity/ICRC-1/blob/main/standards/ICRC-2/README.md",
                ),
                own(
                    "ICRC-3",
                    "https://github.com/dfinity/ICRC-1/blob/main/standards/ICRC-3/README.md",
                ),
                own(
                    "ICRC-10",
                    "https://github.com/dfinity/ICRC/blob/main/ICRCs/ICRC-10/ICRC-10.md",
                ),
                own(
                    "ICRC-103",
                    "https://github.com/dfinity/ICRC/blob/main/ICRCs/ICRC-103/ICRC-103.md",
                ),
                own(
                    "ICRC-106",
                    "https://github.com/dfinity/ICRC/blob/main/ICRCs/ICRC-106/ICRC-106.md",
                ),
            ],
        };
        check("icrc1_supported_standards", got.clone(), want)?;
        let icrc10: Result<(Vec<lt::SupportedStandard>,), _> =
            b.query_typed(ledger, anon, "icrc10_supported_standards", ());
        match (kind, icrc10) {
            (LedgerKind::Test, Err(BackendError::Reject { code: 5, .. })) => {}
            (LedgerKind::Cycles, Ok((s,))) => check(
                "icrc10_supported_standards = icrc1_supported_standards",
                s.into_iter().map(|s| (s.name, s.url)).collect::<Vec<_>>(),
                got,
            )?,
            (_, other) => return Err(format!("icrc10_supported_standards: {other:?}")),
        }

        let (types,): (Vec<lt::BlockType>,) = b
            .query_typed(ledger, anon, "icrc3_supported_block_types", ())
            .map_err(e)?;
        let names: Vec<String> = types.into_iter().map(|t| t.block_type).collect();
        let want: &[&str] = match kind {
            LedgerKind::Test => &["1xfer", "1mint", "1burn", "2approve", "2xfer"],
            // Lists btype names although its blocks carry `tx.op`, and no `1xfer`.
            LedgerKind::Cycles => &["1burn", "1mint", "2xfer", "2approve"],
        };
        check(
            "icrc3_supported_block_types",
            names,
            want.iter().map(|s| s.to_string()).collect(),
        )?;

        let (minting,): (Option<lt::Account>,) = b
            .query_typed(ledger, anon, "icrc1_minting_account", ())
            .map_err(e)?;
        let want = match kind {
            LedgerKind::Test => Some(account(crate::minter())),
            LedgerKind::Cycles => None,
        };
        check("icrc1_minting_account", minting, want)?;

        let (meta,): (Vec<(String, lt::MetadataValue)>,) = b
            .query_typed(ledger, anon, "icrc1_metadata", ())
            .map_err(e)?;
        let keys: Vec<&str> = meta.iter().map(|(k, _)| k.as_str()).collect();
        let want: &[&str] = match kind {
            LedgerKind::Test => &[
                "icrc1:name",
                "icrc1:symbol",
                "icrc1:decimals",
                "icrc1:fee",
                "icrc1:max_memo_length",
            ],
            LedgerKind::Cycles => &[
                "icrc1:decimals",
                "icrc1:name",
                "icrc1:symbol",
                "icrc1:fee",
                "icrc1:max_memo_length",
                "dfn:max_blocks_per_request",
                "icrc1:logo",
            ],
        };
        check("icrc1_metadata keys", keys, want.to_vec())
    })
}

/// A ledger's answer to one call: its typed reply, or a reject (code, first line).
#[derive(Debug, PartialEq)]
enum Answer {
    Transfer(Result<Nat, lt::TransferError>),
    Approve(Result<Nat, lt::ApproveError>),
    Reject(u32, String),
}

fn answer(
    b: &mut dyn Backend,
    ledger: Principal,
    who: Principal,
    method: &str,
    arg: Vec<u8>,
) -> R<Answer> {
    match b.update(ledger, who, method, arg) {
        Ok(bytes) => Ok(match method {
            "icrc1_transfer" => {
                Answer::Transfer(candid::decode_one(&bytes).map_err(|x| x.to_string())?)
            }
            _ => Answer::Approve(candid::decode_one(&bytes).map_err(|x| x.to_string())?),
        }),
        Err(BackendError::Reject { code, message }) => Ok(Answer::Reject(
            code,
            message.lines().next().unwrap_or_default().to_string(),
        )),
        Err(other) => Err(other.to_string()),
    }
}

fn generic(code: u64, message: &str) -> Answer {
    Answer::Transfer(Err(lt::TransferError::GenericError {
        error_code: Nat::from(code),
        message: message.into(),
    }))
}

fn trap(message: &str) -> Answer {
    Answer::Reject(
        5,
        format!(
            "Error from Canister rwlgt-iiaaa-aaaaa-aaaaa-cai: Canister called `ic0.trap` with message: '{message}'"
        ),
    )
}

/// Answers to calls the standards leave to the ledger, or that the two ledgers check in
/// another order. (The ledger is the first canister, `rwlgt-iiaaa-aaaaa-aaaaa-cai`, in these
/// trials.)
fn error_answers(env: &Env, kind: LedgerKind) -> R {
    env.with_backend(|b, ledger, _| {
        let root = caller(0);
        let now = b.time_nanos();
        let l = Ledger(ledger);
        let unit = 10u64.pow(u32::from(l.decimals(b).map_err(e)?));
        let fee = l.fee(b).map_err(e)?;
        let balance = l.balance(b, &account(root)).map_err(e)?;
        let transfer = |memo: usize, sub: Option<usize>, amount: u64, cat: Option<u64>| {
            candid::encode_one(lt::TransferArg {
                from_subaccount: None,
                to: lt::Account {
                    owner: caller(130),
                    subaccount: sub.map(|n| ByteBuf::from(vec![1; n])),
                },
                amount: Nat::from(amount),
                fee: None,
                memo: Some(ByteBuf::from(vec![7; memo])),
                created_at_time: cat,
            })
            .expect("encodes")
        };
        let approve =
            |spender: Principal, expected: Option<u64>, expires: Option<u64>, fee: Option<u64>| {
                candid::encode_one(lt::ApproveArgs {
                    from_subaccount: None,
                    spender: account(spender),
                    amount: Nat::from(5u8),
                    expected_allowance: expected.map(Nat::from),
                    expires_at: expires,
                    fee: fee.map(Nat::from),
                    memo: None,
                    created_at_time: None,
                })
                .expect("encodes")
            };
        let too_old = now - 25 * 3_600 * 1_000_000_000;
        let test = kind == LedgerKind::Test;
        let pick = |t: Answer, c: Answer| if test { t } else { c };
        let cases: Vec<(&str, Principal, &str, Vec<u8>, Answer)> = vec![
            (
                "a memo of 33 bytes",
                root,
                "icrc1_transfer",
                transfer(33, None, 1, None),
                pick(
                    generic(2, "the memo is 33 bytes long; at most 32 bytes are allowed"),
                    trap("memo length exceeds the maximum of 32 bytes"),
                ),
            ),
            (
                "the anonymous caller",
                Principal::anonymous(),
                "icrc1_transfer",
                transfer(1, None, 1, None),
                pick(
                    generic(
                        1,
                        "the anonymous principal cannot send, approve or spend tokens",
                    ),
                    Answer::Transfer(Err(lt::TransferError::InsufficientFunds {
                        balance: Nat::from(0u8),
                    })),
                ),
            ),
            (
                "created_at_time too old and more than the balance",
                root,
                "icrc1_transfer",
                transfer(1, None, 10_000 * unit, Some(too_old)),
                pick(
                    Answer::Transfer(Err(lt::TransferError::TooOld)),
                    Answer::Transfer(Err(lt::TransferError::InsufficientFunds {
                        balance: balance.clone(),
                    })),
                ),
            ),
            (
                "a self approval",
                root,
                "icrc2_approve",
                approve(root, None, None, None),
                pick(
                    Answer::Approve(Err(lt::ApproveError::GenericError {
                        error_code: Nat::from(5u8),
                        message: "self approval is not allowed: the spender's owner is the caller"
                            .into(),
                    })),
                    trap("self approval is not allowed"),
                ),
            ),
            (
                "a wrong expected_allowance and a wrong fee",
                root,
                "icrc2_approve",
                approve(caller(131), Some(77), None, Some(1)),
                pick(
                    Answer::Approve(Err(lt::ApproveError::BadFee {
                        expected_fee: fee.clone(),
                    })),
                    Answer::Approve(Err(lt::ApproveError::AllowanceChanged {
                        current_allowance: Nat::from(0u8),
                    })),
                ),
            ),
        ];
        for (what, who, method, arg, want) in cases {
            let got = answer(b, ledger, who, method, arg)?;
            check(&format!("{method} with {what}"), got, want)?;
        }
        // A subaccount of 31 bytes: the test ledger answers GenericError 3, the cycles ledger
        // cannot decode the argument (a trap whose message is the Candid error).
        let got = answer(
            b,
            ledger,
            root,
            "icrc1_transfer",
            transfer(1, Some(31), 1, None),
        )?;
        match (kind, &got) {
            (LedgerKind::Test, g)
                if *g == generic(3, "a subaccount must be 32 bytes long, got 31 bytes") => {}
            (LedgerKind::Cycles, Answer::Reject(5, m))
                if m.contains("Fail to decode argument 0") => {}
            _ => {
                return Err(format!(
                    "icrc1_transfer with a subaccount of 31 bytes: {got:?}"
                ))
            }
        }
        // A wrong expected_allowance and an expiry in the past: Expired first on the test
        // ledger, AllowanceChanged first on the cycles ledger.
        let got = answer(
            b,
            ledger,
            root,
            "icrc2_approve",
            approve(caller(131), Some(77), Some(1), None),
        )?;
        match (kind, &got) {
            (LedgerKind::Test, Answer::Approve(Err(lt::ApproveError::Expired { ledger_time })))
                if *ledger_time >= now => {}
            (
                LedgerKind::Cycles,
                Answer::Approve(Err(lt::ApproveError::AllowanceChanged { current_allowance })),
            ) if current_allowance.0 == 0u8.into() => {}
            _ => {
                return Err(format!(
                    "icrc2_approve with a wrong expected_allowance and an expiry past: {got:?}"
                ))
            }
        }
        Ok(())
    })
}

/// `icrc3_get_tip_certificate` in a query call: the system's certificate (on the local host:
/// unsigned, see `docs/local-ic.md`) and the ledger's hash tree of `last_block_hash` and
/// `last_block_index`. Both ledgers certify the tree's root hash; the test ledger's tree
/// carries the CBOR self-describing tag (55799), the cycles ledger's does not.
fn tip_certificate(env: &Env, kind: LedgerKind) -> R {
    use ic_certification::{Certificate, HashTree, LookupResult};
    env.with_backend(|b, ledger, _| {
        let (tip,): (Option<lt::ICRC3DataCertificate>,) = b
            .query_typed(
                ledger,
                Principal::anonymous(),
                "icrc3_get_tip_certificate",
                (),
            )
            .map_err(e)?;
        let tip = tip.ok_or("no tip certificate in a query call")?;
        let tagged = tip.hash_tree.starts_with(&[0xd9, 0xd9, 0xf7]);
        check(
            "the hash tree has the self-describing tag",
            tagged,
            kind == LedgerKind::Test,
        )?;
        let tree: HashTree =
            serde_cbor::from_slice(&tip.hash_tree).map_err(|x| format!("hash tree: {x}"))?;
        let cert: Certificate =
            serde_cbor::from_slice(&tip.certificate).map_err(|x| format!("certificate: {x}"))?;
        let certified = match cert
            .tree
            .lookup_path([b"canister".as_slice(), ledger.as_slice(), b"certified_data"].iter())
        {
            LookupResult::Found(v) => v.to_vec(),
            other => return Err(format!("certified_data: {other:?}")),
        };
        check(
            "certified data = the tree's root hash",
            certified,
            tree.digest().to_vec(),
        )?;
        let all = all_blocks(b, ledger)?;
        let last = all.last().ok_or("no blocks")?;
        let found = |path: &[u8]| match tree.lookup_path([path].iter()) {
            LookupResult::Found(v) => Ok(v.to_vec()),
            other => Err(format!("{}: {other:?}", String::from_utf8_lossy(path))),
        };
        check(
            "last_block_hash",
            found(b"last_block_hash")?,
            hash_value(last).to_vec(),
        )?;
        check(
            "last_block_index (LEB128)",
            found(b"last_block_index")?,
            local_ic::certificate::leb128(all.len() as u64 - 1),
        )
    })
}
