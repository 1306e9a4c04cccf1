//! The two ledgers the scenarios run against: the project's test ledger (`src/test_ledger`, with
//! fault injection) and DFINITY's cycles ledger (a real peer, read from
//! `../shared/fixtures/cycles-ledger/` or `$CYCLES_LEDGER_WASM`, see [`crate::wasm`]).

use crate::backend::{Backend, BackendExt, InstallMode};
use crate::check::{Check, Fail};
use crate::clients::{CyclesLedgerArgs, CyclesLedgerInit, Depositor, DepositorInit, Ledger};
use crate::wasm::{self, Canister};
use crate::world::{account, TEST_DECIMALS, TEST_FEE, TEST_SYMBOL};
use candid::{Nat, Principal};
use test_ledger::types as lt;

/// Which ledger a trial runs against; part of every trial's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LedgerKind {
    /// `src/test_ledger`: this project's ICRC-1/2/3 ledger, with fault injection.
    Test,
    /// DFINITY's cycles ledger (1.0.6), run as the IC would run it.
    Cycles,
}

impl LedgerKind {
    pub const ALL: [LedgerKind; 2] = [LedgerKind::Test, LedgerKind::Cycles];

    /// The trial name part: `test_ledger`, `cycles_ledger`.
    pub fn name(self) -> &'static str {
        match self {
            LedgerKind::Test => "test_ledger",
            LedgerKind::Cycles => "cycles_ledger",
        }
    }

    /// For messages: "test ledger", "cycles ledger".
    pub fn label(self) -> &'static str {
        match self {
            LedgerKind::Test => "test ledger",
            LedgerKind::Cycles => "cycles ledger",
        }
    }

    /// Reads `--ledger test|cycles` style names.
    pub fn parse(s: &str) -> Option<LedgerKind> {
        match s {
            "test" | "test_ledger" => Some(LedgerKind::Test),
            "cycles" | "cycles_ledger" => Some(LedgerKind::Cycles),
            _ => None,
        }
    }

    /// Whether the ledger's wasm can be had; `Err` is the reason it cannot (the cycles ledger's
    /// fixture missing, see [`wasm::cycles_ledger`]).
    pub fn available(self) -> Result<(), wasm::CyclesLedgerMissing> {
        match self {
            LedgerKind::Test => Ok(()),
            LedgerKind::Cycles => wasm::cycles_ledger().map(|_| ()),
        }
    }
}

/// A ledger's token as the ledger answers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub name: String,
    pub symbol: String,
    pub decimals: u8,
    /// The transfer fee in base units.
    pub fee: u64,
}

impl Token {
    /// Reads name, symbol, decimals and fee from the ledger's own queries.
    pub fn read(b: &mut dyn Backend, ledger: Ledger) -> Check<Token> {
        let (name,): (String,) =
            b.query_typed(ledger.0, Principal::anonymous(), "icrc1_name", ())?;
        Ok(Token {
            name,
            symbol: ledger.symbol(b)?,
            decimals: ledger.decimals(b)?,
            fee: crate::clients::nat_u64(&ledger.fee(b)?),
        })
    }

    /// `n` whole tokens in base units.
    pub fn units(&self, n: u64) -> u64 {
        n * 10u64.pow(u32::from(self.decimals))
    }

    /// Base units as the tool host shows them: `1.5 TCYCLES`, `0.0001 TCYCLES`.
    pub fn show(&self, units: u64) -> String {
        let d = u32::from(self.decimals);
        let one = 10u64.pow(d);
        let frac = format!("{:0width$}", units % one, width = d as usize);
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            format!("{} {}", units / one, self.symbol)
        } else {
            format!("{}.{frac} {}", units / one, self.symbol)
        }
    }
}

/// Installs the ledger of `kind` into `ledger` (created, empty), `controller` controlling it,
/// with `initial` balances in whole tokens (minted at install); the test ledger's minting
/// account is `minter` (the cycles ledger has none: it mints on deposits). On the cycles
/// ledger also creates and installs the depositor, and gives the ledger the cycles that back
/// its initial balances.
pub fn install_ledger(
    b: &mut dyn Backend,
    kind: LedgerKind,
    ledger: Ledger,
    controller: Principal,
    minter: Principal,
    initial: &[(lt::Account, u64)],
) -> Check<Option<Depositor>> {
    match kind {
        LedgerKind::Test => {
            let wasm = wasm::wasm(Canister::TestLedger).map_err(Fail::Failed)?;
            let unit = 10u64.pow(u32::from(TEST_DECIMALS));
            let init = lt::InitArgs {
                name: "Token A".into(),
                symbol: TEST_SYMBOL.into(),
                decimals: TEST_DECIMALS,
                fee: Nat::from(TEST_FEE),
                minting_account: account(minter),
                initial_balances: initial
                    .iter()
                    .map(|(a, n)| (a.clone(), Nat::from(n * unit)))
                    .collect(),
            };
            b.install(
                ledger.0,
                wasm,
                candid::encode_args((init,)).expect("encodes"),
                InstallMode::Install,
                controller,
            )?;
            Ok(None)
        }
        LedgerKind::Cycles => {
            let w = wasm::cycles_ledger().map_err(|e| Fail::Failed(e.to_string()))?;
            // 12 decimals; the ledger must hold the cycles that back what it mints at install.
            let unit = 1_000_000_000_000u128;
            let total: u128 = initial.iter().map(|(_, n)| u128::from(*n) * unit).sum();
            b.add_cycles(ledger.0, total)?;
            let init = CyclesLedgerArgs::Init(CyclesLedgerInit {
                max_blocks_per_request: 1_000,
                index_id: None,
                initial_balances: Some(
                    initial
                        .iter()
                        .map(|(a, n)| (a.clone(), Nat::from(u128::from(*n) * unit)))
                        .collect(),
                ),
            });
            b.install(
                ledger.0,
                &w.ledger,
                candid::encode_args((init,)).expect("encodes"),
                InstallMode::Install,
                controller,
            )?;
            let d = Depositor(b.create_canister(&[controller])?);
            b.install(
                d.0,
                &w.depositor,
                candid::encode_args((DepositorInit {
                    ledger_id: ledger.0,
                },))
                .expect("encodes"),
                InstallMode::Install,
                controller,
            )?;
            Ok(Some(d))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_show_as_the_tool_host_writes_them() {
        let t = Token {
            name: "Trillion Cycles".into(),
            symbol: "TCYCLES".into(),
            decimals: 12,
            fee: 100_000_000,
        };
        assert_eq!(t.show(t.fee), "0.0001 TCYCLES");
        assert_eq!(t.show(t.units(3) / 2), "1.5 TCYCLES");
        assert_eq!(t.show(t.units(100)), "100 TCYCLES");
        assert_eq!(LedgerKind::parse("cycles"), Some(LedgerKind::Cycles));
        assert_eq!(LedgerKind::parse("icp"), None);
    }
}
