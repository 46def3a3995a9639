//! Who the proxy says it is: the version its shards run, so that a client uses the features its
//! databases have. A MariaDB fleet looks like MariaDB to its drivers (which then use RETURNING,
//! and `mariadb+pymysql://` connects); PostgreSQL clients see the shards' major version. Without
//! a shard of a kind to ask, the proxy names a version of its own.

use std::collections::BTreeMap;
use std::time::Duration;

use keyshard_backend::Backend;
use keyshard_config::{Config, DatabaseKind};
use keyshard_types::Value;

/// How long the start waits for a shard's version; a shard that is down is asked nothing.
const ASK_TIMEOUT: Duration = Duration::from_secs(3);

/// The versions both frontends report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    /// `VERSION()` and `@@version` on the MySQL frontend, e.g. `10.11.19-MariaDB-Keyshard`.
    pub(crate) mysql: String,
    /// `server_version` on the PostgreSQL frontend, e.g. `15.19 (Keyshard)`.
    pub(crate) postgres: String,
    /// `server_version_num`, e.g. `150019`.
    pub(crate) postgres_num: String,
    /// Every PostgreSQL setting as a new session on the shards has it (`SHOW` of a setting the
    /// session has not made answers it), by lower-case name.
    pub(crate) postgres_settings: BTreeMap<String, String>,
    /// Every MySQL session variable as a new session on the shards has it, by lower-case name.
    pub(crate) mysql_variables: BTreeMap<String, String>,
}

impl Default for Identity {
    fn default() -> Self {
        Self {
            mysql: "8.0.36-Keyshard".to_owned(),
            postgres: "16.0 (Keyshard)".to_owned(),
            postgres_num: "160000".to_owned(),
            postgres_settings: BTreeMap::new(),
            mysql_variables: BTreeMap::new(),
        }
    }
}

impl Identity {
    /// The identity of the first data source (by name) of each kind, as it answers now.
    pub(crate) async fn of(backend: &Backend, config: &Config) -> Self {
        let mut identity = Self::default();
        if let Some([version]) = ask(backend, config, DatabaseKind::MySql, "SELECT VERSION()").await
        {
            identity.mysql = mysql_version(&version);
        }
        let settings = "SELECT current_setting('server_version'), \
                        current_setting('server_version_num')";
        if let Some([version, num]) = ask(backend, config, DatabaseKind::Postgres, settings).await
            && num.bytes().all(|b| b.is_ascii_digit())
        {
            identity.postgres = format!("{} (Keyshard)", leading_number(&version));
            identity.postgres_num = num;
        }
        identity.postgres_settings = ask_all(
            backend,
            config,
            DatabaseKind::Postgres,
            "SELECT lower(name), current_setting(name) FROM pg_settings",
        )
        .await;
        identity.mysql_variables = ask_all(
            backend,
            config,
            DatabaseKind::MySql,
            "SELECT LOWER(VARIABLE_NAME), COALESCE(VARIABLE_VALUE, '') \
             FROM information_schema.SESSION_VARIABLES",
        )
        .await;
        identity
    }

    /// The version in MySQL's handshake: MariaDB 10 puts `5.5.5-` first, so that clients
    /// written for MySQL 5 do not take 10 for a MySQL version; its drivers strip it.
    /// The server whose executable comments (`/*!40101 … */`) run on the MySQL frontend.
    pub(crate) fn mysql_server(&self) -> crate::mysql::versioned::Server {
        let mut parts = leading_number(&self.mysql)
            .split('.')
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor, patch) = (
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
        );
        crate::mysql::versioned::Server {
            version: major * 10_000 + minor.min(99) * 100 + patch.min(99),
            mariadb: self.mysql.contains("-MariaDB"),
        }
    }

    pub(crate) fn mysql_greeting(&self) -> String {
        if self.mysql.contains("-MariaDB") && !self.mysql.starts_with("11.") {
            format!("5.5.5-{}", self.mysql)
        } else {
            self.mysql.clone()
        }
    }
}

/// `10.11.19-MariaDB-0+deb12u1` → `10.11.19-MariaDB-Keyshard`; `8.0.36` → `8.0.36-Keyshard`.
fn mysql_version(shard: &str) -> String {
    let number = leading_number(shard);
    if shard.to_ascii_lowercase().contains("mariadb") {
        format!("{number}-MariaDB-Keyshard")
    } else {
        format!("{number}-Keyshard")
    }
}

fn leading_number(version: &str) -> &str {
    let end = version
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(version.len());
    &version[..end]
}

/// The text columns of `sql`'s first row on the first data source of `kind`.
async fn ask<const N: usize>(
    backend: &Backend,
    config: &Config,
    kind: DatabaseKind,
    sql: &str,
) -> Option<[String; N]> {
    let (name, _) = config.data_sources.iter().find(|(_, d)| d.kind == kind)?;
    let row = read_texts(backend, name, sql, "version")
        .await?
        .into_iter()
        .next()?;
    row.try_into().ok()
}

/// Name and value pairs `sql` answers on the first data source of `kind`.
async fn ask_all(
    backend: &Backend,
    config: &Config,
    kind: DatabaseKind,
    sql: &str,
) -> BTreeMap<String, String> {
    let Some((name, _)) = config.data_sources.iter().find(|(_, d)| d.kind == kind) else {
        return BTreeMap::new();
    };
    let rows = read_texts(backend, name, sql, "session defaults").await;
    rows.unwrap_or_default()
        .into_iter()
        .filter_map(|row| <[String; 2]>::try_from(row).ok())
        .map(|[name, value]| (name, value))
        .collect()
}

/// `sql`'s rows on `data_source` as text, read at start: `None`, logged as `what` not read,
/// when the data source does not answer in time or a value is not text.
pub(crate) async fn read_texts(
    backend: &Backend,
    data_source: &str,
    sql: &str,
    what: &str,
) -> Option<Vec<Vec<String>>> {
    let outcome =
        match tokio::time::timeout(ASK_TIMEOUT, backend.execute_on(data_source, sql)).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(e)) => {
                tracing::warn!("{what} of {data_source} not read: {e}");
                return None;
            }
            Err(_) => {
                tracing::warn!("{what} of {data_source} not read in {ASK_TIMEOUT:?}");
                return None;
            }
        };
    outcome
        .rows
        .into_iter()
        .map(|row| {
            row.into_iter()
                .map(|v| match v {
                    Value::Text(s) => Some(s),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_versions_become_the_proxy_s() {
        assert_eq!(
            mysql_version("10.11.19-MariaDB-0+deb12u1"),
            "10.11.19-MariaDB-Keyshard"
        );
        assert_eq!(mysql_version("8.0.36"), "8.0.36-Keyshard");
        assert_eq!(leading_number("15.19 (Debian 15.19-0+deb12u1)"), "15.19");
        let mariadb = Identity {
            mysql: "10.11.19-MariaDB-Keyshard".into(),
            ..Identity::default()
        };
        assert_eq!(mariadb.mysql_greeting(), "5.5.5-10.11.19-MariaDB-Keyshard");
        assert_eq!(Identity::default().mysql_greeting(), "8.0.36-Keyshard");
    }
}
