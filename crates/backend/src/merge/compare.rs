//! How the dialect's database orders values, and rows under a list of keys: the one ordering
//! that sorting, the k-way merge, grouping and MIN/MAX all use.

use std::cmp::Ordering;

use keyshard_router::merge::Aggregate;
use keyshard_types::{Value, Wire};

use super::MergeError;
use super::exact::Exact;
use super::plan::{Key, Resolved};
use super::text_order::TextOrder;
use crate::outcome::Column;
use keyshard_types::SqlType;
use keyshard_types::numeric::Decimal;
use keyshard_types::wire::sort_key;

impl Resolved {
    pub(super) fn compare_rows(&self, keys: &[Key], a: &[Value], b: &[Value]) -> Ordering {
        keys.iter()
            .map(|key| {
                let numeric_text = self.numeric_text.get(key.index).copied().unwrap_or(false);
                compare_key(
                    a.get(key.index).unwrap_or(&Value::Null),
                    b.get(key.index).unwrap_or(&Value::Null),
                    key,
                    self.text_order_of(key.index),
                    numeric_text,
                )
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

/// Orders two values under one ORDER BY key: NULLs where the key puts them, others by
/// [`compare`], reversed for DESC.
fn compare_key(a: &Value, b: &Value, key: &Key, text: TextOrder, numeric_text: bool) -> Ordering {
    let null_side = if key.nulls_first {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => null_side,
        (_, Value::Null) => null_side.reverse(),
        _ => {
            let order = compare(a, b, text, numeric_text);
            if key.descending {
                order.reverse()
            } else {
                order
            }
        }
    }
}

/// Orders two values as the database does, text by `text`; NULL sorts lowest here (callers
/// place NULLs themselves). `numeric_text`: the column's text values are decimal numbers.
///
/// This must be a total order, or sorting may panic: numbers come before text, text before
/// bytes, and whether a text is a number depends on its column only, never on the other
/// value (otherwise "10" < "9" as text, "9" < "10" as numbers and "1a" between would cycle).
pub(super) fn compare(a: &Value, b: &Value, text: TextOrder, numeric_text: bool) -> Ordering {
    use Value::{Bytes, Int, Text, UInt};
    match (a, b) {
        (Int(x), Int(y)) => x.cmp(y),
        (Int(_) | UInt(_), Int(_) | UInt(_)) => integer(a).cmp(&integer(b)),
        (Text(x), Text(y)) if !numeric_text => text.compare(x, y),
        (Bytes(x), Bytes(y)) => x.cmp(y),
        _ => compare_sort_values(
            &SortValue::of(a, numeric_text),
            &SortValue::of(b, numeric_text),
            text,
        ),
    }
}

/// Wire values in their type's order. Values without one (a type whose order Keyshard does
/// not know, which only grouping reaches: ORDER BY, MIN and MAX refuse it first) compare by
/// their bytes, below those with one, so that the order stays total.
fn compare_wire(a: &Wire, b: &Wire) -> Ordering {
    match (sort_key(a), sort_key(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (None, None) => a.bytes.cmp(&b.bytes),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
    }
}

impl Resolved {
    /// How column `index`'s text orders.
    pub(super) fn text_order_of(&self, index: usize) -> TextOrder {
        self.text_order
            .get(index)
            .copied()
            .unwrap_or(TextOrder::of(None, self.dialect))
    }

    /// Refuses to order rows (ORDER BY, MIN, MAX) by a column holding values whose order
    /// Keyshard does not know (JSON, enums, network addresses …): merged, they would come in
    /// an order no database gives.
    pub(super) fn check_orderable(
        &self,
        shards: &[Vec<Vec<Value>>],
        columns: &[Column],
    ) -> Result<(), MergeError> {
        let join_keys = || {
            self.joined
                .iter()
                .flatten()
                .flat_map(|join| &join.order)
                .map(|key| key.index)
        };
        let ordered = self
            .order_by
            .iter()
            .map(|key| key.index)
            .chain(join_keys())
            .chain(
                self.aggregates
                    .iter()
                    .filter(|(_, function)| matches!(function, Aggregate::Min | Aggregate::Max))
                    .map(|(index, _)| *index),
            );
        let name = |index: usize| {
            columns
                .get(index)
                .map_or_else(|| index.to_string(), |c| c.name.clone())
        };
        for index in ordered {
            // MySQL orders ENUM and SET by their members' positions, which the result does
            // not carry.
            let unordered = columns.get(index).is_some_and(|c| c.ty == SqlType::Enum)
                || shards.iter().flatten().any(
                    |row| matches!(row.get(index), Some(Value::Wire(w)) if sort_key(w).is_none()),
                );
            if unordered {
                return Err(MergeError::Unordered {
                    column: name(index),
                });
            }
        }
        // Text is ordered and grouped only where Keyshard compares it as the collation does
        // (grouping needs its equality only, which a deterministic collation's is).
        let grouped = self
            .group_by
            .iter()
            .chain(self.distinct.iter().flatten())
            .map(|key| key.index)
            .filter(|&index| !self.text_order_of(index).equal_as_bytes());
        let compared = self
            .order_by
            .iter()
            .map(|key| key.index)
            .chain(join_keys())
            .chain(grouped)
            .chain(self.aggregates.iter().filter_map(|(index, function)| {
                matches!(function, Aggregate::Min | Aggregate::Max).then_some(*index)
            }));
        for index in compared {
            if self.numeric_text.get(index).copied().unwrap_or(false) {
                continue;
            }
            let order = self.text_order_of(index);
            let inexact = shards
                .iter()
                .flatten()
                .any(|row| matches!(row.get(index), Some(Value::Text(t)) if !order.exact_for(t)));
            if inexact {
                return Err(MergeError::Collation {
                    column: name(index),
                });
            }
        }
        Ok(())
    }
}

fn integer(value: &Value) -> i128 {
    match value {
        Value::Int(v) => i128::from(*v),
        Value::UInt(v) => i128::from(*v),
        _ => 0,
    }
}

/// A value's class and position within it, for comparisons across representations.
enum SortValue<'v> {
    Null,
    Number(NumberKey),
    Text(&'v str),
    Bytes(&'v [u8]),
    /// An array, and whether its text elements are numbers (`numeric_text` of the column).
    Array(&'v keyshard_types::Array, bool),
    /// A value in the shard's wire form: its type's own order (see [`crate::wire`]).
    Wire(&'v Wire),
}

impl<'v> SortValue<'v> {
    fn of(value: &'v Value, numeric_text: bool) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::Int(v) => Self::Number(NumberKey::exact(Exact::Int(i128::from(*v)))),
            Value::UInt(v) => Self::Number(NumberKey::exact(Exact::Int(i128::from(*v)))),
            Value::Double(v) => Self::Number(NumberKey::double(*v)),
            Value::Bool(b) => Self::Number(NumberKey::exact(Exact::Int(i128::from(*b)))),
            // PostgreSQL's NUMERIC orders NaN above every number, Infinity included.
            Value::Text(s) if numeric_text && s == "NaN" => {
                Self::Number(NumberKey::double(f64::NAN))
            }
            Value::Text(s) if numeric_text && s == "Infinity" => {
                Self::Number(NumberKey::double(f64::INFINITY))
            }
            Value::Text(s) if numeric_text && s == "-Infinity" => {
                Self::Number(NumberKey::double(f64::NEG_INFINITY))
            }
            Value::Text(s) => match Decimal::parse(s).filter(|_| numeric_text) {
                Some(d) => Self::Number(NumberKey::exact(Exact::Dec(d))),
                None => Self::Text(s),
            },
            Value::Bytes(b) => Self::Bytes(b),
            Value::Array(a) => Self::Array(a, numeric_text),
            Value::Wire(w) => Self::Wire(w),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Self::Null => 0,
            Self::Number(_) => 1,
            Self::Text(_) => 2,
            Self::Bytes(_) => 3,
            Self::Array(..) => 4,
            Self::Wire(_) => 5,
        }
    }
}

fn compare_sort_values(a: &SortValue, b: &SortValue, text: TextOrder) -> Ordering {
    match (a, b) {
        (SortValue::Number(x), SortValue::Number(y)) => x.cmp(y),
        (SortValue::Text(x), SortValue::Text(y)) => text.compare(x, y),
        (SortValue::Bytes(x), SortValue::Bytes(y)) => x.cmp(y),
        (SortValue::Array(x, numeric), SortValue::Array(y, _)) => {
            compare_arrays(x, y, *numeric, text)
        }
        (SortValue::Wire(x), SortValue::Wire(y)) => compare_wire(x, y),
        _ => a.rank().cmp(&b.rank()),
    }
}

/// PostgreSQL's array order (`array_cmp`): element by element in storage order, a NULL
/// element above any other; then the array with more elements; then by dimensions.
fn compare_arrays(
    a: &keyshard_types::Array,
    b: &keyshard_types::Array,
    numeric_text: bool,
    text: TextOrder,
) -> Ordering {
    for (x, y) in a.elements.iter().zip(&b.elements) {
        let order = match (x, y) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Greater,
            (_, Value::Null) => Ordering::Less,
            _ => compare_sort_values(
                &SortValue::of(x, numeric_text),
                &SortValue::of(y, numeric_text),
                text,
            ),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    a.elements
        .len()
        .cmp(&b.elements.len())
        .then_with(|| a.dims.len().cmp(&b.dims.len()))
        .then_with(|| {
            let key = |d: &keyshard_types::Dim| (d.len, d.lower);
            a.dims.iter().map(key).cmp(b.dims.iter().map(key))
        })
}

/// A number as (nearest double, exact value when known), compared in that order. Exact
/// integers and decimals order exactly among themselves; a fractional double against an exact
/// value with the same nearest double sorts first. Lexicographic, hence a total order.
struct NumberKey {
    approx: f64,
    exact: Option<Exact>,
}

impl NumberKey {
    fn exact(exact: Exact) -> Self {
        Self {
            approx: normalize_zero(exact.to_f64()),
            exact: Some(exact),
        }
    }

    fn double(v: f64) -> Self {
        // Integral doubles equal the integers they hold (SQLite mixes 2 and 2.0 freely).
        let exact =
            (v.is_finite() && v.fract() == 0.0 && v.abs() < 1e37).then_some(Exact::Int(v as i128));
        Self {
            approx: normalize_zero(v),
            exact,
        }
    }

    fn cmp(&self, other: &Self) -> Ordering {
        self.approx
            .total_cmp(&other.approx)
            .then_with(|| match (&self.exact, &other.exact) {
                (Some(x), Some(y)) => x.cmp(y),
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
            })
    }
}

/// -0.0 and 0.0 are the same number; `total_cmp` would tell them apart.
fn normalize_zero(v: f64) -> f64 {
    if v == 0.0 { 0.0 } else { v }
}

#[cfg(test)]
mod tests {
    use super::super::merge;
    use super::super::test_support::*;
    use super::*;
    use crate::outcome::UnitResult;
    use keyshard_router::merge::ColumnRef;
    use keyshard_types::Dialect;

    fn collated(collation: &str) -> Column {
        super::super::test_support::collated("s", SqlType::VarChar, collation)
    }

    /// As MariaDB orders and groups them: utf8mb4_general_ci weighs an ASCII character by its
    /// upper case ('_' after the letters) and ignores trailing spaces; `_bin` compares bytes
    /// (trailing spaces aside); texts a collation Keyshard does not reproduce are refused.
    #[test]
    fn text_orders_by_its_columns_collation() {
        let general = TextOrder::of(Some(&collated("utf8mb4_general_ci")), Dialect::MySql);
        assert_eq!(general, TextOrder::Folded { general: true });
        assert_eq!(general.compare("abc", "_x"), Ordering::Less);
        assert_eq!(general.compare("ABC", "abc "), Ordering::Equal);
        assert!(general.exact_for("a_b-c@d.e") && !general.exact_for("é"));
        let bin = TextOrder::of(Some(&collated("utf8mb4_bin")), Dialect::MySql);
        assert_eq!(bin.compare("B", "a"), Ordering::Less);
        assert_eq!(bin.compare("a", "a  "), Ordering::Equal);
        let unicode = TextOrder::of(Some(&collated("utf8mb4_unicode_ci")), Dialect::MySql);
        assert!(unicode.exact_for("New York 2") && !unicode.exact_for("a_b"));
        assert!(!unicode.exact_for("trailing "));
        let nopad = TextOrder::of(Some(&collated("utf8mb4_0900_bin")), Dialect::MySql);
        assert_eq!(nopad, TextOrder::Bytes);
        let cs = TextOrder::of(Some(&collated("utf8mb4_0900_as_cs")), Dialect::MySql);
        assert_eq!(cs, TextOrder::Unknown);
        // An expression's: only where every collation agrees.
        let mut unknown = collated("x");
        unknown.collation = None;
        let unknown = TextOrder::of(Some(&unknown), Dialect::MySql);
        assert!(unknown.exact_for("newyork2") && !unknown.exact_for("New"));
        assert!(!unknown.exact_for("new york"));
        assert_eq!(TextOrder::of(None, Dialect::Postgres), TextOrder::Bytes);
        // A PostgreSQL database with a linguistic collation: lower-case letters and digits
        // only; its equality is the bytes' (deterministic), so grouping needs no check.
        let mut pg = Column::new("s", SqlType::Text);
        pg.oid = Some(25);
        pg.collation = Some("c:en_US.UTF-8".into());
        let linguistic = TextOrder::of(Some(&pg), Dialect::Postgres);
        assert_eq!(linguistic, TextOrder::Linguistic);
        assert!(linguistic.exact_for("abc42") && !linguistic.exact_for("a b"));
        assert!(!linguistic.exact_for("Abc") && linguistic.equal_as_bytes());
        pg.collation = Some(crate::collations::UNKNOWN.into());
        let nondeterministic = TextOrder::of(Some(&pg), Dialect::Postgres);
        assert_eq!(nondeterministic, TextOrder::Unknown);
        assert!(!nondeterministic.equal_as_bytes());

        // Grouping 'e' and 'é' (one group under general_ci, two by bytes) is refused; so is
        // ordering by them.
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Index(0)];
        let results = |rows: Vec<Vec<Value>>| -> Vec<UnitResult> {
            rows.into_iter()
                .map(|row| UnitResult {
                    affected_rows: 1,
                    columns: vec![collated("utf8mb4_general_ci")],
                    rows: vec![row],
                    streamed: None,
                })
                .collect()
        };
        let refused = merge(&s, results(vec![vec![text("e")], vec![text("é")]]));
        assert!(
            matches!(refused, Err(MergeError::Collation { .. })),
            "{refused:?}"
        );
        s.group_by.clear();
        s.order_by = vec![asc(0)];
        let refused = merge(&s, results(vec![vec![text("f")], vec![text("é")]]));
        assert!(
            matches!(refused, Err(MergeError::Collation { .. })),
            "{refused:?}"
        );
        let merged = merge(&s, results(vec![vec![text("_x")], vec![text("abc")]])).unwrap();
        assert_eq!(merged.rows, vec![vec![text("abc")], vec![text("_x")]]);
    }

    #[test]
    fn mysql_compares_text_case_insensitively_postgres_bytewise() {
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(0)];
        let merged = single_column(
            Dialect::MySql,
            &s,
            vec![
                vec![text("apple"), text("Cherry")],
                vec![text("Banana"), text("date")],
            ],
        );
        assert_eq!(
            merged,
            vec![text("apple"), text("Banana"), text("Cherry"), text("date")]
        );

        let mut s = spec(Dialect::Postgres);
        s.order_by = vec![asc(0)];
        let merged = single_column(
            Dialect::Postgres,
            &s,
            vec![
                vec![text("Banana"), text("apple")],
                vec![text("Cherry"), text("date")],
            ],
        );
        assert_eq!(
            merged,
            vec![text("Banana"), text("Cherry"), text("apple"), text("date")]
        );
    }

    #[test]
    fn digit_strings_in_text_columns_sort_as_text_decimals_as_numbers() {
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(0)];
        let merged = single_column(
            Dialect::MySql,
            &s,
            vec![vec![text("10"), text("9")], vec![text("100")]],
        );
        assert_eq!(merged, vec![text("10"), text("100"), text("9")]);

        let cols = &[("price", "DECIMAL")];
        let results = vec![
            shard(cols, vec![vec![text("9.50")], vec![text("10.00")]]),
            shard(cols, vec![vec![text("-1")], vec![text("9.6")]]),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        assert_eq!(
            rows.concat(),
            vec![text("-1"), text("9.50"), text("9.6"), text("10.00")]
        );
    }

    #[test]
    fn compare_is_a_total_order_on_mixed_values() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for dialect in [Dialect::MySql, Dialect::Postgres] {
            for numeric_text in [false, true] {
                let values: Vec<Value> = (0..40).map(|_| rng.value()).collect();
                let text = TextOrder::of(None, dialect);
                let cmp = |a: &Value, b: &Value| compare(a, b, text, numeric_text);
                for a in &values {
                    for b in &values {
                        assert_eq!(cmp(a, b), cmp(b, a).reverse(), "{a:?} {b:?}");
                        for c in &values {
                            if cmp(a, b).is_le() && cmp(b, c).is_le() {
                                assert!(cmp(a, c).is_le(), "{a:?} <= {b:?} <= {c:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}
