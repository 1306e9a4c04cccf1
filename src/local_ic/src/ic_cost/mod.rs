//! The IC cost model: instructions counted as the replica counts them, so that figures
//! measured on this host are the ones a canister would be charged on the IC.
//!
//! Three parts, each from dfinity/ic (`docs/local-ic.md`, "Counting instructions as the IC
//! does", cites file and constant for each rule):
//! * [`operator_cost`]: the static cost of every Wasm operator (`instruction_to_cost`);
//! * [`instrument`]: the module rewrite that charges each basic block's cost at its start
//!   (and bulk-memory sizes at run time) into a counter global the host reads and resets;
//! * the System API charges below, applied by the host functions.

pub(crate) mod instrument;
pub(crate) mod operator_cost;

/// Instructions per byte of a reply, a reject message or a call argument
/// (`BYTE_TRANSMISSION_COST_FACTOR`, rs/embedders/src/wasmtime_embedder/system_api.rs).
pub(crate) const BYTE_TRANSMISSION_COST_FACTOR: u64 = 50;

/// Instructions per newly dirtied 4 KiB stable-memory page in one execution
/// (`DEFAULT_DIRTY_PAGE_OVERHEAD`, rs/config/src/subnet_config.rs, application subnets).
pub(crate) const DIRTY_PAGE_OVERHEAD: u64 = 1_000;

/// The page size dirty pages are counted in (the OS page, `ic_sys::PAGE_SIZE`).
pub(crate) const DIRTY_PAGE_SIZE: u64 = 4_096;

/// `stable64_grow` with Wasm-native stable memory (`overhead_native::STABLE_GROW`).
pub(crate) const STABLE_GROW_OVERHEAD: u64 = 100;

/// Bytes of one canister log record charged at most (the canister log buffer,
/// `MAX_ALLOWED_CANISTER_LOG_BUFFER_SIZE`): longer messages are truncated by the log.
pub(crate) const LOG_BUFFER_SIZE: u64 = 4 * 1024;

/// The fixed overhead of a System API call (`system_api_complexity::overhead`,
/// rs/embedders/src/wasmtime_embedder/system_api_complexity.rs). Stable memory calls
/// use the Wasm-native figures (`overhead_native`), as the replica runs them natively.
pub(crate) fn system_api_overhead(name: &str) -> u64 {
    match name {
        "call_new" => 1_500,
        "call_perform" => 5_000,
        "is_controller" => 1_000,
        "cost_http_request_v2" => 10_000,
        "performance_counter" => 200,
        "debug_print" => 100,
        "stable64_read" | "stable64_write" | "stable64_size" => 20,
        "stable64_grow" => STABLE_GROW_OVERHEAD,
        // Not in the replica's table: the host's ic0 1.2.0 functions the table has no row
        // for are charged like their neighbours.
        _ => 500,
    }
}

/// The canister-log part of `debug_print` and `trap` (`logging_charge_bytes`): twice the
/// bytes kept (a record added, the oldest dropped) plus the transmission factor on them.
/// The host assumes the log has room for the message (the replica charges less for the part
/// that does not fit).
pub(crate) fn logging_charge(len: u64) -> u64 {
    let kept = len.min(LOG_BUFFER_SIZE);
    2 * kept + BYTE_TRANSMISSION_COST_FACTOR * kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_new_and_call_perform_cost_more_than_the_usual_system_call() {
        assert_eq!(system_api_overhead("call_new"), 1_500);
        assert_eq!(system_api_overhead("call_perform"), 5_000);
        assert_eq!(system_api_overhead("msg_reply"), 500);
        assert_eq!(system_api_overhead("stable64_write"), 20);
    }

    #[test]
    fn log_charge_stops_at_the_log_buffer_size() {
        assert_eq!(logging_charge(10), 520);
        assert_eq!(logging_charge(1 << 20), 52 * LOG_BUFFER_SIZE);
    }
}
