//! `SHOW TABLE STATUS` of the logical database: a logic table's row stands for all its actual
//! tables (their rows, data, index and free space added up, the average row length and last
//! update recomputed), other tables' rows as their data source has them. MySQL data sources
//! only: the statement and its columns are MySQL's.

use std::collections::BTreeMap;

use keyshard_config::DatabaseKind;
use keyshard_types::Value;

use super::{Shards, default_data_source, kind_of};
use crate::error::Error;
use crate::reply::Reply;

/// Columns added up over a logic table's actual tables.
const ADDED: &[&str] = &["Rows", "Data_length", "Index_length", "Data_free"];

/// The status rows of `names` (tables of the logical database, sorted).
pub(super) async fn table_status(shards: &Shards<'_>, names: &[String]) -> Result<Reply, Error> {
    let sharding = &shards.config.sharding;
    // Which actual tables to read on each data source, and the logic table each stands for.
    let mut wanted: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let default = default_data_source(shards);
    let first = shards.config.data_sources.keys().next().cloned();
    for name in names {
        match sharding.table(name) {
            Some(rule) => {
                for node in &rule.data_nodes {
                    let read = (node.table.clone(), name.clone());
                    wanted
                        .entry(node.data_source.clone())
                        .or_default()
                        .push(read);
                }
            }
            None => {
                let broadcast = shards
                    .config
                    .broadcast_tables
                    .iter()
                    .any(|b| b.eq_ignore_ascii_case(name));
                let source = if broadcast { &first } else { &default };
                if let Some(source) = source {
                    let read = (name.clone(), name.clone());
                    wanted.entry(source.clone()).or_default().push(read);
                }
            }
        }
    }
    let mut columns = Vec::new();
    let mut merged: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (data_source, tables) in &wanted {
        if kind_of(shards, data_source) != DatabaseKind::MySql {
            return Err(Error::unsupported(
                "SHOW TABLE STATUS with a data source that is not MySQL",
            ));
        }
        // Spliced into SQL: a name that needs quoting is not one Keyshard serves.
        let listed: Vec<String> = tables
            .iter()
            .filter(|(actual, _)| !actual.contains(['\'', '\\']))
            .map(|(actual, _)| format!("'{actual}'"))
            .collect();
        if listed.is_empty() {
            continue;
        }
        let sql = format!("SHOW TABLE STATUS WHERE Name IN ({})", listed.join(", "));
        let outcome = shards.run_on(data_source, &sql).await?;
        if columns.is_empty() {
            columns = outcome.columns;
        }
        let index = |name: &str| {
            columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name))
        };
        for mut row in outcome.rows {
            let Some(actual) = row.first().and_then(text) else {
                continue;
            };
            let Some((_, logic)) = tables.iter().find(|(a, _)| a.eq_ignore_ascii_case(&actual))
            else {
                continue;
            };
            row[0] = Value::Text(logic.clone());
            match merged.get_mut(logic) {
                None => {
                    merged.insert(logic.clone(), row);
                }
                Some(kept) => {
                    for column in ADDED.iter().filter_map(|c| index(c)) {
                        let sum = number(&kept[column]).zip(number(&row[column]));
                        kept[column] = sum.map_or(Value::Null, |(a, b)| Value::UInt(a + b));
                    }
                    if let Some(update) = index("Update_time")
                        && text(&row[update]) > text(&kept[update])
                    {
                        kept[update] = row[update].clone();
                    }
                }
            }
        }
    }
    let index = |name: &str| {
        columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    };
    let mut rows: Vec<Vec<Value>> = Vec::new();
    for name in names {
        let Some(mut row) = merged.remove(name) else {
            continue;
        };
        if sharding.table(name).is_some() {
            if let (Some(rows_at), Some(data_at), Some(average_at)) =
                (index("Rows"), index("Data_length"), index("Avg_row_length"))
            {
                let average = match (number(&row[rows_at]), number(&row[data_at])) {
                    (Some(0), _) => Some(0),
                    (Some(rows), Some(data)) => Some(data / rows),
                    _ => None,
                };
                row[average_at] = average.map_or(Value::Null, Value::UInt);
            }
            // Each actual table counts its own AUTO_INCREMENT; the logic table's keys are
            // Keyshard's.
            if let Some(at) = index("Auto_increment") {
                row[at] = Value::Null;
            }
        }
        rows.push(row);
    }
    Ok(Reply::Rows { columns, rows })
}

/// `value` as text, whatever form the shard's value came in; `None` for NULL.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::Text(text) => Some(text.clone()),
        Value::Wire(wire) if !wire.binary => Some(String::from_utf8_lossy(&wire.bytes).into()),
        Value::Int(v) => Some(v.to_string()),
        Value::UInt(v) => Some(v.to_string()),
        _ => None,
    }
}

fn number(value: &Value) -> Option<u64> {
    text(value)?.trim().parse().ok()
}
