//! What differs between MySQL and PostgreSQL above the wire: the session statements each
//! answers itself (settings, session functions), and what a statement does to the transaction
//! around it.

pub(crate) mod mysql;
pub(crate) mod postgres;
mod select_list;
pub(crate) mod transactions;

use keyshard_types::Dialect;

use crate::error::Error;
use crate::reply::Reply;
use crate::session::Session;

/// A session statement of either dialect.
#[derive(Debug)]
pub(crate) enum SessionStatement<'a> {
    MySql(mysql::Statement<'a>),
    Postgres(postgres::Statement<'a>),
}

impl SessionStatement<'_> {
    /// `sql` as a session statement of `dialect`; `None` for everything else.
    pub(crate) fn recognise(sql: &str, dialect: Dialect) -> Option<SessionStatement<'_>> {
        match dialect {
            Dialect::MySql => mysql::recognise(sql).map(SessionStatement::MySql),
            Dialect::Postgres => postgres::recognise(sql).map(SessionStatement::Postgres),
        }
    }

    /// Whether it ends the session as it is, as a pooler's `DISCARD ALL` does.
    pub(crate) fn resets_session(&self) -> bool {
        matches!(
            self,
            SessionStatement::Postgres(postgres::Statement::DiscardAll)
        )
    }

    /// Answers it from `session`, whose logical database is `current` among `databases`, of
    /// which its user may use those `permitted` says.
    pub(crate) fn answer(
        self,
        session: &mut Session,
        databases: &[String],
        permitted: &dyn Fn(&str) -> bool,
        current: &str,
    ) -> Result<Reply, Error> {
        match self {
            SessionStatement::MySql(s) => mysql::answer(s, session, databases, permitted, current),
            SessionStatement::Postgres(s) => postgres::answer(s, session),
        }
    }
}

/// A session statement's text without its trailing `;`, and that text in lower case. Only the
/// statements whose leading keyword may lead one come here (see `Intent::of`): most are INSERTs,
/// turned away before anything is allocated.
fn words_of(sql: &str) -> (&str, String) {
    let text = sql.trim().trim_end_matches(';').trim_end();
    (text, text.to_ascii_lowercase())
}
