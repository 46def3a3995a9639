//! What a statement sent as text asks of the proxy, decided once from its text: transaction
//! control, a DistSQL or SQL-level PREPARE command, a session statement, a reflection question,
//! a PREVIEW, or a statement to route to the shards. Both frontends' statements go through
//! here, whether sent as text or prepared.

use keyshard_router::Leading;
use keyshard_types::Dialect;

use crate::control::Control;
use crate::copy::{self, CopyIn};
use crate::dialect::SessionStatement;
use crate::distsql::{self, DistSql};
use crate::error::Error;
use crate::kill::Kill;
use crate::reflection::{self, Request};
use crate::settings::{self, SetSettings};
use crate::sql::Sql;
use crate::sql_prepare::{self, Command};
use crate::{load_data, user_variables};

/// What a statement asks.
#[derive(Debug)]
pub(crate) enum Intent<'a> {
    /// BEGIN, COMMIT, ROLLBACK, savepoints, autocommit, transaction characteristics.
    Control(Control),
    /// ShardingSphere's DistSQL the proxy answers (`SET DIST VARIABLE`, `SHOW COMPUTE NODES`).
    DistSql(DistSql),
    /// `PREPARE` / `EXECUTE` / `DEALLOCATE` in SQL.
    SqlPrepare(Command<'a>),
    /// MySQL's `SET @a = expr, …`: names lower-cased, expressions as written.
    SetUserVariables(Vec<(String, &'a str)>),
    /// MySQL's `SET` of user variables and settings together: each assignment in turn.
    SetEach(Vec<&'a str>),
    /// MySQL's `SHOW [FULL] PROCESSLIST`: the proxy's sessions.
    ProcessList { full: bool },
    /// `KILL`, `pg_cancel_backend`, `pg_terminate_backend`: of a proxy's session, or why not.
    Kill(Result<Kill, Error>),
    /// MySQL's `SHOW [GLOBAL | SESSION | LOCAL] STATUS [LIKE 'pattern']`: the proxy's own
    /// counters, or the session's.
    Status { global: bool, like: Option<String> },
    /// Settings the shards hold (`SET time_zone`, `SET search_path`, `RESET …`), or why they
    /// are refused.
    Settings(Result<SetSettings, Error>),
    /// Settings and session functions, answered from the session.
    Session(SessionStatement<'a>),
    /// `SHOW TABLES`, `SHOW COLUMNS`, `SHOW CREATE TABLE`, `SHOW INDEX`: for logic tables.
    Reflection(Request),
    /// PostgreSQL's `COPY … FROM STDIN`, MySQL's `LOAD DATA LOCAL INFILE`, or why the load is
    /// refused.
    CopyIn(Result<CopyIn, Error>),
    /// PostgreSQL's `LISTEN` / `UNLISTEN`: the session's own listening connection.
    Listen(crate::listen_command::Command),
    /// `PREVIEW statement`: where it would go, without running it.
    Preview(&'a str),
    /// Anything else: planned by the router and run on the shards.
    Routed,
}

impl<'a> Intent<'a> {
    /// What `sql`, in `dialect`, asks: the handlers its leading keyword may lead, each asked
    /// in turn. The order matters where texts overlap: transaction control and DistSQL's
    /// `SET DIST VARIABLE` before the session's `SET`s, and PostgreSQL's cancel functions
    /// (refused wherever they are not the whole `SELECT`) before the session's statements.
    pub(crate) fn of(sql: Sql<'a>, dialect: Dialect) -> Intent<'a> {
        let (text, leading) = (sql.text, sql.leading);
        let mysql = dialect == Dialect::MySql;
        let first = match leading {
            // Most statements are INSERTs, and no handler answers one.
            Leading::Insert | Leading::Replace => return Intent::Routed,
            Leading::Begin
            | Leading::Start
            | Leading::Commit
            | Leading::End
            | Leading::Rollback
            | Leading::Abort
            | Leading::Savepoint
            | Leading::Release => sql.control().map(Intent::Control),
            Leading::Set => set(sql, dialect),
            Leading::Show => distsql::parse(text).map(Intent::DistSql).or_else(|| {
                let full = if mysql { processlist(text) } else { None };
                full.map(|full| Intent::ProcessList { full })
            }),
            Leading::Refresh | Leading::Clear => distsql::parse(text).map(Intent::DistSql),
            Leading::Prepare | Leading::Execute | Leading::Deallocate | Leading::Drop => {
                sql_prepare::parse(text, dialect).map(Intent::SqlPrepare)
            }
            Leading::Kill if mysql => Kill::parse(text, dialect).map(Intent::Kill),
            _ => None,
        };
        // PostgreSQL's cancel functions: answered as the whole `SELECT`, refused wherever else
        // they are called (MySQL's KILL is a statement of its own, above).
        let kill = || {
            let kill = (!mysql).then(|| Kill::parse(text, dialect)).flatten();
            kill.map(Intent::Kill)
        };
        let session = || SessionStatement::recognise(text, dialect).map(Intent::Session);
        let then = || match leading {
            Leading::Show => (if mysql { status(text) } else { None })
                .map(|(global, like)| Intent::Status { global, like })
                .or_else(session)
                .or_else(|| reflection::request(text).map(Intent::Reflection)),
            Leading::Set | Leading::Reset => settings::parse(text, dialect)
                .map(Intent::Settings)
                .or_else(session),
            Leading::Select | Leading::Discard | Leading::Use => session(),
            Leading::Describe => reflection::request(text).map(Intent::Reflection),
            Leading::Copy if !mysql => copy::parse(text).map(Intent::CopyIn),
            Leading::Load if mysql => load_data::parse(text).map(Intent::CopyIn),
            Leading::Listen | Leading::Unlisten if !mysql => {
                crate::listen_command::parse(text).map(Intent::Listen)
            }
            Leading::Preview => previewed(text).map(Intent::Preview),
            _ => None,
        };
        first.or_else(kill).or_else(then).unwrap_or(Intent::Routed)
    }
}

/// What a `SET …` asks before anything else may: transaction control, DistSQL, MySQL's user
/// variables.
fn set<'a>(sql: Sql<'a>, dialect: Dialect) -> Option<Intent<'a>> {
    if let Some(control) = sql.control() {
        return Some(Intent::Control(control));
    }
    let sql = sql.text;
    if let Some(statement) = distsql::parse(sql) {
        return Some(Intent::DistSql(statement));
    }
    if dialect == Dialect::MySql {
        if let Some(assignments) = user_variables::parse_set(sql) {
            return Some(Intent::SetUserVariables(assignments));
        }
        if let Some(assignments) = user_variables::split_mixed_set(sql) {
            return Some(Intent::SetEach(assignments));
        }
    }
    None
}

/// `SHOW [FULL] PROCESSLIST`: whether FULL.
fn processlist(sql: &str) -> Option<bool> {
    let rest = strip_keyword(sql, "show")?;
    let (full, rest) = match strip_keyword(rest, "full") {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    rest.trim_end_matches(';')
        .trim_end()
        .eq_ignore_ascii_case("processlist")
        .then_some(full)
}

/// `SHOW [GLOBAL | SESSION | LOCAL] STATUS [LIKE 'pattern']`: whether GLOBAL, and its
/// pattern, if any.
fn status(sql: &str) -> Option<(bool, Option<String>)> {
    let rest = strip_keyword(sql, "show")?;
    let (global, rest) = match strip_keyword(rest, "global") {
        Some(rest) => (true, rest),
        None => (
            false,
            strip_keyword(rest, "session")
                .or_else(|| strip_keyword(rest, "local"))
                .unwrap_or(rest),
        ),
    };
    let like = status_pattern(rest)?;
    Some((global, like))
}

/// The rest of `SHOW … STATUS [LIKE 'pattern']` after its scope: the pattern, if any.
fn status_pattern(rest: &str) -> Option<Option<String>> {
    let rest = rest.trim_end().trim_end_matches(';').trim_end();
    if rest.eq_ignore_ascii_case("status") {
        return Some(None);
    }
    let rest = strip_keyword(rest, "status")?;
    let pattern = strip_keyword(rest, "like")?.trim();
    let quoted = pattern
        .strip_prefix('\'')
        .and_then(|p| p.strip_suffix('\''))
        .filter(|p| !p.contains('\''))?;
    Some(Some(quoted.to_owned()))
}

/// The statement `PREVIEW …` previews.
pub(crate) fn previewed(sql: &str) -> Option<&str> {
    strip_keyword(sql, "preview")
}

/// `rest` when `sql` starts with `keyword` and white space, case-insensitively.
fn strip_keyword<'a>(sql: &'a str, keyword: &str) -> Option<&'a str> {
    let sql = sql.trim_start();
    let head = sql.get(..keyword.len())?;
    let rest = &sql[keyword.len()..];
    (head.eq_ignore_ascii_case(keyword) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handler each statement's leading keyword picks, where texts overlap too.
    #[test]
    fn each_statement_goes_to_its_handler() {
        let name = |intent: Intent| match intent {
            Intent::Control(_) => "control",
            Intent::DistSql(_) => "distsql",
            Intent::SqlPrepare(_) => "sql prepare",
            Intent::SetUserVariables(_) => "user variables",
            Intent::SetEach(_) => "each",
            Intent::ProcessList { .. } => "processlist",
            Intent::Kill(Ok(_)) => "kill",
            Intent::Kill(Err(_)) => "kill refused",
            Intent::Status { .. } => "status",
            Intent::Settings(_) => "settings",
            Intent::Session(_) => "session",
            Intent::Reflection(_) => "reflection",
            Intent::CopyIn(_) => "load",
            Intent::Listen(_) => "listen",
            Intent::Preview(_) => "preview",
            Intent::Routed => "routed",
        };
        let (my, pg) = (Dialect::MySql, Dialect::Postgres);
        let cases = [
            ("INSERT INTO t VALUES (1)", my, "routed"),
            ("insert into t select pg_cancel_backend(1)", pg, "routed"),
            ("SELECT * FROM t WHERE id = 1", pg, "routed"),
            ("BEGIN", my, "control"),
            ("abort", pg, "control"),
            ("SET autocommit = 0", my, "control"),
            ("SET DIST VARIABLE transaction_type = 'XA'", my, "distsql"),
            ("SET @a = 1", my, "user variables"),
            ("SET @a = 1, sql_mode = ''", my, "each"),
            ("SET time_zone = '+00:00'", my, "settings"),
            ("SET search_path TO public", pg, "settings"),
            ("SET application_name = 'x'", pg, "session"),
            ("RESET ALL", pg, "settings"),
            ("DISCARD ALL", pg, "session"),
            ("USE sharding_db", my, "session"),
            ("SELECT @@version", my, "session"),
            ("SHOW COMPUTE NODES", my, "distsql"),
            ("REFRESH TABLE METADATA", my, "distsql"),
            ("CLEAR HINT", my, "distsql"),
            ("SHOW FULL PROCESSLIST", my, "processlist"),
            ("SHOW GLOBAL STATUS LIKE 'Com_insert'", my, "status"),
            ("SHOW VARIABLES LIKE 'version'", my, "session"),
            ("SHOW TABLES", my, "reflection"),
            ("desc t_order", my, "reflection"),
            ("PREPARE s FROM 'SELECT 1'", my, "sql prepare"),
            ("EXECUTE s (1)", pg, "sql prepare"),
            ("DROP PREPARE s", my, "sql prepare"),
            ("DROP TABLE t", my, "routed"),
            ("KILL 5", my, "kill"),
            ("SELECT pg_cancel_backend(5)", pg, "kill"),
            (
                "WITH a AS (SELECT pg_cancel_backend(5)) SELECT 1",
                pg,
                "kill refused",
            ),
            ("COPY t FROM STDIN", pg, "load"),
            ("COPY t FROM STDIN", my, "routed"),
            ("LOAD DATA LOCAL INFILE 'f' INTO TABLE t", my, "load"),
            ("LISTEN c", pg, "listen"),
            ("LISTEN c", my, "routed"),
            ("PREVIEW SELECT 1", pg, "preview"),
            ("CALL p()", my, "routed"),
        ];
        for (text, dialect, expected) in cases {
            let intent = Intent::of(Sql::new(text), dialect);
            assert_eq!(name(intent), expected, "{text} ({dialect:?})");
        }
    }
}
