//! The one tokenizer selection and overlap share: lower-case, split on every character that is
//! not a letter or a digit (so `_` splits too), common English stop words left out, and a
//! plural `s` taken off (`transfers` matches `transfer`).

use std::collections::BTreeSet;

/// Words that say nothing about which tool fits; left out of queries and descriptions alike.
pub const STOP_WORDS: [&str; 48] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "has",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on",
    "or", "our", "so", "such", "than", "that", "the", "their", "then", "this", "to", "was", "we",
    "what", "when", "which", "with", "you", "your",
];

/// The distinct words of `text`, as the score and the overlap count them.
pub fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(singular)
        .collect()
}

/// `transfers` → `transfer`; short words and `-ss` endings (`address`) stay as they are.
fn singular(w: String) -> String {
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        w[..w.len() - 1].to_string()
    } else {
        w
    }
}
