//! A local IC host that runs canister wasm in wasmi, for tests without PocketIC.
