//! The canister layer: entry points over the ledger logic, the stable-memory glue, and the
//! fault actions (an error reply, a reject, a trap, a held-back reply).
//!
//! Every endpoint reads the caller and the time before its first `await`; after an `await`
//! nothing traps except a deliberately injected `Trap`.

use crate::certification::{certified_data, encode_tree, tip_tree};
use crate::faults::FaultQueue;
use crate::ledger::{supported_standards, Ledger};
use crate::types::{
    Account, Allowance, AllowanceArgs, ApproveArgs, ApproveError, BlockType, Fault, FaultPlan,
    GetArchivesArgs, GetBlocksArgs, GetBlocksResult, ICRC3ArchiveInfo, ICRC3DataCertificate,
    InitArgs, InjectedErr, MetadataValue, SupportedStandard, TransferArg, TransferError,
    TransferFromArgs, TransferFromError,
};
use candid::{CandidType, Nat};
use ic_cdk::api::{
    canister_self, certified_data_set, data_certificate, is_controller, msg_caller, msg_reject,
    msg_reply, time,
};
use ic_cdk::call::Call;
use ic_cdk::{init, post_upgrade, query, update};
use ic_stable_structures::memory_manager::{MemoryManager, VirtualMemory};
use ic_stable_structures::DefaultMemoryImpl;
use serde_bytes::ByteBuf;
use std::cell::RefCell;
use std::marker::PhantomData;

/// A held-back reply gives up after this many self-calls even if the ledger clock has not
/// reached the end of the hold, so a clock that does not move (or an absurd `hold_ns`) cannot
/// make the ledger spin forever. A replica runs many self-calls per round at one time
/// value (its inner rounds), so the cap must be large for a hold of tens of seconds to last.
pub const MAX_HOLD_TICKS: u32 = 100_000;

type Mem = VirtualMemory<DefaultMemoryImpl>;

thread_local! {
    static MEMORY_MANAGER: MemoryManager<DefaultMemoryImpl> =
        MemoryManager::init(DefaultMemoryImpl::default());
    static LEDGER: RefCell<Ledger<Mem>> = RefCell::new(MEMORY_MANAGER.with(Ledger::open));
    static FAULTS: RefCell<FaultQueue<Mem>> = RefCell::new(MEMORY_MANAGER.with(FaultQueue::open));
}

fn with_ledger<R>(f: impl FnOnce(&Ledger<Mem>) -> R) -> R {
    LEDGER.with(|l| f(&l.borrow()))
}

fn with_ledger_mut<R>(f: impl FnOnce(&mut Ledger<Mem>) -> R) -> R {
    LEDGER.with(|l| f(&mut l.borrow_mut()))
}

/// Certifies the current tip (ICRC-3 `last_block_index` / `last_block_hash`).
fn certify() {
    let tip = with_ledger(|l| l.tip());
    certified_data_set(certified_data(tip));
}

// ------------------------------------------------------------------------- lifecycle

#[init]
fn init(args: InitArgs) {
    if let Err(e) = with_ledger_mut(|l| l.initialize(args, time())) {
        ic_cdk::trap(format!("invalid InitArgs: {e}"));
    }
    certify();
}

/// All state is in stable structures: nothing to restore but the certified data.
#[post_upgrade]
fn post_upgrade() {
    certify();
}

// ------------------------------------------------------------------------- guards

fn caller_is_controller() -> Result<(), String> {
    let caller = msg_caller();
    if is_controller(&caller) {
        Ok(())
    } else {
        Err(format!(
            "{caller} is not a controller of this ledger: fault controls are for controllers only"
        ))
    }
}

fn caller_is_self() -> Result<(), String> {
    if msg_caller() == canister_self() {
        Ok(())
    } else {
        Err("hold_tick can only be called by the ledger itself".to_string())
    }
}

// ------------------------------------------------------------------------- ICRC-1 queries

#[query]
fn icrc1_name() -> String {
    with_ledger(|l| l.config().name.clone())
}

#[query]
fn icrc1_symbol() -> String {
    with_ledger(|l| l.config().symbol.clone())
}

#[query]
fn icrc1_decimals() -> u8 {
    with_ledger(|l| l.config().decimals)
}

#[query]
fn icrc1_fee() -> Nat {
    with_ledger(|l| l.config().fee.clone())
}

#[query]
fn icrc1_metadata() -> Vec<(String, MetadataValue)> {
    with_ledger(|l| l.metadata())
}

#[query]
fn icrc1_total_supply() -> Nat {
    with_ledger(|l| l.total_supply())
}

#[query]
fn icrc1_minting_account() -> Option<Account> {
    with_ledger(|l| l.config().minting_account.clone())
}

#[query]
fn icrc1_balance_of(account: Account) -> Nat {
    with_ledger(|l| l.balance_of(&account))
}

#[query]
fn icrc1_supported_standards() -> Vec<SupportedStandard> {
    supported_standards()
}

// ------------------------------------------------------------------------- faultable updates

/// Encodes and sends the reply; an encoding failure becomes a reject, never a trap.
fn reply<T: CandidType>(value: &T) {
    match candid::encode_one(value) {
        Ok(bytes) => msg_reply(bytes),
        Err(e) => msg_reject(format!("failed to encode the reply: {e}")),
    }
}

/// Runs the transaction now and certifies the new tip when it produced a block.
fn run<E>(execute: impl FnOnce(u64) -> Result<Nat, E>) -> Result<Nat, E> {
    let result = execute(time());
    if result.is_ok() {
        certify();
    }
    result
}

/// A self-call: its `await` commits everything done so far.
async fn commit_point() -> bool {
    Call::unbounded_wait(canister_self(), "hold_tick")
        .await
        .is_ok()
}

/// Awaits self-calls until the ledger clock reaches `until` (or [`MAX_HOLD_TICKS`] passed,
/// or a self-call fails).
async fn hold_until(until: u64) {
    for _ in 0..MAX_HOLD_TICKS {
        if time() >= until || !commit_point().await {
            return;
        }
    }
}

/// Serves one call of a faultable method: takes the first queued fault for `method` and acts
/// it out, or executes normally.
async fn serve<E: CandidType>(
    method: &str,
    injected: fn(InjectedErr) -> Option<E>,
    execute: impl FnOnce(u64) -> Result<Nat, E>,
) {
    let fault = FAULTS.with(|f| f.borrow_mut().take(method));
    match fault {
        None => reply(&run(execute)),
        Some(Fault::Err(err)) => match injected(err) {
            Some(e) => reply(&Err::<Nat, E>(e)),
            // Refused by `inject_faults`; executing normally is the harmless fallback.
            None => reply(&run(execute)),
        },
        Some(Fault::Reject(message)) => msg_reject(message),
        Some(Fault::Trap(message)) => {
            // A trap rolls back the message: commit the consumed fault first.
            commit_point().await;
            ic_cdk::trap(message);
        }
        Some(Fault::LoseReply { hold_ns }) => {
            let start = time();
            let result = run(execute);
            hold_until(start.saturating_add(hold_ns)).await;
            reply(&result);
        }
    }
}

#[update(manual_reply = true)]
async fn icrc1_transfer(arg: TransferArg) -> PhantomData<Result<Nat, TransferError>> {
    let caller = msg_caller();
    serve(
        "icrc1_transfer",
        |e| match e {
            InjectedErr::Transfer(e) => Some(e),
            _ => None,
        },
        move |now| {
            with_ledger_mut(|l| l.transfer(caller, &arg, now))
                .map(Nat::from)
                .map_err(TransferError::from)
        },
    )
    .await;
    PhantomData
}

#[update(manual_reply = true)]
async fn icrc2_approve(arg: ApproveArgs) -> PhantomData<Result<Nat, ApproveError>> {
    let caller = msg_caller();
    serve(
        "icrc2_approve",
        |e| match e {
            InjectedErr::Approve(e) => Some(e),
            _ => None,
        },
        move |now| {
            with_ledger_mut(|l| l.approve(caller, &arg, now))
                .map(Nat::from)
                .map_err(ApproveError::from)
        },
    )
    .await;
    PhantomData
}

#[update(manual_reply = true)]
async fn icrc2_transfer_from(arg: TransferFromArgs) -> PhantomData<Result<Nat, TransferFromError>> {
    let caller = msg_caller();
    serve(
        "icrc2_transfer_from",
        |e| match e {
            InjectedErr::TransferFrom(e) => Some(e),
            _ => None,
        },
        move |now| {
            with_ledger_mut(|l| l.transfer_from(caller, &arg, now))
                .map(Nat::from)
                .map_err(TransferFromError::from)
        },
    )
    .await;
    PhantomData
}

// ------------------------------------------------------------------------- ICRC-2 / ICRC-3 queries

#[query]
fn icrc2_allowance(args: AllowanceArgs) -> Allowance {
    with_ledger(|l| l.allowance(&args, time()))
}

#[query]
fn icrc3_get_blocks(args: GetBlocksArgs) -> GetBlocksResult {
    with_ledger(|l| l.get_blocks(&args))
}

/// No archives: every block stays in the ledger.
#[query]
fn icrc3_get_archives(_args: GetArchivesArgs) -> Vec<ICRC3ArchiveInfo> {
    vec![]
}

/// The system certificate with the tip tree, when the system provides one (a query call
/// that is not executed as an update); `null` otherwise.
#[query]
fn icrc3_get_tip_certificate() -> Option<ICRC3DataCertificate> {
    let certificate = data_certificate()?;
    let tree = with_ledger(|l| tip_tree(l.tip()));
    Some(ICRC3DataCertificate {
        certificate: ByteBuf::from(certificate),
        hash_tree: ByteBuf::from(encode_tree(&tree)),
    })
}

#[query]
fn icrc3_supported_block_types() -> Vec<BlockType> {
    crate::block::supported_block_types()
}

// ------------------------------------------------------------------------- fault controls

/// Queues faults (all or none): an unknown method or an error of the wrong kind traps.
#[update(guard = "caller_is_controller")]
fn inject_faults(plans: Vec<FaultPlan>) {
    if let Err(e) = FAULTS.with(|f| f.borrow_mut().inject(plans)) {
        ic_cdk::trap(format!("inject_faults refused: {e}"));
    }
}

#[update(guard = "caller_is_controller")]
fn clear_faults() {
    FAULTS.with(|f| f.borrow_mut().clear());
}

#[query(guard = "caller_is_controller")]
fn pending_faults() -> Vec<FaultPlan> {
    FAULTS.with(|f| f.borrow().pending())
}

/// The ledger's own no-op self-call target while it holds a reply back.
#[update(guard = "caller_is_self")]
fn hold_tick() {}
