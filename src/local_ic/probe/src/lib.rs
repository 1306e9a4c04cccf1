//! Probe canister for the local IC host tests: exercises the parts of ic-cdk 0.20
//! that matter to the host (updates, queries, stable structures, bounded-wait
//! calls, ic-cdk-timers, upgrades, inspect_message, the management canister).

use std::cell::RefCell;
use std::time::Duration;

use candid::Principal;
use ic_cdk::call::Call;
use ic_stable_structures::memory_manager::{MemoryId, MemoryManager, VirtualMemory};
use ic_stable_structures::{DefaultMemoryImpl, StableBTreeMap, StableCell};

type Mem = VirtualMemory<DefaultMemoryImpl>;

thread_local! {
    static MM: RefCell<MemoryManager<DefaultMemoryImpl>> =
        RefCell::new(MemoryManager::init(DefaultMemoryImpl::default()));
    static MAP: RefCell<StableBTreeMap<u64, String, Mem>> =
        RefCell::new(StableBTreeMap::init(MM.with(|m| m.borrow().get(MemoryId::new(0)))));
    static UPGRADES: RefCell<StableCell<u64, Mem>> =
        RefCell::new(StableCell::init(MM.with(|m| m.borrow().get(MemoryId::new(1))), 0));
    static TIMER_FIRED: RefCell<u64> = const { RefCell::new(0) };
    static HEAP_COUNTER: RefCell<u64> = const { RefCell::new(0) };
}

#[ic_cdk::init]
fn init() {
    ic_cdk::println!("probe init");
}

#[ic_cdk::pre_upgrade]
fn pre_upgrade() {
    ic_cdk::println!("probe pre_upgrade");
}

#[ic_cdk::post_upgrade]
fn post_upgrade() {
    UPGRADES.with(|c| {
        let n = *c.borrow().get() + 1;
        c.borrow_mut().set(n);
    });
}

#[ic_cdk::inspect_message]
fn inspect_message() {
    if ic_cdk::api::msg_method_name() != "forbidden" {
        ic_cdk::api::accept_message();
    }
}

#[ic_cdk::update]
fn forbidden() -> u64 {
    1
}

#[ic_cdk::update]
fn put(key: u64, value: String) -> Option<String> {
    MAP.with(|m| m.borrow_mut().insert(key, value))
}

#[ic_cdk::update]
fn put_many(start: u64, count: u64) -> u64 {
    MAP.with(|m| {
        let mut m = m.borrow_mut();
        for k in start..start + count {
            m.insert(k, format!("value-{k}"));
        }
        m.len()
    })
}

/// Writes a record, then traps: the write must be rolled back.
#[ic_cdk::update]
fn put_then_trap(key: u64, value: String) {
    MAP.with(|m| m.borrow_mut().insert(key, value));
    HEAP_COUNTER.with(|c| *c.borrow_mut() += 1000);
    ic_cdk::trap("probe: trap after write");
}

#[ic_cdk::query]
fn get(key: u64) -> Option<String> {
    MAP.with(|m| m.borrow().get(&key))
}

#[ic_cdk::query]
fn len() -> u64 {
    MAP.with(|m| m.borrow().len())
}

/// A query that writes: the write must not be committed.
#[ic_cdk::query]
fn query_writes(key: u64) -> u64 {
    MAP.with(|m| m.borrow_mut().insert(key, "from-query".to_string()));
    HEAP_COUNTER.with(|c| {
        *c.borrow_mut() += 1;
        *c.borrow()
    })
}

#[ic_cdk::update]
fn bump() -> u64 {
    HEAP_COUNTER.with(|c| {
        *c.borrow_mut() += 1;
        *c.borrow()
    })
}

#[ic_cdk::query]
fn counter() -> u64 {
    HEAP_COUNTER.with(|c| *c.borrow())
}

#[ic_cdk::query]
fn upgrades() -> u64 {
    UPGRADES.with(|c| *c.borrow().get())
}

#[ic_cdk::update]
fn echo(x: u64) -> u64 {
    x
}

/// Reports the deadline this call sees (0 when unbounded / ingress).
#[ic_cdk::update]
fn deadline() -> u64 {
    ic_cdk::api::msg_deadline().map(|d| d.get()).unwrap_or(0)
}

/// Bounded-wait call to `target.method(x)`; returns the reply or `code:message`.
#[ic_cdk::update]
async fn call_bounded(target: Principal, method: String, x: u64) -> Result<u64, String> {
    let res = Call::bounded_wait(target, &method).with_arg(x).await;
    HEAP_COUNTER.with(|c| *c.borrow_mut() += 1);
    match res {
        Ok(r) => r.candid::<u64>().map_err(|e| e.to_string()),
        Err(ic_cdk::call::CallFailed::CallRejected(r)) => {
            Err(format!("{}:{}", r.raw_reject_code(), r.reject_message()))
        }
        Err(e) => Err(format!("failed:{e}")),
    }
}

/// Unbounded-wait call, used to compare deadlines.
#[ic_cdk::update]
async fn call_unbounded(target: Principal, method: String, x: u64) -> Result<u64, String> {
    match Call::unbounded_wait(target, &method).with_arg(x).await {
        Ok(r) => r.candid::<u64>().map_err(|e| e.to_string()),
        Err(ic_cdk::call::CallFailed::CallRejected(r)) => {
            Err(format!("{}:{}", r.raw_reject_code(), r.reject_message()))
        }
        Err(e) => Err(format!("failed:{e}")),
    }
}

#[ic_cdk::update]
async fn rand() -> Vec<u8> {
    let r = Call::unbounded_wait(Principal::management_canister(), "raw_rand")
        .await
        .expect("raw_rand failed");
    r.candid::<Vec<u8>>().expect("raw_rand decode")
}

#[ic_cdk::update]
fn schedule(delay_ns: u64) {
    ic_cdk_timers::set_timer(Duration::from_nanos(delay_ns), async {
        TIMER_FIRED.with(|c| *c.borrow_mut() += 1);
        MAP.with(|m| m.borrow_mut().insert(u64::MAX, "timer".to_string()));
    });
}

#[ic_cdk::query]
fn timer_fired() -> u64 {
    TIMER_FIRED.with(|c| *c.borrow())
}

#[ic_cdk::query]
fn info() -> (Principal, Principal, u64, bool, u64) {
    (
        ic_cdk::api::canister_self(),
        ic_cdk::api::msg_caller(),
        ic_cdk::api::time(),
        ic_cdk::api::is_controller(&ic_cdk::api::msg_caller()),
        ic_cdk::api::canister_version(),
    )
}

#[ic_cdk::update]
fn burn(n: u64) -> (u64, u64) {
    let mut x: u64 = 0;
    for i in 0..n {
        x = x.wrapping_mul(31).wrapping_add(i);
    }
    (x, ic_cdk::api::performance_counter(0))
}
