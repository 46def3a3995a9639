//! PostgreSQL's `LISTEN` and `UNLISTEN`: a listening session keeps a connection of the default
//! data source (where `NOTIFY` goes) listening on its channels, and the frontend passes each
//! notification on while the session is idle, as PostgreSQL delivers them between
//! transactions. `DISCARD ALL` and disconnecting stop all listening.

use std::collections::BTreeSet;

use keyshard_backend::Column;
use keyshard_types::SqlType;
use keyshard_types::Value;

use crate::engine::Engine;
use crate::error::Error;
use crate::listen_command::Command;
use crate::reply::Reply;
use crate::session::Session;

impl Engine {
    /// Starts or stops listening, at once. Inside a transaction the channels listened on
    /// before it come back if it rolls back (PostgreSQL makes the change at COMMIT instead;
    /// either way a rolled-back transaction changes nothing).
    pub(crate) async fn listen(
        &self,
        session: &mut Session,
        command: Command,
    ) -> Result<Reply, Error> {
        if session.in_transaction() && session.postgres.listening_before.is_none() {
            session.postgres.listening_before = Some(channels(session));
        }
        match command {
            Command::Listen(channel) => self.listener(session).await?.listen(&channel).await?,
            Command::Unlisten(channel) => {
                if let Some(listener) = &mut session.postgres.listener {
                    listener.unlisten(channel.as_deref()).await?;
                    if !listener.is_listening() {
                        session.postgres.listener = None;
                    }
                }
            }
        }
        Ok(Reply::done())
    }

    /// After a transaction: a rollback brings back the channels listened on before it.
    pub(crate) async fn listening_ended(&self, session: &mut Session, committed: bool) {
        let Some(before) = session.postgres.listening_before.take() else {
            return;
        };
        if committed {
            return;
        }
        if let Err(e) = self.listen_only(session, &before).await {
            tracing::warn!("LISTEN: the channels before a rolled-back transaction: {e}");
        }
    }

    /// Makes `session` listen on `channels` and no others (none: it stops listening).
    pub(crate) async fn listen_only(
        &self,
        session: &mut Session,
        channels: &BTreeSet<String>,
    ) -> Result<(), Error> {
        if *channels == self::channels(session) {
            return Ok(());
        }
        if channels.is_empty() {
            session.postgres.listener = None;
            return Ok(());
        }
        self.listener(session).await?.listen_only(channels).await?;
        Ok(())
    }

    /// The session's listening connection, opened on the default data source (where NOTIFY
    /// goes) when it has none.
    async fn listener<'s>(
        &self,
        session: &'s mut Session,
    ) -> Result<&'s mut keyshard_backend::Listener, Error> {
        match &mut session.postgres.listener {
            Some(listener) => Ok(listener),
            listener @ None => {
                let data_source = self.postgres.default_data_source().ok_or_else(|| {
                    Error::unsupported("LISTEN without a data source for unsharded tables")
                })?;
                Ok(listener.insert(self.backend().listener(data_source).await?))
            }
        }
    }
}

/// Whether `sql` is `SELECT pg_listening_channels()` alone (or `SELECT * FROM` it), which the
/// session answers: its channels are on its own listening connection, not a pooled one.
pub(crate) fn is_bare_listening_channels(sql: &str) -> bool {
    let compact: String = sql
        .trim()
        .trim_end_matches(';')
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let function = compact
        .strip_prefix("selectpg_listening_channels()")
        .or_else(|| compact.strip_prefix("select*frompg_listening_channels()"))
        .or_else(|| compact.strip_prefix("selectpg_catalog.pg_listening_channels()"));
    function == Some("")
}

/// `pg_listening_channels()` in a listening session: answered from its channels when `sql`
/// asks for them alone, refused in any other statement (a pooled connection would answer that
/// it listens to nothing). `None` when the session does not listen or `sql` does not ask.
pub(crate) fn listening_channels(session: &Session, sql: &str) -> Option<Result<Reply, Error>> {
    let listener = session.postgres.listener.as_ref()?;
    let asks = sql
        .as_bytes()
        .windows(21)
        .any(|w| w.eq_ignore_ascii_case(b"pg_listening_channels"));
    if !asks {
        return None;
    }
    if !is_bare_listening_channels(sql) {
        return Some(Err(Error::unsupported(
            "pg_listening_channels() in a listening session outside `SELECT              pg_listening_channels()` (the shard connection that would answer is not the one              listening)",
        )));
    }
    Some(Ok(Reply::Rows {
        columns: vec![Column::new("pg_listening_channels", SqlType::Text)],
        rows: listener
            .channels()
            .iter()
            .map(|c| vec![Value::Text(c.clone())])
            .collect(),
    }))
}

/// The channels `session` listens on.
pub(crate) fn channels(session: &Session) -> BTreeSet<String> {
    session
        .postgres
        .listener
        .as_ref()
        .map(|l| l.channels().clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bare_channel_list_is_recognised() {
        for bare in [
            "SELECT pg_listening_channels()",
            "select * from pg_listening_channels();",
            "SELECT pg_catalog.pg_listening_channels ( )",
        ] {
            assert!(is_bare_listening_channels(bare), "{bare}");
        }
        for other in [
            "SELECT count(*) FROM pg_listening_channels()",
            "SELECT pg_listening_channels() AS c",
        ] {
            assert!(!is_bare_listening_channels(other), "{other}");
        }
    }
}
