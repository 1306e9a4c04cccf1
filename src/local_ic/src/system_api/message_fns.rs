//! `msg_*` functions: arguments, caller, rejects, responding, inspect-message, cycles.

use wasmi::{Caller, Linker};

use super::avail::*;
use super::heap::{blob_copy, blob_size, read_heap, read_utf8, u128_of, write_u128, R};
use super::{charge, contract, exec_for, Env, ExecState, MAX_PAYLOAD};
use crate::errors::RejectCode;
use crate::ic_cost::BYTE_TRANSMISSION_COST_FACTOR;
use crate::messages::Payload;

fn responding<'a>(caller: &'a mut Caller<'_, Env>, name: &str) -> R<&'a mut ExecState> {
    let exec = exec_for(caller, name, U | RQ | NRQ | RY | RT)?;
    if !exec.can_respond || exec.response.is_some() {
        return Err(contract(format!(
            "ic0.{name}: the call has already been responded to (or needs no response)"
        )));
    }
    Ok(exec)
}

pub(super) fn define_message(l: &mut Linker<Env>) {
    const ARG: u16 = I | U | RQ | NRQ | RY | F;
    l.func_wrap("ic0", "msg_arg_data_size", |mut c: Caller<'_, Env>| {
        blob_size(&mut c, "msg_arg_data_size", ARG, |e| Ok(&e.arg))
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_arg_data_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "msg_arg_data_copy", ARG, (d, o, s), |e| Ok(&e.arg))
        },
    )
    .unwrap();
    l.func_wrap("ic0", "msg_caller_size", |mut c: Caller<'_, Env>| {
        blob_size(&mut c, "msg_caller_size", ALL, |e| Ok(e.caller.as_slice()))
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_caller_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "msg_caller_copy", ALL, (d, o, s), |e| {
                Ok(e.caller.as_slice())
            })
        },
    )
    .unwrap();
    // Caller info (signed sender info) is never present for the host's callers.
    l.func_wrap(
        "ic0",
        "msg_caller_info_data_size",
        |mut c: Caller<'_, Env>| blob_size(&mut c, "msg_caller_info_data_size", ALL, |_| Ok(&[])),
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_caller_info_data_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "msg_caller_info_data_copy", ALL, (d, o, s), |_| {
                Ok(&[])
            })
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_caller_info_signer_size",
        |mut c: Caller<'_, Env>| blob_size(&mut c, "msg_caller_info_signer_size", ALL, |_| Ok(&[])),
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_caller_info_signer_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(
                &mut c,
                "msg_caller_info_signer_copy",
                ALL,
                (d, o, s),
                |_| Ok(&[]),
            )
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_reject_code",
        |mut c: Caller<'_, Env>| -> R<i32> {
            let e = exec_for(&mut c, "msg_reject_code", RY | RT)?;
            Ok(e.reject.as_ref().map_or(0, |(code, _)| *code as i32))
        },
    )
    .unwrap();
    fn reject_msg(e: &ExecState) -> R<&[u8]> {
        e.reject
            .as_ref()
            .map(|(_, m)| m.as_bytes())
            .ok_or_else(|| contract("no reject message: this is not a reject callback"))
    }
    l.func_wrap("ic0", "msg_reject_msg_size", |mut c: Caller<'_, Env>| {
        blob_size(&mut c, "msg_reject_msg_size", RT, reject_msg)
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_reject_msg_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "msg_reject_msg_copy", RT, (d, o, s), reject_msg)
        },
    )
    .unwrap();
    l.func_wrap("ic0", "msg_deadline", |mut c: Caller<'_, Env>| -> R<i64> {
        Ok(exec_for(&mut c, "msg_deadline", U | RQ | NRQ | RY | RT)?.deadline as i64)
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_reply_data_append",
        |mut c: Caller<'_, Env>, src: i32, size: i32| {
            responding(&mut c, "msg_reply_data_append")?;
            charge(&mut c, BYTE_TRANSMISSION_COST_FACTOR * size as u32 as u64)?;
            let bytes = read_heap(&c, src as u32 as u64, size as u32 as u64)?;
            let exec = c.data_mut().exec.as_mut().expect("checked");
            if exec.reply_buf.len() + bytes.len() > MAX_PAYLOAD {
                return Err(contract(format!(
                "ic0.msg_reply_data_append: reply exceeds the maximum size of {MAX_PAYLOAD} bytes"
            )));
            }
            exec.reply_buf.extend_from_slice(&bytes);
            Ok(())
        },
    )
    .unwrap();
    l.func_wrap("ic0", "msg_reply", |mut c: Caller<'_, Env>| -> R<()> {
        let exec = responding(&mut c, "msg_reply")?;
        let data = std::mem::take(&mut exec.reply_buf);
        exec.respond(Payload::Reply(data));
        Ok(())
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_reject",
        |mut c: Caller<'_, Env>, src: i32, size: i32| {
            responding(&mut c, "msg_reject")?;
            charge(&mut c, BYTE_TRANSMISSION_COST_FACTOR * size as u32 as u64)?;
            let message = read_utf8(&c, "msg_reject", src, size)?;
            let exec = c.data_mut().exec.as_mut().expect("checked");
            exec.respond(Payload::Reject(RejectCode::CanisterReject, message));
            Ok(())
        },
    )
    .unwrap();
    l.func_wrap("ic0", "msg_method_name_size", |mut c: Caller<'_, Env>| {
        blob_size(&mut c, "msg_method_name_size", F, |e| {
            Ok(e.method_name.as_bytes())
        })
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_method_name_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "msg_method_name_copy", F, (d, o, s), |e| {
                Ok(e.method_name.as_bytes())
            })
        },
    )
    .unwrap();
    l.func_wrap("ic0", "accept_message", |mut c: Caller<'_, Env>| -> R<()> {
        let exec = exec_for(&mut c, "accept_message", F)?;
        if exec.accepted_message {
            return Err(contract("ic0.accept_message called twice"));
        }
        exec.accepted_message = true;
        Ok(())
    })
    .unwrap();
}

pub(super) fn define_cycles(l: &mut Linker<Env>) {
    l.func_wrap(
        "ic0",
        "msg_cycles_available128",
        |mut c: Caller<'_, Env>, dst: i32| {
            let v = exec_for(&mut c, "msg_cycles_available128", U | RQ | RY | RT)?
                .cycles_still_available();
            write_u128(&mut c, dst, v)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_cycles_refunded128",
        |mut c: Caller<'_, Env>, dst: i32| {
            let v = exec_for(&mut c, "msg_cycles_refunded128", RY | RT)?.cycles_refunded;
            write_u128(&mut c, dst, v)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "msg_cycles_accept128",
        |mut c: Caller<'_, Env>, high: i64, low: i64, dst: i32| {
            let exec = exec_for(&mut c, "msg_cycles_accept128", U | RQ | RY | RT)?;
            let n = u128_of(high, low).min(exec.cycles_still_available());
            exec.cycles_accepted += n;
            exec.balance += n;
            write_u128(&mut c, dst, n)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "cycles_burn128",
        |mut c: Caller<'_, Env>, high: i64, low: i64, dst: i32| {
            let exec = exec_for(&mut c, "cycles_burn128", I | G | U | RQ | RY | RT | C | T)?;
            let n = u128_of(high, low).min(exec.balance);
            exec.balance -= n;
            write_u128(&mut c, dst, n)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "canister_cycle_balance128",
        |mut c: Caller<'_, Env>, dst: i32| {
            let v = exec_for(&mut c, "canister_cycle_balance128", ALL)?.balance;
            write_u128(&mut c, dst, v)
        },
    )
    .unwrap();
    // No freezing threshold or reservations are simulated: liquid = balance.
    l.func_wrap(
        "ic0",
        "canister_liquid_cycle_balance128",
        |mut c: Caller<'_, Env>, dst: i32| {
            let v = exec_for(&mut c, "canister_liquid_cycle_balance128", ALL)?.balance;
            write_u128(&mut c, dst, v)
        },
    )
    .unwrap();
}
