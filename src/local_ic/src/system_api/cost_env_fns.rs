//! Cost functions (`cost_*`) and environment variables (`env_var_*`).

use wasmi::{Caller, Linker};

use super::avail::*;
use super::heap::{blob_copy, read_utf8, write_u128, R};
use super::{available, charge, contract, exec_for, Env, ExecState};

fn env_var_index(exec: &ExecState, name: &str, index: i32) -> R<usize> {
    let index = index as u32 as usize;
    if index >= exec.env_vars.len() {
        return Err(contract(format!(
            "ic0.{name}: index {index} out of bounds ({} environment variables)",
            exec.env_vars.len()
        )));
    }
    Ok(index)
}

fn env_var_value<'a>(exec: &'a ExecState, var: &str) -> R<&'a [u8]> {
    exec.env_vars
        .iter()
        .find(|(n, _)| n == var)
        .map(|(_, v)| v.as_bytes())
        .ok_or_else(|| contract(format!("environment variable `{var}` is not set")))
}

/// Cost of signing with a threshold key: 0 ok, 1 unknown curve/algorithm, 2 unknown key.
fn threshold_cost(
    caller: &mut Caller<'_, Env>,
    name: &str,
    (src, size, curve, dst): (i32, i32, i32, i32),
    valid_curves: u32,
) -> R<i32> {
    exec_for(caller, name, ALL_S)?;
    charge(caller, size as u32 as u64)?;
    let key = read_utf8(caller, name, src, size)?;
    if curve as u32 >= valid_curves {
        return Ok(1);
    }
    let cost: u128 = match key.as_str() {
        "key_1" => 26_153_846_153,
        "test_key_1" | "dfx_test_key" => 10_000_000_000,
        _ => return Ok(2),
    };
    write_u128(caller, dst, cost)?;
    Ok(0)
}

/// What a call costs the caller (13-node application subnet): 260 000 cycles plus 1 000 per byte
/// of method name and argument. `ic0.cost_call` reports it and `ic0.call_perform` charges it.
pub(crate) fn call_cost(method_len: u64, payload_len: u64) -> u128 {
    260_000 + 1_000 * (u128::from(method_len) + u128::from(payload_len))
}

/// Cost functions report plausible prices (13-node application subnet); only `cost_call` is
/// charged (by `ic0.call_perform`), the others are never charged.
pub(super) fn define_costs(l: &mut Linker<Env>) {
    l.func_wrap(
        "ic0",
        "cost_call",
        |mut c: Caller<'_, Env>, method_len: i64, payload_len: i64, dst: i32| {
            exec_for(&mut c, "cost_call", ALL_S)?;
            write_u128(
                &mut c,
                dst,
                call_cost(method_len as u64, payload_len as u64),
            )
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "cost_create_canister",
        |mut c: Caller<'_, Env>, dst: i32| {
            exec_for(&mut c, "cost_create_canister", ALL_S)?;
            write_u128(&mut c, dst, 500_000_000_000)
        },
    )
    .unwrap();
    fn http_cost(request_size: u64, max_response: u64) -> u128 {
        let n: u128 = 13;
        (3_000_000 + 60_000 * n) * n
            + 400 * n * u128::from(request_size)
            + 800 * n * u128::from(max_response)
    }
    l.func_wrap(
        "ic0",
        "cost_http_request",
        |mut c: Caller<'_, Env>, request_size: i64, max_response: i64, dst: i32| {
            exec_for(&mut c, "cost_http_request", ALL_S)?;
            write_u128(
                &mut c,
                dst,
                http_cost(request_size as u64, max_response as u64),
            )
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "cost_http_request_v2",
        |mut c: Caller<'_, Env>, _src: i32, size: i32, dst: i32| {
            exec_for(&mut c, "cost_http_request_v2", ALL_S)?;
            write_u128(&mut c, dst, http_cost(size as u32 as u64, 2_000_000))
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "cost_sign_with_ecdsa",
        |mut c: Caller<'_, Env>, src: i32, size: i32, curve: i32, dst: i32| {
            threshold_cost(&mut c, "cost_sign_with_ecdsa", (src, size, curve, dst), 1)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "cost_sign_with_schnorr",
        |mut c: Caller<'_, Env>, src: i32, size: i32, algorithm: i32, dst: i32| {
            threshold_cost(
                &mut c,
                "cost_sign_with_schnorr",
                (src, size, algorithm, dst),
                2,
            )
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "cost_vetkd_derive_key",
        |mut c: Caller<'_, Env>, src: i32, size: i32, curve: i32, dst: i32| {
            threshold_cost(&mut c, "cost_vetkd_derive_key", (src, size, curve, dst), 1)
        },
    )
    .unwrap();
}

/// Environment variables, in the argument order of ic0 1.2.0 (what the CDK calls).
pub(super) fn define_env_vars(l: &mut Linker<Env>) {
    l.func_wrap("ic0", "env_var_count", |mut c: Caller<'_, Env>| -> R<i32> {
        Ok(exec_for(&mut c, "env_var_count", ALL)?.env_vars.len() as i32)
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "env_var_name_size",
        |mut c: Caller<'_, Env>, index: i32| -> R<i32> {
            let exec = exec_for(&mut c, "env_var_name_size", ALL)?;
            let i = env_var_index(exec, "env_var_name_size", index)?;
            Ok(exec.env_vars[i].0.len() as i32)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "env_var_name_copy",
        |mut c: Caller<'_, Env>, index: i32, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "env_var_name_copy", ALL, (d, o, s), |e| {
                let i = env_var_index(e, "env_var_name_copy", index)?;
                Ok(e.env_vars[i].0.as_bytes())
            })
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "env_var_name_exists",
        |mut c: Caller<'_, Env>, src: i32, size: i32| -> R<i32> {
            exec_for(&mut c, "env_var_name_exists", ALL)?;
            let name = read_utf8(&c, "env_var_name_exists", src, size)?;
            let exec = c.data().exec.as_ref().expect("checked");
            Ok(i32::from(exec.env_vars.iter().any(|(n, _)| *n == name)))
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "env_var_value_size",
        |mut c: Caller<'_, Env>, src: i32, size: i32| -> R<i32> {
            exec_for(&mut c, "env_var_value_size", ALL)?;
            let name = read_utf8(&c, "env_var_value_size", src, size)?;
            let exec = c.data().exec.as_ref().expect("checked");
            Ok(env_var_value(exec, &name)?.len() as i32)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "env_var_value_copy",
        |mut c: Caller<'_, Env>, src: i32, size: i32, d: i32, o: i32, s: i32| {
            // The charge is taken once, by `blob_copy`.
            available(&mut c, "env_var_value_copy", ALL)?;
            let name = read_utf8(&c, "env_var_value_copy", src, size)?;
            blob_copy(&mut c, "env_var_value_copy", ALL, (d, o, s), |e| {
                env_var_value(e, &name)
            })
        },
    )
    .unwrap();
}
