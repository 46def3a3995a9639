//! Merging the shards' result sets of a read into the one result a single database holding all
//! the rows would have returned, as the router's [`MergeSpec`] describes it.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use keyshard_router::Dialect;
use keyshard_router::Value;
use keyshard_router::merge::{Aggregate, ColumnRef, MergeSpec};

use crate::numeric::Decimal;
use crate::outcome::{Column, UnitResult};

/// Why the shards' results could not be merged. Every variant is a plan that does not fit the
/// results (a router bug) or a value the merge cannot combine, never a shard's fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MergeError {
    /// An ORDER BY / GROUP BY column name that no result column has.
    #[error("merge: no result column named '{0}'")]
    UnknownColumn(String),
    /// A column position beyond the result's columns.
    #[error("merge: column {index} does not exist; the result has {width} columns")]
    ColumnOutOfRange {
        /// The position asked for.
        index: usize,
        /// How many columns the rows have.
        width: usize,
    },
    /// Shards (or rows) disagree on how many columns a row has.
    #[error("merge: a row has {found} columns, expected {expected}")]
    RowWidth {
        /// The result's column count.
        expected: usize,
        /// The offending row's.
        found: usize,
    },
    /// More hidden columns than the result has.
    #[error("merge: {hidden} hidden columns, but the result has only {width}")]
    HiddenColumns {
        /// `MergeSpec::hidden_columns`.
        hidden: usize,
        /// How many columns the rows have.
        width: usize,
    },
    /// A SUM/COUNT/AVG partial value that is not a number.
    #[error("merge: column {column} holds {value}, which cannot be added")]
    NotNumeric {
        /// Its position.
        column: usize,
        /// The value, as debug text.
        value: String,
    },
    /// An AVG's count that is not a non-negative integer fitting in 64 bits.
    #[error("merge: column {column} holds {value}, which is not a row count")]
    BadCount {
        /// Its position.
        column: usize,
        /// The count, as text.
        value: String,
    },
}

/// MariaDB's `div_precision_increment` default: the digits AVG adds to its argument's scale.
const AVG_EXTRA_SCALE: usize = 4;

/// Merges the shards' results (in shard order) as `spec` says.
pub(crate) fn merge(spec: &MergeSpec, results: Vec<UnitResult>) -> Result<UnitResult, MergeError> {
    let affected_rows = results
        .iter()
        .fold(0u64, |sum, r| sum.saturating_add(r.affected_rows));
    let mut columns = results
        .iter()
        .find(|r| !r.columns.is_empty())
        .map(|r| r.columns.clone())
        .unwrap_or_default();
    let shards: Vec<Vec<Vec<Value>>> = results.into_iter().map(|r| r.rows).collect();
    let width = match columns.len() {
        0 => shards.iter().flatten().next().map_or(0, Vec::len),
        n => n,
    };
    if width == 0 {
        // No columns and no rows: nothing to merge, nothing to resolve names against.
        return Ok(UnitResult {
            affected_rows,
            columns,
            rows: Vec::new(),
        });
    }
    check_widths(&shards, width)?;
    let plan = Resolved::new(spec, &columns, width)?;

    let grouping = !spec.aggregates.is_empty() || !spec.group_by.is_empty();
    let mut rows = if grouping {
        let (mut groups, avg_types) = plan.group(shards)?;
        if !plan.order_by.is_empty() {
            groups.sort_by(|a, b| plan.compare_rows(&plan.order_by, a, b));
        }
        set_avg_types(&mut columns, &avg_types);
        window(spec, groups.into_iter())
    } else if plan.order_by.is_empty() {
        window(spec, shards.into_iter().flatten())
    } else {
        window(spec, KWayMerge::new(&plan, shards))
    };

    let visible = width
        .checked_sub(spec.hidden_columns)
        .ok_or(MergeError::HiddenColumns {
            hidden: spec.hidden_columns,
            width,
        })?;
    columns.truncate(visible);
    for row in &mut rows {
        row.truncate(visible);
    }
    Ok(UnitResult {
        affected_rows,
        columns,
        rows,
    })
}

fn check_widths(shards: &[Vec<Vec<Value>>], width: usize) -> Result<(), MergeError> {
    match shards.iter().flatten().find(|row| row.len() != width) {
        Some(row) => Err(MergeError::RowWidth {
            expected: width,
            found: row.len(),
        }),
        None => Ok(()),
    }
}

/// OFFSET and LIMIT, pulling only the rows needed so a k-way merge stops early.
fn window(spec: &MergeSpec, rows: impl Iterator<Item = Vec<Value>>) -> Vec<Vec<Value>> {
    let offset = usize::try_from(spec.offset).unwrap_or(usize::MAX);
    let limit = spec
        .limit
        .map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    rows.skip(offset).take(limit).collect()
}

fn set_avg_types(columns: &mut [Column], avg_types: &[(usize, &'static str)]) {
    for &(index, type_name) in avg_types {
        if let Some(column) = columns.get_mut(index) {
            column.type_name = type_name.to_owned();
        }
    }
}

/// One ORDER BY key, with its column position and NULL placement settled.
#[derive(Debug, Clone, Copy)]
struct Key {
    index: usize,
    descending: bool,
    nulls_first: bool,
}

/// The spec with every column reference resolved against the result's columns.
struct Resolved {
    dialect: Dialect,
    group_by: Vec<Key>,
    order_by: Vec<Key>,
    aggregates: Vec<(usize, Aggregate)>,
    /// Per column: whether its text values are decimal numbers (MariaDB's DECIMAL arrives as
    /// text) and must compare numerically rather than as strings.
    numeric_text: Vec<bool>,
}

impl Resolved {
    fn new(spec: &MergeSpec, columns: &[Column], width: usize) -> Result<Self, MergeError> {
        let in_range = |index: usize| {
            if index < width {
                Ok(index)
            } else {
                Err(MergeError::ColumnOutOfRange { index, width })
            }
        };
        let resolve = |column: &ColumnRef| match column {
            ColumnRef::Index(index) => in_range(*index),
            ColumnRef::Name(name) => {
                find_column(columns, name).ok_or_else(|| MergeError::UnknownColumn(name.clone()))
            }
        };
        let group_by = spec
            .group_by
            .iter()
            .map(|column| {
                let index = resolve(column)?;
                Ok(Key {
                    index,
                    descending: false,
                    nulls_first: default_nulls_first(spec.dialect, false),
                })
            })
            .collect::<Result<_, MergeError>>()?;
        let order_by = spec
            .order_by
            .iter()
            .map(|key| {
                Ok(Key {
                    index: resolve(&key.column)?,
                    descending: key.descending,
                    nulls_first: key
                        .nulls_first
                        .unwrap_or_else(|| default_nulls_first(spec.dialect, key.descending)),
                })
            })
            .collect::<Result<_, MergeError>>()?;
        let aggregates = spec
            .aggregates
            .iter()
            .map(|a| {
                if let Aggregate::Avg { count_index } = a.function {
                    in_range(count_index)?;
                }
                Ok((in_range(a.index)?, a.function))
            })
            .collect::<Result<Vec<_>, MergeError>>()?;
        let mut numeric_text: Vec<bool> = (0..width)
            .map(|i| columns.get(i).is_some_and(is_decimal_column))
            .collect();
        for &(index, function) in &aggregates {
            if matches!(function, Aggregate::Sum | Aggregate::Avg { .. })
                && let Some(flag) = numeric_text.get_mut(index)
            {
                *flag = true;
            }
        }
        Ok(Self {
            dialect: spec.dialect,
            group_by,
            order_by,
            aggregates,
            numeric_text,
        })
    }

    fn compare_rows(&self, keys: &[Key], a: &[Value], b: &[Value]) -> Ordering {
        keys.iter()
            .map(|key| {
                let numeric_text = self.numeric_text.get(key.index).copied().unwrap_or(false);
                compare_key(
                    a.get(key.index).unwrap_or(&Value::Null),
                    b.get(key.index).unwrap_or(&Value::Null),
                    key,
                    self.dialect,
                    numeric_text,
                )
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// Groups all rows and combines each group's aggregates. Returns the groups, ordered by the
    /// GROUP BY columns, and the type name each AVG column gets.
    #[allow(clippy::type_complexity)]
    fn group(
        &self,
        shards: Vec<Vec<Vec<Value>>>,
    ) -> Result<(Vec<Vec<Value>>, Vec<(usize, &'static str)>), MergeError> {
        let mut rows: Vec<Vec<Value>> = shards.into_iter().flatten().collect();
        // Stable, so each group's rows stay in shard order and its "first row" is well defined.
        rows.sort_by(|a, b| self.compare_rows(&self.group_by, a, b));
        let mut groups = Vec::new();
        let mut avg_decimal: Vec<Option<bool>> = vec![None; self.aggregates.len()];
        let mut start = 0;
        while start < rows.len() {
            let end = (start + 1..rows.len())
                .find(|&i| {
                    self.compare_rows(&self.group_by, &rows[start], &rows[i])
                        .is_ne()
                })
                .unwrap_or(rows.len());
            groups.push(self.combine(&rows[start..end], &mut avg_decimal)?);
            start = end;
        }
        let avg_types = self
            .aggregates
            .iter()
            .zip(avg_decimal)
            .filter(|((_, function), _)| matches!(function, Aggregate::Avg { .. }))
            .map(|(&(index, _), decimal)| {
                let decimal = decimal.unwrap_or(self.dialect == Dialect::MySql);
                let exact = exact_average_type(self.dialect);
                (index, if decimal { exact } else { "DOUBLE" })
            })
            .collect();
        Ok((groups, avg_types))
    }

    /// One group's row: its first row, with every aggregate combined over all its rows.
    fn combine(
        &self,
        rows: &[Vec<Value>],
        avg_decimal: &mut [Option<bool>],
    ) -> Result<Vec<Value>, MergeError> {
        let Some(first) = rows.first() else {
            return Ok(Vec::new());
        };
        let mut out = first.clone();
        for (&(index, function), decimal) in self.aggregates.iter().zip(avg_decimal) {
            let column = || {
                rows.iter()
                    .map(move |row| row.get(index).unwrap_or(&Value::Null))
            };
            let value = match function {
                Aggregate::Count => match Sum::of(column(), index)?.into_value() {
                    Value::Null => Value::Int(0),
                    count => count,
                },
                Aggregate::Sum => Sum::of(column(), index)?.into_value(),
                Aggregate::Min => self.extreme(column(), index, Ordering::Less),
                Aggregate::Max => self.extreme(column(), index, Ordering::Greater),
                Aggregate::Avg { count_index } => {
                    let counts = rows
                        .iter()
                        .map(|row| row.get(count_index).unwrap_or(&Value::Null));
                    let count = Sum::of(counts, count_index)?;
                    let sum = Sum::of(column(), index)?;
                    if let Some(slot) = out.get_mut(count_index) {
                        // The count column may be a visible COUNT(x) the router reused.
                        *slot = count.clone().into_value();
                    }
                    let (avg, is_decimal) = average(sum, count, count_index, self.dialect)?;
                    if decimal.is_none() {
                        *decimal = is_decimal;
                    }
                    avg
                }
            };
            if let Some(slot) = out.get_mut(index) {
                *slot = value;
            }
        }
        Ok(out)
    }

    /// MIN (`wanted` = Less) or MAX (Greater) over the non-NULL values; ties keep the first.
    fn extreme<'v>(
        &self,
        values: impl Iterator<Item = &'v Value>,
        index: usize,
        wanted: Ordering,
    ) -> Value {
        let numeric_text = self.numeric_text.get(index).copied().unwrap_or(false);
        values
            .filter(|v| !matches!(v, Value::Null))
            .fold(None::<&Value>, |best, v| match best {
                Some(b) if compare(v, b, self.dialect, numeric_text) != wanted => Some(b),
                _ => Some(v),
            })
            .cloned()
            .unwrap_or(Value::Null)
    }
}

/// Finds a column by name, case-insensitively; `o.status` also finds `status`.
fn find_column(columns: &[Column], name: &str) -> Option<usize> {
    let unquote = |s: &str| s.trim_matches(|c| c == '`' || c == '"').to_owned();
    let full = unquote(name);
    let last = name.rsplit('.').next().map(unquote).unwrap_or_default();
    [full, last].iter().find_map(|wanted| {
        columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(wanted))
    })
}

fn is_decimal_column(column: &Column) -> bool {
    let type_name = column.type_name.to_ascii_uppercase();
    type_name.contains("DECIMAL") || type_name.contains("NUMERIC")
}

fn default_nulls_first(dialect: Dialect, descending: bool) -> bool {
    match dialect {
        Dialect::MySql => !descending,
        Dialect::Postgres => descending,
    }
}

/// Orders two values under one ORDER BY key: NULLs where the key puts them, others by
/// [`compare`], reversed for DESC.
fn compare_key(a: &Value, b: &Value, key: &Key, dialect: Dialect, numeric_text: bool) -> Ordering {
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
            let order = compare(a, b, dialect, numeric_text);
            if key.descending {
                order.reverse()
            } else {
                order
            }
        }
    }
}

/// Orders two values as the dialect's database does; NULL sorts lowest here (callers place
/// NULLs themselves). `numeric_text`: the column's text values are decimal numbers.
///
/// This must be a total order, or sorting may panic: numbers come before text, text before
/// bytes, and whether a text is a number depends on its column only, never on the other
/// value (otherwise "10" < "9" as text, "9" < "10" as numbers and "1a" between would cycle).
fn compare(a: &Value, b: &Value, dialect: Dialect, numeric_text: bool) -> Ordering {
    use Value::{Bytes, Int, Text, UInt};
    match (a, b) {
        (Int(x), Int(y)) => x.cmp(y),
        (Int(_) | UInt(_), Int(_) | UInt(_)) => integer(a).cmp(&integer(b)),
        (Text(x), Text(y)) if !numeric_text => compare_text(x, y, dialect),
        (Bytes(x), Bytes(y)) => x.cmp(y),
        _ => compare_sort_values(
            &SortValue::of(a, numeric_text),
            &SortValue::of(b, numeric_text),
            dialect,
        ),
    }
}

fn integer(value: &Value) -> i128 {
    match value {
        Value::Int(v) => i128::from(*v),
        Value::UInt(v) => i128::from(*v),
        _ => 0,
    }
}

fn compare_text(a: &str, b: &str, dialect: Dialect) -> Ordering {
    match dialect {
        // utf8mb4_general_ci, approximately: ASCII letters fold; other bytes compare as they are.
        Dialect::MySql => a
            .bytes()
            .map(|c| c.to_ascii_lowercase())
            .cmp(b.bytes().map(|c| c.to_ascii_lowercase())),
        Dialect::Postgres => a.as_bytes().cmp(b.as_bytes()),
    }
}

/// A value's class and position within it, for comparisons across representations.
enum SortValue<'v> {
    Null,
    Number(NumberKey),
    Text(&'v str),
    Bytes(&'v [u8]),
}

impl<'v> SortValue<'v> {
    fn of(value: &'v Value, numeric_text: bool) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::Int(v) => Self::Number(NumberKey::exact(Exact::Int(i128::from(*v)))),
            Value::UInt(v) => Self::Number(NumberKey::exact(Exact::Int(i128::from(*v)))),
            Value::Double(v) => Self::Number(NumberKey::double(*v)),
            Value::Text(s) => match Decimal::parse(s).filter(|_| numeric_text) {
                Some(d) => Self::Number(NumberKey::exact(Exact::Dec(d))),
                None => Self::Text(s),
            },
            Value::Bytes(b) => Self::Bytes(b),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Self::Null => 0,
            Self::Number(_) => 1,
            Self::Text(_) => 2,
            Self::Bytes(_) => 3,
        }
    }
}

fn compare_sort_values(a: &SortValue, b: &SortValue, dialect: Dialect) -> Ordering {
    match (a, b) {
        (SortValue::Number(x), SortValue::Number(y)) => x.cmp(y),
        (SortValue::Text(x), SortValue::Text(y)) => compare_text(x, y, dialect),
        (SortValue::Bytes(x), SortValue::Bytes(y)) => x.cmp(y),
        _ => a.rank().cmp(&b.rank()),
    }
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

/// An exactly known number: an integer, or a decimal once a decimal (or an overflow) is seen.
#[derive(Debug, Clone)]
enum Exact {
    Int(i128),
    Dec(Decimal),
}

impl Exact {
    fn add(self, other: Exact) -> Exact {
        match (self, other) {
            (Exact::Int(x), Exact::Int(y)) => match x.checked_add(y) {
                Some(sum) => Exact::Int(sum),
                None => Exact::Dec(Decimal::from_int(x).add(&Decimal::from_int(y))),
            },
            (x, y) => Exact::Dec(x.into_decimal().add(&y.into_decimal())),
        }
    }

    fn into_decimal(self) -> Decimal {
        match self {
            Exact::Int(v) => Decimal::from_int(v),
            Exact::Dec(d) => d,
        }
    }

    fn cmp(&self, other: &Exact) -> Ordering {
        match (self, other) {
            (Exact::Int(x), Exact::Int(y)) => x.cmp(y),
            _ => self
                .clone()
                .into_decimal()
                .cmp(&other.clone().into_decimal()),
        }
    }

    fn to_f64(&self) -> f64 {
        match self {
            Exact::Int(v) => *v as f64,
            Exact::Dec(d) => d.to_f64(),
        }
    }

    /// Integers stay integers while they fit; decimals (and huge integers) become text, as
    /// MariaDB sends DECIMAL.
    fn into_value(self) -> Value {
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

/// A running SUM over partial values: exact while only integers and decimals are seen.
#[derive(Debug, Clone, Default)]
struct Sum {
    exact: Option<Exact>,
    double: Option<f64>,
}

impl Sum {
    fn of<'v>(values: impl Iterator<Item = &'v Value>, column: usize) -> Result<Sum, MergeError> {
        let mut sum = Sum::default();
        for value in values {
            sum.add(value, column)?;
        }
        Ok(sum)
    }

    fn add(&mut self, value: &Value, column: usize) -> Result<(), MergeError> {
        let exact = match value {
            Value::Null => return Ok(()),
            Value::Int(v) => Exact::Int(i128::from(*v)),
            Value::UInt(v) => Exact::Int(i128::from(*v)),
            Value::Double(v) => {
                self.double = Some(self.double.unwrap_or(0.0) + v);
                return Ok(());
            }
            Value::Text(s) => {
                Exact::Dec(Decimal::parse(s).ok_or_else(|| MergeError::NotNumeric {
                    column,
                    value: format!("{value:?}"),
                })?)
            }
            Value::Bytes(_) => {
                return Err(MergeError::NotNumeric {
                    column,
                    value: format!("{value:?}"),
                });
            }
        };
        self.exact = Some(match self.exact.take() {
            Some(acc) => acc.add(exact),
            None => exact,
        });
        Ok(())
    }

    fn is_null(&self) -> bool {
        self.exact.is_none() && self.double.is_none()
    }

    fn to_f64(&self) -> f64 {
        self.double.unwrap_or(0.0) + self.exact.as_ref().map_or(0.0, Exact::to_f64)
    }

    fn into_value(self) -> Value {
        match (self.double, self.exact) {
            (None, None) => Value::Null,
            (None, Some(exact)) => exact.into_value(),
            (Some(d), exact) => Value::Double(d + exact.as_ref().map_or(0.0, Exact::to_f64)),
        }
    }

    /// The sum as a row count.
    fn into_count(self, column: usize) -> Result<u64, MergeError> {
        let bad = |value: String| MergeError::BadCount { column, value };
        if self.double.is_some() {
            let v = self.to_f64();
            return if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 {
                Ok(v as u64)
            } else {
                Err(bad(v.to_string()))
            };
        }
        match self.exact {
            None => Ok(0),
            Some(exact) => {
                let decimal = exact.into_decimal();
                decimal.to_u64().ok_or_else(|| bad(decimal.to_string()))
            }
        }
    }
}

/// AVG from the summed SUMs and COUNTs; also whether it came out as a decimal (`None`: NULL,
/// undecided).
fn average(
    sum: Sum,
    count: Sum,
    count_index: usize,
    dialect: Dialect,
) -> Result<(Value, Option<bool>), MergeError> {
    let count = count.into_count(count_index)?;
    if count == 0 || sum.is_null() {
        return Ok((Value::Null, None));
    }
    match (sum.double, sum.exact.clone()) {
        (None, Some(exact)) => {
            let sum = exact.into_decimal();
            let extra = match dialect {
                Dialect::MySql => AVG_EXTRA_SCALE,
                Dialect::Postgres => sum.pg_division_scale(count).saturating_sub(sum.scale()),
            };
            let avg = sum
                .div_round(count, extra)
                .map_or(Value::Null, |d| Value::Text(d.to_string()));
            Ok((avg, Some(true)))
        }
        _ => Ok((Value::Double(sum.to_f64() / count as f64), Some(false))),
    }
}

/// The type name of an exact average: MySQL's DECIMAL or PostgreSQL's NUMERIC.
pub(crate) fn exact_average_type(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::MySql => "DECIMAL",
        Dialect::Postgres => "NUMERIC",
    }
}

/// The shards' sorted rows merged into one sorted stream; ties go to the lower shard, so the
/// result equals a stable sort of the shards' concatenation.
struct KWayMerge<'p> {
    plan: &'p Resolved,
    cursors: Vec<std::vec::IntoIter<Vec<Value>>>,
    heap: BinaryHeap<Head<'p>>,
}

impl<'p> KWayMerge<'p> {
    fn new(plan: &'p Resolved, shards: Vec<Vec<Vec<Value>>>) -> Self {
        let mut cursors: Vec<_> = shards.into_iter().map(Vec::into_iter).collect();
        let heap = cursors
            .iter_mut()
            .enumerate()
            .filter_map(|(shard, cursor)| Some(Head::new(plan, shard, cursor.next()?)))
            .collect();
        Self {
            plan,
            cursors,
            heap,
        }
    }
}

impl Iterator for KWayMerge<'_> {
    type Item = Vec<Value>;

    fn next(&mut self) -> Option<Vec<Value>> {
        let head = self.heap.pop()?;
        if let Some(row) = self.cursors.get_mut(head.shard).and_then(Iterator::next) {
            self.heap.push(Head::new(self.plan, head.shard, row));
        }
        Some(head.row)
    }
}

/// A shard's next row, ordered so that `BinaryHeap` (a max-heap) pops the smallest first.
struct Head<'p> {
    plan: &'p Resolved,
    shard: usize,
    row: Vec<Value>,
}

impl<'p> Head<'p> {
    fn new(plan: &'p Resolved, shard: usize, row: Vec<Value>) -> Self {
        Self { plan, shard, row }
    }
}

impl Ord for Head<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.plan
            .compare_rows(&self.plan.order_by, &other.row, &self.row)
            .then_with(|| other.shard.cmp(&self.shard))
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use keyshard_router::merge::{AggregateColumn, SortKey};

    use Value::{Double, Int, Null, Text, UInt};

    fn spec(dialect: Dialect) -> MergeSpec {
        MergeSpec {
            group_by: Vec::new(),
            aggregates: Vec::new(),
            order_by: Vec::new(),
            offset: 0,
            limit: None,
            hidden_columns: 0,
            dialect,
        }
    }

    fn columns(names: &[(&str, &str)]) -> Vec<Column> {
        names
            .iter()
            .map(|(name, type_name)| Column {
                name: (*name).to_owned(),
                type_name: (*type_name).to_owned(),
            })
            .collect()
    }

    fn shard(cols: &[(&str, &str)], rows: Vec<Vec<Value>>) -> UnitResult {
        UnitResult {
            affected_rows: rows.len() as u64,
            columns: columns(cols),
            rows,
        }
    }

    fn text(s: &str) -> Value {
        Text(s.to_owned())
    }

    fn asc(index: usize) -> SortKey {
        SortKey {
            column: ColumnRef::Index(index),
            descending: false,
            nulls_first: None,
        }
    }

    fn desc(index: usize) -> SortKey {
        SortKey {
            descending: true,
            ..asc(index)
        }
    }

    fn agg(index: usize, function: Aggregate) -> AggregateColumn {
        AggregateColumn { index, function }
    }

    /// One column per value: shards of single-column rows.
    fn single_column(dialect: Dialect, spec: &MergeSpec, shards: Vec<Vec<Value>>) -> Vec<Value> {
        let type_name = match dialect {
            Dialect::MySql => "VARCHAR",
            Dialect::Postgres => "TEXT",
        };
        let results = shards
            .into_iter()
            .map(|values| {
                shard(
                    &[("v", type_name)],
                    values.into_iter().map(|v| vec![v]).collect(),
                )
            })
            .collect();
        merge(spec, results)
            .expect("merges")
            .rows
            .into_iter()
            .flatten()
            .collect()
    }

    const ID: &[(&str, &str)] = &[("id", "BIGINT")];

    #[test]
    fn without_order_rows_are_concatenated_in_shard_order() {
        let results = vec![
            shard(ID, vec![vec![Int(3)], vec![Int(1)]]),
            UnitResult::default(),
            shard(ID, vec![vec![Int(2)]]),
        ];
        let merged = merge(&spec(Dialect::MySql), results).expect("merges");
        assert_eq!(merged.rows, vec![vec![Int(3)], vec![Int(1)], vec![Int(2)]]);
        assert_eq!(merged.affected_rows, 3);
        assert_eq!(merged.columns, columns(ID));
    }

    #[test]
    fn columns_come_from_the_first_shard_that_has_them() {
        let results = vec![UnitResult::default(), shard(ID, vec![vec![Int(1)]])];
        let merged = merge(&spec(Dialect::Postgres), results).expect("merges");
        assert_eq!(merged.columns, columns(ID));
        assert_eq!(merged.rows, vec![vec![Int(1)]]);
    }

    #[test]
    fn nothing_at_all_merges_to_nothing() {
        let merged = merge(&spec(Dialect::MySql), Vec::new()).expect("merges");
        assert!(merged.rows.is_empty() && merged.columns.is_empty());
        let mut s = spec(Dialect::MySql);
        s.aggregates = vec![agg(0, Aggregate::Count)];
        s.hidden_columns = 3;
        let results = vec![UnitResult::default(), UnitResult::default()];
        let merged = merge(&s, results).expect("merges");
        assert!(merged.rows.is_empty() && merged.columns.is_empty());
    }

    #[test]
    fn order_by_merges_sorted_shards_ascending_and_descending() {
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(0)];
        let merged = single_column(
            Dialect::MySql,
            &s,
            vec![
                vec![Int(1), Int(4), Int(9)],
                vec![],
                vec![Int(2), UInt(5), Double(8.5)],
            ],
        );
        assert_eq!(
            merged,
            vec![Int(1), Int(2), Int(4), UInt(5), Double(8.5), Int(9)]
        );

        s.order_by = vec![desc(0)];
        let merged = single_column(
            Dialect::MySql,
            &s,
            vec![
                vec![Int(9), Int(4), Int(1)],
                vec![Double(8.5), UInt(5), Int(2)],
            ],
        );
        assert_eq!(
            merged,
            vec![Int(9), Double(8.5), UInt(5), Int(4), Int(2), Int(1)]
        );
    }

    #[test]
    fn order_by_several_keys_and_ties_keep_shard_order() {
        let mut s = spec(Dialect::Postgres);
        s.order_by = vec![asc(0), desc(1)];
        let cols = &[("a", "INT8"), ("b", "INT8"), ("shard", "TEXT")];
        let results = vec![
            shard(
                cols,
                vec![
                    vec![Int(1), Int(5), text("x")],
                    vec![Int(2), Int(1), text("x")],
                ],
            ),
            shard(
                cols,
                vec![
                    vec![Int(1), Int(7), text("y")],
                    vec![Int(2), Int(1), text("y")],
                ],
            ),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        let order: Vec<_> = rows.iter().map(|r| (r[0].clone(), r[2].clone())).collect();
        assert_eq!(
            order,
            vec![
                (Int(1), text("y")),
                (Int(1), text("x")),
                (Int(2), text("x")),
                (Int(2), text("y"))
            ]
        );
    }

    #[test]
    fn nulls_sort_where_each_dialect_puts_them() {
        // MySQL: NULL first ascending, last descending.
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(0)];
        let merged = single_column(Dialect::MySql, &s, vec![vec![Null, Int(2)], vec![Int(1)]]);
        assert_eq!(merged, vec![Null, Int(1), Int(2)]);
        s.order_by = vec![desc(0)];
        let merged = single_column(Dialect::MySql, &s, vec![vec![Int(2), Null], vec![Int(1)]]);
        assert_eq!(merged, vec![Int(2), Int(1), Null]);

        // PostgreSQL: NULL last ascending, first descending.
        let mut s = spec(Dialect::Postgres);
        s.order_by = vec![asc(0)];
        let merged = single_column(
            Dialect::Postgres,
            &s,
            vec![vec![Int(2), Null], vec![Int(1)]],
        );
        assert_eq!(merged, vec![Int(1), Int(2), Null]);
        s.order_by = vec![desc(0)];
        let merged = single_column(
            Dialect::Postgres,
            &s,
            vec![vec![Null, Int(2)], vec![Int(1)]],
        );
        assert_eq!(merged, vec![Null, Int(2), Int(1)]);

        // NULLS FIRST as written wins, also descending.
        s.order_by = vec![SortKey {
            nulls_first: Some(false),
            ..desc(0)
        }];
        let merged = single_column(
            Dialect::Postgres,
            &s,
            vec![vec![Int(2), Null], vec![Int(1)]],
        );
        assert_eq!(merged, vec![Int(2), Int(1), Null]);
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
    fn offset_and_limit_apply_after_merging() {
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(0)];
        s.offset = 1;
        s.limit = Some(3);
        let merged = single_column(
            Dialect::MySql,
            &s,
            vec![vec![Int(1), Int(3), Int(5)], vec![Int(2), Int(4), Int(6)]],
        );
        assert_eq!(merged, vec![Int(2), Int(3), Int(4)]);

        // Without ORDER BY too, and an offset past the end is no error.
        let mut s = spec(Dialect::MySql);
        s.offset = 2;
        s.limit = Some(1);
        let merged = single_column(Dialect::MySql, &s, vec![vec![Int(1)], vec![Int(2), Int(3)]]);
        assert_eq!(merged, vec![Int(3)]);
        s.offset = 10;
        assert!(single_column(Dialect::MySql, &s, vec![vec![Int(1)]]).is_empty());
        s.offset = u64::MAX;
        s.limit = Some(u64::MAX);
        assert!(single_column(Dialect::MySql, &s, vec![vec![Int(1)]]).is_empty());
    }

    const AGG: &[(&str, &str)] = &[
        ("cnt", "BIGINT"),
        ("total", "BIGINT"),
        ("lo", "VARCHAR"),
        ("hi", "BIGINT"),
    ];

    fn aggregates() -> Vec<AggregateColumn> {
        vec![
            agg(0, Aggregate::Count),
            agg(1, Aggregate::Sum),
            agg(2, Aggregate::Min),
            agg(3, Aggregate::Max),
        ]
    }

    #[test]
    fn aggregates_without_group_by_make_one_row() {
        let mut s = spec(Dialect::MySql);
        s.aggregates = aggregates();
        let results = vec![
            shard(AGG, vec![vec![Int(2), Int(10), text("b"), Int(7)]]),
            shard(AGG, vec![vec![Int(0), Null, Null, Null]]),
            shard(AGG, vec![vec![Int(3), Int(-4), text("A"), Int(9)]]),
        ];
        let merged = merge(&s, results).expect("merges");
        assert_eq!(merged.rows, vec![vec![Int(5), Int(6), text("A"), Int(9)]]);

        // Every shard empty-handed: still one row, of zeros and NULLs.
        let results = vec![
            shard(AGG, vec![vec![Int(0), Null, Null, Null]]),
            shard(AGG, vec![vec![Int(0), Null, Null, Null]]),
        ];
        let merged = merge(&s, results).expect("merges");
        assert_eq!(merged.rows, vec![vec![Int(0), Null, Null, Null]]);

        // No rows at all: no rows.
        let results = vec![shard(AGG, vec![]), UnitResult::default()];
        assert!(merge(&s, results).expect("merges").rows.is_empty());
    }

    #[test]
    fn aggregates_with_group_by_combine_per_group_in_group_order() {
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Name("status".into())];
        s.aggregates = vec![
            agg(1, Aggregate::Count),
            agg(2, Aggregate::Sum),
            agg(3, Aggregate::Max),
        ];
        let cols = &[
            ("status", "VARCHAR"),
            ("n", "BIGINT"),
            ("s", "BIGINT"),
            ("m", "BIGINT"),
            ("note", "TEXT"),
        ];
        let results = vec![
            shard(
                cols,
                vec![
                    vec![Null, Int(1), Int(1), Int(1), text("n0")],
                    vec![text("new"), Int(2), Int(20), Int(15), text("first")],
                    vec![text("paid"), Int(1), Int(5), Int(5), text("p0")],
                ],
            ),
            shard(
                cols,
                vec![
                    vec![text("NEW"), Int(3), Int(30), Int(12), text("second")],
                    vec![text("closed"), Int(1), UInt(u64::MAX), Int(3), text("c")],
                ],
            ),
            shard(
                cols,
                vec![vec![text("paid"), Int(4), Int(-5), Int(9), text("p1")]],
            ),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        assert_eq!(
            rows,
            vec![
                vec![Null, Int(1), Int(1), Int(1), text("n0")],
                vec![text("closed"), Int(1), UInt(u64::MAX), Int(3), text("c")],
                // MySQL's collation: "new" and "NEW" are one group, which keeps its first row's.
                vec![text("new"), Int(5), Int(50), Int(15), text("first")],
                vec![text("paid"), Int(5), Int(0), Int(9), text("p0")],
            ]
        );

        // PostgreSQL: case matters and NULL's group comes last.
        s.dialect = Dialect::Postgres;
        let results = vec![
            shard(
                cols,
                vec![
                    vec![text("new"), Int(2), Int(20), Int(15), text("a")],
                    vec![Null, Int(1), Int(1), Int(1), text("n")],
                ],
            ),
            shard(
                cols,
                vec![vec![text("NEW"), Int(3), Int(30), Int(12), text("b")]],
            ),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        let keys: Vec<_> = rows.iter().map(|r| r[0].clone()).collect();
        assert_eq!(keys, vec![text("NEW"), text("new"), Null]);
    }

    #[test]
    fn groups_are_sorted_by_order_by_after_combining() {
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Index(0)];
        s.aggregates = vec![agg(1, Aggregate::Sum)];
        s.order_by = vec![SortKey {
            column: ColumnRef::Name("SUM(amount)".into()),
            descending: true,
            nulls_first: None,
        }];
        s.limit = Some(2);
        // MariaDB's SUM is DECIMAL, as text: "9.50" + "1.00" must beat "10.00" numerically.
        let cols = &[("user_id", "BIGINT"), ("sum(amount)", "DECIMAL")];
        let results = vec![
            shard(
                cols,
                vec![
                    vec![Int(1), text("9.50")],
                    vec![Int(2), text("10.00")],
                    vec![Int(3), text("1")],
                ],
            ),
            shard(
                cols,
                vec![vec![Int(1), text("1.00")], vec![Int(3), text("0.5")]],
            ),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        assert_eq!(
            rows,
            vec![vec![Int(1), text("10.50")], vec![Int(2), text("10.00")]]
        );
    }

    #[test]
    fn sums_stay_exact() {
        let sum = |values: Vec<Value>| {
            let mut s = spec(Dialect::MySql);
            s.aggregates = vec![agg(0, Aggregate::Sum)];
            single_column(
                Dialect::MySql,
                &s,
                values.into_iter().map(|v| vec![v]).collect(),
            )
        };
        assert_eq!(
            sum(vec![text("10.50"), Int(3), text("0.125")]),
            vec![text("13.625")]
        );
        assert_eq!(sum(vec![text("1.5"), text("-2.25")]), vec![text("-0.75")]);
        assert_eq!(sum(vec![text("1.50"), text("-1.5")]), vec![text("0.00")]);
        assert_eq!(sum(vec![text("31"), Null]), vec![text("31")]);
        assert_eq!(
            sum(vec![
                text("99999999999999999999999999999999999999999.9"),
                text("0.1")
            ]),
            vec![text("100000000000000000000000000000000000000000.0")]
        );
        assert_eq!(sum(vec![Int(i64::MAX), Int(1)]), vec![UInt(1 << 63)]);
        assert_eq!(
            sum(vec![UInt(u64::MAX), UInt(1)]),
            vec![text("18446744073709551616")]
        );
        assert_eq!(
            sum(vec![Int(i64::MIN), Int(-1)]),
            vec![text("-9223372036854775809")]
        );
        assert_eq!(sum(vec![Int(1), Double(0.5), text("2")]), vec![Double(3.5)]);
        assert_eq!(sum(vec![Null, Null]), vec![Null]);
    }

    fn avg(dialect: Dialect, shards: Vec<(Value, Value)>) -> (Value, String) {
        let mut s = spec(dialect);
        s.aggregates = vec![agg(0, Aggregate::Avg { count_index: 1 })];
        s.hidden_columns = 1;
        let cols = &[("avg(x)", "DECIMAL"), ("count(x)", "BIGINT")];
        let results = shards
            .into_iter()
            .map(|(sum, count)| shard(cols, vec![vec![sum, count]]))
            .collect();
        let merged = merge(&s, results).expect("merges");
        assert_eq!(merged.columns.len(), 1);
        let value = merged.rows.concat().into_iter().next().expect("one value");
        (value, merged.columns[0].type_name.clone())
    }

    #[test]
    fn avg_is_a_decimal_in_mysql_as_mariadb_computes_it() {
        let (value, type_name) = avg(
            Dialect::MySql,
            vec![(text("20"), Int(1)), (text("11"), Int(1))],
        );
        assert_eq!((value, type_name.as_str()), (text("15.5000"), "DECIMAL"));
        let (value, _) = avg(Dialect::MySql, vec![(Int(20), Int(1)), (Int(11), Int(1))]);
        assert_eq!(value, text("15.5000"));
        let (value, _) = avg(
            Dialect::MySql,
            vec![(text("10.50"), Int(3)), (Null, Int(0)), (text("0"), Int(1))],
        );
        assert_eq!(value, text("2.625000"));
        // Rounded half away from zero: 2/3 and -2/3.
        assert_eq!(
            avg(Dialect::MySql, vec![(Int(2), Int(3))]).0,
            text("0.6667")
        );
        assert_eq!(
            avg(Dialect::MySql, vec![(Int(-2), Int(3))]).0,
            text("-0.6667")
        );
        assert_eq!(
            avg(Dialect::MySql, vec![(text("0.00005"), Int(2))]).0,
            text("0.000025000")
        );
        // No rows anywhere: NULL.
        assert_eq!(
            avg(Dialect::MySql, vec![(Null, Int(0)), (Null, Int(0))]).0,
            Null
        );
    }

    #[test]
    fn avg_is_a_double_over_doubles() {
        let (value, type_name) = avg(
            Dialect::MySql,
            vec![(Double(3.0), Int(2)), (Int(1), Int(2))],
        );
        assert_eq!((value, type_name.as_str()), (Double(1.0), "DOUBLE"));
        let (value, _) = avg(Dialect::Postgres, vec![(Double(3.0), Int(2))]);
        assert_eq!(value, Double(1.5));
    }

    #[test]
    fn avg_in_postgres_is_a_numeric_of_postgres_scale() {
        // What `SELECT AVG(x)` prints on PostgreSQL 15 for the same sums and counts.
        for (sum, count, expected) in [
            (Int(31), 2, "15.5000000000000000"),
            (Int(285), 8, "35.6250000000000000"),
            (Int(2), 8, "0.25000000000000000000"),
            (Int(59), 1, "59.0000000000000000"),
            (Int(123_456), 7, "17636.571428571429"),
            (text("10.50"), 4, "2.6250000000000000"),
            (Int(-2), 3, "-0.66666666666666666667"),
        ] {
            let (value, type_name) = avg(Dialect::Postgres, vec![(sum, Int(count))]);
            assert_eq!((value, type_name.as_str()), (text(expected), "NUMERIC"));
        }
    }

    #[test]
    fn avg_with_group_by_updates_the_count_column_too() {
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Index(0)];
        s.aggregates = vec![agg(1, Aggregate::Avg { count_index: 2 })];
        let cols = &[
            ("g", "BIGINT"),
            ("avg(x)", "DECIMAL"),
            ("count(x)", "BIGINT"),
        ];
        let results = vec![
            shard(
                cols,
                vec![
                    vec![Int(1), text("3"), Int(2)],
                    vec![Int(2), text("1"), Int(1)],
                ],
            ),
            shard(cols, vec![vec![Int(1), text("4"), Int(1)]]),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        assert_eq!(
            rows,
            vec![
                vec![Int(1), text("2.3333"), Int(3)],
                vec![Int(2), text("1.0000"), Int(1)]
            ]
        );
    }

    #[test]
    fn hidden_columns_are_dropped_after_sorting_by_them() {
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(1)];
        s.hidden_columns = 1;
        let cols = &[("name", "VARCHAR"), ("created", "BIGINT")];
        let results = vec![
            shard(cols, vec![vec![text("a"), Int(1)], vec![text("c"), Int(3)]]),
            shard(cols, vec![vec![text("b"), Int(2)]]),
        ];
        let merged = merge(&s, results).expect("merges");
        assert_eq!(merged.columns, columns(&[("name", "VARCHAR")]));
        assert_eq!(
            merged.rows,
            vec![vec![text("a")], vec![text("b")], vec![text("c")]]
        );
    }

    #[test]
    fn order_by_name_is_case_insensitive_and_ignores_the_qualifier() {
        let cols = &[("id", "BIGINT"), ("status", "VARCHAR")];
        let results = || {
            vec![
                shard(cols, vec![vec![Int(1), text("b")], vec![Int(2), text("d")]]),
                shard(cols, vec![vec![Int(3), text("a")], vec![Int(4), text("C")]]),
            ]
        };
        for name in ["status", "STATUS", "o.status", "`o`.`Status`"] {
            let mut s = spec(Dialect::MySql);
            s.order_by = vec![SortKey {
                column: ColumnRef::Name(name.into()),
                descending: false,
                nulls_first: None,
            }];
            let ids: Vec<_> = merge(&s, results())
                .expect("merges")
                .rows
                .into_iter()
                .map(|r| r[0].clone())
                .collect();
            assert_eq!(ids, vec![Int(3), Int(1), Int(4), Int(2)], "{name}");
        }
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![SortKey {
            column: ColumnRef::Name("o.missing".into()),
            descending: false,
            nulls_first: None,
        }];
        assert_eq!(
            merge(&s, results()).map(|_| ()),
            Err(MergeError::UnknownColumn("o.missing".into()))
        );
    }

    #[test]
    fn bad_specs_and_rows_are_errors_not_panics() {
        let results = || vec![shard(ID, vec![vec![Int(1)]]), shard(ID, vec![vec![Int(2)]])];
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(1)];
        assert_eq!(
            merge(&s, results()).map(|_| ()),
            Err(MergeError::ColumnOutOfRange { index: 1, width: 1 })
        );
        let mut s = spec(Dialect::MySql);
        s.aggregates = vec![agg(0, Aggregate::Avg { count_index: 5 })];
        assert!(matches!(
            merge(&s, results()),
            Err(MergeError::ColumnOutOfRange { index: 5, .. })
        ));
        let mut s = spec(Dialect::MySql);
        s.hidden_columns = 2;
        assert_eq!(
            merge(&s, results()).map(|_| ()),
            Err(MergeError::HiddenColumns {
                hidden: 2,
                width: 1
            })
        );
        let ragged = vec![
            shard(ID, vec![vec![Int(1)]]),
            shard(ID, vec![vec![Int(2), Int(3)]]),
        ];
        assert_eq!(
            merge(&spec(Dialect::MySql), ragged).map(|_| ()),
            Err(MergeError::RowWidth {
                expected: 1,
                found: 2
            })
        );
        let mut s = spec(Dialect::MySql);
        s.aggregates = vec![agg(0, Aggregate::Sum)];
        let words = vec![
            shard(ID, vec![vec![text("12abc")]]),
            shard(ID, vec![vec![Int(1)]]),
        ];
        assert!(matches!(
            merge(&s, words),
            Err(MergeError::NotNumeric { column: 0, .. })
        ));
        s.aggregates = vec![agg(0, Aggregate::Avg { count_index: 1 })];
        let cols = &[("a", "DECIMAL"), ("c", "BIGINT")];
        let negative = vec![shard(cols, vec![vec![Int(1), Int(-1)]])];
        assert!(matches!(
            merge(&s, negative),
            Err(MergeError::BadCount { column: 1, .. })
        ));
    }

    #[test]
    fn decimals_parse_format_and_compare() {
        let d = |s: &str| Decimal::parse(s).expect("a decimal");
        assert_eq!(d("007.50").to_string(), "7.50");
        assert_eq!(d("-.5").to_string(), "-0.5");
        assert_eq!(d("-0.00").to_string(), "0.00");
        assert_eq!(d("+3").to_string(), "3");
        for bad in ["", "-", ".", "1e5", " 1", "1.2.3", "0x10", "١"] {
            assert_eq!(Decimal::parse(bad), None, "{bad:?}");
        }
        assert_eq!(d("1.50").cmp(&d("1.5")), Ordering::Equal);
        assert_eq!(d("-2").cmp(&d("-10")), Ordering::Greater);
        assert_eq!(d("0.1").cmp(&d("-0.1")), Ordering::Greater);
        assert_eq!(d("0.999").div_round(0, 4), None);
        assert_eq!(
            d("5").div_round(2, 0).map(|q| q.to_string()),
            Some("3".into())
        );
        assert_eq!(
            d("-5").div_round(2, 0).map(|q| q.to_string()),
            Some("-3".into())
        );
    }

    /// A small deterministic generator, so randomized tests need no extra dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn value(&mut self) -> Value {
            match self.below(8) {
                0 => Null,
                1 => Int(self.below(7) as i64 - 3),
                2 => UInt(self.below(5)),
                3 => Double((self.below(13) as f64 - 6.0) / 2.0),
                4 => text(["-1.5", "2", "2.0", "0.25", "10"][self.below(5) as usize]),
                5 => text(["a", "B", "b", "10", "9", ""][self.below(6) as usize]),
                6 => Value::Bytes(vec![self.below(3) as u8]),
                _ => Double([f64::NAN, -0.0, f64::INFINITY][self.below(3) as usize]),
            }
        }
    }

    #[test]
    fn compare_is_a_total_order_on_mixed_values() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for dialect in [Dialect::MySql, Dialect::Postgres] {
            for numeric_text in [false, true] {
                let values: Vec<Value> = (0..40).map(|_| rng.value()).collect();
                let cmp = |a: &Value, b: &Value| compare(a, b, dialect, numeric_text);
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

    #[test]
    fn merging_sorted_shards_equals_sorting_their_concatenation() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let cols = &[("a", "DECIMAL"), ("b", "VARCHAR"), ("origin", "BIGINT")];
        for round in 0..200 {
            let dialect = if round % 2 == 0 {
                Dialect::MySql
            } else {
                Dialect::Postgres
            };
            let mut s = spec(dialect);
            s.order_by = vec![
                SortKey {
                    nulls_first: [None, Some(true), Some(false)][rng.below(3) as usize],
                    descending: rng.below(2) == 1,
                    ..asc(0)
                },
                SortKey {
                    nulls_first: None,
                    descending: rng.below(2) == 1,
                    ..asc(1)
                },
            ];
            s.offset = rng.below(4);
            s.limit = [None, Some(rng.below(10))][rng.below(2) as usize];
            let plan = Resolved::new(&s, &columns(cols), 3).expect("resolves");
            let mut shards: Vec<Vec<Vec<Value>>> = Vec::new();
            let mut origin = 0;
            for _ in 0..rng.below(5) {
                let mut rows: Vec<Vec<Value>> = (0..rng.below(8))
                    .map(|_| {
                        origin += 1;
                        vec![rng.value(), rng.value(), Int(origin)]
                    })
                    .collect();
                rows.sort_by(|x, y| plan.compare_rows(&plan.order_by, x, y));
                shards.push(rows);
            }
            let mut expected: Vec<Vec<Value>> = shards.concat();
            expected.sort_by(|x, y| plan.compare_rows(&plan.order_by, x, y));
            let expected = window(&s, expected.into_iter());
            let results = shards.into_iter().map(|rows| shard(cols, rows)).collect();
            let merged = merge(&s, results).expect("merges").rows;
            // Origins identify rows (NaN makes rows unequal to themselves).
            let origins =
                |rows: &[Vec<Value>]| rows.iter().map(|r| r[2].clone()).collect::<Vec<_>>();
            assert_eq!(origins(&merged), origins(&expected), "round {round}");
        }
    }

    #[test]
    fn merging_partial_aggregates_equals_aggregating_all_rows() {
        let mut rng = Rng(0xdead_beef_cafe_f00d);
        for round in 0..100 {
            // Rows (group, x) spread over shards; each shard reports (group, COUNT, SUM, MIN, MAX).
            let rows: Vec<(i64, i64)> = (0..rng.below(30))
                .map(|_| (rng.below(4) as i64, rng.below(100) as i64 - 50))
                .collect();
            let shard_count = 1 + rng.below(4);
            let mut per_shard = vec![Vec::new(); shard_count as usize];
            for row in &rows {
                per_shard[rng.below(shard_count) as usize].push(*row);
            }
            let partial = |rows: &[(i64, i64)]| -> Vec<Vec<Value>> {
                let mut groups: Vec<i64> = rows.iter().map(|r| r.0).collect();
                groups.sort();
                groups.dedup();
                groups
                    .into_iter()
                    .map(|g| {
                        let xs: Vec<i64> = rows.iter().filter(|r| r.0 == g).map(|r| r.1).collect();
                        vec![
                            Int(g),
                            Int(xs.len() as i64),
                            text(&xs.iter().sum::<i64>().to_string()),
                            Int(*xs.iter().min().unwrap_or(&0)),
                            Int(*xs.iter().max().unwrap_or(&0)),
                        ]
                    })
                    .collect()
            };
            let mut s = spec(Dialect::MySql);
            s.group_by = vec![ColumnRef::Index(0)];
            s.aggregates = vec![
                agg(1, Aggregate::Count),
                agg(2, Aggregate::Sum),
                agg(3, Aggregate::Min),
                agg(4, Aggregate::Max),
            ];
            let cols = &[
                ("g", "BIGINT"),
                ("c", "BIGINT"),
                ("s", "DECIMAL"),
                ("lo", "BIGINT"),
                ("hi", "BIGINT"),
            ];
            let results = per_shard
                .iter()
                .map(|rows| shard(cols, partial(rows)))
                .collect();
            let merged = merge(&s, results).expect("merges").rows;
            assert_eq!(merged, partial(&rows), "round {round}");
        }
    }
}
