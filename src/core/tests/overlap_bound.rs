//! The overlap review reads each pair's word signatures first and compares words only where
//! the signatures allow a warning. These tests hold it to the rule as documented: the bound
//! is never under what two sets share, and the warnings are those of every pair compared word
//! by word (`similarity_permille`), over word sets large enough for the signatures' bits to
//! collide and pairs made to sit around the threshold.

use proptest::prelude::*;
use serde_json::json;
use std::collections::BTreeSet;
use tool_host_core::bus::*;

fn decl(name: &str, description: &str) -> ToolDecl {
    ToolDecl {
        name: name.into(),
        title: name.into(),
        description: description.into(),
        effect: Some(EffectLabel::Readonly),
        input_schema: json!({ "type": "object", "properties": {}, "additionalProperties": false }),
        output_schema: None,
        source: ToolSource::Builtin,
    }
}

/// Word `i` of a vocabulary of distinct words (none a stop word, none ending in `s`).
fn word(i: usize) -> String {
    format!("w{i}x")
}

/// A description of the words `ids` (repeats and order do not matter to the sets).
fn text(ids: &[usize]) -> String {
    ids.iter().map(|i| word(*i)).collect::<Vec<_>>().join(" ")
}

/// Every pair at or over the threshold, by `similarity_permille`: the rule without the bound.
fn naive(new: &[ToolDecl], held: &[ToolDecl]) -> BTreeSet<([String; 2], u32)> {
    let mut out = BTreeSet::new();
    for (i, a) in new.iter().enumerate() {
        for b in new[i + 1..].iter().chain(held.iter()) {
            if a.name == b.name {
                continue;
            }
            let s = similarity_permille(&a.description, &b.description);
            if s >= OVERLAP_THRESHOLD_PERMILLE {
                let mut tools = [a.name.clone(), b.name.clone()];
                tools.sort();
                out.insert((tools, s));
            }
        }
    }
    out
}

/// A base set of words and variants of it: some words taken out, some put in, so that pairs
/// fall on both sides of the threshold.
fn sets() -> impl Strategy<Value = Vec<Vec<usize>>> {
    (
        prop::collection::vec(0usize..3000, 1..90),
        prop::collection::vec(
            (
                prop::collection::vec(any::<prop::sample::Index>(), 0..12),
                prop::collection::vec(0usize..3000, 0..12),
            ),
            1..12,
        ),
        prop::collection::vec(prop::collection::vec(0usize..3000, 0..60), 0..4),
    )
        .prop_map(|(base, variants, others)| {
            let mut out = vec![base.clone()];
            for (drop, add) in variants {
                let mut v = base.clone();
                for d in drop {
                    if !v.is_empty() {
                        let at = d.index(v.len());
                        v.remove(at);
                    }
                }
                v.extend(add);
                out.push(v);
            }
            out.extend(others);
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_bound_is_never_under_what_two_sets_share(all in sets()) {
        let sets: Vec<WordSet> = all.iter().map(|ids| WordSet::of(&text(ids))).collect();
        for a in &sets {
            for b in &sets {
                let shared = a.intersection(b).count();
                prop_assert!(a.sig().shared_at_most(b.sig()) >= shared);
                prop_assert_eq!(a.sig().len(), a.len());
            }
        }
    }

    #[test]
    fn the_review_warns_of_every_pair_the_words_do(all in sets(), split in 0usize..16) {
        let decls: Vec<ToolDecl> = all
            .iter()
            .enumerate()
            .map(|(i, ids)| decl(&format!("t{i:02}"), &text(ids)))
            .collect();
        let split = split.min(decls.len());
        let (new, held) = decls.split_at(split);
        let held_refs: Vec<&ToolDecl> = held.iter().collect();
        let got: BTreeSet<([String; 2], u32)> = review(new, &held_refs)
            .overlaps
            .into_iter()
            .map(|o| (o.tools, o.similarity_permille))
            .collect();
        prop_assert_eq!(got, naive(new, held));
    }
}

/// Signatures collide (more words than bits): the bound is still never under what the sets
/// share, and it is loose for large sets (most of their bits set) and tight for small sets on
/// distinct bits.
#[test]
fn colliding_signatures_still_bound_from_above() {
    let a = WordSet::of(&text(&(0..400).collect::<Vec<_>>()));
    let b = WordSet::of(&text(&(400..800).collect::<Vec<_>>()));
    let c = WordSet::of(&text(&(200..600).collect::<Vec<_>>()));
    assert_eq!(a.intersection(&b).count(), 0);
    assert_eq!(a.intersection(&c).count(), 200);
    // 400 words on 256 bits: most bits set in both, so the bound is far over what the sets
    // share (nothing) and never under it.
    assert!(a.sig().shared_at_most(b.sig()) > 300);
    assert!(a.sig().shared_at_most(c.sig()) >= 200);
    // Three words each: found on bits apart (the word ids chosen so), the bound is 0.
    let bits_apart = (0..200)
        .map(|k| {
            (
                WordSet::of(&text(&[3 * k, 3 * k + 1, 3 * k + 2])),
                WordSet::of(&text(&[600 + 3 * k, 601 + 3 * k, 602 + 3 * k])),
            )
        })
        .find(|(x, y)| x.sig().shared_at_most(y.sig()) == 0);
    assert!(
        bits_apart.is_some(),
        "some three-word sets on distinct bits"
    );
    let e = WordSet::of("");
    assert_eq!(e.sig().shared_at_most(e.sig()), 0);
    assert_eq!(e.sig().shared_at_most(a.sig()), 0);
}
