//! Canister and environment functions: identity, status, certified data, stable
//! memory, time, timer, performance counter, debug output and traps.

use candid::Principal;
use wasmi::{Caller, Linker};

use super::avail::*;
use super::heap::{blob_copy, blob_size, read_heap, read_principal, R};
use super::{charge, contract, exec_for, ic_instructions_used, Env, ExecState, HostTrap};
use crate::ic_cost::{logging_charge, DIRTY_PAGE_OVERHEAD, DIRTY_PAGE_SIZE};

/// The subnet id, computed once (blob copies need a reference that outlives the call).
static SUBNET: std::sync::LazyLock<Principal> = std::sync::LazyLock::new(crate::ids::subnet_id);

pub(super) fn define_canister(l: &mut Linker<Env>) {
    l.func_wrap("ic0", "canister_self_size", |mut c: Caller<'_, Env>| {
        blob_size(&mut c, "canister_self_size", ALL, |e| {
            Ok(e.canister_id.as_slice())
        })
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "canister_self_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "canister_self_copy", ALL, (d, o, s), |e| {
                Ok(e.canister_id.as_slice())
            })
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "canister_status",
        |mut c: Caller<'_, Env>| -> R<i32> {
            exec_for(&mut c, "canister_status", ALL)?;
            Ok(1) // running: stopping/stopped canisters are not simulated
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "canister_version",
        |mut c: Caller<'_, Env>| -> R<i64> {
            Ok(exec_for(&mut c, "canister_version", ALL)?.canister_version as i64)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "subnet_self_size",
        |mut c: Caller<'_, Env>| -> R<i32> {
            exec_for(&mut c, "subnet_self_size", ALL)?;
            Ok(crate::ids::subnet_id().as_slice().len() as i32)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "subnet_self_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "subnet_self_copy", ALL, (d, o, s), |_| {
                Ok(SUBNET.as_slice())
            })
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "subnet_self_node_count",
        |mut c: Caller<'_, Env>| -> R<i32> {
            exec_for(&mut c, "subnet_self_node_count", ALL)?;
            Ok(13)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "is_controller",
        |mut c: Caller<'_, Env>, src: i32, size: i32| {
            exec_for(&mut c, "is_controller", ALL_S)?;
            charge(&mut c, size as u32 as u64)?;
            let p = read_principal(&c, "is_controller", src, size)?;
            let exec = c.data().exec.as_ref().expect("checked");
            Ok(i32::from(exec.controllers.contains(&p)))
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "in_replicated_execution",
        |mut c: Caller<'_, Env>| -> R<i32> {
            let exec = exec_for(&mut c, "in_replicated_execution", ALL_S)?;
            Ok(i32::from(exec.kind.replicated()))
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "certified_data_set",
        |mut c: Caller<'_, Env>, src: i32, size: i32| {
            exec_for(&mut c, "certified_data_set", I | G | U | RY | RT | T)?;
            charge(&mut c, size as u32 as u64)?;
            let data = read_heap(&c, src as u32 as u64, size as u32 as u64)?;
            if data.len() > 32 {
                return Err(contract("ic0.certified_data_set: more than 32 bytes"));
            }
            c.data_mut().exec.as_mut().expect("checked").certified_data = Some(data);
            Ok(())
        },
    )
    .unwrap();
    // A certificate is present in non-replicated queries only (the host sets it there).
    l.func_wrap(
        "ic0",
        "data_certificate_present",
        |mut c: Caller<'_, Env>| -> R<i32> {
            let exec = exec_for(&mut c, "data_certificate_present", ALL)?;
            Ok(i32::from(exec.data_certificate.is_some()))
        },
    )
    .unwrap();
    fn certificate(e: &ExecState) -> R<&[u8]> {
        e.data_certificate.as_deref().ok_or_else(|| {
            contract(
                "no data certificate is present (ic0.data_certificate_present returns 0: only a \
                 query call's non-replicated execution has one)",
            )
        })
    }
    l.func_wrap("ic0", "data_certificate_size", |mut c: Caller<'_, Env>| {
        blob_size(&mut c, "data_certificate_size", NRQ, certificate)
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "data_certificate_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "data_certificate_copy", NRQ, (d, o, s), certificate)
        },
    )
    .unwrap();
    fn no_root_key(_: &ExecState) -> R<&[u8]> {
        Err(contract(
            "ic0.root_key: the local IC host has no root key (certification is not simulated)",
        ))
    }
    l.func_wrap("ic0", "root_key_size", |mut c: Caller<'_, Env>| {
        blob_size(&mut c, "root_key_size", ALL, no_root_key)
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "root_key_copy",
        |mut c: Caller<'_, Env>, d: i32, o: i32, s: i32| {
            blob_copy(&mut c, "root_key_copy", ALL, (d, o, s), no_root_key)
        },
    )
    .unwrap();
}

pub(super) fn define_stable(l: &mut Linker<Env>) {
    l.func_wrap("ic0", "stable64_size", |mut c: Caller<'_, Env>| -> R<i64> {
        exec_for(&mut c, "stable64_size", ALL_S)?;
        Ok(c.data().stable.size_pages() as i64)
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "stable64_grow",
        |mut c: Caller<'_, Env>, pages: i64| -> R<i64> {
            exec_for(&mut c, "stable64_grow", ALL_S)?;
            Ok(c.data_mut()
                .stable
                .grow(pages as u64)
                .map_or(-1, |old| old as i64))
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "stable64_write",
        |mut c: Caller<'_, Env>, offset: i64, src: i64, size: i64| {
            exec_for(&mut c, "stable64_write", ALL_S)?;
            let (offset, src, size) = (offset as u64, src as u64, size as u64);
            charge(&mut c, size)?;
            charge_dirty_pages(&mut c, offset, size)?;
            let Some((memory, heap_range)) =
                stable_copy_ranges(&c, "stable64_write", offset, src, size)?
            else {
                return Ok(());
            };
            let (heap, env) = memory.data_and_store_mut(&mut c);
            env.stable
                .write(offset, &heap[heap_range])
                .map_err(|_| contract("stable memory out of bounds"))
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "stable64_read",
        |mut c: Caller<'_, Env>, dst: i64, offset: i64, size: i64| {
            exec_for(&mut c, "stable64_read", ALL_S)?;
            let (dst, offset, size) = (dst as u64, offset as u64, size as u64);
            charge(&mut c, size)?;
            let Some((memory, heap_range)) =
                stable_copy_ranges(&c, "stable64_read", offset, dst, size)?
            else {
                return Ok(());
            };
            let (heap, env) = memory.data_and_store_mut(&mut c);
            env.stable
                .read(offset, &mut heap[heap_range])
                .map_err(|_| contract("stable memory out of bounds"))
        },
    )
    .unwrap();
}

pub(super) fn define_misc(l: &mut Linker<Env>) {
    l.func_wrap("ic0", "time", |mut c: Caller<'_, Env>| -> R<i64> {
        Ok(exec_for(&mut c, "time", ALL)?.time as i64)
    })
    .unwrap();
    l.func_wrap(
        "ic0",
        "global_timer_set",
        |mut c: Caller<'_, Env>, ts: i64| -> R<i64> {
            let exec = exec_for(&mut c, "global_timer_set", I | G | U | RY | RT | C | T)?;
            let previous = exec.global_timer;
            exec.global_timer = ts as u64;
            exec.global_timer_changed = true;
            Ok(previous as i64)
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "performance_counter",
        |mut c: Caller<'_, Env>, ty: i32| -> R<i64> {
            exec_for(&mut c, "performance_counter", ALL_S)?;
            let limit = c.data().exec.as_ref().expect("checked").fuel_limit;
            let used = match ic_instructions_used(&c, limit) {
                Some(used) => used,
                None => limit.saturating_sub(c.get_fuel().unwrap_or(0)),
            };
            let exec = c.data().exec.as_ref().expect("checked");
            match ty {
                0 => Ok(used as i64),
                1 => Ok((exec.call_context_instructions + used) as i64),
                _ => Err(contract(format!(
                    "ic0.performance_counter: unknown counter type {ty}"
                ))),
            }
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "debug_print",
        |mut c: Caller<'_, Env>, src: i32, size: i32| {
            exec_for(&mut c, "debug_print", ALL_S)?;
            charge(&mut c, logging_charge(size as u32 as u64))?;
            // Like the IC, an unreadable range is not an error worth trapping for.
            let bytes = read_heap(&c, src as u32 as u64, size as u32 as u64).unwrap_or_default();
            c.data_mut()
                .logs
                .push(String::from_utf8_lossy(&bytes).into_owned());
            Ok(())
        },
    )
    .unwrap();
    l.func_wrap(
        "ic0",
        "trap",
        |mut c: Caller<'_, Env>, src: i32, size: i32| -> R<()> {
            exec_for(&mut c, "trap", ALL_S)?;
            let len = size as u32 as u64;
            charge(&mut c, len + logging_charge(len))?;
            let bytes = read_heap(&c, src as u32 as u64, size as u32 as u64)?;
            Err(wasmi::Error::host(HostTrap::Explicit(
                String::from_utf8_lossy(&bytes).into_owned(),
            )))
        },
    )
    .unwrap();
}

/// Charges the 4 KiB pages of `[offset, offset + size)` this execution has not written yet
/// (`dirty_page_overhead` each); only the IC cost model pays it.
fn charge_dirty_pages(c: &mut Caller<'_, Env>, offset: u64, size: u64) -> R<()> {
    let in_bounds = offset
        .checked_add(size)
        .is_some_and(|end| end <= c.data().stable.size_bytes());
    if size == 0 || !in_bounds || c.data().ic_counter.is_none() {
        // Out of bounds: the write traps; nothing is dirtied.
        return Ok(());
    }
    let first = offset / DIRTY_PAGE_SIZE;
    let last = offset.saturating_add(size - 1) / DIRTY_PAGE_SIZE;
    let exec = c.data_mut().exec.as_mut().expect("checked by exec_for");
    let new = (first..=last)
        .filter(|page| exec.dirty_pages.insert(*page))
        .count() as u64;
    charge(c, new * DIRTY_PAGE_OVERHEAD)
}

/// The checks `stable64_read` and `stable64_write` share: `size` bytes at `offset` lie within
/// stable memory and at `heap_at` within the heap. The heap range to copy, or `None` when
/// there is nothing to copy (no memory and a size of 0).
fn stable_copy_ranges(
    c: &Caller<'_, Env>,
    name: &str,
    offset: u64,
    heap_at: u64,
    size: u64,
) -> R<Option<(wasmi::Memory, std::ops::Range<usize>)>> {
    if offset
        .checked_add(size)
        .is_none_or(|end| end > c.data().stable.size_bytes())
    {
        return Err(contract("stable memory out of bounds"));
    }
    let Some(memory) = c.data().memory else {
        return if size == 0 {
            Ok(None)
        } else {
            Err(contract("the canister has no memory"))
        };
    };
    let end = heap_at
        .checked_add(size)
        .filter(|end| *end <= memory.data(c).len() as u64)
        .ok_or_else(|| contract(format!("ic0.{name}: heap out of bounds")))?;
    Ok(Some((memory, heap_at as usize..end as usize)))
}
