//! The full set's fills, run natively: the canister's stable memory is read out, the engine's
//! own insert path (`lifecycle::clone_settled_intents`: a settled intent copied under new ids
//! and owners, with its indexes and prune task) runs on it as compiled for this machine, and the
//! memory is put back for the canister to be upgraded into. The same code writes the same
//! bytes as in the canister, in a fraction of the time: the local host interprets wasm at
//! ~115 intents a second, which made a fill to 1 000 000 a matter of hours.

use candid::Principal;
use ic_stable_structures::VectorMemory;
use std::cell::RefCell;
use std::rc::Rc;
use tool_host_engine::runtime::{CallOutcome, Runtime};
use tool_host_engine::state::State;

/// The engine over a memory image, at a fixed time; it makes no calls.
struct Native {
    state: RefCell<State<VectorMemory>>,
    now: u64,
    id: Principal,
}

impl Runtime for Native {
    type M = VectorMemory;
    fn now(&self) -> u64 {
        self.now
    }
    fn self_id(&self) -> Principal {
        self.id
    }
    fn is_controller(&self, _: &Principal) -> bool {
        false
    }
    fn with_state<T>(&self, f: impl FnOnce(&mut State<Self::M>) -> T) -> T {
        f(&mut self.state.borrow_mut())
    }
    async fn call(&self, _: Principal, method: &str, _: Vec<u8>, _: u32) -> CallOutcome {
        CallOutcome::NotSent(format!("a native fill makes no calls ({method})"))
    }
    fn wake_at(&self, _: u64) {}
}

/// `image` (a tool host's stable memory) with settled intent `template` copied `n` times at
/// time `now` (ns), as the canister's state would hold them. Answers the new image and the
/// last id written.
pub fn fill(
    image: Vec<u8>,
    canister: Principal,
    template: u64,
    n: u64,
    now: u64,
) -> Result<(Vec<u8>, u64), String> {
    let memory: VectorMemory = Rc::new(RefCell::new(image));
    let rt = Native {
        state: RefCell::new(State::init(memory.clone())),
        now,
        id: canister,
    };
    let last = tool_host_engine::lifecycle::clone_settled_intents(&rt, template, n)?;
    rt.with_state(|s| s.check_layout())
        .map_err(|e| format!("the filled memory does not read: {e:?}"))?;
    drop(rt);
    let image = Rc::try_unwrap(memory)
        .map_err(|_| "the memory is still shared".to_string())?
        .into_inner();
    Ok((image, last))
}
