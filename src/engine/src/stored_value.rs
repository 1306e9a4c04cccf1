//! A Candid value as stored in stable memory: every `IDLValue` case, labels as they were
//! (names kept), so that a value read back is the value written. Postcard cannot encode an
//! `IDLValue` itself, and the binary Candid form loses field names.

use candid::types::value::{IDLField, VariantValue};
use candid::types::Label;
use candid::{IDLValue, Int, Nat, Principal};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoredLabel {
    Id(u32),
    Named(String),
    Unnamed(u32),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoredValue {
    Bool(bool),
    Null,
    Text(String),
    /// A number whose type is still open (decimal digits).
    Number(String),
    /// IEEE bits, so that the value compares exactly.
    Float64(u64),
    Opt(Box<StoredValue>),
    Vec(Vec<StoredValue>),
    Record(Vec<(StoredLabel, StoredValue)>),
    Variant(StoredLabel, Box<StoredValue>, u64),
    Blob(#[serde(with = "serde_bytes")] Vec<u8>),
    Principal(#[serde(with = "serde_bytes")] Vec<u8>),
    Service(#[serde(with = "serde_bytes")] Vec<u8>),
    Func(#[serde(with = "serde_bytes")] Vec<u8>, String),
    None,
    Int(String),
    Nat(String),
    Nat8(u8),
    Nat16(u16),
    Nat32(u32),
    Nat64(u64),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Float32(u32),
    Reserved,
}

fn label_of(l: &Label) -> StoredLabel {
    match l {
        Label::Id(n) => StoredLabel::Id(*n),
        Label::Named(s) => StoredLabel::Named(s.clone()),
        Label::Unnamed(n) => StoredLabel::Unnamed(*n),
    }
}

fn label_back(l: &StoredLabel) -> Label {
    match l {
        StoredLabel::Id(n) => Label::Id(*n),
        StoredLabel::Named(s) => Label::Named(s.clone()),
        StoredLabel::Unnamed(n) => Label::Unnamed(*n),
    }
}

impl From<&IDLValue> for StoredValue {
    fn from(v: &IDLValue) -> Self {
        use StoredValue as S;
        match v {
            IDLValue::Bool(b) => S::Bool(*b),
            IDLValue::Null => S::Null,
            IDLValue::Text(t) => S::Text(t.clone()),
            IDLValue::Number(n) => S::Number(n.clone()),
            IDLValue::Float64(f) => S::Float64(f.to_bits()),
            IDLValue::Opt(inner) => S::Opt(Box::new(inner.as_ref().into())),
            IDLValue::Vec(items) => S::Vec(items.iter().map(Into::into).collect()),
            IDLValue::Record(fields) => S::Record(
                fields
                    .iter()
                    .map(|f| (label_of(&f.id), (&f.val).into()))
                    .collect(),
            ),
            IDLValue::Variant(VariantValue(f, index)) => {
                S::Variant(label_of(&f.id), Box::new((&f.val).into()), *index)
            }
            IDLValue::Blob(b) => S::Blob(b.clone()),
            IDLValue::Principal(p) => S::Principal(p.as_slice().to_vec()),
            IDLValue::Service(p) => S::Service(p.as_slice().to_vec()),
            IDLValue::Func(p, m) => S::Func(p.as_slice().to_vec(), m.clone()),
            IDLValue::None => S::None,
            IDLValue::Int(i) => S::Int(i.to_string()),
            IDLValue::Nat(n) => S::Nat(n.0.to_string()),
            IDLValue::Nat8(n) => S::Nat8(*n),
            IDLValue::Nat16(n) => S::Nat16(*n),
            IDLValue::Nat32(n) => S::Nat32(*n),
            IDLValue::Nat64(n) => S::Nat64(*n),
            IDLValue::Int8(n) => S::Int8(*n),
            IDLValue::Int16(n) => S::Int16(*n),
            IDLValue::Int32(n) => S::Int32(*n),
            IDLValue::Int64(n) => S::Int64(*n),
            IDLValue::Float32(f) => S::Float32(f.to_bits()),
            IDLValue::Reserved => S::Reserved,
        }
    }
}

impl StoredValue {
    /// The value as it was; `None` only for a record that was not written by this module.
    pub fn to_value(&self) -> Option<IDLValue> {
        use StoredValue as S;
        Some(match self {
            S::Bool(b) => IDLValue::Bool(*b),
            S::Null => IDLValue::Null,
            S::Text(t) => IDLValue::Text(t.clone()),
            S::Number(n) => IDLValue::Number(n.clone()),
            S::Float64(bits) => IDLValue::Float64(f64::from_bits(*bits)),
            S::Opt(inner) => IDLValue::Opt(Box::new(inner.to_value()?)),
            S::Vec(items) => IDLValue::Vec(
                items
                    .iter()
                    .map(StoredValue::to_value)
                    .collect::<Option<_>>()?,
            ),
            S::Record(fields) => IDLValue::Record(
                fields
                    .iter()
                    .map(|(l, v)| {
                        Some(IDLField {
                            id: label_back(l),
                            val: v.to_value()?,
                        })
                    })
                    .collect::<Option<_>>()?,
            ),
            S::Variant(l, v, index) => IDLValue::Variant(VariantValue(
                Box::new(IDLField {
                    id: label_back(l),
                    val: v.to_value()?,
                }),
                *index,
            )),
            S::Blob(b) => IDLValue::Blob(b.clone()),
            S::Principal(b) => IDLValue::Principal(Principal::try_from_slice(b).ok()?),
            S::Service(b) => IDLValue::Service(Principal::try_from_slice(b).ok()?),
            S::Func(b, m) => IDLValue::Func(Principal::try_from_slice(b).ok()?, m.clone()),
            S::None => IDLValue::None,
            S::Int(i) => IDLValue::Int(i.parse::<Int>().ok()?),
            S::Nat(n) => IDLValue::Nat(n.parse::<Nat>().ok()?),
            S::Nat8(n) => IDLValue::Nat8(*n),
            S::Nat16(n) => IDLValue::Nat16(*n),
            S::Nat32(n) => IDLValue::Nat32(*n),
            S::Nat64(n) => IDLValue::Nat64(*n),
            S::Int8(n) => IDLValue::Int8(*n),
            S::Int16(n) => IDLValue::Int16(*n),
            S::Int32(n) => IDLValue::Int32(*n),
            S::Int64(n) => IDLValue::Int64(*n),
            S::Float32(bits) => IDLValue::Float32(f32::from_bits(*bits)),
            S::Reserved => IDLValue::Reserved,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_reads_back_as_written() {
        let rec = IDLValue::Record(vec![
            IDLField {
                id: Label::Named("owner".into()),
                val: IDLValue::Principal(Principal::from_slice(&[1, 2, 3])),
            },
            IDLField {
                id: Label::Id(7),
                val: IDLValue::Opt(Box::new(IDLValue::Blob(vec![0, 255]))),
            },
            IDLField {
                id: Label::Unnamed(2),
                val: IDLValue::Vec(vec![
                    IDLValue::Nat(Nat::from(u128::MAX)),
                    IDLValue::Int(Int::from(-5)),
                ]),
            },
        ]);
        let values = vec![
            rec,
            IDLValue::Variant(VariantValue(
                Box::new(IDLField {
                    id: Label::Named("Ok".into()),
                    val: IDLValue::Nat64(9),
                }),
                1,
            )),
            IDLValue::Float64(-0.0),
            IDLValue::Float32(1.5),
            IDLValue::Text("é".into()),
            IDLValue::Number("12".into()),
            IDLValue::Int8(-1),
            IDLValue::Int16(-2),
            IDLValue::Int32(-3),
            IDLValue::Int64(-4),
            IDLValue::Nat8(1),
            IDLValue::Nat16(2),
            IDLValue::Nat32(3),
            IDLValue::Bool(true),
            IDLValue::Null,
            IDLValue::None,
            IDLValue::Reserved,
            IDLValue::Service(Principal::anonymous()),
            IDLValue::Func(Principal::management_canister(), "m".into()),
        ];
        for v in values {
            let s = StoredValue::from(&v);
            let bytes = postcard::to_allocvec(&s).unwrap();
            let back: StoredValue = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(back.to_value().as_ref(), Some(&v), "{v:?}");
        }
    }
}
