//! Reply classification by outcome keys: follow the reply's variant cases (and, at a record,
//! the one field the keys read there); the deepest key on that path gives the class.

use crate::form::*;
use candid::types::Label as CLabel;
use candid::IDLValue;
use serde::Serialize;
use std::collections::BTreeMap;

/// A method's outcome keys, checked against its result type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Classifier {
    keys: Vec<(Vec<String>, OutcomeClass)>,
    default: Option<OutcomeClass>,
    /// At a record reached by these labels, the field the keys read.
    fields: BTreeMap<Vec<String>, String>,
    /// No outcome tag: any reply is a success.
    untagged: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Classification {
    pub class: OutcomeClass,
    /// The cases (and record fields) followed in the reply.
    pub path: Vec<String>,
    /// The key that matched; `None` when the class is the default (or there is no tag).
    pub key: Option<String>,
}

impl Classifier {
    /// Checks the keys against the method's results; an error is the reason to skip the method.
    pub fn new(form: &Form, method: &Method) -> Result<Classifier, String> {
        let Some(tag) = &method.outcome else {
            return Ok(Classifier {
                keys: vec![],
                default: None,
                fields: BTreeMap::new(),
                untagged: true,
            });
        };
        if tag.keys.is_empty() {
            return Ok(Classifier {
                keys: vec![],
                default: tag.default,
                fields: BTreeMap::new(),
                untagged: false,
            });
        }
        if method.results.len() != 1 {
            return Err(format!(
                "outcome keys need a method with one result; this one has {}",
                method.results.len()
            ));
        }
        let mut fields: BTreeMap<Vec<String>, String> = BTreeMap::new();
        let mut keys = vec![];
        for (key, class) in &tag.keys {
            if key.index != 0 {
                return Err(format!(
                    "outcome key '{key}' names result {}, but there is one result",
                    key.index
                ));
            }
            let mut node = &method.results[0];
            let mut walked: Vec<String> = vec![];
            let mut ends_on_field = false;
            for label in &key.labels {
                let mut ty = resolve(form, node)
                    .ok_or_else(|| format!("outcome key '{key}': an unresolved type"))?;
                let mut guard = 0;
                while let Ty::Opt(inner) = ty {
                    ty = resolve(form, inner)
                        .ok_or_else(|| format!("outcome key '{key}': an unresolved type"))?;
                    guard += 1;
                    if guard > 32 {
                        return Err(format!("outcome key '{key}': too many opts"));
                    }
                }
                match ty {
                    Ty::Variant(cases) => {
                        node = find_label(cases, label).ok_or_else(|| {
                            format!("outcome key '{key}': '{label}' is not a case")
                        })?;
                        ends_on_field = false;
                    }
                    Ty::Record(fs) => {
                        node = find_label(fs, label).ok_or_else(|| {
                            format!("outcome key '{key}': '{label}' is not a field")
                        })?;
                        if let Some(other) = fields.get(&walked) {
                            if other != label {
                                return Err(format!(
                                    "outcome key '{key}' reads field '{label}' where another key reads '{other}' (one reply could match both)"
                                ));
                            }
                        }
                        fields.insert(walked.clone(), label.clone());
                        ends_on_field = true;
                    }
                    _ => {
                        return Err(format!(
                            "outcome key '{key}': '{label}' names no case or field"
                        ))
                    }
                }
                walked.push(label.clone());
            }
            if ends_on_field {
                return Err(format!(
                    "outcome key '{key}' ends on a record field; a key ends on a case"
                ));
            }
            keys.push((walked, *class));
        }
        Ok(Classifier {
            keys,
            default: tag.default,
            fields,
            untagged: false,
        })
    }

    /// Whether any reply could be classed `retry_new` (which needs a stamp to renew).
    pub fn can_retry_new(&self) -> bool {
        self.default == Some(OutcomeClass::RetryNew)
            || self.keys.iter().any(|(_, c)| *c == OutcomeClass::RetryNew)
    }

    /// Classifies the first result value of a reply.
    pub fn classify(&self, reply: Option<&IDLValue>) -> Classification {
        if self.untagged {
            return Classification {
                class: OutcomeClass::Success,
                path: vec![],
                key: None,
            };
        }
        let mut path: Vec<String> = vec![];
        let mut value = reply;
        while let Some(v) = value {
            match v {
                IDLValue::Opt(inner) => value = Some(inner),
                IDLValue::Variant(vv) => {
                    path.push(label_text(&vv.0.id));
                    value = Some(&vv.0.val);
                }
                IDLValue::Record(fs) => match self.fields.get(&path) {
                    Some(field) => {
                        value = fs
                            .iter()
                            .find(|f| label_text(&f.id) == *field)
                            .map(|f| &f.val);
                        path.push(field.clone());
                    }
                    None => break,
                },
                _ => break,
            }
            if !self
                .keys
                .iter()
                .any(|(k, _)| k.len() > path.len() && k.starts_with(&path))
            {
                break;
            }
        }
        let best = self
            .keys
            .iter()
            .filter(|(k, _)| path.starts_with(k))
            .max_by_key(|(k, _)| k.len());
        match best {
            Some((k, c)) => Classification {
                class: *c,
                path,
                key: Some(k.join(".")),
            },
            // A reply no key names, without a default, did execute but is not understood: fail.
            None => Classification {
                class: self.default.unwrap_or(OutcomeClass::Fail),
                path,
                key: None,
            },
        }
    }
}

fn find_label<'a>(fs: &'a [FieldNode], label: &str) -> Option<&'a Node> {
    fs.iter()
        .find(|f| f.label.name() == Some(label))
        .map(|f| &f.node)
}

fn label_text(l: &CLabel) -> String {
    match l {
        CLabel::Named(n) => n.clone(),
        CLabel::Id(i) | CLabel::Unnamed(i) => i.to_string(),
    }
}
