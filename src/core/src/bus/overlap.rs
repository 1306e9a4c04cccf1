//! Two descriptions a model could not tell apart. The similarity is the Jaccard index of the two
//! descriptions' word sets (`bus::words`: lower-cased, stop words out), in thousandths rounded
//! down: |A ∩ B| × 1000 / |A ∪ B|. Deterministic, and cheap enough to run at every registration.

use super::decl::{Overlap, ToolDecl};
use super::words::words;
use std::collections::BTreeSet;

/// At or over this a pair is a warning (never a refusal): four in five distinct words shared.
/// The host appends the same sentences to every prepare tool, so two distinct ICRC tools come
/// close: `prepare_icrc1_transfer` and `prepare_icrc2_approve` share 700‰, the packs' closest
/// pair; a copied description with a word or two changed is over it.
pub const OVERLAP_THRESHOLD_PERMILLE: u32 = 800;

/// The documented similarity of two texts, in thousandths (0 when both have no words).
pub fn similarity_permille(a: &str, b: &str) -> u32 {
    jaccard_permille(&words(a), &words(b))
}

fn jaccard_permille(a: &BTreeSet<String>, b: &BTreeSet<String>) -> u32 {
    let shared = a.intersection(b).count();
    let union = a.len() + b.len() - shared;
    if union == 0 {
        return 0;
    }
    (shared * 1000 / union) as u32
}

pub(super) fn warnings(decls: &[ToolDecl]) -> Vec<Overlap> {
    warnings_against(decls, &[])
}

/// The pairs among `new`, and each new tool with each of `held`: each pair once, its names
/// sorted, pairs in name order. Pairs of two held tools are not looked at. Each description
/// is split into words once (a registration compares its tools with every tool held).
pub(super) fn warnings_against(new: &[ToolDecl], held: &[&ToolDecl]) -> Vec<Overlap> {
    let held_words: Vec<BTreeSet<String>> = held.iter().map(|d| words(&d.description)).collect();
    let held: Vec<(&ToolDecl, &BTreeSet<String>)> =
        held.iter().copied().zip(held_words.iter()).collect();
    warnings_against_with(new, &held)
}

/// [`warnings_against`] with each held tool's description words already split.
pub(super) fn warnings_against_with(
    new: &[ToolDecl],
    held: &[(&ToolDecl, &BTreeSet<String>)],
) -> Vec<Overlap> {
    let mut sorted: Vec<&ToolDecl> = new.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    sorted.dedup_by(|a, b| a.name == b.name);
    let new_words: Vec<BTreeSet<String>> = sorted.iter().map(|d| words(&d.description)).collect();
    let mut out = vec![];
    for (i, (a, aw)) in sorted.iter().zip(&new_words).enumerate() {
        let later = sorted[i + 1..].iter().copied().zip(&new_words[i + 1..]);
        for (b, bw) in later.chain(held.iter().copied()) {
            if b.name == a.name {
                continue;
            }
            let s = jaccard_permille(aw, bw);
            if s >= OVERLAP_THRESHOLD_PERMILLE {
                let mut tools = [a.name.clone(), b.name.clone()];
                tools.sort();
                out.push(Overlap {
                    message: format!(
                        "the descriptions of {} and {} share {s}‰ of their words (warning at {OVERLAP_THRESHOLD_PERMILLE}‰): a model may not tell them apart; say in each what the other does not do",
                        tools[0], tools[1]
                    ),
                    tools,
                    similarity_permille: s,
                });
            }
        }
    }
    out.sort_by(|a, b| a.tools.cmp(&b.tools));
    out.dedup_by(|a, b| a.tools == b.tools);
    out
}
