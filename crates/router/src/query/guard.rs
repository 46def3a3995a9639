//! The guard of an UPDATE that sets a sharding column its WHERE clause does not pin: the read
//! of the nodes the new value does not route to (see [`super::update_moves`]).

use super::update_moves::Moving;
use super::{Condition, PreparedQuery};
use crate::RouteError;
use crate::plan::MoveGuard;
use crate::plan::moves;
use crate::route::NodeSet;
use keyshard_types::Value;

impl PreparedQuery {
    /// The read that must find no row before an UPDATE that sets a sharding column the WHERE
    /// clause does not pin; `None` when the statement has none or it is prepared.
    pub(crate) fn guard_sql(&self) -> Option<&str> {
        self.moving
            .as_ref()
            .filter(|m| m.guard.is_none())
            .map(|m| m.guard_sql.as_str())
    }

    /// The refusal of an UPDATE whose guard could not be prepared.
    pub(crate) fn moves(&self) -> RouteError {
        moves(self.moving.as_ref().map_or("", |m| m.column.as_str()))
    }

    /// Keeps the prepared guard.
    pub(crate) fn set_guard(&mut self, guard: PreparedQuery) {
        if let Some(moving) = &mut self.moving {
            moving.guard = Some(Box::new(guard));
        }
    }

    /// Narrows `nodes` (the WHERE clause's) to those the new sharding value routes to, and
    /// plans the read of the others: a row found there would have to move.
    pub(super) fn guard(
        &self,
        moving: &Moving,
        params: &[Value],
        nodes: &mut NodeSet,
        scratch: &mut String,
    ) -> Result<Option<Box<MoveGuard>>, RouteError> {
        let guard = moving
            .guard
            .as_ref()
            .ok_or_else(RouteError::internal("an UPDATE's guard was not prepared"))?;
        let target = Condition::And(vec![
            self.condition.clone(),
            Condition::Equals {
                table: None,
                column: moving.column.clone(),
                values: vec![moving.value.clone()],
            },
        ])
        .nodes(&self.tables, params, scratch)?;
        let data_nodes = self
            .tables
            .first()
            .map(|r| &r.data_nodes[..])
            .unwrap_or_default();
        let mut reads = guard.bind(params.get(moving.skip..).unwrap_or_default())?;
        reads.units.retain(|unit| {
            !data_nodes.iter().enumerate().any(|(i, node)| {
                target.contains(i)
                    && node.data_source == unit.data_source
                    && node.table == unit.table
            })
        });
        nodes.and(&target);
        Ok((!reads.units.is_empty()).then(|| {
            Box::new(MoveGuard {
                reads,
                column: moving.column.clone(),
            })
        }))
    }
}
