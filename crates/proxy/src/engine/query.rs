//! A statement sent as text: held within the memory budget, then answered by what it asks
//! ([`Intent`]): through its shape when known, by the engine or the session when it is not
//! routed, else planned and run on the shards.

use std::time::Instant;

use keyshard_router::{Leading, Shape};
use keyshard_types::Dialect;

use super::Engine;
use crate::error::Error;
use crate::intent::Intent;
use crate::memory::{self, Reserved};
use crate::metrics::CountedAs;
use crate::reflection;
use crate::reply::Reply;
use crate::session::Session;
use crate::shapes::{CallsChecked, Known};
use crate::sql::Sql;

/// A statement's shape, when it has one, and what is known of it (see `shapes`).
pub(super) struct Scanned {
    pub(super) shape: Option<Shape>,
    pub(super) known: Option<(Known, CallsChecked)>,
}

impl Engine {
    /// Answers one statement sent as text, within the memory budget.
    pub async fn query(&self, session: &mut Session, sql: Sql<'_>) -> Result<Reply, Error> {
        let started = Instant::now();
        if let Some(listed) = &session.listed {
            listed.running(sql.text, session.database.as_deref());
        }
        // A load waits for its data only until the statement that named it is answered.
        session.copy_in = None;
        session.copy_out = None;
        let reply = async {
            session.refuse_when_failed(Some(sql))?;
            // A long INSERT may be a bulk load that binds by its shape: it reserves in steps.
            let (_held, reserved) = if sql.text.len() > memory::SHORT
                && matches!(sql.leading, Leading::Insert | Leading::Replace)
            {
                let scan = memory::scan_estimate(sql.text);
                (
                    self.instance.memory.reserve_beside(0, scan).await?,
                    Reserved::Scan(scan),
                )
            } else {
                let held = self.instance.memory.reserve(sql.text, 0).await?;
                (held, Reserved::Whole)
            };
            self.query_text(session, sql, reserved).await
        }
        .await;
        self.finished(session, CountedAs::of(sql.leading), started, &reply);
        reply
    }

    /// Answers `statement`, for which `reserved` is held of the memory budget.
    pub(super) async fn answer_text(
        &self,
        session: &mut Session,
        statement: Sql<'_>,
        reserved: Reserved,
    ) -> Result<Reply, Error> {
        let scanned = self.scan(session.dialect, statement);
        self.answer_scanned(session, statement, reserved, scanned)
            .await
    }

    /// `statement`'s shape, and what is known of it.
    pub(super) fn scan(&self, dialect: Dialect, statement: Sql<'_>) -> Scanned {
        let shape = Shape::with_leading(statement.text, statement.leading, dialect);
        let known = shape.as_ref().and_then(|shape| {
            self.shapes
                .get(dialect, shape, self.backend.metadata().version())
        });
        Scanned { shape, known }
    }

    /// [`Engine::answer_text`] of a statement scanned already.
    pub(super) async fn answer_scanned(
        &self,
        session: &mut Session,
        statement: Sql<'_>,
        reserved: Reserved,
        scanned: Scanned,
    ) -> Result<Reply, Error> {
        let (dialect, leading, sql) = (session.dialect, statement.leading, statement.text);
        let metadata_version = self.backend.metadata().version();
        let Scanned { shape, known } = scanned;
        let known = known.map(|(known, _)| known);
        // Only routed statements are learned (see `shapes`): one of a known shape is routed.
        if let (Some(shape), Some(known)) = (&shape, &known) {
            match known {
                Known::Insert(shaped) => {
                    let _binding = self
                        .instance
                        .memory
                        .reserve_step(reserved, |_| shaped.insert.binding_bytes(sql, shape))
                        .await?;
                    return self.insert_by_shape(session, sql, shape, shaped).await;
                }
                Known::Query(query) if reserved == Reserved::Whole => {
                    let plan = query.bind_shape(sql, shape)?;
                    return self.reply_or_gather(session, plan, query, sql, &[]).await;
                }
                Known::Query(_) | Known::Parse | Known::Seen => {}
            }
        }
        // A multi-row INSERT whose rows fold into one is learned from its first row at once:
        // one row parsed instead of every row's tokens and tree (see `shapes`).
        if let (Some(shape), None | Some(Known::Seen)) = (&shape, &known)
            && shape.folded_rows().is_some()
            && let Some(shaped) = self
                .learn_from_first_row(session, sql, shape, metadata_version, reserved)
                .await?
        {
            let _binding = self
                .instance
                .memory
                .reserve_step(reserved, |_| shaped.insert.binding_bytes(sql, shape))
                .await?;
            return self.insert_by_shape(session, sql, shape, &shaped).await;
        }
        // Parsed whole from here on: a statement that reserved only its shape's scan holds its
        // whole estimate now, as any other statement does.
        let _parsed = self
            .instance
            .memory
            .reserve_step(reserved, |held| memory::estimate(sql).saturating_sub(held))
            .await?;
        let routed = match Intent::of(statement, dialect) {
            Intent::Control(control) => return self.control(session, control).await,
            Intent::DistSql(statement) => return self.distsql(session, statement).await,
            Intent::SqlPrepare(command) => return self.sql_prepare(session, command).await,
            Intent::SetUserVariables(assignments) => {
                return self.set_user_variables(session, &assignments).await;
            }
            Intent::ProcessList { full } => return Ok(self.instance.sessions.processlist(full)),
            Intent::Kill(kill) => {
                let kill = kill?;
                return kill.answer(self.kill(kill.id, kill.end).await);
            }
            Intent::Status { global, like } => {
                let session = (!global).then_some(&*session);
                return Ok(self.status(like.as_deref(), session));
            }
            // The first that fails ends them; those before it hold (MySQL makes none).
            Intent::SetEach(assignments) => {
                for assignment in assignments {
                    let set = format!("SET {assignment}");
                    let set = Sql {
                        text: &set,
                        leading: Leading::Set,
                    };
                    Box::pin(self.answer_text(session, set, Reserved::Whole)).await?;
                }
                return Ok(Reply::done());
            }
            Intent::Settings(set) => {
                // mysqldump's `SET SQL_MODE=@OLD_SQL_MODE`: the value is the variable's.
                if dialect == Dialect::MySql
                    && let Some(text) = self.with_user_variables(session, sql)?
                {
                    let text = Sql {
                        text: &text,
                        leading,
                    };
                    return Box::pin(self.answer_text(session, text, Reserved::Whole)).await;
                }
                return self.set_settings(session, sql, set?).await;
            }
            Intent::Session(statement) => {
                if statement.resets_session() {
                    self.reset_session(session).await;
                }
                let current = &self.config.database_name;
                let user = session.user.clone();
                let permitted = |database: &str| self.may_use(&user, database);
                return statement.answer(session, self.databases(), &permitted, current);
            }
            Intent::Reflection(request) => {
                if let Some(other) = request.database().and_then(|d| self.other_database(d)) {
                    let other = other.answer_text(session, statement, Reserved::Whole);
                    return Box::pin(other).await;
                }
                let shards = reflection::Shards {
                    backend: &self.backend,
                    config: &self.config,
                };
                let (database, user) = (&self.config.database_name, &session.user);
                return reflection::answer(&shards, request, database, user).await;
            }
            // The frontend streams the data in, then calls `copy_in`.
            Intent::CopyIn(copy) => {
                session.copy_in = Some(copy?);
                return Ok(Reply::done());
            }
            Intent::Listen(command) => return self.listen(session, command).await,
            Intent::Preview(statement) => Some(statement),
            Intent::Routed => None,
        };
        // Before the variables it names are written in as values.
        if dialect == Dialect::MySql
            && routed.is_none()
            && memchr::memchr(b'@', sql.as_bytes()).is_some()
            && let Some(into) = keyshard_router::select_into_variables(sql)?
        {
            return self.select_into(session, into).await;
        }
        let substituted = match session.dialect {
            Dialect::MySql => self.with_user_variables(session, routed.unwrap_or(sql))?,
            Dialect::Postgres => None,
        };
        let text = substituted.as_deref().unwrap_or(routed.unwrap_or(sql));
        if routed.is_some() {
            return self.preview(text, dialect).await;
        }
        if dialect == Dialect::MySql
            && crate::words::find_ignore_ascii_case(text.as_bytes(), b"sql_calc_found_rows")
                .next()
                .is_some()
            && let Some(calc) = keyshard_router::calc_found_rows(text)?
        {
            return self.calc_found_rows(session, calc).await;
        }
        let planned = self.plan(text, dialect).await?;
        if let (Some(shape), None | Some(Known::Seen), None) = (&shape, &known, &substituted)
            && shape.folded_rows().is_none()
        {
            self.learn_shape(dialect, shape, &planned, metadata_version, false);
        }
        self.execute_planned(session, &planned, leading, &[]).await
    }
}
