//! Statements that leave state on the shard connections they run on (see `crate::pinning`):
//! the session is pinned before such a statement runs, and lets its connections go once it
//! holds nothing there.

use std::sync::atomic::Ordering;

use keyshard_types::Dialect;

use super::Engine;
use crate::error::{Error, ErrorKind};
use crate::memory::Reserved;
use crate::sql::Sql;
use keyshard_backend::Column;
use keyshard_types::SqlType;
use keyshard_types::Value;

use crate::pinning::{self, Effect, Held, Released};
use crate::reply::Reply;
use crate::routines;
use crate::session::Session;

impl Engine {
    /// Answers `sql`, for which `reserved` is held of the memory budget, keeping the shard
    /// connections it runs on when it leaves state there.
    pub(super) async fn query_text(
        &self,
        session: &mut Session,
        sql: Sql<'_>,
        reserved: Reserved,
    ) -> Result<Reply, Error> {
        if let Some(reply) = crate::notify::listening_channels(session, sql.text) {
            return reply;
        }
        if routines::changes_routines(sql) {
            let reply = self.answer_text(session, sql, reserved).await;
            self.routines.load(&self.backend, &self.config).await;
            return reply;
        }
        // A statement of a shape whose calls were checked under the routines as they are
        // holds nothing either: the check reads only the text outside the literals.
        let scanned = self.scan(session.dialect, sql);
        let calls = scanned.known.as_ref().map(|(_, calls)| calls);
        let generation = self.routines.names().generation;
        if calls.is_some_and(|calls| calls.load(Ordering::Relaxed) == generation + 1) {
            return self.answer_scanned(session, sql, reserved, scanned).await;
        }
        let routines = self.routines.learn(&self.backend, &self.config, sql).await;
        // Routines read meanwhile may come with other metadata: the shape is looked up again.
        let scanned = match routines.generation == generation {
            true => scanned,
            false => self.scan(session.dialect, sql),
        };
        let Some(effect) = pinning::effect(sql, session.dialect, &routines.routines) else {
            if let Some((_, calls)) = &scanned.known {
                calls.store(routines.generation + 1, Ordering::Relaxed);
            }
            return self.answer_scanned(session, sql, reserved, scanned).await;
        };
        // What a DISCARD lets go of is on the connections the session keeps, if any (inside
        // a transaction, on the one it runs on).
        if let Effect::Releases(Released::AllTables | Released::Sequences) = effect
            && session.dialect == Dialect::Postgres
            && session.transaction.is_none()
        {
            self.on_kept_connections(session, sql.text).await?;
            held(session, effect, false, true);
            return Ok(Reply::done());
        }
        if let Some(reply) = lastval_of_session(session, &effect, sql.text) {
            return Ok(reply);
        }
        let pinned_now = holding(session, &effect)?;
        let reply = self.answer_scanned(session, sql, reserved, scanned).await;
        held(session, effect, pinned_now, reply.is_ok());
        reply
    }

    /// Runs `sql` on each shard connection the session keeps.
    pub(super) async fn on_kept_connections(
        &self,
        session: &Session,
        sql: &str,
    ) -> Result<(), Error> {
        for data_source in session.shard.kept_data_sources() {
            self.backend.execute_on(&data_source, sql).await?;
        }
        Ok(())
    }
}

/// Pins the session's shard connections when `effect` holds state on them, before the
/// statement runs; answers whether they were not pinned before. A statement that reads state
/// the session does not hold is refused.
pub(super) fn holding(session: &Session, effect: &Effect) -> Result<bool, Error> {
    match effect {
        Effect::Holds(_) => Ok(session.shard.pin()),
        Effect::Reads(held) if !session.held.contains_key(held) => Err(Error::new(
            // PostgreSQL's own answer where the session has no value of its own yet.
            match session.dialect {
                Dialect::Postgres => ErrorKind::Shard {
                    mysql_errno: None,
                    sqlstate: Some("55000".to_owned()),
                },
                Dialect::MySql => ErrorKind::Unsupported,
            },
            "currval()/lastval() outside a session that called nextval() or setval(): the \
             shard connection is shared, and would answer with another session's value (use \
             INSERT … RETURNING, or call nextval() first, which keeps this session's \
             connections)",
        )),
        Effect::Sequences(used) => {
            if let Some(name) = used
                .reads
                .iter()
                .find(|name| !session.mysql.sequences_advanced.contains(*name))
            {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "PREVIOUS VALUE FOR {name} in a session that took no value of it with \
                         NEXT VALUE FOR: the shard connection is shared, and could answer with \
                         another session's value (take NEXT VALUE FOR {name} first, which \
                         keeps this session's connections, or use INSERT … RETURNING)"
                    ),
                ));
            }
            Ok(!used.advances.is_empty() && session.shard.pin())
        }
        Effect::Reads(_) | Effect::Releases(_) => Ok(false),
    }
}

/// The most sequences a MariaDB session remembers advancing; reading one more is refused.
const MAX_SEQUENCES_ADVANCED: usize = 1_024;

/// Records what a statement with `effect` now holds (or let go of); a session that holds
/// nothing any more gives its shard connections back (closed, with whatever they held).
pub(super) fn held(session: &mut Session, effect: Effect, pinned_now: bool, ok: bool) {
    // The shards' sequences answer `lastval()` from now on.
    if ok && effect == Effect::Holds(Held::Sequences) {
        session.last_generated = None;
    }
    match effect {
        Effect::Holds(held) if ok => pinning::hold(&mut session.held, held),
        Effect::Holds(_) => {}
        Effect::Releases(released) if ok => {
            pinning::release(&mut session.held, &released);
        }
        Effect::Sequences(used) if ok && !used.advances.is_empty() => {
            for name in used.advances {
                if session.mysql.sequences_advanced.len() < MAX_SEQUENCES_ADVANCED {
                    session.mysql.sequences_advanced.insert(name);
                }
            }
            pinning::hold(&mut session.held, Held::Sequences);
        }
        Effect::Sequences(_) => {}
        Effect::Releases(_) | Effect::Reads(_) => return,
    }
    if session.held.is_empty() && (pinned_now || ok) && session.shard.is_pinned() {
        session.shard.unpin();
    }
}

/// PostgreSQL's `SELECT lastval()` (`sql`, whose `effect` reads sequence values) answered by
/// the session: the key it last generated, when it took no sequence value since.
fn lastval_of_session(session: &Session, effect: &Effect, sql: &str) -> Option<Reply> {
    let key = session.last_generated?;
    if *effect != Effect::Reads(Held::Sequences)
        || session.dialect != Dialect::Postgres
        || !pinning::is_bare_lastval(sql)
    {
        return None;
    }
    let column = Column::new(
        "lastval",
        SqlType::Int {
            bytes: 8,
            unsigned: false,
        },
    );
    Some(Reply::Rows {
        columns: vec![column],
        rows: vec![vec![Value::Int(key)]],
    })
}
