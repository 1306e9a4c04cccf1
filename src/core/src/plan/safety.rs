//! Rules that hold whatever a form says: which effects make a read tool (sent without the
//! owner's confirmation), the ledger methods that move funds, and the guard on every plan.

use super::*;

pub(super) fn default_effect(mode: Mode) -> Effect {
    if mode.is_query() {
        Effect {
            kind: "read".into(),
            irreversible: false,
            replicated: false,
        }
    } else {
        Effect {
            kind: "write".into(),
            irreversible: true,
            replicated: true,
        }
    }
}

/// The one effect that makes an update a read-only update (a read tool sent as an update call).
pub fn is_read_only_effect(effect: &Effect) -> bool {
    effect.kind == "read" && !effect.irreversible && effect.replicated
}

/// Ledger methods that move funds (ICRC-1, -2, -4, -7, -37, the ICP ledger's own `transfer`
/// and `send_dfx`, the cycles ledger's withdrawals and canister creations): never a read tool
/// (sent at once, without the owner's confirmation), whatever a form says of them, also as a
/// query (the host's call runs the method as the ledger has it).
pub const FUNDS_METHODS: [&str; 14] = [
    "icrc1_transfer",
    "icrc2_approve",
    "icrc2_transfer_from",
    "icrc4_transfer_batch",
    "icrc7_transfer",
    "icrc37_approve_tokens",
    "icrc37_approve_collection",
    "icrc37_transfer_from",
    "transfer",
    "send_dfx",
    "withdraw",
    "withdraw_from",
    "create_canister",
    "create_canister_from",
];

/// Whether a method (or case) with this effect gets a read tool, or why it is refused one: an
/// update is a read only with exactly the read-only effect, and a method that moves funds never.
pub(super) fn is_read(method: &str, mode: Mode, effect: &Effect) -> Result<bool, String> {
    if !mode.is_query() && !effect.is_read() {
        return Ok(false);
    }
    if !mode.is_query() && !is_read_only_effect(effect) {
        return Err(format!(
            "a read-only update needs exactly effect {{ kind: \"read\", irreversible: false, replicated: true }} (this one: irreversible {}, replicated {}); a read tool is sent without the owner's confirmation",
            effect.irreversible, effect.replicated
        ));
    }
    if FUNDS_METHODS.contains(&method) {
        return Err(format!(
            "{method} moves funds: it is never a read tool (sent without the owner's confirmation), whatever the form says"
        ));
    }
    Ok(true)
}

/// A guard that holds whatever a form says, checked on every plan before it is offered: a
/// stamped plan fills exactly one stamp (a top-level field of its one argument record) and its
/// memo exactly once, an unstamped one neither; no input is a position the host fills; a read
/// tool is a query or an update with exactly the read-only effect, and never moves funds.
pub fn check_plan(plan: &ToolPlan) -> Result<(), String> {
    let method = plan.method_def();
    let guard = |why: String| Err(format!("refused by the plan guard: {why}"));
    if plan.has_stamp != method.idempotency.is_some() {
        return guard(format!(
            "has_stamp is {} but the method's idempotency is {}",
            plan.has_stamp,
            if method.idempotency.is_some() {
                "set"
            } else {
                "not set"
            }
        ));
    }
    let (mut stamps, mut memos, mut top_stamps) = (0, 0, 0);
    for (i, a) in plan.args.iter().enumerate() {
        count_fills(a, &mut stamps, &mut memos);
        if let (0, ArgPlan::Fields(slots)) = (i, a) {
            top_stamps += slots
                .iter()
                .filter(|s| matches!(s.fill, Fill::Stamp))
                .count();
        }
    }
    let want_memos = usize::from(
        plan.has_stamp
            && method
                .idempotency
                .as_ref()
                .is_some_and(|i| i.memo.is_some()),
    );
    if stamps != usize::from(plan.has_stamp)
        || top_stamps != stamps
        || plan.has_stamp && plan.args.len() != 1
    {
        return guard(format!(
            "has_stamp is {} but the plan fills {stamps} stamp positions ({top_stamps} of them fields of a one-argument record)",
            plan.has_stamp
        ));
    }
    if memos != want_memos {
        return guard(format!(
            "the plan fills {memos} memo positions, not {want_memos}"
        ));
    }
    for p in &plan.params {
        if matches!(p.reader, Reader::Host(_)) {
            return guard(format!(
                "the input '{}' is a position the host fills",
                p.name
            ));
        }
        if !host_slots_ok(&p.reader) {
            return guard(format!(
                "a position the host fills inside '{}' is not filled by a default or left empty",
                p.name
            ));
        }
    }
    if plan.kind == ToolKind::Read {
        if FUNDS_METHODS.contains(&plan.method.as_str()) {
            return guard(format!("{} moves funds and is a read tool", plan.method));
        }
        if !plan.mode.is_query() && !is_read_only_effect(&plan.effect) {
            return guard("an update read tool without the read-only effect".into());
        }
    }
    Ok(())
}

fn count_fills(a: &ArgPlan, stamps: &mut usize, memos: &mut usize) {
    let mut one = |s: &Slot| match s.fill {
        Fill::Stamp => *stamps += 1,
        Fill::Memo => *memos += 1,
        _ => {}
    };
    match a {
        ArgPlan::Fields(slots) => slots.iter().for_each(&mut one),
        ArgPlan::Whole(s) => one(s),
        ArgPlan::Case { payload, .. } => count_fills(payload, stamps, memos),
    }
}

/// Every host position below a reader is filled by a default or left empty.
fn host_slots_ok(r: &Reader) -> bool {
    match r {
        Reader::Host(s) => matches!(s.fill, Fill::Auto(_) | Fill::Empty),
        Reader::Named { inner, .. } | Reader::Opt(inner) => host_slots_ok(inner),
        Reader::Vec { elem, .. } => !matches!(**elem, Reader::Host(_)) && host_slots_ok(elem),
        Reader::Record(fs) | Reader::Variant(fs) => fs.iter().all(|(_, r)| host_slots_ok(r)),
        _ => true,
    }
}
