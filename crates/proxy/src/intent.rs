//! What a statement sent as text asks of the proxy, decided once from its text: transaction
//! control, a DistSQL or SQL-level PREPARE command, a session statement, a reflection question,
//! a PREVIEW, or a statement to route to the shards. Both frontends' statements go through
//! here, whether sent as text or prepared.

use keyshard_types::Dialect;

use crate::control::{self, Control};
use crate::copy::{self, CopyIn};
use crate::dialect::SessionStatement;
use crate::distsql::{self, DistSql};
use crate::error::Error;
use crate::kill::Kill;
use crate::reflection::{self, Request};
use crate::settings::{self, SetSettings};
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

impl Intent<'_> {
    /// What `sql`, in `dialect`, asks. The order matters where texts overlap: transaction
    /// control and DistSQL's `SET DIST VARIABLE` before the session's `SET`s.
    pub(crate) fn of(sql: &str, dialect: Dialect) -> Intent<'_> {
        // Most statements are INSERTs, and no handler below answers one: they are routed
        // without the dozen first-word checks each handler would make.
        let first = crate::words::first_word(sql);
        if first.eq_ignore_ascii_case("insert") || first.eq_ignore_ascii_case("replace") {
            return Intent::Routed;
        }
        if let Some(control) = control::parse(sql) {
            return Intent::Control(control);
        }
        if let Some(statement) = distsql::parse(sql) {
            return Intent::DistSql(statement);
        }
        if let Some(command) = sql_prepare::parse(sql, dialect) {
            return Intent::SqlPrepare(command);
        }
        if dialect == Dialect::MySql
            && let Some(assignments) = user_variables::parse_set(sql)
        {
            return Intent::SetUserVariables(assignments);
        }
        if dialect == Dialect::MySql
            && let Some(assignments) = user_variables::split_mixed_set(sql)
        {
            return Intent::SetEach(assignments);
        }
        if dialect == Dialect::MySql
            && let Some(full) = processlist(sql)
        {
            return Intent::ProcessList { full };
        }
        if let Some(kill) = Kill::parse(sql, dialect) {
            return Intent::Kill(kill);
        }
        if dialect == Dialect::MySql
            && let Some((global, like)) = status(sql)
        {
            return Intent::Status { global, like };
        }
        if let Some(set) = settings::parse(sql, dialect) {
            return Intent::Settings(set);
        }
        if let Some(statement) = SessionStatement::recognise(sql, dialect) {
            return Intent::Session(statement);
        }
        if let Some(request) = reflection::request(sql) {
            return Intent::Reflection(request);
        }
        let load = match dialect {
            Dialect::Postgres => copy::parse(sql),
            Dialect::MySql => load_data::parse(sql),
        };
        if let Some(load) = load {
            return Intent::CopyIn(load);
        }
        if dialect == Dialect::Postgres
            && let Some(command) = crate::listen_command::parse(sql)
        {
            return Intent::Listen(command);
        }
        if let Some(statement) = previewed(sql) {
            return Intent::Preview(statement);
        }
        Intent::Routed
    }
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
