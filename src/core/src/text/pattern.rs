//! Patterns from profiles are run only when they are safe: short, no back references, no
//! lookarounds, no repeating group inside a repeating group (the reference's rule), no
//! repetition that reads one text in more than one way (exponential backtracking in engines
//! that backtrack, whatever its shape: [`super::backtrack`]), and read by the host exactly as
//! ECMAScript with the `u` flag reads them (MCP clients compile a schema's `pattern` so; see
//! [`super::ecma`]). `regex-lite` runs the rest, without backtracking blow-ups; the schemas
//! hand the same patterns to clients whose engines backtrack.

use regex_lite::Regex;

pub const MAX_PATTERN_CHARS: usize = 256;

/// Patterns compiled (or refused) lately, at most this many: a named type is read at each use,
/// and its pattern's checks run up to [`super::backtrack::MAX_STEPS`] steps, so 50 000 uses of
/// one intricate pattern (forms at the host's bound) cost past a message's limit in the
/// catalog's build. Cleared when full, so that it stays small.
const MEMO_PATTERNS: usize = 64;

thread_local! {
    static COMPILED: std::cell::RefCell<std::collections::HashMap<String, Result<Regex, String>>> =
        Default::default();
}

/// Compiles a profile pattern, or says why the layer will not run it (a pattern met lately is
/// taken from the memo: the same answer).
pub fn compile_pattern(p: &str) -> Result<Regex, String> {
    if let Some(known) = COMPILED.with(|m| m.borrow().get(p).cloned()) {
        return known;
    }
    let compiled = compile(p);
    COMPILED.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MEMO_PATTERNS {
            m.clear();
        }
        m.insert(p.to_string(), compiled.clone());
    });
    compiled
}

#[cfg(test)]
thread_local! {
    static COMPILES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn compile(p: &str) -> Result<Regex, String> {
    #[cfg(test)]
    COMPILES.with(|c| c.set(c.get() + 1));
    let n = p.chars().count();
    if n > MAX_PATTERN_CHARS {
        return Err(format!(
            "pattern refused: {n} characters, over {MAX_PATTERN_CHARS}"
        ));
    }
    scan(p)?;
    // Run as ECMAScript (u flag) reads it: the pattern is the schema's too.
    let (host, node) = super::ecma::read_pattern(p)?;
    super::backtrack::check(&node)?;
    Regex::new(&host).map_err(|e| {
        format!(
            "pattern refused: not a valid pattern ({})",
            first_line(&e.to_string())
        )
    })
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

struct Group {
    repeats_inside: bool,
}

fn scan(p: &str) -> Result<(), String> {
    let chars: Vec<char> = p.chars().collect();
    let mut stack: Vec<Group> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // Whether the atom just before a quantifier is a group with a repetition inside it.
        let mut group_repeats = false;
        match c {
            '\\' => {
                let next = chars.get(i + 1).copied();
                match next {
                    Some(d) if ('1'..='9').contains(&d) => {
                        return Err("pattern refused: a back reference".into());
                    }
                    Some('k') if chars.get(i + 2) == Some(&'<') => {
                        return Err("pattern refused: a back reference".into());
                    }
                    _ => {}
                }
                i += 2;
                if let Some(q) = quantifier_at(&chars, i) {
                    mark_repeat(&mut stack, q.repeats);
                    i += q.len;
                }
                continue;
            }
            '[' => {
                // A character class: skip to its closing bracket.
                let mut j = i + 1;
                if chars.get(j) == Some(&'^') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    if chars[j] == '\\' {
                        j += 1;
                    }
                    j += 1;
                }
                i = j + 1;
            }
            '(' => {
                let rest: String = chars[i + 1..chars.len().min(i + 4)].iter().collect();
                if rest.starts_with("?=")
                    || rest.starts_with("?!")
                    || rest.starts_with("?<=")
                    || rest.starts_with("?<!")
                {
                    return Err("pattern refused: a lookaround".into());
                }
                stack.push(Group {
                    repeats_inside: false,
                });
                i += 1;
                continue;
            }
            ')' => {
                let g = stack.pop().ok_or(
                    "pattern refused: not valid in ECMAScript with the u flag (a ')' without '(')",
                )?;
                group_repeats = g.repeats_inside;
                // What repeats inside a group repeats inside the groups around it too.
                if g.repeats_inside {
                    if let Some(outer) = stack.last_mut() {
                        outer.repeats_inside = true;
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
        if let Some(q) = quantifier_at(&chars, i) {
            if group_repeats && q.repeats {
                return Err("pattern refused: a repeating group inside a repeating group".into());
            }
            mark_repeat(&mut stack, q.repeats);
            i += q.len;
        }
    }
    if !stack.is_empty() {
        return Err(
            "pattern refused: not valid in ECMAScript with the u flag (a '(' without ')')".into(),
        );
    }
    Ok(())
}

fn mark_repeat(stack: &mut [Group], repeats: bool) {
    if repeats {
        if let Some(g) = stack.last_mut() {
            g.repeats_inside = true;
        }
    }
}

struct Quantifier {
    len: usize,
    /// `?` and `{0,1}` make an atom optional; the others repeat it.
    repeats: bool,
}

fn quantifier_at(chars: &[char], i: usize) -> Option<Quantifier> {
    let lazy = |len: usize| {
        if chars.get(i + len) == Some(&'?') {
            len + 1
        } else {
            len
        }
    };
    match chars.get(i)? {
        '*' | '+' => Some(Quantifier {
            len: lazy(1),
            repeats: true,
        }),
        '?' => Some(Quantifier {
            len: lazy(1),
            repeats: false,
        }),
        '{' => {
            let close = chars[i..].iter().position(|&c| c == '}')?;
            let body: String = chars[i + 1..i + close].iter().collect();
            let (lo, hi) = match body.split_once(',') {
                Some((a, b)) => (
                    a.trim().parse::<u32>().ok()?,
                    if b.trim().is_empty() {
                        None
                    } else {
                        Some(b.trim().parse::<u32>().ok()?)
                    },
                ),
                None => {
                    let n = body.trim().parse::<u32>().ok()?;
                    (n, Some(n))
                }
            };
            let _ = lo;
            let repeats = hi.is_none_or(|h| h > 1);
            Some(Quantifier {
                len: lazy(close + 1),
                repeats,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    /// A pattern met again is taken from the memo (each use of a named type reads it), with the
    /// same answer, accepted or refused; past the memo's size it is compiled again.
    #[test]
    fn a_pattern_met_again_is_not_compiled_again() {
        let count = || super::COMPILES.with(|c| c.get());
        let start = count();
        for _ in 0..1_000 {
            assert!(super::compile_pattern("^[a-z]{1,8}$")
                .unwrap()
                .is_match("abc"));
            assert!(super::compile_pattern("(a|a)*b").is_err());
        }
        assert_eq!(count() - start, 2);
        for k in 0..super::MEMO_PATTERNS {
            super::compile_pattern(&format!("^x{{{k}}}$")).unwrap();
        }
        super::compile_pattern("^[a-z]{1,8}$").unwrap();
        assert_eq!(count() - start, 3 + super::MEMO_PATTERNS);
    }

    use super::*;

    fn refused(p: &str) -> String {
        compile_pattern(p).unwrap_err()
    }

    #[test]
    fn runs_ordinary_patterns() {
        for p in [
            "^[a-z]+$",
            "^(ab|cd)+$",
            "^[0-9]{3}-[0-9]{4}$",
            "(a|b)?c",
            "^[0-9]+(\\.[0-9]+)?$",
            "x{2}y",
            "^(foo)*$",
        ] {
            assert!(compile_pattern(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn refuses_long_patterns() {
        assert!(refused(&"a".repeat(257)).contains("257"));
    }

    #[test]
    fn refuses_back_references() {
        assert!(refused("(a)\\1").contains("back reference"));
        assert!(refused("(?<x>a)\\k<x>").contains("back reference"));
    }

    #[test]
    fn refuses_lookarounds() {
        for p in ["a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b"] {
            assert!(refused(p).contains("lookaround"), "{p}");
        }
    }

    #[test]
    fn refuses_repeating_groups_inside_repeating_groups() {
        for p in [
            "(a+)+",
            "(a*)*",
            "^(\\w+\\s?)*$",
            "((ab)*c)+",
            "(a{2,})+",
            "([a-z]+)*",
            "((a+)b)+",
        ] {
            assert!(refused(p).contains("repeating group"), "{p}");
        }
        // A single repetition, or an optional group, is fine.
        for p in ["(a+)?", "(ab)+", "(a+){1}", "[(a+)]+"] {
            assert!(compile_pattern(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn refuses_what_regex_lite_cannot_run() {
        assert!(refused("\\p{L}+").contains("not run by the tool host"));
        assert!(refused("(unclosed").contains("'('"));
    }
}
