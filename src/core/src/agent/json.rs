//! JSON/0: the JSON the agent method reads and writes. Plain JSON (RFC 8259, parsed by
//! serde_json) with the bounds that make a value mean the same to every reader: numbers finite and
//! within ±(2^53 − 1) (what a JavaScript reader keeps exactly), strings valid Unicode (a lone
//! surrogate escape is refused), no duplicate object members, and absolute bounds on bytes, depth
//! and values. Objects keep their members' order; `canonical` sorts them.

use super::error::AgentError;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::fmt;

/// The largest integer a binary64 reader holds exactly: 2^53 − 1.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Within ±(2^53 − 1); `i64::MIN` too is outside (it has no `abs`).
pub fn safe(i: i64) -> bool {
    (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&i)
}

/// The absolute bounds of one JSON/0 document.
#[derive(Clone, Copy, Debug)]
pub struct JsonLimits {
    /// UTF-8 bytes of the document text.
    pub max_bytes: usize,
    /// Nesting: a scalar or an empty container at the top is depth 1.
    pub max_depth: usize,
    /// Values of any kind, containers included.
    pub max_values: usize,
}

/// The bounds of any document the method reads or writes: room for what the method itself
/// writes from values within its bounds. A result holds an 8 MiB answer twice (its text and its
/// structured value), each up to six times longer when every byte is escaped: 96 MiB, so 128 MiB
/// of text; the structured value is read with `ANSWER`, so the envelope's few values and levels
/// always fit in 64 levels and 1 048 576 values.
pub const DOCUMENT: JsonLimits = JsonLimits {
    max_bytes: 128 << 20,
    max_depth: 64,
    max_values: 1 << 20,
};

/// The bounds of the JSON an answer's text holds: an 8 MiB text, four levels and 64 values
/// fewer than a document, for the result envelope around it.
pub const ANSWER: JsonLimits = JsonLimits {
    max_bytes: 8 << 20,
    max_depth: 60,
    max_values: (1 << 20) - 64,
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// Every integral value, however written (`1`, `1.0`, `1e3`).
    Int(i64),
    /// A finite, non-integral value.
    Float(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Json>),
    /// Members in document order; keys are unique.
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn str(s: impl Into<String>) -> Json {
        Json::String(s.into())
    }
    pub fn int(i: i64) -> Json {
        Json::Number(Number::Int(i))
    }
    pub fn object(members: Vec<(&str, Json)>) -> Json {
        Json::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Json::Number(Number::Int(i)) => Some(*i),
            _ => None,
        }
    }
    pub fn members(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(m) => Some(m),
            _ => None,
        }
    }
    pub fn items(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }
    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(Number::Int(_)) => "an integer",
            Json::Number(Number::Float(_)) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
    /// Compact text, members in their order.
    pub fn compact(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
    /// Compact text with every object's members sorted by their keys' UTF-8 bytes: equal values
    /// have equal canonical text whatever order they were written in.
    pub fn canonical(&self) -> String {
        serde_json::to_string(&Sorted(self)).unwrap_or_default()
    }
    /// The number of values, containers included.
    pub fn count(&self) -> usize {
        match self {
            Json::Array(a) => 1 + a.iter().map(Json::count).sum::<usize>(),
            Json::Object(m) => 1 + m.iter().map(|(_, v)| v.count()).sum::<usize>(),
            _ => 1,
        }
    }
    pub fn depth(&self) -> usize {
        match self {
            Json::Array(a) => 1 + a.iter().map(Json::depth).max().unwrap_or(0),
            Json::Object(m) => 1 + m.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            _ => 1,
        }
    }
}

/// Checks a value built in code (not parsed) against the JSON/0 bounds a parse applies.
pub fn check_value(v: &Json, limits: &JsonLimits, place: &str) -> Result<(), AgentError> {
    fn walk(v: &Json, depth: usize, limits: &JsonLimits, place: &str) -> Result<(), AgentError> {
        if depth > limits.max_depth {
            return Err(AgentError::exhausted(
                place,
                format!("nested deeper than {} levels", limits.max_depth),
            ));
        }
        match v {
            Json::Number(Number::Int(i)) if !safe(*i) => Err(AgentError::input(
                place,
                "an integer outside ±(2^53 − 1), which not every reader keeps exactly",
            )),
            Json::Number(Number::Float(f))
                if !f.is_finite() || f.abs() > MAX_SAFE_INTEGER as f64 =>
            {
                Err(AgentError::input(
                    place,
                    "a number that is not finite or is outside ±(2^53 − 1)",
                ))
            }
            Json::Array(a) => a
                .iter()
                .enumerate()
                .try_for_each(|(i, x)| walk(x, depth + 1, limits, &format!("{place}[{i}]"))),
            Json::Object(m) => {
                let mut seen = BTreeSet::new();
                for (k, x) in m {
                    if !seen.insert(k.as_str()) {
                        return Err(AgentError::input(
                            place,
                            format!("duplicate member \"{k}\""),
                        ));
                    }
                    walk(x, depth + 1, limits, &super::error::join(place, k))?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    walk(v, 1, limits, place)?;
    if v.count() > limits.max_values {
        return Err(AgentError::exhausted(
            place,
            format!("more than {} values", limits.max_values),
        ));
    }
    let bytes = v.compact().len();
    if bytes > limits.max_bytes {
        return Err(AgentError::exhausted(
            place,
            format!(
                "{bytes} bytes of JSON, over the {} allowed",
                limits.max_bytes
            ),
        ));
    }
    Ok(())
}

/// Parses one JSON/0 document. A bound passed is `RESOURCE_EXHAUSTED`, anything else
/// `INVALID_INPUT`, with the line and column in the message.
pub fn parse(text: &str, limits: &JsonLimits, place: &str) -> Result<Json, AgentError> {
    if text.len() > limits.max_bytes {
        return Err(AgentError::exhausted(
            place,
            format!(
                "{} bytes of JSON text, over the {} allowed",
                text.len(),
                limits.max_bytes
            ),
        ));
    }
    let ctx = Ctx {
        limits: *limits,
        values: Cell::new(0),
        exhausted: Cell::new(false),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    // serde_json's own recursion limit (128) stays on as a backstop above ours (64).
    let parsed = Seed {
        ctx: &ctx,
        depth: 1,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match parsed {
        Ok(v) => Ok(v),
        Err(e) if ctx.exhausted.get() || e.to_string().starts_with("recursion limit") => {
            Err(AgentError::exhausted(place, e.to_string()))
        }
        Err(e) => Err(AgentError::input(place, format!("not JSON/0: {e}"))),
    }
}

struct Ctx {
    limits: JsonLimits,
    values: Cell<usize>,
    exhausted: Cell<bool>,
}

impl Ctx {
    fn bound<E: de::Error>(&self, msg: String) -> E {
        self.exhausted.set(true);
        E::custom(msg)
    }
    fn one<E: de::Error>(&self) -> Result<(), E> {
        let n = self.values.get() + 1;
        self.values.set(n);
        if n > self.limits.max_values {
            return Err(self.bound(format!("more than {} values", self.limits.max_values)));
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
struct Seed<'a> {
    ctx: &'a Ctx,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Json;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        if self.depth > self.ctx.limits.max_depth {
            return Err(self.ctx.bound(format!(
                "nested deeper than {} levels",
                self.ctx.limits.max_depth
            )));
        }
        d.deserialize_any(self)
    }
}

fn number<E: de::Error>(f: f64) -> Result<Json, E> {
    if !f.is_finite() || f.abs() > MAX_SAFE_INTEGER as f64 {
        return Err(E::custom(
            "a number outside ±(2^53 − 1), which not every reader keeps exactly",
        ));
    }
    if f.fract() == 0.0 {
        Ok(Json::Number(Number::Int(f as i64)))
    } else {
        Ok(Json::Number(Number::Float(f)))
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Json;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        self.ctx.one()?;
        Ok(Json::Null)
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Json, E> {
        self.ctx.one()?;
        Ok(Json::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Json, E> {
        self.ctx.one()?;
        if !safe(i) {
            return Err(E::custom(
                "an integer outside ±(2^53 − 1), which not every reader keeps exactly",
            ));
        }
        Ok(Json::Number(Number::Int(i)))
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Json, E> {
        self.ctx.one()?;
        if u > MAX_SAFE_INTEGER as u64 {
            return Err(E::custom(
                "an integer outside ±(2^53 − 1), which not every reader keeps exactly",
            ));
        }
        Ok(Json::Number(Number::Int(u as i64)))
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Json, E> {
        self.ctx.one()?;
        number(f)
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Json, E> {
        self.ctx.one()?;
        Ok(Json::String(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Json, E> {
        self.ctx.one()?;
        Ok(Json::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        self.ctx.one()?;
        let inner = Seed {
            ctx: self.ctx,
            depth: self.depth + 1,
        };
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(inner)? {
            out.push(v);
        }
        Ok(Json::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        self.ctx.one()?;
        let inner = Seed {
            ctx: self.ctx,
            depth: self.depth + 1,
        };
        let mut out: Vec<(String, Json)> = Vec::new();
        let mut seen = BTreeSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !seen.insert(k.clone()) {
                return Err(de::Error::custom(format!("duplicate member \"{k}\"")));
            }
            let v = map.next_value_seed(inner)?;
            out.push((k, v));
        }
        Ok(Json::Object(out))
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(Number::Int(i)) => s.serialize_i64(*i),
            Json::Number(Number::Float(f)) => s.serialize_f64(*f),
            Json::String(t) => s.serialize_str(t),
            Json::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for x in a {
                    seq.serialize_element(x)?;
                }
                seq.end()
            }
            Json::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

struct Sorted<'a>(&'a Json);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Json::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for x in a {
                    seq.serialize_element(&Sorted(x))?;
                }
                seq.end()
            }
            Json::Object(m) => {
                let mut members: Vec<&(String, Json)> = m.iter().collect();
                members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, &Sorted(v))?;
                }
                map.end()
            }
            other => other.serialize(s),
        }
    }
}

/// A JSON string literal for `s`, as the prompt writes every text: serde_json's escapes, and
/// the line breaks it leaves as they are (U+0085, U+2028, U+2029) escaped too, so that no reader
/// that splits lines on them sees a text start a line of its own.
pub fn quote(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap_or_default();
    if !q.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        return q;
    }
    q.replace('\u{85}', "\\u0085")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::error::AgentErrorCode::*;

    fn p(t: &str) -> Result<Json, AgentError> {
        parse(t, &DOCUMENT, "")
    }

    #[test]
    fn duplicate_members_are_refused_with_their_line_and_column() {
        let e = p(r#"{"a": 1, "b": {"c": 1, "c": 2}}"#).unwrap_err();
        assert_eq!(e.code, InvalidInput);
        assert!(e.message.contains("duplicate member \"c\""), "{e}");
        assert!(e.message.contains("column"), "{e}");
    }

    #[test]
    fn a_lone_surrogate_escape_is_refused_and_a_pair_is_read() {
        assert_eq!(p(r#""\ud83d\ude00""#).unwrap(), Json::str("😀"));
        for t in [r#""\ud83d""#, r#""\ude00""#, r#""\ud83dx""#] {
            assert_eq!(p(t).unwrap_err().code, InvalidInput, "{t}");
        }
    }

    #[test]
    fn numbers_are_finite_and_within_the_safe_integers() {
        assert_eq!(p("9007199254740991").unwrap(), Json::int(MAX_SAFE_INTEGER));
        assert_eq!(
            p("-9007199254740991").unwrap(),
            Json::int(-MAX_SAFE_INTEGER)
        );
        for t in [
            "9007199254740992",
            "-9007199254740992",
            "18446744073709551616",
            "1e400",
            "-1e400",
            "1e16",
        ] {
            assert_eq!(p(t).unwrap_err().code, InvalidInput, "{t}");
        }
        assert_eq!(p("1.0").unwrap(), Json::int(1));
        assert_eq!(p("1e3").unwrap(), Json::int(1000));
        assert_eq!(p("0.5").unwrap(), Json::Number(Number::Float(0.5)));
    }

    #[test]
    fn depth_values_and_bytes_are_bounded_at_their_limits() {
        let deep = |n: usize| "[".repeat(n - 1) + "0" + &"]".repeat(n - 1);
        assert_eq!(p(&deep(64)).unwrap().depth(), 64);
        assert_eq!(p(&deep(65)).unwrap_err().code, ResourceExhausted);
        // Past serde_json's own limit too: still a bound, not a syntax error.
        assert_eq!(p(&deep(200)).unwrap_err().code, ResourceExhausted);
        let small = JsonLimits {
            max_bytes: 16,
            max_depth: 8,
            max_values: 4,
        };
        assert!(parse("[1,2,3]", &small, "").is_ok());
        assert_eq!(
            parse("[1,2,3,4]", &small, "").unwrap_err().code,
            ResourceExhausted
        );
        assert!(parse(&format!("\"{}\"", "a".repeat(14)), &small, "").is_ok());
        assert_eq!(
            parse(&format!("\"{}\"", "a".repeat(15)), &small, "")
                .unwrap_err()
                .code,
            ResourceExhausted
        );
    }

    #[test]
    fn trailing_text_and_malformed_json_are_refused() {
        for t in ["{} x", "[1,]", "{\"a\" 1}", "", "nul", "'a'", "01"] {
            assert_eq!(p(t).unwrap_err().code, InvalidInput, "{t}");
        }
    }

    #[test]
    fn canonical_text_sorts_members_by_utf8_bytes_and_compact_keeps_their_order() {
        let v = p(r#"{"b": [ {"é": 1, "z": 2, "a": 0.5} ], "a": null}"#).unwrap();
        assert_eq!(v.compact(), r#"{"b":[{"é":1,"z":2,"a":0.5}],"a":null}"#);
        assert_eq!(v.canonical(), r#"{"a":null,"b":[{"a":0.5,"z":2,"é":1}]}"#);
    }

    #[test]
    fn values_built_in_code_pass_the_same_checks() {
        let dup = Json::Object(vec![("a".into(), Json::Null), ("a".into(), Json::Null)]);
        assert_eq!(check_value(&dup, &DOCUMENT, "x").unwrap_err().place, "x");
        assert!(check_value(&Json::int(MAX_SAFE_INTEGER + 1), &DOCUMENT, "").is_err());
        assert!(check_value(&Json::Number(Number::Float(f64::NAN)), &DOCUMENT, "").is_err());
    }
}
