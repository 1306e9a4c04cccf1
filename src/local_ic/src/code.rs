//! A canister's installed code: the wasmi instance, its store and the means to run
//! one execution and to roll back its effects on the heap, globals and stable memory.

use std::sync::Arc;

use wasmi::{Engine, Global, Instance, Linker, Memory, Module, Store, Table, TrapCode, Val};

use crate::errors::InstallError;
use crate::stable::{StableMemory, WASM_PAGE_SIZE};
use crate::system_api::{Env, ExecState, HostTrap};
use crate::wasm_module::PreparedModule;

/// What to run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Entry<'a> {
    /// An exported function of type `() -> ()`.
    Export(&'a str),
    /// A function in table 0 of type `(i32) -> ()`, called with `env`.
    Callback { fun: u32, env: u32 },
}

/// The result of one execution.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    /// The execution state with all effects the execution produced.
    pub exec: ExecState,
    /// `Err(trap message)` if the execution trapped.
    pub result: Result<(), String>,
    /// Instructions consumed, as the host counts them: the IC cost model's count when the
    /// model is on, wasmi fuel otherwise.
    pub instructions: u64,
    /// wasmi fuel consumed (with the IC model on: by the instrumented module).
    pub fuel: u64,
    /// `ic0.debug_print` output.
    pub logs: Vec<String>,
}

/// Heap and globals at the start of a transaction.
#[derive(Debug)]
pub(crate) struct Snapshot {
    heap: Vec<u8>,
    globals: Vec<Val>,
}

/// An instantiated canister module.
pub(crate) struct Code {
    pub prepared: Arc<PreparedModule>,
    module: Module,
    store: Store<Env>,
    instance: Instance,
    memory: Option<Memory>,
    table: Option<Table>,
    globals: Vec<Global>,
    /// The IC cost model's counter (instructions left), if the module is instrumented.
    counter: Option<Global>,
}

/// Fuel given to an execution when the IC cost model enforces the limit instead.
const UNMETERED_FUEL: u64 = u64::MAX / 2;

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Code").finish_non_exhaustive()
    }
}

impl Code {
    /// Compiles a prepared module.
    pub fn compile(engine: &Engine, prepared: &PreparedModule) -> Result<Module, InstallError> {
        Module::new(engine, &prepared.bytes).map_err(|e| InstallError::InvalidWasm(e.to_string()))
    }

    /// Instantiates `module` with `stable` as its stable memory. Does not run `(start)`.
    pub fn instantiate(
        linker: &Linker<Env>,
        module: Module,
        prepared: Arc<PreparedModule>,
        stable: StableMemory,
    ) -> Result<Self, InstallError> {
        let env = Env {
            stable,
            ..Env::default()
        };
        let mut store = Store::new(module.engine(), env);
        let instance = linker
            .instantiate_and_start(&mut store, &module)
            .map_err(|e| InstallError::InvalidWasm(format!("instantiation failed: {e}")))?;
        let memory = prepared
            .memory_export
            .as_deref()
            .and_then(|name| instance.get_memory(&store, name));
        let table = prepared
            .table_export
            .as_deref()
            .and_then(|name| instance.get_table(&store, name));
        let globals = prepared
            .global_exports
            .iter()
            .filter_map(|name| instance.get_global(&store, name))
            .collect();
        let counter = instance.get_global(&store, crate::ic_cost::instrument::COUNTER_EXPORT);
        store.data_mut().memory = memory;
        store.data_mut().ic_counter = counter;
        let code = Self {
            prepared,
            module,
            store,
            instance,
            memory,
            table,
            globals,
            counter,
        };
        code.check_entry_point_types()?;
        Ok(code)
    }

    fn check_entry_point_types(&self) -> Result<(), InstallError> {
        let p = &self.prepared;
        let names = p
            .system_exports
            .iter()
            .cloned()
            .chain(p.start_export.iter().cloned())
            .chain(p.methods.iter().map(|(m, kind)| method_export(m, *kind)));
        for name in names {
            if self
                .instance
                .get_typed_func::<(), ()>(&self.store, &name)
                .is_err()
            {
                return Err(InstallError::InvalidWasm(format!(
                    "export `{name}` must be a function of type () -> ()"
                )));
            }
        }
        Ok(())
    }

    pub fn stable(&self) -> &StableMemory {
        &self.store.data().stable
    }

    /// Moves the stable memory out (used to carry it into the upgraded instance).
    pub fn take_stable(&mut self) -> StableMemory {
        std::mem::take(&mut self.store.data_mut().stable)
    }

    /// Puts back stable memory taken with [`Code::take_stable`].
    pub fn put_stable(&mut self, stable: StableMemory) {
        self.store.data_mut().stable = stable;
    }

    /// Size of the Wasm heap in bytes.
    pub fn heap_size(&self) -> usize {
        self.memory.map_or(0, |m| m.data_size(&self.store))
    }

    /// Starts a transaction: snapshots heap and globals and opens the stable journal.
    pub fn begin(&mut self) -> Snapshot {
        self.store.data_mut().stable.begin();
        Snapshot {
            heap: self
                .memory
                .map(|m| m.data(&self.store).to_vec())
                .unwrap_or_default(),
            globals: self.globals.iter().map(|g| g.get(&self.store)).collect(),
        }
    }

    /// Keeps everything since [`Code::begin`].
    pub fn commit(&mut self) {
        self.store.data_mut().stable.commit();
    }

    /// Undoes everything since [`Code::begin`].
    ///
    /// If the heap grew, the instance is re-created (a Wasm memory cannot shrink); the
    /// snapshot then restores memory contents and all mutable globals, including the
    /// shadow-stack pointer that a trap leaves in an arbitrary state.
    pub fn rollback(&mut self, linker: &Linker<Env>, snapshot: Snapshot) {
        self.store.data_mut().stable.rollback();
        if self.heap_size() != snapshot.heap.len() {
            self.reinstantiate(linker, snapshot.heap.len());
        }
        if let Some(memory) = self.memory {
            memory
                .data_mut(&mut self.store)
                .copy_from_slice(&snapshot.heap);
        }
        for (global, value) in self.globals.iter().zip(snapshot.globals) {
            global
                .set(&mut self.store, value)
                .expect("restoring a mutable global of the same type");
        }
    }

    fn reinstantiate(&mut self, linker: &Linker<Env>, heap_size: usize) {
        let env = std::mem::take(self.store.data_mut());
        let fresh = Self::instantiate(
            linker,
            self.module.clone(),
            self.prepared.clone(),
            env.stable,
        )
        .expect("re-instantiating a module that instantiated before");
        *self = fresh;
        if let Some(memory) = self.memory {
            let current = memory.size(&self.store);
            let wanted = heap_size as u64 / WASM_PAGE_SIZE;
            if wanted > current {
                memory
                    .grow(&mut self.store, wanted - current)
                    .expect("growing to a size the memory had before");
            }
        }
    }

    /// Runs one execution with `exec` as its System API state.
    ///
    /// With the IC cost model the counter starts at the limit and the limit applies to it;
    /// fuel is still counted, without a limit.
    pub fn run(&mut self, entry: Entry<'_>, exec: ExecState) -> RunOutcome {
        let limit = exec.fuel_limit;
        let fuel_given = if self.counter.is_some() {
            UNMETERED_FUEL
        } else {
            limit
        };
        self.store
            .set_fuel(fuel_given)
            .expect("fuel metering is enabled");
        if let Some(counter) = self.counter {
            counter
                .set(&mut self.store, Val::I64(limit.min(i64::MAX as u64) as i64))
                .expect("the counter is a mutable i64");
        }
        self.store.data_mut().exec = Some(exec);
        self.store.data_mut().logs.clear();
        let result = match entry {
            Entry::Export(name) => {
                match self.instance.get_typed_func::<(), ()>(&self.store, name) {
                    Ok(func) => func.call(&mut self.store, ()),
                    Err(e) => Err(wasmi::Error::new(format!(
                        "cannot call export `{name}`: {e}"
                    ))),
                }
            }
            Entry::Callback { fun, env } => self.call_table(fun, env),
        };
        // Running out of fuel charges the whole limit, even if wasmi stopped with a
        // little fuel left (the next instruction cost more than what remained).
        let remaining = match &result {
            Err(e) if is_out_of_fuel(e) => 0,
            _ => self.store.get_fuel().unwrap_or(0),
        };
        let fuel = fuel_given.saturating_sub(remaining);
        let mut result = result.map_err(|e| describe_trap(&e, limit));
        let instructions = match self.counter {
            None => fuel,
            Some(counter) => {
                let left = counter
                    .get(&self.store)
                    .i64()
                    .expect("the counter is an i64");
                // Below zero: over the limit, whether the canister trapped at a check or
                // returned first (the replica fails the message either way).
                if left < 0 {
                    result = Err(limit_exceeded(limit));
                    limit
                } else {
                    limit.saturating_sub(left as u64)
                }
            }
        };
        let data = self.store.data_mut();
        let exec = data.exec.take().expect("set above");
        let logs = std::mem::take(&mut data.logs);
        RunOutcome {
            exec,
            result,
            instructions,
            fuel,
            logs,
        }
    }

    fn call_table(&mut self, fun: u32, env: u32) -> Result<(), wasmi::Error> {
        let invalid = || {
            wasmi::Error::new(format!(
                "callback table index {fun} is not a function of type (i32) -> ()"
            ))
        };
        let table = self.table.ok_or_else(invalid)?;
        let func = match table.get(&self.store, u64::from(fun)) {
            Some(wasmi::Ref::Func(func)) => {
                Option::<wasmi::Func>::from(func).ok_or_else(invalid)?
            }
            _ => return Err(invalid()),
        };
        let func = func.typed::<i32, ()>(&self.store).map_err(|_| invalid())?;
        func.call(&mut self.store, env as i32)
    }
}

/// The export name of a method.
pub(crate) fn method_export(method: &str, kind: crate::wasm_module::MethodKind) -> String {
    use crate::wasm_module::MethodKind;
    let prefix = match kind {
        MethodKind::Update => "canister_update",
        MethodKind::Query => "canister_query",
        MethodKind::CompositeQuery => "canister_composite_query",
    };
    format!("{prefix} {method}")
}

/// Turns a wasmi error into the trap message a canister's caller sees.
fn describe_trap(error: &wasmi::Error, limit: u64) -> String {
    if let Some(trap) = error.downcast_ref::<HostTrap>() {
        return trap.to_string();
    }
    if is_out_of_fuel(error) {
        return limit_exceeded(limit);
    }
    let what = match error.as_trap_code() {
        Some(TrapCode::UnreachableCodeReached) => "unreachable".to_string(),
        Some(TrapCode::MemoryOutOfBounds) => "heap out of bounds".to_string(),
        Some(TrapCode::IntegerDivisionByZero) => "integer division by 0".to_string(),
        Some(TrapCode::StackOverflow) => "stack overflow".to_string(),
        Some(code) => code.trap_message().to_string(),
        None => error.to_string(),
    };
    format!("Canister trapped: {what}")
}

/// The trap message of an execution over its instruction limit (as the replica words it).
fn limit_exceeded(limit: u64) -> String {
    format!("Canister exceeded the limit of {limit} instructions for single message execution.")
}

fn is_out_of_fuel(error: &wasmi::Error) -> bool {
    use wasmi::errors::{ErrorKind, FuelError, MemoryError, TableError};
    matches!(
        error.kind(),
        ErrorKind::TrapCode(TrapCode::OutOfFuel)
            | ErrorKind::Fuel(FuelError::OutOfFuel { .. })
            | ErrorKind::Memory(MemoryError::OutOfFuel { .. })
            | ErrorKind::Table(TableError::OutOfFuel { .. })
    )
}
