#![allow(dead_code)]
//! A scripted world for the engine: the tool host's state in a vector memory, a clock, and a
//! ledger that keeps real blocks and answers each call as the test scripts it.

pub mod ledger;

use candid::{CandidType, Encode, IDLValue, Nat, Principal};
use ic_stable_structures::VectorMemory;
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use tool_host_engine::runtime::{CallOutcome, Runtime};
use tool_host_engine::state::State;
use tool_host_engine::types::*;

pub const T0: u64 = 1_796_119_200_000_000_000;
pub const SEC: u64 = 1_000_000_000;
pub const MINUTE: u64 = 60 * SEC;
pub const HOUR: u64 = 3_600 * SEC;

pub fn p(n: u8) -> Principal {
    Principal::from_slice(&[n, 1, 2, 3])
}
pub fn controller() -> Principal {
    p(1)
}
pub fn owner() -> Principal {
    p(2)
}
pub fn agent() -> Principal {
    p(3)
}
pub fn stranger() -> Principal {
    p(4)
}
pub fn other_owner() -> Principal {
    p(5)
}
pub fn other_agent() -> Principal {
    p(6)
}
pub fn ledger_id() -> Principal {
    Principal::from_text("ryjl3-tyaaa-aaaaa-aaaba-cai").unwrap()
}
pub fn host_id() -> Principal {
    Principal::from_text("rrkah-fqaaa-aaaaa-aaaaq-cai").unwrap()
}
/// The canister an owner's escalations go to in the tests.
pub fn handler_id() -> Principal {
    Principal::from_text("r7inp-6aaaa-aaaaa-aaabq-cai").unwrap()
}
pub fn receiver() -> Principal {
    Principal::from_text("k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae").unwrap()
}

/// How the ledger answers its next update call of a method.
#[derive(Clone, Debug)]
pub enum Script {
    /// Execute as a ledger would (append a block) and reply Ok.
    Execute,
    /// Reply this value (an `Err` variant) without executing.
    Reply(IDLValue),
    Reject(u32),
    /// Execute, then the reply is lost (the caller sees SYS_UNKNOWN).
    ExecuteThenLose,
    NotSent,
    /// Reply bytes that do not decode as the method's result.
    Garbage,
}

pub struct Ledger {
    pub scripts: VecDeque<Script>,
    /// The ledger itself: balances, deduplication, blocks.
    pub chain: ledger::ModelLedger,
    pub icrc3: bool,
    /// Calls to icrc3_get_blocks fail while this is set.
    pub blocks_down: bool,
}

impl Ledger {
    pub fn blocks(&self) -> &[ledger::Block] {
        &self.chain.blocks
    }
}

/// A look at the state from inside a send's await.
pub type DuringCall = Box<dyn Fn(&State<VectorMemory>)>;

/// Every scenario ends with the intent indexes checked against the intents.
impl Drop for World {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            if let Err(e) = self.state.borrow().check_indexes() {
                panic!("the intent indexes disagree with the intents: {e}");
            }
        }
    }
}

pub struct World {
    pub state: RefCell<State<VectorMemory>>,
    pub memory: VectorMemory,
    pub now: Cell<u64>,
    pub ledger: RefCell<Ledger>,
    pub calls: RefCell<Vec<(Principal, String)>>,
    pub woke: RefCell<Vec<u64>>,
    /// Update calls yield once before answering, so two sends can interleave.
    pub yield_calls: Cell<bool>,
    /// Called inside the transfer call, with the state as it is during the await.
    pub during_call: RefCell<Option<DuringCall>>,
    /// Calls of these methods yield once after the target answered, before the caller sees
    /// the answer (so that something can happen between a read and its use).
    pub yield_after: RefCell<std::collections::BTreeSet<String>>,
    /// `icrc1_supported_standards` is rejected while this is set.
    pub standards_down: Cell<bool>,
    /// Entries of `list_contacts` (a name set): name → account owner.
    pub contacts: RefCell<Vec<(String, Principal)>>,
    /// How the escalation handler answers its next calls (`Ok` when none is scripted).
    pub handler_replies: RefCell<VecDeque<CallOutcome>>,
    /// The handler's call yields once before answering (so an upgrade can happen at it).
    pub yield_handler: Cell<bool>,
    /// How the management canister answers the next `raw_rand` calls; when none is scripted,
    /// 32 bytes of SHA-256 of a counter (distinct per call, the same in every run).
    pub rand_replies: RefCell<VecDeque<CallOutcome>>,
    pub rand_calls: Cell<u64>,
}

/// Polls a future once with a waker that does nothing: whether it finished.
pub fn poll_once<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    f.poll(&mut cx)
}

struct YieldOnce(bool);
impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[allow(unused_imports)]
pub use ledger::{record, variant};
pub fn nat(n: u64) -> IDLValue {
    ledger::nat(n as u128)
}
pub fn err(case: &str, payload: IDLValue) -> Script {
    Script::Reply(variant("Err", variant(case, payload)))
}

fn idl_text(s: &str) -> IDLValue {
    IDLValue::Text(s.into())
}

impl World {
    pub fn new() -> Rc<World> {
        let memory = VectorMemory::default();
        let w = Rc::new(World {
            state: RefCell::new(State::init(memory.clone())),
            memory,
            now: Cell::new(T0),
            ledger: RefCell::new(Ledger {
                scripts: VecDeque::new(),
                chain: ledger::ModelLedger::new(ledger_id()),
                icrc3: true,
                blocks_down: false,
            }),
            calls: RefCell::new(vec![]),
            woke: RefCell::new(vec![]),
            yield_calls: Cell::new(false),
            during_call: RefCell::new(None),
            yield_after: RefCell::new(Default::default()),
            standards_down: Cell::new(false),
            contacts: RefCell::new(vec![]),
            handler_replies: RefCell::new(VecDeque::new()),
            yield_handler: Cell::new(false),
            rand_replies: RefCell::new(VecDeque::new()),
            rand_calls: Cell::new(0),
        });
        tool_host_engine::lifecycle::after_init(&*w);
        w
    }

    /// The same memory opened again, as `post_upgrade` does (forced: sends in flight become
    /// unknown).
    pub fn upgrade(&self) {
        *self.state.borrow_mut() = State::init(self.memory.clone());
        tool_host_engine::lifecycle::check_upgrade(self, true).unwrap();
        tool_host_engine::lifecycle::after_upgrade(self);
    }

    pub fn advance(&self, ns: u64) {
        self.now.set(self.now.get() + ns);
    }

    /// Moves the clock `steps` times by `step` nanoseconds, running the timers due after each.
    pub fn run_for(&self, steps: u64, step: u64) {
        for _ in 0..steps {
            self.advance(step);
            self.run_timers();
        }
    }

    /// Changes the limits as the controller does (`set_limits`), from the current ones.
    pub fn with_limits(&self, f: impl FnOnce(&mut Limits)) {
        let mut l = tool_host_engine::registry::get_limits(self, controller()).unwrap();
        f(&mut l);
        tool_host_engine::registry::set_limits(self, controller(), l).unwrap();
    }

    pub fn script(&self, s: Script) {
        self.ledger.borrow_mut().scripts.push_back(s);
    }

    pub fn sends(&self, method: &str) -> usize {
        self.calls
            .borrow()
            .iter()
            .filter(|(_, m)| m == method)
            .count()
    }

    /// Runs timer ticks until nothing is due at the current time.
    pub fn run_timers(&self) {
        for _ in 0..100 {
            let due = self
                .state
                .borrow()
                .next_due()
                .is_some_and(|t| t <= self.now.get());
            if !due {
                return;
            }
            futures::executor::block_on(tool_host_engine::schedule::tick(self));
        }
        panic!("timers do not settle");
    }

    fn ledger_reply(&self, method: &str, arg: &[u8]) -> CallOutcome {
        match method {
            "icrc1_decimals" => CallOutcome::Replied(Encode!(&8u8).unwrap()),
            "icrc1_symbol" => CallOutcome::Replied(Encode!(&"TKA".to_string()).unwrap()),
            "icrc1_fee" => CallOutcome::Replied(Encode!(&Nat::from(10_000u64)).unwrap()),
            "icrc1_supported_standards" if self.standards_down.get() => CallOutcome::Rejected {
                code: 2,
                message: "busy".into(),
            },
            "list_contacts" => {
                #[derive(CandidType)]
                struct Account {
                    owner: Principal,
                    subaccount: Option<serde_bytes::ByteBuf>,
                }
                #[derive(CandidType)]
                struct Contact {
                    name: String,
                    account: Account,
                }
                let v: Vec<Contact> = self
                    .contacts
                    .borrow()
                    .iter()
                    .map(|(n, p)| Contact {
                        name: n.clone(),
                        account: Account {
                            owner: *p,
                            subaccount: None,
                        },
                    })
                    .collect();
                CallOutcome::Replied(Encode!(&v).unwrap())
            }
            "icrc1_supported_standards" => {
                #[derive(CandidType)]
                struct S {
                    name: String,
                    url: String,
                }
                let mut v = vec![S {
                    name: "ICRC-1".into(),
                    url: "u".into(),
                }];
                if self.ledger.borrow().icrc3 {
                    v.push(S {
                        name: "ICRC-3".into(),
                        url: "u".into(),
                    });
                }
                CallOutcome::Replied(Encode!(&v).unwrap())
            }
            "icrc1_balance_of" => CallOutcome::Replied(Encode!(&Nat::from(42u64)).unwrap()),
            "icrc3_get_blocks" => {
                use tool_host_engine::reconcile::icrc3::*;
                let l = self.ledger.borrow();
                if l.blocks_down {
                    return CallOutcome::Rejected {
                        code: 2,
                        message: "busy".into(),
                    };
                }
                let reqs: Vec<GetBlocksRequest> = candid::decode_one(arg).unwrap();
                CallOutcome::Replied(candid::encode_one(l.chain.get_blocks(&reqs)).unwrap())
            }
            "icrc1_transfer" | "icrc2_approve" | "icrc2_transfer_from" => {
                let script = self
                    .ledger
                    .borrow_mut()
                    .scripts
                    .pop_front()
                    .unwrap_or(Script::Execute);
                let now = self.now.get();
                let execute = || {
                    self.ledger
                        .borrow_mut()
                        .chain
                        .execute(host_id(), method, arg, now)
                };
                match script {
                    Script::Execute => CallOutcome::Replied(execute().reply),
                    Script::Reply(v) => CallOutcome::Replied(ledger::reply_bytes(method, &v)),
                    Script::Reject(code) => CallOutcome::Rejected {
                        code,
                        message: format!("scripted reject {code}"),
                    },
                    Script::ExecuteThenLose => {
                        execute();
                        CallOutcome::Rejected {
                            code: 6,
                            message: "deadline expired".into(),
                        }
                    }
                    Script::NotSent => CallOutcome::NotSent("call_perform failed".into()),
                    Script::Garbage => CallOutcome::Replied(b"DIDL\x00\x01\x71\x03abc".to_vec()),
                }
            }
            other => CallOutcome::Rejected {
                code: 5,
                message: format!("no method {other}"),
            },
        }
    }

    // Shorthands over the engine's API.

    pub fn tool(
        &self,
        caller: Principal,
        name: &str,
        input: Value,
        owner: Option<Principal>,
    ) -> ApiResult<ToolResult> {
        futures::executor::block_on(tool_host_engine::tools::call_tool(
            self,
            caller,
            CallToolArgs {
                name: name.into(),
                input: input.to_string(),
                owner,
                turn: None,
            },
        ))
    }

    /// A tool call in a turn.
    pub fn turn_tool(
        &self,
        caller: Principal,
        turn: u64,
        name: &str,
        input: Value,
        owner: Option<Principal>,
    ) -> ApiResult<ToolResult> {
        futures::executor::block_on(tool_host_engine::tools::call_tool(
            self,
            caller,
            CallToolArgs {
                name: name.into(),
                input: input.to_string(),
                owner,
                turn: Some(turn),
            },
        ))
    }

    /// Begins a turn for `owner` (the caller's own when `None`).
    pub fn begin(
        &self,
        caller: Principal,
        query: &str,
        limit: Option<u32>,
        owner: Option<Principal>,
    ) -> ApiResult<TurnStarted> {
        tool_host_engine::bus::turns::begin_turn(
            self,
            caller,
            BeginTurnArgs {
                query: query.into(),
                limit,
                format: None,
                owner,
            },
        )
    }

    pub fn get_turn(
        &self,
        caller: Principal,
        id: u64,
        owner: Option<Principal>,
    ) -> ApiResult<TurnView> {
        tool_host_engine::bus::turns::get_turn(self, caller, GetTurnArgs { id, owner })
    }

    /// Sets the builtins as an admin (the controller).
    pub fn builtins(&self, enabled: &[&str], pinned: &[&str]) -> ApiResult<BuiltinsView> {
        tool_host_engine::bus::settings::set_builtins(
            self,
            controller(),
            BuiltinSettings {
                enabled: enabled.iter().map(|s| s.to_string()).collect(),
                pinned: pinned.iter().map(|s| s.to_string()).collect(),
                unpinned: None,
                default_time_zone: None,
            },
        )
    }

    pub fn confirm(&self, caller: Principal, id: u64, digest: &[u8]) -> ApiResult<ToolResult> {
        futures::executor::block_on(tool_host_engine::send::confirm(
            self,
            caller,
            ConfirmArgs {
                intent_id: id,
                digest: serde_bytes::ByteBuf::from(digest.to_vec()),
            },
        ))
    }

    pub fn intent(&self, id: u64) -> tool_host_engine::model::Intent {
        self.state.borrow().intents.get(&id).expect("intent exists")
    }

    /// Registers the ICRC packs and the ledger, and authorizes the agent.
    pub fn setup(self: &Rc<Self>) -> Rc<Self> {
        for (id, json) in tool_host_core::packs::PACKS {
            tool_host_engine::registry::register_form(
                &**self,
                controller(),
                RegisterFormArgs {
                    id: id.into(),
                    json: json.into(),
                },
            )
            .unwrap();
        }
        futures::executor::block_on(tool_host_engine::registry::register_canister(
            &**self,
            controller(),
            RegisterCanisterArgs {
                id: ledger_id(),
                label: Some("TKA".into()),
                forms: vec!["icrc1".into(), "icrc2".into()],
                owner: None,
            },
        ))
        .unwrap();
        tool_host_engine::owners::authorize_agent(&**self, owner(), agent()).unwrap();
        for o in [owner(), other_owner()] {
            let deposit = (host_id(), tool_host_core::funds::deposit_subaccount(&o));
            self.ledger
                .borrow_mut()
                .chain
                .credit(deposit, 1_000 * 100_000_000);
        }
        self.calls.borrow_mut().clear();
        self.clone()
    }

    /// An agent prepares a transfer of `amount`; returns (intent id, digest).
    pub fn prepare(&self, amount: &str) -> (u64, Vec<u8>) {
        let r = self.tool(agent(), "prepare_icrc1_transfer", json!({ "canister_id": ledger_id().to_text(), "to": receiver().to_text(), "amount": amount }), Some(owner())).unwrap();
        let v: Value = serde_json::from_str(&r.structured).unwrap();
        (
            v["intent_id"].as_str().unwrap().parse().unwrap(),
            hex::decode(v["digest"].as_str().unwrap()).unwrap(),
        )
    }
}

impl Runtime for World {
    type M = VectorMemory;
    fn now(&self) -> u64 {
        self.now.get()
    }
    fn self_id(&self) -> Principal {
        host_id()
    }
    fn is_controller(&self, p: &Principal) -> bool {
        *p == controller()
    }
    fn with_state<T>(&self, f: impl FnOnce(&mut State<Self::M>) -> T) -> T {
        f(&mut self.state.borrow_mut())
    }
    async fn call(
        &self,
        canister: Principal,
        method: &str,
        arg: Vec<u8>,
        _timeout: u32,
    ) -> CallOutcome {
        self.calls.borrow_mut().push((canister, method.to_string()));
        let update = matches!(
            method,
            "icrc1_transfer" | "icrc2_approve" | "icrc2_transfer_from"
        );
        if update {
            if let Some(f) = self.during_call.borrow().as_ref() {
                f(&self.state.borrow());
            }
        }
        if update && self.yield_calls.get() {
            YieldOnce(false).await;
        }
        if canister == handler_id() {
            if self.yield_handler.get() {
                YieldOnce(false).await;
            }
            return match method {
                "tool_host_escalation" => self
                    .handler_replies
                    .borrow_mut()
                    .pop_front()
                    .unwrap_or_else(|| {
                        CallOutcome::Replied(candid::encode_one(EscalationReply::Ok).unwrap())
                    }),
                other => CallOutcome::Rejected {
                    code: 5,
                    message: format!("no method {other}"),
                },
            };
        }
        let archive = self.ledger.borrow().chain.archive_id;
        let reply = if canister == Principal::management_canister() && method == "raw_rand" {
            let n = self.rand_calls.get() + 1;
            self.rand_calls.set(n);
            self.rand_replies
                .borrow_mut()
                .pop_front()
                .unwrap_or_else(|| {
                    use sha2::Digest;
                    let bytes = sha2::Sha256::digest(n.to_be_bytes()).to_vec();
                    CallOutcome::Replied(candid::encode_one(bytes).unwrap())
                })
        } else if canister == archive && method == "icrc3_get_blocks" {
            if self.ledger.borrow().blocks_down {
                CallOutcome::Rejected {
                    code: 2,
                    message: "busy".into(),
                }
            } else {
                let reqs: Vec<tool_host_engine::reconcile::icrc3::GetBlocksRequest> =
                    candid::decode_one(&arg).unwrap();
                let r = self.ledger.borrow().chain.archive_get_blocks(&reqs);
                CallOutcome::Replied(candid::encode_one(r).unwrap())
            }
        } else if canister != ledger_id() {
            CallOutcome::Rejected {
                code: 3,
                message: "no such canister".into(),
            }
        } else {
            self.ledger_reply(method, &arg)
        };
        if self.yield_after.borrow().contains(method) {
            YieldOnce(false).await;
        }
        reply
    }
    fn wake_at(&self, at_ns: u64) {
        self.woke.borrow_mut().push(at_ns);
    }
}

pub fn structured(r: &ToolResult) -> Value {
    serde_json::from_str(&r.structured).unwrap()
}

/// An ICRC-21 request for `method` with `arg`, in English, for the display `spec` names.
pub fn consent_request(
    method: &str,
    arg: Vec<u8>,
    spec: Option<tool_host_engine::consent::DeviceSpec>,
) -> tool_host_engine::consent::ConsentMessageRequest {
    use tool_host_engine::consent::*;
    ConsentMessageRequest {
        method: method.into(),
        arg: serde_bytes::ByteBuf::from(arg),
        user_preferences: ConsentMessageSpec {
            metadata: ConsentMessageMetadata {
                language: "en".into(),
                utc_offset_minutes: None,
            },
            device_spec: spec,
        },
    }
}

/// The world with some of its calls answered otherwise: `answer` gives the outcome of a call
/// it takes (`Some`), the world answers the rest. For a target that answers as no model ledger
/// does (a review's hostile or odd ledger).
pub struct Intercept<F: Fn(Principal, &str, &[u8]) -> Option<CallOutcome>> {
    pub w: Rc<World>,
    pub answer: F,
}

impl<F: Fn(Principal, &str, &[u8]) -> Option<CallOutcome>> Runtime for Intercept<F> {
    type M = VectorMemory;
    fn now(&self) -> u64 {
        self.w.now()
    }
    fn self_id(&self) -> Principal {
        self.w.self_id()
    }
    fn is_controller(&self, p: &Principal) -> bool {
        self.w.is_controller(p)
    }
    fn with_state<T>(&self, f: impl FnOnce(&mut State<Self::M>) -> T) -> T {
        self.w.with_state(f)
    }
    async fn call(
        &self,
        canister: Principal,
        method: &str,
        arg: Vec<u8>,
        timeout: u32,
    ) -> CallOutcome {
        match (self.answer)(canister, method, &arg) {
            Some(out) => out,
            None => self.w.call(canister, method, arg, timeout).await,
        }
    }
    fn wake_at(&self, at_ns: u64) {
        self.w.wake_at(at_ns)
    }
}
