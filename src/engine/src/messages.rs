//! The hot paths' messages read and written with [`tool_host_core::wire`] instead of the
//! general Candid decoder: `call_tool`'s and `confirm`'s arguments, their answer, and the log
//! length in an `icrc3_get_blocks` reply. Each reader answers `None` when a message is not the
//! exact common shape; the caller then decodes it with `candid` (same result, higher cost).

use crate::types::{ApiError, CallToolArgs, ConfirmArgs, IssueView, ToolCallResult, ToolResult};
use serde_bytes::ByteBuf;
use std::sync::OnceLock;
use tool_host_core::wire::{self, label, Reader, Table, Writer};

/// The one argument of a message and its type.
fn one_arg(bytes: &[u8]) -> Option<(Table, Reader<'_>, wire::Ty)> {
    let (table, r) = wire::parse(bytes)?;
    match table.args.as_slice() {
        [t] => {
            let t = *t;
            Some((table, r, t))
        }
        _ => None,
    }
}

/// `call_tool`'s argument.
pub fn call_tool_args(bytes: &[u8]) -> Option<CallToolArgs> {
    let (table, mut r, t) = one_arg(bytes)?;
    let (l_name, l_input, l_owner) = (label("name"), label("input"), label("owner"));
    let l_turn = label("turn");
    let (mut name, mut input, mut owner_ty, mut turn_ty) = (None, None, None, None);
    let (mut owner, mut turn) = (None, None);
    r.record(&table, t, |r, id, ft| {
        if id == l_name {
            name = Some(r.text(ft)?);
        } else if id == l_input {
            input = Some(r.json_text(ft)?);
        } else if id == l_owner {
            owner_ty = Some(ft);
            owner = r.opt_principal(&table, Some(ft))?;
        } else if id == l_turn {
            turn_ty = Some(ft);
            turn = r.opt_nat64(&table, Some(ft))?;
        } else {
            return Some(false);
        }
        Some(true)
    })?;
    if owner_ty.is_none() {
        // An absent `opt` field reads as none.
        owner = r.opt_principal(&table, None)?;
    }
    if turn_ty.is_none() {
        turn = r.opt_nat64(&table, None)?;
    }
    r.at_end().then_some(CallToolArgs {
        name: name?,
        input: input?,
        owner,
        turn,
    })
}

/// `confirm`'s argument.
pub fn confirm_args(bytes: &[u8]) -> Option<ConfirmArgs> {
    let (table, mut r, t) = one_arg(bytes)?;
    let (l_id, l_digest) = (label("intent_id"), label("digest"));
    let (mut intent_id, mut digest) = (None, None);
    r.record(&table, t, |r, id, ft| {
        if id == l_id {
            intent_id = Some(r.nat64(ft)?);
        } else if id == l_digest {
            digest = Some(r.blob(&table, ft)?);
        } else {
            return Some(false);
        }
        Some(true)
    })?;
    r.at_end().then_some(ConfirmArgs {
        intent_id: intent_id?,
        digest: ByteBuf::from(digest?),
    })
}

/// The `log_length` of an `icrc3_get_blocks` reply (the blocks themselves are passed over).
pub fn log_length(bytes: &[u8]) -> Option<u64> {
    let (table, mut r, t) = one_arg(bytes)?;
    let l = label("log_length");
    let mut out = None;
    r.record(&table, t, |r, id, ft| {
        if id != l {
            return Some(false);
        }
        out = Some(r.nat_u64(ft)?);
        Some(true)
    })?;
    if r.at_end() {
        out
    } else {
        None
    }
}

/// The header of `call_tool`'s and `confirm`'s answer as `candid` writes it, and the indexes
/// of its `Ok` and `Err` cases.
fn tool_reply_header() -> &'static (Vec<u8>, u64, u64) {
    static HEADER: OnceLock<(Vec<u8>, u64, u64)> = OnceLock::new();
    HEADER.get_or_init(|| {
        let sample = ToolCallResult::Err(ApiError {
            code: String::new(),
            message: String::new(),
            issues: vec![],
        });
        let bytes = candid::encode_one(&sample).expect("the answer type encodes");
        let (header, table) = wire::header_of(&bytes).expect("candid's own header parses");
        let cases = table
            .args
            .first()
            .and_then(|t| table.variant(*t))
            .expect("the answer is a variant");
        let case = |name: &str| {
            cases
                .iter()
                .position(|(id, _)| *id == label(name))
                .expect("the answer has Ok and Err") as u64
        };
        (header.to_vec(), case("Ok"), case("Err"))
    })
}

/// `call_tool`'s and `confirm`'s answer, the bytes `candid::encode_one` would give. Fields go
/// in label-id order (content, structured, is_error, outcome; code, issues, message; code,
/// path, message, param), which a test checks against `candid`.
pub fn tool_reply(r: &Result<ToolResult, ApiError>) -> Vec<u8> {
    let (header, ok, err) = tool_reply_header();
    match r {
        Ok(t) => {
            let mut w = Writer::new(header, 16 + t.content.len() + t.structured.len());
            w.leb(*ok)
                .text(&t.content)
                .text(&t.structured)
                .bool(t.is_error)
                .opt_text(t.outcome.as_deref());
            w.finish()
        }
        Err(e) => {
            let issues: usize = e
                .issues
                .iter()
                .map(|i| 8 + i.param.len() + i.path.len() + i.code.len() + i.message.len())
                .sum();
            let mut w = Writer::new(header, 16 + e.code.len() + e.message.len() + issues);
            w.leb(*err).text(&e.code).leb(e.issues.len() as u64);
            for IssueView {
                param,
                path,
                code,
                message,
            } in &e.issues
            {
                w.text(code).text(path).text(message).text(param);
            }
            w.text(&e.message);
            w.finish()
        }
    }
}
