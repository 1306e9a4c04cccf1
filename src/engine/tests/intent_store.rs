//! The intent store: heads in a B-tree, bodies in a slab of chunks. Random sequences of writes,
//! rewrites and removals are checked against a plain map after every step, with the slab's
//! accounting (every chunk in exactly one body or free) checked too; and the checks themselves
//! are shown to catch a leaked, a shared and a broken chunk.

use candid::Principal;
use ic_stable_structures::{Memory, StableBTreeMap, VectorMemory};
use proptest::prelude::*;
use std::collections::BTreeMap;
use tool_host_engine::intent_store::{BodySlab, IntentStore, PAYLOAD};
use tool_host_engine::model::*;

fn intent(id: u64, input: usize, preview: usize, status: Status) -> Intent {
    Intent {
        id,
        owner: Principal::from_slice(&[(id % 7) as u8; 10]),
        preparer: Principal::from_slice(&[2; 10]),
        canister: Principal::from_slice(&[3; 10]),
        form_id: "icrc1".into(),
        tool: "transfer".into(),
        method: "icrc1_transfer".into(),
        input_json: "i".repeat(input),
        identity: [id as u8; 32],
        arg: vec![0x44; 40],
        digest: [5; 32],
        stamp_ns: Some(id),
        memo: None,
        preview_json: format!("{{\"p\":\"{}\"}}", "v".repeat(preview)),
        summary: "Send".into(),
        status,
        outcome: None,
        finding: None,
        reply_json: None,
        created_at: 1,
        updated_at: 1,
        expires_at: 2,
        settled_at: None,
        attempts: vec![],
        generation: 0,
        retry_same: 0,
        rejects_4_5: 0,
        had_unknown: false,
        confirm_requested_at: None,
        reconcile_tries: 0,
        before_send: None,
        reconcile_at: None,
        scan: None,
        held_for_good: false,
        names: vec![],
        max_stamp: None,
        prior_floor: None,
    }
}

/// A head is written as version 4 and postcard's bytes (the layout earlier releases wrote and
/// read), shorter and longer than the buffer it starts in.
#[test]
fn heads_are_their_version_and_postcards_bytes() {
    let (mut head, _) = intent(3, 10, 10, Status::Open).split(BodyRef {
        first: 3,
        len: 900,
        write: 5,
    });
    for reply in [0usize, 300, 600] {
        head.reply_json = Some("r".repeat(reply));
        let mut want = vec![4];
        want.extend(postcard::to_allocvec(&head).unwrap());
        let got = Versioned::encode(&StoredIntent::Head(head.clone()));
        assert_eq!(got, want, "{reply}");
    }
}

/// The memories of the heads: the B-tree of layouts 1 and 2, the table's directory and pages.
#[derive(Clone, Default)]
struct Heads {
    tree: VectorMemory,
    dir: VectorMemory,
    pages: VectorMemory,
}

fn open(h: &Heads, b: &VectorMemory) -> IntentStore<VectorMemory> {
    IntentStore::init(h.tree.clone(), b.clone(), h.dir.clone(), h.pages.clone())
}

fn store() -> (IntentStore<VectorMemory>, Heads, VectorMemory) {
    let (h, b) = (Heads::default(), VectorMemory::default());
    (open(&h, &b), h, b)
}

#[derive(Clone, Debug)]
enum Op {
    /// Write intent `id` with an input of this many bytes (a new body, or the same one).
    Put {
        id: u64,
        input: usize,
    },
    /// Rewrite the head only (a status change).
    Settle {
        id: u64,
    },
    Remove {
        id: u64,
    },
    /// Pack the body (a settled intent's, once its floor has gone).
    Pack {
        id: u64,
    },
}

/// More ids than the store remembers intents (16), so that some reads miss its memory.
const IDS: u64 = 20;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (
            0u64..IDS,
            prop_oneof![0usize..40, 200usize..2_000, Just(PAYLOAD as usize)]
        )
            .prop_map(|(id, input)| Op::Put { id, input }),
        (0u64..IDS).prop_map(|id| Op::Settle { id }),
        (0u64..IDS).prop_map(|id| Op::Remove { id }),
        (0u64..IDS).prop_map(|id| Op::Pack { id }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// After every step the store reads back exactly the model, and so does a store opened
    /// anew on the same memories (what the store remembers of recent intents is what it
    /// wrote), every chunk is in one body or free, and the slab never holds more chunks than
    /// the live bodies ever needed at once.
    #[test]
    fn the_store_is_a_map_and_the_slab_loses_nothing(ops in proptest::collection::vec(op(), 1..60)) {
        let (mut s, hm, bm) = store();
        let mut model: BTreeMap<u64, Intent> = BTreeMap::new();
        let mut peak = 0u32;
        for op in ops {
            match op {
                Op::Put { id, input } => {
                    let i = intent(id, input, 100, Status::Open);
                    let before = s.insert(i.clone());
                    prop_assert_eq!(before.map(|b| b.status), model.get(&id).map(|m| m.status));
                    model.insert(id, i);
                }
                Op::Settle { id } => {
                    if let Some(m) = model.get_mut(&id) {
                        // As the engine writes: read, change the head, write.
                        let mut i = s.get(&id).unwrap();
                        let (chunks, at) = (s.body_chunks(), s.get_head(&id).and_then(|h| h.body()));
                        i.status = Status::Done;
                        i.outcome = Some("success".into());
                        s.insert(i.clone());
                        prop_assert_eq!(s.body_chunks(), chunks, "a head-only change writes no body");
                        prop_assert_eq!(s.get_head(&id).and_then(|h| h.body()), at, "the same body");
                        *m = i;
                    }
                }
                Op::Remove { id } => {
                    prop_assert_eq!(s.remove(&id), model.remove(&id));
                }
                Op::Pack { id } => {
                    let before = s.get_head(&id).and_then(|h| h.body());
                    let packed = s.pack(id);
                    let after = s.get_head(&id).and_then(|h| h.body());
                    match (before, after) {
                        (Some(b), Some(a)) if packed => prop_assert!(
                            BodySlab::<VectorMemory>::chunks(a.len) < BodySlab::<VectorMemory>::chunks(b.len),
                            "packed into fewer chunks: {:?} -> {:?}", b, a
                        ),
                        _ => prop_assert_eq!(before, after, "nothing packed, nothing moved"),
                    }
                    prop_assert!(!packed || model.contains_key(&id));
                    prop_assert!(!s.pack(id), "a packed body is packed once");
                }
            }
            s.check().map_err(TestCaseError::fail)?;
            prop_assert_eq!(s.len(), model.len() as u64);
            let fresh = open(&hm, &bm);
            for id in 0..IDS {
                prop_assert_eq!(s.get(&id), model.get(&id).cloned());
                prop_assert_eq!(fresh.get(&id), model.get(&id).cloned());
            }
            // Each live body's chunks, packed or not (its head says how long it is).
            let live: u32 = model
                .keys()
                .map(|id| {
                    let r = s.get_head(id).and_then(|h| h.body()).expect("a head names its body");
                    BodySlab::<VectorMemory>::chunks(r.len)
                })
                .sum();
            let (high, free) = s.body_chunks();
            prop_assert_eq!(high - free, live, "chunks in use are the live bodies'");
            peak = peak.max(live);
            // A body is written before the one it replaces is freed: at most one body more.
            prop_assert!(high <= peak + BodySlab::<VectorMemory>::chunks(2_200), "{} > {}", high, peak);
        }
    }
}

fn body_len(i: &Intent) -> u32 {
    let (_, body) = i.clone().split(BodyRef {
        first: 0,
        len: 0,
        write: 0,
    });
    Versioned::encode(&body).len() as u32
}

#[test]
fn a_head_only_write_keeps_the_body_and_a_new_body_frees_the_old() {
    let (mut s, _, _) = store();
    let i = intent(1, 900, 500, Status::Open);
    assert!(s.insert(i.clone()).is_none());
    let chunks = BodySlab::<VectorMemory>::chunks(body_len(&i));
    assert!(chunks > 4, "a body over several chunks: {chunks}");
    assert_eq!(s.body_chunks(), (chunks, 0));
    let mut sent = i.clone();
    sent.status = Status::InFlight;
    sent.attempts.push(Attempt {
        at: 3,
        digest: [5; 32],
        result: AttemptResult::Pending,
        log_length: Some(4),
    });
    assert_eq!(s.insert(sent.clone()).map(|b| b.status), Some(Status::Open));
    assert_eq!(s.body_chunks(), (chunks, 0), "the body stayed where it was");
    assert_eq!(s.get(&1), Some(sent.clone()));
    // Stamped again: new argument bytes, a new preview; the old chunks are free, then reused.
    let mut restamped = sent;
    restamped.arg = vec![0x45; 40];
    restamped.preview_json = "{\"p\":2}".into();
    s.insert(restamped.clone());
    let small = BodySlab::<VectorMemory>::chunks(body_len(&restamped));
    assert_eq!(
        s.body_chunks(),
        (chunks + small, chunks),
        "written, then the old freed"
    );
    assert_eq!(s.get(&1), Some(restamped));
    s.insert(intent(2, 10, 10, Status::Open));
    let (high, free) = s.body_chunks();
    assert_eq!(high, chunks + small, "the free chunks were taken first");
    assert_eq!(
        free,
        chunks - BodySlab::<VectorMemory>::chunks(body_len(&intent(2, 10, 10, Status::Open)))
    );
    s.check().unwrap();
    assert!(s.remove(&1).is_some());
    assert_eq!(s.body_chunks().1, free + small);
    s.check().unwrap();
}

/// A transfer's body as the engine writes one (the preview, the input and the summary naming
/// the same accounts): what packing is for.
fn transfer(id: u64) -> Intent {
    let to = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae";
    let mut i = intent(id, 0, 0, Status::Done);
    i.tool = "prepare_icrc1_transfer".into();
    i.input_json =
        format!(r#"{{"amount":"1.5","canister_id":"ryjl3-tyaaa-aaaaa-aaaba-cai","to":"{to}"}}"#);
    i.arg = hex::decode("4449444c066c06fbca0101c6fcb60204ba89e5c20402a2de94eb060282f3f3910c05d8a38ca80d7d6c02b3b0dac30368ad86ca8305026e036d7b6e7d6e780100011db56bf994b37ae8e79f5ce000be1727a6060ae4eef24736b7cc999c3c020001904e01105793384fe0ad58b2730812f762fd08550120d054c34a77cc450f776ff244089b0e80f3558c973343e9db158ea51ea0350c70010040426ae518ed1880a3c347").unwrap();
    i.memo = Some(vec![0x57; 16]);
    i.preview_json = format!(
        r#"{{"preview_id":"{id}","tool":"prepare_icrc1_transfer","method":"icrc1_transfer","canister":"ryjl3-tyaaa-aaaaa-aaaba-cai","canister_label":"TKA","title":"Transfer tokens","effect":{{"kind":"transfer","irreversible":true,"replicated":true}},"arguments":{{"amount":"1.5 TKA","created_at_time":"2026-12-01T10:00:00Z","fee":"0.0001 TKA","from_subaccount":"d054c34a77cc450f776ff244089b0e80f3558c973343e9db158ea51ea0350c70","memo":"5793384fe0ad58b2730812f762fd0855","to":"{to}"}}}}"#
    );
    i.summary = format!("Transfer tokens (amount 1.5 TKA, to {to})");
    i.settled_at = Some(2);
    i
}

/// A settled transfer's body packs from four chunks into one; it reads back as it was, in
/// this store and in one opened anew; packing again does nothing; a head-only write keeps the
/// packed body, and a new body (a write not remembered, or changed) is written plain and
/// frees the packed one's chunks.
#[test]
fn a_packed_body_reads_as_the_plain_one() {
    let (mut s, h, b) = store();
    let i = transfer(1);
    s.insert(i.clone());
    assert_eq!(
        s.body_chunks(),
        (4, 0),
        "a transfer's body takes four chunks"
    );
    // Packed by a store that does not remember it (read from memory); a store that does
    // reads only the version byte: see `fresh` below.
    let mut s = open(&h, &b);
    assert!(s.pack(1));
    let packed = s.get_head(&1).and_then(|h| h.body()).unwrap();
    assert_eq!(
        BodySlab::<VectorMemory>::chunks(packed.len),
        1,
        "{packed:?}"
    );
    assert_eq!(
        s.body_chunks(),
        (4, 3),
        "the plain body freed, its chunks taken back by the packed one: the slab never grows"
    );
    assert_eq!(s.get(&1), Some(i.clone()));
    assert_eq!(open(&h, &b).get(&1), Some(i.clone()), "read from memory");
    s.check().unwrap();
    assert!(!s.pack(1), "packed once");
    assert!(!open(&h, &b).pack(1), "packed once, read from memory too");
    assert!(!s.pack(9), "no such intent");
    // The store remembers it: a head-only write keeps the packed chunks.
    let mut later = i.clone();
    later.updated_at = 5;
    s.insert(later.clone());
    assert_eq!(s.get_head(&1).and_then(|h| h.body()), Some(packed));
    // Opened anew, nothing remembered: the body is written plain, the packed one freed.
    let mut fresh = open(&h, &b);
    fresh.insert(later.clone());
    let plain = fresh.get_head(&1).and_then(|h| h.body()).unwrap();
    assert_eq!(BodySlab::<VectorMemory>::chunks(plain.len), 4);
    assert_eq!(fresh.get(&1), Some(later.clone()));
    fresh.check().unwrap();
    assert_eq!(fresh.body_chunks(), (5, 1));
    assert!(fresh.pack(1));
    assert_eq!(fresh.body_chunks(), (5, 4), "packing took no new chunk");
    // A changed body (stamped again) is written plain.
    let mut restamped = later;
    restamped.arg[0] ^= 1;
    fresh.insert(restamped.clone());
    assert_eq!(fresh.get(&1), Some(restamped));
    fresh.check().unwrap();
    // A body packing would not shorten by a chunk is left as it is: one of a chunk already,
    // and one of two chunks that packs shorter but still into two.
    let mut two = intent(3, 0, 10, Status::Done);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    // Random letters of 64 (no hex run, no principal's text, nothing the dictionary holds):
    // packing takes a little off the rest of the body, not a chunk.
    let letters = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    two.input_json = (0..360)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(letters[(x >> 58) as usize])
        })
        .collect::<String>();
    assert_eq!(BodySlab::<VectorMemory>::chunks(body_len(&two)), 2);
    let (_, b) = two.clone().split(BodyRef {
        first: 0,
        len: 0,
        write: 0,
    });
    let packed = b.encode_packed().expect("shorter packed");
    assert_eq!(
        BodySlab::<VectorMemory>::chunks(packed.len() as u32),
        2,
        "{}",
        packed.len()
    );
    for small in [intent(2, 10, 10, Status::Done), two] {
        let id = small.id;
        fresh.insert(small);
        let at = fresh.get_head(&id).and_then(|h| h.body());
        assert!(!fresh.pack(id), "intent {id}");
        assert_eq!(fresh.get_head(&id).and_then(|h| h.body()), at);
    }
    assert!(fresh.remove(&1).is_some());
    fresh.check().unwrap();
}

#[test]
fn a_fresh_store_writes_nothing_until_its_first_intent() {
    let (mut s, h, b) = store();
    assert_eq!(b.size(), 0);
    assert!(h.tree.size() > 0, "the B-tree writes its header");
    assert_eq!((h.dir.size(), h.pages.size()), (0, 0), "the head table too");
    s.check().unwrap();
    assert_eq!(s.body_chunks(), (0, 0));
    s.insert(intent(1, 10, 10, Status::Open));
    assert_eq!(b.size(), 1);
    assert_eq!((h.dir.size(), h.pages.size()), (1, 1));
    let tree: StableBTreeMap<u64, Vec<u8>, _> = StableBTreeMap::load(h.tree.clone());
    assert_eq!(tree.len(), 0, "nothing written to the B-tree");
}

/// A whole intent written by versions 1 to 3 is read as it is, and split when written again.
#[test]
fn a_whole_record_is_read_and_split_when_written() {
    let (h, b) = (Heads::default(), VectorMemory::default());
    let i = intent(3, 50, 50, Status::Open);
    {
        let mut raw: StableBTreeMap<u64, StoredIntent, _> = StableBTreeMap::init(h.tree.clone());
        raw.insert(3, StoredIntent::Whole(Box::new(i.clone())));
        let mut bytes: StableBTreeMap<u64, Vec<u8>, _> = StableBTreeMap::load(h.tree.clone());
        assert_eq!(bytes.get(&3).unwrap()[0], 3, "written as version 3");
        bytes.insert(
            4,
            OldLayout::encode(&IntentV2(intent(4, 5, 5, Status::Done))),
        );
    }
    let mut s = open(&h, &b);
    assert_eq!(s.get(&3), Some(i.clone()));
    assert_eq!(s.get(&4).map(|i| i.status), Some(Status::Done));
    s.check().unwrap();
    let before = s.insert(i.clone()).unwrap();
    assert!(before.whole);
    assert!(matches!(s.get_head(&3), Some(StoredIntent::Head(_))));
    assert_eq!(s.get(&3), Some(i));
    s.check().unwrap();
    assert_eq!(
        s.remove(&4).map(|i| i.id),
        Some(4),
        "a whole one has no body to free"
    );
    s.check().unwrap();
}

/// The slab's check catches what would lose or share a body: a chunk neither in a body nor
/// free, a chunk in two bodies, a chain that ends early, a free count that is wrong.
#[test]
fn the_slab_check_catches_a_leak_a_shared_chunk_and_a_broken_chain() {
    let mem = VectorMemory::default();
    let mut slab = BodySlab::init(mem.clone());
    let a = slab.write(&[1; 600]);
    let b = slab.write(&[2; 100]);
    slab.check([(1, a), (2, b)].into_iter()).unwrap();
    let e = slab.check([(1, a)].into_iter()).unwrap_err();
    assert!(e.contains("neither in a body nor free"), "{e}");
    let e = slab
        .check([(1, a), (2, a), (3, b)].into_iter())
        .unwrap_err();
    assert!(
        e.contains("is in intent 1's body and in intent 2's body"),
        "{e}"
    );
    let long = BodyRef { len: 900, ..b };
    let e = slab.check([(1, a), (2, long)].into_iter()).unwrap_err();
    assert!(e.contains("ends early"), "{e}");
    assert!(slab
        .read_checked(long)
        .unwrap_err()
        .contains("ends after 1 chunk"));
    slab.free(b);
    slab.check([(1, a)].into_iter()).unwrap();
    let e = slab.check([(1, a), (2, b)].into_iter()).unwrap_err();
    assert!(e.contains("the free list"), "{e}");
    // The free count in the header disagrees with the list.
    let mut hdr = [0u8; 4];
    mem.read(16, &mut hdr);
    mem.write(16, &(u32::from_le_bytes(hdr) + 1).to_le_bytes());
    let e = slab.check([(1, a)].into_iter()).unwrap_err();
    assert!(e.contains("its count says"), "{e}");
    // A header this code does not write is refused, never read as an empty slab.
    mem.write(0, b"XXXX");
    assert!(slab
        .check([].into_iter())
        .unwrap_err()
        .contains("header starts"));
}

/// Bodies of every size round-trip, including at the chunk boundary.
#[test]
fn bodies_of_every_size_round_trip() {
    let mut slab = BodySlab::init(VectorMemory::default());
    let mut live = vec![];
    for (k, len) in [0usize, 1, 251, 252, 253, 504, 505, 4_000, 70_000]
        .into_iter()
        .enumerate()
    {
        let bytes: Vec<u8> = (0..len).map(|n| (n * 7 + k) as u8).collect();
        let r = slab.write(&bytes);
        assert_eq!(slab.read(r), bytes, "{len}");
        assert_eq!(r.len as usize, len);
        live.push((k as u64, r));
    }
    slab.check(live.into_iter()).unwrap();
}

/// The recent-bodies hint is only a hint: a write whose hint no longer names the replaced
/// head's body (another store over the same memory rewrote it; the state never opens two)
/// writes the body anew and frees what the replaced head named, never the hinted chunks.
#[test]
fn a_stale_hint_is_caught_by_the_replaced_head() {
    let (h, b) = (Heads::default(), VectorMemory::default());
    let mut s1 = open(&h, &b);
    s1.insert(intent(5, 300, 300, Status::Open));
    s1.insert(intent(6, 300, 300, Status::Open));
    let first = s1.get(&5).unwrap();
    let mut s2 = open(&h, &b);
    let mut other = s2.get(&5).unwrap();
    other.input_json = "changed".into();
    s2.insert(other);
    s2.check().unwrap();
    // s1 still remembers the first body at its old chunks, now free.
    let mut settled = first.clone();
    settled.status = Status::Done;
    s1.insert(settled.clone());
    s1.check().unwrap();
    assert_eq!(s1.get(&5), Some(settled));
    assert_eq!(open(&h, &b).get(&5).unwrap().input_json, first.input_json);
}

/// Chunks freed and taken again by a body of the same length at the same place are another
/// body (its write number differs): a stale hint naming them is still caught.
#[test]
fn a_hint_to_reused_chunks_of_the_same_length_is_caught() {
    let (h, b) = (Heads::default(), VectorMemory::default());
    let mut s1 = open(&h, &b);
    s1.insert(intent(5, 300, 300, Status::Open));
    let first = s1.get(&5).unwrap();
    let at = s1.get_head(&5).unwrap().body().unwrap();
    let mut s2 = open(&h, &b);
    let mut other = s2.get(&5).unwrap();
    other.input_json = "x".repeat(10);
    s2.insert(other.clone());
    other.input_json = "z".repeat(300);
    s2.insert(other.clone());
    let again = s2.get_head(&5).unwrap().body().unwrap();
    assert_eq!(
        (again.first, again.len),
        (at.first, at.len),
        "the same chunks, taken again"
    );
    assert_ne!(again, at);
    let mut settled = first.clone();
    settled.status = Status::Done;
    s1.insert(settled.clone());
    s1.check().unwrap();
    assert_eq!(open(&h, &b).get(&5), Some(settled));
}

/// A write knows what it replaced from what it remembers only when the replaced record is,
/// byte for byte, the one it remembers: a head rewritten behind its back (another store over
/// the same memory; the state never opens two) is decoded, and the indexes get its status.
#[test]
fn what_a_write_replaced_is_the_stored_record_not_the_remembered_one() {
    let (h, b) = (Heads::default(), VectorMemory::default());
    let mut s1 = open(&h, &b);
    s1.insert(intent(5, 30, 30, Status::Open));
    let mut s2 = open(&h, &b);
    let mut sent = s2.get(&5).unwrap();
    sent.status = Status::InFlight;
    sent.identity = [9; 32];
    assert_eq!(s2.insert(sent).map(|r| r.status), Some(Status::Open));
    // s1 remembers the open head; the stored one is in flight with another identity.
    let mut done = s1.get(&5).unwrap();
    done.status = Status::Done;
    let replaced = s1.insert(done.clone()).unwrap();
    assert_eq!(
        (replaced.status, replaced.identity, replaced.whole),
        (Status::InFlight, [9; 32], false)
    );
    // Remembered and unchanged: known without decoding, and the same answer.
    let mut settled = done;
    settled.status = Status::Settled;
    let replaced = s1.insert(settled).unwrap();
    assert_eq!(
        (replaced.status, replaced.identity),
        (Status::Done, [5; 32])
    );
    s1.check().unwrap();
}

const NO_BODY: BodyRef = BodyRef {
    first: 0,
    len: 0,
    write: 0,
};

/// Heads written by layouts 1 and 2 (in the B-tree) are read where they are; new intents go to
/// the table only; an old head written again moves to the table, and one removed leaves the
/// B-tree; the ids list both, in order, and a reopened store reads the same.
#[test]
fn heads_of_the_b_tree_are_read_moved_when_written_and_never_added_to() {
    let (h, b) = (Heads::default(), VectorMemory::default());
    let mut model: BTreeMap<u64, Intent> = BTreeMap::new();
    {
        let mut tree: StableBTreeMap<u64, Vec<u8>, _> = StableBTreeMap::init(h.tree.clone());
        let mut slab = BodySlab::init(b.clone());
        for id in 1..=30 {
            let status = if id % 3 == 0 {
                Status::Done
            } else {
                Status::Open
            };
            let i = intent(id, 20 + id as usize, 40, status);
            let (head, body) = i.clone().split(NO_BODY);
            let at = slab.write(&Versioned::encode(&body));
            let head = IntentHead { body: at, ..head };
            tree.insert(id, head_record(&head));
            model.insert(id, i);
        }
    }
    let tree_len = || StableBTreeMap::<u64, Vec<u8>, _>::load(h.tree.clone()).len();
    let mut s = open(&h, &b);
    for (id, i) in &model {
        assert_eq!(s.get(id).as_ref(), Some(i));
    }
    s.check().unwrap();
    for id in 31..=60 {
        let i = intent(id, 10, 10, Status::Open);
        assert_eq!(s.insert(i.clone()), None);
        model.insert(id, i);
    }
    assert_eq!(tree_len(), 30, "new intents are not written to the B-tree");
    // 30 shares its group (24 to 35) with the table's first ids: its page has a free slot.
    for id in [5, 10, 30, 45] {
        let mut i = model[&id].clone();
        i.status = Status::Done;
        let replaced = s.insert(i.clone()).unwrap();
        assert_eq!(replaced.status, model[&id].status);
        model.insert(id, i);
    }
    assert_eq!(tree_len(), 27, "three moved to the table");
    assert_eq!(s.remove(&7).map(|i| i.id), Some(7));
    assert_eq!(s.remove(&40).map(|i| i.id), Some(40));
    model.remove(&7);
    model.remove(&40);
    assert_eq!(tree_len(), 26);
    assert_eq!(s.len(), model.len() as u64);
    assert!(s.keys().eq(model.keys().copied()), "both, in order");
    s.check().unwrap();
    let fresh = open(&h, &b);
    for id in 0..70 {
        assert_eq!(fresh.get(&id), model.get(&id).cloned(), "intent {id}");
    }
    assert!(fresh.iter().map(|(_, i)| i).eq(model.values().cloned()));
    // A record in the B-tree at or above the table's first id is never read, and the check
    // names it.
    StableBTreeMap::<u64, Vec<u8>, _>::load(h.tree.clone()).insert(
        100,
        head_record(&intent(100, 1, 1, Status::Open).split(NO_BODY).0),
    );
    assert_eq!(fresh.get(&100), None);
    let e = fresh.check().unwrap_err();
    assert!(e.contains("intent 100 is in the B-tree"), "{e}");
}

/// A head longer than a slot is written to the body slab, its slot saying where; written
/// again shorter it is back in its slot and its chunks are free.
#[test]
fn a_head_longer_than_a_slot_is_kept_in_the_slab() {
    let (mut s, h, b) = store();
    let mut i = intent(9, 10, 10, Status::Open);
    s.insert(i.clone());
    let (_, free) = s.body_chunks();
    i.reply_json = Some("r".repeat(600));
    s.insert(i.clone());
    s.check().unwrap();
    assert_eq!(
        open(&h, &b).get(&9),
        Some(i.clone()),
        "read again from the slab"
    );
    let (high, _) = s.body_chunks();
    i.reply_json = None;
    s.insert(i.clone());
    s.check().unwrap();
    assert_eq!(
        s.body_chunks(),
        (high, free + 3),
        "the spilled head's 3 chunks are free"
    );
    i.reply_json = Some("q".repeat(700));
    s.insert(i.clone());
    assert_eq!(s.remove(&9), Some(i));
    s.check().unwrap();
    assert_eq!(s.len(), 0);
}

/// A body reference whose length no chain of the slab holds is reported by the checked read
/// before anything is allocated for it (a spilled head's slot or a head may carry one).
#[test]
fn a_body_length_past_the_slab_is_reported_not_allocated() {
    let mut slab = BodySlab::init(VectorMemory::default());
    let r = slab.write(&[7; 600]);
    assert_eq!(slab.read_checked(r).unwrap(), vec![7; 600]);
    let huge = BodyRef { len: u32::MAX, ..r };
    assert!(slab
        .read_checked(huge)
        .unwrap_err()
        .contains("more than the slab's"));
    // A header counting more chunks than the memory holds is reported by the checks.
    let mem = VectorMemory::default();
    let mut slab = BodySlab::init(mem.clone());
    let r = slab.write(&[7; 600]);
    mem.write(8, &(1u32 << 30).to_le_bytes());
    let e = slab.read_checked(r).unwrap_err();
    assert!(e.contains("more than its memory holds"), "{e}");
    let e = slab.check(std::iter::once((1, r))).unwrap_err();
    assert!(e.contains("more than its memory holds"), "{e}");
}
