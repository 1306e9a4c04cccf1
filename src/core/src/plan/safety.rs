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
        // The ledger deduplicates on `created_at_time` (and `memo`): a stamp anywhere else is
        // a value it does not read (a `fee` of `opt nat64` decodes as none), and a resend
        // after an unknown outcome would execute twice.
        if let Some(i) = &method.idempotency {
            let at = |p: &crate::form::RelPath| p.labels.len() == 1 && p.index == 0;
            let named = |p: &crate::form::RelPath, n: &str| at(p) && p.labels[0] == n;
            if !named(&i.stamp, "created_at_time") {
                return guard(format!(
                    "{} moves funds: its idempotency stamp is the ledger's created_at_time, not {}",
                    plan.method,
                    i.stamp.labels.join(".")
                ));
            }
            if let Some(m) = i.memo.as_ref().filter(|m| !named(m, "memo")) {
                return guard(format!(
                    "{} moves funds: its idempotency memo is the ledger's memo, not {}",
                    plan.method,
                    m.labels.join(".")
                ));
            }
        }
        let form = &plan.form.form;
        let mut found = None;
        let mut look = |s: &Slot, place: &str| {
            if found.is_none() {
                found = filled_from_ref(s, place);
            }
        };
        plan.args.iter().for_each(|a| arg_slots(a, &mut look));
        for p in &plan.params {
            reader_slots(&p.reader, &p.name, &mut look);
        }
        if let Some(why) = found
            .or_else(|| misplaced_tag(form, &plan.method_def().args))
            .or_else(|| funds_outcome(form, &plan.method, method))
        {
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

/// A position the host fills from a ref, in a method that moves funds, other than the ledger's
/// fee at `fee`. The host's fill is never read as an input is, so no unit check sees it, and
/// whatever tag the form gives the position decides how the preview shows it: an approve's
/// amount filled from `icrc1_total_supply` approved the whole supply while it was shown as a
/// dust (in a form's decimals) or as a date (tagged a timestamp). The fee is the one amount a
/// ledger states itself (and refuses when it is not its own).
fn filled_from_ref(s: &Slot, place: &str) -> Option<String> {
    let Fill::Auto(Auto::From(src)) = &s.fill else {
        return None;
    };
    let fee = crate::funds::REF_FEE;
    // `e8s`: the ICP ledger's fee is a record `Tokens { e8s }`.
    if src.starts_with("owner:") || (src == fee && matches!(place, "fee" | "e8s")) {
        return None;
    }
    Some(format!(
        "'{place}' is filled by the host from {src}: a method that moves funds fills a position from no ref but the ledger's fee ({fee}) at 'fee'"
    ))
}

/// The fields of the standards' funds methods that hold amounts, and those that hold times: a
/// value tag says how the preview shows a position, so in a method that moves funds an amount
/// is shown as an amount and nothing else is (an approve's amount tagged a duration was shown
/// as `2h` and approved 72 000 TKA).
const AMOUNT_FIELDS: [&str; 4] = ["amount", "fee", "expected_allowance", "e8s"];
const TIME_FIELDS: [&str; 3] = ["created_at_time", "expires_at", "timestamp_nanos"];

/// The first value tag of a method's arguments at a place its kind does not belong, in a
/// method that moves funds: a token amount only at an amount field, a timestamp only at a time
/// field, a duration nowhere (the standards give none). Accounts and subaccounts are shown
/// as the bytes are, whatever the place.
fn misplaced_tag(form: &Form, args: &[Node]) -> Option<String> {
    type Seen<'a> = std::collections::BTreeSet<(&'a str, &'a str)>;
    fn walk<'a>(
        form: &'a Form,
        node: &'a Node,
        field: &'a str,
        seen: &mut Seen<'a>,
        depth: usize,
    ) -> Option<String> {
        if depth > 32 {
            return Some(
                "the argument nests deeper than 32 (a method that moves funds is checked whole)"
                    .into(),
            );
        }
        let tag = value_tag(form, node);
        let allowed: &[&str] = match tag {
            Some(ValueTag::TokenAmount { .. }) => &AMOUNT_FIELDS,
            Some(ValueTag::Timestamp { .. }) => &TIME_FIELDS,
            Some(ValueTag::Duration { .. }) => &[],
            Some(ValueTag::Account | ValueTag::Subaccount) | None => &[],
        };
        let shown_as_is = matches!(tag, None | Some(ValueTag::Account | ValueTag::Subaccount));
        // The standards' times are nanoseconds: a time in other units would be shown as one
        // time and read by the ledger as another.
        if let Some(ValueTag::Timestamp { unit }) = tag {
            if *unit != TimeUnit::Nanoseconds {
                return Some(format!(
                    "'{field}' is a time in {unit:?}: the standards of the methods that move funds give their times in nanoseconds"
                ));
            }
        }
        if !shown_as_is && !allowed.contains(&field) {
            let kind = tag.map_or("", |t| t.kind());
            let place = if field.is_empty() {
                "an argument"
            } else {
                field
            };
            return Some(format!(
                "'{place}' is tagged {kind}: in a method that moves funds a value is shown as a token amount only at {} and as a time only at {} (the preview shows a position as its tag says)",
                AMOUNT_FIELDS.join(", "),
                TIME_FIELDS.join(", ")
            ));
        }
        // The position's own tag is checked on every visit (a position may tag a named type
        // another does not); below it, a named type met again at the same field is the same
        // walk, so it is walked once per type and field (a recursive or diamond-shaped form).
        if let Ty::Ref(name) = &node.ty {
            if !seen.insert((name.as_str(), field)) {
                return None;
            }
        }
        match resolve(form, node)? {
            Ty::Opt(n) | Ty::Vec(n) => walk(form, n, field, seen, depth + 1),
            // A field named by a number has no standard's place (`#`: refused if tagged).
            Ty::Record(fs) | Ty::Variant(fs) => fs.iter().find_map(|f| {
                walk(
                    form,
                    &f.node,
                    f.label.name().unwrap_or("#"),
                    seen,
                    depth + 1,
                )
            }),
            _ => None,
        }
    }
    let mut seen = Seen::new();
    args.iter().find_map(|a| walk(form, a, "", &mut seen, 0))
}

/// The reply cases the engine's exactly-once rules read, by the names the standards give them
/// (the ICP ledger's `Tx` ones among them), and the fields it reads inside them.
const REPLY_NAMES: [&str; 11] = [
    "Ok",
    "Err",
    "Duplicate",
    "TxDuplicate",
    "TemporarilyUnavailable",
    "TooOld",
    "TxTooOld",
    "CreatedInFuture",
    "TxCreatedInFuture",
    "ledger_time",
    "duplicate_of",
];

const REPLY_HASHES: [u32; 11] = {
    let mut out = [0; 11];
    let mut i = 0;
    while i < 11 {
        out[i] = crate::wire::field_hash(REPLY_NAMES[i]);
        i += 1;
    }
    out
};

/// Why a method that moves funds classes its replies otherwise than its standard says, if it
/// does. Which reply means "executed" is what exactly once stands on, so it is the engine's
/// to say, whatever a form's outcome table or result names say: success only at `Ok` (and
/// `Ok` is one), already done only at a duplicate, a new stamp only when the ledger says the
/// stamp is too old or in the future, the same bytes again only when it is temporarily
/// unavailable, and nothing else by default. A form that mapped `Ok` to `retry_new` sent one
/// intent twice; one that named a case so that its hash was `Ok`'s settled an executed
/// transfer as failed. (`send_dfx` answers a bare block index and traps on an error.)
fn funds_outcome(form: &Form, name: &str, method: &Method) -> Option<String> {
    use OutcomeClass::*;
    let refuse = |why: String| {
        Some(format!(
            "{name} moves funds: {why} (the engine classes the replies of a method that moves funds as its standard does)"
        ))
    };
    if let Some(label) = reply_name_collision(form, &method.results) {
        return refuse(format!(
            "its result names a case or field '{label}', whose hash is a standard reply name's"
        ));
    }
    let Some(tag) = &method.outcome else {
        let block_index = matches!(
            method.results.as_slice(),
            [n] if matches!(resolve(form, n), Some(Ty::Prim(Prim::Nat64)))
        );
        return if name == "send_dfx" && block_index {
            None
        } else {
            refuse("it has no outcome keys, so every reply would be a success".into())
        };
    };
    if let Some(d) = tag.default.filter(|d| !matches!(d, Fail | FixInput)) {
        return refuse(format!(
            "its default class is {}; only fail or fix_input may be",
            d.as_str()
        ));
    }
    let mut ok = false;
    for (key, class) in &tag.keys {
        let path: Vec<&str> = key.labels.iter().map(String::as_str).collect();
        let allowed = match class {
            Success => matches!(path[..], ["Ok"]),
            AlreadyDone => matches!(path[..], ["Err", "Duplicate" | "TxDuplicate"]),
            RetryNew => matches!(
                path[..],
                [
                    "Err",
                    "TooOld" | "CreatedInFuture" | "TxTooOld" | "TxCreatedInFuture"
                ]
            ),
            RetrySame => matches!(path[..], ["Err", "TemporarilyUnavailable"]),
            // Nothing below `Ok` or a duplicate: the deepest key would win over theirs.
            FixInput | Fail => {
                path.first() != Some(&"Ok")
                    && !matches!(path[..], ["Err", "Duplicate" | "TxDuplicate", _, ..])
            }
        };
        if !allowed {
            return refuse(format!(
                "its outcome key '{}' is {}, which its standard's reply there is not",
                path.join("."),
                class.as_str()
            ));
        }
        ok |= *class == Success;
    }
    if !ok {
        return refuse("its outcome keys do not class Ok as a success".into());
    }
    // The ledger's duplicate is the reply that says an earlier send of these bytes executed:
    // it must be told apart (its `Err` a variant that declares it, nothing on the way read
    // as null) and classed already done, or a resend after an unknown outcome would answer
    // an executed intent as failed.
    let err = match method.results.first().map(|r| resolve(form, r)) {
        Some(Some(Ty::Variant(cases))) => cases.iter().find(|c| c.label.name() == Some("Err")),
        // Candid reads a reply of another type in an `opt` as null: the ledger's `Err` (its
        // duplicate among them) would reach the default.
        Some(Some(Ty::Opt(_))) => return refuse("its result is an opt".into()),
        _ => None,
    };
    if let Some(err) = err {
        let Some(Ty::Variant(cases)) = resolve(form, &err.node) else {
            return refuse("its result's Err is not a variant of the ledger's errors".into());
        };
        let dups: Vec<&str> = cases
            .iter()
            .filter_map(|c| c.label.name())
            .filter(|n| matches!(*n, "Duplicate" | "TxDuplicate"))
            .collect();
        if dups.is_empty() {
            return refuse("its result's Err declares no Duplicate case".into());
        }
        let class_at = |path: &[&str]| {
            tag.keys
                .iter()
                .find(|(k, _)| k.labels.iter().map(String::as_str).eq(path.iter().copied()))
                .map(|(_, c)| *c)
        };
        for dup in dups {
            let dup_class = class_at(&["Err", dup])
                .or_else(|| class_at(&["Err"]))
                .or(tag.default);
            if dup_class != Some(AlreadyDone) {
                return refuse(format!(
                    "its outcome keys do not class Err.{dup} as already_done"
                ));
            }
        }
    }
    None
}

/// A result label (a variant case or record field, at any depth) whose hash is one of
/// [`REPLY_NAMES`]' but whose name is not that name.
fn reply_name_collision(form: &Form, results: &[Node]) -> Option<String> {
    let standard = REPLY_HASHES.iter().zip(REPLY_NAMES);
    let mut seen = std::collections::BTreeSet::new();
    let mut stack: Vec<(&Node, usize)> = results.iter().map(|n| (n, 0)).collect();
    while let Some((node, depth)) = stack.pop() {
        if depth > 32 {
            return Some("(a result nested deeper than 32)".into());
        }
        if let Ty::Ref(name) = &node.ty {
            if !seen.insert(name.as_str()) {
                continue;
            }
        }
        match resolve(form, node) {
            Some(Ty::Opt(n) | Ty::Vec(n)) => stack.push((n, depth + 1)),
            Some(Ty::Record(fs) | Ty::Variant(fs)) => {
                for f in fs {
                    let hash = f.label.hash();
                    let clash = standard
                        .clone()
                        .any(|(h, n)| *h == hash && f.label.name() != Some(n));
                    if clash {
                        return Some(f.label.to_string());
                    }
                    stack.push((&f.node, depth + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// The host's positions of an argument plan, each with the name of its place.
fn arg_slots(a: &ArgPlan, f: &mut impl FnMut(&Slot, &str)) {
    match a {
        ArgPlan::Fields(slots) => {
            for s in slots {
                f(s, s.label.as_ref().and_then(|l| l.name()).unwrap_or("#"));
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
