//! The wire fast paths read and write exactly what `candid` does: a message they accept decodes
//! to the same value with `candid`, and the answers they write are `candid`'s bytes.

use candid::{CandidType, Decode, Encode, Nat, Principal};
use proptest::prelude::*;
use serde_bytes::ByteBuf;
use tool_host_engine::messages::{call_tool_args, confirm_args, log_length, tool_reply};
use tool_host_engine::reconcile::icrc3::{
    ArchiveFn, ArchivedBlocks, BlockWithId, GetBlocksRequest, GetBlocksResult, Value,
};
use tool_host_engine::types::{ApiError, CallToolArgs, ConfirmArgs, IssueView, ToolResult};

fn principal() -> impl Strategy<Value = Principal> {
    proptest::collection::vec(any::<u8>(), 0..=29).prop_map(|b| Principal::from_slice(&b))
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![".{0,40}", "[a-z_]{0,12}", Just(String::new())]
}

fn issue() -> impl Strategy<Value = IssueView> {
    (text(), text(), text(), text()).prop_map(|(param, path, code, message)| IssueView {
        param,
        path,
        code,
        message,
    })
}

fn answer() -> impl Strategy<Value = Result<ToolResult, ApiError>> {
    prop_oneof![
        (text(), text(), any::<bool>(), proptest::option::of(text())).prop_map(
            |(content, structured, is_error, outcome)| Ok(ToolResult {
                content,
                structured,
                is_error,
                outcome,
            })
        ),
        (text(), text(), proptest::collection::vec(issue(), 0..4)).prop_map(
            |(code, message, issues)| Err(ApiError {
                code,
                message,
                issues,
            })
        ),
    ]
}

proptest! {
    #[test]
    fn answers_are_candids_bytes(a in answer()) {
        prop_assert_eq!(tool_reply(&a), candid::encode_one(&a).unwrap());
        // The interface's named `ToolCallResult`: names are not on the wire, the bytes agree.
        let named = tool_host_engine::types::ToolCallResult::from(a.clone());
        prop_assert_eq!(tool_reply(&a), candid::encode_one(&named).unwrap());
    }

    #[test]
    fn call_tool_args_read_as_candid_reads_them(
        name in text(), input in text(), owner in proptest::option::of(principal()),
        turn in proptest::option::of(any::<u64>())
    ) {
        let args = CallToolArgs { name, input, owner, turn };
        let bytes = Encode!(&args).unwrap();
        prop_assert_eq!(call_tool_args(&bytes), Some(args));
    }

    /// An input padded with runs of spaces (beside and inside its text, as a model pads a
    /// tool input), now and then one byte of it changed to a byte that is not a space or not
    /// UTF-8: read as `candid` reads it, or left to it (which refuses what is not UTF-8).
    #[test]
    fn padded_inputs_read_as_candid_reads_them(
        parts in proptest::collection::vec((text(), 0usize..300), 1..4),
        odd in proptest::option::of((
            any::<prop::sample::Index>(),
            prop_oneof![Just(0xffu8), Just(0xc3u8), Just(0x80u8), Just(b'\n'), Just(b'x')],
        )),
    ) {
        let mut input: Vec<u8> = vec![];
        for (t, n) in parts {
            input.extend(t.into_bytes());
            input.extend(vec![b' '; n]);
        }
        if let (Some((at, b)), false) = (odd, input.is_empty()) {
            let i = at.index(input.len());
            input[i] = b;
        }
        // Candid's encoder takes only text: a placeholder of the input's length, replaced
        // (the last field's text ends the message: found from the end, never in the header).
        let args = CallToolArgs {
            name: "t".into(),
            input: "\u{1}".repeat(input.len()),
            owner: None,
            turn: None,
        };
        let mut bytes = Encode!(&args).unwrap();
        if !input.is_empty() {
            let at = bytes
                .windows(input.len())
                .rposition(|w| w.iter().all(|b| *b == 1))
                .unwrap();
            bytes[at..at + input.len()].copy_from_slice(&input);
        }
        let candid = Decode!(&bytes, CallToolArgs).ok();
        match call_tool_args(&bytes) {
            Some(a) => prop_assert_eq!(Some(a), candid),
            None => prop_assert_eq!(candid, None),
        }
    }

    #[test]
    fn confirm_args_read_as_candid_reads_them(
        intent_id in any::<u64>(), digest in proptest::collection::vec(any::<u8>(), 0..40)
    ) {
        let args = ConfirmArgs { intent_id, digest: ByteBuf::from(digest) };
        let bytes = Encode!(&args).unwrap();
        prop_assert_eq!(confirm_args(&bytes), Some(args));
    }

    /// Whatever the bytes, the readers never panic, and what they accept `candid` accepts
    /// with the same value.
    #[test]
    fn arbitrary_bytes_are_read_as_candid_reads_them_or_left_to_it(
        tail in proptest::collection::vec(any::<u8>(), 0..80)
    ) {
        let mut bytes = b"DIDL".to_vec();
        bytes.extend(tail);
        if let Some(a) = call_tool_args(&bytes) {
            prop_assert_eq!(Some(a), Decode!(&bytes, CallToolArgs).ok());
        }
        if let Some(a) = confirm_args(&bytes) {
            prop_assert_eq!(Some(a), Decode!(&bytes, ConfirmArgs).ok());
        }
        if let Some(n) = log_length(&bytes) {
            let r = Decode!(&bytes, GetBlocksResult).ok().map(|r| r.log_length);
            prop_assert_eq!(r, Some(Nat::from(n)));
        }
    }

    /// Single-byte changes of a valid message: same value as `candid`, or left to it.
    #[test]
    fn mutated_messages_are_read_as_candid_reads_them_or_left_to_it(
        at in any::<prop::sample::Index>(), byte in any::<u8>(), owner in proptest::option::of(principal())
    ) {
        let args = CallToolArgs { name: "prepare_icrc1_transfer".into(), input: "{}".into(), owner, turn: Some(7) };
        let mut bytes = Encode!(&args).unwrap();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        if let Some(a) = call_tool_args(&bytes) {
            prop_assert_eq!(Some(a), Decode!(&bytes, CallToolArgs).ok());
        }
    }
}

/// Other record shapes that `candid` reads as a `CallToolArgs`.
#[derive(CandidType)]
struct WithExtra {
    name: String,
    input: String,
    owner: Option<Principal>,
    trace: Vec<Option<String>>,
}

#[derive(CandidType)]
struct NoOwner {
    name: String,
    input: String,
}

#[derive(CandidType)]
struct NullOwner {
    name: String,
    input: String,
    owner: (),
}

#[derive(CandidType)]
struct TextOwner {
    name: String,
    input: String,
    owner: Option<String>,
}

#[test]
fn extra_fields_are_skipped_and_an_absent_or_null_owner_is_none() {
    let p = Principal::from_slice(&[1, 2, 3]);
    let extra = Encode!(&WithExtra {
        name: "n".into(),
        input: "i".into(),
        owner: Some(p),
        trace: vec![None, Some("x".into())],
    })
    .unwrap();
    let want = CallToolArgs {
        name: "n".into(),
        input: "i".into(),
        owner: Some(p),
        turn: None,
    };
    assert_eq!(call_tool_args(&extra), Some(want.clone()));
    assert_eq!(Decode!(&extra, CallToolArgs).unwrap(), want);

    for bytes in [
        Encode!(&NoOwner {
            name: "n".into(),
            input: "i".into()
        })
        .unwrap(),
        Encode!(&NullOwner {
            name: "n".into(),
            input: "i".into(),
            owner: ()
        })
        .unwrap(),
    ] {
        let a = call_tool_args(&bytes).expect("read on the fast path");
        assert_eq!(a.owner, None);
        assert_eq!(Decode!(&bytes, CallToolArgs).unwrap(), a);
    }
}

#[test]
fn other_shapes_are_left_to_candid() {
    // `opt text` where `opt principal` is expected: candid reads none (its special opt rule).
    let text_owner = Encode!(&TextOwner {
        name: "n".into(),
        input: "i".into(),
        owner: Some("x".into()),
    })
    .unwrap();
    assert_eq!(call_tool_args(&text_owner), None);
    assert_eq!(Decode!(&text_owner, CallToolArgs).unwrap().owner, None);

    let good = Encode!(&CallToolArgs {
        name: "n".into(),
        input: "i".into(),
        owner: None,
        turn: None,
    })
    .unwrap();
    // Trailing bytes, two arguments, no argument, a missing field.
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(call_tool_args(&trailing), None);
    let two = Encode!(
        &CallToolArgs {
            name: "n".into(),
            input: "i".into(),
            owner: None,
            turn: None
        },
        &1u8
    )
    .unwrap();
    assert_eq!(call_tool_args(&two), None);
    assert_eq!(call_tool_args(b"DIDL\x00\x00"), None);
    let missing = Encode!(&("n".to_string(),)).unwrap();
    assert_eq!(call_tool_args(&missing), None);
    // Invalid UTF-8 in a text.
    let mut bad = good.clone();
    let at = bad.iter().rposition(|b| *b == b'i').unwrap();
    bad[at] = 0xff;
    assert_eq!(call_tool_args(&bad), None);
    assert!(Decode!(&bad, CallToolArgs).is_err());
}

fn blocks(n: usize) -> Vec<BlockWithId> {
    (0..n)
        .map(|i| BlockWithId {
            id: Nat::from(i),
            block: Value::Map(vec![
                ("ts".into(), Value::Nat(Nat::from(7u8))),
                (
                    "tx".into(),
                    Value::Array(vec![
                        Value::Blob(ByteBuf::from(vec![1, 2])),
                        Value::Text("x".into()),
                    ]),
                ),
            ]),
        })
        .collect()
}

#[test]
fn the_log_length_is_read_past_the_blocks() {
    for n in [0, 1, 3] {
        let r = GetBlocksResult {
            log_length: Nat::from(123_456u64),
            blocks: blocks(n),
            archived_blocks: vec![],
        };
        assert_eq!(log_length(&Encode!(&r).unwrap()), Some(123_456));
    }
    // A log length over 64 bits, and archived blocks (function references), go to candid.
    let huge = GetBlocksResult {
        log_length: Nat::from(u128::MAX),
        blocks: vec![],
        archived_blocks: vec![],
    };
    assert_eq!(log_length(&Encode!(&huge).unwrap()), None);
    let archived = GetBlocksResult {
        log_length: Nat::from(5u8),
        blocks: vec![],
        archived_blocks: vec![ArchivedBlocks {
            args: vec![GetBlocksRequest {
                start: Nat::from(0u8),
                length: Nat::from(1u8),
            }],
            callback: ArchiveFn::new(Principal::anonymous(), "get_blocks".into()),
        }],
    };
    assert_eq!(log_length(&Encode!(&archived).unwrap()), None);
}

#[derive(CandidType)]
struct TextTurn {
    name: String,
    input: String,
    owner: Option<Principal>,
    turn: Option<String>,
}

/// `turn` (new with the bus) is read on the fast path; a client that does not send it (an
/// older one) reads as no turn; another type for it is left to `candid`.
#[test]
fn a_turn_is_read_on_the_fast_path_and_its_absence_is_no_turn() {
    let with = CallToolArgs {
        name: "n".into(),
        input: "i".into(),
        owner: None,
        turn: Some(u64::MAX),
    };
    assert_eq!(call_tool_args(&Encode!(&with).unwrap()), Some(with));
    let old = Encode!(&NoOwner {
        name: "n".into(),
        input: "i".into()
    })
    .unwrap();
    assert_eq!(call_tool_args(&old).expect("fast path").turn, None);
    let text_turn = Encode!(&TextTurn {
        name: "n".into(),
        input: "i".into(),
        owner: None,
        turn: Some("7".into()),
    })
    .unwrap();
    assert_eq!(call_tool_args(&text_turn), None);
    assert_eq!(Decode!(&text_turn, CallToolArgs).unwrap().turn, None);
}
