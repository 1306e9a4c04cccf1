//! Property tests: amount, principal and account text round-trip exactly; the form parser and
//! the input reader never panic on arbitrary bytes or JSON.

mod common;
use candid::Principal;
use common::*;
use num_bigint::BigUint;
use proptest::prelude::*;
use serde_json::Value;
use tool_host_core::form::parse_form;
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;
use tool_host_core::text::account::{format_account, parse_account, read_account, Account};
use tool_host_core::text::amount::{format_amount, parse_amount};
use tool_host_core::text::principal::{parse_principal, parse_principal_canonical};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn amount_text_round_trips(decimals in 0u8..=18, units in any::<u128>()) {
        let n = BigUint::from(units);
        let text = format_amount(&n, decimals);
        prop_assert_eq!(parse_amount(&text, decimals, Some("TKA")).unwrap(), n.clone());
        let with_symbol = format!("{text} TKA");
        prop_assert_eq!(parse_amount(&with_symbol, decimals, Some("TKA")).unwrap(), n);
    }

    #[test]
    fn amounts_over_128_bits_round_trip(decimals in 0u8..=38, high in any::<u64>(), low in any::<u128>()) {
        let n = (BigUint::from(high) << 128u32) + BigUint::from(low);
        let text = format_amount(&n, decimals);
        prop_assert_eq!(parse_amount(&text, decimals, None).unwrap(), n);
    }

    #[test]
    fn hex_text_is_the_hex_crates(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        prop_assert_eq!(tool_host_core::text::bytes::to_hex(&bytes), hex::encode(&bytes));
    }

    #[test]
    fn amount_values_round_trip(decimals in 0u8..=18, int in 0u64..1_000_000_000, frac in proptest::collection::vec(0u8..10, 0..=18)) {
        let frac: String = frac.iter().take(decimals as usize).map(|d| char::from(b'0' + d)).collect();
        let text = if frac.is_empty() { int.to_string() } else { format!("{int}.{frac}") };
        let n = parse_amount(&text, decimals, None).unwrap();
        let back = format_amount(&n, decimals);
        // Canonical text drops trailing zeros only.
        let want = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
        prop_assert_eq!(back, want);
    }

    #[test]
    fn principal_text_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..=29)) {
        let p = Principal::from_slice(&bytes);
        let text = p.to_text();
        prop_assert_eq!(parse_principal(&text).unwrap(), p);
        prop_assert_eq!(parse_principal(&text.to_uppercase()).unwrap(), p);
        // The canonical text handed back without a second encoding is the principal's own,
        // however the text was spelled (its identity and memo depend on it).
        // (Spaces count toward the longest text accepted: only with room for them.)
        let mut spellings = vec![text.clone(), text.to_uppercase()];
        if text.len() <= 60 {
            spellings.push(format!("  {text}\t"));
        }
        for spelled in spellings {
            prop_assert_eq!(parse_principal_canonical(&spelled).unwrap(), (p, text.clone()));
        }
    }

    #[test]
    fn account_text_round_trips(owner in proptest::collection::vec(any::<u8>(), 0..=29), sub in proptest::option::of(any::<[u8; 32]>())) {
        let a = Account { owner: Principal::from_slice(&owner), subaccount: sub };
        let text = format_account(&a);
        let back = parse_account(&text).unwrap();
        prop_assert_eq!(back.owner, a.owner);
        prop_assert_eq!(back.effective_subaccount(), a.effective_subaccount());
        prop_assert_eq!(format_account(&back), text.clone());
        // The canonical text `read_account` hands back is `format_account`'s, however spelled.
        let mut spellings = vec![text.clone(), text.to_uppercase()];
        if text.len() <= 60 {
            spellings.push(format!(" {text} "));
        }
        for spelled in spellings {
            let (read, canon) = read_account(&spelled).unwrap();
            prop_assert_eq!(canon, format_account(&read));
            prop_assert_eq!(format_account(&read), text.clone());
        }
    }

    #[test]
    fn the_form_parser_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = parse_form(&bytes);
    }

    #[test]
    fn the_form_parser_never_panics_on_json(v in json_value(4)) {
        let _ = tool_host_core::form::form_from_json(&v);
        let wrapped = serde_json::json!({ "format": "candid-profile-resolved", "format_version": 0, "methods": { "m": v.clone() }, "types": { "T": v } });
        if let Ok(f) = tool_host_core::form::form_from_json(&wrapped) {
            let fr = tool_host_core::plan::FormRef { id: "t".into(), form: std::sync::Arc::new(f) };
            let _ = build_tool_plans(&[fr]);
        }
    }

    #[test]
    fn the_input_reader_never_panics_on_json(v in json_value(4), name in "[a-z_]{1,12}") {
        let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
        for plan in plans.plans.values() {
            let _ = read(plan, v.clone());
            let mut obj = serde_json::Map::new();
            obj.insert(name.clone(), v.clone());
            obj.insert("canister_id".into(), Value::String(LEDGER.into()));
            for p in &plan.params {
                obj.insert(p.name.clone(), v.clone());
            }
            let _ = read(plan, Value::Object(obj));
        }
    }
}

/// Arbitrary JSON, strings biased towards what readers parse.
fn json_value(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null)),
        "[0-9. A-Za-z_-]{0,24}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
        Just(Value::String(OWNER.into())),
        Just(Value::String("1.5 TKA".into())),
    ];
    leaf.prop_recursive(depth, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{1,10}", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Replaces the value at the `pick`-th place of a JSON tree (pre-order).
fn replace_nth(v: &mut Value, pick: &mut usize, with: &Value) -> bool {
    if *pick == 0 {
        *v = with.clone();
        return true;
    }
    *pick -= 1;
    match v {
        Value::Array(items) => items.iter_mut().any(|i| replace_nth(i, pick, with)),
        Value::Object(m) => m.values_mut().any(|i| replace_nth(i, pick, with)),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Structure-aware: the ICRC packs with one place replaced by arbitrary JSON are either
    /// refused with problems or give plans that read arbitrary inputs, never a panic.
    #[test]
    fn mutated_packs_never_panic(pick in 0usize..2000, with in json_value(3), input in json_value(3)) {
        for (_, text) in tool_host_core::packs::PACKS {
            let mut v: Value = serde_json::from_str(text).unwrap();
            let mut n = pick;
            replace_nth(&mut v, &mut n, &with);
            match tool_host_core::form::form_from_json(&v) {
                Err(problems) => prop_assert!(!problems.is_empty()),
                Ok(f) => {
                    let fr = tool_host_core::plan::FormRef { id: "t".into(), form: std::sync::Arc::new(f) };
                    let plans = build_tool_plans(&[fr]);
                    let _ = tool_host_core::schema::tool_definitions(&plans, &[ledger()]);
                    for plan in plans.plans.values() {
                        let _ = read(plan, input.clone());
                        let _ = read(plan, with_ledger(serde_json::json!({ "to": OWNER, "amount": "1", "account": OWNER })));
                    }
                }
            }
        }
    }
}

/// A byte of JSON whitespace.
fn ws_byte() -> impl Strategy<Value = u8> {
    prop_oneof![Just(b' '), Just(b'\n'), Just(b'\t'), Just(b'\r')]
}

/// A run of JSON whitespace: all spaces, spaces beside other whitespace, or mixed; up to 160
/// bytes (two 64-byte blocks and a tail).
fn padding() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0usize..140).prop_map(|n| vec![b' '; n]),
        // Spaces on one side of other whitespace: the 64-byte path, then the mixed one.
        (
            0usize..140,
            proptest::collection::vec(ws_byte(), 0..20),
            any::<bool>()
        )
            .prop_map(|(n, mixed, first)| if first {
                let mut v = vec![b' '; n];
                v.extend(mixed);
                v
            } else {
                let mut v = mixed;
                v.extend(vec![b' '; n]);
                v
            }),
        proptest::collection::vec(ws_byte(), 0..140),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]
    /// The word-at-a-time trim of JSON whitespace is the plain one, whatever the bytes: runs of
    /// whitespace around a middle, each run with now and then one near neighbour of a
    /// whitespace byte in it (where a carry or a wrong byte test would show).
    #[test]
    fn json_whitespace_trim_is_the_plain_trim(
        lead in padding(),
        middle in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..12),
            ".{0,8}".prop_map(String::into_bytes),
        ],
        trail in padding(),
        odd in prop_oneof![
            Just(0x0bu8), Just(0x0cu8), Just(0x1fu8), Just(0x21u8), Just(0xa0u8), Just(0x8au8),
            Just(0xa9u8), Just(0x8du8), Just(0x00u8), Just(0xffu8), Just(0x2au8), Just(0x0eu8),
        ],
        at in proptest::option::of((any::<bool>(), 0usize..140)),
    ) {
        let mut bytes = lead.clone();
        bytes.extend(&middle);
        bytes.extend(&trail);
        // One near neighbour put into a run (or nowhere).
        if let Some((in_lead, i)) = at {
            let run = if in_lead { lead.len() } else { trail.len() };
            if run > 0 {
                let pos = if in_lead { i % run } else { bytes.len() - 1 - i % run };
                bytes[pos] = odd;
            }
        }
        let ws = |b: &u8| matches!(b, b' ' | b'\n' | b'\t' | b'\r');
        let start = bytes.iter().position(|b| !ws(b)).unwrap_or(bytes.len());
        let end = bytes.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
        prop_assert_eq!(tool_host_core::read::json_ws::inner(&bytes), (start, end));
        // The padded text read as text is exactly the bytes as UTF-8 (or nothing).
        prop_assert_eq!(
            tool_host_core::read::json_ws::text(&bytes),
            String::from_utf8(bytes.clone()).ok()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    /// JSON text with runs of spaces put anywhere (between tokens, inside strings, numbers and
    /// literals, after a backslash, after a line feed) reads as serde_json reads it: the same
    /// value, or the same error for the text as given.
    #[test]
    fn json_with_runs_of_spaces_reads_as_serde_json_reads_it(
        v in prop_oneof![
            json_value(3),
            "[\"\\\\ ab]{0,12}".prop_map(Value::String),
        ],
        runs in proptest::collection::vec(
            (any::<proptest::sample::Index>(), 1usize..200, any::<bool>()),
            0..6,
        ),
    ) {
        let mut text = serde_json::to_string(&v).unwrap();
        for (at, n, line) in runs {
            let mut i = at.index(text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            let run = if line { format!("\n{}", " ".repeat(n)) } else { " ".repeat(n) };
            text.insert_str(i, &run);
        }
        let ours = tool_host_core::read::json_value(&text).map_err(|e| e.to_string());
        let theirs = serde_json::from_str::<Value>(&text).map_err(|e| e.to_string());
        prop_assert_eq!(ours, theirs);
        // And read at the canister's entry, the text is the bytes as given.
        prop_assert_eq!(tool_host_core::read::json_ws::text(text.as_bytes()), Some(text.clone()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]
    /// Text of JSON's punctuation, quotes, backslashes and a few letters, with runs of spaces
    /// among them (valid JSON now and then, mostly not: unterminated strings, stray quotes and
    /// escapes, where the scan of strings and the parser could part): read as serde_json reads
    /// it, value or error.
    #[test]
    fn punctuation_with_runs_of_spaces_reads_as_serde_json_reads_it(
        pieces in proptest::collection::vec(
            prop_oneof![
                "[\"\\\\ 1a\\[\\]{},:nul]{0,6}",
                (56usize..140).prop_map(|n| " ".repeat(n)),
            ],
            0..10,
        ),
    ) {
        let text: String = pieces.concat();
        let ours = tool_host_core::read::json_value(&text).map_err(|e| e.to_string());
        let theirs = serde_json::from_str::<Value>(&text).map_err(|e| e.to_string());
        prop_assert_eq!(ours, theirs);
    }
}
