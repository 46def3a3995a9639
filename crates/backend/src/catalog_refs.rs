//! PostgreSQL's catalog references (`regclass`, `regtype`, `regproc` …) are OIDs in the binary
//! format, and their text is a lookup in the database's catalog, as the session sees it (its
//! `search_path` decides whether a name is qualified). sqlx reads prepared statements' results
//! in binary, so a client reading such a column as text is owed a name only the shard knows.
//! Each binary value is looked up on the connection that read it, right after its result, and
//! travels with both forms ([`WireKind::PgCatalogRef`]): whichever the client asks for, it gets
//! what a direct connection would have sent.

use std::collections::BTreeMap;

use keyshard_types::{Value, Wire, WireKind};
use sqlx::{Executor, PgConnection, Row};

use crate::outcome::UnitResult;

/// The catalog reference types, by OID, with the name a cast to one is written with.
const TYPES: [(u32, &str); 11] = [
    (24, "regproc"),
    (2202, "regprocedure"),
    (2203, "regoper"),
    (2204, "regoperator"),
    (2205, "regclass"),
    (2206, "regtype"),
    (3734, "regconfig"),
    (3769, "regdictionary"),
    (4089, "regnamespace"),
    (4096, "regrole"),
    (4191, "regcollation"),
];

/// Whether any of `columns` is a catalog reference.
pub(crate) fn any(columns: &[crate::Column]) -> bool {
    columns
        .iter()
        .any(|c| TYPES.iter().any(|(t, _)| Some(*t) == c.oid))
}

/// Gives every binary catalog reference of `result` its text, looked up on `conn`, which read
/// it; a result without one costs a look at its columns.
pub(crate) async fn name(
    conn: &mut PgConnection,
    result: &mut UnitResult,
) -> Result<(), sqlx::Error> {
    for (index, column) in result.columns.iter().enumerate() {
        let Some((_, cast)) = TYPES.iter().find(|(t, _)| Some(*t) == column.oid) else {
            continue;
        };
        let mut names: BTreeMap<u32, String> = result
            .rows
            .iter()
            .filter_map(|row| binary_oid(row.get(index)?))
            .map(|oid| (oid, String::new()))
            .collect();
        if names.is_empty() {
            continue;
        }
        let list: Vec<String> = names.keys().map(u32::to_string).collect();
        // Numbers only: nothing of the client's is written into the statement.
        let sql = format!(
            "SELECT o::text, o::{cast}::text FROM unnest('{{{}}}'::oid[]) AS o",
            list.join(",")
        );
        for row in conn.fetch_all(sqlx::raw_sql(&sql)).await? {
            let (oid, text): (String, String) = (row.try_get(0)?, row.try_get(1)?);
            if let Ok(oid) = oid.parse::<u32>() {
                names.insert(oid, text);
            }
        }
        for row in &mut result.rows {
            if let Some(value) = row.get_mut(index)
                && let Some(oid) = binary_oid(value)
                && let Some(text) = names.get(&oid)
            {
                let mut bytes = oid.to_be_bytes().to_vec();
                bytes.extend_from_slice(text.as_bytes());
                let type_oid = column.oid.unwrap_or_default();
                *value =
                    Value::Wire(Wire::new(WireKind::PgCatalogRef, true, &bytes).with_oid(type_oid));
            }
        }
    }
    Ok(())
}

/// The OID a binary catalog reference not yet named holds.
fn binary_oid(value: &Value) -> Option<u32> {
    match value {
        Value::Wire(wire) if wire.binary && wire.kind != WireKind::PgCatalogRef => {
            Some(u32::from_be_bytes(wire.bytes.as_ref().try_into().ok()?))
        }
        _ => None,
    }
}
