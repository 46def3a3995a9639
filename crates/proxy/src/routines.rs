//! The functions and procedures the shards define: the application's own, which may change the
//! session they run in (a `set_config`, a temporary table, a lock inside them) where Keyshard
//! cannot see it. A statement that calls one pins the session's shard connections (see
//! `pinning`). Read at start, every 30 s, after a statement that creates, replaces or drops
//! one, and whenever a statement calls a name not known yet: a routine created beside the
//! proxy a moment ago is found before the statement that calls it runs.
//!
//! What a call names is learned once: the names read as no routine (built-in functions, and
//! the words before a parenthesis that call nothing, `VALUES (`, a table's column list) are
//! remembered, so that a name costs one read of the catalog, the first time it is met. A
//! statement of a shape found to call nothing that pins, under the routines as last read,
//! skips even that look-up (see `shapes::CallsChecked`): each read starts a new generation.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use keyshard_backend::Backend;
use keyshard_backend::session_state::{self, SessionState};
use keyshard_config::{Config, DatabaseKind};
use keyshard_router::Leading;

use crate::identity::read_texts;
use crate::sql::Sql;

/// How often the names are read again, for routines created beside the proxy.
pub(crate) const REFRESH: Duration = Duration::from_secs(30);

/// The most names remembered as no routine; past it they are forgotten and learned again.
const MAX_OTHERS: usize = 10_000;

/// The most new names one read remembers.
const MAX_MET: usize = 256;

/// The longest name a routine can have (MySQL 64, PostgreSQL 63 bytes): a longer word before
/// a parenthesis calls none, and is not remembered.
const MAX_NAME: usize = 64;

/// A set of lower-case names, looked up for every call a statement makes: hashed by foldhash,
/// which costs a fraction of SipHash on these short keys.
pub(crate) type Set = foldhash::HashSet<String>;

/// The names calls were read as.
#[derive(Debug, Default)]
pub(crate) struct Names {
    /// Lower-case names of the routines the shards define.
    pub(crate) routines: Set,
    /// Lower-case names called in statements that no data source defined as a routine when
    /// they were met.
    others: Set,
    /// How many times the routines were read before these: what a shape's calls were checked
    /// under (see `shapes::CallsChecked`).
    pub(crate) generation: u64,
}

impl Names {
    /// Whether `name` (as written) was read as a routine or as none.
    fn knows(&self, name: &str) -> bool {
        if name.len() > MAX_NAME {
            return true;
        }
        let known = |n: &str| self.routines.contains(n) || self.others.contains(n);
        if !name.bytes().any(|b| b.is_ascii_uppercase()) {
            return known(name);
        }
        // Most statements write keywords in capitals (`VALUES (`, `COUNT(`): lower case on
        // the stack, as every statement asks.
        let mut lower = [0u8; MAX_NAME];
        let lower = &mut lower[..name.len()];
        lower.copy_from_slice(name.as_bytes());
        lower.make_ascii_lowercase();
        std::str::from_utf8(lower).is_ok_and(known)
    }
}

/// The shards' routines, and the names met that are none.
#[derive(Debug, Default)]
pub(crate) struct Routines {
    names: RwLock<Arc<Names>>,
    /// One read at a time: statements that meet new names meanwhile wait for it, and most
    /// find theirs read by then.
    reading: tokio::sync::Mutex<()>,
}

impl Routines {
    /// The names as they are now.
    pub(crate) fn names(&self) -> Arc<Names> {
        Arc::clone(&self.names.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Reads the routines of every MySQL and PostgreSQL data source (SQLite keeps none). A
    /// data source that does not answer keeps what was read from it before.
    pub(crate) async fn load(&self, backend: &Backend, config: &Config) {
        let _reading = self.reading.lock().await;
        self.read(backend, config, Vec::new()).await;
    }

    /// The names, once every name `sql` calls is known as a routine or as none: the routines
    /// are read again when one is new.
    pub(crate) async fn learn(
        &self,
        backend: &Backend,
        config: &Config,
        sql: Sql<'_>,
    ) -> Arc<Names> {
        // A read finds every routine, so the statement is classified by it whatever it
        // remembers of its other names: a few per read, whatever the statement holds.
        let new = |names: &Names| -> Vec<String> {
            crate::calls::called_names(sql.text, sql.leading)
                .filter(|name| !names.knows(name))
                .take(MAX_MET)
                .map(str::to_ascii_lowercase)
                .collect()
        };
        let names = self.names();
        if new(&names).is_empty() {
            return names;
        }
        let _reading = self.reading.lock().await;
        let met = new(&self.names());
        if !met.is_empty() {
            self.read(backend, config, met).await;
        }
        self.names()
    }

    /// Reads the routines; the names in `met` that are none are remembered as such.
    async fn read(&self, backend: &Backend, config: &Config, met: Vec<String>) {
        let before = self.names();
        let mut routines = Set::default();
        // The proxy's own read, on a connection no session's settings or state are on.
        let fresh = Arc::new(SessionState::default());
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
            let read = read_texts(backend, &source.name, sql, "routines");
            match session_state::serve(Arc::clone(&fresh), read).await {
                Some(rows) => routines.extend(rows.into_iter().flatten()),
                None => routines.extend(before.routines.iter().cloned()),
            }
        }
        let mut others: Set = match before.others.len() + met.len() > MAX_OTHERS {
            true => Set::default(),
            false => before.others.clone(),
        };
        // Learnt even when a data source did not answer: a call of a routine only it defines
        // fails wherever it runs while it is away, and the next read after it is back (at
        // most 30 s) finds the routine.
        others.extend(met);
        others.retain(|name| !routines.contains(name));
        let names = Arc::new(Names {
            routines,
            others,
            generation: before.generation + 1,
        });
        *self.names.write().unwrap_or_else(PoisonError::into_inner) = names;
    }
}

/// Whether `sql` may create, replace or drop a routine.
pub(crate) fn changes_routines(sql: Sql<'_>) -> bool {
    let (leading, sql) = (sql.leading, sql.text);
    matches!(leading, Leading::Create | Leading::Drop | Leading::Alter) && {
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
        assert!(changes_routines(Sql::new(
            "CREATE OR REPLACE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql"
        )));
        assert!(changes_routines(Sql::new("drop procedure p")));
        assert!(!changes_routines(Sql::new("SELECT f()")));
    }

    #[test]
    fn a_name_is_known_once_read_whatever_its_case() {
        let names = Names {
            routines: ["audit".to_owned()].into_iter().collect(),
            others: ["count".to_owned()].into_iter().collect(),
            generation: 1,
        };
        assert!(names.knows("Audit"));
        assert!(names.knows("COUNT"));
        assert!(!names.knows("set_tenant"));
        assert!(names.knows(&"x".repeat(MAX_NAME + 1)));
    }
}
