//! The result columns of reads, as the data sources described them, kept per statement shape
//! (with the parameter types a PostgreSQL data source inferred).
//!
//! A read that finds no row carries no columns, so the client's result shape is asked of the
//! shard (a prepare round trip). Point reads by key repeat one statement with other values, and
//! those values only sit in the WHERE clause, which never changes the result columns: so the
//! columns are kept per data source and per [`key`] (the text with the literals after the
//! top-level WHERE replaced by `?`). Everything that can change the columns keeps its text in
//! the key: the select list (MySQL names a column by its expression, `5` for `SELECT 5`), the
//! FROM clause, and set operations, which make a statement uncached.
//!
//! Any statement through the backend that is not plainly a read or a row change (DDL, a
//! multi-statement text) forgets every entry, as does a reload of table metadata; a
//! transaction that ran such a statement forgets them again when it ends, since PostgreSQL's
//! DDL shows to other connections only then. DDL sent to a shard beside the proxy is not seen
//! until then, as with the table metadata.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use keyshard_router::Leading;

use crate::Column;
use crate::cache::{Bounds, Cache, CacheStats};

/// A statement's result columns and inferred parameter types.
pub(crate) type Description = (Vec<Column>, Vec<u32>);

/// A statement longer than this is always described.
const MAX_KEY: usize = 16 << 10;

/// Kept result columns, keyed by data source and statement shape, within
/// `props.column-cache-entries` and `props.column-cache-bytes` (of keys and columns).
#[derive(Debug)]
pub(crate) struct ResultColumns {
    /// Counts the statements that may have changed a table's columns.
    epoch: AtomicU64,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The epoch and metadata version the entries were described under.
    stamp: (u64, u64),
    entries: Cache<(String, String), Description>,
}

impl Default for ResultColumns {
    fn default() -> Self {
        Self::new(keyshard_config::Props::default().column_cache)
    }
}

/// Where a description may be kept: the key and the stamp taken before asking for it.
pub(crate) struct Slot {
    data_source: String,
    key: String,
    stamp: (u64, u64),
}

impl ResultColumns {
    /// Nothing kept yet, within `bounds`.
    pub(crate) fn new(bounds: Bounds) -> Self {
        Self {
            epoch: AtomicU64::new(0),
            inner: Mutex::new(Inner {
                stamp: (0, 0),
                entries: Cache::new(bounds),
            }),
        }
    }

    /// What it keeps and has done.
    pub(crate) fn stats(&self) -> CacheStats {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entries
            .stats()
    }

    /// The kept columns of `sql` on `data_source`, or the slot to keep them in once described;
    /// neither when `sql` is not a statement whose columns are kept.
    pub(crate) fn get(
        &self,
        data_source: &str,
        sql: &str,
        metadata_version: u64,
    ) -> Result<Description, Option<Slot>> {
        match key(sql) {
            Some(key) => self.get_keyed(data_source, key, metadata_version),
            None => Err(None),
        }
    }

    /// As [`ResultColumns::get`], for a statement whose key the caller made: a statement bound
    /// through its shape is kept under the shape (see `Plan::described_as`), with whatever
    /// else tells its units' texts apart.
    pub(crate) fn get_keyed(
        &self,
        data_source: &str,
        key: String,
        metadata_version: u64,
    ) -> Result<Description, Option<Slot>> {
        let stamp = (self.epoch.load(Ordering::Acquire), metadata_version);
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.stamp != stamp {
            inner.entries.clear();
            inner.stamp = stamp;
        }
        // The map is keyed by owned strings; the lookup builds the pair once per miss or hit,
        // the cost of one allocation beside the round trip it saves.
        let pair = (data_source.to_owned(), key);
        if let Some(description) = inner.entries.get(&pair) {
            return Ok(description.clone());
        }
        Err(Some(Slot {
            data_source: pair.0,
            key: pair.1,
            stamp,
        }))
    }

    /// Where `key` is kept on `data_source`, whether anything is or not: to replace an entry.
    pub(crate) fn slot(&self, data_source: &str, key: String, metadata_version: u64) -> Slot {
        Slot {
            data_source: data_source.to_owned(),
            key,
            stamp: (self.epoch.load(Ordering::Acquire), metadata_version),
        }
    }

    /// Keeps `description` in `slot`, unless the columns may have changed since it was taken.
    pub(crate) fn put(&self, slot: Slot, description: &Description) {
        if self.epoch.load(Ordering::Acquire) != slot.stamp.0 {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.stamp != slot.stamp {
            return;
        }
        // The columns' names and types, roughly: what a description holds beside its key.
        let size = slot.data_source.len() + slot.key.len() + 64 * description.0.len();
        inner
            .entries
            .insert((slot.data_source, slot.key), description.clone(), size);
    }

    /// Notes that `sql` is about to run; forgets every entry, and answers true, when it may
    /// change a table's columns.
    pub(crate) fn note(&self, sql: &str) -> bool {
        let changes = may_change_columns(sql);
        if changes {
            self.forget();
        }
        changes
    }

    /// Forgets every entry.
    pub(crate) fn forget(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }
}

/// Whether `sql` may change some table's columns: anything but a single statement that
/// plainly reads or changes rows.
fn may_change_columns(sql: &str) -> bool {
    // A `;` inside a literal makes a needless forgetting, never a missed one.
    Leading::of(sql).may_change_columns() || sql.trim_end().trim_end_matches(';').contains(';')
}

/// The key of the columns of a statement bound through its `shape` (see `Plan::described_as`),
/// kept for `purpose`, read from `table`: a unit's text differs from its shape by its tables
/// (the first names the others: they are bound alike).
pub(crate) fn shape_key(purpose: &str, table: &str, shape: &str) -> String {
    // Joined by hand: `format!` costs a merge ~1,000 instructions here.
    let mut key = String::with_capacity(purpose.len() + table.len() + shape.len() + 3);
    for part in [purpose, table, shape] {
        key.push('\0');
        key.push_str(part);
    }
    key
}

/// The key of a SELECT's result columns: its text, with each number and quoted string after
/// the top-level WHERE replaced by `?`. `None` for anything else, and for whatever the scan
/// cannot follow with certainty (comments, backslashes, doubled quotes, dollar quoting), a
/// set operation or an `INTO` at the top level, or a text over [`MAX_KEY`].
pub(crate) fn key(sql: &str) -> Option<String> {
    if sql.len() > MAX_KEY {
        return None;
    }
    if Leading::of(sql) != Leading::Select {
        return None;
    }
    let bytes = sql.as_bytes();
    let mut key = String::with_capacity(sql.len());
    let mut copied = 0;
    let mut depth = 0usize;
    let mut after_where = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let end = match b {
            b'\'' | b'"' | b'`' => {
                let end = closing(bytes, i, b)?;
                if after_where && b == b'\'' {
                    key.push_str(sql.get(copied..i)?);
                    key.push('?');
                    copied = end;
                }
                end
            }
            b'0'..=b'9' => {
                let end = i + bytes[i..]
                    .iter()
                    .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
                    .count();
                if after_where {
                    key.push_str(sql.get(copied..i)?);
                    key.push('?');
                    copied = end;
                }
                end
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let end = i + bytes[i..]
                    .iter()
                    .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
                    .count();
                let word = sql.get(i..end)?;
                if depth == 0 {
                    if word.eq_ignore_ascii_case("where") {
                        after_where = true;
                    } else if ["union", "intersect", "except", "into", "procedure"]
                        .iter()
                        .any(|w| word.eq_ignore_ascii_case(w))
                    {
                        return None;
                    }
                }
                end
            }
            b'(' => {
                depth += 1;
                i + 1
            }
            b')' => {
                depth = depth.checked_sub(1)?;
                i + 1
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => return None,
            b'/' if bytes.get(i + 1) == Some(&b'*') => return None,
            // A placeholder (`$1`) stays; dollar quoting is not followed.
            b'$' if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i + 1
                    + bytes[i + 1..]
                        .iter()
                        .take_while(|c| c.is_ascii_digit())
                        .count()
            }
            // A statement's closing `;` (pgbench sends one), and nothing after it.
            b';' if sql.get(i + 1..)?.trim().is_empty() => i + 1,
            b'#' | b'\\' | b'$' | b';' => return None,
            _ => i + 1,
        };
        i = end;
    }
    if depth != 0 {
        return None;
    }
    key.push_str(sql.get(copied..)?);
    Some(key)
}

/// The end (exclusive) of the quoted run opening at `open`; `None` when it does not close, or
/// holds a backslash or a doubled quote.
fn closing(bytes: &[u8], open: usize, quote: u8) -> Option<usize> {
    let len = bytes
        .get(open + 1..)?
        .iter()
        .position(|&c| c == quote || c == b'\\')?;
    let end = open + 1 + len;
    if bytes.get(end) != Some(&quote) || bytes.get(end + 1) == Some(&quote) {
        return None;
    }
    Some(end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_after_where_are_placeholders() {
        let a = key("SELECT order_id, status FROM t_order_1 WHERE user_id = 17 AND order_id = 4");
        let b = key("SELECT order_id, status FROM t_order_1 WHERE user_id = 9 AND order_id = 123");
        assert_eq!(
            a.as_deref(),
            Some("SELECT order_id, status FROM t_order_1 WHERE user_id = ? AND order_id = ?")
        );
        assert_eq!(a, b);
        assert_eq!(
            key("SELECT a FROM t WHERE id = 42;\n").as_deref(),
            Some("SELECT a FROM t WHERE id = ?;\n")
        );
        assert_eq!(
            key("SELECT a FROM t WHERE s = 'x y' AND n IN (1, 2.5) LIMIT 3").as_deref(),
            Some("SELECT a FROM t WHERE s = ? AND n IN (?, ?) LIMIT ?")
        );
    }

    #[test]
    fn what_makes_the_columns_keeps_its_text() {
        assert_ne!(
            key("SELECT 5, 'a' FROM t WHERE id = 1"),
            key("SELECT 6, 'a' FROM t WHERE id = 1")
        );
        assert_ne!(
            key("SELECT * FROM (SELECT 1 AS a) s WHERE a = 1"),
            key("SELECT * FROM (SELECT 'x' AS a) s WHERE a = 1")
        );
        // A WHERE inside a subquery is not the top-level one.
        assert_eq!(
            key("SELECT (SELECT 1 FROM u WHERE u.id = 3) FROM t").as_deref(),
            Some("SELECT (SELECT 1 FROM u WHERE u.id = 3) FROM t")
        );
        assert_eq!(
            key("SELECT \"a\" FROM t WHERE \"b\" = 2").as_deref(),
            Some("SELECT \"a\" FROM t WHERE \"b\" = ?")
        );
    }

    #[test]
    fn what_the_scan_cannot_follow_is_not_kept() {
        for sql in [
            "SELECT a FROM t WHERE id = 1 UNION SELECT 'x' FROM u",
            "SELECT a FROM t WHERE id = 1 INTO @v",
            "SELECT a FROM t WHERE s = 'it''s'",
            "SELECT a FROM t WHERE s = 'a\\'b'",
            "SELECT a FROM t WHERE id = 1 -- c",
            "SELECT a FROM t /* c */ WHERE id = 1",
            "SELECT a FROM t WHERE s = $$x$$",
            "SELECT a FROM t WHERE id = 1; DROP TABLE t",
            "SELECT a FROM t WHERE (id = 1",
            "UPDATE t SET a = 1 WHERE id = 2",
        ] {
            assert_eq!(key(sql), None, "{sql}");
        }
        assert!(key("SELECT a FROM t WHERE id = 1)").is_none());
        assert_eq!(
            key("SELECT é FROM t WHERE id = $1 AND s = 'é'").as_deref(),
            Some("SELECT é FROM t WHERE id = $1 AND s = ?")
        );
    }

    #[test]
    fn schema_changes_forget() {
        for sql in [
            "ALTER TABLE t ADD c INT",
            "create table u (a int)",
            "/* x */ SELECT 1",
            "SELECT 1; DROP TABLE t",
            "DROP TABLE t",
        ] {
            assert!(may_change_columns(sql), "{sql}");
        }
        for sql in [
            "SELECT 1",
            "  insert into t values (1)",
            "UPDATE t SET a = 1;",
            "DELETE FROM t",
        ] {
            assert!(!may_change_columns(sql), "{sql}");
        }
    }

    #[test]
    fn kept_until_something_changes() {
        let described = ResultColumns::default();
        let sql = "SELECT a FROM t WHERE id = 1";
        let Err(Some(slot)) = described.get("ds", sql, 7) else {
            panic!("a first read is described");
        };
        let columns = (
            vec![Column::new(
                "a",
                keyshard_types::SqlType::Int {
                    bytes: 4,
                    unsigned: false,
                },
            )],
            vec![23],
        );
        described.put(slot, &columns);
        assert_eq!(
            described.get("ds", "SELECT a FROM t WHERE id = 2", 7).ok(),
            Some(columns.clone())
        );
        assert!(described.get("other", sql, 7).is_err());
        assert!(described.get("ds", sql, 8).is_err(), "metadata reloaded");
        let Err(Some(slot)) = described.get("ds", sql, 8) else {
            panic!("described again");
        };
        assert!(described.note("ALTER TABLE t ADD b INT"));
        described.put(slot, &columns);
        assert!(
            described.get("ds", sql, 8).is_err(),
            "described before a schema change, not kept"
        );
    }
}
