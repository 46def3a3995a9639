//! A session's life in the engine: listed among the proxy's sessions, timed out when idle in
//! a transaction, returned to its state at connect, and closed with its open transaction
//! rolled back.

use std::sync::Arc;

use keyshard_backend::Characteristics;

use super::Engine;
use crate::session::{Effect, Session};

impl Engine {
    /// Lists `session` among the proxy's sessions until it ends; `host` is its client's
    /// address, `secret` its PostgreSQL cancel key's.
    pub(crate) fn list(&self, session: &mut Session, host: &str, secret: Option<i32>) {
        session.listed = Some(self.instance.sessions.enter(
            session.connection_id,
            (&session.user, host),
            session.database.as_deref(),
            Arc::clone(&session.shard),
            secret,
        ));
    }

    /// Completes when `session` has been idle inside a transaction for the configured time;
    /// never when it is not in a transaction or no limit is configured.
    pub async fn idle_in_transaction(&self, session: &Session) {
        match self.config.props.idle_in_transaction_timeout {
            Some(limit) if session.in_transaction() => tokio::time::sleep(limit).await,
            _ => std::future::pending().await,
        }
    }

    /// Ends what `session` holds open when its client leaves.
    pub async fn close_session(&self, session: &mut Session) {
        // A cancel that ended the session (KILL CONNECTION) stops no rollback.
        session.shard.statement_started();
        self.roll_back_open(session).await;
        tracing::debug!(
            "{:?} connection {} closed",
            session.dialect,
            session.connection_id
        );
    }

    /// Rolls back an open transaction on every shard it touched.
    pub(super) async fn roll_back_open(&self, session: &mut Session) {
        session.failed = false;
        if let Some(transaction) = session.transaction.take()
            && let Err(e) = self.backend.rollback(transaction).await
        {
            tracing::warn!("connection {}: rollback failed: {e}", session.connection_id);
        }
    }

    /// Returns the session to its state at connect (COM_RESET_CONNECTION, `DISCARD ALL`).
    pub async fn reset_session(&self, session: &mut Session) {
        self.roll_back_open(session).await;
        session.autocommit = true;
        session.last_insert_id = 0;
        session.last_generated = None;
        session.transaction_type = None;
        session.characteristics = Characteristics::default();
        session.next_characteristics = Characteristics::default();
        session.mysql.variables.clear();
        session.sql_statements.clear();
        session.effects.push(Effect::Reset);
        // The shard connections it kept are closed with all they held, and the ones it takes
        // next are brought back to the settings it began with.
        session.held.clear();
        session.mysql.sequences_advanced.clear();
        session.mysql.table_locks_on.clear();
        session.postgres.listener = None;
        session.postgres.listening_before = None;
        session.shard.unpin();
        self.reset_settings(session).await;
    }
}
