//! The statements clients send to set up and inspect a session (`SET NAMES`, `SELECT
//! @@version_comment`, `SHOW VARIABLES`, `SELECT LAST_INSERT_ID()`, `USE`, …), answered by the
//! proxy itself. They are recognised from their text: several of them are MySQL syntax that a
//! general SQL parser does not take, and they must work before anything else does.

mod codes;

use keyshard_types::{MySqlColumnType, MySqlOrigin, Value};

use super::select_list;
use crate::error::Error;
use crate::reply::Reply;
use crate::session::Session;
use crate::words::like;

/// Session variables a client may ask for, with the values the proxy stands by. Keys are
/// consecutive within a block and generators hand them out one apart, hence
/// `auto_increment_increment = 1`.
const VARIABLES: &[(&str, &str)] = &[
    ("auto_increment_increment", "1"),
    ("auto_increment_offset", "1"),
    ("autocommit", "1"),
    ("character_set_client", "utf8mb4"),
    ("character_set_connection", "utf8mb4"),
    ("character_set_database", "utf8mb4"),
    ("character_set_results", "utf8mb4"),
    ("character_set_server", "utf8mb4"),
    ("collation_connection", "utf8mb4_general_ci"),
    ("collation_database", "utf8mb4_general_ci"),
    ("collation_server", "utf8mb4_general_ci"),
    ("init_connect", ""),
    ("interactive_timeout", "28800"),
    ("license", "Apache-2.0"),
    ("lower_case_table_names", "0"),
    ("max_allowed_packet", "67108864"),
    ("net_buffer_length", "16384"),
    ("net_write_timeout", "60"),
    ("performance_schema", "0"),
    ("query_cache_size", "0"),
    ("query_cache_type", "OFF"),
    ("sql_mode", "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION"),
    ("system_time_zone", "UTC"),
    ("time_zone", "SYSTEM"),
    ("transaction_isolation", "REPEATABLE-READ"),
    ("tx_isolation", "REPEATABLE-READ"),
    ("tx_read_only", "0"),
    ("transaction_read_only", "0"),
    // The shards' (`Identity`), which `variable` answers.
    ("version", ""),
    ("version_comment", "Keyshard sharding proxy"),
    ("wait_timeout", "28800"),
];

/// Variables of [`VARIABLES`] whose value is the shards' own, once they have been asked.
const SHARD_HELD: &[&str] = &[
    "interactive_timeout",
    "lower_case_table_names",
    "net_buffer_length",
    "net_write_timeout",
    "performance_schema",
    "query_cache_size",
    "query_cache_type",
    "sql_mode",
    "system_time_zone",
    "time_zone",
    "wait_timeout",
];

fn variable<'a>(name: &str, session: &'a Session) -> Option<&'a str> {
    if name.eq_ignore_ascii_case("version") {
        return Some(&session.identity.mysql);
    }
    // A setting the shards hold, as the database reported it when it was made; else as a new
    // shard session has it, unless the proxy stands by its own value.
    let lower = name.to_ascii_lowercase();
    if let Some(reported) = session.reported.get(&lower) {
        return Some(reported);
    }
    let proxy_s = VARIABLES.iter().any(|(n, _)| *n == lower) && !SHARD_HELD.contains(&&*lower);
    if !proxy_s && let Some(value) = session.identity.mysql_variables.get(&lower) {
        return Some(value);
    }
    VARIABLES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

/// A variable's value as the server would type it: numbers as integers.
fn typed(value: &str) -> Value {
    match value.parse::<i64>() {
        Ok(v) => Value::Int(v),
        Err(_) => Value::Text(value.to_owned()),
    }
}

/// A MySQL session statement, recognised from its text.
#[derive(Debug)]
pub(crate) enum Statement<'a> {
    /// `SET NAMES …`, `SET sql_mode = …`: acknowledged, the proxy's settings are fixed.
    /// (`SET autocommit` and `SET @x` are recognised before.)
    Set,
    Use(&'a str),
    ShowDatabases,
    ShowWarnings,
    ShowVariables(&'a str),
    /// `SELECT` of session values only: each with its column name.
    Select(Vec<(&'a str, SessionValue)>),
}

/// A value the session knows.
#[derive(Debug)]
pub(crate) enum SessionValue {
    /// `@@name`, lower case, without `session.` or `global.`.
    System(String),
    /// `@name`, lower case.
    User(String),
    LastInsertId,
    Database,
    Version,
    ConnectionId,
    CurrentUser,
    /// `SELECT 1`, the connection check of many pools.
    Number(i64),
}

/// `sql` as a session statement; `None` for everything else.
pub(crate) fn recognise(sql: &str) -> Option<Statement<'_>> {
    let (text, lower) = super::words_of(sql);
    let words: Vec<&str> = lower.split_whitespace().collect();
    Some(match words.as_slice() {
        ["set", ..] => Statement::Set,
        ["use", _] => Statement::Use(strip_quotes(text.split_whitespace().nth(1)?)),
        ["show", "databases"] | ["show", "schemas"] => Statement::ShowDatabases,
        ["show", "warnings", ..] | ["show", "errors", ..] => Statement::ShowWarnings,
        ["show", "variables", ..]
        | ["show", "session", "variables", ..]
        | ["show", "global", "variables", ..] => Statement::ShowVariables(text),
        ["select", ..] => Statement::Select(
            select_list::items(text)?
                .into_iter()
                .map(|item| Some((item.alias.unwrap_or(item.expr), session_value(item.expr)?)))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// Answers a session statement from `session`, whose logical database is `current` among
/// the instance's `databases`, of which its user may use those `permitted` says.
pub(crate) fn answer(
    statement: Statement,
    session: &mut Session,
    databases: &[String],
    permitted: &dyn Fn(&str) -> bool,
    current: &str,
) -> Result<Reply, Error> {
    Ok(match statement {
        Statement::Set => Reply::done(),
        Statement::Use(name) => {
            let Some(database) = databases.iter().find(|d| d.eq_ignore_ascii_case(name)) else {
                return Err(Error::unknown_database(name));
            };
            if !permitted(database) {
                return Err(Error::database_denied(&session.user, database));
            }
            if !database.eq_ignore_ascii_case(current) {
                session.may_change_database()?;
            }
            // The connection follows the session to that database's engine.
            session.database = Some(database.clone());
            Reply::done()
        }
        Statement::ShowDatabases => Reply::text_rows(
            &["Database"],
            databases
                .iter()
                .filter(|d| permitted(d))
                .map(|d| vec![Value::Text(d.clone())])
                .collect(),
        ),
        Statement::ShowWarnings => Reply::text_rows(&["Level", "Code", "Message"], Vec::new()),
        Statement::ShowVariables(text) => show_variables(text, session),
        Statement::Select(items) => {
            let numbers: Vec<Option<i64>> = items
                .iter()
                .map(|(_, value)| match value {
                    SessionValue::Number(n) => Some(*n),
                    _ => None,
                })
                .collect();
            let (names, values): (Vec<String>, Vec<Value>) = items
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value_of(&value, session)))
                .unzip();
            let mut reply = Reply::one_row(names, values);
            if let Reply::Rows { columns, .. } = &mut reply {
                for (column, number) in columns.iter_mut().zip(numbers) {
                    column.mysql = number.map(|n| Box::new(integer_literal(n)));
                }
            }
            reply
        }
    })
}

/// The column of an integer literal as MariaDB describes it (`SELECT 1`, a pool's connection
/// check, which JDBC reads as an INTEGER): INT up to nine digits, else BIGINT, as long as its
/// text, never NULL.
fn integer_literal(n: i64) -> MySqlColumnType {
    const LONG: u8 = 3;
    const LONGLONG: u8 = 8;
    const NOT_NULL_AND_BINARY: u16 = 1 | 128;
    let digits = n.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1);
    MySqlColumnType {
        code: if digits <= 9 { LONG } else { LONGLONG },
        flags: NOT_NULL_AND_BINARY,
        length: digits + u32::from(n < 0),
        collation: 63,
        decimals: 0,
        origin: MySqlOrigin::default(),
        extended_type_info: bytes::Bytes::new(),
    }
}

fn strip_quotes(name: &str) -> &str {
    name.trim_matches(|c| c == '`' || c == '"' || c == '\'')
}

fn show_variables(text: &str, session: &Session) -> Reply {
    // `LIKE 'pattern'` or `WHERE Variable_name = 'x'` / `IN (...)`: every quoted name or pattern.
    let patterns: Vec<String> = text
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_ascii_lowercase)
        .collect();
    let names: std::collections::BTreeSet<&str> = VARIABLES
        .iter()
        .map(|(name, _)| *name)
        .chain(session.reported.keys().map(String::as_str))
        .chain(session.identity.mysql_variables.keys().map(String::as_str))
        .collect();
    let rows = names
        .into_iter()
        .filter(|name| patterns.is_empty() || patterns.iter().any(|p| like(name, p)))
        .map(|name| {
            let value = variable(name, session).unwrap_or_default();
            vec![Value::Text(name.to_owned()), Value::Text(value.to_owned())]
        })
        .collect();
    Reply::text_rows(&["Variable_name", "Value"], rows)
}

fn session_value(expr: &str) -> Option<SessionValue> {
    let lower = expr.to_ascii_lowercase();
    if let Some(name) = lower.strip_prefix("@@") {
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return None;
        }
        let name = name
            .strip_prefix("session.")
            .or_else(|| name.strip_prefix("global."))
            .unwrap_or(name);
        return Some(SessionValue::System(name.to_owned()));
    }
    if let Some(name) = lower.strip_prefix('@') {
        let plain = name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.'));
        if name.is_empty() || !plain {
            return None;
        }
        return Some(SessionValue::User(name.to_owned()));
    }
    Some(match lower.replace(' ', "").as_str() {
        "last_insert_id()" => SessionValue::LastInsertId,
        "database()" | "schema()" => SessionValue::Database,
        "version()" => SessionValue::Version,
        "connection_id()" => SessionValue::ConnectionId,
        "user()" | "current_user()" | "current_user" | "session_user()" | "system_user()" => {
            SessionValue::CurrentUser
        }
        number => SessionValue::Number(number.parse().ok()?),
    })
}

fn value_of(value: &SessionValue, session: &Session) -> Value {
    let characteristics = session.characteristics;
    match value {
        SessionValue::System(name) => match name.as_str() {
            "autocommit" => Value::Int(session.autocommit.into()),
            "transaction_isolation" | "tx_isolation" => match characteristics.isolation {
                Some(level) => Value::Text(level.sql().replace(' ', "-")),
                None => variable(name, session).map_or(Value::Null, typed),
            },
            "transaction_read_only" | "tx_read_only" => {
                Value::Int(characteristics.read_only.unwrap_or(false).into())
            }
            name => variable(name, session).map_or(Value::Null, typed),
        },
        SessionValue::User(name) => session
            .mysql
            .variables
            .get(name)
            .cloned()
            .unwrap_or(Value::Null),
        SessionValue::LastInsertId => Value::UInt(session.last_insert_id),
        SessionValue::Database => session.database.clone().map_or(Value::Null, Value::Text),
        SessionValue::Version => Value::Text(session.identity.mysql.clone()),
        SessionValue::ConnectionId => Value::UInt(session.connection_id.into()),
        SessionValue::CurrentUser => Value::Text(format!("{}@%", session.user)),
        SessionValue::Number(n) => Value::Int(*n),
    }
}

#[cfg(test)]
mod tests;
