//! A hand-written canister that looks like an ICRC-1 ledger to the tool host's refs (decimals
//! 8, symbol `ODD`, fee 10 000) but answers `icrc1_transfer` with bytes that do not decode as
//! its result type: the "reply that does not decode" row of the outcome table, which no real
//! ledger produces. It does not list ICRC-3 (no `icrc1_supported_standards`), so the tool host
//! sends to it without journaling.

/// The symbol the canister answers; inputs read amounts in it (`"1 ODD"`).
pub const SYMBOL: &str = "ODD";
pub const DECIMALS: u8 = 8;

const WAT: &str = r#"
(module
  (import "ic0" "msg_reply_data_append" (func $append (param i32 i32)))
  (import "ic0" "msg_reply" (func $reply))
  (memory 1)
  ;; (8 : nat8)
  (data (i32.const 0) "DIDL\00\01\7b\08")
  ;; ("ODD" : text)
  (data (i32.const 16) "DIDL\00\01\71\03ODD")
  ;; (10_000 : nat)
  (data (i32.const 32) "DIDL\00\01\7d\90\4e")
  ;; ("garbage" : text), where variant { Ok : nat; Err : TransferError } is expected
  (data (i32.const 48) "DIDL\00\01\71\07garbage")
  (func $send (param i32 i32) (call $append (local.get 0) (local.get 1)) (call $reply))
  (func (export "canister_query icrc1_decimals") (call $send (i32.const 0) (i32.const 8)))
  (func (export "canister_query icrc1_symbol") (call $send (i32.const 16) (i32.const 11)))
  (func (export "canister_query icrc1_fee") (call $send (i32.const 32) (i32.const 9)))
  (func (export "canister_update icrc1_transfer") (call $send (i32.const 48) (i32.const 15)))
)
"#;

/// The canister's wasm.
pub fn wasm() -> Vec<u8> {
    wat::parse_str(WAT).expect("the odd canister's WAT is valid")
}
