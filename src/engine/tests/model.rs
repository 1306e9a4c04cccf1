//! The randomized model test of exactly once. Random schedules drive the engine against a model
//! ledger (balances, deduplication, ICRC-3 blocks, an archive) through a runtime whose calls are
//! real message queues: requests from the tool host to a canister are delivered in order, each
//! is executed when the schedule says so, and its reply comes back later, or never (lost, timed
//! out, dropped). Between any two steps anything may happen: owners prepare (same and different
//! arguments), confirm (again), decline; agents commit; the timer fires; the clock jumps
//! (seconds to more than a day); other users' transfers and decoys land; the ledger's clock
//! drifts; the archive answers short pages; a callback traps; the tool host is upgraded with
//! calls in flight (heap dropped, state rebuilt from stable memory).
//!
//! After every step it checks, against the ledger's own blocks:
//! - no intent has two blocks (no double execution);
//! - an intent reported done has exactly one block, one settled otherwise has none (ever);
//! - every block that moves funds out of an owner's deposit or account carries bytes that owner
//!   confirmed;
//! - a settled intent stays settled, every intent has its next task and the indexes agree
//!   (`State::check_indexes`), and the timer is armed for the earliest task.
//!
//! At the end of each schedule the world is left to run without faults until everything is
//! settled, and the same checks hold.
//!
//! `MODEL_SCHEDULES=n` runs n schedules (CI: the default below), `MODEL_SEED=s` replays one
//! (with its steps printed), `MODEL_STEPS=k` sets the steps per schedule. A failure prints the
//! seed and the schedule's steps.

mod common;
use candid::{Nat, Principal};
use common::ledger::{Acct, ModelLedger};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use tool_host_engine::model::Status;
use tool_host_engine::reconcile::icrc3::GetBlocksRequest;
use tool_host_engine::runtime::{CallOutcome, Runtime};
use tool_host_engine::state::State;
use tool_host_engine::types::*;

const T0: u64 = 1_796_119_200_000_000_000;
const SEC: u64 = 1_000_000_000;
const DEFAULT_SCHEDULES: u64 = 10_000;
const DEFAULT_STEPS: usize = 60;

fn p(n: u8) -> Principal {
    Principal::from_slice(&[n, 9, 9, 9])
}
fn controller() -> Principal {
    p(1)
}
fn host() -> Principal {
    Principal::from_text("rrkah-fqaaa-aaaaa-aaaaq-cai").unwrap()
}
fn ledger_id() -> Principal {
    Principal::from_text("ryjl3-tyaaa-aaaaa-aaaba-cai").unwrap()
}
fn owners() -> [Principal; 2] {
    [p(2), p(3)]
}
fn agent_of(owner: Principal) -> Principal {
    Principal::from_slice(&[owner.as_slice()[0], 7, 7])
}
fn stranger() -> Principal {
    p(40)
}
fn receivers() -> [Principal; 2] {
    [p(50), p(51)]
}
fn spender() -> Principal {
    p(60)
}

/// Stable memory as 4 KiB chunks, only those written kept: a schedule starts from a copy of
/// the template in microseconds, where a flat memory (the memory manager spreads its
/// structures over 8 MiB buckets) would copy a hundred megabytes.
#[derive(Clone, Default)]
struct SparseMemory(Rc<RefCell<SparsePages>>);

#[derive(Clone, Default)]
struct SparsePages {
    pages: u64,
    chunks: BTreeMap<u64, Box<[u8; CHUNK]>>,
}

const CHUNK: usize = 4096;

impl SparseMemory {
    fn copy(&self) -> SparseMemory {
        SparseMemory(Rc::new(RefCell::new(self.0.borrow().clone())))
    }
}

impl ic_stable_structures::Memory for SparseMemory {
    fn size(&self) -> u64 {
        self.0.borrow().pages
    }
    fn grow(&self, pages: u64) -> i64 {
        let mut m = self.0.borrow_mut();
        let old = m.pages;
        m.pages += pages;
        old as i64
    }
    fn read(&self, offset: u64, dst: &mut [u8]) {
        let m = self.0.borrow();
        assert!(
            offset + dst.len() as u64 <= m.pages * 65_536,
            "read out of bounds"
        );
        let mut done = 0;
        while done < dst.len() {
            let at = offset as usize + done;
            let (chunk, within) = (at / CHUNK, at % CHUNK);
            let n = (CHUNK - within).min(dst.len() - done);
            match m.chunks.get(&(chunk as u64)) {
                Some(c) => dst[done..done + n].copy_from_slice(&c[within..within + n]),
                None => dst[done..done + n].fill(0),
            }
            done += n;
        }
    }
    fn write(&self, offset: u64, src: &[u8]) {
        let mut m = self.0.borrow_mut();
        assert!(
            offset + src.len() as u64 <= m.pages * 65_536,
            "write out of bounds"
        );
        let mut done = 0;
        while done < src.len() {
            let at = offset as usize + done;
            let (chunk, within) = (at / CHUNK, at % CHUNK);
            let n = (CHUNK - within).min(src.len() - done);
            let c = m
                .chunks
                .entry(chunk as u64)
                .or_insert_with(|| Box::new([0; CHUNK]));
            c[within..within + n].copy_from_slice(&src[done..done + n]);
            done += n;
        }
    }
}

/// splitmix64: small, fast, and the same on every machine.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        if xs.is_empty() {
            None
        } else {
            Some(&xs[self.below(xs.len() as u64) as usize])
        }
    }
}

/// How the ledger treats one update request when it reaches the head of its queue.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Executes and replies.
    Reply,
    /// Executes; the reply is lost (the caller sees reject 6).
    LoseReply,
    /// Not executed: rejected with this code.
    Reject(u32),
    /// Not executed: answers `TemporarilyUnavailable`.
    Busy,
}

struct Req {
    call: u64,
    method: String,
    arg: Vec<u8>,
}

#[derive(Clone, Debug)]
enum Slot {
    /// Sent; no answer for the caller yet.
    Waiting,
    /// The answer the caller gets at its next poll.
    Ready(CallOutcome),
    /// Delivered, or its caller is gone.
    Done,
}

struct Sim {
    state: RefCell<State<SparseMemory>>,
    memory: SparseMemory,
    now: Cell<u64>,
    ledger: RefCell<ModelLedger>,
    /// The ledger's clock is the tool host's plus this.
    skew: Cell<i64>,
    ledger_q: RefCell<VecDeque<Req>>,
    archive_q: RefCell<VecDeque<Req>>,
    slots: RefCell<BTreeMap<u64, Slot>>,
    /// Executed requests whose answer waits to be delivered.
    executed: RefCell<BTreeMap<u64, CallOutcome>>,
    /// Each call's deadline: a bounded-wait call always ends by it (SYS_UNKNOWN if no reply).
    deadlines: RefCell<BTreeMap<u64, u64>>,
    next_call: Cell<u64>,
    timer: Cell<Option<u64>>,
    /// (owner, digest) of every confirmation an owner signed.
    confirmed: RefCell<BTreeSet<(Principal, [u8; 32])>>,
    /// Calls are answered at once (setup only).
    direct: Cell<bool>,
    faults: Cell<bool>,
    rng: RefCell<Rng>,
    log: RefCell<Vec<String>>,
    /// The last status seen of every intent, to check that a settled one stays settled.
    seen: RefCell<BTreeMap<u64, Status>>,
    /// The operation being polled, and which operation made each call.
    current_op: Cell<u64>,
    call_op: RefCell<BTreeMap<u64, u64>>,
    next_op: Cell<u64>,
    /// How replies are picked for delivery in this schedule: 0 any, 1 the newest first (older
    /// answers wait while newer calls come and go), 2 the oldest first.
    delivery: Cell<u8>,
}

struct CallFuture<'a> {
    sim: &'a Sim,
    id: u64,
}

impl Future for CallFuture<'_> {
    type Output = CallOutcome;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<CallOutcome> {
        let mut slots = self.sim.slots.borrow_mut();
        match slots.get(&self.id) {
            Some(Slot::Ready(o)) => {
                let o = o.clone();
                slots.insert(self.id, Slot::Done);
                Poll::Ready(o)
            }
            _ => Poll::Pending,
        }
    }
}

impl Runtime for Sim {
    type M = SparseMemory;
    fn now(&self) -> u64 {
        self.now.get()
    }
    fn self_id(&self) -> Principal {
        host()
    }
    fn is_controller(&self, p: &Principal) -> bool {
        *p == controller()
    }
    fn with_state<T>(&self, f: impl FnOnce(&mut State<Self::M>) -> T) -> T {
        f(&mut self.state.borrow_mut())
    }
    /// As on the IC after an upgrade: nothing built yet, so the next operation that needs the
    /// catalog builds it (the canister's timer message may come after it).
    fn build_catalog_soon(&self) {}
    fn call(
        &self,
        canister: Principal,
        method: &str,
        arg: Vec<u8>,
        timeout: u32,
    ) -> impl Future<Output = CallOutcome> {
        let id = self.next_call.get();
        self.next_call.set(id + 1);
        self.deadlines
            .borrow_mut()
            .insert(id, self.now.get() + timeout as u64 * SEC);
        self.call_op.borrow_mut().insert(id, self.current_op.get());
        let slot = if self.direct.get() {
            let archive = canister == self.ledger.borrow().archive_id;
            Slot::Ready(self.answer(archive, method, &arg, Fault::Reply))
        } else if self.faults.get() && self.rng.borrow_mut().chance(2) {
            // `call_perform` failed: nothing was sent.
            Slot::Ready(CallOutcome::NotSent("call_perform failed".into()))
        } else {
            let req = Req {
                call: id,
                method: method.to_string(),
                arg,
            };
            if canister == ledger_id() {
                self.ledger_q.borrow_mut().push_back(req);
                Slot::Waiting
            } else if canister == self.ledger.borrow().archive_id {
                self.archive_q.borrow_mut().push_back(req);
                Slot::Waiting
            } else {
                Slot::Ready(CallOutcome::Rejected {
                    code: 3,
                    message: "no such canister".into(),
                })
            }
        };
        self.slots.borrow_mut().insert(id, slot);
        CallFuture { sim: self, id }
    }
    fn wake_at(&self, at_ns: u64) {
        self.timer.set(Some(at_ns));
    }
}

fn encode_standards(icrc3: bool) -> Vec<u8> {
    #[derive(candid::CandidType)]
    struct S {
        name: String,
        url: String,
    }
    let mut v = vec![S {
        name: "ICRC-1".into(),
        url: "u".into(),
    }];
    if icrc3 {
        v.push(S {
            name: "ICRC-3".into(),
            url: "u".into(),
        });
    }
    candid::encode_one(v).unwrap()
}

impl Sim {
    fn ledger_now(&self) -> u64 {
        (self.now.get() as i128 + self.skew.get() as i128) as u64
    }

    fn note(&self, s: String) {
        self.log.borrow_mut().push(s);
    }

    /// What the ledger (or its archive) answers a request, executing it if it is an update.
    fn answer(&self, archive: bool, method: &str, arg: &[u8], fault: Fault) -> CallOutcome {
        let mut l = self.ledger.borrow_mut();
        let busy = || CallOutcome::Rejected {
            code: 2,
            message: "busy".into(),
        };
        match method {
            "icrc3_get_blocks" => {
                if matches!(fault, Fault::Reject(_)) {
                    return busy();
                }
                let reqs: Vec<GetBlocksRequest> = candid::decode_one(arg).unwrap();
                let r = if archive {
                    l.archive_get_blocks(&reqs)
                } else {
                    l.get_blocks(&reqs)
                };
                CallOutcome::Replied(candid::encode_one(r).unwrap())
            }
            "icrc1_supported_standards" => match fault {
                Fault::Reject(_) => busy(),
                _ => CallOutcome::Replied(encode_standards(true)),
            },
            "icrc1_decimals" => CallOutcome::Replied(candid::encode_one(8u8).unwrap()),
            "icrc1_symbol" => CallOutcome::Replied(candid::encode_one("TKA").unwrap()),
            "icrc1_fee" => CallOutcome::Replied(candid::encode_one(Nat::from(l.fee)).unwrap()),
            "icrc1_transfer" | "icrc2_approve" | "icrc2_transfer_from" => {
                let now = self.ledger_now();
                match fault {
                    Fault::Reply => CallOutcome::Replied(l.execute(host(), method, arg, now).reply),
                    Fault::LoseReply => {
                        l.execute(host(), method, arg, now);
                        CallOutcome::Rejected {
                            code: 6,
                            message: "the reply was lost".into(),
                        }
                    }
                    Fault::Reject(code) => CallOutcome::Rejected {
                        code,
                        message: format!("rejected {code}"),
                    },
                    Fault::Busy => CallOutcome::Replied(common::ledger::reply_bytes(
                        method,
                        &common::ledger::variant(
                            "Err",
                            common::ledger::variant(
                                "TemporarilyUnavailable",
                                candid::IDLValue::Null,
                            ),
                        ),
                    )),
                }
            }
            other => CallOutcome::Rejected {
                code: 5,
                message: format!("no method {other}"),
            },
        }
    }

    fn fault(&self, update: bool) -> Fault {
        if !self.faults.get() {
            return Fault::Reply;
        }
        let mut rng = self.rng.borrow_mut();
        if !update {
            return if rng.chance(8) {
                Fault::Reject(2)
            } else {
                Fault::Reply
            };
        }
        match rng.below(20) {
            0..=9 => Fault::Reply,
            10..=13 => Fault::LoseReply,
            14 => Fault::Reject(1),
            15 => Fault::Reject(2),
            16 => Fault::Reject(3),
            17 => Fault::Reject(4),
            18 => Fault::Reject(5),
            _ => Fault::Busy,
        }
    }

    /// The request at the head of a queue reaches its canister.
    fn execute_head(&self, archive: bool) -> bool {
        let q = if archive {
            &self.archive_q
        } else {
            &self.ledger_q
        };
        let Some(req) = q.borrow_mut().pop_front() else {
            return false;
        };
        let update = req.method.starts_with("icrc1_transfer") || req.method.starts_with("icrc2_");
        let fault = self.fault(update);
        let out = self.answer(archive, &req.method, &req.arg, fault);
        self.note(format!(
            "  {} executes call {} {} ({fault:?})",
            if archive { "archive" } else { "ledger" },
            req.call,
            req.method
        ));
        // Its caller may be gone (an upgrade, a trap, a timeout): then the answer is dropped.
        if matches!(self.slots.borrow().get(&req.call), Some(Slot::Waiting)) {
            self.executed.borrow_mut().insert(req.call, out);
        }
        true
    }

    fn deliver(&self, call: u64) {
        if let Some(out) = self.executed.borrow_mut().remove(&call) {
            let mut slots = self.slots.borrow_mut();
            if matches!(slots.get(&call), Some(Slot::Waiting)) {
                slots.insert(call, Slot::Ready(out));
            }
        }
    }

    /// The caller of a call still waiting gets SYS_UNKNOWN (its deadline passed); the request
    /// itself may still be in its queue, or be dropped from it.
    fn time_out(&self, call: u64, drop_request: bool) {
        let mut slots = self.slots.borrow_mut();
        if matches!(slots.get(&call), Some(Slot::Waiting)) {
            slots.insert(
                call,
                Slot::Ready(CallOutcome::Rejected {
                    code: 6,
                    message: "deadline expired".into(),
                }),
            );
        }
        self.executed.borrow_mut().remove(&call);
        if drop_request {
            self.ledger_q.borrow_mut().retain(|r| r.call != call);
            self.archive_q.borrow_mut().retain(|r| r.call != call);
        }
    }

    /// The clock moved: every call past its deadline ends with SYS_UNKNOWN (its request may
    /// still be queued, or be dropped).
    fn expire_calls(&self) {
        let now = self.now.get();
        let late: Vec<u64> = self
            .deadlines
            .borrow()
            .iter()
            .filter(|(_, d)| **d < now)
            .map(|(c, _)| *c)
            .collect();
        for call in late {
            self.deadlines.borrow_mut().remove(&call);
            let drop_request = self.rng.borrow_mut().chance(50);
            self.time_out(call, drop_request);
        }
    }

    fn op_id(&self) -> u64 {
        let id = self.next_op.get();
        self.next_op.set(id + 1);
        id
    }

    fn intents(&self) -> Vec<tool_host_engine::model::Intent> {
        self.state.borrow().intents.iter().map(|(_, i)| i).collect()
    }
}

/// A message the tool host is executing: its id, what it is, and where it waits.
type Op<'a> = (u64, String, Pin<Box<dyn Future<Output = ()> + 'a>>);

/// Polls every operation until none moves; drops the finished ones.
fn progress(sim: &Sim, ops: &mut Vec<Op<'_>>) {
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    loop {
        let before = ops.len();
        ops.retain_mut(|(id, _, f)| {
            sim.current_op.set(*id);
            f.as_mut().poll(&mut cx).is_pending()
        });
        if ops.len() == before {
            return;
        }
    }
}

/// The newest operation runs on while every other one waits: the ledger executes what is
/// queued (in order, so older requests first), and only its own replies are delivered.
fn focus<'a>(sim: &'a Sim, ops: &mut Vec<Op<'a>>) -> String {
    let Some((id, label, _)) = ops.last() else {
        return "focus: nothing running".into();
    };
    let (id, label) = (*id, label.clone());
    for _ in 0..16 {
        if !ops.iter().any(|(o, _, _)| *o == id) {
            break;
        }
        let mine = sim
            .executed
            .borrow()
            .keys()
            .copied()
            .find(|c| sim.call_op.borrow().get(c) == Some(&id));
        if let Some(call) = mine {
            sim.deliver(call);
            progress(sim, ops);
        } else if !(sim.execute_head(false) || sim.execute_head(true)) {
            break;
        }
    }
    format!("focus on '{label}'")
}

fn deposit(owner: Principal) -> Acct {
    (host(), tool_host_core::funds::deposit_subaccount(&owner))
}

/// The owner whose funds a block moves, and whether the tool host moved them.
fn funds_owner(b: &common::ledger::Block) -> Option<Principal> {
    if b.caller != host() {
        return None;
    }
    let from = b.from?;
    owners()
        .into_iter()
        .find(|o| from == deposit(*o) || (from == (*o, [0; 32]) && b.spender.is_some()))
}

/// The checks that hold after every step.
fn check(sim: &Sim, quiet: bool) -> Result<(), String> {
    let state = sim.state.borrow();
    state.check_indexes()?;
    let ledger = sim.ledger.borrow();
    // Which intent each of the tool host's blocks came from: the exact bytes it sent.
    let mut by_arg: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let intents: Vec<_> = state.intents.iter().map(|(_, i)| i).collect();
    let mut count: BTreeMap<u64, usize> = BTreeMap::new();
    for b in ledger.blocks.iter().filter(|b| b.caller == host()) {
        let digest: [u8; 32] = Sha256::digest(&b.arg).into();
        // Custody: bytes the owner of the funds confirmed.
        match funds_owner(b) {
            Some(o) if sim.confirmed.borrow().contains(&(o, digest)) => {}
            Some(o) => {
                return Err(format!(
                    "a block moves {o}'s funds with bytes {o} never confirmed: {b:?}"
                ))
            }
            None => {
                return Err(format!(
                    "a block of the tool host moves funds of nobody it acts for: {b:?}"
                ))
            }
        }
        let owner_of = intents
            .iter()
            .find(|i| i.arg == b.arg || i.attempts.iter().any(|a| a.digest == digest));
        if let Some(i) = owner_of {
            by_arg.insert(b.arg.clone(), i.id);
            *count.entry(i.id).or_default() += 1;
        }
    }
    for i in &intents {
        let n = count.get(&i.id).copied().unwrap_or(0);
        if n > 1 {
            return Err(format!("intent {} executed {n} times", i.id));
        }
        match i.status {
            Status::Done if n != 1 => {
                return Err(format!(
                    "intent {} is done ({:?}, {:?}) with {n} blocks",
                    i.id, i.outcome, i.finding
                ))
            }
            Status::Settled if n != 0 => {
                return Err(format!(
                    "intent {} is settled ({:?}, {:?}) but executed",
                    i.id, i.outcome, i.finding
                ))
            }
            _ => {}
        }
        if i.held_for_good {
            return Err(format!("intent {} is held for good: {:?}", i.id, i.finding));
        }
        if let Some(was) = sim.seen.borrow().get(&i.id) {
            if was.is_final() && *was != i.status {
                return Err(format!(
                    "intent {} was {was:?} and is now {:?}",
                    i.id, i.status
                ));
            }
        }
    }
    if quiet {
        // Nothing running: the timer is armed at or before the earliest task.
        // (A tick that trapped leaves its fallback wake-up, a call's deadline later.)
        if let Some(next) = state.next_due() {
            // The longest call timeout a schedule sets (a fallback armed before a change).
            let fallback = sim.now.get() + tool_host_engine::schedule::fallback_ns(300);
            match sim.timer.get() {
                Some(t) if t <= next.max(fallback) => {}
                other => {
                    return Err(format!(
                        "the earliest task is due at {next}, the timer is {other:?}"
                    ))
                }
            }
        }
    }
    Ok(())
}

fn remember(sim: &Sim) {
    let mut seen = sim.seen.borrow_mut();
    for i in sim.intents() {
        seen.insert(i.id, i.status);
    }
}

/// The template state: packs and the ledger registered, agents authorized.
fn template() -> SparseMemory {
    thread_local! {
        static T: SparseMemory = build_template();
    }
    T.with(|t| t.copy())
}

fn build_template() -> SparseMemory {
    let sim = Sim::new(SparseMemory::default(), 0);
    sim.direct.set(true);
    tool_host_engine::lifecycle::after_init(&sim);
    for (id, json) in tool_host_core::packs::PACKS {
        tool_host_engine::registry::register_form(
            &sim,
            controller(),
            RegisterFormArgs {
                id: id.into(),
                json: json.into(),
            },
        )
        .unwrap();
    }
    futures::executor::block_on(tool_host_engine::registry::register_canister(
        &sim,
        controller(),
        RegisterCanisterArgs {
            id: ledger_id(),
            label: Some("TKA".into()),
            forms: vec!["icrc1".into(), "icrc2".into()],
            owner: None,
        },
    ))
    .unwrap();
    for o in owners() {
        tool_host_engine::owners::authorize_agent(&sim, o, agent_of(o)).unwrap();
    }
    sim.memory.copy()
}

impl Sim {
    fn new(memory: SparseMemory, seed: u64) -> Sim {
        Sim {
            state: RefCell::new(State::init(memory.clone())),
            memory,
            now: Cell::new(T0),
            ledger: RefCell::new(ModelLedger::new(ledger_id())),
            skew: Cell::new(0),
            ledger_q: RefCell::new(VecDeque::new()),
            archive_q: RefCell::new(VecDeque::new()),
            slots: RefCell::new(BTreeMap::new()),
            executed: RefCell::new(BTreeMap::new()),
            deadlines: RefCell::new(BTreeMap::new()),
            next_call: Cell::new(0),
            timer: Cell::new(None),
            confirmed: RefCell::new(BTreeSet::new()),
            direct: Cell::new(false),
            faults: Cell::new(true),
            rng: RefCell::new(Rng(seed)),
            log: RefCell::new(vec![]),
            seen: RefCell::new(BTreeMap::new()),
            delivery: Cell::new(0),
            current_op: Cell::new(0),
            call_op: RefCell::new(BTreeMap::new()),
            next_op: Cell::new(1),
        }
    }
}

/// One random input of a prepare tool: few amounts and recipients, so that the same
/// arguments come up again.
fn random_prepare(rng: &mut Rng) -> (&'static str, serde_json::Value) {
    let amounts = ["1", "2", "0.5", "5000"];
    let amount = *rng.pick(&amounts).unwrap();
    let to = rng.pick(&receivers()).unwrap().to_text();
    let canister = ledger_id().to_text();
    match rng.below(10) {
        0 => (
            "prepare_icrc2_approve",
            json!({ "canister_id": canister, "spender": spender().to_text(), "amount": amount }),
        ),
        1 | 2 => (
            "prepare_icrc2_transfer_from",
            json!({ "canister_id": canister, "to": to, "amount": amount }),
        ),
        _ => (
            "prepare_icrc1_transfer",
            json!({ "canister_id": canister, "to": to, "amount": amount }),
        ),
    }
}

fn run_schedule(seed: u64, steps: usize, verbose: bool) -> Result<(), String> {
    let sim = Sim::new(template(), seed);
    tool_host_engine::lifecycle::after_upgrade(&sim);
    {
        let mut l = sim.ledger.borrow_mut();
        let mut rng = sim.rng.borrow_mut();
        l.btype_style = rng.chance(50);
        l.page_limit = *rng.pick(&[3u64, 10, 100, 1_000]).unwrap();
        l.archive_page_limit = *rng.pick(&[2u64, 10, 1_000]).unwrap();
        l.archive_short_by = *rng.pick(&[0u64, 0, 1, 3]).unwrap();
        for o in owners() {
            l.credit(deposit(o), 100 * 100_000_000);
            l.credit((o, [0; 32]), 100 * 100_000_000);
            l.allowances
                .insert(((o, [0; 32]), (host(), [0; 32])), (50 * 100_000_000, None));
        }
        l.credit(
            (
                stranger(),
                tool_host_core::funds::deposit_subaccount(&owners()[0]),
            ),
            1_000 * 100_000_000,
        );
        l.credit((stranger(), [0; 32]), 1_000 * 100_000_000);
        sim.delivery.set(rng.below(3) as u8);
    }
    let mut ops: Vec<Op<'_>> = vec![];
    let result = (|| -> Result<(), String> {
        for step in 0..steps {
            let what = one_step(&sim, &mut ops);
            sim.note(format!("{step}: {what}"));
            progress(&sim, &mut ops);
            check(&sim, ops.is_empty()).map_err(|e| format!("after step {step} ({what}): {e}"))?;
            remember(&sim);
        }
        drain(&sim, &mut ops)?;
        check(&sim, true).map_err(|e| format!("after draining: {e}"))?;
        for i in sim.intents() {
            if !i.status.is_final() {
                return Err(format!(
                    "after draining, intent {} is still {:?} ({:?})",
                    i.id, i.status, i.finding
                ));
            }
        }
        Ok(())
    })();
    if verbose || result.is_err() {
        for line in sim.log.borrow().iter() {
            eprintln!("{line}");
        }
    }
    result
}

/// One random step; answers what it did.
fn one_step<'a>(sim: &'a Sim, ops: &mut Vec<Op<'a>>) -> String {
    let mut rng = sim.rng.borrow_mut();
    // Only actions that can do something now are drawn, each with its weight.
    let open = sim.intents().iter().any(|i| !i.status.is_final());
    let timer_due = sim.timer.get().is_some_and(|t| t <= sim.now.get());
    let waiting = sim
        .slots
        .borrow()
        .values()
        .any(|s| matches!(s, Slot::Waiting));
    let table: [(u64, bool); 21] = [
        (12, true),                              // 0 prepare
        (16, open),                              // 1 confirm
        (3, open),                               // 2 decline
        (2, open),                               // 3 commit
        (12, timer_due),                         // 4 the timer fires
        (1, true),                               // 5 a stray tick
        (8, true),                               // 6 the clock moves
        (14, !sim.ledger_q.borrow().is_empty()), // 7 the ledger executes
        (6, !sim.archive_q.borrow().is_empty()), // 8 the archive executes
        (14, !sim.executed.borrow().is_empty()), // 9 a reply is delivered
        (2, waiting),                            // 10 a call times out
        (3, true),                               // 11 other transfers, decoys
        (2, true),                               // 12 archiving
        (2, true),                               // 13 the ledger's clock drifts
        (1, true),                               // 14 an upgrade
        (2, !ops.is_empty()),                    // 15 a callback traps
        (6, !ops.is_empty()),                    // 16 the newest operation runs on
        (1, true),                               // 17 an admin sets limits
        (1, true),                               // 18 an admin refreshes refs
        (1, true),                               // 19 the clock jumps days (prunes)
        (1, true),                               // 20 the canister is removed / registered
    ];
    let total: u64 = table.iter().filter(|(_, on)| *on).map(|(w, _)| w).sum();
    let mut r = rng.below(total);
    let mut action = 0;
    for (k, (w, on)) in table.iter().enumerate() {
        if !on {
            continue;
        }
        if r < *w {
            action = k;
            break;
        }
        r -= w;
    }
    let owner = *rng.pick(&owners()).unwrap();
    match action {
        // An owner, or its agent, prepares.
        0 => {
            let (tool, input) = random_prepare(&mut rng);
            let by_agent = rng.chance(50);
            drop(rng);
            let (caller, on_behalf) = if by_agent {
                (agent_of(owner), Some(owner))
            } else {
                (owner, None)
            };
            let label = format!("prepare {tool} {input} by {caller}");
            ops.push((
                sim.op_id(),
                label.clone(),
                Box::pin(async move {
                    let _ = tool_host_engine::tools::call_tool(
                        sim,
                        caller,
                        CallToolArgs {
                            name: tool.into(),
                            input: input.to_string(),
                            owner: on_behalf,
                            turn: None,
                        },
                    )
                    .await;
                }),
            ));
            label
        }
        // The owner confirms one of its intents (the preview it reads now).
        1 => {
            let mine: Vec<_> = sim
                .intents()
                .into_iter()
                .filter(|i| i.owner == owner && !i.status.is_final())
                .collect();
            // Half the time one whose outcome is unknown, if there is one: sent again.
            let unknown: Vec<_> = mine
                .iter()
                .filter(|i| i.status == Status::Unknown)
                .cloned()
                .collect();
            let from = if !unknown.is_empty() && rng.chance(50) {
                &unknown
            } else {
                &mine
            };
            let Some(i) = rng.pick(from).cloned() else {
                return "confirm: nothing to confirm".into();
            };
            // Now and then with an old digest, or by someone else: refused.
            let (caller, digest) = match rng.below(20) {
                0 => (agent_of(owner), i.digest),
                1 => (
                    owners().into_iter().find(|o| *o != owner).unwrap(),
                    i.digest,
                ),
                2 => (owner, [0; 32]),
                _ => (owner, i.digest),
            };
            drop(rng);
            sim.confirmed.borrow_mut().insert((caller, digest));
            let label = format!("confirm intent {} ({:?}) by {caller}", i.id, i.status);
            ops.push((
                sim.op_id(),
                label.clone(),
                Box::pin(async move {
                    let _ = tool_host_engine::send::confirm(
                        sim,
                        caller,
                        ConfirmArgs {
                            intent_id: i.id,
                            digest: serde_bytes::ByteBuf::from(digest.to_vec()),
                        },
                    )
                    .await;
                }),
            ));
            label
        }
        2 => {
            let mine: Vec<_> = sim
                .intents()
                .into_iter()
                .filter(|i| i.owner == owner && !i.status.is_final())
                .collect();
            let Some(i) = rng.pick(&mine).cloned() else {
                return "decline: nothing".into();
            };
            drop(rng);
            let r = tool_host_engine::send::decline(sim, owner, i.id, None);
            format!(
                "decline intent {} ({:?}): {:?}",
                i.id,
                i.status,
                r.map(|r| r.outcome)
            )
        }
        3 => {
            let mine: Vec<_> = sim
                .intents()
                .into_iter()
                .filter(|i| i.owner == owner)
                .collect();
            let Some(i) = rng.pick(&mine).cloned() else {
                return "commit: nothing".into();
            };
            drop(rng);
            let label = format!("agent commits intent {}", i.id);
            ops.push((
                sim.op_id(),
                label.clone(),
                Box::pin(async move {
                    let _ = tool_host_engine::tools::call_tool(
                        sim,
                        agent_of(owner),
                        CallToolArgs {
                            name: "commit".into(),
                            input: json!({ "preview_id": i.id.to_string() }).to_string(),
                            owner: Some(owner),
                            turn: None,
                        },
                    )
                    .await;
                }),
            ));
            label
        }
        // The timer fires (when due), or a stray tick runs anyway.
        4 | 5 => {
            let due = action == 4;
            drop(rng);
            if due {
                sim.timer.set(None);
            }
            ops.push((
                sim.op_id(),
                "tick".into(),
                Box::pin(tool_host_engine::schedule::tick(sim)),
            ));
            "timer fires".into()
        }
        6 => {
            let jumps = [
                SEC,
                10 * SEC,
                61 * SEC,
                600 * SEC,
                3_600 * SEC,
                7_200 * SEC,
                25 * 3_600 * SEC,
            ];
            let weights = [30u64, 25, 15, 12, 8, 6, 4];
            let mut r = rng.below(100);
            let mut k = 0;
            while r >= weights[k] {
                r -= weights[k];
                k += 1;
            }
            drop(rng);
            sim.now.set(sim.now.get() + jumps[k]);
            sim.expire_calls();
            format!("clock +{} s", jumps[k] / SEC)
        }
        7 => {
            drop(rng);
            if sim.execute_head(false) {
                "ledger executes the next request".into()
            } else {
                "ledger: nothing queued".into()
            }
        }
        8 => {
            drop(rng);
            if sim.execute_head(true) {
                "archive executes the next request".into()
            } else {
                "archive: nothing queued".into()
            }
        }
        9 => {
            let ready: Vec<u64> = sim.executed.borrow().keys().copied().collect();
            let pick = match sim.delivery.get() {
                1 if !rng.chance(10) => ready.last().copied(),
                2 if !rng.chance(10) => ready.first().copied(),
                _ => rng.pick(&ready).copied(),
            };
            let Some(call) = pick else {
                return "deliver: nothing".into();
            };
            drop(rng);
            sim.deliver(call);
            format!("deliver call {call}")
        }
        10 => {
            let waiting: Vec<u64> = sim
                .slots
                .borrow()
                .iter()
                .filter(|(_, s)| matches!(s, Slot::Waiting))
                .map(|(k, _)| *k)
                .collect();
            let Some(call) = rng.pick(&waiting).copied() else {
                return "time out: nothing".into();
            };
            let drop_request = rng.chance(50);
            drop(rng);
            sim.time_out(call, drop_request);
            format!("call {call} times out (request dropped: {drop_request})")
        }
        // Other users' transfers, and decoys: someone else sends one of the host's own bytes.
        11 => {
            let decoy = rng.chance(50);
            let n = 1 + rng.below(30);
            drop(rng);
            let now = sim.ledger_now();
            let mut l = sim.ledger.borrow_mut();
            if decoy {
                let sent: Vec<(String, Vec<u8>)> = l
                    .blocks
                    .iter()
                    .filter(|b| b.caller == host())
                    .map(|b| (method_of(b), b.arg.clone()))
                    .chain(
                        sim.intents()
                            .into_iter()
                            .map(|i| (i.method.clone(), i.arg.clone())),
                    )
                    .collect();
                if let Some((m, arg)) = sent.last().cloned() {
                    let r = l.execute(stranger(), &m, &arg, now);
                    return format!("a stranger sends a copy of {m} bytes (block {:?})", r.block);
                }
            }
            for _ in 0..n {
                l.mint((stranger(), [9; 32]), 1, now);
            }
            format!("{n} other transfers")
        }
        12 => {
            let mut l = sim.ledger.borrow_mut();
            let len = l.blocks.len() as u64;
            l.archived_below = len.saturating_sub(rng.below(5));
            l.archive_short_by = *rng.pick(&[0u64, 1, 2]).unwrap();
            format!("the ledger archives blocks below {}", l.archived_below)
        }
        13 => {
            let skews: [i64; 5] = [0, -90, 90, -30, -3_600];
            let s = *rng.pick(&skews).unwrap();
            sim.skew.set(s * SEC as i64);
            format!("the ledger's clock is {s} s off")
        }
        14 => {
            drop(rng);
            let in_flight = sim.state.borrow().in_flight.len();
            let dropped = ops.len();
            ops.clear();
            // Replies to the old code's calls never reach the new code.
            for s in sim.slots.borrow_mut().values_mut() {
                *s = Slot::Done;
            }
            sim.executed.borrow_mut().clear();
            sim.timer.set(None);
            *sim.state.borrow_mut() = State::init(sim.memory.clone());
            let force = in_flight > 0;
            tool_host_engine::lifecycle::check_upgrade(sim, force).unwrap();
            tool_host_engine::lifecycle::after_upgrade(sim);
            format!("upgrade (forced: {force}, {dropped} operations dropped)")
        }
        16 => {
            drop(rng);
            focus(sim, ops)
        }
        17 => {
            let mut l = sim.state.borrow().limits();
            l.retention_seconds = *rng.pick(&[3_600u64, 30 * 86_400]).unwrap();
            l.call_timeout_seconds = *rng.pick(&[10u32, 60, 300]).unwrap();
            l.reconcile_delay_seconds = *rng.pick(&[1u64, 10, 600]).unwrap();
            l.preview_ttl_seconds = *rng.pick(&[60u64, 3_600]).unwrap();
            drop(rng);
            let what = format!(
                "limits: retention {} s, timeout {} s, reconcile delay {} s, ttl {} s",
                l.retention_seconds,
                l.call_timeout_seconds,
                l.reconcile_delay_seconds,
                l.preview_ttl_seconds
            );
            tool_host_engine::registry::set_limits(sim, controller(), l).unwrap();
            what
        }
        18 => {
            drop(rng);
            ops.push((
                sim.op_id(),
                "refresh refs".into(),
                Box::pin(async move {
                    let _ = tool_host_engine::registry::refresh_refs(sim, controller(), None).await;
                }),
            ));
            "refresh refs".into()
        }
        19 => {
            let days = 1 + rng.below(8);
            drop(rng);
            sim.now.set(sim.now.get() + days * 86_400 * SEC);
            sim.expire_calls();
            format!("clock +{days} days")
        }
        20 => {
            drop(rng);
            let registered = sim.state.borrow().targets.contains_key(&ledger_id());
            if registered {
                let r = tool_host_engine::registry::remove_canister(sim, controller(), ledger_id());
                format!("remove the canister: {:?}", r.map_err(|e| e.code))
            } else {
                ops.push((
                    sim.op_id(),
                    "register the canister".into(),
                    Box::pin(async move {
                        let _ = tool_host_engine::registry::register_canister(
                            sim,
                            controller(),
                            RegisterCanisterArgs {
                                id: ledger_id(),
                                label: Some("TKA".into()),
                                forms: vec!["icrc1".into(), "icrc2".into()],
                                owner: None,
                            },
                        )
                        .await;
                    }),
                ));
                "register the canister".into()
            }
        }
        _ => {
            if ops.is_empty() {
                return "trap: nothing running".into();
            }
            let k = rng.below(ops.len() as u64) as usize;
            drop(rng);
            let (_, label, _) = ops.remove(k);
            format!("the callback of '{label}' traps")
        }
    }
}

fn method_of(b: &common::ledger::Block) -> String {
    match b.op {
        common::ledger::Op::Approve => "icrc2_approve".into(),
        common::ledger::Op::Transfer if b.spender.is_some() => "icrc2_transfer_from".into(),
        _ => "icrc1_transfer".into(),
    }
}

/// No more faults: every queued request runs, every answer arrives, the timer fires as it
/// should and the clock moves on, until nothing is left to do.
fn drain<'a>(sim: &'a Sim, ops: &mut Vec<Op<'a>>) -> Result<(), String> {
    sim.faults.set(false);
    sim.skew.set(0);
    // An archive that never answers a block can never be read: it heals for the drain.
    sim.ledger.borrow_mut().archive_short_by = 0;
    sim.note("drain".into());
    for round in 0..2_000 {
        while sim.execute_head(false) || sim.execute_head(true) {}
        let ready: Vec<u64> = sim.executed.borrow().keys().copied().collect();
        for call in ready {
            sim.deliver(call);
        }
        progress(sim, ops);
        check(sim, ops.is_empty()).map_err(|e| format!("draining, round {round}: {e}"))?;
        remember(sim);
        let busy = !ops.is_empty()
            || !sim.ledger_q.borrow().is_empty()
            || !sim.archive_q.borrow().is_empty();
        if busy {
            continue;
        }
        let open = sim.intents().iter().any(|i| !i.status.is_final());
        if !open {
            return Ok(());
        }
        match sim.timer.get() {
            Some(t) if t <= sim.now.get() => {
                sim.timer.set(None);
                ops.push((
                    sim.op_id(),
                    "tick".into(),
                    Box::pin(tool_host_engine::schedule::tick(sim)),
                ));
            }
            Some(t) => {
                sim.now.set(t);
                sim.expire_calls();
            }
            None => return Err("draining: intents are open and no timer is armed".into()),
        }
    }
    let left: Vec<String> = sim
        .intents()
        .iter()
        .filter(|i| !i.status.is_final())
        .map(|i| {
            format!(
                "{} {:?} {:?} tasks {:?}",
                i.id, i.status, i.finding, i.reconcile_at
            )
        })
        .collect();
    Err(format!(
        "draining does not end: {left:?}, timer {:?}, now {}",
        sim.timer.get(),
        sim.now.get()
    ))
}

#[test]
fn random_schedules_keep_exactly_once() {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let steps = env("MODEL_STEPS").map_or(DEFAULT_STEPS, |s| s as usize);
    if let Some(seed) = env("MODEL_SEED") {
        if let Err(e) = run_schedule(seed, steps, true) {
            panic!("seed {seed}: {e}");
        }
        return;
    }
    let n = env("MODEL_SCHEDULES").unwrap_or(DEFAULT_SCHEDULES);
    let base = env("MODEL_BASE_SEED").unwrap_or(0x5eed_0000);
    let started = std::time::Instant::now();
    for k in 0..n {
        let seed = base + k;
        if let Err(e) = run_schedule(seed, steps, false) {
            panic!("schedule {k} failed: {e}\nreplay: MODEL_SEED={seed} MODEL_STEPS={steps} cargo test -p tool-host-engine --test model");
        }
    }
    eprintln!(
        "model: {n} schedules of {steps} steps in {:.1} s, no failure",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn the_model_ledger_deduplicates_as_icrc1_says() {
    let mut l = ModelLedger::new(ledger_id());
    l.credit(deposit(owners()[0]), 10 * 100_000_000);
    // Sanity of the model itself, so that its answers can be trusted by the test above.
    #[derive(candid::CandidType)]
    struct Account {
        owner: Principal,
        subaccount: Option<serde_bytes::ByteBuf>,
    }
    #[derive(candid::CandidType)]
    struct TransferArg {
        from_subaccount: Option<serde_bytes::ByteBuf>,
        to: Account,
        amount: Nat,
        fee: Option<Nat>,
        memo: Option<serde_bytes::ByteBuf>,
        created_at_time: Option<u64>,
    }
    let sub = tool_host_core::funds::deposit_subaccount(&owners()[0]).to_vec();
    let t = |created: u64| {
        candid::encode_one(TransferArg {
            from_subaccount: Some(serde_bytes::ByteBuf::from(sub.clone())),
            to: Account {
                owner: receivers()[0],
                subaccount: None,
            },
            amount: Nat::from(100u32),
            fee: None,
            memo: None,
            created_at_time: Some(created),
        })
        .unwrap()
    };
    let now = T0;
    assert_eq!(
        l.execute(host(), "icrc1_transfer", &t(now), now).block,
        Some(0)
    );
    assert_eq!(
        l.execute(host(), "icrc1_transfer", &t(now), now + 1).block,
        None,
        "duplicate"
    );
    assert_eq!(
        l.execute(host(), "icrc1_transfer", &t(now), now + 25 * 3_600 * SEC)
            .block,
        None,
        "too old"
    );
    assert_eq!(
        l.execute(host(), "icrc1_transfer", &t(now + 61 * SEC), now)
            .block,
        None,
        "created in the future"
    );
    assert_eq!(
        l.execute(host(), "icrc1_transfer", &t(now + 1), now).block,
        Some(1)
    );
    assert_eq!(l.balance(&(receivers()[0], [0; 32])), 200);
}
