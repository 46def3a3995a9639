//! An ordered read's units on one data source sent as one statement,
//! `(u1) UNION ALL (u2) … ORDER BY … LIMIT n`, so that the database merges its own nodes' rows:
//! only the rows the window can keep cross sqlx and the proxy's merge, once per data source
//! instead of once per node (a two-node `ORDER BY … LIMIT 10` costs about a third less).
//!
//! Only where the database's answer is the merge's, exactly:
//! - the merge only orders and windows (no grouping, aggregates, HAVING or hidden work beyond
//!   sort keys), and every sort key is a column whose type orders by value, never by a
//!   collation (numbers, booleans, dates and times), so the union orders as the merge would;
//! - each unit is a SELECT that locks nothing (a locking read cannot be a union's branch) and no
//!   replica may answer; with parameters, or read in a binary format, the combined statement
//!   is prepared (and kept on the connection) as the units would have been;
//! - the data source is MySQL/MariaDB or PostgreSQL, of the session's dialect.
//!
//! A union's result columns are not the branches' (MySQL reports no table and drops key flags,
//! PostgreSQL no table OID, MySQL turns ENUM into VARCHAR), so the columns the client is told
//! are those the first unit answered when it ran alone, kept in the result-column cache: the
//! first read of a shape runs unit by unit and keeps them, later ones are combined. A union
//! whose columns do not match the kept ones by count and name (the table changed beside the
//! proxy) is read again unit by unit, and one the database refuses marks its shape as not
//! combined until the cache is next cleared.

use keyshard_router::merge::MergeSpec;
use keyshard_router::{ExecutionUnit, Plan};
use keyshard_types::{Dialect, SqlType};

use crate::outcome::{Column, UnitResult};
use crate::{Backend, BackendError, Pool, execute, result_columns};

impl Backend {
    /// Runs `units`, a part of `plan`'s merged read on `data_source`: as one combined
    /// statement where that answers as the units would, otherwise one by one (see
    /// [`Backend::autocommit`]).
    pub(crate) async fn read_part(
        &self,
        plan: &Plan,
        data_source: &str,
        units: &[&ExecutionUnit],
    ) -> Result<Vec<UnitResult>, BackendError> {
        let (Some(spec), [first, _, ..]) = (&plan.merge, units) else {
            return self.autocommit(plan, data_source, units).await;
        };
        let pool = self.pool(data_source)?;
        if !combinable(plan, spec, pool, units) || self.replicas.has(data_source) {
            return self.autocommit(plan, data_source, units).await;
        }
        let Some(key) = kept_key(plan, first) else {
            return self.autocommit(plan, data_source, units).await;
        };
        let version = self.metadata.version();
        let kept = self
            .result_columns
            .get_keyed(data_source, key.clone(), version);
        let (columns, order) = match kept {
            Ok((columns, _)) => match order_by(spec, &columns) {
                Some(order) => (columns, order),
                None => return self.autocommit(plan, data_source, units).await,
            },
            // The first read of its shape: the columns it answers alone are kept (none, which
            // combines nothing, when its sort keys do not order alike in a union).
            Err(slot) => {
                let results = self.autocommit(plan, data_source, units).await?;
                if let (Some(slot), Some(alone)) = (slot, results.first())
                    && !alone.columns.is_empty()
                {
                    let columns = match order_by(spec, &alone.columns) {
                        Some(_) => alone.columns.clone(),
                        None => Vec::new(),
                    };
                    self.result_columns.put(slot, &(columns, Vec::new()));
                }
                return Ok(results);
            }
        };
        let Some(sql) = union_text(spec, units, &order) else {
            return self.autocommit(plan, data_source, units).await;
        };
        let combined = ExecutionUnit {
            data_source: first.data_source.clone(),
            table: first.table.clone(),
            sql,
            params: units
                .iter()
                .flat_map(|u| u.params.iter().cloned())
                .collect(),
            rows: Vec::new(),
            binary_results: first.binary_results,
        };
        // The units' own texts were logged as they started; this is what goes instead.
        let (sql, params) = (&combined.sql, &combined.params);
        self.show_sql("Actual SQL (combined)", data_source, sql, params);
        match execute::read_combined(pool, &combined, first).await {
            Ok(mut result) if result.columns.is_empty() || alike(&result.columns, &columns) => {
                if !result.columns.is_empty() {
                    result.columns = columns;
                }
                self.combined_reads
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let mut results = Vec::with_capacity(units.len());
                results.push(result);
                results.resize_with(units.len(), UnitResult::default);
                Ok(results)
            }
            Ok(_) => {
                // The table changed beside the proxy: what is kept describes it no more.
                self.result_columns.forget();
                self.autocommit(plan, data_source, units).await
            }
            Err(e) if refused_as_union(&e) => {
                tracing::debug!("combined read refused on {data_source}, read unit by unit: {e}");
                let slot = self.result_columns.slot(data_source, key, version);
                self.result_columns.put(slot, &(Vec::new(), Vec::new()));
                self.autocommit(plan, data_source, units).await
            }
            Err(e) => Err(BackendError::from_sqlx(data_source, e)),
        }
    }
}

/// Whether the database refused the combined statement as such (a syntax it does not take in
/// a union's branch, MySQL's SQL_NO_CACHE there, say), which the units alone may not be:
/// SQLSTATE class 42 or 0A000, MySQL's ER_WRONG_USAGE. Anything else (a cancel, a time-out, a
/// lost connection) is the read's own outcome, not tried again.
fn refused_as_union(e: &sqlx::Error) -> bool {
    e.as_database_error().is_some_and(|e| {
        let code = e.code();
        let code = code.as_deref().unwrap_or_default();
        code.starts_with("42")
            || code == "0A000"
            || e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                .is_some_and(|e| e.number() == 1221)
    })
}

/// The cache key of the columns `first` answers alone, apart from those its description gives
/// (which a read without rows asks of the database, in another protocol): under the shape it
/// was bound through, else its text with its WHERE clause's literals cut.
fn kept_key(plan: &Plan, first: &ExecutionUnit) -> Option<String> {
    // Read in a binary format, a result's columns are told apart from the text format's.
    let purpose = match first.binary_results || !first.params.is_empty() {
        true => "combined binary",
        false => "combined",
    };
    match &plan.described_as {
        Some(shape) => Some(result_columns::shape_key(purpose, &first.table, shape)),
        None => result_columns::key(&first.sql).map(|key| {
            let mut kept = String::with_capacity(key.len() + purpose.len() + 2);
            kept.push('\0');
            kept.push_str(purpose);
            kept.push('\0');
            kept.push_str(&key);
            kept
        }),
    }
}

/// Whether `plan`'s read of `units` may be combined, as far as the plan and the units' texts
/// tell (the sort keys' types are checked against the kept columns).
fn combinable(plan: &Plan, spec: &MergeSpec, pool: &Pool, units: &[&ExecutionUnit]) -> bool {
    let dialect_fits = match pool {
        Pool::MySql(_) => spec.dialect == Dialect::MySql,
        Pool::Postgres(_) => spec.dialect == Dialect::Postgres,
        Pool::Sqlite(_) => false,
    };
    dialect_fits
        && plan.replica_safe
        && plan.guard.is_none()
        && spec.group_by.is_empty()
        && spec.aggregates.is_empty()
        && spec.computed.is_empty()
        && spec.division_scale.is_none()
        && spec.having.is_none()
        && spec.when_empty.is_none()
        && !spec.order_by.is_empty()
        && (spec.dialect == Dialect::Postgres
            || spec.order_by.iter().all(|k| k.nulls_first.is_none()))
        && units.iter().all(|u| {
            u.binary_results == units[0].binary_results
                && keyshard_router::Leading::of(&u.sql) == keyshard_router::Leading::Select
        })
}

/// Each sort key's position in `columns`, when every one is a column whose type orders by
/// value alone.
fn order_by(spec: &MergeSpec, columns: &[Column]) -> Option<Vec<usize>> {
    spec.order_by
        .iter()
        .map(|key| {
            let at = crate::merge::column_position(columns, &key.column)?;
            orders_by_value(columns.get(at)?.ty).then_some(at)
        })
        .collect()
}

/// Whether values of `ty` order the same in a union's result as in the merge: by value, with
/// no collation, and keeping their type through the union.
fn orders_by_value(ty: SqlType) -> bool {
    ty.never_text()
        || matches!(
            ty,
            SqlType::Year
                | SqlType::Date
                | SqlType::Time
                | SqlType::DateTime
                | SqlType::Timestamp
                | SqlType::Zoned
        )
}

/// Whether a union's `columns` are the `kept` ones: as many, of the same names; the sort keys'
/// of the same types.
fn alike(columns: &[Column], kept: &[Column]) -> bool {
    columns.len() == kept.len()
        && columns
            .iter()
            .zip(kept)
            .all(|(c, k)| c.name == k.name && (c.ty == k.ty || !orders_by_value(k.ty)))
}

/// `(u1) UNION ALL (u2) … ORDER BY … LIMIT n`, the sort keys by position, the limit the
/// units' own (the merge then skips the offset), the units' parameters one after the other
/// (PostgreSQL's `$n` of a later unit numbered on); `None` when a unit's text does not end
/// plainly enough to be enclosed, or its placeholders cannot be numbered on.
fn union_text(spec: &MergeSpec, units: &[&ExecutionUnit], order: &[usize]) -> Option<String> {
    let length = units.iter().map(|u| u.sql.len() + 14).sum::<usize>() + 16 * order.len() + 32;
    let mut sql = String::with_capacity(length);
    let mut params_before = 0;
    for (i, unit) in units.iter().enumerate() {
        let text = unit.sql.trim_end();
        let text = text.strip_suffix(';').unwrap_or(text).trim_end();
        if text.is_empty() || !execute::ends_plainly(text.as_bytes()) {
            return None;
        }
        let renumbered = match spec.dialect {
            Dialect::Postgres if params_before > 0 && !unit.params.is_empty() => {
                Some(numbered_on(text, params_before)?)
            }
            _ => None,
        };
        params_before += unit.params.len();
        if i > 0 {
            sql.push_str(" UNION ALL ");
        }
        // The line break ends a line comment the text may close with.
        sql.push('(');
        sql.push_str(renumbered.as_deref().unwrap_or(text));
        sql.push_str("\n)");
    }
    sql.push_str(" ORDER BY ");
    for (i, (key, at)) in spec.order_by.iter().zip(order).enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(itoa::Buffer::new().format(at + 1));
        if key.descending {
            sql.push_str(" DESC");
        }
        match key.nulls_first {
            Some(true) => sql.push_str(" NULLS FIRST"),
            Some(false) => sql.push_str(" NULLS LAST"),
            None => {}
        }
    }
    if let Some(limit) = spec.limit {
        sql.push_str(" LIMIT ");
        sql.push_str(itoa::Buffer::new().format(limit.saturating_add(spec.offset)));
    }
    Some(sql)
}

/// PostgreSQL `text` with each placeholder `$n` written `$(n + by)`; `None` where the scan
/// cannot tell a placeholder with certainty (an escape string, dollar quoting, a nested
/// comment). Statements prepared once and run many times pass here on every run: the
/// router's tokenizer costs some 30k instructions a statement, this scan a few hundred.
fn numbered_on(text: &str, by: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 8);
    let (mut copied, mut i) = (0, 0);
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    while let Some(&b) = bytes.get(i) {
        i = match b {
            b'\'' if i > 0 && matches!(bytes[i - 1], b'e' | b'E') => return None,
            b'\'' | b'"' => {
                // A doubled quote inside is two runs, one after the other.
                i + 1 + bytes.get(i + 1..)?.iter().position(|&c| c == b)? + 1
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => bytes[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(bytes.len(), |n| i + n),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = i + 2 + text.get(i + 2..)?.find("*/")?;
                if text.get(i + 2..end)?.contains("/*") {
                    return None;
                }
                end + 2
            }
            b'$' if i > 0 && word(bytes[i - 1]) => i + 1,
            b'$' => {
                let digits = bytes[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                if digits == 0 {
                    return None;
                }
                let n: usize = text.get(i + 1..i + 1 + digits)?.parse().ok()?;
                out.push_str(text.get(copied..i)?);
                out.push('$');
                out.push_str(itoa::Buffer::new().format(n + by));
                copied = i + 1 + digits;
                copied
            }
            _ => i + 1,
        };
    }
    out.push_str(text.get(copied..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use keyshard_router::merge::{ColumnRef, SortKey};
    use keyshard_types::Value;

    fn spec(order_by: Vec<SortKey>, offset: u64, limit: Option<u64>) -> MergeSpec {
        MergeSpec {
            order_by,
            offset,
            limit,
            ..crate::merge::test_support::spec(Dialect::Postgres)
        }
    }

    fn unit(sql: &str) -> ExecutionUnit {
        ExecutionUnit {
            data_source: "ds".into(),
            table: "t_0".into(),
            sql: sql.into(),
            params: Vec::new(),
            rows: Vec::new(),
            binary_results: false,
        }
    }

    #[test]
    fn units_become_one_union_ordered_by_position() {
        let keys = vec![
            SortKey {
                column: ColumnRef::Index(0),
                descending: true,
                nulls_first: None,
            },
            SortKey {
                column: ColumnRef::Name("b".into()),
                descending: false,
                nulls_first: Some(true),
            },
        ];
        let (a, b) = (
            unit("SELECT a, b FROM t_0 ORDER BY a DESC LIMIT 5;\n"),
            unit("SELECT a, b FROM t_1 ORDER BY a DESC LIMIT 5 -- it's"),
        );
        assert_eq!(
            union_text(&spec(keys, 2, Some(3)), &[&a, &b], &[0, 1]).as_deref(),
            Some(
                "(SELECT a, b FROM t_0 ORDER BY a DESC LIMIT 5\n) UNION ALL \
                 (SELECT a, b FROM t_1 ORDER BY a DESC LIMIT 5 -- it's\n) \
                 ORDER BY 1 DESC, 2 NULLS FIRST LIMIT 5"
            )
        );
        // PostgreSQL's placeholders of a later unit number on from the earlier units'.
        let mut a = unit("SELECT a FROM t_0 WHERE u = $1 AND s = '$1' ORDER BY a LIMIT $2");
        a.params = vec![Value::Int(1), Value::Int(3)];
        let mut b = unit("SELECT a FROM t_1 WHERE u = $1 AND s = '$1' ORDER BY a LIMIT $2");
        b.params = a.params.clone();
        let keys = vec![SortKey {
            column: ColumnRef::Index(0),
            descending: false,
            nulls_first: None,
        }];
        assert_eq!(
            union_text(&spec(keys, 0, Some(3)), &[&a, &b], &[0]).as_deref(),
            Some(
                "(SELECT a FROM t_0 WHERE u = $1 AND s = '$1' ORDER BY a LIMIT $2\n) UNION ALL \
                 (SELECT a FROM t_1 WHERE u = $3 AND s = '$1' ORDER BY a LIMIT $4\n) \
                 ORDER BY 1 LIMIT 3"
            )
        );
        let commented = unit("SELECT a FROM t_1 WHERE s = 'x' -- note");
        let keys = vec![SortKey {
            column: ColumnRef::Index(0),
            descending: false,
            nulls_first: None,
        }];
        assert_eq!(
            union_text(&spec(keys, 0, None), &[&a, &commented], &[0]),
            None
        );
    }

    #[test]
    fn placeholders_number_on_outside_quotes_and_comments() {
        assert_eq!(
            numbered_on("SELECT a$1, $2 FROM t WHERE s = '$1''$2' AND \"$1\" = $1 -- $1\n/* $2 */ LIMIT $10", 3)
                .as_deref(),
            Some("SELECT a$1, $5 FROM t WHERE s = '$1''$2' AND \"$1\" = $4 -- $1\n/* $2 */ LIMIT $13")
        );
        for unsure in [
            "SELECT E'\\'$1' FROM t",
            "SELECT $$ $1 $$ FROM t",
            "SELECT $q$x$q$",
            "SELECT /* /* $1 */ */ $1",
            "SELECT 'open $1",
        ] {
            assert_eq!(numbered_on(unsure, 1), None, "{unsure}");
        }
    }

    #[test]
    fn only_value_ordered_sort_keys_combine() {
        let columns = vec![
            Column::new(
                "id",
                SqlType::Int {
                    bytes: 8,
                    unsigned: false,
                },
            ),
            Column::new("created_at", SqlType::DateTime),
            Column::new("name", SqlType::VarChar),
            Column::new("kind", SqlType::Enum),
        ];
        let key = |column: ColumnRef| SortKey {
            column,
            descending: false,
            nulls_first: None,
        };
        let by = |keys| order_by(&spec(keys, 0, None), &columns);
        assert_eq!(
            by(vec![
                key(ColumnRef::Name("CREATED_AT".into())),
                key(ColumnRef::Index(0))
            ]),
            Some(vec![1, 0])
        );
        assert_eq!(
            by(vec![key(ColumnRef::Index(0)), key(ColumnRef::Index(2))]),
            None
        );
        assert_eq!(by(vec![key(ColumnRef::Index(3))]), None);
        assert_eq!(by(vec![key(ColumnRef::Index(4))]), None);
        assert_eq!(by(vec![key(ColumnRef::Name("missing".into()))]), None);
    }
}
