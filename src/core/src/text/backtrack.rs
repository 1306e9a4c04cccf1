//! Exponential backtracking, found whatever its shape. An engine that backtracks (V8, and so
//! every JavaScript MCP client that checks a schema's `pattern`) tries every way a pattern can
//! read a text before it says no. When a repetition can read the same text in two ways, the
//! ways double with each repetition: `^(a?a?)+$` takes V8 8 s on 20 `a`s and a `!`, and 97 s on
//! 25. The reference's rule (no repeating group inside a repeating group) misses `(a?a?)+`,
//! `(a|a)+` and `(.?.)+`; this check finds them all.
//!
//! How: in the pattern's position automaton (one state per character set written, the
//! Glushkov automaton), a position `q` with two different paths from `q` back to `q` that read
//! the same text. Those are a strongly connected component of the automaton squared (pairs of
//! positions that step together on a common character) holding a pair `(q, q)` and a pair
//! `(p, p')` with `p != p'` (exponential degree of ambiguity, Weideman, van der Merwe, Berglund
//! and Watson, 2016). Two ways to take one step count too: a step written twice (`(a*)+`), or
//! reached through a part with two ways to read nothing (`(a(b?|c?))+`). A part that can read
//! nothing repeated at least twice is refused outright (`(a?){1000}`: ECMAScript counts empty
//! iterations towards the minimum). A bounded repetition `{n,m}` with `m > 1` is checked as if
//! unbounded, and assertions as if they read nothing, so some safe patterns are refused. Its
//! work is bounded ([`MAX_STEPS`]); past it the pattern is refused. Not found: polynomial
//! backtracking (`a*a*a*…`), whose degree is not bounded here.

use super::ecma::Node;

/// Pairs of successors looked at, at most (a pattern that needs more is refused).
pub const MAX_STEPS: usize = 1_000_000;

/// The position automaton: each position's character set and where it was written, and the
/// positions that may follow it.
struct Automaton {
    sets: Vec<(usize, Vec<(u32, u32)>)>,
    follow: Vec<Vec<usize>>,
}

/// A sub-pattern's positions: in how many ways it can read nothing (0, 1, or 2 for two or
/// more), which positions can read its first character and which its last, each listed once
/// per way to reach it (twice at most: two are enough to double).
struct Ends {
    empty: u8,
    first: Vec<usize>,
    last: Vec<usize>,
}

impl Ends {
    fn nothing() -> Ends {
        Ends {
            empty: 1,
            first: vec![],
            last: vec![],
        }
    }
}

/// `set` with each position `times` more times, each kept twice at most.
fn add(set: &mut Vec<usize>, more: &[usize], times: u8) {
    for _ in 0..times.min(2) {
        set.extend_from_slice(more);
    }
    set.sort_unstable();
    let mut kept = 0;
    for k in 0..set.len() {
        if kept < 2 || set[kept - 2] != set[k] {
            set[kept] = set[k];
            kept += 1;
        }
    }
    set.truncate(kept);
}

impl Automaton {
    fn link(&mut self, from: &[usize], to: &[usize]) {
        for &f in from {
            self.follow[f].extend_from_slice(to);
        }
    }

    /// The automaton's part for `node`, or the character of a repetition that reads nothing in
    /// many ways.
    fn build(&mut self, node: &Node) -> Result<Ends, usize> {
        Ok(match node {
            Node::Set { at, set } => {
                let k = self.sets.len();
                self.sets.push((*at, set.clone()));
                self.follow.push(vec![]);
                Ends {
                    empty: 0,
                    first: vec![k],
                    last: vec![k],
                }
            }
            Node::Empty | Node::Repeat { max: Some(0), .. } => Ends::nothing(),
            Node::Concat(parts) => {
                let mut acc = Ends::nothing();
                for part in parts {
                    let e = self.build(part)?;
                    // A way through `e` that reads nothing is one more way to end at `acc`'s
                    // last (kept in `last` below), so what follows is linked once per way.
                    self.link(&acc.last, &e.first);
                    let mut first = acc.first;
                    add(&mut first, &e.first, acc.empty);
                    let mut last = e.last;
                    add(&mut last, &acc.last, e.empty);
                    acc = Ends {
                        empty: (acc.empty * e.empty).min(2),
                        first,
                        last,
                    };
                }
                acc
            }
            Node::Alt(alts) => {
                let mut acc = Ends {
                    empty: 0,
                    first: vec![],
                    last: vec![],
                };
                for alt in alts {
                    let e = self.build(alt)?;
                    acc.empty = (acc.empty + e.empty).min(2);
                    add(&mut acc.first, &e.first, 1);
                    add(&mut acc.last, &e.last, 1);
                }
                acc
            }
            Node::Repeat { node, min, max, at } => {
                let e = self.build(node)?;
                // ECMAScript lets an iteration read nothing until `min` are done: a part that
                // can read nothing, repeated twice or more at least, has many ways to place
                // its empty iterations ((a?){1000} reads "aaa" in C(1000, 3) ways).
                if e.empty > 0 && *min >= 2 {
                    return Err(*at);
                }
                if max.is_none_or(|m| m > 1) {
                    self.link(&e.last, &e.first);
                }
                Ends {
                    // Past `min`, an iteration that reads nothing ends the repetition.
                    empty: if *min == 0 { 1 } else { e.empty },
                    ..e
                }
            }
        })
    }
}

fn overlap(a: &[(u32, u32)], b: &[(u32, u32)]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].1 < b[j].0 {
            i += 1;
        } else if b[j].1 < a[i].0 {
            j += 1;
        } else {
            return true;
        }
    }
    false
}

/// `Ok` when no repetition in the pattern can read one text in two ways; else why not, naming
/// where (a character of the pattern, counted from 1).
pub fn check(node: &Node) -> Result<(), String> {
    let mut a = Automaton {
        sets: vec![],
        follow: vec![],
    };
    let refused_at = |at: usize| {
        Err(format!(
            "pattern refused: a repetition that can read the same text in more than one way, at \
             code point {} (exponential backtracking in engines that backtrack, such as \
             JavaScript's; write each repeated part so that only one way fits)",
            at + 1
        ))
    };
    if let Err(at) = a.build(node) {
        return refused_at(at);
    }
    let n = a.sets.len();
    // A step written twice (`(a*)+` links `a` to itself in each repetition, `(a?b?)*` links `a`
    // to `b` in the sequence and in the repetition) is two ways to take it.
    let mut twice = vec![];
    for (p, f) in a.follow.iter_mut().enumerate() {
        f.sort_unstable();
        twice.extend(f.windows(2).filter(|w| w[0] == w[1]).map(|w| (p, w[0])));
        f.dedup();
    }
    let mut steps = 0usize;
    let mut count = |k: usize| {
        steps += k;
        if steps > MAX_STEPS {
            return Err(format!(
                "pattern refused: too intricate to check for exponential backtracking (over \
                 {MAX_STEPS} steps); write it with fewer alternatives or repetitions"
            ));
        }
        Ok(())
    };
    let refused = |q: usize| refused_at(a.sets[q].0);
    // Two ways to take one step on a loop: two ways around it.
    let mut component = vec![usize::MAX; n];
    let mut next = 0;
    components(
        n,
        0..n,
        |p, out| {
            count(a.follow[p].len())?;
            out.extend_from_slice(&a.follow[p]);
            Ok(())
        },
        |members| {
            members.iter().for_each(|&m| component[m] = next);
            next += 1;
            None
        },
    )?;
    if let Some(&(_, q)) = twice.iter().find(|(p, q)| component[*p] == component[*q]) {
        return refused(q);
    }
    // Two different paths around a loop that read the same text: a pair (q, q) and a pair of
    // two positions in one component of the automaton squared.
    let meet: Vec<bool> = (0..n * n)
        .map(|k| overlap(&a.sets[k / n].1, &a.sets[k % n].1))
        .collect();
    let found = components(
        n * n,
        (0..n).map(|q| q * n + q),
        |u, out| {
            let (f1, f2) = (&a.follow[u / n], &a.follow[u % n]);
            count(f1.len() * f2.len())?;
            for &q1 in f1 {
                out.extend(f2.iter().map(|&q2| q1 * n + q2).filter(|&w| meet[w]));
            }
            Ok(())
        },
        |members| {
            let diagonal = members.iter().find(|&&w| w / n == w % n);
            let apart = members.iter().any(|&w| w / n != w % n);
            diagonal.filter(|_| apart).map(|&w| w / n)
        },
    )?;
    match found {
        Some(q) => refused(q),
        None => Ok(()),
    }
}

/// Tarjan's walk: each node's visit number and the lowest one it reaches, the nodes of the
/// components not complete yet, and the path's frames.
struct Walk {
    index: Vec<u32>,
    low: Vec<u32>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: u32,
    /// The successors of the nodes on the walk's path, each frame's after its parent's.
    arena: Vec<usize>,
    /// The node, where its successors start in the arena, the next one to look at.
    frames: Vec<(usize, usize, usize)>,
}

const UNSEEN: u32 = u32::MAX;

impl Walk {
    fn enter(
        &mut self,
        w: usize,
        successors: &mut impl FnMut(usize, &mut Vec<usize>) -> Result<(), String>,
    ) -> Result<(), String> {
        self.index[w] = self.next;
        self.low[w] = self.next;
        self.next += 1;
        self.stack.push(w);
        self.on_stack[w] = true;
        let start = self.arena.len();
        self.frames.push((w, start, start));
        successors(w, &mut self.arena)
    }
}

/// Tarjan's strongly connected components of the nodes reachable from `roots`, without
/// recursion: `successors` writes a node's successors, `component` is shown each component
/// when it is complete and may stop the walk with an answer.
fn components(
    nodes: usize,
    roots: impl IntoIterator<Item = usize>,
    mut successors: impl FnMut(usize, &mut Vec<usize>) -> Result<(), String>,
    mut component: impl FnMut(&[usize]) -> Option<usize>,
) -> Result<Option<usize>, String> {
    let mut t = Walk {
        index: vec![UNSEEN; nodes],
        low: vec![0; nodes],
        on_stack: vec![false; nodes],
        stack: vec![],
        next: 0,
        arena: vec![],
        frames: vec![],
    };
    let mut members: Vec<usize> = vec![];
    for root in roots {
        if t.index[root] != UNSEEN {
            continue;
        }
        t.enter(root, &mut successors)?;
        while let Some(&(u, start, at)) = t.frames.last() {
            if at < t.arena.len() {
                let w = t.arena[at];
                t.frames.last_mut().expect("a frame").2 += 1;
                if t.index[w] == UNSEEN {
                    t.enter(w, &mut successors)?;
                } else if t.on_stack[w] {
                    t.low[u] = t.low[u].min(t.index[w]);
                }
                continue;
            }
            t.arena.truncate(start);
            t.frames.pop();
            if let Some(&(parent, _, _)) = t.frames.last() {
                t.low[parent] = t.low[parent].min(t.low[u]);
            }
            if t.low[u] == t.index[u] {
                members.clear();
                loop {
                    let w = t
                        .stack
                        .pop()
                        .expect("the component's nodes are on the stack");
                    t.on_stack[w] = false;
                    members.push(w);
                    if w == u {
                        break;
                    }
                }
                if let Some(answer) = component(&members) {
                    return Ok(Some(answer));
                }
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::super::ecma::read_pattern;
    use super::*;

    fn verdict(p: &str) -> Result<(), String> {
        check(&read_pattern(p).unwrap().1)
    }

    #[test]
    fn refuses_repetitions_that_read_one_text_two_ways() {
        let mut wrong = vec![];
        for (p, at) in [
            ("^(a?a?)+$", 5),
            ("(a|a)+", 4),
            ("^(.?.)+$", 5),
            ("x(?:[a-c]|b)*y", 11),
            ("(a|ab|b)*c", 7),
            ("^(a|a){1,30}$", 5),
            ("(?:(a)|b?a)*", 10),
            ("^[0-9]+(?:[0-9]*)+$", 11),
            ("^(?:a?b?)*$", 7),
            ("(a*)+", 2),
            // Found by review: empty iterations counted towards a minimum, and a part with two
            // ways to read nothing inside a loop (V8: 253 s and 148 s on four and 34 a's).
            ("^(?:a?){1000}$", 8),
            ("^(?:a|){30}$", 8),
            ("(?:|){30}", 6),
            ("^(?:a(?:b?|c?))+$", 5),
            ("^(?:a(?:|))+$", 5),
            ("^(?:[0-9](?: ?|-?))+$", 5),
            ("^(?:(?:b?|c?)a)+$", 14),
        ] {
            let Err(why) = verdict(p) else {
                wrong.push(format!("{p}: run"));
                continue;
            };
            assert!(why.contains("more than one way"), "{p}: {why}");
            if !why.contains(&format!("at code point {at} ")) {
                wrong.push(format!("{p}: {why} (expected character {at})"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn runs_repetitions_with_one_way_to_read() {
        for p in [
            "^[a-z]+$",
            "^(ab|cd)+$",
            "^[0-9]{3}-[0-9]{4}$",
            "^[0-9]+(\\.[0-9]+)?$",
            "^(a|ab)+$",
            "^(ab|a)+c$",
            "^([a-z]+-)*[a-z]+$",
            "^(a?)+$",
            "a*a*",
            "^.*foo.*$",
            "^[^@]+@[^@]+\\.[a-z]{2,}$",
            "((ab)*c)+",
            "(a|a){0}b",
            "^(?:a?){0,1000}$",
            "^(?:b?|c?)+$",
            "^(?:a?)+$",
            "^[0-9]*\\.?[0-9]*$",
            "^(?:[a-z0-9]-?)*[a-z0-9]$",
            "^\"(?:[^\"\\\\]|\\\\.)*\"$",
            "",
        ] {
            assert_eq!(verdict(p), Ok(()), "{p}");
        }
    }

    #[test]
    fn a_pattern_too_intricate_to_check_is_refused() {
        // 50 alternatives that each read almost any character, repeated: 50^4 pairs of
        // successors to look at.
        let p = format!("({})+", vec!["[^x]"; 50].join("|"));
        let why = verdict(&p).unwrap_err();
        assert!(
            why.contains("too intricate") || why.contains("more than one way"),
            "{why}"
        );
        let p = format!(
            "(?:{})+",
            (0..60)
                .map(|k| format!("\\u{{{:x}}}b", 0x100 + k))
                .collect::<Vec<_>>()
                .join("|")
        );
        assert_eq!(verdict(&p), Ok(()), "distinct alternatives: one way");
    }
}
