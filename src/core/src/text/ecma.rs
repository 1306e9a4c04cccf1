//! Profile patterns are ECMAScript regular expressions with the `u` flag: MCP clients compile a
//! JSON Schema `pattern` so, and the reference layer runs them so. The host runs them with
//! `regex-lite`, another dialect. This module accepts only the part of ECMAScript (`u` flag)
//! that it can read exactly as ECMAScript does, and writes the same pattern out in
//! `regex-lite`'s syntax, every character escaped, so that both engines match the same texts:
//!
//! - literals, `^` and `$` (start and end of the text: no flags are ever set), groups `(…)` and
//!   `(?:…)`, `|`, the quantifiers `* + ? {n} {n,} {n,m}` (bounds up to [`MAX_REPEAT`]) and their
//!   lazy forms;
//! - `.`, written out as ECMAScript reads it: any character but `\n`, `\r`, U+2028 and U+2029;
//! - classes `[…]` / `[^…]` of characters and ranges;
//! - the escapes `\f \n \r \t \v \0 \cX \xHH \uHHHH \u{…}` (a surrogate pair as one character),
//!   and `\` before a syntax character or `/` (and `-` in a class).
//!
//! Everything else is refused with the reason: what ECMAScript with the `u` flag refuses (inline
//! flags, `\z`, `\A`, a lone `{`, `}` or `]`, `\-` outside a class, an unknown escape, ...), and
//! what engines read differently or the host does not run: `\d \w \s \b` and their negations
//! (ASCII in ECMAScript, Unicode in other engines), `[` inside a class (a nested class or
//! `[:alpha:]` elsewhere), `&&`, `--` and `~~` in a class (set operations elsewhere), an empty
//! class, `\p{…}` (property names differ between engines; `regex-lite` has none), named groups,
//! lone surrogates, back references and lookarounds.

/// The largest repetition bound run (`a{1,1000}`); `regex-lite` grows with the bound.
pub const MAX_REPEAT: u32 = 1000;

fn invalid(detail: impl std::fmt::Display) -> String {
    format!("pattern refused: not valid in ECMAScript with the u flag ({detail})")
}

fn differs(what: &str, instead: &str) -> String {
    format!(
        "pattern refused: {what} is read differently by ECMAScript and other regular expression engines; write {instead}"
    )
}

fn not_run(what: &str) -> String {
    format!("pattern refused: {what} is not run by the tool host")
}

/// The `regex-lite` pattern that matches exactly the texts ECMAScript (`u` flag) matches with
/// `pattern`, or why the pattern is refused. A pattern ECMAScript refuses is refused as invalid
/// even when it also holds a construct that engines read differently (the whole pattern is read
/// first); a valid one with such a construct is refused with the first of them.
pub fn ecmascript_to_host(pattern: &str) -> Result<String, String> {
    read_pattern(pattern).map(|(host, _)| host)
}

/// What a pattern matches, shaped for the backtracking check (`super::backtrack`): which
/// characters each position reads and how positions follow one another. Assertions (`^`, `$`)
/// read nothing and are [`Node::Empty`] here: the check then sees more ways to match than
/// there are, never fewer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// One character from `set` (inclusive code point ranges), written at character `at`.
    Set {
        at: usize,
        set: Vec<(u32, u32)>,
    },
    Empty,
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    /// `node` read `min` to `max` times, the quantifier written at character `at`.
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        at: usize,
    },
}

/// [`ecmascript_to_host`], and the pattern's [`Node`].
pub fn read_pattern(pattern: &str) -> Result<(String, Node), String> {
    let mut p = Parser {
        c: pattern.chars().collect(),
        i: 0,
        out: String::with_capacity(pattern.len() * 2),
        depth: 0,
        refused: None,
    };
    let node = p.disjunction()?;
    if p.i < p.c.len() {
        // Only a ')' stops a top-level disjunction.
        return Err(invalid("a ')' without '('"));
    }
    match p.refused {
        Some(why) => Err(why),
        None => Ok((p.out, node)),
    }
}

struct Parser {
    c: Vec<char>,
    i: usize,
    out: String,
    depth: usize,
    /// The first construct that ECMAScript compiles but the host will not run.
    refused: Option<String>,
}

const SYNTAX: &str = "^$\\.*+?()[]{}|";

/// One escape's meaning.
enum Esc {
    Char(char),
    /// A class escape (`\d`, `\w`, `\s` and their negations).
    Class,
    /// A word boundary assertion (`\b`, `\B`).
    Boundary,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.c.get(self.i).copied()
    }
    fn peek_at(&self, k: usize) -> Option<char> {
        self.c.get(self.i + k).copied()
    }
    /// Notes a construct ECMAScript compiles but the host refuses; reading goes on.
    fn refuse(&mut self, why: String) {
        if self.refused.is_none() {
            self.refused = Some(why);
        }
    }

    fn disjunction(&mut self) -> Result<Node, String> {
        let mut alts = vec![];
        loop {
            let mut seq = vec![];
            while let Some(c) = self.peek() {
                if c == '|' || c == ')' {
                    break;
                }
                seq.push(self.term()?);
            }
            alts.push(Node::Concat(seq));
            if self.peek() == Some('|') {
                self.i += 1;
                self.out.push('|');
                continue;
            }
            return Ok(if alts.len() == 1 {
                alts.pop().expect("one")
            } else {
                Node::Alt(alts)
            });
        }
    }

    fn term(&mut self) -> Result<Node, String> {
        let c = self.peek().expect("a term starts at a character");
        let at = self.i;
        let one = |ch: char| Node::Set {
            at,
            set: vec![(ch as u32, ch as u32)],
        };
        let atom = match c {
            '^' | '$' => {
                self.i += 1;
                self.out.push_str(if c == '^' { "\\A" } else { "\\z" });
                self.no_quantifier(&c.to_string())?;
                return Ok(Node::Empty);
            }
            '(' => self.group()?,
            '[' => self.class()?,
            '.' => {
                self.i += 1;
                self.out.push_str("[^\\n\\r\\x{2028}\\x{2029}]");
                Node::Set {
                    at,
                    set: complement(&[(0xA, 0xA), (0xD, 0xD), (0x2028, 0x2029)]),
                }
            }
            '\\' => match self.escape(false)? {
                Esc::Char(ch) => {
                    push_char(&mut self.out, ch);
                    one(ch)
                }
                // Refused already; the output is not used.
                Esc::Class => {
                    self.out.push('x');
                    one('x')
                }
                Esc::Boundary => {
                    self.no_quantifier("\\b")?;
                    return Ok(Node::Empty);
                }
            },
            '*' | '+' | '?' => return Err(invalid(format!("nothing to repeat before '{c}'"))),
            '{' => return Err(invalid("a lone '{' (write \\{)")),
            '}' => return Err(invalid("a lone '}' (write \\})")),
            ']' => return Err(invalid("a lone ']' (write \\])")),
            other => {
                self.i += 1;
                push_char(&mut self.out, other);
                one(other)
            }
        };
        self.quantifier(atom)
    }

    fn at_quantifier(&self) -> bool {
        matches!(self.peek(), Some('*' | '+' | '?' | '{'))
    }

    fn no_quantifier(&self, assertion: &str) -> Result<(), String> {
        if self.at_quantifier() {
            return Err(invalid(format!(
                "a quantifier after the assertion '{assertion}'"
            )));
        }
        Ok(())
    }

    fn quantifier(&mut self, atom: Node) -> Result<Node, String> {
        let at = self.i;
        let (min, max) = match self.peek() {
            Some(q @ ('*' | '+' | '?')) => {
                self.i += 1;
                self.out.push(q);
                match q {
                    '*' => (0, None),
                    '+' => (1, None),
                    _ => (0, Some(1)),
                }
            }
            Some('{') => {
                self.i += 1;
                let lo = self
                    .number()
                    .ok_or_else(|| invalid("an incomplete quantifier '{'"))?;
                let hi = if self.peek() == Some(',') {
                    self.i += 1;
                    self.number()
                } else {
                    Some(lo)
                };
                if self.peek() != Some('}') {
                    return Err(invalid("an incomplete quantifier '{'"));
                }
                self.i += 1;
                if let Some(h) = hi {
                    if h < lo {
                        return Err(invalid(format!("numbers out of order in {{{lo},{h}}}")));
                    }
                }
                if lo > MAX_REPEAT || hi.is_some_and(|h| h > MAX_REPEAT) {
                    self.refuse(not_run(&format!("a repetition bound over {MAX_REPEAT}")));
                }
                match hi {
                    None => self.out.push_str(&format!("{{{lo},}}")),
                    Some(h) if h == lo => self.out.push_str(&format!("{{{lo}}}")),
                    Some(h) => self.out.push_str(&format!("{{{lo},{h}}}")),
                }
                (lo, hi)
            }
            _ => return Ok(atom),
        };
        if self.peek() == Some('?') {
            self.i += 1;
            self.out.push('?');
        }
        if self.at_quantifier() {
            return Err(invalid(
                "nothing to repeat: a quantifier after a quantifier",
            ));
        }
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
            at,
        })
    }

    /// Decimal digits, if any (saturating: a huge bound is refused by its size).
    fn number(&mut self) -> Option<u32> {
        let start = self.i;
        let mut n: u32 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            n = n.saturating_mul(10).saturating_add(d);
            self.i += 1;
        }
        (self.i > start).then_some(n)
    }

    fn group(&mut self) -> Result<Node, String> {
        self.i += 1;
        if self.peek() == Some('?') {
            match (self.peek_at(1), self.peek_at(2)) {
                (Some(':'), _) => self.i += 2,
                (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => {
                    return Err(not_run("a lookaround"))
                }
                (Some('<'), _) => return Err(not_run("a named group (write (?:...) or (...))")),
                _ if self.is_modifier_group() => {
                    return Err(not_run(
                        "a flag modifier group such as (?i:...) (patterns take no flags)",
                    ))
                }
                _ => {
                    return Err(invalid(
                        "an inline flag or an unknown group '(?' (patterns take no flags)",
                    ))
                }
            }
        }
        self.depth += 1;
        if self.depth > 64 {
            return Err(not_run("groups nested deeper than 64"));
        }
        self.out.push_str("(?:");
        let node = self.disjunction()?;
        if self.peek() != Some(')') {
            return Err(invalid("a '(' without ')'"));
        }
        self.i += 1;
        self.depth -= 1;
        self.out.push(')');
        Ok(node)
    }

    /// `(?ims-ims:` (ECMAScript 2025 modifiers), after the `(`.
    fn is_modifier_group(&self) -> bool {
        let mut k = 1;
        let mut dash = false;
        let mut any = false;
        while let Some(c) = self.peek_at(k) {
            match c {
                'i' | 'm' | 's' => any = true,
                '-' if !dash => dash = true,
                ':' => return any,
                _ => return false,
            }
            k += 1;
        }
        false
    }

    fn class(&mut self) -> Result<Node, String> {
        let at = self.i;
        self.i += 1;
        let negated = self.peek() == Some('^');
        if negated {
            self.i += 1;
        }
        if self.peek() == Some(']') {
            self.refuse(differs(
                "an empty class ('[]' or '[^]'; in other engines a ']' first in a class is a literal)",
                "\\] for a literal ]",
            ));
        }
        let mut items: Vec<(char, char)> = vec![];
        loop {
            let Some(c) = self.peek() else {
                return Err(invalid("a '[' without ']'"));
            };
            if c == ']' {
                self.i += 1;
                break;
            }
            if c == '[' {
                self.refuse(differs(
                    "'[' inside a class (a nested class or [:alpha:] in other engines)",
                    "\\[",
                ));
            }
            for op in ["&&", "--", "~~"] {
                let mut it = op.chars();
                if Some(c) == it.next() && self.peek_at(1) == it.next() {
                    self.refuse(differs(
                        &format!("'{op}' inside a class (a set operation in other engines)"),
                        "one of the two characters escaped",
                    ));
                }
            }
            let a = self.class_atom()?;
            if self.peek() == Some('-') && !matches!(self.peek_at(1), Some(']') | None) {
                self.i += 1;
                let b = self.class_atom()?;
                let (Some(a), Some(b)) = (a, b) else {
                    return Err(invalid("a class escape such as \\d as a range end"));
                };
                if b < a {
                    return Err(invalid(format!(
                        "a range out of order in a class (U+{:04X} to U+{:04X})",
                        a as u32, b as u32
                    )));
                }
                items.push((a, b));
            } else if let Some(a) = a {
                items.push((a, a));
            }
        }
        if items.is_empty() {
            // Only an empty class or one of class escapes, both refused already.
            self.out.push('x');
            return Ok(Node::Set {
                at,
                set: vec![(0x78, 0x78)],
            });
        }
        self.out.push('[');
        if negated {
            self.out.push('^');
        }
        let mut set = Vec::with_capacity(items.len());
        for (a, b) in items {
            push_char(&mut self.out, a);
            if b != a {
                self.out.push('-');
                push_char(&mut self.out, b);
            }
            set.push((a as u32, b as u32));
        }
        self.out.push(']');
        let set = normalize(set);
        Ok(Node::Set {
            at,
            set: if negated { complement(&set) } else { set },
        })
    }

    /// A character of a class, or `None` for a class escape (`\d`, refused already).
    fn class_atom(&mut self) -> Result<Option<char>, String> {
        match self.peek() {
            Some('\\') => match self.escape(true)? {
                Esc::Char(c) => Ok(Some(c)),
                Esc::Class | Esc::Boundary => Ok(None),
            },
            Some(c) => {
                self.i += 1;
                Ok(Some(c))
            }
            None => Err(invalid("a '[' without ']'")),
        }
    }

    /// One escape, `\` included.
    fn escape(&mut self, in_class: bool) -> Result<Esc, String> {
        self.i += 1;
        let Some(c) = self.peek() else {
            return Err(invalid("a '\\' at the end"));
        };
        self.i += 1;
        let class_words = |p: &mut Self, instead: &str| {
            p.refuse(differs(
                &format!("'\\{c}' (ASCII in ECMAScript, Unicode in other engines)"),
                instead,
            ));
            Ok(Esc::Class)
        };
        let ch = match c {
            'd' => return class_words(self, "[0-9]"),
            'D' => return class_words(self, "[^0-9]"),
            'w' => return class_words(self, "[A-Za-z0-9_]"),
            'W' => return class_words(self, "[^A-Za-z0-9_]"),
            's' => return class_words(self, "the spaces meant, such as [ \\t]"),
            'S' => return class_words(self, "the spaces meant, such as [^ \\t]"),
            'b' if in_class => {
                self.refuse(differs(
                    "'\\b' inside a class (a backspace in ECMAScript)",
                    "\\x08",
                ));
                '\u{8}'
            }
            'B' if in_class => return Err(invalid("the escape '\\B' in a class")),
            'b' | 'B' => {
                self.refuse(differs(
                    &format!(
                        "the word boundary '\\{c}' (ASCII in ECMAScript, Unicode in other engines)"
                    ),
                    "the boundary out with ^, $ or a class",
                ));
                return Ok(Esc::Boundary);
            }
            'p' | 'P' if self.peek() == Some('{') => {
                return Err(not_run(&format!(
                "a Unicode property class '\\{c}{{...}}' (property names differ between engines)"
            )))
            }
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            'c' => match self.peek() {
                Some(l) if l.is_ascii_alphabetic() => {
                    self.i += 1;
                    char::from(l as u8 % 32)
                }
                _ => return Err(invalid("'\\c' without a letter")),
            },
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => '\0',
            '0'..='9' if in_class => return Err(invalid(format!("the escape '\\{c}' in a class"))),
            '1'..='9' => return Err(not_run("a back reference")),
            '0' => return Err(invalid("a decimal escape '\\0' followed by a digit")),
            'x' => {
                let v = self
                    .hex_digits(2)
                    .ok_or_else(|| invalid("'\\x' without two hex digits"))?;
                char::from_u32(v).expect("two hex digits are a character")
            }
            'u' => self.unicode_escape()?,
            '-' if in_class => '-',
            c if SYNTAX.contains(c) || c == '/' => c,
            'z' => return Err(invalid("the escape '\\z' (write $ for the end)")),
            'A' => return Err(invalid("the escape '\\A' (write ^ for the start)")),
            other => return Err(invalid(format!("the escape '\\{other}'"))),
        };
        Ok(Esc::Char(ch))
    }

    fn hex_digits(&mut self, n: usize) -> Option<u32> {
        let mut v = 0u32;
        for k in 0..n {
            v = v * 16 + self.peek_at(k)?.to_digit(16)?;
        }
        self.i += n;
        Some(v)
    }

    /// `\uHHHH` (a surrogate pair `\uHHHH\uHHHH` is one character) or `\u{H...}`.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let v = if self.peek() == Some('{') {
            self.i += 1;
            let mut v: u32 = 0;
            let mut digits = 0;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                v = v.saturating_mul(16).saturating_add(d);
                digits += 1;
                self.i += 1;
            }
            if digits == 0 || self.peek() != Some('}') || v > 0x10FFFF {
                return Err(invalid("a '\\u{...}' escape that is not a code point"));
            }
            self.i += 1;
            v
        } else {
            let v = self
                .hex_digits(4)
                .ok_or_else(|| invalid("'\\u' without four hex digits"))?;
            if (0xD800..0xDC00).contains(&v)
                && self.peek() == Some('\\')
                && self.peek_at(1) == Some('u')
            {
                let save = self.i;
                self.i += 2;
                match self.hex_digits(4) {
                    Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                        return Ok(
                            char::from_u32(0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00))
                                .expect("a surrogate pair is a character"),
                        );
                    }
                    _ => self.i = save,
                }
            }
            v
        };
        Ok(char::from_u32(v).unwrap_or_else(|| {
            self.refuse(not_run(
                "a lone surrogate (U+D800 to U+DFFF), which no text holds",
            ));
            'x'
        }))
    }
}

/// Ranges sorted and merged (touching ones too).
fn normalize(mut set: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    set.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(set.len());
    for (a, b) in set {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The code points not in `set` (sorted and merged), up to U+10FFFF.
fn complement(set: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = vec![];
    let mut next = 0u32;
    for &(a, b) in set {
        if a > next {
            out.push((next, a - 1));
        }
        next = b + 1;
    }
    if next <= 0x10FFFF {
        out.push((next, 0x10FFFF));
    }
    out
}

/// A character in `regex-lite` syntax that means only itself, anywhere in a pattern.
fn push_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_same_pattern_with_every_character_escaped() {
        assert_eq!(ecmascript_to_host("^[a-z]+$").unwrap(), "\\A[a-z]+\\z");
        assert_eq!(
            ecmascript_to_host("a.b").unwrap(),
            "a[^\\n\\r\\x{2028}\\x{2029}]b"
        );
        assert_eq!(
            ecmascript_to_host("(x|y){2,3}?-").unwrap(),
            "(?:x|y){2,3}?\\x{2D}"
        );
        assert_eq!(ecmascript_to_host("\\uD83D\\uDE00").unwrap(), "\\x{1F600}");
    }
}
