//! PostgreSQL notifications for a session that `LISTEN`s. A shard connection that listens
//! cannot be shared, so each listening session holds one connection of the data source for
//! itself, counted as a pinned one (and so refused when it would be the pool's last), for as
//! long as it listens on any channel. Notifications are read from it only as fast as the
//! session passes them on: the proxy holds none beyond the one being written.

use std::collections::BTreeSet;

use sqlx::postgres::PgListener;

use crate::reuse::Pin;
use crate::{Backend, BackendError, Pool};

/// A notification, as PostgreSQL's NotificationResponse carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The notifying server process.
    pub process_id: i32,
    /// The channel.
    pub channel: String,
    /// The payload.
    pub payload: String,
}

/// A session's connection that listens, with the channels it listens on.
#[derive(Debug)]
pub struct Listener {
    data_source: String,
    listener: PgListener,
    channels: BTreeSet<String>,
    _pin: Pin,
}

impl Backend {
    /// A connection of `data_source` kept to listen on; it listens on nothing yet.
    pub async fn listener(&self, data_source: &str) -> Result<Listener, BackendError> {
        let Pool::Postgres(connections) = self.pool(data_source)? else {
            return Err(BackendError::NotPostgres {
                data_source: data_source.to_owned(),
                statement: "LISTEN",
            });
        };
        let failed = |e| BackendError::from_sqlx(data_source, e);
        let pin = connections.reserve_pin().map_err(failed)?;
        let listener = PgListener::connect_with(connections.pool())
            .await
            .map_err(failed)?;
        Ok(Listener {
            data_source: data_source.to_owned(),
            listener,
            channels: BTreeSet::new(),
            _pin: pin,
        })
    }
}

impl Listener {
    /// Listens on `channel` too (its name as the server keeps it: folded, unquoted).
    pub async fn listen(&mut self, channel: &str) -> Result<(), BackendError> {
        if self.channels.contains(channel) {
            return Ok(());
        }
        self.listener
            .listen(channel)
            .await
            .map_err(|e| BackendError::from_sqlx(&self.data_source, e))?;
        self.channels.insert(channel.to_owned());
        Ok(())
    }

    /// Stops listening on `channel`, or on every channel.
    pub async fn unlisten(&mut self, channel: Option<&str>) -> Result<(), BackendError> {
        let done = match channel {
            Some(channel) if !self.channels.contains(channel) => return Ok(()),
            Some(channel) => self.listener.unlisten(channel).await,
            None => self.listener.unlisten_all().await,
        };
        done.map_err(|e| BackendError::from_sqlx(&self.data_source, e))?;
        match channel {
            Some(channel) => {
                self.channels.remove(channel);
            }
            None => self.channels.clear(),
        }
        Ok(())
    }

    /// Whether it listens on any channel.
    pub fn is_listening(&self) -> bool {
        !self.channels.is_empty()
    }

    /// The channels it listens on.
    pub fn channels(&self) -> &BTreeSet<String> {
        &self.channels
    }

    /// Listens on `channels` and no others.
    pub async fn listen_only(&mut self, channels: &BTreeSet<String>) -> Result<(), BackendError> {
        let dropped: Vec<String> = self.channels.difference(channels).cloned().collect();
        for channel in dropped {
            self.unlisten(Some(&channel)).await?;
        }
        for channel in channels {
            self.listen(channel).await?;
        }
        Ok(())
    }

    /// The next notification. Cancel-safe: a notification is taken only when returned. A
    /// lost connection is opened again and listens on the same channels (what was notified
    /// meanwhile is lost, as for any client that reconnects).
    pub async fn recv(&mut self) -> Result<Notification, BackendError> {
        let notification = self
            .listener
            .recv()
            .await
            .map_err(|e| BackendError::from_sqlx(&self.data_source, e))?;
        Ok(Notification {
            process_id: notification.process_id() as i32,
            channel: notification.channel().to_owned(),
            payload: notification.payload().to_owned(),
        })
    }
}
