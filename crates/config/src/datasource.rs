//! Data sources: URL normalisation (JDBC and sqlx spellings), credentials and pool settings.

use std::fmt;
use std::path::Path;

pub use keyshard_types::DatabaseKind;

/// Connection pool settings, with ShardingSphere's (HikariCP's) names; `None` leaves the
/// backend's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolSettings {
    /// `maxPoolSize`.
    pub max_size: Option<u32>,
    /// `minPoolSize`.
    pub min_size: Option<u32>,
    /// `connectionTimeoutMilliseconds`.
    pub connection_timeout_ms: Option<u64>,
    /// `idleTimeoutMilliseconds`.
    pub idle_timeout_ms: Option<u64>,
    /// `maxLifetimeMilliseconds`.
    pub max_lifetime_ms: Option<u64>,
    /// `sessionState: strict` (Keyshard's own): a statement that would pin one of its
    /// connections to a session (temporary tables, locks, `set_config` …) is refused instead.
    pub strict_session_state: bool,
}

/// One configured database.
#[derive(Clone, PartialEq, Eq)]
pub struct DataSource {
    /// The name rules refer to (`ds_0`).
    pub name: String,
    /// Which database it is.
    pub kind: DatabaseKind,
    /// A URL sqlx accepts: scheme normalised to `mysql://`, `postgres://` or `sqlite://`,
    /// credentials merged in, SQLite paths made relative to the configuration file's directory.
    pub url: String,
    /// Pool settings.
    pub pool: PoolSettings,
}

impl DataSource {
    /// The URL with any password replaced by `***`, for logs and messages.
    pub fn redacted_url(&self) -> String {
        redact(&self.url)
    }
}

// Hand-written so a logged `{:?}` of the configuration never prints a password.
impl fmt::Debug for DataSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataSource")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("url", &self.redacted_url())
            .field("pool", &self.pool)
            .finish()
    }
}

/// Why a data source URL is unusable. URLs in messages have their password redacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataSourceError {
    /// Neither `url` nor `jdbcUrl` is set.
    #[error("missing 'url' (or 'jdbcUrl')")]
    MissingUrl,
    /// Both `url` and `jdbcUrl` are set.
    #[error("set either 'url' or 'jdbcUrl', not both")]
    BothUrls,
    /// A scheme other than MySQL, MariaDB, PostgreSQL or SQLite.
    #[error(
        "unsupported database URL '{0}' (supported schemes: mysql://, mariadb://, postgres://, \
         postgresql://, sqlite:, each optionally prefixed with jdbc:)"
    )]
    UnsupportedScheme(String),
    /// A server URL without `//host`.
    #[error(
        "malformed database URL '{0}': expected <scheme>://[user[:password]@]host[:port]/database"
    )]
    Malformed(String),
    /// A SQLite URL without a file path.
    #[error(
        "SQLite URL '{0}' names no database file (use sqlite::memory: for an in-memory database)"
    )]
    MissingSqlitePath(String),
    /// Credentials configured for SQLite, which has none.
    #[error("SQLite data sources take no username or password")]
    SqliteCredentials,
}

/// Normalises `raw` into the scheme and sqlx URL, merging `username` and `password`
/// (percent-encoded) into server URLs and resolving relative SQLite paths against `base_dir`.
pub(crate) fn normalize_url(
    raw: &str,
    username: Option<&str>,
    password: Option<&str>,
    base_dir: &Path,
) -> Result<(DatabaseKind, String), DataSourceError> {
    let trimmed = raw.trim();
    let url = strip_prefix_ignore_case(trimmed, "jdbc:").unwrap_or(trimmed);
    let unsupported = || DataSourceError::UnsupportedScheme(redact(raw));
    let (scheme, rest) = url.split_once(':').ok_or_else(unsupported)?;
    let (kind, canonical) = match scheme.to_ascii_lowercase().as_str() {
        "mysql" | "mariadb" => (DatabaseKind::MySql, "mysql"),
        "postgres" | "postgresql" => (DatabaseKind::Postgres, "postgres"),
        "sqlite" => {
            if username.is_some() || password.is_some() {
                return Err(DataSourceError::SqliteCredentials);
            }
            return sqlite_url(rest, raw, base_dir).map(|url| (DatabaseKind::Sqlite, url));
        }
        _ => return Err(unsupported()),
    };
    let rest = rest
        .strip_prefix("//")
        .ok_or_else(|| DataSourceError::Malformed(redact(raw)))?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((userinfo, host)) => (Some(userinfo), host),
        None => (None, authority),
    };
    if host.is_empty() {
        return Err(DataSourceError::Malformed(redact(raw)));
    }
    let (url_user, url_password) = match userinfo {
        Some(info) => match info.split_once(':') {
            Some((user, pass)) => (Some(user.to_owned()), Some(pass.to_owned())),
            None => (Some(info.to_owned()), None),
        },
        None => (None, None),
    };
    let user = username.map(percent_encode).or(url_user);
    let password = password.map(percent_encode).or(url_password);
    let mut out = format!("{canonical}://");
    if user.is_some() || password.is_some() {
        out.push_str(user.as_deref().unwrap_or_default());
        if let Some(password) = password {
            out.push(':');
            out.push_str(&password);
        }
        out.push('@');
    }
    out.push_str(host);
    out.push_str(tail);
    Ok((kind, out))
}

fn sqlite_url(rest: &str, raw: &str, base_dir: &Path) -> Result<String, DataSourceError> {
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    let path = match path {
        "" => return Err(DataSourceError::MissingSqlitePath(raw.trim().to_owned())),
        ":memory:" => return Ok(format!("sqlite::memory:{}", query_suffix(query))),
        // A server process's working directory is arbitrary; the file's directory is not.
        relative if Path::new(relative).is_relative() => {
            base_dir.join(relative).to_string_lossy().into_owned()
        }
        absolute => absolute.to_owned(),
    };
    Ok(format!("sqlite://{path}{}", query_suffix(query)))
}

fn query_suffix(query: Option<&str>) -> String {
    query.map(|q| format!("?{q}")).unwrap_or_default()
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Percent-encodes everything but RFC 3986 unreserved characters, so any password survives
/// the trip through a URL.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `url` with the password of its userinfo replaced by `***`.
pub(crate) fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let after = &url[scheme_end + 3..];
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let Some((userinfo, _)) = after[..authority_end].rsplit_once('@') else {
        return url.to_owned();
    };
    let Some((user, _password)) = userinfo.split_once(':') else {
        return url.to_owned();
    };
    let host_and_tail = &after[userinfo.len()..];
    format!("{}{user}:***{host_and_tail}", &url[..scheme_end + 3])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(raw: &str) -> Result<(DatabaseKind, String), DataSourceError> {
        normalize_url(raw, None, None, Path::new("/etc/keyshard"))
    }

    #[test]
    fn jdbc_urls_are_normalised() {
        assert_eq!(
            norm("jdbc:mysql://127.0.0.1:3306/shop?useSSL=false").unwrap(),
            (
                DatabaseKind::MySql,
                "mysql://127.0.0.1:3306/shop?useSSL=false".into()
            )
        );
        assert_eq!(
            norm("jdbc:postgresql://db:5432/shop").unwrap(),
            (DatabaseKind::Postgres, "postgres://db:5432/shop".into())
        );
        assert_eq!(
            norm("mariadb://root@h/db").unwrap(),
            (DatabaseKind::MySql, "mysql://root@h/db".into())
        );
    }

    #[test]
    fn credentials_are_merged_and_encoded() {
        let (_, url) = normalize_url(
            "mysql://old:pw@h:3306/db",
            Some("app"),
            Some("p@ss:/w rd"),
            Path::new("."),
        )
        .unwrap();
        assert_eq!(url, "mysql://app:p%40ss%3A%2Fw%20rd@h:3306/db");
        let (_, url) = normalize_url("postgres://h/db", Some("app"), None, Path::new(".")).unwrap();
        assert_eq!(url, "postgres://app@h/db");
    }

    #[test]
    fn sqlite_paths_resolve_against_the_config_dir() {
        assert_eq!(
            norm("sqlite://data/ds_0.db").unwrap().1,
            "sqlite:///etc/keyshard/data/ds_0.db"
        );
        assert_eq!(
            norm("sqlite:data/ds_0.db?mode=rwc").unwrap().1,
            "sqlite:///etc/keyshard/data/ds_0.db?mode=rwc"
        );
        assert_eq!(
            norm("sqlite:///var/ds.db").unwrap().1,
            "sqlite:///var/ds.db"
        );
        assert_eq!(norm("sqlite::memory:").unwrap().1, "sqlite::memory:");
        assert_eq!(
            norm("jdbc:sqlite::memory:").unwrap(),
            (DatabaseKind::Sqlite, "sqlite::memory:".into())
        );
    }

    #[test]
    fn bad_urls_are_named_with_password_redacted() {
        assert_eq!(
            norm("jdbc:h2:mem:db").unwrap_err(),
            DataSourceError::UnsupportedScheme("jdbc:h2:mem:db".into())
        );
        assert_eq!(
            norm("oracle://u:secret@h/db").unwrap_err(),
            DataSourceError::UnsupportedScheme("oracle://u:***@h/db".into())
        );
        assert_eq!(
            norm("mysql:h/db").unwrap_err(),
            DataSourceError::Malformed("mysql:h/db".into())
        );
        assert_eq!(
            norm("mysql:///db").unwrap_err(),
            DataSourceError::Malformed("mysql:///db".into())
        );
        assert!(matches!(
            norm("sqlite://"),
            Err(DataSourceError::MissingSqlitePath(_))
        ));
        assert_eq!(
            normalize_url("sqlite::memory:", Some("u"), None, Path::new(".")).unwrap_err(),
            DataSourceError::SqliteCredentials
        );
    }

    #[test]
    fn debug_hides_passwords() {
        let ds = DataSource {
            name: "ds".into(),
            kind: DatabaseKind::MySql,
            url: "mysql://root:hunter2@h/db".into(),
            pool: PoolSettings::default(),
        };
        let debug = format!("{ds:?}");
        assert!(
            debug.contains("mysql://root:***@h/db") && !debug.contains("hunter2"),
            "{debug}"
        );
    }
}
