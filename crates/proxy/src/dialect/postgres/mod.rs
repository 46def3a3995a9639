//! The statements PostgreSQL clients send to set up and inspect a session (`SET
//! extra_float_digits = 3`, `SET application_name`, `SHOW TRANSACTION ISOLATION LEVEL`, `SELECT
//! version()`, `select current_schema()`, `DISCARD ALL`, …), answered by the proxy from the
//! session's settings: shards never see them, and they must work before anything else does.

mod codes;
pub(crate) mod parameters;

use std::collections::{BTreeMap, BTreeSet};

use keyshard_backend::{Characteristics, Column, Isolation};
use keyshard_types::SqlType;
use keyshard_types::Value;

use super::select_list;
use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::session::Session;
use parameters::{DEFAULTS, default};

/// A parameter's value in `session`; `name` is lower case.
fn setting(name: &str, session: &Session) -> Option<String> {
    let session_default = session.characteristics;
    let current = session
        .transaction
        .as_ref()
        .map_or(session_default, |t| t.characteristics().or(session_default));
    let level = |c: Characteristics| match c.isolation {
        None | Some(Isolation::ReadCommitted) => "read committed",
        Some(Isolation::ReadUncommitted) => "read uncommitted",
        Some(Isolation::RepeatableRead) => "repeatable read",
        Some(Isolation::Serializable) => "serializable",
    };
    let flag = |c: Characteristics| match c.read_only {
        Some(true) => "on",
        _ => "off",
    };
    let value = match name {
        "transaction_isolation" => level(current),
        "transaction_read_only" => flag(current),
        "default_transaction_isolation" => level(session_default),
        "default_transaction_read_only" => flag(session_default),
        "server_version" => &session.identity.postgres,
        "server_version_num" => &session.identity.postgres_num,
        // A setting the shards hold, as the database reported it when it was made; else as
        // the client gave it, as a new shard session has it, or the proxy's own.
        _ => match session.reported.get(name) {
            Some(reported) => reported,
            None => session
                .postgres
                .parameters
                .given(name)
                .or_else(|| {
                    let proxy_s = crate::settings::is_own(name, keyshard_types::Dialect::Postgres)
                        || name == "is_superuser";
                    let shards = &session.identity.postgres_settings;
                    (!proxy_s).then(|| shards.get(name).map(String::as_str))?
                })
                .or_else(|| default(name))?,
        },
    };
    Some(value.to_owned())
}

/// What the proxy writes as the database would for a session, in the text format of values
/// it converts from binary: the conversion (`postgres::wire_text`) writes dates and times as
/// the shard connections' own settings have them (TimeZone UTC, DateStyle ISO, IntervalStyle
/// postgres), which a session may have changed, money as a C locale does, which the session's
/// `lc_monetary` (else the shards') must be, and floats with the shortest exact digits, which
/// `extra_float_digits` above 0 asks for. Taken once per statement: its rows may go out while
/// the statement holds the session.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProxyText {
    iso: bool,
    utc: bool,
    interval: bool,
    money: bool,
    floats: bool,
}

impl ProxyText {
    pub(crate) fn of(session: &Session, shard_settings: &BTreeMap<String, String>) -> Self {
        let value = |name: &str| {
            session
                .reported
                .get(name)
                .map(String::as_str)
                .or_else(|| session.postgres.parameters.given(name))
        };
        let unquoted = |v: &str| v.trim_matches(['\'', '"']).to_ascii_uppercase();
        Self {
            iso: value("datestyle")
                .is_none_or(|v| v.trim_start().to_ascii_uppercase().starts_with("ISO")),
            utc: value("timezone").is_none_or(|v| {
                matches!(
                    unquoted(v).as_str(),
                    "UTC"
                        | "ETC/UTC"
                        | "GMT"
                        | "ETC/GMT"
                        | "UCT"
                        | "ZULU"
                        | "UNIVERSAL"
                        | "Z"
                        | "+00"
                        | "0"
                )
            }),
            interval: value("intervalstyle").is_none_or(|v| v.eq_ignore_ascii_case("postgres")),
            money: value("lc_monetary")
                .or(shard_settings.get("lc_monetary").map(String::as_str))
                .is_some_and(|v| {
                    matches!(unquoted(v).as_str(), "C" | "POSIX" | "C.UTF-8" | "C.UTF8")
                }),
            floats: value("extra_float_digits").is_none_or(|v| {
                v.trim()
                    .trim_matches('\'')
                    .parse::<i32>()
                    .is_ok_and(|v| v > 0)
            }),
        }
    }

    /// Whether the proxy writes values of type `oid` in text as the database would.
    pub(crate) fn writes(&self, oid: u32) -> bool {
        const DATE: u32 = 1082;
        const TIMESTAMP: u32 = 1114;
        const TIMESTAMPTZ: u32 = 1184;
        const INTERVAL: u32 = 1186;
        const FLOAT4: u32 = 700;
        const FLOAT8: u32 = 701;
        const MONEY: u32 = 790;
        // An array's elements are written as their type writes them.
        match keyshard_types::pg_array::element_oid_of(oid).unwrap_or(oid) {
            DATE | TIMESTAMP => self.iso,
            TIMESTAMPTZ => self.iso && self.utc,
            INTERVAL => self.interval,
            MONEY => self.money,
            FLOAT4 | FLOAT8 => self.floats,
            _ => true,
        }
    }
}

/// A PostgreSQL session statement, recognised from its text.
#[derive(Debug)]
pub(crate) enum Statement<'a> {
    /// `SET [SESSION | LOCAL] name { TO | = } value` and `SET TIME ZONE value`.
    Set(&'a str),
    ResetAll,
    Reset(String),
    /// `DISCARD ALL`, what poolers send between clients.
    DiscardAll,
    ShowAll,
    /// `SHOW name`, lower case.
    Show(String),
    /// `SELECT` of session functions and constants: each with its column name.
    Select(Vec<(String, SessionValue)>),
}

impl Statement<'_> {
    /// The columns of its answer, known before it runs (Describe).
    pub(crate) fn columns(&self) -> Vec<Column> {
        let text = |name: &str| Column::new(name, SqlType::Text);
        match self {
            Statement::Set(_) | Statement::ResetAll | Statement::Reset(_) => Vec::new(),
            Statement::DiscardAll => Vec::new(),
            Statement::ShowAll => vec![text("name"), text("setting")],
            Statement::Show(name) => vec![text(name)],
            Statement::Select(items) => items
                .iter()
                .map(|(name, value)| Column::new(name.clone(), value.ty()))
                .collect(),
        }
    }
}

/// A value the session knows.
#[derive(Debug)]
pub(crate) enum SessionValue {
    Version,
    CurrentSchema,
    CurrentDatabase,
    CurrentUser,
    BackendPid,
    IsInRecovery,
    CurrentSetting(String),
    Int(i32),
    Text(String),
}

/// `sql` as a session statement; `None` for everything else.
pub(crate) fn recognise(sql: &str) -> Option<Statement<'_>> {
    let (text, lower) = super::words_of(sql);
    let words: Vec<&str> = lower.split_whitespace().collect();
    Some(match words.as_slice() {
        ["set", ..] => Statement::Set(text),
        ["reset", "all"] => Statement::ResetAll,
        ["reset", name] => Statement::Reset(unquote(name).to_owned()),
        ["discard", "all"] => Statement::DiscardAll,
        ["show", "transaction", "isolation", "level"] => {
            Statement::Show("transaction_isolation".to_owned())
        }
        ["show", "time", "zone"] => Statement::Show("timezone".to_owned()),
        ["show", "all"] => Statement::ShowAll,
        ["show", name] => Statement::Show(unquote(name).to_owned()),
        ["select", ..] => Statement::Select(
            select_list::items(text)?
                .into_iter()
                .map(|item| {
                    let (name, value) = session_value(item.expr)?;
                    Some((item.alias.map_or(name, str::to_owned), value))
                })
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// Answers a session statement from `session`. `DISCARD ALL` is the engine's: it resets the
/// whole session first.
pub(crate) fn answer(statement: Statement, session: &mut Session) -> Result<Reply, Error> {
    let columns = statement.columns();
    let rows = match statement {
        Statement::Set(text) => {
            let (name, value) = set(text)?;
            session.postgres.parameters.set.insert(name, value);
            return Ok(Reply::done());
        }
        Statement::ResetAll | Statement::DiscardAll => {
            session.postgres.parameters.set.clear();
            return Ok(Reply::done());
        }
        Statement::Reset(name) => {
            session.postgres.parameters.set.remove(&name);
            return Ok(Reply::done());
        }
        Statement::ShowAll => {
            let names = DEFAULTS
                .iter()
                .map(|(n, _)| *n)
                .chain(
                    session
                        .postgres
                        .parameters
                        .startup
                        .keys()
                        .map(String::as_str),
                )
                .chain(session.postgres.parameters.set.keys().map(String::as_str))
                .chain(session.reported.keys().map(String::as_str))
                .chain(
                    session
                        .identity
                        .postgres_settings
                        .keys()
                        .map(String::as_str),
                )
                .collect::<BTreeSet<_>>();
            names
                .into_iter()
                .filter_map(|n| Some(vec![text(n), Value::Text(setting(n, session)?)]))
                .collect()
        }
        Statement::Show(name) => {
            let value = setting(&name, session).ok_or_else(|| unrecognized(&name, session))?;
            vec![vec![Value::Text(value)]]
        }
        Statement::Select(items) => vec![
            items
                .into_iter()
                .map(|(_, value)| value_of(value, session))
                .collect::<Result<_, _>>()?,
        ],
    };
    Ok(Reply::Rows { columns, rows })
}

/// The parameter `SET` names (lower case) and the value it gives it.
fn set(text: &str) -> Result<(String, String), Error> {
    let rest = text["set".len()..].trim_start();
    let rest = strip_word(rest, "session")
        .or_else(|| strip_word(rest, "local"))
        .unwrap_or(rest);
    let (name, value) =
        if let Some(value) = strip_word(rest, "time").and_then(|r| strip_word(r, "zone")) {
            ("timezone".to_owned(), value.trim())
        } else {
            let split = rest
                .find(|c: char| c == '=' || c.is_whitespace())
                .ok_or_else(|| syntax(text))?;
            let (name, value) = rest.split_at(split);
            let value = value.trim_start();
            let value = value
                .strip_prefix('=')
                .or_else(|| strip_word(value, "to"))
                .ok_or_else(|| syntax(text))?;
            (unquote(name.trim()).to_ascii_lowercase(), value.trim())
        };
    let value = if value.eq_ignore_ascii_case("default") {
        default(&name).unwrap_or_default().to_owned()
    } else {
        value
            .split(',')
            .map(|v| unquote(v.trim()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if name == "client_encoding"
        && !matches!(
            value.to_ascii_uppercase().as_str(),
            "UTF8" | "UTF-8" | "UNICODE"
        )
    {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("Keyshard speaks only UTF8, not client_encoding {value}"),
        ));
    }
    Ok((name, value))
}

/// `version()`, `current_schema()`, `current_database()`, `current_user`, `pg_backend_pid()`,
/// `current_setting('x')`, integer and string constants; with PostgreSQL's column name.
fn session_value(expr: &str) -> Option<(String, SessionValue)> {
    let compact: String = expr
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let (name, value) = match compact.as_str() {
        "version()" => ("version", SessionValue::Version),
        "current_schema()" | "current_schema" => ("current_schema", SessionValue::CurrentSchema),
        "current_database()" => ("current_database", SessionValue::CurrentDatabase),
        "current_user" | "session_user" | "user" | "current_role" => {
            (compact.as_str(), SessionValue::CurrentUser)
        }
        "pg_backend_pid()" => ("pg_backend_pid", SessionValue::BackendPid),
        "pg_is_in_recovery()" => ("pg_is_in_recovery", SessionValue::IsInRecovery),
        _ => {
            let value = if let Some(setting) = compact
                .strip_prefix("current_setting('")
                .and_then(|s| s.strip_suffix("')"))
            {
                // A setting the proxy does not know by name (an application's own, `app.x`,
                // made by set_config or a function) is the shard session's to answer.
                default(setting)?;
                return Some((
                    "current_setting".to_owned(),
                    SessionValue::CurrentSetting(setting.to_owned()),
                ));
            } else if let Ok(n) = compact.parse::<i32>() {
                SessionValue::Int(n)
            } else {
                let s = expr.strip_prefix('\'')?.strip_suffix('\'')?;
                if s.contains('\'') {
                    return None;
                }
                SessionValue::Text(s.to_owned())
            };
            ("?column?", value)
        }
    };
    Some((name.to_owned(), value))
}

impl SessionValue {
    fn ty(&self) -> SqlType {
        match self {
            SessionValue::Version | SessionValue::CurrentSetting(_) | SessionValue::Text(_) => {
                SqlType::Text
            }
            SessionValue::CurrentSchema
            | SessionValue::CurrentDatabase
            | SessionValue::CurrentUser => SqlType::Name,
            SessionValue::BackendPid | SessionValue::Int(_) => SqlType::Int {
                bytes: 4,
                unsigned: false,
            },
            SessionValue::IsInRecovery => SqlType::Bool,
        }
    }
}

fn value_of(value: SessionValue, session: &Session) -> Result<Value, Error> {
    Ok(match value {
        SessionValue::Version => Value::Text(format!(
            "PostgreSQL {} on x86_64-pc-linux-gnu, Keyshard sharding proxy",
            session.identity.postgres
        )),
        SessionValue::CurrentSchema => Value::Text("public".into()),
        SessionValue::CurrentDatabase => Value::Text(session.database.clone().unwrap_or_default()),
        SessionValue::CurrentUser => Value::Text(session.user.clone()),
        SessionValue::BackendPid => Value::Int(session.connection_id.into()),
        SessionValue::IsInRecovery => Value::Int(0),
        SessionValue::CurrentSetting(name) => {
            Value::Text(setting(&name, session).ok_or_else(|| unrecognized(&name, session))?)
        }
        SessionValue::Int(n) => Value::Int(n.into()),
        SessionValue::Text(s) => Value::Text(s),
    })
}

/// `SHOW` of a setting neither the session nor the shards know: PostgreSQL's own error, unless
/// the session changed its connections in ways the proxy does not follow (`set_config` in a
/// function may have defined it there), where the proxy cannot tell.
fn unrecognized(name: &str, session: &Session) -> Error {
    let message = format!("unrecognized configuration parameter \"{name}\"");
    match session.held.contains_key(&crate::pinning::Held::Session) {
        true => Error::new(
            ErrorKind::Unsupported,
            format!("{message} (or set in a way the proxy does not follow: use current_setting)"),
        ),
        false => Error::new(
            ErrorKind::Shard {
                mysql_errno: None,
                sqlstate: Some("42704".to_owned()),
            },
            message,
        ),
    }
}

fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    let rest = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && rest.starts_with(char::is_whitespace))
        .then_some(rest.trim_start())
}

fn unquote(s: &str) -> &str {
    s.trim_matches(|c| c == '\'' || c == '"')
}

fn syntax(text: &str) -> Error {
    Error::new(ErrorKind::Syntax, format!("syntax error in \"{text}\""))
}

#[cfg(test)]
mod tests;
