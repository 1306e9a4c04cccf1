//! The exact bytes of a call, and the values of a reply, from a plan's form types.

use crate::candid_types::{to_types, type_env};
use crate::plan::ToolPlan;
use candid::IDLArgs;

/// Encodes the argument tuple with the method's argument types: the bytes that are sent.
pub fn encode_args(plan: &ToolPlan, args: &IDLArgs) -> Result<Vec<u8>, String> {
    let form = &plan.form.form;
    let method = plan.method_def();
    let env = type_env(form);
    args.to_bytes_with_types(&env, &to_types(&method.args))
        .map_err(|e| format!("the arguments of {} do not encode: {e}", plan.method))
}

/// Decodes a reply with the method's result types; a reply that does not decode is an unknown outcome.
pub fn decode_reply(plan: &ToolPlan, bytes: &[u8]) -> Result<IDLArgs, String> {
    let form = &plan.form.form;
    let method = plan.method_def();
    let env = type_env(form);
    let mut config = candid::DecoderConfig::new();
    // Bound the work a hostile reply can cause while decoding.
    config.set_decoding_quota(10_000_000);
    config.set_skipping_quota(10_000);
    IDLArgs::from_bytes_with_types_with_config(bytes, &env, &to_types(&method.results), &config)
        .map_err(|e| format!("the reply of {} does not decode: {e}", plan.method))
}

/// Decodes argument bytes back (for consent messages and display of a stored intent).
pub fn decode_args(plan: &ToolPlan, bytes: &[u8]) -> Result<IDLArgs, String> {
    let form = &plan.form.form;
    let method = plan.method_def();
    let env = type_env(form);
    let mut config = candid::DecoderConfig::new();
    config.set_decoding_quota(10_000_000);
    IDLArgs::from_bytes_with_types_with_config(bytes, &env, &to_types(&method.args), &config)
        .map_err(|e| format!("the argument of {} does not decode: {e}", plan.method))
}
