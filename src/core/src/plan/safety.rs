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
    if FUNDS_METHODS.contains(&plan.method.as_str()) {
        let form = &plan.form.form;
        let mut found = None;
        let mut look = |s: &Slot, place: &str| {
            if found.is_none() {
                found = amount_from_ref(form, s, place);
            }
        };
        plan.args.iter().for_each(|a| arg_slots(a, &mut look));
        for p in &plan.params {
            reader_slots(&p.reader, &p.name, &mut look);
        }
        if let Some(why) = found {
            return guard(why);
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

/// A token amount the host fills from a ref other than the ledger's fee, in a method that moves
/// funds. The host's fill is never read as an input is, so no unit check sees it: a form's
/// approve amount filled from `icrc1_total_supply` approved the whole supply. The fee is the
/// one amount a ledger states itself (and refuses when it is not its own).
fn amount_from_ref(form: &Form, s: &Slot, place: &str) -> Option<String> {
    let Fill::Auto(Auto::From(src)) = &s.fill else {
        return None;
    };
    if src.starts_with("owner:") || src == crate::funds::REF_FEE {
        return None;
    }
    let tag = value_tag(form, &s.node).or_else(|| match resolve(form, &s.node) {
        Some(Ty::Opt(inner)) => value_tag(form, inner),
        _ => None,
    });
    matches!(tag, Some(ValueTag::TokenAmount { .. })).then(|| {
        format!(
            "'{place}' is a token amount the host fills from {src}: a method that moves funds fills an amount only from the ledger's fee ({}), never one the owner does not give",
            crate::funds::REF_FEE
        )
    })
}

/// The host's positions of an argument plan, each with the name of its place.
fn arg_slots(a: &ArgPlan, f: &mut impl FnMut(&Slot, &str)) {
    match a {
        ArgPlan::Fields(slots) => {
            for s in slots {
                let place = s.label.as_ref().map_or_else(String::new, |l| l.to_string());
                f(s, &place);
            }
        }
        ArgPlan::Whole(s) => f(s, "$args"),
        ArgPlan::Case { payload, .. } => arg_slots(payload, f),
    }
}

/// The host's positions inside an input, each named by its field (or the input's name).
fn reader_slots(r: &Reader, place: &str, f: &mut impl FnMut(&Slot, &str)) {
    match r {
        Reader::Host(s) => f(s, place),
        Reader::Named { inner, .. } | Reader::Opt(inner) => reader_slots(inner, place, f),
        Reader::Vec { elem, .. } => reader_slots(elem, place, f),
        Reader::Record(fs) | Reader::Variant(fs) => {
            fs.iter().for_each(|(name, r)| reader_slots(r, name, f))
        }
        _ => {}
    }
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
