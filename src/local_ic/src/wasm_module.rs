//! Checking and preparing a canister module before it is compiled.
//!
//! The host needs to reach the memory, the callback table and every mutable global
//! from outside the instance (to snapshot and restore them around executions), but
//! a module need not export them. Instead of asking every canister build to export
//! them, the module is rewritten: missing exports are added under `__local_ic_*`
//! names, and a `(start)` function is turned into an export so it runs exactly once
//! at install and not again when an instance is re-created to roll back a trap.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use wasmparser::{ExternalKind, Parser, Payload, TypeRef, ValType};

use crate::errors::InstallError;
use crate::system_api::IMPORTS;

const MEMORY_EXPORT: &str = "__local_ic_memory";
const TABLE_EXPORT: &str = "__local_ic_table";
const START_EXPORT: &str = "__local_ic_start";
const GLOBAL_EXPORT_PREFIX: &str = "__local_ic_global_";

/// How a canister method is exported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MethodKind {
    Update,
    Query,
    CompositeQuery,
}

/// A module that passed the host's checks, rewritten so the host can reach its state.
#[derive(Clone, Debug)]
pub(crate) struct PreparedModule {
    /// The (possibly rewritten) module bytes to compile.
    pub bytes: Vec<u8>,
    /// Export name of memory 0, if the module has a memory.
    pub memory_export: Option<String>,
    /// Export name of table 0, if the module has a table.
    pub table_export: Option<String>,
    /// Export names of all mutable globals.
    pub global_exports: Vec<String>,
    /// Export name of the former `(start)` function.
    pub start_export: Option<String>,
    /// Public methods by name.
    pub methods: BTreeMap<String, MethodKind>,
    /// Other `canister_*` entry points that are exported (`canister_init`, ...).
    pub system_exports: BTreeSet<String>,
}

impl PreparedModule {
    /// Whether the module exports this system entry point (e.g. `canister_init`).
    pub fn exports(&self, name: &str) -> bool {
        self.system_exports.contains(name)
    }
}

/// Entry points other than methods that a canister may export.
const SYSTEM_ENTRY_POINTS: &[&str] = &[
    "canister_init",
    "canister_inspect_message",
    "canister_pre_upgrade",
    "canister_post_upgrade",
    "canister_heartbeat",
    "canister_global_timer",
    "canister_on_low_wasm_memory",
];

/// Decompresses gzip (`.wasm.gz`) modules as the IC does.
pub(crate) fn decompress(wasm: &[u8]) -> Result<Vec<u8>, InstallError> {
    if wasm.starts_with(&[0x1f, 0x8b, 0x08]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(wasm)
            .read_to_end(&mut out)
            .map_err(|e| InstallError::InvalidWasm(format!("cannot decompress gzip: {e}")))?;
        Ok(out)
    } else {
        Ok(wasm.to_vec())
    }
}

/// Checks the module against what the host implements and adds the exports it needs.
pub(crate) fn prepare(wasm: &[u8]) -> Result<PreparedModule, InstallError> {
    let info = scan(wasm)?;
    let exported: BTreeSet<&str> = info.exports.iter().map(|e| e.name.as_str()).collect();
    if let Some(name) = exported.iter().find(|n| n.starts_with("__local_ic_")) {
        return Err(InstallError::Unsupported(format!(
            "the module exports `{name}`, a name reserved by the local IC host"
        )));
    }

    let mut methods = BTreeMap::new();
    let mut system_exports = BTreeSet::new();
    for export in info.exports.iter().filter(|e| e.kind == ExternalKind::Func) {
        let name = export.name.as_str();
        let method = [
            ("canister_update ", MethodKind::Update),
            ("canister_query ", MethodKind::Query),
            ("canister_composite_query ", MethodKind::CompositeQuery),
        ]
        .iter()
        .find_map(|(prefix, kind)| name.strip_prefix(prefix).map(|m| (m, *kind)));
        if let Some((method, kind)) = method {
            if methods.insert(method.to_string(), kind).is_some() {
                return Err(InstallError::InvalidWasm(format!(
                    "method `{method}` is exported more than once"
                )));
            }
        } else if SYSTEM_ENTRY_POINTS.contains(&name) {
            system_exports.insert(name.to_string());
        } else if name.starts_with("canister_") {
            return Err(InstallError::InvalidWasm(format!(
                "the module exports `{name}`, which is not a valid canister entry point"
            )));
        }
    }
    if system_exports.contains("canister_heartbeat") {
        return Err(InstallError::Unsupported(
            "`canister_heartbeat` (heartbeats are not simulated; use the global timer)".into(),
        ));
    }

    let find_export = |kind: ExternalKind, index: u32| {
        info.exports
            .iter()
            .find(|e| e.kind == kind && e.index == index)
            .map(|e| e.name.clone())
    };
    let mut added: Vec<(String, u8, u32)> = Vec::new();
    let mut add = |name: String, kind: u8, index: u32| {
        added.push((name.clone(), kind, index));
        name
    };

    let memory_export = match (info.memories > 0, find_export(ExternalKind::Memory, 0)) {
        (false, _) => None,
        (true, Some(name)) => Some(name),
        (true, None) => Some(add(MEMORY_EXPORT.into(), 2, 0)),
    };
    let table_export = match (info.tables > 0, find_export(ExternalKind::Table, 0)) {
        (false, _) => None,
        (true, Some(name)) => Some(name),
        (true, None) => Some(add(TABLE_EXPORT.into(), 1, 0)),
    };
    let mut global_exports = Vec::new();
    for (index, mutable) in info.globals.iter().enumerate() {
        if !mutable {
            continue;
        }
        let index = index as u32;
        let name = match find_export(ExternalKind::Global, index) {
            Some(name) => name,
            None => add(format!("{GLOBAL_EXPORT_PREFIX}{index}"), 3, index),
        };
        global_exports.push(name);
    }
    let start_export = info.start.map(|func| add(START_EXPORT.into(), 0, func));

    let bytes = if added.is_empty() {
        wasm.to_vec()
    } else {
        rewrite(wasm, &info, &added)?
    };
    Ok(PreparedModule {
        bytes,
        memory_export,
        table_export,
        global_exports,
        start_export,
        methods,
        system_exports,
    })
}

#[derive(Debug)]
struct ExportEntry {
    name: String,
    kind: ExternalKind,
    index: u32,
}

/// What the host needs to know about a module, from one pass of `wasmparser`.
#[derive(Debug, Default)]
struct ModuleScan {
    memories: u32,
    tables: u32,
    /// Mutability of each defined global (imported globals are refused).
    globals: Vec<bool>,
    exports: Vec<ExportEntry>,
    start: Option<u32>,
}

fn invalid(e: impl std::fmt::Display) -> InstallError {
    InstallError::InvalidWasm(e.to_string())
}

fn scan(wasm: &[u8]) -> Result<ModuleScan, InstallError> {
    let mut scan = ModuleScan::default();
    let mut func_types: Vec<(Vec<ValType>, Vec<ValType>)> = Vec::new();
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(invalid)? {
            Payload::Version { encoding, .. } if encoding != wasmparser::Encoding::Module => {
                return Err(InstallError::InvalidWasm(
                    "components are not canister modules".into(),
                ));
            }
            Payload::TypeSection(reader) => {
                for rec_group in reader {
                    for ty in rec_group.map_err(invalid)?.into_types() {
                        match &ty.composite_type.inner {
                            wasmparser::CompositeInnerType::Func(f) => {
                                func_types.push((f.params().to_vec(), f.results().to_vec()))
                            }
                            _ => {
                                return Err(InstallError::Unsupported(
                                    "GC types in the type section".into(),
                                ))
                            }
                        }
                    }
                }
            }
            Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    let import = import.map_err(invalid)?;
                    check_import(&import, &func_types)?;
                }
            }
            Payload::MemorySection(reader) => {
                for memory in reader {
                    let memory = memory.map_err(invalid)?;
                    if memory.memory64 {
                        return Err(InstallError::Unsupported(
                            "64-bit memories (the host implements the i32 System API only)".into(),
                        ));
                    }
                    scan.memories += 1;
                }
            }
            Payload::TableSection(reader) => scan.tables += reader.count(),
            Payload::GlobalSection(reader) => {
                for global in reader {
                    scan.globals.push(global.map_err(invalid)?.ty.mutable);
                }
            }
            Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.map_err(invalid)?;
                    scan.exports.push(ExportEntry {
                        name: export.name.to_string(),
                        kind: export.kind,
                        index: export.index,
                    });
                }
            }
            Payload::StartSection { func, .. } => scan.start = Some(func),
            _ => {}
        }
    }
    if scan.memories > 1 {
        return Err(InstallError::InvalidWasm(
            "a canister may declare at most one memory".into(),
        ));
    }
    Ok(scan)
}

fn check_import(
    import: &wasmparser::Import<'_>,
    func_types: &[(Vec<ValType>, Vec<ValType>)],
) -> Result<(), InstallError> {
    let unsupported = || InstallError::UnsupportedImport {
        module: import.module.to_string(),
        name: import.name.to_string(),
    };
    let TypeRef::Func(type_index) = import.ty else {
        return Err(unsupported());
    };
    if import.module != "ic0" {
        return Err(unsupported());
    }
    let Some(spec) = IMPORTS.iter().find(|spec| spec.name == import.name) else {
        return Err(unsupported());
    };
    let (params, results) = func_types
        .get(type_index as usize)
        .ok_or_else(|| invalid("import refers to an unknown type"))?;
    let found = signature_string(params, results);
    let expected = spec.signature();
    if found != expected {
        return Err(InstallError::ImportSignatureMismatch {
            name: import.name.to_string(),
            expected,
            found,
        });
    }
    Ok(())
}

fn signature_string(params: &[ValType], results: &[ValType]) -> String {
    let list = |tys: &[ValType]| {
        tys.iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("({}) -> ({})", list(params), list(results))
}

/// A top-level section: id and the byte range of the whole section (header included).
struct RawSection {
    id: u8,
    start: usize,
    content_start: usize,
    end: usize,
}

fn read_leb_u32(bytes: &[u8], pos: &mut usize) -> Result<u32, InstallError> {
    let mut result: u64 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *bytes
            .get(*pos)
            .ok_or_else(|| invalid("truncated LEB128 value"))?;
        *pos += 1;
        result |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return u32::try_from(result).map_err(|_| invalid("LEB128 value too large"));
        }
    }
    Err(invalid("LEB128 value too long"))
}

/// Appends `value` as unsigned LEB128 (wasm section sizes and counts, Candid lengths).
pub(crate) fn write_leb128(out: &mut Vec<u8>, value: u64) {
    leb128::write::unsigned(out, value).expect("writing to a Vec does not fail");
}

fn sections(wasm: &[u8]) -> Result<Vec<RawSection>, InstallError> {
    let mut pos = 8;
    let mut out = Vec::new();
    while pos < wasm.len() {
        let start = pos;
        let id = wasm[pos];
        pos += 1;
        let size = read_leb_u32(wasm, &mut pos)? as usize;
        let content_start = pos;
        pos = pos
            .checked_add(size)
            .filter(|end| *end <= wasm.len())
            .ok_or_else(|| invalid("section extends past the end of the module"))?;
        out.push(RawSection {
            id,
            start,
            content_start,
            end: pos,
        });
    }
    Ok(out)
}

/// Rebuilds the module with extra exports and without a start section.
fn rewrite(
    wasm: &[u8],
    scan: &ModuleScan,
    added: &[(String, u8, u32)],
) -> Result<Vec<u8>, InstallError> {
    const EXPORT: u8 = 7;
    const START: u8 = 8;
    // Sections that must come after the export section (start, element, data count, code, data).
    const AFTER_EXPORT: [u8; 5] = [8, 9, 10, 11, 12];

    let mut content = Vec::new();
    write_leb128(&mut content, (scan.exports.len() + added.len()) as u64);
    let sections = sections(wasm)?;
    if let Some(s) = sections.iter().find(|s| s.id == EXPORT) {
        let mut pos = s.content_start;
        read_leb_u32(wasm, &mut pos)?;
        content.extend_from_slice(&wasm[pos..s.end]);
    }
    for (name, kind, index) in added {
        write_leb128(&mut content, name.len() as u64);
        content.extend_from_slice(name.as_bytes());
        content.push(*kind);
        write_leb128(&mut content, u64::from(*index));
    }
    let mut export_section = vec![EXPORT];
    write_leb128(&mut export_section, content.len() as u64);
    export_section.extend_from_slice(&content);

    let mut out = wasm[..8].to_vec();
    let mut written = false;
    for s in &sections {
        if s.id == START {
            continue;
        }
        if s.id == EXPORT {
            out.extend_from_slice(&export_section);
            written = true;
            continue;
        }
        if !written && AFTER_EXPORT.contains(&s.id) {
            out.extend_from_slice(&export_section);
            written = true;
        }
        out.extend_from_slice(&wasm[s.start..s.end]);
    }
    if !written {
        out.extend_from_slice(&export_section);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_exports_and_removes_start() {
        let wasm = wat::parse_str(
            r#"(module
                (memory 1)
                (table 2 funcref)
                (global $g (mut i32) (i32.const 5))
                (global $c i32 (i32.const 1))
                (global $h (export "h") (mut i64) (i64.const 1))
                (func $s (global.set $g (i32.const 6)))
                (start $s)
                (func (export "canister_update f")))"#,
        )
        .unwrap();
        let p = prepare(&wasm).unwrap();
        assert_eq!(p.memory_export.as_deref(), Some(MEMORY_EXPORT));
        assert_eq!(p.table_export.as_deref(), Some(TABLE_EXPORT));
        assert_eq!(
            p.global_exports,
            vec!["__local_ic_global_0".to_string(), "h".into()]
        );
        assert_eq!(p.start_export.as_deref(), Some(START_EXPORT));
        assert_eq!(p.methods.get("f"), Some(&MethodKind::Update));
        let again = scan(&p.bytes).unwrap();
        assert!(again.start.is_none());
        assert_eq!(again.exports.len(), 6);
    }

    #[test]
    fn module_without_exports_gets_an_export_section() {
        let wasm = wat::parse_str("(module (memory 1) (func) (data (i32.const 0) \"x\"))").unwrap();
        let p = prepare(&wasm).unwrap();
        assert_eq!(p.memory_export.as_deref(), Some(MEMORY_EXPORT));
        wasmi::Module::new(&wasmi::Engine::default(), &p.bytes).unwrap();
    }

    #[test]
    fn refuses_unknown_imports_by_name() {
        let wasm = wat::parse_str(r#"(module (import "ic0" "no_such_call" (func)))"#).unwrap();
        let err = prepare(&wasm).unwrap_err();
        assert_eq!(
            err,
            InstallError::UnsupportedImport {
                module: "ic0".into(),
                name: "no_such_call".into()
            }
        );
        let wasm = wat::parse_str(r#"(module (import "env" "time" (func)))"#).unwrap();
        assert!(prepare(&wasm).unwrap_err().to_string().contains("env.time"));
    }

    #[test]
    fn refuses_wrong_signatures() {
        let wasm = wat::parse_str(r#"(module (import "ic0" "time" (func (result i32))))"#).unwrap();
        let err = prepare(&wasm).unwrap_err();
        assert!(
            matches!(err, InstallError::ImportSignatureMismatch { .. }),
            "{err}"
        );
    }

    #[test]
    fn refuses_heartbeat_and_bad_entry_points() {
        let wasm = wat::parse_str(r#"(module (func (export "canister_heartbeat")))"#).unwrap();
        assert!(matches!(prepare(&wasm), Err(InstallError::Unsupported(_))));
        let wasm = wat::parse_str(r#"(module (func (export "canister_bogus")))"#).unwrap();
        assert!(matches!(prepare(&wasm), Err(InstallError::InvalidWasm(_))));
    }
}
