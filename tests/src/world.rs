//! The scenarios' common starting point: the tool host and a ledger — the test ledger or
//! DFINITY's cycles ledger — deployed on one backend, the ICRC packs and the ledger registered,
//! tokens in the owner's deposit account and an agent authorized; plus the steps scenarios
//! repeat (prepare, confirm, read an intent).

use crate::backend::{Backend, InstallMode};
use crate::check::{ApiOk, Check, Fail};
use crate::clients::{host_arg, Api, Depositor, HostArg, InitArgs, Ledger, ToolHost};
use crate::ledgers::{LedgerKind, Token};
use crate::wasm::{self, Canister};
use crate::{ensure, fail};
use candid::{Nat, Principal};
use serde_json::Value;
use test_ledger::types as lt;
use tool_host_engine::types::{IntentView, Limits, ToolResult};

pub const ICRC1_FORM: &str = include_str!("../../src/core/packs/icrc1.json");
pub const ICRC2_FORM: &str = include_str!("../../src/core/packs/icrc2.json");

/// The test ledger's token (its init argument); the cycles ledger's is fixed by its code
/// (`TCYCLES`, 12 decimals, fee 10^8). Scenarios read [`World::token`], never these.
pub const TEST_SYMBOL: &str = "TKA";
pub const TEST_DECIMALS: u8 = 8;
pub const TEST_FEE: u64 = 10_000;
/// Whole tokens minted to the owner's deposit account at deploy.
pub const DEPOSIT_TOKENS: u64 = 100;
/// Whole tokens in the owner's own account from the start (spent through ICRC-2).
pub const OWN_TOKENS: u64 = 50;

/// A distinct self-authenticating principal per role.
fn user(n: u8) -> Principal {
    Principal::self_authenticating([n; 32])
}

/// Who takes part.
#[derive(Clone, Copy, Debug)]
pub struct People {
    /// Controls both canisters (and so manages the tool host and faults the ledger).
    pub controller: Principal,
    /// An admin named in the tool host's init argument.
    pub admin: Principal,
    pub owner: Principal,
    /// The owner's agent.
    pub agent: Principal,
    /// Another owner, with its own agent.
    pub other_owner: Principal,
    pub other_agent: Principal,
    /// Signed in, but nobody's agent.
    pub stranger: Principal,
    /// The ledger's minting account.
    pub minter: Principal,
    /// Receives transfers.
    pub recipient: Principal,
}

impl Default for People {
    fn default() -> Self {
        People {
            controller: user(1),
            admin: user(2),
            owner: user(3),
            agent: user(4),
            other_owner: user(5),
            other_agent: user(6),
            stranger: user(7),
            minter: user(8),
            recipient: user(9),
        }
    }
}

/// An intent just prepared: its id, the digest the owner confirms and the whole answer.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub id: u64,
    pub digest: Vec<u8>,
    pub json: Value,
}

pub struct World {
    pub b: Box<dyn Backend>,
    pub p: People,
    pub host: ToolHost,
    pub ledger: Ledger,
    /// Which ledger this world runs.
    pub kind: LedgerKind,
    /// The ledger's token as the ledger itself answers it (name, symbol, decimals, fee).
    pub token: Token,
    /// The cycles ledger's depositor (mints by depositing cycles); `None` on the test ledger.
    pub depositor: Option<Depositor>,
    /// The owner's deposit account at the tool host (the ICRC-1 transfers' source).
    pub deposit: lt::Account,
    pub deposit_text: String,
}

pub fn account(owner: Principal) -> lt::Account {
    lt::Account::of(owner)
}

impl World {
    /// Deploys the tool host and the ledger of `kind` and registers everything; the owner's
    /// deposit account holds [`DEPOSIT_TOKENS`], the owner's own account [`OWN_TOKENS`], and
    /// the agent is authorized.
    pub fn deploy(b: Box<dyn Backend>, kind: LedgerKind) -> Check<World> {
        let host_wasm = wasm::wasm(Canister::ToolHost).map_err(Fail::Failed)?;
        Self::deploy_with(b, kind, host_wasm)
    }

    /// [`World::deploy`] with another build of the tool host (the benchmark's `bench` build).
    pub fn deploy_with(
        mut b: Box<dyn Backend>,
        kind: LedgerKind,
        host_wasm: &[u8],
    ) -> Check<World> {
        let p = People::default();
        let host = ToolHost(b.create_canister(&[p.controller])?);
        let ledger = Ledger(b.create_canister(&[p.controller])?);
        let init = InitArgs {
            admins: vec![p.admin],
            limits: None,
        };
        b.install(
            host.0,
            host_wasm,
            host_arg(HostArg::Init(init)),
            InstallMode::Install,
            p.controller,
        )?;
        let depositor = crate::ledgers::install_ledger(
            b.as_mut(),
            kind,
            ledger,
            p.controller,
            p.minter,
            &[(account(p.owner), OWN_TOKENS)],
        )?;
        let token = Token::read(b.as_mut(), ledger)?;
        let mut w = World {
            b,
            p,
            host,
            ledger,
            kind,
            token,
            depositor,
            deposit: account(Principal::anonymous()),
            deposit_text: String::new(),
        };
        w.register_packs_and_ledger()?;
        let d = w
            .host
            .deposit_account(w.b.as_mut(), p.owner)?
            .ok_or_fail("deposit_account")?;
        w.deposit = lt::Account {
            owner: d.account.owner,
            subaccount: d.account.subaccount,
        };
        w.deposit_text = d.text;
        let deposit = w.tokens(DEPOSIT_TOKENS);
        w.mint(&w.deposit.clone(), deposit)?;
        w.host
            .authorize_agent(w.b.as_mut(), p.owner, p.agent)?
            .ok_or_fail("authorize_agent")?;
        w.host
            .authorize_agent(w.b.as_mut(), p.other_owner, p.other_agent)?
            .ok_or_fail("authorize_agent (other owner)")?;
        Ok(w)
    }

    /// `n` whole tokens in base units.
    pub fn tokens(&self, n: u64) -> u64 {
        self.token.units(n)
    }

    /// The ledger's fee in base units.
    pub fn fee(&self) -> u64 {
        self.token.fee
    }

    /// `"<amount> <symbol>"`, as a tool input or a preview shows it (e.g. `amt("1.5")`).
    pub fn amt(&self, amount: &str) -> String {
        format!("{amount} {}", self.token.symbol)
    }

    fn register_packs_and_ledger(&mut self) -> Check {
        let c = self.p.controller;
        for (id, json) in [("icrc1", ICRC1_FORM), ("icrc2", ICRC2_FORM)] {
            self.host
                .register_form(self.b.as_mut(), c, id, json)?
                .ok_or_fail("register_form")?;
        }
        let symbol = self.token.symbol.clone();
        let t = self
            .host
            .register_canister(
                self.b.as_mut(),
                c,
                self.ledger.0,
                Some(&symbol),
                &["icrc1", "icrc2"],
            )?
            .ok_or_fail("register_canister")?;
        ensure!(t.refs_error.is_none(), "refs error: {:?}", t.refs_error);
        ensure!(t.icrc3, "the {} lists ICRC-3", self.kind.label());
        Ok(())
    }

    /// Deploys and registers the [`crate::odd`] canister (icrc1 form, label `ODD`).
    pub fn deploy_odd(&mut self) -> Check<Principal> {
        let c = self.p.controller;
        let odd = self.b.create_canister(&[c])?;
        self.b
            .install(odd, &crate::odd::wasm(), vec![], InstallMode::Install, c)?;
        let t = self
            .host
            .register_canister(
                self.b.as_mut(),
                c,
                odd,
                Some(crate::odd::SYMBOL),
                &["icrc1"],
            )?
            .ok_or_fail("register_canister (odd)")?;
        ensure!(!t.icrc3, "the odd canister does not list ICRC-3");
        ensure!(
            t.refs.contains(&format!("\"{}\"", crate::odd::SYMBOL)) && t.refs.contains("10000"),
            "the odd canister's refs: {} ({:?})",
            t.refs,
            t.refs_error
        );
        Ok(odd)
    }

    pub fn b(&mut self) -> &mut dyn Backend {
        self.b.as_mut()
    }

    /// Mints `amount` to `to`: on the test ledger a transfer from the minting account, on the
    /// cycles ledger a deposit of `amount + fee` cycles through the depositor (the ledger keeps
    /// its fee). Answers the block index.
    pub fn mint(&mut self, to: &lt::Account, amount: u64) -> Check<u64> {
        match &self.depositor {
            None => {
                let arg = lt::TransferArg {
                    from_subaccount: None,
                    to: to.clone(),
                    amount: Nat::from(amount),
                    fee: None,
                    memo: None,
                    created_at_time: None,
                };
                match self.ledger.transfer(self.b.as_mut(), self.p.minter, arg)? {
                    Ok(block) => Ok(crate::clients::nat_u64(&block)),
                    Err(e) => fail!("mint: {e:?}"),
                }
            }
            Some(d) => {
                let cycles = u128::from(amount) + u128::from(self.fee());
                // The depositor attaches cycles from its own balance: give it what it sends.
                self.b.add_cycles(d.0, cycles)?;
                let r = d.deposit(self.b.as_mut(), self.p.controller, to, cycles)?;
                Ok(crate::clients::nat_u64(&r.block_index))
            }
        }
    }

    pub fn balance(&mut self, account: &lt::Account) -> Check<u64> {
        Ok(crate::clients::nat_u64(
            &self.ledger.balance(self.b.as_mut(), account)?,
        ))
    }

    pub fn log_length(&mut self) -> Check<u64> {
        Ok(self.ledger.log_length(self.b.as_mut())?)
    }

    /// Queues one fault on the test ledger as its controller. Only the test ledger has fault
    /// injection: on the cycles ledger this fails (such a scenario runs on the test ledger only).
    pub fn fault(&mut self, method: &str, fault: lt::Fault) -> Check {
        if self.kind != LedgerKind::Test {
            fail!(
                "the {} has no fault injection: a scenario that queues ledger faults runs on the \
                 test ledger only",
                self.kind.label()
            );
        }
        let plan = lt::FaultPlan {
            method: method.into(),
            fault,
        };
        Ok(self
            .ledger
            .inject_faults(self.b.as_mut(), self.p.controller, vec![plan])?)
    }

    /// Calls a tool as `caller` acting for `owner`.
    pub fn tool(
        &mut self,
        caller: Principal,
        owner: Option<Principal>,
        name: &str,
        input: &str,
    ) -> Check<Api<ToolResult>> {
        Ok(self
            .host
            .call_tool(self.b.as_mut(), caller, name, input, owner)?)
    }

    /// The transfer input the scenarios use: `amount` to the recipient's default account.
    pub fn transfer_input(&self, amount: &str) -> String {
        serde_json::json!({
            "canister_id": self.ledger.0.to_text(),
            "to": self.p.recipient.to_text(),
            "amount": amount,
        })
        .to_string()
    }

    /// The agent prepares a tool for the owner; the answer must be a new or existing preview.
    pub fn prepare(&mut self, tool: &str, input: &str) -> Check<Prepared> {
        let (agent, owner) = (self.p.agent, self.p.owner);
        let r = self
            .tool(agent, Some(owner), tool, input)?
            .ok_or_fail(tool)?;
        ensure!(!r.is_error, "{tool} answered an error: {}", r.content);
        prepared_of(&r)
    }

    /// The agent prepares `prepare_icrc1_transfer` of `amount` to the recipient.
    pub fn prepare_transfer(&mut self, amount: &str) -> Check<Prepared> {
        let input = self.transfer_input(amount);
        self.prepare("prepare_icrc1_transfer", &input)
    }

    /// The owner confirms an intent with a digest.
    pub fn confirm(&mut self, id: u64, digest: &[u8]) -> Check<Api<ToolResult>> {
        let owner = self.p.owner;
        Ok(self.host.confirm(self.b.as_mut(), owner, id, digest)?)
    }

    /// The owner confirms; the call must be accepted (whatever the outcome).
    pub fn confirm_ok(&mut self, id: u64, digest: &[u8]) -> Check<ToolResult> {
        self.confirm(id, digest)?.ok_or_fail("confirm")
    }

    /// The owner reads an intent.
    pub fn intent(&mut self, id: u64) -> Check<IntentView> {
        let owner = self.p.owner;
        self.host
            .get_intent(self.b.as_mut(), owner, id)?
            .ok_or_fail("get_intent")
    }

    pub fn limits(&mut self) -> Check<Limits> {
        let c = self.p.controller;
        self.host
            .get_limits(self.b.as_mut(), c)?
            .ok_or_fail("get_limits")
    }

    pub fn set_limits(&mut self, limits: Limits) -> Check<Limits> {
        let c = self.p.controller;
        self.host
            .set_limits(self.b.as_mut(), c, limits)?
            .ok_or_fail("set_limits")
    }

    /// The owner's intents, as the owner lists them.
    pub fn intents(&mut self) -> Check<Vec<IntentView>> {
        let owner = self.p.owner;
        Ok(self
            .host
            .list_intents(self.b.as_mut(), owner, None)?
            .ok_or_fail("list_intents")?
            .intents)
    }

    pub fn stats(&mut self) -> Check<tool_host_engine::types::Stats> {
        let c = self.p.controller;
        self.host.stats(self.b.as_mut(), c)?.ok_or_fail("stats")
    }
}

/// The structured JSON of a tool answer.
pub fn structured(r: &ToolResult) -> Check<Value> {
    Ok(serde_json::from_str(&r.structured)?)
}

/// The intent id and digest of a prepare (or commit, or confirm) answer.
pub fn prepared_of(r: &ToolResult) -> Check<Prepared> {
    let json = structured(r)?;
    let Some(id) = json["intent_id"].as_str().and_then(|s| s.parse().ok()) else {
        fail!("no intent_id in {}", r.structured);
    };
    let Some(digest) = json["digest"].as_str().and_then(|d| hex::decode(d).ok()) else {
        fail!("no digest in {}", r.structured);
    };
    Ok(Prepared { id, digest, json })
}
