//! Golden bytes of every stored record type, in every version ever written
//! (`tests/fixtures/stored/<record>_v<N>.bin`). Postcard is positional: a field added,
//! removed or moved changes no type check and no round trip, only these bytes. Each fixture
//! must decode into its expected value (an old version through the current reader, as an
//! upgrade reads it), and the current version's value must encode to exactly its fixture.
//!
//! A deliberate layout change is a new version (docs/stable-layout.md): add its fixture with
//! `UPDATE_GOLDEN=1 cargo test -p tool-host-engine --test stored_layout`, which writes the
//! files that are missing or differ and says which; review them like code. A released
//! version's fixture never changes.

use candid::Principal;
use std::path::PathBuf;
use tool_host_engine::model::*;
use tool_host_engine::state::UseEntry;
use tool_host_engine::stored_value::{StoredLabel, StoredValue};

fn p(n: u8) -> Principal {
    Principal::from_slice(&[n; 10])
}

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/stored")
        .join(format!("{name}.bin"))
}

/// The fixture's bytes; with `UPDATE_GOLDEN=1`, `bytes` are written first where they differ.
fn golden(name: &str, bytes: &[u8]) -> Vec<u8> {
    let path = fixture_path(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1")
        && std::fs::read(&path).ok().as_deref() != Some(bytes)
    {
        std::fs::write(&path, bytes).expect("writes the fixture");
        eprintln!(
            "\n!!! UPDATE_GOLDEN: REWROTE {} ({} bytes) — a stored layout changed; a released \
             version's fixture must never change !!!\n",
            path.display(),
            bytes.len()
        );
    }
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (write it with UPDATE_GOLDEN=1, then review it)",
            path.display()
        )
    })
}

/// The current version of `T`: encodes to its fixture byte for byte, and decodes back.
fn current<T: Versioned + PartialEq + std::fmt::Debug>(name: &str, value: &T) {
    let bytes = Versioned::encode(value);
    assert_eq!(bytes[0], T::CURRENT);
    let fixture = golden(name, &bytes);
    assert_eq!(
        hex::encode(&bytes),
        hex::encode(&fixture),
        "{name}: the current layout no longer writes its fixture; a changed layout is a new \
         version (docs/stable-layout.md)"
    );
    assert_eq!(&T::decode(&fixture).expect("decodes"), value, "{name}");
}

/// An old version: its layout still writes its fixture, and the current reader reads the
/// fixture as `expected`.
fn old<O, T>(name: &str, value: &O, expected: &T)
where
    O: OldLayout + PartialEq + std::fmt::Debug,
    T: Versioned + PartialEq + std::fmt::Debug,
{
    let bytes = OldLayout::encode(value);
    let fixture = golden(name, &bytes);
    assert_eq!(hex::encode(&bytes), hex::encode(&fixture), "{name}");
    assert_eq!(&O::decode(&fixture).expect("decodes"), value, "{name}");
    assert_eq!(&T::decode(&fixture).expect("decodes"), expected, "{name}");
}

fn limits_v1() -> LimitsV1 {
    LimitsV1 {
        max_open_intents_per_owner: 21,
        max_agents_per_owner: 17,
        max_forms: 33,
        max_canisters: 65,
        max_form_bytes: 1_000,
        max_input_bytes: 2_000,
        preview_ttl_seconds: 3_601,
        retention_seconds: 86_401,
        reconcile_delay_seconds: 11,
        refs_refresh_seconds: 3_602,
        call_timeout_seconds: 61,
    }
}

fn limits() -> StoredLimits {
    StoredLimits {
        max_intents: 100_001,
        max_intents_per_owner: 201,
        max_stored_input_bytes: 1 << 20,
        max_reads_per_owner_per_minute: 61,
        max_agents_total: 100_002,
        ..limits_v1().into()
    }
}

#[test]
fn config() {
    let v1 = ConfigV1 {
        next_intent_id: 42,
        limits: limits_v1(),
        catalog_revision: 7,
        refresh_at: Some(1_700_000_000_000_000_000),
    };
    let read = Config {
        next_intent_id: 42,
        limits: limits_v1().into(),
        catalog_revision: 7,
        refresh_at: Some(1_700_000_000_000_000_000),
        stored_input_bytes: 0,
        indexes_built: false,
        bus: BusConfig::default(),
        layout: 0,
    };
    assert_eq!(read.limits.max_intents_per_owner, 200, "v1's defaults");
    old("config_v1", &v1, &read);
    let v2 = ConfigV2 {
        next_intent_id: 43,
        limits: limits(),
        catalog_revision: 8,
        refresh_at: None,
        stored_input_bytes: 1234,
        indexes_built: true,
    };
    let read_v2 = Config {
        next_intent_id: 43,
        limits: limits(),
        catalog_revision: 8,
        refresh_at: None,
        stored_input_bytes: 1234,
        indexes_built: true,
        bus: BusConfig::default(),
        layout: 0,
    };
    old("config_v2", &v2, &read_v2);
    let bus = BusConfig {
        enabled: vec!["calculate".into(), "escalate".into()],
        pinned: vec!["calculate".into()],
        unpinned: vec!["escalate".into()],
        default_time_zone: Some("Europe/London".into()),
        next_turn_id: 9,
        next_inbox_id: 3,
        turns_kept: 2,
        inbox_kept: 1,
    };
    let v3 = ConfigV3 {
        next_intent_id: 44,
        limits: limits(),
        catalog_revision: 8,
        refresh_at: None,
        stored_input_bytes: 1234,
        indexes_built: true,
        bus: bus.clone(),
    };
    let read_v3 = Config {
        next_intent_id: 44,
        bus,
        ..read_v2
    };
    old("config_v3", &v3, &read_v3);
    current(
        "config_v4",
        &Config {
            layout: 1,
            ..read_v3
        },
    );
}

/// The layout number moves with every record's current version, and with the structures,
/// task kinds and slab format beside them: changing any fails here until `LAYOUT` is raised
/// and the new values are pinned below, so a memory's layout number always says what it may
/// hold (an upgrade compares it instead of reading every record, and older code, which would
/// not keep a new structure, is refused). And every release reads every version (`READS` is
/// `1..=CURRENT`): a memory of an older layout is always readable.
#[test]
fn the_layout_names_every_current_version() {
    fn current<T: Versioned>(out: &mut Vec<(&'static str, u8)>) {
        let all: Vec<u8> = (1..=T::CURRENT).collect();
        assert_eq!(T::READS, &all[..], "{} reads every version", T::WHAT);
        out.push((T::WHAT, T::CURRENT));
    }
    let mut found = vec![];
    current::<Config>(&mut found);
    current::<StoredForm>(&mut found);
    current::<Target>(&mut found);
    current::<StoredIntent>(&mut found);
    current::<IntentBody>(&mut found);
    current::<InFlight>(&mut found);
    current::<tool_host_engine::bus::records::Turn>(&mut found);
    current::<tool_host_engine::bus::records::InboxEntry>(&mut found);
    current::<tool_host_engine::tokens::AgentToken>(&mut found);
    // The whole intent record, read from versions 1 to 3 (no longer written).
    current::<Intent>(&mut found);
    let structures = tool_host_engine::memory::ALL.to_vec();
    let kinds: Vec<u8> = TaskKind::ALL.iter().map(|k| k.byte()).collect();
    let slab = (
        tool_host_engine::intent_store::MAGIC,
        tool_host_engine::intent_store::CHUNK,
    );
    use tool_host_engine::head_table as table;
    let heads = (
        table::MAGIC,
        table::PAGE,
        table::SLOT,
        table::PER_PAGE,
        tool_host_engine::intent_store::SPILLED,
    );
    use tool_host_engine::memory as m;
    use tool_host_engine::write_back as wb;
    let slots = (
        (wb::MAGIC, wb::VERSION, wb::SLOTS, wb::REGION_BYTES),
        (m::WRITE_BACK_KEPT, m::WRITE_BACK_OPEN, m::WRITE_BACK_USAGE),
        tool_host_engine::bus::records::UsageKey::MAX_BYTES,
    );
    use tool_host_engine::bus::usage_counts as uc;
    use tool_host_engine::owner_table as ot;
    let owner_table = (
        (
            ot::MAGIC,
            ot::PAGE,
            ot::RECORD,
            ot::PER_BUCKET,
            ot::SPLIT_AT,
        ),
        (
            uc::MAGIC,
            uc::SHAPE.record(),
            uc::SHAPE.hashed,
            uc::SHAPE.split_at,
            uc::MAX_NAMES,
        ),
    );
    use tool_host_engine::stamp_floors as sf;
    let floor_table = (
        sf::MAGIC,
        sf::RECORD,
        sf::SHAPE.hashed,
        sf::PER_BUCKET,
        sf::SPLIT_AT,
    );
    // Layout 1: config version 4, when the number came in. Layout 2: the expiry index (25).
    // Layout 3: intent heads by id (the head table, 26 and 27). Layout 4: settled intents'
    // bodies packed (intent body version 2). Layout 5: packed with spelled bytes put back,
    // against sample bodies (intent body version 3). Layout 6: the counts written lately
    // held in write-back slots (28). Layout 7: the owners' counts in hash tables (29, 30), the
    // usage counts in one (31) with the tool names (32). Layout 8: the stamp floors in a hash
    // table (33).
    let pinned = [
        ("config", 4),
        ("form", 1),
        ("target", 2),
        ("intent", 4),
        ("intent body", 3),
        ("in-flight send", 1),
        ("turn", 1),
        ("inbox entry", 1),
        ("agent token", 1),
        ("intent", 3),
    ];
    assert_eq!(
        (
            LAYOUT,
            &found[..],
            &structures[..],
            &kinds[..],
            slab,
            heads,
            slots,
            owner_table,
            floor_table
        ),
        (
            8,
            &pinned[..],
            &(0..=33)
                .map(ic_stable_structures::memory_manager::MemoryId::new)
                .collect::<Vec<_>>()[..],
            &[1, 2, 3, 4, 6, 7][..],
            (b"TBS\x01", 256),
            (b"THT\x01", 4096, 340, 12, 0xff),
            ((b"WB", 1, 16, 4096), (0, 4096, 8192), 158),
            (
                (b"TOT\x01", 4096, 34, 120, 48),
                (b"TUC\x01", 46, 30, 24, 4096)
            ),
            (b"TSF\x01", 70, 62, 58, 20)
        ),
        "a record's current version, a structure, a task kind or the slab's format changed: \
         raise LAYOUT and pin the new values here"
    );
}

#[test]
fn turn() {
    use tool_host_engine::bus::records::{Turn, TurnStep};
    current(
        "turn_v1",
        &Turn {
            id: 9,
            owner: p(2),
            started_by: p(3),
            query: "send 5 TKA to bob".into(),
            offered: vec!["prepare_icrc1_transfer".into(), "commit".into()],
            format: "openai".into(),
            steps: vec![
                TurnStep {
                    tool: "prepare_icrc1_transfer".into(),
                    input_sha256: [4; 32],
                    outcome: Some("prepared".into()),
                    is_error: false,
                    at: 1_700_000_000_000_000_004,
                    caller: p(3),
                },
                TurnStep {
                    tool: "icrc1_balance_of".into(),
                    input_sha256: [5; 32],
                    outcome: None,
                    is_error: false,
                    at: 1_700_000_000_000_000_005,
                    caller: p(2),
                },
            ],
            answer: Some("sent".into()),
            finished_at: Some(1_700_000_000_000_000_006),
            created_at: 1_700_000_000_000_000_003,
            prune_at: 1_700_000_000_000_000_007,
        },
    );
}

#[test]
fn inbox_entry() {
    use tool_host_engine::bus::records::{Delivery, InboxEntry};
    current(
        "inbox_entry_v1",
        &InboxEntry {
            id: 3,
            owner: p(2),
            from: p(3),
            turn: Some(9),
            reason: "the amount is over what I may send".into(),
            summary: None,
            at: 1_700_000_000_000_000_008,
            handler: Some(p(6)),
            delivery: Delivery::Failed("the handler answered Err: busy".into()),
        },
    );
}

#[test]
fn agent_token() {
    use tool_host_engine::tokens::AgentToken;
    current(
        "agent_token_v1",
        &AgentToken {
            owner: p(2),
            secret_sha256: Some([7; 32]),
            label: "desktop".into(),
            created_at: 1_700_000_000_000_000_010,
            expires_at: Some(1_700_000_000_000_000_020),
            revoked_at: None,
            last_used_at: Some(1_700_000_000_000_000_011),
        },
    );
}

/// The usage counts' keys have no version byte either: pinned.
#[test]
fn usage_key() {
    use ic_stable_structures::Storable;
    use tool_host_engine::bus::records::UsageKey;
    let k = UsageKey::new(&p(2), "calculate");
    let bytes = k.to_bytes().into_owned();
    assert_eq!(bytes, golden("usage_key", &bytes));
    assert_eq!(k.tool(), "calculate");
    assert!(k.is_of(&p(2)) && !k.is_of(&p(3)));
    assert!(
        UsageKey::start(&p(2)) < k,
        "an owner's keys start at its prefix"
    );
}

#[test]
fn form() {
    current(
        "form_v1",
        &StoredForm {
            json: r#"{"format":"x"}"#.into(),
            registered_at: 5,
            registered_by: p(1),
        },
    );
}

#[test]
fn target() {
    let v1 = TargetV1 {
        label: Some("TKA".into()),
        forms: vec!["icrc1".into(), "icrc2".into()],
        refs_json: r#"{"query:icrc1_decimals":8}"#.into(),
        refs_updated_at: Some(9),
        refs_error: Some("late".into()),
        icrc3: true,
        registered_at: 3,
    };
    let read = Target {
        label: v1.label.clone(),
        forms: v1.forms.clone(),
        refs_json: v1.refs_json.clone(),
        refs_updated_at: v1.refs_updated_at,
        refs_error: v1.refs_error.clone(),
        icrc3: true,
        registered_at: 3,
        owner: None,
    };
    old("target_v1", &v1, &read);
    current(
        "target_v2",
        &Target {
            owner: Some(p(2)),
            ..read
        },
    );
}

fn intent_v1() -> v1::Intent {
    v1::Intent {
        id: 12,
        owner: p(3),
        preparer: p(4),
        canister: p(5),
        form_id: "icrc1".into(),
        tool: "prepare_icrc1_transfer".into(),
        method: "icrc1_transfer".into(),
        input_json: r#"{"amount":"1.5"}"#.into(),
        identity: [7; 32],
        arg: vec![0x44, 0x49, 0x44, 0x4c],
        digest: [8; 32],
        stamp_ns: Some(1_700_000_000_000_000_001),
        memo: Some(vec![1, 2]),
        preview_json: r#"{"title":"Send"}"#.into(),
        summary: "Send 1.5 TKA".into(),
        status: Status::Reconcile,
        outcome: Some("unknown".into()),
        finding: Some("retries_spent".into()),
        reply_json: Some("{}".into()),
        created_at: 100,
        updated_at: 101,
        expires_at: 102,
        settled_at: None,
        attempts: vec![
            v1::Attempt {
                at: 100,
                digest: [8; 32],
                result: AttemptResult::Rejected {
                    code: 2,
                    message: "busy".into(),
                },
            },
            v1::Attempt {
                at: 101,
                digest: [8; 32],
                result: AttemptResult::Pending,
            },
        ],
        generation: 1,
        retry_same: 2,
        rejects_4_5: 1,
        had_unknown: true,
        log_length: Some(77),
        confirm_requested_at: Some(99),
        reconcile_tries: 3,
        before_send: Some(Status::Unknown),
    }
}

#[test]
fn intent() {
    let v1 = intent_v1();
    let read: Intent = v1.clone().into();
    assert_eq!(read.attempts[0].log_length, None);
    assert_eq!(
        read.attempts[1].log_length,
        Some(77),
        "kept on the latest attempt"
    );
    old("intent_v1", &v1, &read);
    let v2 = Intent {
        status: Status::Done,
        outcome: Some("success".into()),
        settled_at: Some(103),
        attempts: vec![Attempt {
            at: 100,
            digest: [8; 32],
            result: AttemptResult::Replied {
                class: "ok".into(),
                path: vec!["Ok".into()],
            },
            log_length: Some(76),
        }],
        reconcile_at: Some(104),
        scan: Some(ScanState {
            digest: [8; 32],
            cursor: 5,
            end: Some(80),
            end_attempts: 1,
        }),
        held_for_good: false,
        names: vec![StoredName {
            set: "contacts".into(),
            name: "bob".into(),
            value: StoredValue::Record(vec![
                (
                    StoredLabel::Named("owner".into()),
                    StoredValue::Principal(vec![9; 10]),
                ),
                (
                    StoredLabel::Id(1),
                    StoredValue::Opt(Box::new(StoredValue::Blob(vec![0]))),
                ),
                (StoredLabel::Unnamed(2), StoredValue::Nat("12".into())),
            ]),
        }],
        max_stamp: Some(1_700_000_000_000_000_002),
        prior_floor: Some(1_700_000_000_000_000_000),
        ..read
    };
    // Its preview has no `arg_hex` to take off: read as it was written.
    old("intent_v2", &IntentV2(v2.clone()), &v2);
    // Version 3 stores the preview without its `arg_hex`; shown with it.
    let full = r#"{"preview_id":"12","title":"Send","arg_hex":"4449444c"}"#;
    let v3 = Intent {
        preview_json: r#"{"preview_id":"12","title":"Send"}"#.into(),
        ..v2.clone()
    };
    assert_eq!(stored_preview(full.into(), &v3.arg), v3.preview_json);
    assert_eq!(v3.preview_text(), full);
    current("intent_v3", &v3);
    // A version 2 record holding the preview whole is read as version 3 stores it.
    let whole = Intent {
        preview_json: full.into(),
        ..v2
    };
    let read = Intent::decode(&OldLayout::encode(&IntentV2(whole))).expect("decodes");
    assert_eq!(read, v3);
    assert_eq!(read.preview_text(), full);
    // The intents map reads versions 1 to 3 whole, and writes version 4: the head, its body
    // in the slab (a record of its own).
    for (name, expected) in [("intent_v1", v1_intent_read()), ("intent_v3", v3.clone())] {
        let fixture = std::fs::read(fixture_path(name)).unwrap();
        assert_eq!(
            StoredIntent::decode(&fixture).unwrap(),
            StoredIntent::Whole(Box::new(expected)),
            "{name}"
        );
    }
    let (head, body) = v3.clone().split(BodyRef {
        first: 0x0102_0304,
        len: 300,
        write: 0x0506_0708_090a,
    });
    current("intent_v4", &StoredIntent::Head(head.clone()));
    written("intent_body_v1", &Versioned::encode(&body), &body);
    assert_eq!(head.join(body), v3);
}

/// A record one of several versions this code writes: `bytes` (written with that version's
/// encoder) are its fixture byte for byte, and the fixture decodes back to `value`.
fn written<T: Versioned + PartialEq + std::fmt::Debug>(name: &str, bytes: &[u8], value: &T) {
    let fixture = golden(name, bytes);
    assert_eq!(
        hex::encode(bytes),
        hex::encode(&fixture),
        "{name}: this layout no longer writes its fixture; a changed layout is a new version \
         (docs/stable-layout.md)"
    );
    assert_eq!(&T::decode(&fixture).expect("decodes"), value, "{name}");
}

/// A body is written as version 1 (a prepare's, plain) and becomes version 3 (spelled bytes
/// put back, LZ4 against the sample bodies of `packed_body`) once its intent is settled and its
/// floor gone: both decode to the same body, and so does version 2 (LZ4, written by layout 4
/// and still read). The packed fixtures pin the dictionary too: versions 2 and 3 are read with
/// exactly those bytes.
#[test]
fn intent_body_plain_and_packed() {
    let to = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae";
    let body = IntentBody {
        form_id: "icrc1".into(),
        tool: "prepare_icrc1_transfer".into(),
        method: "icrc1_transfer".into(),
        input_json: format!(r#"{{"amount":"1.5","canister_id":"ryjl3-tyaaa-aaaaa-aaaba-cai","to":"{to}"}}"#),
        arg: hex::decode("4449444c066c06fbca0101c6fcb60204ba89e5c20402a2de94eb060282f3f3910c05d8a38ca80d7d6c02b3b0dac30368ad86ca8305026e036d7b6e7d6e780100011db56bf994b37ae8e79f5ce000be1727a6060ae4eef24736b7cc999c3c020001904e01105793384fe0ad58b2730812f762fd08550120d054c34a77cc450f776ff244089b0e80f3558c973343e9db158ea51ea0350c70010040426ae518ed1880a3c347").unwrap(),
        memo: Some(hex::decode("5793384fe0ad58b2730812f762fd0855").unwrap()),
        preview_json: format!(r#"{{"preview_id":"1","tool":"prepare_icrc1_transfer","method":"icrc1_transfer","canister":"ryjl3-tyaaa-aaaaa-aaaba-cai","canister_label":"TKA","title":"Transfer tokens","effect":{{"kind":"transfer","irreversible":true,"replicated":true}},"arguments":{{"amount":"1.5 TKA","created_at_time":"2026-12-01T10:00:00Z","fee":"0.0001 TKA","from_subaccount":"d054c34a77cc450f776ff244089b0e80f3558c973343e9db158ea51ea0350c70","memo":"5793384fe0ad58b2730812f762fd0855","to":"{to}"}}}}"#),
        summary: format!("Transfer tokens (amount 1.5 TKA, to {to})"),
        names: vec![StoredName {
            set: "contacts".into(),
            name: "bob".into(),
            value: StoredValue::Text(to.into()),
        }],
    };
    let plain = Versioned::encode(&body);
    assert_eq!(plain[0], 1, "a prepare writes version 1");
    let packed = body.encode_packed().expect("a transfer's body packs");
    assert_eq!(packed[0], IntentBody::CURRENT, "packed is version 3");
    assert_eq!(IntentBody::CURRENT, 3);
    // A transfer's body fits one chunk of the slab, with room for longer names and amounts,
    // whoever it is from and to: here with every value of the dictionary's sample changed.
    let other_to = Principal::from_slice(&[7; 29]).to_text();
    let other = |text: &str| {
        text.replace(to, &other_to)
            .replace(
                &hex::encode(Principal::from_text(to).unwrap().as_slice()),
                &"07".repeat(29),
            )
            .replace(
                "5793384fe0ad58b2730812f762fd0855",
                "00112233445566778899aabbccddeeff",
            )
            .replace(
                "d054c34a77cc450f776ff244089b0e80f3558c973343e9db158ea51ea0350c70",
                "8e2c1f0b6d3a594877e5d1c2b3a4958677685a4b3c2d1e0ff0e1d2c3b4a59687",
            )
            .replace("1.5", "123456.12345678")
            .replace("904e", "a0c21e")
    };
    let elsewhere = IntentBody {
        input_json: other(&body.input_json),
        arg: hex::decode(other(&hex::encode(&body.arg))).unwrap(),
        memo: Some(hex::decode("00112233445566778899aabbccddeeff").unwrap()),
        preview_json: other(&body.preview_json),
        summary: other(&body.summary),
        names: vec![StoredName {
            set: "contacts".into(),
            name: "carol".into(),
            value: StoredValue::Text(other_to.clone()),
        }],
        ..body.clone()
    };
    assert!(elsewhere.input_json.contains(&other_to) && elsewhere.preview_json.contains("8e2c1f"));
    for (what, b) in [("the sample's", &body), ("another's", &elsewhere)] {
        let packed = b.encode_packed().expect("a transfer's body packs");
        assert!(
            packed.len() + 16 <= tool_host_engine::intent_store::PAYLOAD as usize,
            "{what}: {} bytes packed, {} plain",
            packed.len(),
            Versioned::encode(b).len()
        );
        assert_eq!(&IntentBody::decode(&packed).unwrap(), b, "{what}");
    }
    // The fixture of version 1 is the older test's body (`intent`); this one's plain bytes
    // decode the same either way.
    assert_eq!(IntentBody::decode(&plain).unwrap(), body);
    // The fixtures decode (with the dictionary, which is part of the layout); the encoder's
    // own bytes are not pinned (another lz4_flex may find other matches, read all the same),
    // only that they decode to the body. Version 2 is no longer written: its fixture is
    // only read.
    // The fixture's body has every kind of token: principals (one of no bytes), hex runs
    // (one longer than a token holds, one of odd length), the mark byte itself, and values
    // the dictionary does not hold.
    let tokens = IntentBody {
        input_json: format!(
            r#"{{"note":"{}5","to":"aaaaa-aa","x":"\u00fe"}}"#,
            "0123456789abcdef".repeat(20)
        ),
        arg: [&elsewhere.arg[..], &[0xfe, 0xfe, 0x00]].concat(),
        ..elsewhere.clone()
    };
    let packed_tokens = tokens.encode_packed().expect("packs");
    let fixture = golden("intent_body_v3", &packed_tokens);
    assert_eq!(
        IntentBody::decode(&fixture).expect("decodes"),
        tokens,
        "intent_body_v3"
    );
    assert_eq!(IntentBody::decode(&packed).expect("decodes"), body);
    // The dictionary version 3 is read with, by its digest: changing it would change what
    // every stored version 3 body reads as.
    use sha2::Digest;
    assert_eq!(
        hex::encode(sha2::Sha256::digest(
            tool_host_engine::packed_body::DICTIONARY
        )),
        "41e13632ac020002c03755693903a19c480e2d2267971ecdc04e55c0cadeaf6a"
    );
    let v2 = std::fs::read(fixture_path("intent_body_v2")).expect("the version 2 fixture");
    assert_eq!(v2[0], 2);
    assert_eq!(
        IntentBody::decode(&v2).expect("decodes"),
        body,
        "intent_body_v2"
    );
    // A body packing would lengthen is not packed.
    let tiny = IntentBody {
        form_id: "f".into(),
        tool: "t".into(),
        method: "m".into(),
        input_json: "{}".into(),
        arg: vec![],
        memo: None,
        preview_json: "{}".into(),
        summary: String::new(),
        names: vec![],
    };
    assert_eq!(tiny.encode_packed(), None);
    // A packed record that does not unpack is an error naming the version, never a body.
    let mut broken = packed.clone();
    broken.truncate(packed.len() - 3);
    let e = IntentBody::decode(&broken).unwrap_err();
    assert!(e.to_string().contains("version 3"), "{e}");
    let mut broken = v2.clone();
    broken.truncate(v2.len() - 3);
    let e = IntentBody::decode(&broken).unwrap_err();
    assert!(e.to_string().contains("version 2"), "{e}");
}

/// Only an `arg_hex` of the record's own bytes at the very end is taken off; anything else is
/// kept whole, and what is shown is always the preview with its `arg_hex`.
#[test]
fn stored_previews_lose_nothing() {
    let arg = [0x44u8, 0x49, 0x44, 0x4c];
    let cases = [
        (r#"{"a":1,"arg_hex":"4449444c"}"#, r#"{"a":1}"#),
        // Another argument's hex, or not at the end: kept.
        (
            r#"{"a":1,"arg_hex":"4449444d"}"#,
            r#"{"a":1,"arg_hex":"4449444d"}"#,
        ),
        (
            r#"{"arg_hex":"4449444c","a":1}"#,
            r#"{"arg_hex":"4449444c","a":1}"#,
        ),
        // Nothing left but the braces: kept (so it is never stored as `{}`).
        (r#"{"arg_hex":"4449444c"}"#, r#"{"arg_hex":"4449444c"}"#),
        ("", ""),
    ];
    for (full, stored) in cases {
        assert_eq!(stored_preview(full.into(), &arg), stored, "{full}");
    }
    let shown = |p: &str| {
        Intent {
            preview_json: p.into(),
            arg: arg.to_vec(),
            ..v1_intent_read()
        }
        .preview_text()
    };
    assert_eq!(shown(r#"{"a":1}"#), r#"{"a":1,"arg_hex":"4449444c"}"#);
    assert_eq!(shown("{}"), r#"{"arg_hex":"4449444c"}"#);
    assert_eq!(shown(""), "");
    // Every kept case is shown as stored when it already ends with its own `arg_hex`, and
    // never with a second one.
    for (full, stored) in cases {
        if stored.starts_with("{\"arg_hex\"") && !stored.ends_with("\"}") {
            // `arg_hex` not last: never written so (it is `Preview`'s last field).
            continue;
        }
        let s = shown(stored);
        assert!(s.matches("\"arg_hex\"").count() <= 1, "{full}: {s}");
        if stored.ends_with("\"}") && stored.contains(",\"arg_hex\"") {
            assert_eq!(s, stored, "{full}");
        }
    }
    assert_eq!(
        shown(r#"{"arg_hex":"4449444c"}"#),
        r#"{"arg_hex":"4449444c"}"#
    );
    // Every shown text is JSON.
    for p in [r#"{"a":1}"#, "{}", r#"{"a":{"b":[1]}}"#] {
        serde_json::from_str::<serde_json::Value>(&shown(p)).expect("JSON");
    }
}

fn v1_intent_read() -> Intent {
    intent_v1().into()
}

#[test]
fn in_flight() {
    current(
        "in_flight_v1",
        &InFlight {
            attempt: 2,
            log_length: Some(10),
            journals: true,
            watchdog_at: 1_700_000_000_000_000_003,
        },
    );
}

/// The uses index's keys have no version byte (a key's order is its layout): pinned too.
#[test]
fn use_entry() {
    use ic_stable_structures::Storable;
    let e = UseEntry::new("icrc1\0aaaaa-aa\0transfer", 258);
    let bytes = e.to_bytes().into_owned();
    assert_eq!(bytes, golden("use_entry", &bytes));
    assert_eq!((e.key(), e.id()), ("icrc1\0aaaaa-aa\0transfer", 258));
}

/// Every record type and version the engine reads has its fixture here, and no fixture is
/// left over: a new version without a fixture fails.
#[test]
fn every_version_has_a_fixture() {
    let mut expected: Vec<String> = vec!["use_entry".into(), "usage_key".into()];
    // The write-back slots: only the version this code reads (another is refused on opening).
    expected.push(format!(
        "write_back_slots_v{}",
        tool_host_engine::write_back::VERSION
    ));
    // The count tables: likewise.
    expected.push("owner_table_v1".into());
    expected.push("usage_table_v1".into());
    expected.push("stamp_floor_table_v1".into());
    fn names<T: Versioned>(file: &str, out: &mut Vec<String>) {
        out.extend(T::READS.iter().map(|v| format!("{file}_v{v}")));
    }
    names::<Config>("config", &mut expected);
    names::<StoredForm>("form", &mut expected);
    names::<Target>("target", &mut expected);
    names::<StoredIntent>("intent", &mut expected);
    names::<IntentBody>("intent_body", &mut expected);
    names::<InFlight>("in_flight", &mut expected);
    names::<tool_host_engine::bus::records::Turn>("turn", &mut expected);
    names::<tool_host_engine::bus::records::InboxEntry>("inbox_entry", &mut expected);
    names::<tool_host_engine::tokens::AgentToken>("agent_token", &mut expected);
    expected.sort();
    let dir = fixture_path("x").parent().unwrap().to_path_buf();
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .expect("the fixtures directory")
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            n.strip_suffix(".bin").map(str::to_string)
        })
        .collect();
    found.sort();
    assert_eq!(found, expected);
}

mod buckets {
    use super::*;
    use ic_stable_structures::memory_manager::MemoryManager;
    use ic_stable_structures::{Memory, StableBTreeMap, VectorMemory};
    use tool_host_engine::memory;
    use tool_host_engine::state::{State, BUCKET_SIZE_IN_PAGES};

    const PAGE: u64 = 65_536;

    #[test]
    fn a_fresh_state_takes_a_header_page_and_one_small_bucket_per_structure() {
        let mem = VectorMemory::default();
        let s = State::init(mem.clone());
        s.check_indexes().unwrap();
        // Every id but the retired IN_FLIGHT_V1, which a fresh state never opens, the intent
        // body slab and the head table's two, written from the first intent on, the expiry
        // index, opened with the first preview, the write-back slots and the count tables, with
        // the first count, the tool names, with the first name, and the stamp floor table,
        // with the first floor.
        let opened = memory::ALL.len() as u64 - 11;
        assert_eq!(mem.size(), 1 + opened * BUCKET_SIZE_IN_PAGES as u64);
        assert!(
            mem.size() * PAGE <= 12 * 1024 * 1024,
            "{} pages",
            mem.size()
        );
    }

    /// A canister installed before the bucket size was chosen has the crate's default 128-page
    /// buckets in its manager's header: the state opens it as it is, reads what it kept, and
    /// keeps growing it by 128-page buckets (a different size would read every bucket at the
    /// wrong offset).
    #[test]
    fn a_memory_made_with_the_old_default_keeps_its_bucket_size() {
        let mem = VectorMemory::default();
        {
            let mm = MemoryManager::init(mem.clone());
            let mut forms: StableBTreeMap<String, StoredForm, _> =
                StableBTreeMap::init(mm.get(memory::FORMS));
            forms.insert(
                "icrc1".into(),
                StoredForm {
                    json: "{}".into(),
                    registered_at: 1,
                    registered_by: p(1),
                },
            );
        }
        assert_eq!(mem.size(), 1 + 128, "the old default: one 8 MiB bucket");
        let mut s = State::init(mem.clone());
        assert_eq!(s.forms.get(&"icrc1".to_string()).unwrap().registered_at, 1);
        // Not opened: the retired journal, the body slab, the head table, the expiry index, the
        // write-back slots, the count tables, the tool names and the stamp floor table.
        let opened = memory::ALL.len() as u64 - 11;
        assert_eq!(
            mem.size(),
            1 + opened * 128,
            "new structures get 8 MiB buckets too"
        );
        s.admins.insert(p(2), 5);
        s.check_indexes().unwrap();
        drop(s);
        let s = State::init(mem.clone());
        assert_eq!(s.admins.get(&p(2)), Some(5));
        assert_eq!(s.forms.len(), 1);
    }
}

/// Writes `bytes` as the record under `key` in the structure `id`, past the typed maps (as
/// another release, or a corruption, would have written it).
fn put_raw<K: ic_stable_structures::Storable + Ord + Clone>(
    mem: &ic_stable_structures::VectorMemory,
    id: ic_stable_structures::memory_manager::MemoryId,
    key: K,
    bytes: Vec<u8>,
) {
    let mm = ic_stable_structures::memory_manager::MemoryManager::init(mem.clone());
    let mut raw: ic_stable_structures::StableBTreeMap<K, Vec<u8>, _> =
        ic_stable_structures::StableBTreeMap::init(mm.get(id));
    raw.insert(key, bytes);
}

/// A record of a version this code does not know (a downgrade) is reported by the checks that
/// can report, with its key, and never read as something else.
#[test]
fn an_unknown_version_in_memory_is_reported_by_the_checks() {
    use ic_stable_structures::VectorMemory;
    use tool_host_engine::memory;
    use tool_host_engine::state::State;
    let mem = VectorMemory::default();
    drop(State::init(mem.clone()));
    put_raw(&mem, memory::INTENTS, 9u64, vec![5, 1, 2]);
    let s = State::init(mem);
    assert_version_5_at_key_9_reported(&s);
}

/// The checks that can report name intent 9's record of version 5 (one this code does not
/// read), with its key: the upgrade's `check_layout` and the full `check_indexes`.
fn assert_version_5_at_key_9_reported<M: ic_stable_structures::Memory>(
    s: &tool_host_engine::state::State<M>,
) {
    let e = s.check_layout().unwrap_err();
    assert_eq!(e.what, "intent");
    assert!(
        e.reason
            .starts_with("key 9: version 5 is not one this code reads ([1, 2, 3, 4])"),
        "{e}"
    );
    let e = s.check_indexes().unwrap_err();
    assert!(e.starts_with("stored intent: key 9: version 5"), "{e}");
}

/// A memory whose layout number is not known (last run by code older than the number) is
/// read whole by the upgrade, forms and targets included, not only their version bytes: a
/// body that does not fit its known version (a downgrade past a release that grew the record
/// without a new version, say) refuses the upgrade with its key, so the old code keeps
/// running; passed, every read of the catalog afterwards (the timer building it, every update
/// and query needing it, the refs refresh after its awaits) would trap. Checking version bytes
/// alone fails this.
#[test]
fn an_upgrade_from_an_unknown_layout_reads_every_form_and_target_whole() {
    use ic_stable_structures::memory_manager::MemoryManager;
    use ic_stable_structures::{StableBTreeMap, VectorMemory};
    use tool_host_engine::memory;
    use tool_host_engine::model::{StoredForm, Target, Versioned};
    use tool_host_engine::state::State;
    let unknown_layout = |mem: &VectorMemory| {
        let mut s = State::init(mem.clone());
        s.update_config(|c| c.layout = 0);
    };
    // A known form version with a body that does not read.
    let mem = VectorMemory::default();
    unknown_layout(&mem);
    let bad = vec![StoredForm::READS[0], 0xff, 0xfe];
    put_raw(&mem, memory::FORMS, "f".to_string(), bad);
    let e = State::init(mem).check_layout().unwrap_err();
    assert_eq!(e.what, StoredForm::WHAT);
    assert!(e.reason.starts_with("key \"f\""), "{e}");
    // A target of the newest version with one byte more than its layout.
    let mem = VectorMemory::default();
    unknown_layout(&mem);
    let mut s = State::init(mem.clone());
    let target = Target {
        label: Some("ledger".into()),
        forms: vec!["icrc1".into()],
        refs_json: "{}".into(),
        refs_updated_at: None,
        refs_error: None,
        icrc3: false,
        registered_at: 1,
        owner: None,
    };
    let id = candid::Principal::from_slice(&[7; 10]);
    s.targets.insert(id, target);
    s.check_layout().expect("as written");
    drop(s);
    let mut bytes = {
        let mm = MemoryManager::init(mem.clone());
        let raw: StableBTreeMap<candid::Principal, Vec<u8>, _> =
            StableBTreeMap::init(mm.get(memory::TARGETS));
        raw.get(&id).unwrap()
    };
    bytes.push(0);
    put_raw(&mem, memory::TARGETS, id, bytes);
    let e = State::init(mem).check_layout().unwrap_err();
    assert_eq!(e.what, Target::WHAT);
    assert!(e.reason.contains("unread"), "{e}");
}

/// A memory that says its layout is read by number: a later layout (a downgrade below the
/// code that ran on it) refuses the upgrade, naming both numbers, and the upgrade reads no
/// form or target (bounded whatever is held; the fixtures above pin every version's layout, so
/// a record cannot misfit a version its layout number allows). The full check still reads them.
#[test]
fn an_upgrade_compares_the_layout_number_and_reads_no_form() {
    use ic_stable_structures::VectorMemory;
    use tool_host_engine::memory;
    use tool_host_engine::state::State;
    let mem = VectorMemory::default();
    let mut s = State::init(mem.clone());
    assert_eq!(
        s.config.get().layout,
        LAYOUT,
        "a fresh install writes its layout"
    );
    s.update_config(|c| c.layout = LAYOUT + 1);
    let e = s.check_layout().unwrap_err();
    assert_eq!(e.what, "config");
    assert!(
        e.reason.contains(&format!(
            "stored layout {}, and this release reads layouts up to {LAYOUT}",
            LAYOUT + 1
        )),
        "{e}"
    );
    // An older layout reads; the upgrade then records this one.
    s.update_config(|c| c.layout = 0);
    s.check_layout().expect("layout 0 reads whole");
    s.record_layout();
    assert_eq!(s.config.get().layout, LAYOUT);
    drop(s);
    // At this layout a form is not read by the upgrade's check, only by the full one.
    put_raw(&mem, memory::FORMS, "f".to_string(), vec![1, 0xff, 0xfe]);
    let s = State::init(mem);
    s.check_layout().expect("no form read");
    let e = s.check_records().unwrap_err();
    assert_eq!(e.what, "form");
}

/// The same for a head in the head table (layout 3): reported with its key by the checks that
/// can report (the upgrade's `check_layout` reads the newest head; `check_records` every one),
/// never a trap; and a slot whose length no slot holds likewise.
#[test]
fn an_unknown_version_in_the_head_table_is_reported_by_the_checks() {
    use ic_stable_structures::memory_manager::MemoryManager;
    use ic_stable_structures::VectorMemory;
    use tool_host_engine::head_table::HeadTable;
    use tool_host_engine::memory;
    use tool_host_engine::state::State;
    let mem = VectorMemory::default();
    drop(State::init(mem.clone()));
    {
        let mm = MemoryManager::init(mem.clone());
        let mut t = HeadTable::init(mm.get(memory::HEAD_DIRECTORY), mm.get(memory::HEAD_PAGES));
        t.start(0);
        t.put(9, &[5, 1, 2]);
    }
    let s = State::init(mem.clone());
    assert_version_5_at_key_9_reported(&s);
    assert!(s.check_records().is_err());
    drop(s);
    // A slot saying more bytes than a slot holds (page 0, slot of id 9).
    {
        let mm = MemoryManager::init(mem.clone());
        use ic_stable_structures::Memory;
        let pages = mm.get(memory::HEAD_PAGES);
        pages.write(16 + 9 * 340, &400u16.to_le_bytes());
    }
    let s = State::init(mem);
    let e = s.check_layout().unwrap_err();
    assert!(e.reason.contains("more than a slot holds"), "{e}");
    assert!(s.check_records().is_err());
    // Below a newer head that reads, only `check_records` reads it: reported all the same.
    let mem = VectorMemory::default();
    let mut s = State::init(mem.clone());
    let mut newer = v1_intent_read();
    newer.id = 10;
    s.intents.insert(newer);
    drop(s);
    {
        let mm = MemoryManager::init(mem.clone());
        let mut t = HeadTable::init(mm.get(memory::HEAD_DIRECTORY), mm.get(memory::HEAD_PAGES));
        t.put(9, &[5, 1, 2]);
    }
    let s = State::init(mem.clone());
    s.check_layout().expect("the newest head reads");
    let e = s.check_records().unwrap_err();
    assert!(e.reason.starts_with("key 9: version 5"), "{e}");
    drop(s);
    // And a slot length no slot holds there.
    {
        let mm = MemoryManager::init(mem.clone());
        use ic_stable_structures::Memory;
        mm.get(memory::HEAD_PAGES)
            .write(16 + 9 * 340, &400u16.to_le_bytes());
    }
    let s = State::init(mem);
    s.check_layout().expect("the newest head reads");
    let e = s.check_records().unwrap_err();
    assert!(e.reason.contains("more than a slot holds"), "{e}");
}

/// The write-back slots' region (memory 28, version 1) as the kept counts write it: held
/// values, a removal held for a key in the map, a key of the longest principal; and read back
/// from the fixture as the same counts.
#[test]
fn write_back_slots_v1() {
    use ic_stable_structures::{Memory, VectorMemory};
    use tool_host_engine::write_back::WriteBack;
    let (map, slots) = (VectorMemory::default(), VectorMemory::default());
    let open = |map: &VectorMemory, slots: &VectorMemory| {
        WriteBack::<Principal, u32, _>::init(map.clone(), slots.clone(), 0, 29)
    };
    let mut w = open(&map, &slots);
    for k in 1..=17u8 {
        w.insert(p(k), u32::from(k));
    }
    w.remove(&p(1));
    w.insert(Principal::from_slice(&[0xab; 29]), 7);
    let mut bytes = vec![0u8; 8 + 16 * 43];
    slots.read(0, &mut bytes);
    let fixture = golden("write_back_slots_v1", &bytes);
    assert_eq!(
        hex::encode(&bytes),
        hex::encode(&fixture),
        "the write-back slots are no longer written as version 1"
    );
    let want = w.stored();
    assert!(!want.contains_key(&p(1)) && want[&p(2)] == 2 && want.len() == 17);
    let again = VectorMemory::default();
    again.grow(1);
    again.write(0, &fixture);
    let mut read = open(&map, &again);
    assert_eq!(read.stored(), want);
    read.check().unwrap();
    // The write order is read too: a new key takes the slot of p(4), written least lately
    // (p(17) was written after it, in a lower slot).
    read.insert(p(200), 1);
    let raw: ic_stable_structures::StableBTreeMap<Principal, u32, _> =
        ic_stable_structures::StableBTreeMap::load(map.clone());
    assert_eq!((raw.get(&p(4)), raw.get(&p(17))), (Some(4), None));
}

/// The first `len` bytes of a table's memory compared with its fixture, byte for byte; and a
/// fresh memory holding the fixture, to read it back from.
fn golden_memory(
    name: &str,
    mem: &ic_stable_structures::VectorMemory,
    len: u64,
    what: &str,
) -> ic_stable_structures::VectorMemory {
    use ic_stable_structures::Memory;
    let mut bytes = vec![0u8; len as usize];
    mem.read(0, &mut bytes);
    let fixture = golden(name, &bytes);
    assert_eq!(
        hex::encode(&bytes),
        hex::encode(&fixture),
        "{what} is no longer written as version 1"
    );
    let again = ic_stable_structures::VectorMemory::default();
    again.grow(len.div_ceil(65_536));
    again.write(0, &fixture);
    again
}

/// An owner count table (memories 29 and 30, version 1) as 100 owners' counts, then removals,
/// write it: the header, three buckets (two splits), records moved by a removal; and read back
/// from the fixture as the same counts.
#[test]
fn owner_table_v1() {
    use ic_stable_structures::VectorMemory;
    use tool_host_engine::owner_table::{OwnerTable, PAGE};
    let mem = VectorMemory::default();
    let mut t = OwnerTable::init(mem.clone());
    let owner = |k: u8| Principal::from_slice(&vec![k; 1 + usize::from(k) % 29]);
    for k in 0..100u8 {
        assert!(t.put(&owner(k), u32::from(k) + 1, || true));
    }
    for k in (0..100u8).step_by(7) {
        assert!(t.remove(&owner(k)));
    }
    assert_eq!(t.buckets(), 3);
    let again = golden_memory("owner_table_v1", &mem, PAGE * 4, "the owner count table");
    let read = OwnerTable::init(again);
    let mut want: Vec<(Principal, u32)> = (0..100u8)
        .filter(|k| k % 7 != 0)
        .map(|k| (owner(k), u32::from(k) + 1))
        .collect();
    want.sort();
    let mut got = read.entries().unwrap();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(read.get(&owner(50)), Some(51));
}

/// A usage count table (memory 31, version 1) and its tool names (32) as three owners' calls
/// write them; read back from the fixture as the same counts by name.
#[test]
fn usage_table_v1() {
    use ic_stable_structures::VectorMemory;
    use tool_host_engine::bus::usage_counts::UsageCounts;
    use tool_host_engine::hash_table::PAGE;
    let (table, names) = (VectorMemory::default(), VectorMemory::default());
    let open = |table: &VectorMemory| {
        UsageCounts::init(
            table.clone(),
            names.clone(),
            VectorMemory::default(),
            VectorMemory::default(),
            0,
        )
    };
    let mut u = open(&table);
    let tools = ["icrc1_transfer", "icrc1_balance_of", "icrc2_approve"];
    for (k, o) in [p(1), p(2), Principal::from_slice(&[0xab; 29])]
        .iter()
        .enumerate()
    {
        for (t, tool) in tools.iter().enumerate().take(k + 1) {
            for _ in 0..=t {
                u.bump(o, tool, 1_000);
            }
        }
    }
    let again = golden_memory("usage_table_v1", &table, PAGE * 2, "the usage count table");
    let read = open(&again);
    read.check().unwrap();
    let third = read.counts(&Principal::from_slice(&[0xab; 29]));
    assert_eq!(
        third,
        [
            ("icrc1_transfer".to_string(), 1),
            ("icrc1_balance_of".to_string(), 2),
            ("icrc2_approve".to_string(), 3)
        ]
        .into()
    );
    assert_eq!(
        read.counts(&p(1)),
        [("icrc1_transfer".to_string(), 1)].into()
    );
    assert_eq!(read.split(), (6, 0));
}

/// A stamp floor table (memory 33, version 1) as 60 floors of three owners, raised, then some
/// released, write it: the header, buckets split, records moved by a release; and read back
/// from the fixture as the same floors.
#[test]
fn stamp_floor_table_v1() {
    use ic_stable_structures::VectorMemory;
    use tool_host_engine::stamp_floors::{StampFloors, PAGE};
    let (mem, tree) = (VectorMemory::default(), VectorMemory::default());
    let mut f = StampFloors::init(mem.clone(), tree.clone());
    let owners = [p(1), p(2), Principal::from_slice(&[0xab; 29])];
    let identity = |k: u8| [k; 32];
    for k in 0..60u8 {
        f.raise(
            owners[usize::from(k % 3)],
            identity(k),
            1_000 + u64::from(k),
        );
    }
    for k in (0..60u8).step_by(5) {
        f.raise(owners[usize::from(k % 3)], identity(k), 2_000);
    }
    for k in (0..60u8).step_by(7) {
        f.release(owners[usize::from(k % 3)], identity(k), 2_000);
    }
    assert_eq!((f.buckets(), f.split()), (3, (51, 0)));
    let again = golden_memory(
        "stamp_floor_table_v1",
        &mem,
        PAGE * 4,
        "the stamp floor table",
    );
    let read = StampFloors::init(again, VectorMemory::default());
    let want: std::collections::BTreeMap<_, _> = (0..60u8)
        .filter(|k| k % 7 != 0)
        .map(|k| {
            let stamp = if k % 5 == 0 {
                2_000
            } else {
                1_000 + u64::from(k)
            };
            ((owners[usize::from(k % 3)], identity(k)), stamp)
        })
        .collect();
    assert_eq!(read.stored().unwrap(), want);
    assert_eq!(read.get(owners[1], identity(10)), Some(2_000));
}
