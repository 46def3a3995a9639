//! Statements that leave state on the shard connections they run on (see `crate::pinning`):
//! the session is pinned before such a statement runs, and lets its connections go once it
//! holds nothing there.

use super::Engine;
use crate::error::Error;
use crate::memory::Reserved;
use crate::pinning::{self, Effect};
use crate::reply::Reply;
use crate::routines;
use crate::session::Session;

impl Engine {
    /// Answers `sql`, for which `reserved` is held of the memory budget, keeping the shard
    /// connections it runs on when it leaves state there.
    pub(super) async fn query_text(
        &self,
        session: &mut Session,
        sql: &str,
        reserved: Reserved,
    ) -> Result<Reply, Error> {
        if routines::changes_routines(sql) {
            let reply = self.answer_text(session, sql, reserved).await;
            self.routines.load(&self.backend, &self.config).await;
            return reply;
        }
        let Some(effect) = pinning::effect(sql, session.dialect, &self.routines.names()) else {
            return self.answer_text(session, sql, reserved).await;
        };
        let pinned_now = holding(session, &effect);
        let reply = self.answer_text(session, sql, reserved).await;
        held(session, effect, pinned_now, reply.is_ok());
        reply
    }
}

/// Pins the session's shard connections when `effect` holds state on them, before the
/// statement runs; answers whether they were not pinned before.
pub(super) fn holding(session: &Session, effect: &Effect) -> bool {
    matches!(effect, Effect::Holds(_)) && session.shard.pin()
}

/// Records what a statement with `effect` now holds (or let go of); a session that holds
/// nothing any more gives its shard connections back (closed, with whatever they held).
pub(super) fn held(session: &mut Session, effect: Effect, pinned_now: bool, ok: bool) {
    match effect {
        Effect::Holds(held) if ok => pinning::hold(&mut session.held, held),
        Effect::Holds(_) => {}
        Effect::Releases(released) if ok => {
            pinning::release(&mut session.held, &released);
        }
        Effect::Releases(_) => return,
    }
    if session.held.is_empty() && (pinned_now || ok) && session.shard.is_pinned() {
        session.shard.unpin();
    }
}
