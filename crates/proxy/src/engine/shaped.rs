//! Statements sent as text and answered through their shapes (see [`crate::shapes`]): bound
//! when the shape is known, and the shape learned from a statement planned as usual.

use std::sync::Arc;

use keyshard_router::{Shape, substitute_session_values};
use keyshard_types::Dialect;

use super::Engine;
use crate::error::Error;
use crate::memory::{self, Reserved};
use crate::reply::Reply;
use crate::session::{Planned, Session};
use crate::shapes::{Known, ShapedInsert, typed};

impl Engine {
    /// Learns `shape` from `planned`, a statement of it (see [`crate::shapes::Shapes::learn`]).
    pub(super) fn learn_shape(
        &self,
        dialect: Dialect,
        shape: &Shape,
        planned: &Planned,
        metadata_version: u64,
        at_once: bool,
    ) -> Option<Known> {
        self.shapes.learn(
            self.router(dialect),
            shape,
            planned,
            self.backend.metadata(),
            metadata_version,
            at_once,
            |insert| typed::slots(insert, &self.backend),
        )
    }

    /// Learns the shape of `sql`, an INSERT whose rows `shape` folds, from the statement's
    /// first row (planned as the statement itself would be); the INSERT that binds `sql`,
    /// when the shape stands for it. Anything else leaves `sql` to be parsed whole, which
    /// reports its errors as ever. Under [`Reserved::Scan`] the first row's parse is reserved
    /// first, and refused as any statement is when it would take too much.
    pub(super) async fn learn_from_first_row(
        &self,
        session: &Session,
        sql: &str,
        shape: &Shape,
        metadata_version: u64,
        reserved: Reserved,
    ) -> Result<Option<Arc<ShapedInsert>>, Error> {
        let Some(first) = shape.first_row_only(sql) else {
            return Ok(None);
        };
        let _parsing = self
            .instance
            .memory
            .reserve_step(reserved, |_| memory::estimate(&first))
            .await?;
        let dialect = session.dialect;
        let Some(first_shape) = Shape::of(&first, dialect).filter(|s| s.text() == shape.text())
        else {
            return Ok(None);
        };
        // Text that MySQL's session values would rewrite is not learned (see `shapes`).
        if dialect == Dialect::MySql
            && !matches!(
                substitute_session_values(&first, &super::session_values::NO_VALUES),
                Ok(None)
            )
        {
            return Ok(None);
        }
        let Ok(planned) = self.plan(&first, dialect).await else {
            return Ok(None);
        };
        Ok(
            match self.learn_shape(dialect, &first_shape, &planned, metadata_version, true) {
                Some(Known::Insert(shaped)) => Some(shaped),
                _ => None,
            },
        )
    }

    /// An INSERT sent as text, bound through its shape: its literals as parameters where the
    /// shards take them typed, else written back as they were.
    pub(super) async fn insert_by_shape(
        &self,
        session: &mut Session,
        sql: &str,
        shape: &Shape,
        shaped: &ShapedInsert,
    ) -> Result<Reply, Error> {
        let params = shaped
            .slots
            .as_deref()
            .and_then(|slots| typed::bind(shape, slots));
        let plan = self
            .bind_insert(&shaped.insert, || match &params {
                Some(params) => shaped.insert.bind(params),
                None => shaped.insert.bind_shape(sql, shape),
            })
            .await?;
        self.reply(session, plan, false).await
    }
}
