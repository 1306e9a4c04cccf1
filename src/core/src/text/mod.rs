//! Text codecs for values people and models type: amounts, principals, accounts, integers,
//! times and bytes. Each reads exactly (no floats) and writes the canonical form back.

pub mod account;
pub mod amount;
pub mod backtrack;
pub mod bytes;
pub mod ecma;
pub mod integer;
pub mod pattern;
pub mod principal;
pub mod textual;
pub mod time;

/// The spaces a reader trims around a value, and only these: the ASCII white space that
/// Rust's `char::is_ascii_whitespace` and the ECMAScript class `[\t\n\f\r ]` both name, so the
/// schema's pattern and the reader trim the same characters (Unicode's spaces differ between
/// the two languages: U+FEFF and U+0085).
pub const SPACE_CLASS: &str = "[\\t\\n\\f\\r ]";

/// `text` without the surrounding spaces of [`SPACE_CLASS`].
pub fn trim_spaces(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// A schema pattern for `core` as a whole value, surrounding spaces allowed (as the readers
/// trim them): `^[\t\n\f\r ]*(?:core)[\t\n\f\r ]*$`.
pub fn padded_pattern(core: &str) -> String {
    format!("^{SPACE_CLASS}*(?:{core}){SPACE_CLASS}*$")
}

/// An ECMAScript pattern matching `literal` with ASCII letters in either case (`TKA` is
/// `[Tt][Kk][Aa]`), as readers that ignore ASCII case compare; other characters as themselves.
pub fn ascii_caseless_pattern(literal: &str) -> String {
    let mut out = String::new();
    for c in literal.chars() {
        if c.is_ascii_alphabetic() {
            out.push('[');
            out.push(c.to_ascii_uppercase());
            out.push(c.to_ascii_lowercase());
            out.push(']');
        } else {
            if "\\^$.*+?()[]{}|/".contains(c) {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}
