//! Sessions: how to reach ZooKeeper and how a session is opened.

use std::fmt;
use std::time::Duration;

use zookeeper_client as zk;

use crate::CoordinationError;
#[cfg(doc)]
use crate::Repository;

/// How to reach ZooKeeper, as ShardingSphere's `mode.repository.props` say it.
#[derive(Clone, PartialEq, Eq)]
pub struct ZooKeeperSettings {
    /// Comma-separated `host:port` list (`127.0.0.1:2181,host2:2181`), ShardingSphere's
    /// `server-lists`.
    pub server_lists: String,
    /// The root node everything lives under (without slashes), ShardingSphere's `namespace`.
    pub namespace: String,
    /// The session timeout asked of the server (ShardingSphere's `timeToLiveSeconds`). The
    /// server may grant another one (clamped to its `minSessionTimeout`..`maxSessionTimeout`);
    /// [`Repository::time_to_live`] reports what it granted.
    pub session_timeout: Duration,
    /// Bound on every single request (`operationTimeoutMilliseconds`).
    pub operation_timeout: Duration,
    /// Pause between attempts to establish a session (`retryIntervalMilliseconds`).
    pub retry_interval: Duration,
    /// Attempts to establish a session after the first one fails (`maxRetries`).
    pub max_retries: u32,
    /// `user:password` for ZooKeeper's digest scheme (`digest`); nodes are then created
    /// readable and writable by that user only, as ShardingSphere does.
    pub digest: Option<String>,
}

impl ZooKeeperSettings {
    /// Settings for `server_lists` and `namespace`, everything else at its default.
    pub fn new(server_lists: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self {
            server_lists: server_lists.into(),
            namespace: namespace.into(),
            ..Self::default()
        }
    }
}

impl Default for ZooKeeperSettings {
    /// `127.0.0.1:2181`, namespace `keyshard`, 60 s sessions, 3 s per request, 3 retries
    /// 500 ms apart, no digest.
    fn default() -> Self {
        Self {
            server_lists: "127.0.0.1:2181".to_owned(),
            namespace: "keyshard".to_owned(),
            session_timeout: Duration::from_secs(60),
            operation_timeout: Duration::from_secs(3),
            retry_interval: Duration::from_millis(500),
            max_retries: 3,
            digest: None,
        }
    }
}

// By hand so that the digest's password never reaches a log.
impl fmt::Debug for ZooKeeperSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZooKeeperSettings")
            .field("server_lists", &self.server_lists)
            .field("namespace", &self.namespace)
            .field("session_timeout", &self.session_timeout)
            .field("operation_timeout", &self.operation_timeout)
            .field("retry_interval", &self.retry_interval)
            .field("max_retries", &self.max_retries)
            .field("digest", &self.digest.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Establishes a session, retrying as `settings` say.
pub(super) async fn open_session(
    settings: &ZooKeeperSettings,
) -> Result<zk::Client, CoordinationError> {
    let mut attempt = 0;
    loop {
        match connect_once(settings).await {
            Ok(client) => return Ok(client),
            Err(err) if attempt >= settings.max_retries => return Err(err),
            Err(err) => {
                attempt += 1;
                tracing::warn!(%err, attempt, "could not open a ZooKeeper session; retrying");
                tokio::time::sleep(settings.retry_interval).await;
            }
        }
    }
}

async fn connect_once(settings: &ZooKeeperSettings) -> Result<zk::Client, CoordinationError> {
    let mut connector = zk::Client::connector()
        .with_session_timeout(settings.session_timeout)
        // Fail when every server refused rather than cycle until the session timeout: the
        // retries above are the place to wait.
        .with_fail_eagerly();
    if let Some(digest) = &settings.digest {
        connector = connector.with_auth("digest", digest.as_bytes());
    }
    let limit = settings.operation_timeout;
    tokio::time::timeout(limit, connector.connect(&settings.server_lists))
        .await
        .map_err(|_| CoordinationError::Timeout(limit))?
        .map_err(|err| {
            CoordinationError::ZooKeeper(format!("connecting to {}: {err}", settings.server_lists))
        })
}

/// A session in one of these states will never work again.
pub(super) fn session_ended(state: zk::SessionState) -> bool {
    matches!(
        state,
        zk::SessionState::Expired | zk::SessionState::Closed | zk::SessionState::AuthFailed
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_debug_hides_the_password() {
        let settings = ZooKeeperSettings {
            digest: Some("user:secret".to_owned()),
            ..ZooKeeperSettings::default()
        };
        assert!(!format!("{settings:?}").contains("secret"));
    }
}
