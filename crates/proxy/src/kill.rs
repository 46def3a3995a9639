//! Stopping a session from another: MySQL's `KILL [HARD|SOFT] [CONNECTION|QUERY] id` and
//! PostgreSQL's `SELECT pg_cancel_backend(id)` / `SELECT pg_terminate_backend(id)`. The ids
//! are the proxy's sessions' (`CONNECTION_ID()`, `SHOW PROCESSLIST`, the process id of
//! PostgreSQL's BackendKeyData): a shard's ids name pooled connections every client shares.
//! What the session runs on the shards is cancelled there (see `keyshard_backend::cancel`).

use keyshard_backend::Column;
use keyshard_types::SqlType;
use keyshard_types::{Dialect, Value};

use crate::error::{Error, ErrorKind};
use crate::reply::Reply;

/// A statement that stops a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kill {
    /// The session's id.
    pub(crate) id: u32,
    /// Whether the session ends too (`KILL CONNECTION`, `pg_terminate_backend`), not only
    /// its statement.
    pub(crate) end: bool,
    /// PostgreSQL's function, whose boolean answer names the column.
    function: Option<&'static str>,
}

const CANCEL: &str = "pg_cancel_backend";
const TERMINATE: &str = "pg_terminate_backend";

impl Kill {
    /// The kill `sql` asks for, in `dialect`; refused when it calls PostgreSQL's functions
    /// otherwise than with one id (`FROM pg_stat_activity`, an expression): on a shard the
    /// id would name a connection of any client, or of the shard's own processes.
    pub(crate) fn parse(sql: &str, dialect: Dialect) -> Option<Result<Self, Error>> {
        let trimmed = sql.trim().trim_end_matches(';').trim_end();
        match dialect {
            Dialect::MySql => mysql(trimmed).map(Ok),
            Dialect::Postgres => match postgres(trimmed) {
                Some(kill) => Some(Ok(kill)),
                None => names_a_function(sql).then(|| {
                    Err(Error::unsupported(
                        "pg_cancel_backend and pg_terminate_backend but as \
                         `SELECT pg_cancel_backend(id)` with one session id (see \
                         pg_stat_activity)",
                    ))
                }),
            },
        }
    }

    /// The answer once it ran: `found` says whether the session was there.
    pub(crate) fn answer(&self, found: bool) -> Result<Reply, Error> {
        match self.function {
            Some(function) => Ok(Reply::Rows {
                columns: vec![Column::new(function, SqlType::Bool)],
                rows: vec![vec![Value::Bool(found)]],
            }),
            None if found => Ok(Reply::done()),
            None => Err(Error::new(
                ErrorKind::UnknownThread,
                format!("Unknown thread id: {}", self.id),
            )),
        }
    }

    /// The columns of `SELECT pg_cancel_backend(…)`, for a Describe.
    pub(crate) fn columns(&self) -> Vec<Column> {
        self.function
            .map(|f| vec![Column::new(f, SqlType::Bool)])
            .unwrap_or_default()
    }
}

/// `KILL [HARD | SOFT] [CONNECTION | QUERY] id` (MariaDB's `KILL QUERY ID` and `KILL USER`
/// are not this).
fn mysql(sql: &str) -> Option<Kill> {
    let mut words = sql.split_ascii_whitespace();
    if !words.next()?.eq_ignore_ascii_case("kill") {
        return None;
    }
    let mut word = words.next()?;
    if word.eq_ignore_ascii_case("hard") || word.eq_ignore_ascii_case("soft") {
        word = words.next()?;
    }
    let mut end = true;
    if word.eq_ignore_ascii_case("connection") || word.eq_ignore_ascii_case("query") {
        end = word.eq_ignore_ascii_case("connection");
        word = words.next()?;
    }
    let id = word.parse().ok()?;
    words.next().is_none().then_some(Kill {
        id,
        end,
        function: None,
    })
}

/// Whether `sql` names PostgreSQL's cancel or terminate function anywhere.
fn names_a_function(sql: &str) -> bool {
    let sql = sql.as_bytes();
    crate::words::find_ignore_ascii_case(sql, b"pg_").any(|at| {
        [CANCEL, TERMINATE].iter().any(|f| {
            sql.get(at..at + f.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(f.as_bytes()))
        })
    })
}

/// `SELECT [pg_catalog.]pg_cancel_backend(id)` or `pg_terminate_backend(id)`.
fn postgres(sql: &str) -> Option<Kill> {
    let rest = sql
        .get(..6)?
        .eq_ignore_ascii_case("select")
        .then(|| &sql[6..])?;
    let rest = rest.strip_prefix(char::is_whitespace)?.trim_start();
    let rest = rest
        .get(..11)
        .filter(|p| p.eq_ignore_ascii_case("pg_catalog."))
        .map_or(rest, |_| &rest[11..]);
    let (function, end) = [(CANCEL, false), (TERMINATE, true)]
        .into_iter()
        .find(|(f, _)| {
            rest.get(..f.len())
                .is_some_and(|r| r.eq_ignore_ascii_case(f))
        })?;
    let id = rest[function.len()..]
        .trim_start()
        .strip_prefix('(')?
        .strip_suffix(')')?
        .trim();
    Some(Kill {
        id: id.parse().ok()?,
        end,
        function: Some(function),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kill(sql: &str, dialect: Dialect) -> Option<(u32, bool)> {
        Kill::parse(sql, dialect)?.ok().map(|k| (k.id, k.end))
    }

    #[test]
    fn mysql_kills_connections_unless_told_query() {
        assert_eq!(kill("KILL 12", Dialect::MySql), Some((12, true)));
        assert_eq!(kill("kill query 12;", Dialect::MySql), Some((12, false)));
        assert_eq!(
            kill("KILL HARD CONNECTION 3", Dialect::MySql),
            Some((3, true))
        );
        assert_eq!(kill("KILL SOFT QUERY 3", Dialect::MySql), Some((3, false)));
        for other in [
            "KILL QUERY ID 3",
            "KILL USER bob",
            "KILL -1",
            "KILL 3 4",
            "KILLS 3",
        ] {
            assert_eq!(kill(other, Dialect::MySql), None, "{other}");
        }
        assert_eq!(kill("KILL 3", Dialect::Postgres), None);
    }

    #[test]
    fn postgres_cancels_or_terminates_by_function() {
        let pg = Dialect::Postgres;
        assert_eq!(kill("SELECT pg_cancel_backend(42)", pg), Some((42, false)));
        assert_eq!(
            kill("select pg_catalog.pg_terminate_backend( 42 );", pg),
            Some((42, true))
        );
        for other in [
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity",
            "SELECT pg_cancel_backend(42), 1",
            "SELECT pg_cancel_backend($1)",
        ] {
            let refused = Kill::parse(other, pg).expect(other).unwrap_err();
            assert_eq!(refused.pg_sqlstate(), "0A000", "{other}");
        }
        assert!(Kill::parse("SELECT 1", pg).is_none());
    }

    #[test]
    fn answers_as_each_database_does() {
        let mysql = Kill::parse("KILL 9", Dialect::MySql).unwrap().unwrap();
        assert_eq!(mysql.answer(true), Ok(Reply::done()));
        let refused = mysql.answer(false).unwrap_err();
        assert_eq!(refused.mysql_code().0, 1094);
        let pg = Kill::parse("SELECT pg_cancel_backend(9)", Dialect::Postgres)
            .unwrap()
            .unwrap();
        assert_eq!(
            pg.answer(false),
            Ok(Reply::Rows {
                columns: pg.columns(),
                rows: vec![vec![Value::Bool(false)]],
            })
        );
    }
}
