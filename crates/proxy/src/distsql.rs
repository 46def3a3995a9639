//! ShardingSphere's DistSQL statements the proxy answers itself, on both frontends:
//! `SHOW COMPUTE NODES` (the instances holding a worker id, from the coordination repository),
//! `SHOW SHARDING KEY GENERATORS` (the configured generators), and the session's transaction
//! type: `SET DIST VARIABLE transaction_type = 'LOCAL'|'XA'` and
//! `SHOW DIST VARIABLE WHERE NAME = transaction_type` (ShardingSphere 5.0's `SET VARIABLE` /
//! `SHOW VARIABLE transaction_type` too).
//!
//! The rules as configured (RQL, `SHOW SHARDING TABLE RULES` …) are in [`rql`].
//!
//! ShardingSphere 5.0–5.1's read/write splitting hint for the session: `SET
//! READWRITE_SPLITTING HINT SOURCE = write|auto`, `CLEAR READWRITE_SPLITTING HINT` (and `CLEAR
//! HINT`), `SHOW READWRITE_SPLITTING HINT STATUS`: with `write`, every read of the session goes
//! to the primaries.
//!
//! Keyshard's own: `SHOW NEXT KEYS FROM <table or generator> [COUNT n]` hands out `n` keys of
//! a table's (or a named) integer key generator, for an application that needs keys before it
//! inserts (a parent row and its children in one batch).
//!
//! Only these exact statements are recognised: anything longer (`SHOW COMPUTE NODES WHERE …`)
//! is left to go where it went before, rather than answered as if the rest were not there.

mod rql;

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use keyshard_backend::Column;
use keyshard_config::{Config, TransactionType};
use keyshard_coordination::{ComputeNode, Repository};
use keyshard_keygen::{Props, Registry};
use keyshard_types::SqlType;
use keyshard_types::Value;

use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::session::Session;

/// A DistSQL statement the proxy answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DistSql {
    /// `SHOW COMPUTE NODES`.
    ComputeNodes,
    /// `SHOW SHARDING KEY GENERATORS`.
    KeyGenerators,
    /// `SET DIST VARIABLE transaction_type = …`.
    SetTransactionType(TransactionType),
    /// `SHOW DIST VARIABLE WHERE NAME = transaction_type`.
    ShowTransactionType,
    /// `SHOW SESSION STATE`: the settings the session made and the state it holds on its
    /// shard connections.
    SessionState,
    /// An RQL statement about the rules, with the database its `FROM` names.
    Rules(rql::Rql, Option<String>),
    /// `REFRESH TABLE METADATA [table] [FROM STORAGE UNIT ds [SCHEMA s]]`: the tables' columns
    /// and where `!SINGLE`'s tables live are read again (all of them, whatever it names).
    RefreshMetadata,
    /// `SET READWRITE_SPLITTING HINT SOURCE = write` (`Some(true)`) or `= auto`, `CLEAR
    /// [READWRITE_SPLITTING] HINT` (`Some(false)`), `SHOW READWRITE_SPLITTING HINT STATUS`
    /// (`None`).
    ReadwriteHint(Option<bool>),
    /// `SHOW NEXT KEYS FROM <table or generator> [COUNT n]`.
    NextKeys {
        /// A logic table's name (its key generator), else a generator's.
        source: String,
        /// How many keys, as written (checked when answered).
        count: u64,
    },
}

const COMPUTE_NODES: &[&str] = &["show", "compute", "nodes"];
const KEY_GENERATORS: &[&str] = &["show", "sharding", "key", "generators"];
const SESSION_STATE: &[&str] = &["show", "session", "state"];

/// The statement `sql` is: its words case-insensitively, any white space between them, and at
/// most one trailing `;`.
pub(crate) fn parse(sql: &str) -> Option<DistSql> {
    let text = sql.trim_end();
    let text = text.strip_suffix(';').unwrap_or(text);
    if let Some(statement) = transaction_type(text) {
        return Some(statement);
    }
    let matches = |expected: &[&str]| {
        let mut words = text.split_whitespace();
        expected
            .iter()
            .all(|e| words.next().is_some_and(|w| w.eq_ignore_ascii_case(e)))
            && words.next().is_none()
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    if let [refresh, table, metadata, ..] = words.as_slice()
        && [refresh, table, metadata]
            .iter()
            .zip(["refresh", "table", "metadata"])
            .all(|(w, e)| w.eq_ignore_ascii_case(e))
    {
        return Some(DistSql::RefreshMetadata);
    }
    if let [show, rest @ ..] = words.as_slice()
        && show.eq_ignore_ascii_case("show")
    {
        if let Some((statement, database)) = rql::parse(rest) {
            return Some(DistSql::Rules(statement, database));
        }
        if let Some(statement) = next_keys(rest) {
            return Some(statement);
        }
    }
    if let Some(hint) = readwrite_hint(&words) {
        return Some(DistSql::ReadwriteHint(hint));
    }
    if matches(COMPUTE_NODES) {
        Some(DistSql::ComputeNodes)
    } else if matches(KEY_GENERATORS) {
        Some(DistSql::KeyGenerators)
    } else if matches(SESSION_STATE) {
        Some(DistSql::SessionState)
    } else {
        None
    }
}

/// The read/write splitting hint statements (see [`DistSql::ReadwriteHint`]).
fn readwrite_hint(words: &[&str]) -> Option<Option<bool>> {
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
    match lower.as_slice() {
        ["clear", "hint"] | ["clear", "readwrite_splitting", "hint"] => Some(Some(false)),
        ["show", "readwrite_splitting", "hint", "status"] => Some(None),
        ["set", "readwrite_splitting", "hint", rest @ ..] => {
            let assignment = rest.concat();
            match assignment.strip_prefix("source=")? {
                "write" => Some(Some(true)),
                "auto" => Some(Some(false)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `NEXT KEYS FROM <name> [COUNT n]`, after `SHOW`.
fn next_keys(words: &[&str]) -> Option<DistSql> {
    let is = |word: &&str, expected: &str| word.eq_ignore_ascii_case(expected);
    let (source, count) = match words {
        [next, keys, from, source] if is(next, "next") && is(keys, "keys") && is(from, "from") => {
            (source, "1")
        }
        [next, keys, from, source, count_word, count]
            if is(next, "next")
                && is(keys, "keys")
                && is(from, "from")
                && is(count_word, "count") =>
        {
            (source, *count)
        }
        _ => return None,
    };
    let source = source.trim_matches(|c| c == '`' || c == '"');
    Some(DistSql::NextKeys {
        source: source.to_owned(),
        count: count.parse().ok()?,
    })
}

/// `[SET|SHOW] [DIST] VARIABLE …` about `transaction_type`.
fn transaction_type(text: &str) -> Option<DistSql> {
    let (verb, rest) = text.split_once(char::is_whitespace)?;
    let rest = rest.trim_start();
    let rest = match rest.split_once(char::is_whitespace) {
        Some((dist, rest)) if dist.eq_ignore_ascii_case("dist") => rest.trim_start(),
        _ => rest,
    };
    let (variable, rest) = rest.split_once(char::is_whitespace)?;
    if !variable.eq_ignore_ascii_case("variable") {
        return None;
    }
    let unquote = |s: &str| s.trim().trim_matches(|c| c == '\'' || c == '"').to_owned();
    if verb.eq_ignore_ascii_case("set") {
        let (name, value) = rest.split_once('=')?;
        if !unquote(name).eq_ignore_ascii_case("transaction_type") {
            return None;
        }
        return match unquote(value).to_ascii_uppercase().as_str() {
            "LOCAL" => Some(DistSql::SetTransactionType(TransactionType::Local)),
            "XA" => Some(DistSql::SetTransactionType(TransactionType::Xa)),
            _ => None,
        };
    }
    if !verb.eq_ignore_ascii_case("show") {
        return None;
    }
    let name = match rest.split_once('=') {
        Some((condition, name)) => {
            let words: Vec<&str> = condition.split_whitespace().collect();
            let is_where_name = matches!(words.as_slice(), [w, n]
                if w.eq_ignore_ascii_case("where") && n.eq_ignore_ascii_case("name"));
            is_where_name.then(|| unquote(name))?
        }
        None => unquote(rest),
    };
    name.eq_ignore_ascii_case("transaction_type")
        .then_some(DistSql::ShowTransactionType)
}

const BIGINT: SqlType = SqlType::Int {
    bytes: 8,
    unsigned: false,
};

/// The result columns of `statement`, as its answer has them: known before it runs, so the
/// frontends describe a prepared one (COM_STMT_PREPARE's column definitions, PostgreSQL's
/// RowDescription) and clients that read columns by name from that description find them.
pub(crate) fn columns(statement: DistSql) -> Vec<Column> {
    let spec: &[(&str, SqlType)] = match statement {
        DistSql::Rules(rules, _) => {
            return rql::columns(&rules)
                .iter()
                .map(|name| Column::new(*name, SqlType::VarChar))
                .collect();
        }
        DistSql::ComputeNodes => &[
            ("instance_id", SqlType::VarChar),
            ("worker_id", BIGINT),
            ("epoch", BIGINT),
            ("lease_expires_at", SqlType::VarChar),
        ],
        DistSql::KeyGenerators => &[
            ("name", SqlType::VarChar),
            ("type", SqlType::VarChar),
            ("props", SqlType::VarChar),
        ],
        DistSql::ShowTransactionType => &[
            ("variable_name", SqlType::VarChar),
            ("variable_value", SqlType::VarChar),
        ],
        DistSql::SetTransactionType(_) | DistSql::RefreshMetadata => &[],
        DistSql::SessionState => &[
            ("kind", SqlType::VarChar),
            ("name", SqlType::VarChar),
            ("value", SqlType::VarChar),
        ],
        DistSql::NextKeys { .. } => &[("key", BIGINT)],
        DistSql::ReadwriteHint(Some(_)) => &[],
        DistSql::ReadwriteHint(None) => &[("source", SqlType::VarChar)],
    };
    spec.iter()
        .map(|(name, ty)| Column::new(*name, *ty))
        .collect()
}

/// Answers `statement`. `timeout` bounds the repository call: a repository that does not
/// answer must not hang the client's connection. The transaction type statements read and set
/// `session`'s; XA can be chosen only where the configuration enabled it (`configured`).
pub(crate) async fn answer(
    statement: DistSql,
    session: &mut Session,
    config: &Config,
    single_tables: &[(String, String)],
    replicas: &[keyshard_backend::ReplicaStatus],
    repository: Option<&Arc<dyn Repository>>,
    timeout: Duration,
) -> Result<Reply, Error> {
    let configured = config.transaction_type;
    let generators = &config.key_generators;
    let rows = match &statement {
        // The engine answers it (it reads the data sources).
        DistSql::RefreshMetadata => return Ok(Reply::done()),
        DistSql::Rules(rules, database) => {
            if let Some(database) = database
                && !database.eq_ignore_ascii_case(&config.database_name)
            {
                return Err(Error::new(
                    ErrorKind::UnknownDatabase,
                    format!("Unknown database '{database}'"),
                ));
            }
            rql::values(rql::rows(rules, config, single_tables, replicas))
        }
        DistSql::ReadwriteHint(Some(write)) => {
            session.shard.set_primary_only(*write);
            return Ok(Reply::done());
        }
        DistSql::ReadwriteHint(None) => {
            let source = match session.shard.primary_only() {
                true => "write",
                false => "auto",
            };
            vec![vec![Value::Text(source.into())]]
        }
        DistSql::SetTransactionType(chosen) => {
            if session.in_transaction() {
                return Err(Error::new(
                    ErrorKind::Transaction,
                    "transaction_type cannot change inside a transaction",
                ));
            }
            if *chosen == TransactionType::Xa && configured != TransactionType::Xa {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    "XA is not enabled on this instance: configure `!TRANSACTION defaultType: \
                     XA` (sessions can then choose LOCAL)",
                ));
            }
            session.transaction_type = Some(*chosen);
            return Ok(Reply::Ok {
                affected_rows: 0,
                last_insert_id: 0,
            });
        }
        DistSql::ShowTransactionType => {
            let name = match session.transaction_type.unwrap_or(configured) {
                TransactionType::Local => "LOCAL",
                TransactionType::Xa => "XA",
            };
            vec![vec![
                Value::Text("transaction_type".to_owned()),
                Value::Text(name.to_owned()),
            ]]
        }
        DistSql::ComputeNodes => match repository {
            Some(repository) => compute_nodes(repository.as_ref(), timeout)
                .await?
                .iter()
                .map(compute_node_row)
                .collect(),
            // No generator uses a repository (UUID keys only): no instance holds a worker id.
            None => Vec::new(),
        },
        DistSql::KeyGenerators => key_generator_rows(generators),
        DistSql::SessionState => session_state_rows(session),
        DistSql::NextKeys { source, count } => next_key_rows(config, source, *count)?,
    };
    Ok(Reply::Rows {
        columns: columns(statement),
        rows,
    })
}

/// The most keys one statement hands out: SNOWFLAKE's block (one millisecond's sequence).
const MAX_KEYS: u64 = 4096;

/// `count` keys of `source`'s generator, one row each.
fn next_key_rows(config: &Config, source: &str, count: u64) -> Result<Vec<Vec<Value>>, Error> {
    let table = config
        .sharding
        .tables
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(source))
        .map(|(_, table)| table);
    let generator = match table {
        Some(table) => match &table.key_generate {
            Some(key) => Some((key.generator_name.as_str(), key.generator.clone())),
            None => {
                return Err(Error::new(
                    ErrorKind::InvalidValue,
                    format!("table '{source}' has no keyGenerateStrategy: no keys to hand out"),
                ));
            }
        },
        None => config
            .key_generators
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(source))
            .map(|(name, configured)| (name, configured.built.generator())),
    };
    let Some((name, generator)) = generator else {
        return Err(Error::new(
            ErrorKind::UnknownTable,
            format!("'{source}' is neither a sharded table nor a key generator"),
        ));
    };
    if generator.type_name() == "UUID" {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "key generator '{name}' makes UUIDs, which an application makes as well as the \
                 proxy: SHOW NEXT KEYS hands out integer keys"
            ),
        ));
    }
    if !(1..=MAX_KEYS).contains(&count) {
        return Err(Error::new(
            ErrorKind::InvalidValue,
            format!("SHOW NEXT KEYS hands out 1 to {MAX_KEYS} keys at a time, not {count}"),
        ));
    }
    let mut keys = Vec::new();
    // `count` ≤ 4096 fits in usize everywhere.
    generator
        .next_keys(count as usize, &mut keys)
        .map_err(|e| Error::from(keyshard_router::RouteError::from(e)))?;
    Ok(keys
        .into_iter()
        .map(|key| vec![key.as_i64().map_or(Value::Null, Value::Int)])
        .collect())
}

async fn compute_nodes(
    repository: &dyn Repository,
    timeout: Duration,
) -> Result<Vec<ComputeNode>, Error> {
    match tokio::time::timeout(timeout, repository.compute_nodes()).await {
        Ok(Ok(nodes)) => Ok(nodes),
        Ok(Err(e)) => Err(repository_error(e)),
        Err(_) => Err(repository_error(format!(
            "{} did not answer within {timeout:?}",
            repository.describe()
        ))),
    }
}

fn repository_error(detail: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::Internal,
        format!("coordination repository: {detail}"),
    )
}

fn compute_node_row(node: &ComputeNode) -> Vec<Value> {
    vec![
        Value::Text(node.instance_id.clone()),
        Value::Int(i64::from(node.worker_id)),
        // Epochs count claims: one beyond i64 is not a value any repository reaches.
        Value::Int(i64::try_from(node.epoch).unwrap_or(i64::MAX)),
        node.expires_at_millis
            .and_then(rfc3339_millis)
            .map_or(Value::Null, Value::Text),
    ]
}

/// `millis` since the Unix epoch as RFC 3339 UTC text with milliseconds; `None` outside what
/// RFC 3339 writes (before 1970 or after 9999), which no repository's clock gives.
fn rfc3339_millis(millis: i64) -> Option<String> {
    use std::fmt::Write;

    let time = UNIX_EPOCH.checked_add(Duration::from_millis(u64::try_from(millis).ok()?))?;
    let mut text = String::new();
    // humantime reports a time past year 9999 as a formatting error rather than panicking.
    write!(text, "{}", humantime::format_rfc3339_millis(time)).ok()?;
    Some(text)
}

/// One row per setting the session made (`setting`, its name, its value as the database
/// reported it), per state it holds on its shard connections (`held`), and per data source it
/// keeps a connection of (`pinned`).
fn session_state_rows(session: &Session) -> Vec<Vec<Value>> {
    let row = |kind: &str, name: String, value: String| {
        vec![
            Value::Text(kind.to_owned()),
            Value::Text(name),
            Value::Text(value),
        ]
    };
    let settings = session
        .reported
        .iter()
        .map(|(name, value)| row("setting", name.clone(), value.clone()));
    let held = session.held.keys().map(|held| {
        let (name, value) = held.describe();
        row("held", name.to_owned(), value)
    });
    let pinned = session
        .shard
        .kept_data_sources()
        .into_iter()
        .map(|data_source| row("pinned", data_source, "kept".to_owned()));
    settings.chain(held).chain(pinned).collect()
}

fn key_generator_rows(generators: &Registry) -> Vec<Vec<Value>> {
    generators
        .iter()
        .map(|(name, configured)| {
            vec![
                Value::Text(name.to_owned()),
                Value::Text(configured.type_name.clone()),
                Value::Text(render_props(&configured.props)),
            ]
        })
        .collect()
}

/// Properties as ShardingSphere 5.4+ shows them: a JSON object in key order (`Props` is
/// sorted), numbers and booleans bare as YAML reads them, empty for none. Algorithm and
/// generator properties hold no secrets, so all of them are shown.
pub(crate) fn render_props(props: &Props) -> String {
    if props.is_empty() {
        return String::new();
    }
    let entries: serde_json::Map<String, serde_json::Value> = props
        .iter()
        .map(|(k, v)| {
            let value = match (v.parse::<i64>(), v.as_str()) {
                (Ok(n), _) => n.into(),
                (_, "true") => true.into(),
                (_, "false") => false.into(),
                _ => v.as_str().into(),
            };
            (k.clone(), value)
        })
        .collect();
    serde_json::Value::Object(entries).to_string()
}

#[cfg(test)]
mod tests;
