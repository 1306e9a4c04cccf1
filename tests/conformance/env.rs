//! The conformance suite's `LedgerEnv` over a [`Backend`]: every call of the suite becomes an
//! ingress query or update on the ledger, as the environment's principal.

use async_trait::async_trait;
use candid::utils::{ArgumentDecoder, ArgumentEncoder};
use candid::Principal;
use icrc1_test_env::LedgerEnv;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tool_host_tests::backend::{decode, encode, Backend};

/// What every fork of an environment shares: the backend, the ledger, the principal counter.
pub struct Shared {
    pub b: Box<dyn Backend>,
    pub ledger: Principal,
    /// The cycles ledger's depositor (none on the test ledger).
    pub depositor: Option<Principal>,
    next: u32,
}

/// One caller on the shared ledger. `fork` makes another caller (a fresh principal); clones
/// are the same caller.
#[derive(Clone)]
pub struct Env {
    shared: Rc<RefCell<Shared>>,
    principal: Principal,
}

/// The principal of caller number `n` (self-authenticating, distinct from the scenario roles).
pub fn caller(n: u32) -> Principal {
    let mut key = b"icrc1 conformance caller ".to_vec();
    key.extend(n.to_be_bytes());
    Principal::self_authenticating(key)
}

impl Env {
    /// The root caller (number 0) on `ledger`; it must hold the suite's funds.
    pub fn new(b: Box<dyn Backend>, ledger: Principal, depositor: Option<Principal>) -> Env {
        Env {
            shared: Rc::new(RefCell::new(Shared {
                b,
                ledger,
                depositor,
                next: 0,
            })),
            principal: caller(0),
        }
    }

    /// Runs `f` on the backend with the ledger and the depositor (for what the suite does not
    /// do itself).
    pub fn with_backend<T>(
        &self,
        f: impl FnOnce(&mut dyn Backend, Principal, Option<Principal>) -> T,
    ) -> T {
        let mut s = self.shared.borrow_mut();
        let (ledger, depositor) = (s.ledger, s.depositor);
        f(s.b.as_mut(), ledger, depositor)
    }

    fn call<Input, Output>(
        &self,
        update: bool,
        method: &str,
        input: Input,
    ) -> anyhow::Result<Output>
    where
        Input: ArgumentEncoder + std::fmt::Debug,
        Output: for<'a> ArgumentDecoder<'a>,
    {
        let what = format!("{method}{input:?} as {}", self.principal);
        let arg = encode(method, input).map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
        let mut s = self.shared.borrow_mut();
        let ledger = s.ledger;
        let reply = if update {
            s.b.update(ledger, self.principal, method, arg)
        } else {
            s.b.query(ledger, self.principal, method, arg)
        }
        .map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
        decode(method, &reply).map_err(|e| anyhow::anyhow!("{what}: {e}"))
    }
}

#[async_trait(?Send)]
impl LedgerEnv for Env {
    fn fork(&self) -> Self {
        let n = {
            let mut s = self.shared.borrow_mut();
            s.next += 1;
            s.next
        };
        Env {
            shared: self.shared.clone(),
            principal: caller(n),
        }
    }

    fn principal(&self) -> Principal {
        self.principal
    }

    /// The IC's time (the ledger's, on one subnet).
    async fn time(&self) -> SystemTime {
        let nanos = self.shared.borrow_mut().b.time_nanos();
        UNIX_EPOCH + Duration::from_nanos(nanos)
    }

    async fn query<Input, Output>(&self, method: &str, input: Input) -> anyhow::Result<Output>
    where
        Input: ArgumentEncoder + std::fmt::Debug,
        Output: for<'a> ArgumentDecoder<'a>,
    {
        self.call(false, method, input)
    }

    async fn update<Input, Output>(&self, method: &str, input: Input) -> anyhow::Result<Output>
    where
        Input: ArgumentEncoder + std::fmt::Debug,
        Output: for<'a> ArgumentDecoder<'a>,
    {
        self.call(true, method, input)
    }
}
