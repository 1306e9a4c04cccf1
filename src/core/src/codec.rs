//! The exact bytes of a call, and the values of a reply, from a plan's form types.

use crate::candid_types::MethodTypes;
use crate::plan::ToolPlan;
use candid::IDLArgs;

/// A plan's method types; hosts that encode often keep them (see [`MethodTypes`]).
pub fn method_types(plan: &ToolPlan) -> MethodTypes {
    MethodTypes::of(&plan.form.form, plan.method_def())
}

/// Encodes the argument tuple with the method's argument types: the bytes that are sent. Only
/// the values are written after the header kept in `types` ([`header_of_types`]), unless a
/// value is not exactly of its type (then `candid` encodes, and says why).
pub fn encode_args(plan: &ToolPlan, args: &IDLArgs) -> Result<Vec<u8>, String> {
    encode_args_with(plan, &method_types(plan), args)
}

pub fn encode_args_with(
    plan: &ToolPlan,
    types: &MethodTypes,
    args: &IDLArgs,
) -> Result<Vec<u8>, String> {
    if let Some((header, table)) = args_header(types) {
        if let Some(bytes) = crate::wire::encode_with_header(header, table, args) {
            return Ok(bytes);
        }
    }
    let bytes = args
        .to_bytes_with_types(&types.env, &types.args)
        .map_err(|e| format!("the arguments of {} do not encode: {e}", plan.method))?;
    if types.args_header.get().is_none() {
        if let Some((header, table)) = crate::wire::header_of(&bytes) {
            let _ = types.args_header.set((header.to_vec(), table));
        }
    }
    Ok(bytes)
}

/// The arguments' header, made once from the types alone ([`header_of_types`]): the first
/// encoding of a method after every upgrade (its first prepare) then writes only values. Types
/// it is not made for keep the one of their first whole encoding.
fn args_header(types: &MethodTypes) -> Option<&(Vec<u8>, crate::wire::Table)> {
    if types.args_header.get().is_none() && !types.args_header_tried.replace(true) {
        if let Some(made) = header_of_types(&types.args) {
            let _ = types.args_header.set(made);
        }
    }
    types.args_header.get()
}

/// The header (`"DIDL"`, type table, argument types) `candid` writes for values of `list`, from
/// its type serializer alone: without annotating and writing values, the most of a whole
/// encoding's cost. `None` for types that name others (recursive ones, kept in the method's
/// environment, which the serializer cannot be given: it refuses the name), and for a header
/// the wire reader does not read (a `service`): those are encoded by `candid`. The serializer's
/// calls are hidden from `candid`'s docs; the wire tests hold its header to the encoder's.
pub fn header_of_types(list: &[candid::types::Type]) -> Option<(Vec<u8>, crate::wire::Table)> {
    let mut ser = candid::ser::TypeSerialize::new();
    for t in list {
        ser.push_type(t).ok()?;
    }
    ser.serialize().ok()?;
    let mut bytes = b"DIDL".to_vec();
    bytes.extend_from_slice(ser.get_result());
    let (header, table) = crate::wire::header_of(&bytes)?;
    // All of it is the header: no value was written.
    (header.len() == bytes.len()).then_some((bytes, table))
}

/// Decodes a reply with the method's result types; a reply that does not decode is an unknown outcome.
pub fn decode_reply(plan: &ToolPlan, bytes: &[u8]) -> Result<IDLArgs, String> {
    decode_reply_with(plan, &method_types(plan), bytes)
}

pub fn decode_reply_with(
    plan: &ToolPlan,
    types: &MethodTypes,
    bytes: &[u8],
) -> Result<IDLArgs, String> {
    decode(bytes, types, &types.results)
        .map_err(|e| format!("the reply of {} does not decode: {e}", plan.method))
}

/// Decodes on the wire fast path when the message has the expected types, else with `candid`
/// and a quota that bounds the work a hostile message can cause.
fn decode(
    bytes: &[u8],
    types: &MethodTypes,
    list: &[candid::types::Type],
) -> Result<IDLArgs, candid::Error> {
    if let Some(args) = crate::wire::decode_with_types(bytes, &types.env, list) {
        return Ok(args);
    }
    let mut config = candid::DecoderConfig::new();
    config.set_decoding_quota(10_000_000);
    config.set_skipping_quota(10_000);
    IDLArgs::from_bytes_with_types_with_config(bytes, &types.env, list, &config)
}

/// Decodes argument bytes back (for consent messages and display of a stored intent).
pub fn decode_args(plan: &ToolPlan, bytes: &[u8]) -> Result<IDLArgs, String> {
    decode_args_with(plan, &method_types(plan), bytes)
}

pub fn decode_args_with(
    plan: &ToolPlan,
    types: &MethodTypes,
    bytes: &[u8],
) -> Result<IDLArgs, String> {
    decode(bytes, types, &types.args)
        .map_err(|e| format!("the argument of {} does not decode: {e}", plan.method))
}
