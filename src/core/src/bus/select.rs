//! The working set for one request: a deterministic keyword-and-usage score, no embeddings and
//! no other call. Pinned tools always come and count against the limit; ties go by name.
//!
//! The score (docs/bus.md has a worked example): the query's words (`bus::words`) are matched
//! against each field's words; every query word found in a field adds that field's weight
//! (name 8, title 4, input names 3, description 2), and the sum is multiplied by
//! `KEYWORD_UNIT`. Usage adds the bit length of the call count (⌊log2 calls⌋ + 1, 0 for
//! none), at most 64: less than one keyword match (≥ 2 × 100), so keywords always come first
//! and usage only breaks ties between tools that match alike.

use super::decl::ToolDecl;
use super::words::{words, DeclWords};
use std::collections::{BTreeMap, BTreeSet};

/// A query word found in the tool's name.
pub const NAME_WEIGHT: u64 = 8;
/// ... in its title.
pub const TITLE_WEIGHT: u64 = 4;
/// ... in the names of its inputs (the root properties of the input schema).
pub const INPUT_WEIGHT: u64 = 3;
/// ... in its description.
pub const DESCRIPTION_WEIGHT: u64 = 2;
/// What one weight point is worth against usage, whose term is at most 64.
pub const KEYWORD_UNIT: u64 = 100;

/// The usage term: the bit length of `calls` (0, 1, 2, 2, 3, 3, 3, 3, 4, ...), at most 64.
pub fn usage_term(calls: u64) -> u64 {
    u64::from(u64::BITS - calls.leading_zeros())
}

pub const DEFAULT_LIMIT: usize = 6;
pub const MAX_LIMIT: usize = 32;

/// How often each tool was called (per owner), by name.
pub type Usage = BTreeMap<String, u64>;

/// The documented score of one tool for a query (higher is better).
pub fn score(query: &str, decl: &ToolDecl, calls: u64) -> u64 {
    keyword_points(&words(query), &DeclWords::of(decl)) * KEYWORD_UNIT + usage_term(calls)
}

fn keyword_points(query: &BTreeSet<String>, w: &DeclWords) -> u64 {
    let fields = [
        (&w.name, NAME_WEIGHT),
        (&w.title, TITLE_WEIGHT),
        (&w.inputs, INPUT_WEIGHT),
        (&*w.description, DESCRIPTION_WEIGHT),
    ];
    query
        .iter()
        .map(|q| {
            fields
                .iter()
                .filter(|(w, _)| w.contains(q))
                .map(|(_, weight)| weight)
                .sum::<u64>()
        })
        .sum()
}

/// At most `limit` tools: the pinned ones present first (by name), then by score, ties by name.
/// Tools that score 0 on the query are still offered when there is room. When more tools are
/// pinned than `limit`, every pinned tool comes and nothing else: a pin is a promise that the
/// tool is always offered, and the limit is the admin's to raise.
pub fn select<'a>(
    decls: &'a [ToolDecl],
    query: &str,
    limit: usize,
    pinned: &BTreeSet<String>,
    usage: &Usage,
) -> Vec<&'a ToolDecl> {
    let kept: Vec<DeclWords> = decls.iter().map(DeclWords::of).collect();
    select_with(decls, &kept, query, limit, pinned, usage)
}

/// [`select`] with each tool's words already split (`kept[i]` is `decls[i]`'s).
pub fn select_with<'a, D: std::borrow::Borrow<ToolDecl>, W: std::borrow::Borrow<DeclWords>>(
    decls: &'a [D],
    kept: &[W],
    query: &str,
    limit: usize,
    pinned: &BTreeSet<String>,
    usage: &Usage,
) -> Vec<&'a ToolDecl> {
    debug_assert_eq!(decls.len(), kept.len(), "one entry of words per tool");
    let query = words(query);
    let decls: Vec<&'a ToolDecl> = decls.iter().map(|d| d.borrow()).collect();
    let mut chosen: Vec<&ToolDecl> = decls
        .iter()
        .copied()
        .filter(|d| pinned.contains(&d.name))
        .collect();
    chosen.sort_by(|a, b| a.name.cmp(&b.name));
    chosen.dedup_by(|a, b| a.name == b.name);
    let room = limit.saturating_sub(chosen.len());
    let mut rest: Vec<(u64, &ToolDecl)> = decls
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, d)| !pinned.contains(&d.name))
        .map(|(i, d)| {
            let calls = usage.get(&d.name).copied().unwrap_or(0);
            let points = match kept.get(i) {
                Some(w) => keyword_points(&query, w.borrow()),
                None => keyword_points(&query, &DeclWords::of(d)),
            };
            (points * KEYWORD_UNIT + usage_term(calls), d)
        })
        .collect();
    rest.sort_by(|(sa, a), (sb, b)| sb.cmp(sa).then_with(|| a.name.cmp(&b.name)));
    rest.dedup_by(|(_, a), (_, b)| a.name == b.name);
    chosen.extend(rest.into_iter().take(room).map(|(_, d)| d));
    chosen
}

/// The names a caller expects that the bus lacks, in the caller's order, without repeats.
pub fn missing<D: std::borrow::Borrow<ToolDecl>>(decls: &[D], names: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    names
        .iter()
        .filter(|n| !decls.iter().any(|d| &d.borrow().name == *n))
        .filter(|n| seen.insert(n.as_str()))
        .cloned()
        .collect()
}
