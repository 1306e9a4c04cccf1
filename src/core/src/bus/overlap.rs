//! Two descriptions a model could not tell apart. The similarity is the Jaccard index of the two
//! descriptions' word sets (`bus::words`: lower-cased, stop words out), in thousandths rounded
//! down: |A ∩ B| × 1000 / |A ∪ B|. Deterministic, and cheap enough to run at every registration.

use super::decl::{Overlap, ToolDecl};
use super::words::{words, WordSet, WordSig};
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
    permille(a.intersection(b).count(), a.len(), b.len())
}

/// The similarity of two sets of `a` and `b` words that share `shared`.
fn permille(shared: usize, a: usize, b: usize) -> u32 {
    let union = a + b - shared;
    if union == 0 {
        return 0;
    }
    (shared * 1000 / union) as u32
}

/// Whether two sets may be similar enough for a warning: the similarity grows with what the
/// sets share, so at the most they could share it is an upper bound. A pair under it is not
/// compared word by word (at 50 forms, most of a registration's pairs).
fn may_reach_threshold(a: &WordSig, b: &WordSig) -> bool {
    permille(a.shared_at_most(b), a.len(), b.len()) >= OVERLAP_THRESHOLD_PERMILLE
}

/// The warnings a review lists at most: a form's tools whose descriptions are alike (or alike
/// the tools held) make pairs by the thousand, each with its message, past a reply's 2 MiB
/// (a form of 256 such tools made a registration trap).
pub const MAX_OVERLAPS: usize = 100;

pub(super) fn warnings(decls: &[ToolDecl]) -> Vec<Overlap> {
    warnings_against(decls, &[])
}

/// The pairs among `new`, and each new tool with each of `held`: each pair once, its names
/// sorted, pairs in name order. Pairs of two held tools are not looked at. Each description
/// is split into words once (a registration compares its tools with every tool held).
pub(super) fn warnings_against(new: &[ToolDecl], held: &[&ToolDecl]) -> Vec<Overlap> {
    let held_words: Vec<WordSet> = held.iter().map(|d| WordSet::of(&d.description)).collect();
    let held: Vec<(&ToolDecl, &WordSet)> = held.iter().copied().zip(held_words.iter()).collect();
    warnings_against_with(new, &held, usize::MAX).0
}

/// [`warnings_against`] with each held tool's description words already split, stopping at
/// `most` pairs: the first found (each new tool in name order, against the new tools after it
/// and then the held ones), and whether another was found after them (then the rest were not
/// compared).
pub(super) fn warnings_against_with(
    new: &[ToolDecl],
    held: &[(&ToolDecl, &WordSet)],
    most: usize,
) -> (Vec<Overlap>, bool) {
    let mut sorted: Vec<&ToolDecl> = new.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    sorted.dedup_by(|a, b| a.name == b.name);
    let new_words: Vec<WordSet> = sorted.iter().map(|d| WordSet::of(&d.description)).collect();
    let mut out = vec![];
    let mut more = false;
    'pairs: for (i, (a, aw)) in sorted.iter().zip(&new_words).enumerate() {
        let later = sorted[i + 1..].iter().copied().zip(&new_words[i + 1..]);
        for (b, bw) in later.chain(held.iter().copied()) {
            // The bound first: most pairs stop there, before their names are compared.
            if !may_reach_threshold(aw.sig(), bw.sig()) || b.name == a.name {
                continue;
            }
            let s = jaccard_permille(aw, bw);
            if s >= OVERLAP_THRESHOLD_PERMILLE {
                if out.len() == most {
                    more = true;
                    break 'pairs;
                }
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
    (out, more)
}
