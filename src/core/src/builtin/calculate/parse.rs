//! The expression tree, by recursive descent over the tokens (precedence in the module above).
//! Nesting (brackets, unary minus, powers) is bounded so a deep expression is refused, not a
//! deep stack.

use super::lex::{Tok, Token};
use super::num::Val;
use super::CalcError;
use crate::issue::Code;
use num_rational::BigRational;

/// The deepest nesting read.
pub const MAX_DEPTH: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Sqrt,
    Abs,
    Round,
    Floor,
    Ceil,
    Ln,
    Log,
}

impl Func {
    const ALL: [(&'static str, Func); 7] = [
        ("sqrt", Func::Sqrt),
        ("abs", Func::Abs),
        ("round", Func::Round),
        ("floor", Func::Floor),
        ("ceil", Func::Ceil),
        ("ln", Func::Ln),
        ("log", Func::Log),
    ];
    pub fn name(self) -> &'static str {
        Func::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("", |(n, _)| n)
    }
}

#[derive(Clone, Debug)]
pub enum Node {
    Num(BigRational, usize),
    Neg(Box<Node>, usize),
    Bin(char, Box<Node>, Box<Node>, usize),
    Call(Func, Box<Node>, usize),
}

impl Node {
    pub fn eval(&self) -> Result<Val, CalcError> {
        match self {
            Node::Num(n, pos) => Val::exact(n.clone(), *pos),
            Node::Neg(x, pos) => x.eval()?.neg(*pos),
            Node::Bin(op, a, b, pos) => {
                let (a, b) = (a.eval()?, b.eval()?);
                match op {
                    '+' => a.add(&b, *pos),
                    '-' => a.sub(&b, *pos),
                    '*' => a.mul(&b, *pos),
                    '/' => a.div(&b, *pos),
                    '%' => a.rem(&b, *pos),
                    _ => a.pow(&b, *pos),
                }
            }
            Node::Call(f, x, pos) => x.eval()?.call(*f, *pos),
        }
    }
}

struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    /// Where the text ends, for "expected ... at the end".
    end: usize,
    depth: usize,
}

pub fn parse(tokens: &[Token], chars: usize) -> Result<Node, CalcError> {
    let mut p = Parser {
        tokens,
        at: 0,
        end: chars + 1,
        depth: 0,
    };
    if tokens.is_empty() {
        return Err(CalcError::new(Code::Syntax, 1, "the expression is empty"));
    }
    let node = p.sum()?;
    match p.peek() {
        None => Ok(node),
        Some((Tok::Close, pos)) => Err(CalcError::new(
            Code::Syntax,
            pos,
            "this ) closes no bracket",
        )),
        Some((t, pos)) => Err(CalcError::new(
            Code::Syntax,
            pos,
            format!("expected an operator, found {}", describe(&t)),
        )),
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(_) => "a number".into(),
        Tok::Op(c) => format!("{c}"),
        Tok::Open => "(".into(),
        Tok::Close => ")".into(),
        Tok::Name(n) => format!("the name {n}"),
    }
}

impl Parser<'_> {
    fn peek(&self) -> Option<(Tok, usize)> {
        self.tokens.get(self.at).cloned()
    }

    fn deeper(&mut self, pos: usize) -> Result<(), CalcError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(CalcError::new(
                Code::TooLarge,
                pos,
                format!("the expression nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    /// `+ -`, left to right.
    fn sum(&mut self) -> Result<Node, CalcError> {
        let mut left = self.product()?;
        while let Some((Tok::Op(op @ ('+' | '-')), pos)) = self.peek() {
            self.at += 1;
            let right = self.product()?;
            left = Node::Bin(op, Box::new(left), Box::new(right), pos);
        }
        Ok(left)
    }

    /// `* / %`, left to right.
    fn product(&mut self) -> Result<Node, CalcError> {
        let mut left = self.unary()?;
        while let Some((Tok::Op(op @ ('*' | '/' | '%')), pos)) = self.peek() {
            self.at += 1;
            let right = self.unary()?;
            left = Node::Bin(op, Box::new(left), Box::new(right), pos);
        }
        Ok(left)
    }

    /// Unary minus, looser than `^`: `-2^2` is `-(2^2)`.
    fn unary(&mut self) -> Result<Node, CalcError> {
        if let Some((Tok::Op('-'), pos)) = self.peek() {
            self.at += 1;
            self.deeper(pos)?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Neg(Box::new(inner), pos));
        }
        self.power()
    }

    /// `^`, right to left; the exponent is a unary (`2^-1`).
    fn power(&mut self) -> Result<Node, CalcError> {
        let base = self.primary()?;
        if let Some((Tok::Op('^'), pos)) = self.peek() {
            self.at += 1;
            self.deeper(pos)?;
            let exponent = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Bin('^', Box::new(base), Box::new(exponent), pos));
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Node, CalcError> {
        let Some((tok, pos)) = self.peek() else {
            return Err(CalcError::new(
                Code::Syntax,
                self.end,
                "the expression ends where a number, a bracket or a function is expected",
            ));
        };
        self.at += 1;
        match tok {
            Tok::Num(n) => Ok(Node::Num(n, pos)),
            Tok::Open => {
                let inner = self.bracketed(pos)?;
                Ok(inner)
            }
            Tok::Name(name) => {
                let Some(f) = Func::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f) else {
                    return Err(CalcError::new(
                        Code::Syntax,
                        pos,
                        format!(
                            "{name} is not a function this takes: sqrt abs round floor ceil ln log (no names or constants)"
                        ),
                    ));
                };
                match self.peek() {
                    Some((Tok::Open, open)) => {
                        self.at += 1;
                        let arg = self.bracketed(open)?;
                        Ok(Node::Call(f, Box::new(arg), pos))
                    }
                    _ => Err(CalcError::new(
                        Code::Syntax,
                        pos,
                        format!("{name} takes its argument in brackets: {name}(...)"),
                    )),
                }
            }
            Tok::Op(c) => Err(CalcError::new(
                Code::Syntax,
                pos,
                format!("expected a number, a bracket or a function, found {c}"),
            )),
            Tok::Close => Err(CalcError::new(
                Code::Syntax,
                pos,
                "expected a number, a bracket or a function, found )",
            )),
        }
    }

    /// After an `(` at `open`: an expression and its `)`.
    fn bracketed(&mut self, open: usize) -> Result<Node, CalcError> {
        self.deeper(open)?;
        let inner = self.sum()?;
        self.depth -= 1;
        match self.peek() {
            Some((Tok::Close, _)) => {
                self.at += 1;
                Ok(inner)
            }
            Some((t, pos)) => Err(CalcError::new(
                Code::Syntax,
                pos,
                format!(
                    "expected ) for the ( at character {open}, found {}",
                    describe(&t)
                ),
            )),
            None => Err(CalcError::new(
                Code::Syntax,
                self.end,
                format!("the ( at character {open} is never closed"),
            )),
        }
    }
}
