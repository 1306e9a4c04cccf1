//! Rewrites a module so it counts its own instructions as the replica's instrumentation
//! does (dfinity/ic `rs/embedders/src/wasm_utils/instrumentation.rs`, `injections` and
//! `inject_metering`):
//!
//! * a mutable i64 global, exported as [`COUNTER_EXPORT`], holds the instructions left;
//!   the host sets it to the execution's limit before running and reads it afterwards;
//! * every basic block starts by subtracting the summed [`operator_cost`] of its operators
//!   (a function body is charged 1 more, as on the replica); a function body and a loop body
//!   also check the counter and stop the execution when it went below zero;
//! * before `memory.fill/copy/init` and `table.fill/copy/init` the size operand is charged
//!   at run time (1 per byte or element), through an added helper function.
//!
//! Blocks are cut where the replica cuts them: after `loop` and `if` (a new block starts),
//! after `else`, `br`, `br_if`, `br_table`, `end`, `return`, `unreachable` and tail calls.
//! Blocks of cost 0 that are neither a function start nor a loop body get no charge.
//! The added code itself is not counted, as on the replica. Function, global and type
//! indices of the module are unchanged: the counter, the helper types and the helper
//! functions are appended after everything the module defines.

use wasm_encoder::reencode::{self, Reencode};
use wasm_encoder::{
    BlockType, CodeSection, ConstExpr, ExportKind, ExportSection, Function, FunctionSection,
    GlobalSection, GlobalType, Instruction as I, Module, SectionId, TypeSection, ValType,
};
use wasmparser::{Operator, Parser, Payload, TypeRef};

use super::operator_cost::operator_cost;

/// Export name of the instruction counter global.
pub(crate) const COUNTER_EXPORT: &str = "__local_ic_instructions";

/// Instruments a (prepared) module; `Err` names what could not be rewritten.
pub(crate) fn instrument(wasm: &[u8]) -> Result<Vec<u8>, String> {
    let layout = Layout::scan(wasm)?;
    let mut metering = Metering { layout };
    let mut module = Module::new();
    metering
        .parse_core_module(&mut module, Parser::new(0), wasm)
        .map_err(|e| format!("cannot instrument the module: {e}"))?;
    Ok(module.finish())
}

/// What the rewrite needs to know before it starts: index spaces and present sections.
#[derive(Debug, Default)]
struct Layout {
    types: u32,
    imported_funcs: u32,
    defined_funcs: u32,
    imported_globals: u32,
    defined_globals: u32,
    present: Vec<SectionId>,
}

impl Layout {
    fn scan(wasm: &[u8]) -> Result<Self, String> {
        let invalid = |e: wasmparser::BinaryReaderError| format!("invalid module: {e}");
        let mut l = Layout::default();
        for payload in Parser::new(0).parse_all(wasm) {
            match payload.map_err(invalid)? {
                Payload::TypeSection(reader) => {
                    l.present.push(SectionId::Type);
                    for group in reader {
                        l.types += group.map_err(invalid)?.types().len() as u32;
                    }
                }
                Payload::ImportSection(reader) => {
                    for import in reader.into_imports() {
                        match import.map_err(invalid)?.ty {
                            TypeRef::Func(_) => l.imported_funcs += 1,
                            TypeRef::Global(_) => l.imported_globals += 1,
                            _ => {}
                        }
                    }
                }
                Payload::FunctionSection(reader) => {
                    l.present.push(SectionId::Function);
                    l.defined_funcs = reader.count();
                }
                Payload::GlobalSection(reader) => {
                    l.present.push(SectionId::Global);
                    l.defined_globals = reader.count();
                }
                Payload::ExportSection(_) => l.present.push(SectionId::Export),
                Payload::CodeSectionStart { .. } => l.present.push(SectionId::Code),
                _ => {}
            }
        }
        Ok(l)
    }

    fn counter(&self) -> u32 {
        self.imported_globals + self.defined_globals
    }
    /// `(i64) -> i64`: charges its argument, returns it.
    fn charge_type(&self) -> u32 {
        self.types
    }
    /// `() -> ()`: stops the execution (the counter went below zero).
    fn stop_type(&self) -> u32 {
        self.types + 1
    }
    fn charge_fn(&self) -> u32 {
        self.imported_funcs + self.defined_funcs
    }
    fn stop_fn(&self) -> u32 {
        self.charge_fn() + 1
    }
}

struct Metering {
    layout: Layout,
}

/// Where a charge goes, and what it charges.
#[derive(Clone, Copy, Debug)]
struct Charge {
    /// Index of the operator the charge is placed before.
    at: usize,
    kind: ChargeKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ChargeKind {
    /// A block's static cost; `check` for function and loop bodies (re-entrant blocks).
    Block { cost: u64, check: bool },
    /// The i32 size operand on top of the stack.
    Size,
}

/// The charges of one function body, in operator order (the replica's `injections`).
fn charges(ops: &[Operator<'_>]) -> Vec<Charge> {
    let block = |at, check, cost| Charge {
        at,
        kind: ChargeKind::Block { cost, check },
    };
    let mut out = Vec::new();
    let mut current = block(0, true, 1);
    for (at, op) in ops.iter().enumerate() {
        if let ChargeKind::Block { cost, .. } = &mut current.kind {
            *cost += operator_cost(op);
        }
        let next = match op {
            Operator::Loop { .. } => Some(true),
            Operator::If { .. }
            | Operator::Else
            | Operator::End
            | Operator::Br { .. }
            | Operator::BrIf { .. }
            | Operator::BrTable { .. }
            | Operator::Return
            | Operator::Unreachable
            | Operator::ReturnCall { .. }
            | Operator::ReturnCallIndirect { .. } => Some(false),
            Operator::MemoryFill { .. }
            | Operator::MemoryCopy { .. }
            | Operator::MemoryInit { .. }
            | Operator::TableFill { .. }
            | Operator::TableCopy { .. }
            | Operator::TableInit { .. } => {
                out.push(Charge {
                    at,
                    kind: ChargeKind::Size,
                });
                None
            }
            _ => None,
        };
        if let Some(check) = next {
            out.push(std::mem::replace(&mut current, block(at + 1, check, 0)));
        }
    }
    out.sort_by_key(|c| c.at);
    out.retain(|c| match c.kind {
        ChargeKind::Block { cost, check } => check || cost > 0,
        ChargeKind::Size => true,
    });
    out
}

impl Metering {
    fn emit_charge(&self, f: &mut Function, kind: ChargeKind) {
        let counter = self.layout.counter();
        match kind {
            ChargeKind::Block { cost, check } => {
                f.instruction(&I::GlobalGet(counter))
                    .instruction(&I::I64Const(cost as i64))
                    .instruction(&I::I64Sub)
                    .instruction(&I::GlobalSet(counter));
                if check {
                    self.emit_check(f);
                }
            }
            ChargeKind::Size => {
                f.instruction(&I::I64ExtendI32U)
                    .instruction(&I::Call(self.layout.charge_fn()))
                    .instruction(&I::I32WrapI64);
            }
        }
    }

    fn emit_check(&self, f: &mut Function) {
        f.instruction(&I::GlobalGet(self.layout.counter()))
            .instruction(&I::I64Const(0))
            .instruction(&I::I64LtS)
            .instruction(&I::If(BlockType::Empty))
            .instruction(&I::Call(self.layout.stop_fn()))
            .instruction(&I::End);
    }

    /// `charge(n) -> n`: subtracts `n` (saturating at `i64::MIN`), then checks.
    fn charge_body(&self) -> Function {
        let counter = self.layout.counter();
        let mut f = Function::new([(1, ValType::I64)]);
        f.instruction(&I::GlobalGet(counter))
            .instruction(&I::LocalGet(0))
            .instruction(&I::I64Sub)
            .instruction(&I::LocalTee(1))
            .instruction(&I::GlobalGet(counter))
            .instruction(&I::I64GtS)
            .instruction(&I::If(BlockType::Result(ValType::I64)))
            .instruction(&I::I64Const(i64::MIN))
            .instruction(&I::Else)
            .instruction(&I::LocalGet(1))
            .instruction(&I::End)
            .instruction(&I::GlobalSet(counter));
        self.emit_check(&mut f);
        f.instruction(&I::LocalGet(0)).instruction(&I::End);
        f
    }

    /// Stops the execution; the host sees the negative counter and reports the limit.
    fn stop_body() -> Function {
        let mut f = Function::new([]);
        f.instruction(&I::Unreachable).instruction(&I::End);
        f
    }

    fn add_types(&self, types: &mut TypeSection) {
        types.ty().function([ValType::I64], [ValType::I64]);
        types.ty().function([], []);
    }
    fn add_functions(&self, functions: &mut FunctionSection) {
        functions.function(self.layout.charge_type());
        functions.function(self.layout.stop_type());
    }
    fn add_counter(&self, globals: &mut GlobalSection) {
        let ty = GlobalType {
            val_type: ValType::I64,
            mutable: true,
            shared: false,
        };
        globals.global(ty, &ConstExpr::i64_const(0));
    }
    fn add_export(&self, exports: &mut ExportSection) {
        exports.export(COUNTER_EXPORT, ExportKind::Global, self.layout.counter());
    }
    fn add_bodies(&self, code: &mut CodeSection) {
        code.function(&self.charge_body());
        code.function(&Self::stop_body());
    }

    /// A section the module lacks but the rewrite needs, holding only the added entries.
    fn missing_section(&self, module: &mut Module, id: SectionId) {
        match id {
            SectionId::Type => {
                let mut s = TypeSection::new();
                self.add_types(&mut s);
                module.section(&s);
            }
            SectionId::Function => {
                let mut s = FunctionSection::new();
                self.add_functions(&mut s);
                module.section(&s);
            }
            SectionId::Global => {
                let mut s = GlobalSection::new();
                self.add_counter(&mut s);
                module.section(&s);
            }
            SectionId::Export => {
                let mut s = ExportSection::new();
                self.add_export(&mut s);
                module.section(&s);
            }
            SectionId::Code => {
                let mut s = CodeSection::new();
                self.add_bodies(&mut s);
                module.section(&s);
            }
            _ => {}
        }
    }
}

/// Position of a section in the module's required order.
fn rank(id: SectionId) -> u8 {
    match id {
        SectionId::Custom => 0,
        SectionId::Type => 1,
        SectionId::Import => 2,
        SectionId::Function => 3,
        SectionId::Table => 4,
        SectionId::Memory => 5,
        SectionId::Tag => 6,
        SectionId::Global => 7,
        SectionId::Export => 8,
        SectionId::Start => 9,
        SectionId::Element => 10,
        SectionId::DataCount => 11,
        SectionId::Code => 12,
        SectionId::Data => 13,
    }
}

type Res = Result<(), reencode::Error<std::convert::Infallible>>;

impl Reencode for Metering {
    type Error = std::convert::Infallible;

    fn parse_type_section(
        &mut self,
        types: &mut TypeSection,
        section: wasmparser::TypeSectionReader<'_>,
    ) -> Res {
        reencode::utils::parse_type_section(self, types, section)?;
        self.add_types(types);
        Ok(())
    }

    fn parse_function_section(
        &mut self,
        functions: &mut FunctionSection,
        section: wasmparser::FunctionSectionReader<'_>,
    ) -> Res {
        reencode::utils::parse_function_section(self, functions, section)?;
        self.add_functions(functions);
        Ok(())
    }

    fn parse_global_section(
        &mut self,
        globals: &mut GlobalSection,
        section: wasmparser::GlobalSectionReader<'_>,
    ) -> Res {
        reencode::utils::parse_global_section(self, globals, section)?;
        self.add_counter(globals);
        Ok(())
    }

    fn parse_export_section(
        &mut self,
        exports: &mut ExportSection,
        section: wasmparser::ExportSectionReader<'_>,
    ) -> Res {
        reencode::utils::parse_export_section(self, exports, section)?;
        self.add_export(exports);
        Ok(())
    }

    fn parse_code_section(
        &mut self,
        code: &mut CodeSection,
        section: wasmparser::CodeSectionReader<'_>,
    ) -> Res {
        reencode::utils::parse_code_section(self, code, section)?;
        self.add_bodies(code);
        Ok(())
    }

    fn parse_function_body(
        &mut self,
        code: &mut CodeSection,
        func: wasmparser::FunctionBody<'_>,
    ) -> Res {
        let mut f = self.new_function_with_parsed_locals(&func)?;
        let mut reader = func.get_operators_reader()?;
        let mut ops = Vec::new();
        while !reader.eof() {
            ops.push(reader.read()?);
        }
        let mut pending = charges(&ops).into_iter().peekable();
        for (at, op) in ops.into_iter().enumerate() {
            while let Some(charge) = pending.next_if(|c| c.at == at) {
                self.emit_charge(&mut f, charge.kind);
            }
            f.instruction(&self.instruction(op)?);
        }
        code.function(&f);
        Ok(())
    }

    fn intersperse_section_hook(
        &mut self,
        module: &mut Module,
        after: Option<SectionId>,
        before: Option<SectionId>,
    ) -> Res {
        let low = after.map_or(0, rank);
        let high = before.map_or(u8::MAX, rank);
        for id in [
            SectionId::Type,
            SectionId::Function,
            SectionId::Global,
            SectionId::Export,
            SectionId::Code,
        ] {
            if !self.layout.present.contains(&id) && low < rank(id) && rank(id) < high {
                self.missing_section(module, id);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops_of(wat_body: &str) -> Vec<Operator<'static>> {
        let wasm = wat::parse_str(format!("(module (func {wat_body}))")).unwrap();
        let wasm: &'static [u8] = Box::leak(wasm.into_boxed_slice());
        for payload in Parser::new(0).parse_all(wasm) {
            if let Payload::CodeSectionEntry(body) = payload.unwrap() {
                let mut reader = body.get_operators_reader().unwrap();
                let mut ops = Vec::new();
                while !reader.eof() {
                    ops.push(reader.read().unwrap());
                }
                return ops;
            }
        }
        unreachable!("one function")
    }

    #[test]
    fn a_straight_function_is_one_checked_block_of_its_costs_plus_one() {
        // i32.const 1 (1) + drop (1) + end (0), plus 1 for the function.
        let c = charges(&ops_of("i32.const 1 drop"));
        assert_eq!(c.len(), 1);
        assert_eq!(
            c[0].kind,
            ChargeKind::Block {
                cost: 3,
                check: true
            }
        );
    }

    #[test]
    fn a_loop_body_is_its_own_checked_block() {
        let c = charges(&ops_of("(loop (br 0))"));
        // [fn start: 1 + loop 0] [loop body: br 2] [after br: end 0 → dropped] [after end: end 0]
        let kinds: Vec<_> = c.iter().map(|c| (c.at, c.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                (
                    0,
                    ChargeKind::Block {
                        cost: 1,
                        check: true
                    }
                ),
                (
                    1,
                    ChargeKind::Block {
                        cost: 2,
                        check: true
                    }
                ),
            ]
        );
    }

    /// Compiles (and so validates) `wasm` with wasmi, returning the counter's export.
    fn compiles_with_counter(wasm: &[u8]) -> bool {
        let engine = wasmi::Engine::default();
        let module = wasmi::Module::new(&engine, wasm).expect("the rewrite is valid");
        let found = module.exports().any(|e| e.name() == COUNTER_EXPORT);
        found
    }

    #[test]
    fn bulk_memory_rewrite_is_valid_and_exports_the_counter() {
        let wasm = wat::parse_str(
            "(module (memory 1) (func (memory.fill (i32.const 0) (i32.const 0) (i32.const 9))))",
        )
        .unwrap();
        assert!(compiles_with_counter(&instrument(&wasm).unwrap()));
    }

    #[test]
    fn a_module_without_types_functions_globals_or_exports_gets_them() {
        let wasm = wat::parse_str("(module)").unwrap();
        assert!(compiles_with_counter(&instrument(&wasm).unwrap()));
    }
}
