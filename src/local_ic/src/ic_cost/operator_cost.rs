//! The replica's static cost of each Wasm operator (wasm32), from dfinity/ic
//! `rs/embedders/src/wasm_utils/instrumentation.rs`, `instruction_to_cost`. Every operator
//! not named here costs 1, as there. Bulk memory operators also pay one instruction per
//! byte (or element) at run time; that part is charged by the instrumentation.

use wasmparser::Operator as Op;

/// The static cost of `op`.
pub(crate) fn operator_cost(op: &Op<'_>) -> u64 {
    control_cost(op)
        .or_else(|| numeric_cost(op))
        .or_else(|| memory_table_cost(op))
        .or_else(|| simd_cost(op))
        .unwrap_or(1)
}

/// Structure is free; branches 2, calls 5 and 10, tail calls 3 and 60.
fn control_cost(op: &Op<'_>) -> Option<u64> {
    Some(match op {
        Op::Block { .. } | Op::Loop { .. } | Op::Else | Op::End => 0,
        Op::If { .. } | Op::Br { .. } | Op::BrIf { .. } | Op::BrTable { .. } => 2,
        Op::Call { .. } => 5,
        Op::CallIndirect { .. } => 10,
        Op::ReturnCall { .. } => 3,
        Op::ReturnCallIndirect { .. } => 60,
        Op::GlobalGet { .. } | Op::GlobalSet { .. } => 2,
        Op::RefIsNull => 5,
        Op::RefFunc { .. } => 130,
        _ => return None,
    })
}

/// Integer and float arithmetic, comparisons and conversions that do not cost 1.
fn numeric_cost(op: &Op<'_>) -> Option<u64> {
    Some(match op {
        Op::I32DivS
        | Op::I32DivU
        | Op::I32RemS
        | Op::I32RemU
        | Op::I64DivS
        | Op::I64DivU
        | Op::I64RemS
        | Op::I64RemU => 10,
        Op::F32Add
        | Op::F32Sub
        | Op::F32Mul
        | Op::F32Ceil
        | Op::F32Floor
        | Op::F32Trunc
        | Op::F32Nearest
        | Op::F64Add
        | Op::F64Sub
        | Op::F64Mul
        | Op::F64Ceil
        | Op::F64Floor
        | Op::F64Trunc
        | Op::F64Nearest
        | Op::F32Copysign => 2,
        Op::F32Div | Op::F64Copysign => 3,
        Op::F64Div | Op::F32Sqrt => 5,
        Op::F64Sqrt => 8,
        Op::F32Min | Op::F32Max | Op::F64Min | Op::F64Max => 18,
        Op::F32Eq
        | Op::F32Ne
        | Op::F32Lt
        | Op::F32Gt
        | Op::F32Le
        | Op::F32Ge
        | Op::F64Eq
        | Op::F64Ne
        | Op::F64Lt
        | Op::F64Gt
        | Op::F64Le
        | Op::F64Ge => 3,
        Op::F32ConvertI32S | Op::F32ConvertI64S | Op::F64ConvertI32S | Op::F64ConvertI64S => 3,
        Op::F32ConvertI32U | Op::F32ConvertI64U | Op::F64ConvertI32U | Op::F64ConvertI64U => 16,
        Op::I32TruncF32S
        | Op::I32TruncF32U
        | Op::I32TruncF64S
        | Op::I32TruncF64U
        | Op::I64TruncF32S
        | Op::I64TruncF32U
        | Op::I64TruncF64S
        | Op::I64TruncF64U
        | Op::I32TruncSatF32S
        | Op::I32TruncSatF32U
        | Op::I32TruncSatF64S
        | Op::I32TruncSatF64U
        | Op::I64TruncSatF32S
        | Op::I64TruncSatF32U
        | Op::I64TruncSatF64S
        | Op::I64TruncSatF64U => 20,
        _ => return None,
    })
}

/// Memory and table operators that call into the runtime (loads and stores cost 1).
fn memory_table_cost(op: &Op<'_>) -> Option<u64> {
    Some(match op {
        Op::MemoryGrow { .. } | Op::TableGrow { .. } => 300,
        Op::MemorySize { .. } => 20,
        Op::TableSize { .. } => 100,
        Op::TableGet { .. } | Op::TableSet { .. } => 5,
        Op::MemoryFill { .. }
        | Op::MemoryCopy { .. }
        | Op::MemoryInit { .. }
        | Op::TableFill { .. }
        | Op::TableCopy { .. }
        | Op::TableInit { .. } => 100,
        Op::DataDrop { .. } | Op::ElemDrop { .. } => 300,
        _ => return None,
    })
}

/// The SIMD operators that do not cost 1.
fn simd_cost(op: &Op<'_>) -> Option<u64> {
    Some(match op {
        Op::I8x16LtU
        | Op::I8x16GtU
        | Op::I16x8LtU
        | Op::I16x8GtU
        | Op::I32x4LtU
        | Op::I32x4GtU
        | Op::I8x16ShrU
        | Op::I16x8ExtAddPairwiseI8x16U
        | Op::I16x8ExtMulHighI8x16S
        | Op::I16x8ExtMulHighI8x16U
        | Op::I16x8Shl
        | Op::I16x8ShrS
        | Op::I16x8ShrU
        | Op::I32x4Shl
        | Op::I32x4ShrS
        | Op::I32x4ShrU
        | Op::I32x4Mul
        | Op::I32x4ExtMulLowI16x8S
        | Op::I32x4ExtMulHighI16x8S
        | Op::I32x4ExtMulLowI16x8U
        | Op::I32x4ExtMulHighI16x8U
        | Op::I64x2Shl
        | Op::I64x2ShrU
        | Op::I32x4TruncSatF32x4S
        | Op::I32x4TruncSatF64x2SZero => 2,
        Op::F32x4Ceil
        | Op::F32x4Floor
        | Op::F32x4Trunc
        | Op::F32x4Nearest
        | Op::F32x4Abs
        | Op::F32x4Neg
        | Op::F32x4Add
        | Op::F32x4Sub
        | Op::F32x4Mul
        | Op::F64x2Ceil
        | Op::F64x2Floor
        | Op::F64x2Trunc
        | Op::F64x2Nearest
        | Op::F64x2Abs
        | Op::F64x2Neg
        | Op::F64x2Add
        | Op::F64x2Sub
        | Op::F64x2Mul => 2,
        Op::I8x16Shuffle { .. }
        | Op::I8x16Popcnt
        | Op::I8x16Shl
        | Op::I8x16ShrS
        | Op::I32x4ExtAddPairwiseI16x8U
        | Op::I64x2ShrS
        | Op::I32x4TruncSatF64x2UZero => 3,
        Op::I64x2Mul
        | Op::F32x4Min
        | Op::F32x4Max
        | Op::F64x2Min
        | Op::I32x4TruncSatF32x4U
        | Op::F32x4ConvertI32x4U => 4,
        Op::F32x4Sqrt | Op::F64x2Max => 5,
        Op::F32x4Div => 10,
        Op::F64x2Div => 12,
        Op::F64x2Sqrt => 14,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_follow_the_replica_table() {
        assert_eq!(operator_cost(&Op::I32Add), 1);
        assert_eq!(operator_cost(&Op::I64DivU), 10);
        assert_eq!(operator_cost(&Op::Call { function_index: 0 }), 5);
        assert_eq!(operator_cost(&Op::GlobalGet { global_index: 0 }), 2);
        assert_eq!(operator_cost(&Op::MemoryGrow { mem: 0 }), 300);
        assert_eq!(operator_cost(&Op::End), 0);
        assert_eq!(operator_cost(&Op::LocalGet { local_index: 0 }), 1);
    }
}
