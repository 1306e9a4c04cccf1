//! The one tokenizer selection and overlap share: lower-case, split on every character that is
//! not a letter or a digit (so `_` splits too), common English stop words left out, and a
//! plural `s` taken off (`transfers` matches `transfer`).

use std::collections::BTreeSet;

/// Words that say nothing about which tool fits; left out of queries and descriptions alike.
/// Sorted, for a binary search (a test holds it so).
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
        .map(lower)
        .filter(|w| STOP_WORDS.binary_search(&w.as_str()).is_err())
        .map(singular)
        .collect()
}

/// `w` in lower case: an ASCII word by the byte (most are, and the general case maps each
/// character through Unicode's tables: it cost a tool's words ~40 % of their split).
fn lower(w: &str) -> String {
    if w.is_ascii() {
        w.to_ascii_lowercase()
    } else {
        w.to_lowercase()
    }
}

/// `transfers` → `transfer`; short words and `-ss` endings (`address`) stay as they are.
fn singular(mut w: String) -> String {
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        w.pop();
    }
    w
}

/// A description's distinct words ([`words`]) with their [`WordSig`]: what the overlap review
/// keeps of each tool held, so that most pairs are told apart without comparing words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WordSet {
    set: BTreeSet<String>,
    sig: WordSig,
}

impl WordSet {
    pub fn of(text: &str) -> WordSet {
        WordSet::from(words(text))
    }

    pub fn sig(&self) -> &WordSig {
        &self.sig
    }
}

impl From<BTreeSet<String>> for WordSet {
    fn from(set: BTreeSet<String>) -> WordSet {
        WordSet {
            sig: WordSig::of(&set),
            set,
        }
    }
}

impl std::ops::Deref for WordSet {
    type Target = BTreeSet<String>;
    fn deref(&self) -> &BTreeSet<String> {
        &self.set
    }
}

/// A set of words counted and hashed into 256 bits. A word of one set whose bit the other's
/// lacks is in that set only, so two signatures bound from above what their sets share
/// ([`WordSig::shared_at_most`]): never less than the sets share, whatever the hash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WordSig {
    len: usize,
    bits: [u64; 4],
}

impl WordSig {
    pub fn of(set: &BTreeSet<String>) -> WordSig {
        let mut bits = [0u64; 4];
        for w in set {
            let bit = word_bit(w);
            bits[bit / 64] |= 1 << (bit % 64);
        }
        WordSig {
            len: set.len(),
            bits,
        }
    }

    /// The number of words in the set.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// An upper bound on the number of words the two sets share.
    pub fn shared_at_most(&self, other: &WordSig) -> usize {
        let only = |a: &WordSig, b: &WordSig| -> usize {
            (0..4)
                .map(|i| (a.bits[i] & !b.bits[i]).count_ones() as usize)
                .sum()
        };
        // Each bit set in one signature only is one word of that set at least, not in the
        // other.
        (self.len - only(self, other)).min(other.len - only(other, self))
    }
}

/// A word's bit (0 to 255): FNV-1a of its bytes, folded.
fn word_bit(w: &str) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in w.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    ((h ^ (h >> 32) ^ (h >> 16)) & 0xff) as usize
}

/// A tool's words as selection and the overlap check count them (name, title, input names,
/// description), split once: the catalog keeps them with the tool, so that choosing tools for a
/// request or reviewing a form against every tool held tokenizes only what is new.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeclWords {
    pub name: BTreeSet<String>,
    pub title: BTreeSet<String>,
    pub inputs: BTreeSet<String>,
    pub description: WordSet,
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
            description: WordSet::of(&d.description),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stop_words_are_sorted_for_the_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        for w in STOP_WORDS {
            assert!(words(&format!("{w} {} x", w.to_uppercase())) == ["x".to_string()].into());
        }
    }

    /// The words as every character is mapped through Unicode's lower case and each stop word
    /// compared in turn: what [`words`] reads faster.
    fn plainly(text: &str) -> BTreeSet<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| w.to_lowercase())
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .map(|w| {
                if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                    w[..w.len() - 1].to_string()
                } else {
                    w
                }
            })
            .collect()
    }

    proptest! {
        #[test]
        fn words_are_those_read_plainly(
            text in "([A-Za-z0-9 _.,'İΣσßÅéЖ-]|The|THE|Transfers|ADDRESS|ΣΑΣ|İS){0,40}",
            any_text in any::<String>(),
        ) {
            prop_assert_eq!(words(&text), plainly(&text));
            prop_assert_eq!(words(&any_text), plainly(&any_text));
        }
    }
}
