//! `call_*` functions: assembling and performing inter-canister calls.

use wasmi::{Caller, Linker};

use super::avail::*;
use super::cost_env_fns::call_cost;
use super::heap::{read_heap, read_principal, read_utf8, u128_of, R};
use super::{
    charge, contract, exec_for, Env, ExecState, NewCall, MAX_CALL_TIMEOUT_SECONDS, MAX_PAYLOAD,
};
use crate::errors::RejectCode;
use crate::ic_cost::BYTE_TRANSMISSION_COST_FACTOR;

fn pending_call<'a>(exec: &'a mut ExecState, name: &str) -> R<&'a mut NewCall> {
    exec.pending_call.as_mut().ok_or_else(|| {
        contract(format!(
            "ic0.{name} called without a call under construction"
        ))
    })
}

pub(super) fn define_calls(l: &mut Linker<Env>) {
    const CALL: u16 = U | RY | RT | T;
    l.func_wrap(
        "ic0",
        "call_new",
        |mut c: Caller<'_, Env>,
         callee_src: i32,
         callee_size: i32,
         name_src: i32,
         name_size: i32,
         reply_fun: i32,
         reply_env: i32,
         reject_fun: i32,
         reject_env: i32| {
            exec_for(&mut c, "call_new", CALL)?;
            charge(&mut c, callee_size as u32 as u64 + name_size as u32 as u64)?;
            let callee = read_principal(&c, "call_new", callee_src, callee_size)?;
            let method = read_utf8(&c, "call_new", name_src, name_size)?;
            let exec = c.data_mut().exec.as_mut().expect("checked");
            exec.discard_pending_call();
            exec.pending_call = Some(NewCall {
                callee,
                method,
                arg: Vec::new(),
                cycles: 0,
                reply: (reply_fun as u32, reply_env as u32),
                reject: (reject_fun as u32, reject_env as u32),
                cleanup: None,
                timeout_seconds: None,
            });
            Ok(())
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "call_on_cleanup",
        |mut c: Caller<'_, Env>, fun: i32, env: i32| {
            let exec = exec_for(&mut c, "call_on_cleanup", CALL)?;
            let call = pending_call(exec, "call_on_cleanup")?;
            if call.cleanup.is_some() {
                return Err(contract(
                    "ic0.call_on_cleanup called twice for the same call",
                ));
            }
            call.cleanup = Some((fun as u32, env as u32));
            Ok(())
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "call_data_append",
        |mut c: Caller<'_, Env>, src: i32, size: i32| {
            let exec = exec_for(&mut c, "call_data_append", CALL)?;
            pending_call(exec, "call_data_append")?;
            charge(&mut c, BYTE_TRANSMISSION_COST_FACTOR * size as u32 as u64)?;
            let bytes = read_heap(&c, src as u32 as u64, size as u32 as u64)?;
            let exec = c.data_mut().exec.as_mut().expect("checked");
            let call = pending_call(exec, "call_data_append")?;
            if call.arg.len() + bytes.len() > MAX_PAYLOAD {
                return Err(contract(format!(
                "ic0.call_data_append: argument exceeds the maximum size of {MAX_PAYLOAD} bytes"
            )));
            }
            call.arg.extend_from_slice(&bytes);
            Ok(())
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "call_with_best_effort_response",
        |mut c: Caller<'_, Env>, timeout: i32| {
            let exec = exec_for(&mut c, "call_with_best_effort_response", CALL)?;
            let call = pending_call(exec, "call_with_best_effort_response")?;
            if call.timeout_seconds.is_some() {
                return Err(contract(
                    "ic0.call_with_best_effort_response called twice for the same call",
                ));
            }
            call.timeout_seconds = Some((timeout as u32).min(MAX_CALL_TIMEOUT_SECONDS));
            Ok(())
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "call_cycles_add128",
        |mut c: Caller<'_, Env>, high: i64, low: i64| {
            let exec = exec_for(&mut c, "call_cycles_add128", CALL)?;
            pending_call(exec, "call_cycles_add128")?;
            let amount = u128_of(high, low);
            if amount > exec.balance {
                return Err(contract(format!(
                "ic0.call_cycles_add128: cannot attach {amount} cycles, the liquid balance is {}",
                exec.balance
            )));
            }
            exec.balance -= amount;
            pending_call(exec, "call_cycles_add128")?.cycles += amount;
            Ok(())
        },
    )
    .unwrap();
    l.func_wrap("ic0", "call_perform", |mut c: Caller<'_, Env>| -> R<i32> {
        let exec = exec_for(&mut c, "call_perform", CALL)?;
        pending_call(exec, "call_perform")?;
        let queue_full =
            exec.outstanding_calls + exec.new_calls.len() >= exec.max_outstanding_calls;
        let call = exec.pending_call.as_ref().expect("checked");
        let cost = call_cost(call.method.len() as u64, call.arg.len() as u64);
        // The attached cycles have already left the balance; the call's price must be covered
        // by what is left, or the call is not made (as the spec says of a balance that would
        // fall below what the call needs).
        if exec.fail_next_call_perform || queue_full || exec.balance < cost {
            exec.fail_next_call_perform = false;
            exec.discard_pending_call();
            return Ok(RejectCode::SysTransient.as_u32() as i32);
        }
        exec.balance -= cost;
        let call = exec.pending_call.take().expect("checked");
        exec.new_calls.push(call);
        Ok(0)
    })
    .unwrap();
}
