//! A plan's outcome from its units' results: a read's rows merged by its merge spec or passed
//! on as they came, a broadcast write counted once, RETURNING rows put back in the client's
//! order. Apart from the types in `outcome`, which the merge and the stream use too.

use keyshard_router::Plan;
use keyshard_types::Value;

use crate::BackendError;
use crate::merge::merge;
use crate::outcome::{Outcome, UnitResult};

/// Rows above which a merge runs on a blocking thread: ordering, grouping or just gathering
/// that many takes long enough to stall the other sessions of the runtime's thread.
const MERGE_APART_ROWS: usize = 20_000;

impl Outcome {
    /// The plan's outcome from its units' results (in unit order): a read's rows merged by its
    /// merge spec, a broadcast write counted once.
    pub(crate) async fn of(plan: &Plan, results: Vec<UnitResult>) -> Result<Self, BackendError> {
        if let Some(spec) = &plan.merge {
            let rows: usize = results.iter().map(|r| r.rows.len()).sum();
            let merged = if rows > MERGE_APART_ROWS {
                let spec = spec.clone();
                tokio::task::spawn_blocking(move || merge(&spec, results))
                    .await
                    .map_err(|_| BackendError::MergeInterrupted)??
            } else {
                merge(spec, results)?
            };
            return Ok(Outcome {
                affected_rows: merged.affected_rows,
                columns: merged.columns,
                rows: merged.rows,
                generated_keys: Vec::new(),
                streamed: None,
            });
        }
        if plan.replicated {
            // Every unit wrote the same rows to its own copy: one unit tells what happened.
            let first = results.into_iter().next().unwrap_or_default();
            return Ok(Outcome {
                affected_rows: first.affected_rows,
                columns: first.columns,
                rows: first.rows,
                generated_keys: plan.generated_keys.clone(),
                streamed: None,
            });
        }
        Ok(Self::in_client_order(plan, results))
    }

    /// The outcome of a read whose rows went to the client as they came (see `stream`): a unit
    /// whose values needed completing kept its rows, which follow the others now (the read
    /// only concatenates).
    pub(crate) async fn streamed(results: Vec<UnitResult>) -> Result<Self, BackendError> {
        let mut sent = 0u64;
        let mut kept = Vec::new();
        for result in results {
            sent = sent.saturating_add(result.streamed.unwrap_or_default());
            sent = sent.saturating_add(result.rows.len() as u64);
            kept.extend(result.rows);
        }
        crate::stream::send_kept(kept).await?;
        Ok(Outcome {
            streamed: Some(sent),
            ..Outcome::default()
        })
    }

    /// Concatenates the units' results, RETURNING rows put back in the client's row order.
    fn in_client_order(plan: &Plan, mut results: Vec<UnitResult>) -> Self {
        let affected_rows = results.iter().map(|r| r.affected_rows).sum();
        let columns = results
            .iter_mut()
            .find(|r| !r.columns.is_empty())
            .map(|r| std::mem::take(&mut r.columns))
            .unwrap_or_default();
        // RETURNING gives one row per inserted row, in the unit's row order; put them back in
        // the client's order. A unit that returned fewer (INSERT IGNORE, ON CONFLICT DO
        // NOTHING) has no such correspondence, so then the rows stay in unit order.
        let one_per_row = results
            .iter()
            .zip(&plan.units)
            .all(|(r, u)| r.rows.len() == u.rows.len());
        let rows = if results.iter().all(|r| r.rows.is_empty()) {
            // A write without RETURNING.
            Vec::new()
        } else if one_per_row {
            let mut slots: Vec<Option<Vec<Value>>> = vec![None; plan.row_units.len()];
            for (result, unit) in results.into_iter().zip(&plan.units) {
                for (row, values) in unit.rows.iter().zip(result.rows) {
                    if let Some(slot) = slots.get_mut(*row) {
                        *slot = Some(values);
                    }
                }
            }
            slots.into_iter().flatten().collect()
        } else if results.len() == 1 {
            // One unit (every read of one node): its rows as they are.
            results.pop().map(|r| r.rows).unwrap_or_default()
        } else {
            results.into_iter().flat_map(|r| r.rows).collect()
        };
        Outcome {
            affected_rows,
            columns,
            rows,
            generated_keys: plan.generated_keys.clone(),
            streamed: None,
        }
    }
}
