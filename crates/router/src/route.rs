//! Sharding: a row's sharding values through the table's strategies to one data node.

use std::ops::Bound;

use chrono::NaiveDateTime;
use keyshard_config::algorithm::AutoInterval;
use keyshard_config::inline::Value as InlineValue;
use keyshard_config::{Algorithm, DataNode, Gene, RemainderNodes, Strategy, TableRule};

use keyshard_types::{Value, WireKind};

/// Why a value could not be routed; the caller adds the row and column.
pub(crate) type RouteProblem = String;

/// Which data nodes a row can go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nodes {
    /// Exactly this one (an index into the rule's data nodes).
    One(usize),
    /// None: the chosen data source has no node with the chosen table.
    Zero,
    /// This many: a strategy's column was not given.
    Many(usize),
}

mod complex;
mod node_set;

pub(crate) use complex::complex_target;
pub(crate) use node_set::NodeSet;

/// What a row says of one level: its strategy's value, or the target a complex strategy's
/// values gave.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Chosen<'a> {
    Value(&'a Value),
    Target(&'a str),
}

/// The data nodes that a row with these sharding values can go to. `None` for a strategy's
/// value means the row does not say, so every target of that strategy matches.
pub(crate) fn route<'r>(
    rule: &'r TableRule,
    database: Option<Chosen<'r>>,
    table: Option<Chosen<'r>>,
    scratch: &mut String,
) -> Result<Nodes, (Level, RouteProblem)> {
    if let Some(one) = by_masks(rule, database, table) {
        return Ok(Nodes::One(one));
    }
    let data_source = match (&rule.database_strategy, database) {
        (_, Some(Chosen::Target(name))) => Some(name),
        (Some(strategy), Some(Chosen::Value(value))) => {
            let names = rule.data_nodes.iter().map(|n| n.data_source.as_str());
            Some(target(strategy, value, names, scratch).map_err(|p| (Level::Database, p))?)
        }
        _ => None,
    };
    let in_data_source = |node: &&DataNode| data_source.is_none_or(|ds| node.data_source == ds);
    let table_name = match (&rule.table_strategy, table) {
        (_, Some(Chosen::Target(name))) => Some(name),
        (Some(strategy), Some(Chosen::Value(value))) => {
            let names = rule
                .data_nodes
                .iter()
                .filter(in_data_source)
                .map(|n| n.table.as_str());
            Some(target(strategy, value, names, scratch).map_err(|p| (Level::Table, p))?)
        }
        _ => None,
    };
    let mut matching = rule
        .data_nodes
        .iter()
        .enumerate()
        .filter(|(_, node)| in_data_source(node) && table_name.is_none_or(|t| node.table == t))
        .map(|(i, _)| i);
    Ok(match (matching.next(), matching.count()) {
        (None, _) => Nodes::Zero,
        (Some(one), 0) => Nodes::One(one),
        (Some(_), more) => Nodes::Many(more + 1),
    })
}

/// Whether each of the rule's data nodes can hold a row whose `column` is `value`: all of them
/// when no strategy shards by `column`. `None` when the value does not route (a type the
/// algorithm does not take, a name that is no target): the caller must then look everywhere.
pub(crate) fn nodes_with(
    rule: &TableRule,
    column: &str,
    value: &Value,
    scratch: &mut String,
) -> Option<NodeSet> {
    fn by<'s>(strategy: &'s Option<Strategy>, column: &str) -> Option<&'s Strategy> {
        // Statements nearly always spell a column as configured: a length and a memcmp settle
        // it before the byte-by-byte comparison, asked of each strategy for each condition.
        strategy
            .as_ref()
            .filter(|s| s.column == column || s.column.eq_ignore_ascii_case(column))
    }
    let mut nodes = NodeSet::all(rule.data_nodes.len());
    let masks = &rule.remainder_nodes;
    let mut narrow = |column: &str, value: &Value| -> Option<()> {
        if let Some(strategy) = by(&rule.database_strategy, column) {
            if let Some(mask) = masked(value, |v| masks.database(v)) {
                nodes.and_mask(mask);
            } else {
                let names = rule.data_nodes.iter().map(|n| n.data_source.as_str());
                let data_source = target(strategy, value, names, scratch).ok()?;
                nodes.retain(|i| {
                    rule.data_nodes
                        .get(i)
                        .is_some_and(|node| node.data_source == data_source)
                });
            }
        }
        if let Some(strategy) = by(&rule.table_strategy, column) {
            if let Some(mask) = masked(value, |v| masks.table(v)) {
                nodes.and_mask(mask);
            } else {
                let names = rule.data_nodes.iter().map(|n| n.table.as_str());
                let table = target(strategy, value, names, scratch).ok()?;
                // Compared byte by byte, so only where the database strategy kept the node.
                nodes.retain(|i| {
                    rule.data_nodes
                        .get(i)
                        .is_some_and(|node| node.table.eq_ignore_ascii_case(table))
                });
            }
        }
        Some(())
    };
    narrow(column, value)?;
    // A gene key is where its gene puts the row: routed as the gene's column would be.
    if let Some(gene) = &rule.gene
        && gene.key_column.eq_ignore_ascii_case(column)
        && let Some(carried) = gene_of(gene, value)
    {
        narrow(&gene.column, &Value::Int(carried))?;
    }
    Some(nodes)
}

/// The nodes (bit `i`: data node `i`) an integer `value` goes to by the masks worked out at
/// load (see [`RemainderNodes`]); `None`: the strategy must be asked.
fn masked(value: &Value, mask_of: impl Fn(i64) -> Option<u64>) -> Option<u64> {
    match value {
        Value::Int(v) => mask_of(*v),
        _ => None,
    }
}

/// The one node a row goes to when each strategy it has is INLINE by a remainder and given an
/// integer: read from the masks worked out at load. `None` (the strategies must be asked) for
/// any other row, and where the masks leave no node (the strategies then say why) or several
/// (two names of one table differing in case, which loading refuses).
fn by_masks(
    rule: &TableRule,
    database: Option<Chosen<'_>>,
    table: Option<Chosen<'_>>,
) -> Option<usize> {
    let masks = &rule.remainder_nodes;
    let level =
        |strategy: &Option<Strategy>,
         chosen: Option<Chosen<'_>>,
         mask_of: fn(&RemainderNodes, i64) -> Option<u64>| match (strategy, chosen) {
            (_, Some(Chosen::Target(_))) => None,
            (None, _) => Some(u64::MAX),
            (Some(_), Some(Chosen::Value(value))) => masked(value, |v| mask_of(masks, v)),
            (Some(_), None) => None,
        };
    let mask = level(&rule.database_strategy, database, RemainderNodes::database)?
        & level(&rule.table_strategy, table, RemainderNodes::table)?;
    (mask.count_ones() == 1).then(|| mask.trailing_zeros() as usize)
}

/// The gene of a key, or of its gene column's value: its low bits, when it is an integer (a
/// double holding one exactly, as node mysql2 binds numbers). `None`: a value that says nothing
/// sure of where its row is. Text is one: MySQL compares it with a BIGINT as a double, so
/// `'…241'` finds the key `…240` too, whose gene differs.
pub(crate) fn gene_of(gene: &Gene, value: &Value) -> Option<i64> {
    let value = match value {
        Value::Int(v) => *v,
        Value::UInt(v) => i64::try_from(*v).ok()?,
        Value::Double(v) if v.abs() < 9_007_199_254_740_992.0 => integral(*v)?,
        _ => return None,
    };
    gene.of(value)
}

/// Whether each of the rule's data nodes can hold a row whose `column` lies between `lower`
/// and `upper`. `None` when no strategy on `column` narrows the range (an algorithm that does
/// not order its values, an end it cannot read): the caller must then look everywhere.
pub(crate) fn nodes_between(
    rule: &TableRule,
    column: &str,
    lower: Bound<&Value>,
    upper: Bound<&Value>,
) -> Option<NodeSet> {
    let mut nodes = NodeSet::all(rule.data_nodes.len());
    let mut narrowed = false;
    for (strategy, in_database) in [
        (&rule.database_strategy, true),
        (&rule.table_strategy, false),
    ] {
        let Some(strategy) = strategy
            .as_ref()
            .filter(|s| s.column.eq_ignore_ascii_case(column))
        else {
            continue;
        };
        let Some(keep) = targets_between(strategy, lower, upper) else {
            continue;
        };
        nodes.retain(|i| {
            rule.data_nodes.get(i).is_some_and(|node| {
                keep.matches(if in_database {
                    &node.data_source
                } else {
                    &node.table
                })
            })
        });
        narrowed = true;
    }
    narrowed.then_some(nodes)
}

/// The targets a range of sharding values reaches.
enum Targets {
    /// Those whose name ends with one of these numbers (`t_order_3`, `t_order_03`).
    Numbered(std::ops::RangeInclusive<u64>),
    /// Those whose name ends with one of these remainders.
    Remainders(Vec<u64>),
    /// Those whose name ends with one of these texts.
    Suffixes(Vec<String>),
}

impl Targets {
    fn matches(&self, name: &str) -> bool {
        match self {
            Targets::Numbered(range) => suffix_number(name).is_some_and(|n| range.contains(&n)),
            Targets::Remainders(values) => suffix_number(name).is_some_and(|n| values.contains(&n)),
            Targets::Suffixes(suffixes) => suffixes.iter().any(|s| name.ends_with(s.as_str())),
        }
    }
}

/// What a range of values reaches under `strategy`'s algorithm; `None` for every target.
fn targets_between(
    strategy: &Strategy,
    lower: Bound<&Value>,
    upper: Bound<&Value>,
) -> Option<Targets> {
    // An end that cannot be read leaves the range open there: looking further is only slower.
    fn end<T>(bound: Bound<&Value>, read: impl Fn(&Value) -> Option<T>) -> Bound<T> {
        match bound {
            Bound::Included(v) => read(v).map_or(Bound::Unbounded, Bound::Included),
            Bound::Excluded(v) => read(v).map_or(Bound::Unbounded, Bound::Excluded),
            Bound::Unbounded => Bound::Unbounded,
        }
    }
    // Integer algorithms read only numbers as ends: a text end compares as text where the
    // column is text, and '9' > '12' there.
    let integer = |v: &Value| match v {
        Value::Int(i) => Some(*i),
        Value::UInt(u) => i64::try_from(*u).ok(),
        Value::Double(d) => integral(*d),
        // A float a shard sent (INSERT … SELECT) is the number it holds, as a double is.
        Value::Wire(wire) => wire.float().and_then(integral),
        _ => None,
    };
    let inclusive = |bound: Bound<i64>, step: i64| match bound {
        Bound::Included(v) => Some(v),
        Bound::Excluded(v) => v.checked_add(step),
        Bound::Unbounded => None,
    };
    let present = |bound: Bound<NaiveDateTime>| match bound {
        Bound::Included(v) | Bound::Excluded(v) => Some(v),
        Bound::Unbounded => None,
    };
    match &*strategy.algorithm {
        Algorithm::Inline { .. }
        | Algorithm::HashMod { .. }
        | Algorithm::HintInline { .. }
        | Algorithm::ComplexInline { .. } => None,
        Algorithm::Mod { sharding_count } => {
            // Shorter than the count, the span's own remainders; else every one. A span longer
            // than a few hundred values reads every node anyway (so many targets are rare), and
            // is not walked value by value.
            const MOST_WALKED: i128 = 1_024;
            let low = inclusive(end(lower, integer), 1)?;
            let high = inclusive(end(upper, integer), -1)?;
            let span = i128::from(high) - i128::from(low);
            if span >= i128::from(*sharding_count) - 1 || span >= MOST_WALKED {
                return None;
            }
            let count = i128::from(*sharding_count);
            Some(Targets::Remainders(
                (low..=high)
                    .map(|v| i128::from(v).rem_euclid(count) as u64)
                    .collect(),
            ))
        }
        Algorithm::Range { boundaries, .. } => {
            let low = inclusive(end(lower, integer), 1);
            let high = inclusive(end(upper, integer), -1);
            Some(Targets::Numbered(boundaries.partitions(low, high)))
        }
        Algorithm::AutoInterval(auto) => {
            let read = |v: &Value| datetime(v, AutoInterval::value).ok();
            Some(Targets::Numbered(auto.partitions(
                present(end(lower, read)),
                present(end(upper, read)),
            )))
        }
        Algorithm::Interval(interval) => {
            let read = |v: &Value| datetime(v, |text| interval.value(text)).ok();
            let intervals = interval.intervals_meeting(end(lower, read), end(upper, read));
            Some(Targets::Suffixes(
                intervals.map(|i| interval.suffix(i).to_owned()).collect(),
            ))
        }
    }
}

/// The number a target's name ends with.
fn suffix_number(name: &str) -> Option<u64> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    name[name.len() - digits..].parse().ok()
}

/// A date-time sharding value: text read by `read`, a PostgreSQL `timestamp` or `date` in its
/// binary form, or an integer read as its digits (a year).
fn datetime(
    value: &Value,
    read: impl Fn(&str) -> Option<NaiveDateTime>,
) -> Result<NaiveDateTime, RouteProblem> {
    let unreadable = || format!("{} is not a date-time", describe(value));
    let text = match value {
        Value::Text(s) => s.as_str(),
        Value::Bytes(b) => std::str::from_utf8(b).map_err(|_| unreadable())?,
        Value::Int(i) => return read(&i.to_string()).ok_or_else(unreadable),
        Value::Wire(wire) if wire.binary => {
            // PostgreSQL counts from 2000-01-01: microseconds for a timestamp, days for a date.
            let epoch = chrono::NaiveDate::from_ymd_opt(2000, 1, 1)
                .unwrap_or_default()
                .and_time(chrono::NaiveTime::MIN);
            let bytes = &wire.bytes[..];
            let moved = match (wire.kind, bytes.len()) {
                (WireKind::PgTimestamp, 8) => {
                    let micros = i64::from_be_bytes(bytes.try_into().map_err(|_| unreadable())?);
                    epoch.checked_add_signed(chrono::TimeDelta::microseconds(micros))
                }
                (WireKind::PgDate, 4) => {
                    let days = i32::from_be_bytes(bytes.try_into().map_err(|_| unreadable())?);
                    chrono::TimeDelta::try_days(days.into())
                        .and_then(|d| epoch.checked_add_signed(d))
                }
                _ => None,
            };
            return moved.ok_or_else(unreadable);
        }
        Value::Wire(wire) => wire.text().ok_or_else(unreadable)?,
        _ => return Err(unreadable()),
    };
    read(text).ok_or_else(unreadable)
}

/// Whether `column` is one of the columns `rule` shards by: a strategy's, or a gene key.
pub(crate) fn is_sharding_column(rule: &TableRule, column: &str) -> bool {
    [&rule.database_strategy, &rule.table_strategy]
        .into_iter()
        .flatten()
        .any(|s| {
            s.column.eq_ignore_ascii_case(column)
                || s.columns.iter().any(|c| c.eq_ignore_ascii_case(column))
        })
        || rule
            .gene
            .as_ref()
            .is_some_and(|g| g.key_column.eq_ignore_ascii_case(column))
}

/// Which strategy a routing problem came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Database,
    Table,
}

impl Level {
    /// `rule`'s strategy at this level, if it shards at this level.
    pub(crate) fn strategy(self, rule: &TableRule) -> Option<&Strategy> {
        match self {
            Level::Database => rule.database_strategy.as_ref(),
            Level::Table => rule.table_strategy.as_ref(),
        }
    }
}

/// The one name among `targets` that `value` maps to.
fn target<'t>(
    strategy: &Strategy,
    value: &Value,
    targets: impl Iterator<Item = &'t str> + Clone,
    scratch: &mut String,
) -> Result<&'t str, RouteProblem> {
    match &*strategy.algorithm {
        Algorithm::Inline { expression, .. } | Algorithm::HintInline { expression } => {
            let sharding_value = inline_value(value)?;
            scratch.clear();
            expression
                .evaluate_into(&|_| Some(sharding_value), scratch)
                .map_err(|e| format!("{} in {}: {e}", describe(value), expression.source()))?;
            let name = scratch.as_str();
            // Names as configured are what expressions give: the exact comparison (a length
            // and a memcmp) settles nearly every row before the byte-by-byte one is asked.
            targets
                .clone()
                .find(|t| *t == name)
                .or_else(|| targets.clone().find(|t| t.eq_ignore_ascii_case(name)))
                .ok_or_else(|| {
                    format!(
                        "{} maps to '{name}', which is not one of {}",
                        describe(value),
                        list(targets)
                    )
                })
        }
        // Never asked of one value: see `complex_target`.
        Algorithm::ComplexInline { .. } => {
            Err("a complex strategy routes by all its columns at once".to_owned())
        }
        Algorithm::Mod { sharding_count } => {
            let InlineValue::Int(v) = inline_value(value)? else {
                return Err(format!("MOD needs an integer, got {}", describe(value)));
            };
            // BigInteger.mod, as ShardingSphere computes it: never negative.
            let remainder = i128::from(v).rem_euclid(i128::from(*sharding_count));
            by_suffix(remainder as u64, targets, value)
        }
        Algorithm::HashMod { sharding_count } => {
            let hash = u64::from(java_hash_code(inline_value(value)?).unsigned_abs());
            by_suffix(hash % sharding_count, targets, value)
        }
        Algorithm::Range { kind, boundaries } => {
            // `Long.parseLong(value.toString())`, as ShardingSphere reads the value.
            let number = match inline_value(value)? {
                InlineValue::Int(v) => Some(v),
                InlineValue::Str(s) => s.parse().ok(),
            };
            let number = number
                .ok_or_else(|| format!("{kind} needs an integer, got {}", describe(value)))?;
            by_suffix(boundaries.partition(number), targets, value)
        }
        Algorithm::AutoInterval(auto) => {
            let at = datetime(value, AutoInterval::value)?;
            by_suffix(auto.partition(at), targets, value)
        }
        Algorithm::Interval(interval) => {
            let at = datetime(value, |text| interval.value(text))?;
            let index = interval.interval_of(at).ok_or_else(|| {
                format!(
                    "{} is outside INTERVAL's datetime-lower to datetime-upper",
                    describe(value)
                )
            })?;
            let suffix = interval.suffix(index);
            targets
                .clone()
                .find(|t| t.ends_with(suffix))
                .ok_or_else(|| {
                    format!(
                        "{} falls in the interval '{suffix}', and none of {} ends with it",
                        describe(value),
                        list(targets)
                    )
                })
        }
    }
}

/// MOD and HASH_MOD pick the target whose numeric suffix is the remainder (`t_order_3` for 3,
/// also when written `t_order_03`), as ShardingSphere matches prefix plus padded suffix.
fn by_suffix<'t>(
    remainder: u64,
    targets: impl Iterator<Item = &'t str> + Clone,
    value: &Value,
) -> Result<&'t str, RouteProblem> {
    targets
        .clone()
        .find(|t| suffix_number(t) == Some(remainder))
        .ok_or_else(|| {
            format!(
                "{} gives remainder {remainder}, and none of {} ends with it",
                describe(value),
                list(targets)
            )
        })
}

/// Java's `hashCode` of the value ShardingSphere would see: `Integer` for literals that fit in
/// 32 bits, `Long` otherwise, `String` for text; so HASH_MOD places rows where it does.
fn java_hash_code(value: InlineValue<'_>) -> i32 {
    match value {
        InlineValue::Int(v) => match i32::try_from(v) {
            Ok(small) => small,
            Err(_) => (v ^ ((v as u64) >> 32) as i64) as i32,
        },
        InlineValue::Str(s) => s.encode_utf16().fold(0i32, |h, unit| {
            h.wrapping_mul(31).wrapping_add(i32::from(unit))
        }),
    }
}

fn inline_value(value: &Value) -> Result<InlineValue<'_>, RouteProblem> {
    match value {
        Value::Int(v) => Ok(InlineValue::Int(*v)),
        Value::UInt(v) => i64::try_from(*v)
            .map(InlineValue::Int)
            .map_err(|_| format!("{v} is too large to shard by")),
        Value::Text(s) => Ok(InlineValue::Str(s)),
        Value::Bytes(b) => std::str::from_utf8(b)
            .map(InlineValue::Str)
            .map_err(|_| "binary values cannot be sharded by".to_owned()),
        Value::Null => Err("NULL cannot be sharded by".to_owned()),
        Value::Array(_) => Err("an array cannot be sharded by".to_owned()),
        // A float a shard sent (INSERT … SELECT) shards as the number it holds, as a double.
        Value::Wire(wire) if let Some(v) = wire.float() => double_value(v),
        Value::Wire(wire) => wire
            .text()
            .map(InlineValue::Str)
            .ok_or_else(|| "a binary value cannot be sharded by".to_owned()),
        Value::Bool(_) => Err("a boolean cannot be sharded by".to_owned()),
        Value::Double(v) => double_value(*v),
    }
}

/// A client that binds numbers as doubles (node mysql2 sends every JavaScript number so) means
/// the integer when the value is one; a fraction MySQL would round is refused.
fn double_value(v: f64) -> Result<InlineValue<'static>, RouteProblem> {
    integral(v)
        .map(InlineValue::Int)
        .ok_or_else(|| format!("{v} is not an integer or text"))
}

/// The integer a double holds, when it holds one in BIGINT's range.
fn integral(v: f64) -> Option<i64> {
    (v.fract() == 0.0 && v.abs() < 9.2e18).then_some(v as i64)
}

pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Text(s) => format!("'{s}'"),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Double(v) => v.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "NULL".to_owned(),
        Value::Bytes(_) => "a binary value".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Wire(wire) => match wire.text() {
            Some(text) => format!("'{text}'"),
            None => "a binary value".to_owned(),
        },
    }
}

fn list<'t>(targets: impl Iterator<Item = &'t str>) -> String {
    let mut names: Vec<&str> = targets.collect();
    names.dedup();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The masks worked out at load route every integer as the strategies themselves do.
    #[test]
    fn remainder_masks_route_as_the_strategies_do() {
        let layouts = [
            (
                "ds_${0..1}.t_order_${0..1}",
                "ds_${user_id % 2}",
                "t_order_${order_id % 2}",
            ),
            // Tables only on some data sources: rows that go nowhere, and errors.
            (
                "ds_0.t_order_${0..1},ds_1.t_order_${2..3}",
                "ds_${user_id % 2}",
                "t_order_${order_id % 4}",
            ),
            // Names differing in case, and a remainder that names no data source.
            (
                "ds_0.T_ORDER_0,ds_0.t_order_1,ds_1.t_order_0,ds_1.t_order_1",
                "DS_${user_id % 3}",
                "t_order_${order_id % 2}",
            ),
        ];
        let values = (-9..=9).chain([i64::MIN, i64::MAX, 1_000_000_007]);
        for (nodes, database, table) in layouts {
            let yaml = format!(
                r#"
databaseName: db
dataSources:
  ds_0: {{ url: "sqlite::memory:" }}
  ds_1: {{ url: "sqlite::memory:" }}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: {nodes}
      databaseStrategy:
        standard: {{ shardingColumn: user_id, shardingAlgorithmName: db }}
      tableStrategy:
        standard: {{ shardingColumn: order_id, shardingAlgorithmName: tb }}
  shardingAlgorithms:
    db: {{ type: INLINE, props: {{ algorithm-expression: "{database}" }} }}
    tb: {{ type: INLINE, props: {{ algorithm-expression: "{table}" }} }}
"#
            );
            let config = keyshard_config::from_yaml_str(&yaml, std::path::Path::new(".")).unwrap();
            let masked = config.sharding.tables["t_order"].clone();
            assert_ne!(masked.remainder_nodes, RemainderNodes::default());
            let mut asked = masked.clone();
            asked.remainder_nodes = RemainderNodes::default();
            let mut scratch = String::new();
            for a in values.clone() {
                let a = Value::Int(a);
                for column in ["user_id", "order_id"] {
                    assert_eq!(
                        nodes_with(&masked, column, &a, &mut scratch),
                        nodes_with(&asked, column, &a, &mut scratch),
                        "{nodes}: {column} = {a:?}"
                    );
                }
                for b in values.clone() {
                    let b = Value::Int(b);
                    let routed = |rule| {
                        let by = |v| Some(Chosen::Value(v));
                        format!("{:?}", route(rule, by(&a), by(&b), &mut String::new()))
                    };
                    assert_eq!(routed(&masked), routed(&asked), "{nodes}: {a:?}, {b:?}");
                }
            }
        }
    }

    #[test]
    fn java_hash_codes() {
        assert_eq!(java_hash_code(InlineValue::Int(42)), 42);
        assert_eq!(java_hash_code(InlineValue::Int(-1)), -1);
        // Long.hashCode(1L << 40) = (int)(v ^ v >>> 32) = 256
        assert_eq!(java_hash_code(InlineValue::Int(1 << 40)), 256);
        // "abc".hashCode() in Java
        assert_eq!(java_hash_code(InlineValue::Str("abc")), 96354);
        assert_eq!(java_hash_code(InlineValue::Str("")), 0);
    }

    #[test]
    fn a_float_from_a_shard_shards_as_the_number_it_holds() {
        use keyshard_types::{Wire, WireKind};
        let text = Value::Wire(Wire::new(WireKind::MySqlFloat, false, b"2"));
        assert!(matches!(inline_value(&text), Ok(InlineValue::Int(2))));
        let binary = Value::Wire(Wire::new(WireKind::PgFloat, true, &3.0f64.to_be_bytes()));
        assert!(matches!(inline_value(&binary), Ok(InlineValue::Int(3))));
        let fraction = Value::Wire(Wire::new(WireKind::PgFloat, false, b"2.5"));
        assert!(inline_value(&fraction).is_err());
        assert!(matches!(
            inline_value(&Value::Double(4.0)),
            Ok(InlineValue::Int(4))
        ));
    }

    #[test]
    fn suffix_matching_accepts_padding() {
        let targets = ["t_00", "t_01", "t_10", "t_11"];
        assert_eq!(
            by_suffix(1, targets.iter().copied(), &Value::Int(1)).unwrap(),
            "t_01"
        );
        assert_eq!(
            by_suffix(10, targets.iter().copied(), &Value::Int(10)).unwrap(),
            "t_10"
        );
        assert!(by_suffix(5, targets.iter().copied(), &Value::Int(5)).is_err());
    }
}
