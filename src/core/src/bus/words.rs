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

/// A tool's words as selection and the overlap check count them (name, title, input names,
/// description), split once: the catalog keeps them with the tool, so that choosing tools for a
/// request or reviewing a form against every tool held tokenizes only what is new.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeclWords {
    pub name: BTreeSet<String>,
    pub title: BTreeSet<String>,
    pub inputs: BTreeSet<String>,
    pub description: BTreeSet<String>,
}

impl DeclWords {
    pub fn of(d: &super::ToolDecl) -> DeclWords {
        let inputs: String = d
            .input_schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        DeclWords {
            name: words(&d.name),
            title: words(&d.title),
            inputs: words(&inputs),
            description: words(&d.description),
        }
    }
}
