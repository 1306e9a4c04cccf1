#![allow(dead_code)]
//! A scripted world for the engine: the tool host's state in a vector memory, a clock, and a
//! ledger that keeps real blocks and answers each call as the test scripts it.

use candid::types::value::{IDLField, VariantValue};
use candid::types::Label;
use candid::{CandidType, Encode, IDLArgs, IDLValue, Nat, Principal};
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

#[derive(Clone, Debug)]
pub struct Block {
    pub memo: Option<Vec<u8>>,
    pub ts: Option<u64>,
    pub amount: u128,
}

#[derive(Default)]
pub struct Ledger {
    pub scripts: VecDeque<Script>,
    pub blocks: Vec<Block>,
    pub icrc3: bool,
    /// Calls to icrc3_get_blocks fail while this is set.
    pub blocks_down: bool,
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

pub fn variant(case: &str, val: IDLValue) -> IDLValue {
    IDLValue::Variant(VariantValue(
        Box::new(IDLField {
            id: Label::Named(case.into()),
            val,
        }),
        0,
    ))
}
pub fn record(fields: &[(&str, IDLValue)]) -> IDLValue {
    IDLValue::Record(
        fields
            .iter()
            .map(|(n, v)| IDLField {
                id: Label::Named((*n).into()),
                val: v.clone(),
            })
            .collect(),
    )
}
pub fn nat(n: u64) -> IDLValue {
    IDLValue::Nat(Nat::from(n))
}
pub fn err(case: &str, payload: IDLValue) -> Script {
    Script::Reply(variant("Err", variant(case, payload)))
}

/// The result types of icrc1_transfer, to encode scripted replies exactly.
fn transfer_result_bytes(v: &IDLValue) -> Vec<u8> {
    thread_local! {
        static FORM: tool_host_core::plan::FormRef = tool_host_core::packs::pack("icrc1").unwrap();
    }
    let form = FORM.with(|f| f.clone());
    let m = &form.form.methods["icrc1_transfer"];
    let env = tool_host_core::candid_types::type_env(&form.form);
    IDLArgs::new(std::slice::from_ref(v))
        .to_bytes_with_types(&env, &tool_host_core::candid_types::to_types(&m.results))
        .unwrap()
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
                icrc3: true,
                ..Default::default()
            }),
            calls: RefCell::new(vec![]),
            woke: RefCell::new(vec![]),
            yield_calls: Cell::new(false),
            during_call: RefCell::new(None),
        });
        tool_host_engine::lifecycle::after_init(&*w);
        w
    }

    /// The same memory opened again, as `post_upgrade` does.
    pub fn upgrade(&self) {
        *self.state.borrow_mut() = State::init(self.memory.clone());
        tool_host_engine::lifecycle::after_upgrade(self);
    }

    pub fn advance(&self, ns: u64) {
        self.now.set(self.now.get() + ns);
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
                let mut blocks = vec![];
                for r in reqs {
                    let start = u64::try_from(r.start.0).unwrap();
                    let len = u64::try_from(r.length.0).unwrap();
                    for id in start..(start + len).min(l.blocks.len() as u64) {
                        let b = &l.blocks[id as usize];
                        let mut tx = vec![("amt".to_string(), Value::Nat(Nat::from(b.amount)))];
                        if let Some(m) = &b.memo {
                            tx.push((
                                "memo".to_string(),
                                Value::Blob(serde_bytes::ByteBuf::from(m.clone())),
                            ));
                        }
                        if let Some(ts) = b.ts {
                            tx.push(("ts".to_string(), Value::Nat(Nat::from(ts))));
                        }
                        let block = Value::Map(vec![
                            ("btype".to_string(), Value::Text("1xfer".into())),
                            ("tx".to_string(), Value::Map(tx)),
                        ]);
                        blocks.push(BlockWithId {
                            id: Nat::from(id),
                            block,
                        });
                    }
                }
                let result = GetBlocksResult {
                    log_length: Nat::from(l.blocks.len() as u64),
                    blocks,
                    archived_blocks: vec![],
                };
                CallOutcome::Replied(candid::encode_one(result).unwrap())
            }
            "icrc1_transfer" | "icrc2_approve" | "icrc2_transfer_from" => {
                let script = self
                    .ledger
                    .borrow_mut()
                    .scripts
                    .pop_front()
                    .unwrap_or(Script::Execute);
                let execute = || {
                    let a = IDLArgs::from_bytes(arg).unwrap();
                    let r = &a.args[0];
                    let IDLValue::Record(fs) = r else { panic!() };
                    let get = |n: &str| {
                        fs.iter()
                            .find(|f| f.id.get_id() == candid::idl_hash(n))
                            .map(|f| f.val.clone())
                    };
                    let memo = match get("memo") {
                        Some(IDLValue::Opt(b)) => match *b {
                            IDLValue::Blob(b) => Some(b),
                            IDLValue::Vec(v) => Some(
                                v.iter()
                                    .map(|x| if let IDLValue::Nat8(b) = x { *b } else { 0 })
                                    .collect(),
                            ),
                            _ => None,
                        },
                        _ => None,
                    };
                    let ts = match get("created_at_time") {
                        Some(IDLValue::Opt(t)) => tool_host_core::read::value::value_int(&t)
                            .map(|x| u64::try_from(x).unwrap()),
                        _ => None,
                    };
                    let amount = get("amount")
                        .and_then(|v| tool_host_core::read::value::value_int(&v))
                        .map(|x| u128::try_from(x).unwrap())
                        .unwrap_or(0);
                    let mut l = self.ledger.borrow_mut();
                    l.blocks.push(Block { memo, ts, amount });
                    (l.blocks.len() - 1) as u64
                };
                match script {
                    Script::Execute => {
                        let id = execute();
                        CallOutcome::Replied(transfer_result_bytes(&variant("Ok", nat(id))))
                    }
                    Script::Reply(v) => CallOutcome::Replied(transfer_result_bytes(&v)),
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
            },
        ))
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
            },
        ))
        .unwrap();
        tool_host_engine::owners::authorize_agent(&**self, owner(), agent()).unwrap();
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
        if canister != ledger_id() {
            return CallOutcome::Rejected {
                code: 3,
                message: "no such canister".into(),
            };
        }
        self.ledger_reply(method, &arg)
    }
    fn wake_at(&self, at_ns: u64) {
        self.woke.borrow_mut().push(at_ns);
    }
}

pub fn structured(r: &ToolResult) -> Value {
    serde_json::from_str(&r.structured).unwrap()
}
