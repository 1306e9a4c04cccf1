//! Two descriptions a model could not tell apart. The similarity is the Jaccard index of the two
//! descriptions' word sets (`bus::words`: lower-cased, stop words out), in thousandths rounded
//! down: |A ∩ B| × 1000 / |A ∪ B|. Deterministic, and cheap enough to run at every registration.

use super::decl::{Overlap, ToolDecl};
use super::words::words;

/// At or over this a pair is a warning (never a refusal): four in five distinct words shared.
/// The host appends the same sentences to every prepare tool, so two distinct ICRC tools come
/// close: `prepare_icrc1_transfer` and `prepare_icrc2_approve` share 700‰, the packs' closest
/// pair; a copied description with a word or two changed is over it.
pub const OVERLAP_THRESHOLD_PERMILLE: u32 = 800;

/// The documented similarity of two texts, in thousandths (0 when both have no words).
pub fn similarity_permille(a: &str, b: &str) -> u32 {
    let (a, b) = (words(a), words(b));
    let union = a.union(&b).count();
    if union == 0 {
        return 0;
    }
    let shared = a.intersection(&b).count();
    (shared * 1000 / union) as u32
}

pub(super) fn warnings(decls: &[ToolDecl]) -> Vec<Overlap> {
    let mut sorted: Vec<&ToolDecl> = decls.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    sorted.dedup_by(|a, b| a.name == b.name);
    let mut out = vec![];
    for (i, a) in sorted.iter().enumerate() {
        for b in &sorted[i + 1..] {
            let s = similarity_permille(&a.description, &b.description);
            if s >= OVERLAP_THRESHOLD_PERMILLE {
                out.push(Overlap {
                    tools: [a.name.clone(), b.name.clone()],
                    similarity_permille: s,
                    message: format!(
                        "the descriptions of {} and {} share {s}‰ of their words (warning at {OVERLAP_THRESHOLD_PERMILLE}‰): a model may not tell them apart; say in each what the other does not do",
                        a.name, b.name
                    ),
                });
            }
        }
    }
    out
}
