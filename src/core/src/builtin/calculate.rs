//! `calculate`: arithmetic parsed, never evaluated as code. Exact over rationals of big integers
//! (`num-bigint` + `num-rational`) for `+ - * / %` and whole powers; `sqrt`, `ln`, `log` and
//! fractional powers to 30 significant digits (fewer, stated, when approximations cancel: each
//! carries an error bound), computed in big-integer fixed point, and exact
//! whenever the answer is rational (`sqrt(144)` is 12, `log(1000)` is 3, `8^(1/3)` is 2).
//!
//! Grammar (loosest first): `+ -` (left), `* / %` (left), unary `-`, `^` (right, and its
//! exponent may carry a unary minus). So `-2^2` is -4, `2^3^2` is 512, `2^-1` is 0.5.

mod lex;
mod num;
mod parse;

use crate::builtin::input::{one, Input};
use crate::issue::{Code, Issue};
use serde_json::{json, Value};

pub use num::SIGNIFICANT_DIGITS;

/// The longest expression read, in characters.
pub const MAX_EXPRESSION: usize = 500;

/// Why an expression is refused: where (1-based character) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalcError {
    pub code: Code,
    pub position: usize,
    pub message: String,
}

impl CalcError {
    pub(crate) fn new(code: Code, position: usize, message: impl Into<String>) -> CalcError {
        CalcError {
            code,
            position,
            message: message.into(),
        }
    }
}

/// One answer: `result` is a decimal; `exact` says whether it is the value exactly; a rational
/// value with no finite decimal also has its `fraction`; an inexact one states its digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub result: String,
    pub exact: bool,
    pub fraction: Option<String>,
    /// How many significant digits an inexact `result` holds: `SIGNIFICANT_DIGITS`, or fewer
    /// when approximations cancelled.
    pub significant_digits: Option<usize>,
}

impl Answer {
    pub fn to_json(&self) -> Value {
        let mut v = json!({ "result": self.result, "exact": self.exact });
        if let Some(f) = &self.fraction {
            v["fraction"] = json!(f);
        }
        if let Some(d) = self.significant_digits {
            v["significant_digits"] = json!(d);
        }
        v
    }
}

/// Reads and computes one expression.
pub fn evaluate(expression: &str) -> Result<Answer, CalcError> {
    let chars = expression.chars().count();
    if chars > MAX_EXPRESSION {
        return Err(CalcError::new(
            Code::TooLarge,
            MAX_EXPRESSION + 1,
            format!("the expression is {chars} characters long, over the {MAX_EXPRESSION} allowed"),
        ));
    }
    let tokens = lex::tokens(expression)?;
    let tree = parse::parse(&tokens, chars)?;
    let value = tree.eval()?;
    value.answer(1)
}

pub(crate) fn run(input: &Value) -> Result<Value, Vec<Issue>> {
    let input = Input::new(input, "calculate", &["expression"])?;
    let expression = input
        .required_text("expression", MAX_EXPRESSION)
        .map_err(|i| vec![i])?;
    evaluate(expression).map(|a| a.to_json()).map_err(|e| {
        one(
            "expression",
            e.code,
            format!("at character {}: {}", e.position, e.message),
        )
    })
}

pub(crate) fn decl_parts() -> (String, Value, Value) {
    let description = format!(
        "Arithmetic done exactly, because mental arithmetic is confidently wrong. Takes numbers \
         (1_000 and 1e3 allowed), + - * / % ^, brackets and sqrt abs round floor ceil ln log \
         (log is base 10; round is half away from zero; % keeps the dividend's sign). Exact for \
         + - * / % and whole powers; sqrt, ln, log and fractional powers to {SIGNIFICANT_DIGITS} \
         significant digits (fewer, and said so, when approximations cancel). -2^2 is -4 and 2^3^2 is 512. Anything else is refused with its \
         position. Example: (1250 * 0.2) + 99, or sqrt(144)."
    );
    let input = json!({
        "type": "object",
        "properties": {
            "expression": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_EXPRESSION,
                "description": "For example (1250 * 0.2) + 99, or sqrt(144)."
            }
        },
        "required": ["expression"],
        "additionalProperties": false
    });
    let output = json!({
        "type": "object",
        "properties": {
            "result": { "type": "string", "description": "The value as a decimal." },
            "exact": { "type": "boolean", "description": "Whether result is the value exactly." },
            "fraction": { "type": "string", "description": "The exact value p/q, when it has no finite decimal." },
            "significant_digits": { "type": "integer", "description": "How many digits an inexact result holds." }
        },
        "required": ["result", "exact"],
        "additionalProperties": false
    });
    (description, input, output)
}
