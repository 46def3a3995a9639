//! The functions and procedures the shards define: the application's own, which may change the
//! session they run in (a `set_config`, a temporary table, a lock inside them) where Keyshard
//! cannot see it. A statement that calls one pins the session's shard connections (see
//! `pinning`). Read at start and again after a statement that creates, replaces or drops one.

use std::collections::HashSet;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use keyshard_backend::Backend;
use keyshard_config::{Config, DatabaseKind};

use crate::identity::read_texts;

/// How often the names are read again, for routines created beside the proxy.
pub(crate) const REFRESH: Duration = Duration::from_secs(30);

/// Lower-case names of the routines the shards define.
#[derive(Debug, Default)]
pub(crate) struct Routines(RwLock<Arc<HashSet<String>>>);

impl Routines {
    /// The names as they are now.
    pub(crate) fn names(&self) -> Arc<HashSet<String>> {
        Arc::clone(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Reads the names from every MySQL and PostgreSQL data source (SQLite keeps no routines).
    /// A data source that does not answer keeps what was read from it before.
    pub(crate) async fn load(&self, backend: &Backend, config: &Config) {
        let mut names = HashSet::new();
        for source in config.data_sources.values() {
            let sql = match source.kind {
                DatabaseKind::MySql => {
                    "SELECT DISTINCT LOWER(ROUTINE_NAME) FROM information_schema.ROUTINES \
                     WHERE ROUTINE_SCHEMA = DATABASE()"
                }
                DatabaseKind::Postgres => {
                    "SELECT DISTINCT lower(p.proname) FROM pg_catalog.pg_proc p \
                     JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
                     WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
                }
                DatabaseKind::Sqlite => continue,
            };
            match read_texts(backend, &source.name, sql, "routines").await {
                Some(rows) => names.extend(rows.into_iter().flatten()),
                None => names.extend(self.names().iter().cloned()),
            }
        }
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(names);
    }
}

/// Whether `sql` may create, replace or drop a routine.
pub(crate) fn changes_routines(sql: &str) -> bool {
    let first = crate::words::first_word(sql);
    ["create", "drop", "alter"]
        .iter()
        .any(|w| first.eq_ignore_ascii_case(w))
        && {
            let lower = sql
                .get(..sql.len().min(200))
                .unwrap_or(sql)
                .to_ascii_lowercase();
            lower.contains("function") || lower.contains("procedure")
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_that_change_routines_are_recognised() {
        assert!(changes_routines(
            "CREATE OR REPLACE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql"
        ));
        assert!(changes_routines("drop procedure p"));
        assert!(!changes_routines("SELECT f()"));
    }
}
