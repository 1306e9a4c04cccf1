//! The working set for one request: a deterministic keyword-and-usage score, no embeddings and
//! no other call. Pinned tools always come and count against the limit; ties go by name.

use super::decl::ToolDecl;
use std::collections::{BTreeMap, BTreeSet};

pub const DEFAULT_LIMIT: usize = 6;
pub const MAX_LIMIT: usize = 32;

/// How often each tool was called (per owner), by name.
pub type Usage = BTreeMap<String, u64>;

/// The documented score of one tool for a query (higher is better).
pub fn score(query: &str, decl: &ToolDecl, calls: u64) -> u64 {
    let _ = (query, decl, calls);
    unimplemented!("bus helper")
}

/// At most `limit` tools: the pinned ones present first, then by score, ties by name. Tools
/// that score 0 on the query are still offered when there is room.
pub fn select<'a>(
    decls: &'a [ToolDecl],
    query: &str,
    limit: usize,
    pinned: &BTreeSet<String>,
    usage: &Usage,
) -> Vec<&'a ToolDecl> {
    let _ = (decls, query, limit, pinned, usage);
    unimplemented!("bus helper")
}

/// The names a caller expects that the bus lacks, in the caller's order, without repeats.
pub fn missing(decls: &[ToolDecl], names: &[String]) -> Vec<String> {
    let _ = (decls, names);
    unimplemented!("bus helper")
}
