//! A bound on the memory statements take in the proxy: each statement's need is estimated
//! from its text before it is parsed, a statement over `props.statement-memory-bytes` is
//! refused, and all statements in flight share `props.memory-budget-bytes`: a statement that
//! does not fit waits for others to finish instead of the process being killed.
//!
//! Parsing, planning and rendering cost little per byte of a long string but a lot per value:
//! sqlparser keeps a token and an expression for each, and the plan a routed copy. So the
//! estimate counts the places where values and tokens start, outside quotes.
//!
//! A long INSERT or REPLACE reserves in steps instead, since a bulk load whose rows fold into
//! one shape is never parsed whole (see `shapes`): first what finding its shape takes
//! ([`scan_estimate`]), then either what binding it by the shape takes
//! ([`keyshard_router::PreparedInsert::binding_bytes`]) or, when it is parsed after all, the
//! rest of its whole estimate.

mod kept;

use std::sync::Arc;

use keyshard_router::Shape;
use tokio::sync::{Semaphore, SemaphorePermit};

pub(crate) use kept::{Charge, Kept, KeptMap, SessionMemory, Weigh};

use crate::error::{Error, ErrorKind};

/// Bytes a statement holds per value or token at its peak, measured on multi-row INSERTs:
/// 100,000 rows `(7,'status1')` (1.5 MB of SQL) took 330 MB.
const PER_VALUE: usize = 1024;
/// Copies of a statement's parameters held at once while it runs, measured (massif) with one
/// long parameter on MariaDB and PostgreSQL shards: the decoded value, the routed unit's own,
/// and the driver's argument and write buffers.
const PARAM_COPIES: usize = 4;
/// The budget is kept in KiB: a semaphore counts in `u32`.
const UNIT: usize = 1024;

/// The memory that statements in flight may take together.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    available: Arc<Semaphore>,
    per_statement: usize,
    /// What sessions keep between statements, from the same budget.
    kept: Arc<Kept>,
}

/// What a statement sent as text holds of the budget when it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reserved {
    /// Its whole [`estimate`].
    Whole,
    /// Only what finding its shape takes ([`scan_estimate`]), these bytes; the rest is
    /// reserved beside it as its path turns out.
    Scan(usize),
}

/// Memory held for one statement until dropped.
#[derive(Debug)]
pub(crate) struct Reservation<'a>(#[allow(dead_code)] SemaphorePermit<'a>);

impl MemoryBudget {
    /// A budget of `total` bytes, of which one statement may take `per_statement` and one
    /// session keep `per_session`.
    pub(crate) fn new(per_statement: usize, total: usize, per_session: usize) -> Self {
        let units = u32::try_from(total.div_ceil(UNIT)).unwrap_or(u32::MAX) as usize;
        let available = Arc::new(Semaphore::new(units));
        Self {
            kept: Arc::new(Kept::new(Arc::clone(&available), units, per_session)),
            available,
            per_statement: per_statement.min(total),
        }
    }

    /// The account of a new session's kept memory.
    pub(crate) fn session(&self) -> Arc<SessionMemory> {
        self.kept.session()
    }

    /// Holds what `sql` (with `extra` bytes of parameters) is estimated to need, waiting while
    /// other statements hold too much; refuses a statement that alone would need more than
    /// one statement may take.
    pub(crate) async fn reserve(&self, sql: &str, extra: usize) -> Result<Reservation<'_>, Error> {
        let params = extra.saturating_mul(PARAM_COPIES);
        self.reserve_beside(0, estimate(sql).saturating_add(params))
            .await
    }

    /// For a statement that reserved in steps ([`Reserved::Scan`]), holds `need(held)` more
    /// bytes beside the `held` it holds; nothing for one that holds its whole estimate.
    pub(crate) async fn reserve_step(
        &self,
        reserved: Reserved,
        need: impl FnOnce(usize) -> usize,
    ) -> Result<Option<Reservation<'_>>, Error> {
        Ok(match reserved {
            Reserved::Scan(held) => Some(self.reserve_beside(held, need(held)).await?),
            Reserved::Whole => None,
        })
    }

    /// Holds `need` more bytes for a statement that holds `held` already, as
    /// [`MemoryBudget::reserve`] does: the two together count against what one statement may
    /// take.
    pub(crate) async fn reserve_beside(
        &self,
        held: usize,
        need: usize,
    ) -> Result<Reservation<'_>, Error> {
        let total = held.saturating_add(need);
        if total > self.per_statement {
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "Out of memory: this statement would take about {} MiB of the proxy's \
                     memory, more than props.statement-memory-bytes ({} MiB) allows; split it \
                     into smaller statements",
                    total >> 20,
                    self.per_statement >> 20,
                ),
            ));
        }
        let units = u32::try_from(need.div_ceil(UNIT)).unwrap_or(u32::MAX);
        let permit = self
            .available
            .acquire_many(units)
            .await
            .map_err(|_| Error::new(ErrorKind::OutOfMemory, "the proxy is shutting down"))?;
        Ok(Reservation(permit))
    }
}

/// Statements up to this long are not scanned: bounded by their length, they are
/// estimated as if every other byte began a value.
pub(crate) const SHORT: usize = 4096;

/// About how many bytes parsing and running `sql` takes at its peak.
pub(crate) fn estimate(sql: &str) -> usize {
    sql.len()
        .saturating_mul(PER_BYTE)
        .saturating_add(value_starts(sql).saturating_mul(PER_VALUE))
}

/// Bytes a statement holds per byte of its text at its peak, however few values it has: a
/// statement of one 8 MB string or quoted name took the proxy 44–137 MiB above idle (MySQL's
/// frontend the most: the text is read, parsed, sent and its value or name answered, each a
/// copy; and the allocator returns what is freed only after a moment).
const PER_BYTE: usize = 8;

/// At most the bytes finding `sql`'s shape takes ([`Shape::of`]), its literals being fewer
/// than the places where a value can start.
pub(crate) fn scan_estimate(sql: &str) -> usize {
    Shape::memory_bound(sql.len(), value_starts(sql))
}

/// About the bytes a statement kept prepared holds: its text, and its parsed form, which
/// costs less per value than parsing does at its peak. 200,000 named statements of 75
/// bytes held 229 MB, and 60 of 10 MB (a long string each) 1.4 GB.
pub(crate) fn kept_estimate(sql: &str) -> usize {
    sql.len()
        .saturating_mul(3)
        .saturating_add(count_value_starts(sql).saturating_mul(KEPT_PER_VALUE))
        .saturating_add(1024)
}

/// Bytes a prepared statement keeps per value or token of its text.
const KEPT_PER_VALUE: usize = 128;

/// The places in `sql` where a value or token may start, outside quotes; for a short
/// statement, without a scan, as if every other byte were one.
fn value_starts(sql: &str) -> usize {
    if sql.len() <= SHORT {
        // The common case, on every statement's path: no scan.
        return sql.len() / 2 + 1;
    }
    count_value_starts(sql)
}

fn count_value_starts(sql: &str) -> usize {
    let mut values: usize = 1;
    let mut quote = None;
    for b in sql.bytes() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' | b'`' => quote = Some(b),
                b',' | b'(' | b'=' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' => values += 1,
                _ => {}
            },
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_strings_are_cheap_and_many_values_are_not() {
        let blob = format!("INSERT INTO t (a) VALUES ('{}')", "x".repeat(4 << 20));
        assert!(estimate(&blob) < 40 << 20, "{}", estimate(&blob));
        let rows = vec!["(7,'status1')"; 100_000].join(",");
        let many = format!("INSERT INTO t (a, b) VALUES {rows}");
        assert!(estimate(&many) > 250 << 20, "{}", estimate(&many));
        // A quote inside a string does not end it early, nor count its commas.
        let padding = " ".repeat(SHORT);
        assert!(
            estimate(&format!("SELECT 'a,b,c,d' , 1{padding}"))
                < estimate(&format!("SELECT a,b,c,d , 1{padding}"))
        );
        // A short statement is bounded by its length without a scan.
        assert!(estimate("SELECT 1") >= 4 * PER_VALUE);
    }

    #[tokio::test]
    async fn over_the_statement_limit_is_refused_and_the_budget_makes_others_wait() {
        let budget = MemoryBudget::new(1 << 20, 2 << 20, 1 << 20);
        let big = format!("SELECT {}", vec!["1"; 2_000].join(","));
        let refused = budget.reserve(&big, 0).await.unwrap_err();
        assert_eq!(refused.kind, ErrorKind::OutOfMemory);
        let medium = format!("SELECT {}", vec!["1"; 700].join(","));
        let first = budget.reserve(&medium, 0).await.unwrap();
        let second = budget.reserve(&medium, 0).await.unwrap();
        let third = budget.reserve(&medium, 0);
        tokio::pin!(third);
        let waited = tokio::time::timeout(std::time::Duration::from_millis(50), &mut third).await;
        assert!(waited.is_err(), "the third fits only when another is done");
        drop(first);
        third.await.unwrap();
        drop(second);
    }
}
