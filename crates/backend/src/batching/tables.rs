//! What a table allows: whether rows inserted into it beside others' are what they would
//! have been alone, as last read from its data source.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use sqlx::Row;

use crate::Pool;

/// How long what a table allows is believed before it is read again (a trigger created on the
/// shard directly is seen within this time).
pub(super) const TABLE_CHECK_TTL: Duration = Duration::from_secs(10);

/// Whether a table's rows may be batched, as last read.
#[derive(Debug, Clone, Copy)]
pub(super) enum Allowed {
    /// A statement is reading it (a read that never ends is retried after the TTL).
    Checking(Instant),
    /// Yes; and whether its connections are in a strict `sql_mode` by themselves (MariaDB).
    Yes(Instant, bool),
    No(Instant),
}

/// Notes what `table` on `data_source` allows.
pub(super) fn note(
    tables: &mut BTreeMap<String, Vec<(String, Allowed)>>,
    data_source: &str,
    table: &str,
    allowed: Allowed,
) {
    let sources = tables.entry(table.to_owned()).or_default();
    match sources.iter_mut().find(|(ds, _)| ds == data_source) {
        Some((_, noted)) => *noted = allowed,
        None => sources.push((data_source.to_owned(), allowed)),
    }
}

/// Whether rows inserted into `table` beside others are what they would have been alone: no
/// triggers or rules; on MySQL, a MariaDB server (which has `SET STATEMENT`, see [`super::joined::STRICT`]) and
/// a transactional table (a multi-row INSERT refused halfway keeps no row). If so, whether
/// its connections are in a strict `sql_mode` by themselves.
pub(super) async fn allows_batches(pool: &Pool, table: &str) -> Result<Option<bool>, sqlx::Error> {
    match pool {
        Pool::MySql(c) => {
            let row = c
                .with_base(async |conn| {
                    sqlx::query(
                        "SELECT CAST(t.ENGINE AS CHAR), CAST(@@version AS CHAR), \
                         CAST(@@SESSION.sql_mode AS CHAR), \
                         (SELECT COUNT(*) FROM information_schema.TRIGGERS g WHERE \
                         g.EVENT_OBJECT_SCHEMA = t.TABLE_SCHEMA AND \
                         g.EVENT_OBJECT_TABLE = t.TABLE_NAME) \
                         FROM information_schema.TABLES t \
                         WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME = ?",
                    )
                    .bind(table)
                    .fetch_optional(conn)
                    .await
                })
                .await?;
            let Some(row) = row else {
                return Ok(None);
            };
            let engine: Option<String> = row.try_get(0)?;
            let version: Option<String> = row.try_get(1)?;
            let mode: Option<String> = row.try_get(2)?;
            let triggers: i64 = row.try_get(3)?;
            let allowed = engine.is_some_and(|e| e.eq_ignore_ascii_case("InnoDB"))
                && version.is_some_and(|v| v.contains("MariaDB"))
                && triggers == 0;
            // Either strict mode is strict for InnoDB.
            let strict = mode.is_some_and(|m| m.contains("STRICT_"));
            Ok(allowed.then_some(strict))
        }
        Pool::Postgres(c) => {
            let allowed: Option<bool> = c
                .with_base(async |conn| {
                    sqlx::query_scalar(
                        "SELECT c.relkind = 'r' AND NOT c.relhasrules AND NOT EXISTS \
                         (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid AND NOT \
                         g.tgisinternal) FROM pg_class c WHERE c.oid = to_regclass($1)",
                    )
                    .bind(table)
                    .fetch_optional(conn)
                    .await
                })
                .await?;
            Ok((allowed == Some(true)).then_some(true))
        }
        Pool::Sqlite(_) => Ok(None),
    }
}
