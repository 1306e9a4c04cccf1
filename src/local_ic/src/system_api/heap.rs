//! Moving bytes between the canister's memory and the host, with the bounds checks
//! the System API requires.

use candid::Principal;
use wasmi::Caller;

use super::{charge, contract, exec_for, Env, ExecState, MAX_PRINCIPAL_LEN};

pub(super) type R<T> = Result<T, wasmi::Error>;

/// Reads `size` bytes at `src` from the canister's memory.
pub(super) fn read_heap(caller: &Caller<'_, Env>, src: u64, size: u64) -> R<Vec<u8>> {
    if size == 0 {
        return Ok(Vec::new());
    }
    let memory = caller
        .data()
        .memory
        .ok_or_else(|| contract("the canister has no memory"))?;
    let heap = memory.data(caller);
    let end = src
        .checked_add(size)
        .filter(|end| *end <= heap.len() as u64)
        .ok_or_else(|| contract(format!("heap out of bounds: {src} + {size}")))?;
    Ok(heap[src as usize..end as usize].to_vec())
}

/// Writes `bytes` at `dst` into the canister's memory.
pub(super) fn write_heap(caller: &mut Caller<'_, Env>, dst: u64, bytes: &[u8]) -> R<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    let memory = caller
        .data()
        .memory
        .ok_or_else(|| contract("the canister has no memory"))?;
    let heap = memory.data_mut(&mut *caller);
    let end = dst
        .checked_add(bytes.len() as u64)
        .filter(|end| *end <= heap.len() as u64)
        .ok_or_else(|| contract(format!("heap out of bounds: {dst} + {}", bytes.len())))?;
    heap[dst as usize..end as usize].copy_from_slice(bytes);
    Ok(())
}

pub(super) fn write_u128(caller: &mut Caller<'_, Env>, dst: i32, value: u128) -> R<()> {
    write_heap(caller, dst as u32 as u64, &value.to_le_bytes())
}

pub(super) fn read_principal(
    caller: &Caller<'_, Env>,
    name: &str,
    src: i32,
    size: i32,
) -> R<Principal> {
    let bytes = read_heap(caller, src as u32 as u64, size as u32 as u64)?;
    if bytes.len() > MAX_PRINCIPAL_LEN {
        return Err(contract(format!(
            "ic0.{name}: {} bytes is not a valid principal",
            bytes.len()
        )));
    }
    Ok(Principal::from_slice(&bytes))
}

pub(super) fn read_utf8(caller: &Caller<'_, Env>, name: &str, src: i32, size: i32) -> R<String> {
    let bytes = read_heap(caller, src as u32 as u64, size as u32 as u64)?;
    String::from_utf8(bytes).map_err(|_| contract(format!("ic0.{name}: text is not valid UTF-8")))
}

/// Size of a blob the execution exposes through a `*_size`/`*_copy` pair.
pub(super) fn blob_size(
    caller: &mut Caller<'_, Env>,
    name: &str,
    allowed: u16,
    blob: impl FnOnce(&ExecState) -> R<&[u8]>,
) -> R<i32> {
    let exec = exec_for(caller, name, allowed)?;
    Ok(blob(exec)?.len() as i32)
}

/// `*_copy(dst, offset, size)`: copies `blob[offset..offset+size]` to `heap[dst..dst+size]`.
pub(super) fn blob_copy(
    caller: &mut Caller<'_, Env>,
    name: &str,
    allowed: u16,
    (dst, offset, size): (i32, i32, i32),
    blob: impl FnOnce(&ExecState) -> R<&[u8]>,
) -> R<()> {
    exec_for(caller, name, allowed)?;
    charge(caller, size as u32 as u64)?;
    let (dst, offset, size) = (
        dst as u32 as usize,
        offset as u32 as usize,
        size as u32 as usize,
    );
    let memory = caller.data().memory;
    let Some(memory) = memory else {
        return if size == 0 {
            Ok(())
        } else {
            Err(contract("the canister has no memory"))
        };
    };
    let (heap, env) = memory.data_and_store_mut(&mut *caller);
    let exec = env.exec.as_ref().expect("checked by exec_for");
    let src = blob(exec)?;
    let src_end = offset
        .checked_add(size)
        .filter(|end| *end <= src.len())
        .ok_or_else(|| {
            contract(format!(
                "ic0.{name}: offset {offset} + size {size} exceeds the data length {}",
                src.len()
            ))
        })?;
    let dst_end = dst
        .checked_add(size)
        .filter(|end| *end <= heap.len())
        .ok_or_else(|| contract(format!("ic0.{name}: heap out of bounds")))?;
    heap[dst..dst_end].copy_from_slice(&src[offset..src_end]);
    Ok(())
}

pub(super) fn u128_of(high: i64, low: i64) -> u128 {
    (u128::from(high as u64) << 64) | u128::from(low as u64)
}
