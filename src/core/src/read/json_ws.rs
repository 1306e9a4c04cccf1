//! JSON's whitespace (space, line feed, tab, carriage return) read by the word, not the byte:
//! byte loops cost ~27 instructions a byte on the IC (serde_json's whitespace skip among
//! them), ~3 more to validate a byte as UTF-8, and a model may pad a tool input with tens of
//! kilobytes of spaces, at its ends or inside.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// Eight spaces, the padding a model sends most: one comparison, not four.
const SPACES: u64 = ONES * b' ' as u64;

/// Runs of spaces shorter than this many words are left to the byte loops (copying them
/// apart would cost more than it saves).
const RUN_WORDS: usize = 8;

/// The high bit of each byte of `x` that is `c` (exact: no carry crosses a byte).
fn equal(x: u64, c: u8) -> u64 {
    let y = x ^ (ONES * u64::from(c));
    !(((y & LOW) + LOW) | y) & HIGH
}

fn word(b: &[u8; 8]) -> u64 {
    u64::from_le_bytes(*b)
}

/// Whether all eight bytes are JSON whitespace.
fn all_space(b: &[u8; 8]) -> bool {
    let x = word(b);
    x == SPACES || (equal(x, b' ') | equal(x, b'\n') | equal(x, b'\t') | equal(x, b'\r')) == HIGH
}

/// Whether 64 bytes are all spaces: eight loads, one branch.
fn spaces_64(b: &[u8; 64]) -> bool {
    let (w, _) = b.as_chunks::<8>();
    w.iter().fold(0, |acc, w| acc | (word(w) ^ SPACES)) == 0
}

fn space(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r')
}

/// The length of the whitespace `bytes` start with: spaces 64 bytes at a time, then any
/// whitespace 8 at a time, then byte by byte.
fn lead(bytes: &[u8]) -> usize {
    let (blocks, _) = bytes.as_chunks::<64>();
    let blocks = blocks.iter().take_while(|c| spaces_64(c)).count() * 64;
    let rest = &bytes[blocks..];
    let (words, _) = rest.as_chunks::<8>();
    let words = words.iter().take_while(|w| all_space(w)).count() * 8;
    blocks + words + rest[words..].iter().take_while(|b| space(**b)).count()
}

/// The length of the whitespace `bytes` end with ([`lead`] from the other end).
fn trail(bytes: &[u8]) -> usize {
    let (_, blocks) = bytes.as_rchunks::<64>();
    let blocks = blocks.iter().rev().take_while(|c| spaces_64(c)).count() * 64;
    let rest = &bytes[..bytes.len() - blocks];
    let (_, words) = rest.as_rchunks::<8>();
    let words = words.iter().rev().take_while(|w| all_space(w)).count() * 8;
    let rest = &rest[..rest.len() - words];
    blocks + words + rest.iter().rev().take_while(|b| space(**b)).count()
}

/// The range of `bytes` without the whitespace at either end (`start == end` when it is all
/// whitespace).
pub fn inner(bytes: &[u8]) -> (usize, usize) {
    let start = lead(bytes);
    (start, bytes.len() - trail(&bytes[start..]))
}

/// The runs of at least [`RUN_WORDS`] eight-byte words of spaces in `bytes` (words counted
/// from its start), as (offset, length): one comparison a word, a branch per 64 bytes in a run.
pub fn space_runs(bytes: &[u8]) -> Vec<(usize, usize)> {
    let (words, _) = bytes.as_chunks::<8>();
    let mut runs = vec![];
    let mut i = 0;
    while i < words.len() {
        if word(&words[i]) != SPACES {
            i += 1;
            continue;
        }
        let from = i;
        // Within a run, whole 64-byte blocks first.
        let (blocks, _) = bytes[i * 8..].as_chunks::<64>();
        i += blocks.iter().take_while(|c| spaces_64(c)).count() * 8;
        while i < words.len() && word(&words[i]) == SPACES {
            i += 1;
        }
        if i - from >= RUN_WORDS {
            runs.push((from * 8, (i - from) * 8));
        }
    }
    runs
}

/// Spaces to copy from: a long run costs a copy per KiB, not a push per byte.
const SPACE_BLOCK: &str = match std::str::from_utf8(&[b' '; 1024]) {
    Ok(s) => s,
    Err(_) => panic!("spaces are UTF-8"),
};

fn push_spaces(out: &mut String, mut n: usize) {
    while n > 0 {
        let k = n.min(SPACE_BLOCK.len());
        out.push_str(&SPACE_BLOCK[..k]);
        n -= k;
    }
}

/// `bytes` as text: exactly `String::from_utf8(bytes.to_vec()).ok()`, at a lower cost when
/// they hold long runs of spaces (a padded tool input, read at the canister's entry): a run is
/// copied, not validated, and what lies between is validated piece by piece. A space is never
/// part of a longer UTF-8 sequence, so the pieces are valid exactly when the whole is.
pub fn text(bytes: &[u8]) -> Option<String> {
    let mut out = String::with_capacity(bytes.len());
    let mut at = 0;
    for (from, n) in space_runs(bytes) {
        out.push_str(std::str::from_utf8(&bytes[at..from]).ok()?);
        push_spaces(&mut out, n);
        at = from + n;
    }
    out.push_str(std::str::from_utf8(&bytes[at..]).ok()?);
    Some(out)
}

/// Where a scan of JSON text is: inside a string or not, and after a backslash in one.
#[derive(Clone, Copy, Default)]
struct Lexed {
    in_string: bool,
    escaped: bool,
}

impl Lexed {
    /// The state after `bytes`, by JSON's lexical rule for strings (a quote opens or closes
    /// one; inside, a backslash escapes the byte after it).
    fn after(mut self, bytes: &[u8]) -> Lexed {
        for &b in bytes {
            if self.escaped {
                self.escaped = false;
            } else if self.in_string {
                match b {
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
            } else if b == b'"' {
                self.in_string = true;
            }
        }
        self
    }
}

/// `text` (a JSON text without whitespace at its ends) with each long run of spaces outside
/// its strings made one space, so that the JSON parser does not skip it byte by byte; `None`
/// when it has no such run. The same JSON: whitespace between tokens is one separator however
/// long (a run is never removed, so two tokens never join), and a run inside a string is kept.
pub fn squeezed(text: &str) -> Option<String> {
    let runs = space_runs(text.as_bytes());
    if runs.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut state = Lexed::default();
    let mut at = 0;
    for (from, n) in runs {
        // Runs and the text between them end at spaces: character boundaries.
        let piece = text.get(at..from)?;
        state = state.after(piece.as_bytes());
        out.push_str(piece);
        // (After a backslash the run's first space makes an invalid escape, and `escaped` is
        // left set into the next piece: the text is refused either way, by its own parse.)
        if state.in_string {
            push_spaces(&mut out, n);
        } else {
            out.push(' ');
        }
        at = from + n;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run at every alignment against the words, between tokens, inside a string, inside a
    /// number or a literal, after an escaped quote: read as serde_json reads it (two tokens
    /// never join), and as text the bytes as given.
    #[test]
    fn runs_at_every_alignment_read_as_serde_json_reads_them() {
        for lead in 0..8 {
            for n in [63, 64, 65, 71, 72, 80, 128] {
                let (pad, run) = (" ".repeat(lead), " ".repeat(n));
                for t in [
                    format!("[{pad}1{run}2]"),
                    format!("[{pad}12{run}]"),
                    format!("[{pad}tr{run}ue]"),
                    format!("[{pad}true{run}false]"),
                    format!("[{pad}\"a{run}b\"]"),
                    format!("{{\"k{pad}\":{run}\"v\\\\\"{run}}}"),
                    format!("[\"{pad}\\\"{run}\",{run}1]"),
                ] {
                    let ours = crate::read::json_value(&t).map_err(|e| e.to_string());
                    let theirs =
                        serde_json::from_str::<serde_json::Value>(&t).map_err(|e| e.to_string());
                    assert_eq!(ours, theirs, "{t:?}");
                    assert_eq!(text(t.as_bytes()).as_deref(), Some(t.as_str()));
                }
            }
        }
    }

    /// A long run outside strings reaches the parser as one space; inside a string, whole.
    #[test]
    fn a_run_outside_strings_is_one_space() {
        let run = " ".repeat(128);
        // The words the run covers whole become one space; the bytes beside them stay.
        let s = squeezed(&format!("[1,{run}2]")).expect("a run");
        assert_eq!(s.replace(' ', ""), "[1,2]");
        assert!(s.len() <= 5 + 2 * 7 + 1, "{s:?}");
        let kept = format!("[\"{run}\"]");
        assert_eq!(squeezed(&kept).as_deref(), Some(kept.as_str()));
        assert_eq!(squeezed("[1,  2]"), None);
        // After a string closes (an escaped quote and backslash in it), runs are outside again.
        let s = squeezed(&format!("[\"a\\\"\\\\\",{run}1]")).expect("a run");
        assert!(s.len() <= 12 + 2 * 7 + 1 + 2, "{s:?}");
    }
}
