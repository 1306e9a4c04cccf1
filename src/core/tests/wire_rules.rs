//! The wire fast path reads every reply and argument of the ICRC packs exactly as `candid`
//! does: random values of each method's types, encoded by `candid`, decode to the same
//! `IDLArgs` both ways; mutated bytes either decode the same both ways or go to `candid`.

use candid::types::value::{IDLField, IDLValue, VariantValue};
use candid::types::{Type, TypeEnv, TypeInner};
use candid::{IDLArgs, Int, Nat, Principal};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::json;
use tool_host_core::candid_types::MethodTypes;
use tool_host_core::codec::{encode_args_with, header_of_types};
use tool_host_core::packs::pack;
use tool_host_core::wire::{decode_with_types, encode_with_header, header_of};

mod common;

/// Every method's argument and result types in the two packs.
fn method_types() -> Vec<(String, MethodTypes)> {
    let mut out = vec![];
    for name in ["icrc1", "icrc2"] {
        let form = pack(name).expect("pack");
        for (m, def) in &form.form.methods {
            out.push((m.clone(), MethodTypes::of(&form.form, def)));
        }
    }
    out
}

/// SplitMix64: enough randomness for values, reproducible from a seed.
struct Rng(u64);

impl Rng {
    fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.u64() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.u64() % 100 < percent
    }
    fn text(&mut self) -> String {
        let n = self.below(12);
        (0..n)
            .map(|_| char::from_u32((self.u64() % 0x11_0000) as u32).unwrap_or('x'))
            .collect()
    }
}

/// A random value of type `t`.
fn any_value(env: &TypeEnv, t: &Type, rng: &mut Rng, depth: usize) -> IDLValue {
    let t = match t.as_ref() {
        TypeInner::Var(id) => env.rec_find_type(id).expect("closed type").clone(),
        _ => t.clone(),
    };
    match t.as_ref() {
        TypeInner::Null => IDLValue::Null,
        TypeInner::Bool => IDLValue::Bool(rng.chance(50)),
        TypeInner::Nat => IDLValue::Nat(match rng.below(3) {
            0 => Nat::from(rng.u64() as u8),
            1 => Nat::from(rng.u64()),
            _ => Nat::from(u128::from(rng.u64()) << 64 | u128::from(rng.u64())),
        }),
        TypeInner::Int => IDLValue::Int(Int::from(rng.u64() as i64)),
        TypeInner::Nat8 => IDLValue::Nat8(rng.u64() as u8),
        TypeInner::Nat16 => IDLValue::Nat16(rng.u64() as u16),
        TypeInner::Nat32 => IDLValue::Nat32(rng.u64() as u32),
        TypeInner::Nat64 => IDLValue::Nat64(rng.u64()),
        TypeInner::Int8 => IDLValue::Int8(rng.u64() as i8),
        TypeInner::Int16 => IDLValue::Int16(rng.u64() as i16),
        TypeInner::Int32 => IDLValue::Int32(rng.u64() as i32),
        TypeInner::Int64 => IDLValue::Int64(rng.u64() as i64),
        TypeInner::Float32 => IDLValue::Float32(rng.u64() as u32 as f32),
        TypeInner::Float64 => IDLValue::Float64(rng.u64() as f64),
        TypeInner::Text => IDLValue::Text(rng.text()),
        TypeInner::Reserved => IDLValue::Reserved,
        TypeInner::Principal => {
            let n = rng.below(30);
            let b: Vec<u8> = (0..n).map(|_| rng.u64() as u8).collect();
            IDLValue::Principal(Principal::from_slice(&b))
        }
        TypeInner::Opt(inner) => {
            if depth > 4 || rng.chance(40) {
                IDLValue::None
            } else {
                IDLValue::Opt(Box::new(any_value(env, inner, rng, depth + 1)))
            }
        }
        TypeInner::Vec(inner) => {
            let n = if depth > 4 { 0 } else { rng.below(4) };
            let items: Vec<IDLValue> = (0..n)
                .map(|_| any_value(env, inner, rng, depth + 1))
                .collect();
            let bytes = matches!(
                env.trace_type(inner).map(|t| t.as_ref().clone()),
                Ok(TypeInner::Nat8)
            );
            if bytes {
                IDLValue::Blob(
                    items
                        .iter()
                        .map(|v| match v {
                            IDLValue::Nat8(b) => *b,
                            _ => 0,
                        })
                        .collect(),
                )
            } else {
                IDLValue::Vec(items)
            }
        }
        TypeInner::Record(fields) => IDLValue::Record(
            fields
                .iter()
                .map(|f| IDLField {
                    id: (*f.id).clone(),
                    val: any_value(env, &f.ty, rng, depth + 1),
                })
                .collect(),
        ),
        TypeInner::Variant(cases) => {
            // Deep recursive types (ICRC-3 values) end in their first leaf case.
            let j = if depth > 4 {
                cases
                    .iter()
                    .position(|c| {
                        !matches!(
                            env.trace_type(&c.ty).map(|t| t.as_ref().clone()),
                            Ok(TypeInner::Vec(_) | TypeInner::Record(_) | TypeInner::Variant(_))
                        )
                    })
                    .unwrap_or(0)
            } else {
                rng.below(cases.len())
            };
            let f = &cases[j];
            IDLValue::Variant(VariantValue(
                Box::new(IDLField {
                    id: (*f.id).clone(),
                    val: any_value(env, &f.ty, rng, depth + 1),
                }),
                j as u64,
            ))
        }
        other => panic!("no generator for {other:?}"),
    }
}

/// A random value for each type of `list` (a method's arguments or results).
fn any_args(mt: &MethodTypes, list: &[Type], rng: &mut Rng) -> IDLArgs {
    IDLArgs {
        args: list.iter().map(|t| any_value(&mt.env, t, rng, 0)).collect(),
    }
}

fn candid_decode(bytes: &[u8], env: &TypeEnv, types: &[Type]) -> Option<IDLArgs> {
    IDLArgs::from_bytes_with_types(bytes, env, types).ok()
}

#[test]
fn every_pack_method_reads_as_candid_reads_it() {
    let mut rng = Rng(7);
    let mut fast = 0;
    let mut total = 0;
    for (method, mt) in method_types() {
        for list in [&mt.args, &mt.results] {
            for _ in 0..200 {
                let args = any_args(&mt, list, &mut rng);
                let bytes = args
                    .to_bytes_with_types(&mt.env, list)
                    .unwrap_or_else(|e| panic!("{method}: {e}"));
                let want = candid_decode(&bytes, &mt.env, list).expect("candid reads its own");
                total += 1;
                if let Some(got) = decode_with_types(&bytes, &mt.env, list) {
                    fast += 1;
                    assert_eq!(got, want, "{method}: {args}");
                }
            }
        }
    }
    // Values over 64 bits (`nat` up to u128) go to candid; everything else is read fast.
    assert!(
        fast * 10 >= total * 6,
        "only {fast} of {total} on the fast path"
    );
}

#[test]
fn every_pack_method_encodes_as_candid_encodes_it() {
    let mut rng = Rng(11);
    for (method, mt) in method_types() {
        for list in [&mt.args, &mt.results] {
            let mut header: Option<(Vec<u8>, _)> = None;
            for _ in 0..200 {
                let args = any_args(&mt, list, &mut rng);
                let want = args.to_bytes_with_types(&mt.env, list).unwrap();
                match &header {
                    None => {
                        let (h, table) = header_of(&want).unwrap();
                        header = Some((h.to_vec(), table));
                    }
                    Some((h, table)) => {
                        let got = encode_with_header(h, table, &args)
                            .unwrap_or_else(|| panic!("{method}: not encoded: {args}"));
                        assert_eq!(got, want, "{method}: {args}");
                    }
                }
            }
        }
    }
}

/// A method of every kind of type a form spells: fields out of their hash order, variants,
/// nested options and vectors, a type named twice (written once in the table), every primitive.
fn varied_method_types() -> Vec<(String, MethodTypes)> {
    let account = json!({ "type": "record", "fields": [
        { "name": "owner", "type": "principal" },
        { "name": "subaccount", "type": "opt", "inner": { "type": "blob" } }
    ] });
    let prims = [
        "null",
        "bool",
        "nat",
        "int",
        "nat8",
        "nat16",
        "nat32",
        "nat64",
        "int8",
        "int16",
        "int32",
        "int64",
        "float32",
        "float64",
        "text",
        "reserved",
        "principal",
    ];
    let mut fields: Vec<_> = prims
        .iter()
        .map(|p| json!({ "name": format!("f_{p}"), "type": p }))
        .collect();
    fields.push(json!({ "name": "zz", "type": "vec", "inner": { "type": "opt", "inner": { "type": "Account" } } }));
    fields.push(json!({ "name": "aa", "type": "Account" }));
    fields.push(json!({ "name": "kind", "type": "variant", "cases": [
        { "name": "Later", "type": "nat64" },
        { "name": "Now", "type": "null" },
        { "name": "To", "type": "Account" }
    ] }));
    let m = json!({ "mode": "update", "args": [
        { "type": "record", "fields": fields },
        { "type": "blob" },
        { "type": "Account" }
    ], "results": [{ "type": "variant", "cases": [
        { "name": "Ok", "type": "nat" },
        { "name": "Err", "type": "text" }
    ] }] });
    // A recursive type: kept in the environment, so left to candid.
    let list = json!({ "type": "opt", "inner": { "type": "record", "fields": [
        { "name": "head", "type": "Account" },
        { "name": "tail", "type": "List" }
    ] } });
    let r =
        json!({ "mode": "query", "args": [{ "type": "List" }], "results": [{ "type": "List" }] });
    let form = common::form(
        json!({ "m": m, "r": r }),
        json!({ "Account": account, "List": list }),
    );
    form.form
        .methods
        .iter()
        .map(|(name, def)| (name.clone(), MethodTypes::of(&form.form, def)))
        .collect()
}

/// The header made from the types alone is the one `candid` writes with the values, byte for
/// byte, so the first encoding after an upgrade writes what every later one does; types that
/// name others (the ICRC-3 value) have none and are left to `candid`'s first encoding.
#[test]
fn a_header_from_the_types_alone_is_the_one_candid_writes() {
    let mut rng = Rng(13);
    let (mut made, mut left) = (0, 0);
    let mut all = method_types();
    all.extend(varied_method_types());
    for (method, mt) in all {
        for list in [&mt.args, &mt.results] {
            let bytes = any_args(&mt, list, &mut rng)
                .to_bytes_with_types(&mt.env, list)
                .unwrap_or_else(|e| panic!("{method}: {e}"));
            let (want, want_table) = header_of(&bytes).unwrap();
            match header_of_types(list) {
                Some((got, table)) => {
                    made += 1;
                    assert_eq!(got, want, "{method}");
                    assert_eq!(table, want_table, "{method}");
                }
                None => {
                    left += 1;
                    assert!(!mt.env.0.is_empty(), "{method}: no header, no named types");
                }
            }
        }
    }
    assert!(
        made >= 20 && left >= 1,
        "{made} made, {left} left to candid"
    );
}

/// A method's first encoding (its header not yet kept) writes what `candid` writes, and keeps
/// the header that every later one writes with.
#[test]
fn a_first_encoding_writes_what_candid_writes() {
    let mut rng = Rng(17);
    let plans =
        tool_host_core::plan::build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    assert!(plans.plans.len() >= 3);
    for plan in plans.plans.values() {
        for _ in 0..20 {
            let mt = tool_host_core::codec::method_types(plan);
            let args = any_args(&mt, &mt.args, &mut rng);
            let want = args.to_bytes_with_types(&mt.env, &mt.args).unwrap();
            assert_eq!(
                encode_args_with(plan, &mt, &args).unwrap(),
                want,
                "{}",
                plan.name
            );
            let (header, _) = header_of(&want).unwrap();
            let kept = &mt.args_header.get().expect("kept").0;
            assert_eq!(kept.as_slice(), header, "{}", plan.name);
        }
    }
}

/// Kinds of type a form's values rarely take, by hand: a `func` (read by the wire) and
/// `reserved` have a header from the types, `candid`'s; a `service` (not read by the wire) has
/// none, and its encoding is `candid`'s, tried once.
#[test]
fn functions_reserved_and_services_have_candids_header_or_none() {
    use candid::types::internal::{FuncMode, Function};
    let func: Type = TypeInner::Func(Function {
        modes: vec![FuncMode::Query],
        args: vec![TypeInner::Text.into()],
        rets: vec![TypeInner::Nat.into()],
    })
    .into();
    let list = vec![func, TypeInner::Reserved.into(), TypeInner::Empty.into()];
    let p = Principal::from_slice(&[7; 10]);
    let values = IDLArgs {
        args: vec![IDLValue::Func(p, "m".into()), IDLValue::Reserved],
    };
    let bytes = values
        .to_bytes_with_types(&TypeEnv::new(), &list[..2])
        .unwrap();
    let (want, want_table) = header_of(&bytes).unwrap();
    let (got, table) = header_of_types(&list[..2]).expect("a header");
    assert_eq!((got.as_slice(), &table), (want, &want_table));
    assert!(header_of_types(&list).is_some(), "empty has a header too");

    let service: Type = TypeInner::Service(vec![]).into();
    assert_eq!(header_of_types(std::slice::from_ref(&service)), None);
    let plans = tool_host_core::plan::build_tool_plans(&[pack("icrc1").unwrap()]);
    let plan = plans.plans.values().next().unwrap();
    let mt = MethodTypes {
        env: TypeEnv::new(),
        args: vec![service.clone()],
        results: vec![],
        args_header: Default::default(),
        args_header_tried: Default::default(),
    };
    let values = IDLArgs {
        args: vec![IDLValue::Service(p)],
    };
    let want = values
        .to_bytes_with_types(&TypeEnv::new(), &mt.args)
        .unwrap();
    for _ in 0..2 {
        assert_eq!(encode_args_with(plan, &mt, &values).unwrap(), want);
        assert!(mt.args_header_tried.get() && mt.args_header.get().is_none());
    }
}

/// The header is made from the types, not kept from a first encoding: it is there after a
/// first encoding `candid` refuses (values not of their types), for every pack method that
/// takes arguments; a method whose types name others has none until a first encoding `candid`
/// writes.
#[test]
fn the_header_is_made_before_any_encoding() {
    let plans =
        tool_host_core::plan::build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let wrong = |n: usize| IDLArgs {
        args: vec![IDLValue::Bool(true); n],
    };
    let mut taking = 0;
    for plan in plans.plans.values() {
        let mt = tool_host_core::codec::method_types(plan);
        if mt.args.is_empty() {
            continue;
        }
        taking += 1;
        assert!(encode_args_with(plan, &mt, &wrong(mt.args.len())).is_err());
        assert!(mt.args_header.get().is_some(), "{}: no header", plan.name);
    }
    assert!(taking >= 3, "{taking} methods with arguments");
    let (_, recursive) = varied_method_types()
        .into_iter()
        .find(|(m, _)| m == "r")
        .unwrap();
    let plan = plans.plans.values().next().unwrap();
    assert!(encode_args_with(plan, &recursive, &wrong(1)).is_err());
    assert!(recursive.args_header.get().is_none());
    let args = any_args(&recursive, &recursive.args, &mut Rng(3));
    let want = args
        .to_bytes_with_types(&recursive.env, &recursive.args)
        .unwrap();
    assert_eq!(encode_args_with(plan, &recursive, &args).unwrap(), want);
    let (header, _) = header_of(&want).unwrap();
    assert_eq!(recursive.args_header.get().unwrap().0.as_slice(), header);
}

#[test]
fn a_value_without_its_type_goes_to_candid() {
    let (_, mt) = method_types()
        .into_iter()
        .find(|(m, _)| m == "icrc1_balance_of")
        .unwrap();
    let args = any_args(&mt, &mt.args, &mut Rng(3));
    let bytes = args.to_bytes_with_types(&mt.env, &mt.args).unwrap();
    let (header, table) = header_of(&bytes).unwrap();
    for wrong in [
        IDLArgs { args: vec![] },
        IDLArgs {
            args: vec![IDLValue::Text("x".into())],
        },
        IDLArgs {
            args: vec![IDLValue::Record(vec![])],
        },
    ] {
        assert_eq!(encode_with_header(header, &table, &wrong), None);
    }
}

proptest! {
    #![proptest_config(Config::with_cases(std::env::var("WIRE_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(2000)))]
    #[test]
    fn mutated_replies_read_as_candid_reads_them_or_go_to_it(
        which in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let all = method_types();
        let (method, mt) = &all[which.index(all.len())];
        let mut rng = Rng(seed);
        let args = any_args(mt, &mt.results, &mut rng);
        let mut bytes = args.to_bytes_with_types(&mt.env, &mt.results).unwrap();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        if let Some(got) = decode_with_types(&bytes, &mt.env, &mt.results) {
            prop_assert_eq!(Some(got), candid_decode(&bytes, &mt.env, &mt.results), "{}", method);
        }
    }
}

#[test]
fn other_types_go_to_candid() {
    let (_, mt) = method_types()
        .into_iter()
        .find(|(m, _)| m == "icrc1_balance_of")
        .unwrap();
    // `icrc1_balance_of` answers a `nat`; a `nat64` on the wire is not the expected type.
    let bytes = candid::encode_one(5u64).unwrap();
    assert_eq!(decode_with_types(&bytes, &mt.env, &mt.results), None);
    // A `nat` over 64 bits.
    let big = candid::encode_one(Nat::from(u128::MAX)).unwrap();
    assert_eq!(decode_with_types(&big, &mt.env, &mt.results), None);
    assert!(candid_decode(&big, &mt.env, &mt.results).is_some());
    // Fine.
    let ok = candid::encode_one(Nat::from(7u8)).unwrap();
    assert_eq!(
        decode_with_types(&ok, &mt.env, &mt.results),
        candid_decode(&ok, &mt.env, &mt.results)
    );
}

/// Found by the proptest above (CI, stop 22): a `blob` whose wire element type was mutated to
/// `empty`. The empty `vec empty` is never visited element by element, so the fast path read it
/// as `opt vec {}`; `candid` refuses `vec empty` as a `blob` and its `opt` rule reads `null`.
#[test]
fn an_unvisited_wire_type_that_is_not_the_expected_one_goes_to_candid() {
    let (_, mt) = method_types()
        .into_iter()
        .find(|(m, _)| m == "icrc1_minting_account")
        .unwrap();
    let bytes: &[u8] = &[
        0x44, 0x49, 0x44, 0x4c, 0x04, 0x6e, 0x01, 0x6c, 0x02, 0xb3, 0xb0, 0xda, 0xc3, 0x03, 0x68,
        0xad, 0x86, 0xca, 0x83, 0x05, 0x02, 0x6e, 0x03, 0x6d, 0x6f, 0x01, 0x00, 0x01, 0x01, 0x0b,
        0x7c, 0x1a, 0xa4, 0x13, 0x0c, 0xbb, 0x46, 0x38, 0xf7, 0x3f, 0x0c, 0x01, 0x00,
    ];
    let want = candid_decode(bytes, &mt.env, &mt.results).expect("candid reads it");
    assert!(want.to_string().contains("subaccount = null"), "{want}");
    assert_eq!(decode_with_types(bytes, &mt.env, &mt.results), None);
    // The same message with `vec nat8` on the wire is read fast, as `candid` reads it.
    let mut fine = bytes.to_vec();
    fine[24] = 0x7b;
    let got = decode_with_types(&fine, &mt.env, &mt.results).expect("fast path");
    assert_eq!(Some(got), candid_decode(&fine, &mt.env, &mt.results));
}

/// `candid` reads a length or a variant's index in at most 9 LEB128 bytes; a `nat` value may
/// take 10. The fast path declines a tenth byte in a length and reads it in a `nat`.
#[test]
fn a_ten_byte_length_goes_to_candid_and_a_ten_byte_nat_does_not() {
    let (_, mt) = method_types()
        .into_iter()
        .find(|(m, _)| m == "icrc1_symbol")
        .unwrap();
    let short = candid::encode_one("TKA").unwrap();
    let n = short.len() - 4;
    let mut long = short[..n].to_vec();
    // 3 in ten bytes: nine with the continuation bit, then the last.
    long.extend_from_slice(&[0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
    long.extend_from_slice(b"TKA");
    assert!(candid_decode(&long, &mt.env, &mt.results).is_none());
    assert_eq!(decode_with_types(&long, &mt.env, &mt.results), None);
    // Nine bytes: both read it.
    let mut nine = short[..n].to_vec();
    nine.extend_from_slice(&[0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
    nine.extend_from_slice(b"TKA");
    let got = decode_with_types(&nine, &mt.env, &mt.results).expect("fast path");
    assert_eq!(Some(got), candid_decode(&nine, &mt.env, &mt.results));

    let (_, mt) = method_types()
        .into_iter()
        .find(|(m, _)| m == "icrc1_balance_of")
        .unwrap();
    let mut nat = candid::encode_one(Nat::from(3u8)).unwrap();
    nat.pop();
    nat.extend_from_slice(&[0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
    let want = candid_decode(&nat, &mt.env, &mt.results).expect("candid reads a long nat");
    assert_eq!(decode_with_types(&nat, &mt.env, &mt.results), Some(want));
}

/// An unsigned LEB128, as a message's lengths, ids and type indexes are written.
fn leb(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// `candid` refuses a header (type table and argument types) past 64 KiB: so does the fast
/// path, however it could read the values.
#[test]
fn a_header_past_64_kib_goes_to_candid() {
    let expected: Vec<Type> = vec![TypeInner::Record(vec![]).into()];
    let env = TypeEnv::new();
    let message = |fields: u32| {
        // One record type of `fields` null fields (ids of 3 LEB128 bytes), then its value
        // (nulls take no bytes).
        let mut b = b"DIDL".to_vec();
        b.push(1);
        b.push(0x6c);
        leb(u64::from(fields), &mut b);
        for k in 0..fields {
            leb(u64::from(20_000 + k), &mut b);
            b.push(0x7f);
        }
        b.push(1);
        b.push(0);
        b
    };
    let small = message(1_000);
    assert!(candid_decode(&small, &env, &expected).is_some());
    assert_eq!(
        decode_with_types(&small, &env, &expected),
        candid_decode(&small, &env, &expected)
    );
    let large = message(17_000);
    assert!(large.len() > 64 * 1024);
    assert!(candid_decode(&large, &env, &expected).is_none());
    assert_eq!(decode_with_types(&large, &env, &expected), None);
}

/// A reply's type table is the target's to write: one that meets the form's named type at
/// many entries (a tree of 8-field records, each field an `opt` of another) is walked up to
/// a bound and then left to `candid` and its quota; the same shape, smaller, is read on the
/// fast path as `candid` reads it.
#[test]
fn a_reply_whose_types_meet_a_name_at_many_entries_goes_to_candid_past_a_bound() {
    let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let fields: Vec<_> = names
        .iter()
        .map(|n| json!({ "name": n, "type": "opt", "inner": { "type": "T" } }))
        .collect();
    let form = common::form(
        json!({ "r": { "mode": "update", "args": [], "results": [{ "type": "T" }] } }),
        json!({ "T": { "type": "record", "fields": fields } }),
    );
    let mt = MethodTypes::of(&form.form, &form.form.methods["r"]);
    let mut ids: Vec<u32> = names.iter().map(|n| candid::idl_hash(n)).collect();
    ids.sort_unstable();
    // Entry 2k is record k, entry 2k + 1 an `opt` of it; record k's fields are `opt`s of
    // records 8k + 1 to 8k + 8 (null past the last), and the value is record 0 with every
    // field absent.
    let message = |records: usize| {
        // A type index is signed LEB128: a byte more where the last has its sign bit.
        let sleb = |n: u64, out: &mut Vec<u8>| {
            leb(n, out);
            if out.last().is_some_and(|b| b & 0x40 != 0) {
                *out.last_mut().unwrap() |= 0x80;
                out.push(0);
            }
        };
        let mut b = b"DIDL".to_vec();
        leb(2 * records as u64, &mut b);
        for k in 0..records {
            b.push(0x6c);
            b.push(8);
            for (j, id) in ids.iter().enumerate() {
                leb(u64::from(*id), &mut b);
                let child = 8 * k + 1 + j;
                if child < records {
                    sleb(2 * child as u64 + 1, &mut b);
                } else {
                    b.push(0x7f);
                }
            }
            b.push(0x6e);
            sleb(2 * k as u64, &mut b);
        }
        b.push(1);
        b.push(0);
        let absent = (1..=8).filter(|c| *c < records).count();
        b.extend(std::iter::repeat_n(0, absent));
        b
    };
    let small = message(500);
    let want = candid_decode(&small, &mt.env, &mt.results);
    assert!(want.is_some());
    assert_eq!(decode_with_types(&small, &mt.env, &mt.results), want);
    let large = message(2_000);
    assert!(candid_decode(&large, &mt.env, &mt.results).is_some());
    assert_eq!(decode_with_types(&large, &mt.env, &mt.results), None);
}
