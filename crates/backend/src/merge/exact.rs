//! Exact numbers: integers while they fit, decimals beyond, as the databases' SUMs are.

use std::cmp::Ordering;

use keyshard_types::Value;

use keyshard_types::numeric::Decimal;

/// An exactly known number: an integer, or a decimal once a decimal (or an overflow) is seen.
#[derive(Debug, Clone)]
pub(super) enum Exact {
    Int(i128),
    Dec(Decimal),
}

impl Exact {
    pub(super) fn add(self, other: Exact) -> Exact {
        match (self, other) {
            (Exact::Int(x), Exact::Int(y)) => match x.checked_add(y) {
                Some(sum) => Exact::Int(sum),
                None => Exact::Dec(Decimal::from_int(x).add(&Decimal::from_int(y))),
            },
            (x, y) => Exact::Dec(x.into_decimal().add(&y.into_decimal())),
        }
    }

    pub(super) fn into_decimal(self) -> Decimal {
        match self {
            Exact::Int(v) => Decimal::from_int(v),
            Exact::Dec(d) => d,
        }
    }

    pub(super) fn cmp(&self, other: &Exact) -> Ordering {
        match (self, other) {
            (Exact::Int(x), Exact::Int(y)) => x.cmp(y),
            _ => self
                .clone()
                .into_decimal()
                .compare(&other.clone().into_decimal()),
        }
    }

    pub(super) fn to_f64(&self) -> f64 {
        match self {
            Exact::Int(v) => *v as f64,
            Exact::Dec(d) => d.to_f64(),
        }
    }

    /// Integers stay integers while they fit; decimals (and huge integers) become text, as
    /// MariaDB sends DECIMAL.
    pub(super) fn into_value(self) -> Value {
        match self {
            Exact::Int(v) => i64::try_from(v).map(Value::Int).unwrap_or_else(|_| {
                u64::try_from(v)
                    .map(Value::UInt)
                    .unwrap_or_else(|_| Value::Text(v.to_string()))
            }),
            Exact::Dec(d) => Value::Text(d.to_string()),
        }
    }
}
