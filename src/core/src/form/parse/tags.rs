//! The tags a type node carries: value kinds, defaults, text and range bounds, UI hints.

use super::{kind, short, At, Parser, NODE_KEYS, OWNER_SOURCES, TAG_KEYS};
use crate::form::limits::*;
use crate::form::model::*;
use serde_json::{Map, Value};

impl Parser {
    /// A type node's tags, its keys checked: `own` are those its constructor read. The keys
    /// are walked once (a search of the node's map per tag and per known key cost a stored
    /// form ~0.2 M of its parse): any not known is a problem in key order, then each tag is
    /// read in a fixed order.
    pub(super) fn tags(
        &mut self,
        m: &Map<String, Value>,
        path: &At<'_>,
        own: &[&str],
    ) -> Option<Tags> {
        let mut tag: [Option<&Value>; 9] = [None; 9];
        for (k, v) in m {
            let slot = match k.as_str() {
                "value" => 0,
                "describe" => 1,
                "intent" => 2,
                "effect" => 3,
                "auto" => 4,
                "ui" => 5,
                "text" => 6,
                "range" => 7,
                "named" => 8,
                k if NODE_KEYS.contains(&k) || own.contains(&k) => continue,
                _ => {
                    let known: Vec<&str> = TAG_KEYS
                        .iter()
                        .chain(&NODE_KEYS)
                        .chain(own)
                        .copied()
                        .collect();
                    self.unknown_key(path, k, &known);
                    continue;
                }
            };
            tag[slot] = Some(v);
        }
        let [value, describe, intent, effect, auto, ui, text, range, named] = tag;
        let mut t = Tags::default();
        let mut ok = true;
        if let Some(v) = value {
            t.value = self.value_tag(v, &path.field("value"));
            ok &= t.value.is_some();
        }
        if let Some(v) = describe {
            t.describe = self.text(v, &path.field("describe"), MAX_TEXT_CHARS);
            ok &= t.describe.is_some();
        }
        if let Some(v) = intent {
            t.intent = self.text(v, &path.field("intent"), MAX_TEXT_CHARS);
            ok &= t.intent.is_some();
        }
        if let Some(v) = effect {
            t.effect = self.effect(v, &path.field("effect"));
            ok &= t.effect.is_some();
        }
        if let Some(v) = auto {
            t.auto = self.auto(v, &path.field("auto"));
            ok &= t.auto.is_some();
        }
        if let Some(v) = ui {
            let up = path.field("ui");
            match self.object(v, &up) {
                Some(um) => {
                    self.known_keys(um, &up, &["hidden"]);
                    if let Some(h) = um.get("hidden") {
                        match self.boolean(h, &up.field("hidden")) {
                            Some(b) => t.hidden = b,
                            None => ok = false,
                        }
                    }
                }
                None => ok = false,
            }
        }
        if let Some(v) = text {
            t.text = self.text_tag(v, &path.field("text"));
            ok &= t.text.is_some();
        }
        if let Some(v) = range {
            t.range = self.range(v, &path.field("range"));
            ok &= t.range.is_some();
        }
        if let Some(v) = named {
            t.named = self.name(v, &path.field("named"));
            ok &= t.named.is_some();
        }
        ok.then_some(t)
    }

    pub(super) fn dyn_u8(&mut self, v: &Value, path: &At<'_>) -> Option<Dyn<u8>> {
        match v {
            Value::Number(n) => match n.as_u64().filter(|d| *d <= 38) {
                Some(d) => Some(Dyn::Fixed(d as u8)),
                None => {
                    self.err(path, "decimals is a whole number from 0 to 38");
                    None
                }
            },
            Value::Object(_) => self.dyn_from(v, path).map(Dyn::From),
            other => {
                self.err(
                    path,
                    format!(
                        "expected a number or {{\"from\": ...}}, found {}",
                        kind(other)
                    ),
                );
                None
            }
        }
    }

    pub(super) fn dyn_text(&mut self, v: &Value, path: &At<'_>) -> Option<Dyn<String>> {
        match v {
            Value::String(_) => self.name(v, path).map(Dyn::Fixed),
            Value::Object(_) => self.dyn_from(v, path).map(Dyn::From),
            other => {
                self.err(
                    path,
                    format!(
                        "expected a string or {{\"from\": ...}}, found {}",
                        kind(other)
                    ),
                );
                None
            }
        }
    }

    pub(super) fn dyn_from(&mut self, v: &Value, path: &At<'_>) -> Option<String> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["from"]);
        self.ref_from(m, path)
    }

    /// The ref an object's `from` names, its keys checked by the caller (an `auto` default's
    /// were: checked again here, an unknown key was two problems, each listing other keys).
    fn ref_from(&mut self, m: &Map<String, Value>, path: &At<'_>) -> Option<String> {
        match m.get("from") {
            Some(f) => {
                let s = self.name(f, &path.field("from"))?;
                match s.strip_prefix("query:") {
                    Some(method) if !method.is_empty() => Some(s),
                    _ => {
                        self.err(
                            &path.field("from"),
                            format!("'{s}' is not a ref; refs are 'query:<method>' (and an auto default may be {})", OWNER_SOURCES.join(", ")),
                        );
                        None
                    }
                }
            }
            None => {
                self.err(&path.field("from"), "missing");
                None
            }
        }
    }

    pub(super) fn value_tag(&mut self, v: &Value, path: &At<'_>) -> Option<ValueTag> {
        let m = self.object(v, path)?;
        let kind_name = match m.get("kind") {
            Some(Value::String(s)) => s.clone(),
            _ => {
                self.err(
                    &path.field("kind"),
                    "missing; one of token_amount, account, subaccount, timestamp, duration",
                );
                return None;
            }
        };
        match kind_name.as_str() {
            "token_amount" => {
                self.known_keys(m, path, &["kind", "decimals", "symbol"]);
                let decimals = match m.get("decimals") {
                    Some(d) => self.dyn_u8(d, &path.field("decimals")),
                    None => {
                        self.err(&path.field("decimals"), "missing");
                        None
                    }
                };
                let symbol = match m.get("symbol") {
                    Some(s) => self.dyn_text(s, &path.field("symbol")),
                    None => {
                        self.err(&path.field("symbol"), "missing");
                        None
                    }
                };
                Some(ValueTag::TokenAmount {
                    decimals: decimals?,
                    symbol: symbol?,
                })
            }
            "account" => {
                self.known_keys(m, path, &["kind"]);
                Some(ValueTag::Account)
            }
            "subaccount" => {
                self.known_keys(m, path, &["kind"]);
                Some(ValueTag::Subaccount)
            }
            "timestamp" | "duration" => {
                self.known_keys(m, path, &["kind", "unit"]);
                let unit = match m.get("unit") {
                    None => TimeUnit::Nanoseconds,
                    Some(Value::String(u)) => match TimeUnit::parse(u) {
                        Some(u) => u,
                        None => {
                            self.err(
                                &path.field("unit"),
                                format!("'{u}' is not a unit (ns, us, ms, s)"),
                            );
                            return None;
                        }
                    },
                    Some(other) => {
                        self.err(
                            &path.field("unit"),
                            format!("expected a string, found {}", kind(other)),
                        );
                        return None;
                    }
                };
                Some(if kind_name == "timestamp" {
                    ValueTag::Timestamp { unit }
                } else {
                    ValueTag::Duration { unit }
                })
            }
            other => {
                self.err(
                    &path.field("kind"),
                    format!("'{other}' is not a value kind (token_amount, account, subaccount, timestamp, duration)"),
                );
                None
            }
        }
    }

    pub(super) fn auto(&mut self, v: &Value, path: &At<'_>) -> Option<Auto> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["from", "value"]);
        match (m.get("from"), m.get("value")) {
            (Some(Value::String(src)), None) if OWNER_SOURCES.contains(&src.as_str()) => {
                Some(Auto::From(src.clone()))
            }
            (Some(_), None) => self.ref_from(m, path).map(Auto::From),
            (None, Some(Value::String(s))) => Some(Auto::Value(s.clone())),
            (None, Some(other)) => {
                self.err(
                    &path.field("value"),
                    format!("expected the value as input text, found {}", kind(other)),
                );
                None
            }
            _ => {
                self.err(path, "give 'from' (a ref) or 'value' (input text)");
                None
            }
        }
    }

    pub(super) fn text_tag(&mut self, v: &Value, path: &At<'_>) -> Option<TextTag> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["max_len", "pattern", "format"]);
        let mut t = TextTag::default();
        if let Some(ml) = m.get("max_len") {
            match ml.as_u64().and_then(|x| u32::try_from(x).ok()) {
                Some(n) => t.max_len = Some(n),
                None => {
                    self.err(&path.field("max_len"), "a whole number of characters");
                    return None;
                }
            }
        }
        if let Some(p) = m.get("pattern") {
            // Whether the layer will run the pattern is decided per method (a skip, not a refusal).
            t.pattern = Some(self.text(p, &path.field("pattern"), 4096)?);
        }
        if let Some(f) = m.get("format") {
            t.format = match f {
                Value::String(s) if s == "url" => Some(TextFormat::Url),
                Value::String(s) if s == "email" => Some(TextFormat::Email),
                other => {
                    self.err(
                        &path.field("format"),
                        format!("expected \"url\" or \"email\", found {}", short(other)),
                    );
                    return None;
                }
            };
        }
        Some(t)
    }

    pub(super) fn range(&mut self, v: &Value, path: &At<'_>) -> Option<RangeTag> {
        let m = self.object(v, path)?;
        self.known_keys(m, path, &["min", "max"]);
        let bound = |p: &mut Parser, key: &str| -> Result<Option<i128>, ()> {
            match m.get(key) {
                None => Ok(None),
                Some(Value::Number(n)) => match n.as_i64() {
                    Some(x) => Ok(Some(x as i128)),
                    None => match n.as_u64() {
                        Some(x) => Ok(Some(x as i128)),
                        None => {
                            p.err(
                                &path.field(key),
                                "a whole number (give large ones as a string of digits)",
                            );
                            Err(())
                        }
                    },
                },
                Some(Value::String(s)) => s.parse::<i128>().map(Some).map_err(|_| {
                    p.err(&path.field(key), format!("'{s}' is not a whole number"));
                }),
                Some(other) => {
                    p.err(
                        &path.field(key),
                        format!("expected a number, found {}", kind(other)),
                    );
                    Err(())
                }
            }
        };
        let min = bound(self, "min").ok()?;
        let max = bound(self, "max").ok()?;
        if let (Some(a), Some(b)) = (min, max) {
            if a > b {
                self.err(path, format!("min {a} is above max {b}"));
                return None;
            }
        }
        Some(RangeTag { min, max })
    }
}
