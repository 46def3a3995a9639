//! `EXPLAIN` of a statement on sharded tables: each data node's own plan of the statement it is
//! sent. The statement is planned as it would run, and each unit's text keeps the `EXPLAIN …`
//! written before it (the units are rendered from the whole text), so every node explains the
//! actual SQL it would run.

use sqlparser::ast::{AnalyzeFormatKind, Statement};
use sqlparser::parser::Parser;

use crate::plan::Plan;
use crate::{Metadata, Prepared, RouteError, Router, query};

/// An `EXPLAIN` over the data nodes of sharded tables.
#[derive(Debug, Clone)]
pub struct Explain {
    /// One unit per node, each an `EXPLAIN` of that node's statement.
    pub plan: Plan,
    /// The plans are text lines (PostgreSQL's default format), which a header line per node
    /// may label; other formats are documents, passed on as they are.
    pub text: bool,
}

/// Where `sql` starts with MariaDB's `ANALYZE` of a statement (not `ANALYZE TABLE`): the
/// keyword's offset.
pub(crate) fn mariadb_analyze(sql: &str) -> Option<usize> {
    let at = sql.len() - sql.trim_start().len();
    let rest = sql.get(at..)?;
    if !rest.get(..7)?.eq_ignore_ascii_case("analyze") {
        return None;
    }
    let next = rest[7..].trim_start();
    let word: String = next
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect::<String>()
        .to_ascii_lowercase();
    (next.len() < rest.len() - 7
        && matches!(
            word.as_str(),
            "select" | "with" | "update" | "delete" | "insert" | "replace" | "format"
        ))
    .then_some(at)
}

impl Router {
    /// Plans `EXPLAIN [ANALYZE] inner`; `None` when `inner` reads no sharded table (it then
    /// goes where such statements go, as written).
    pub(crate) fn explain(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        explain: &Statement,
        metadata: &dyn Metadata,
    ) -> Result<Option<Prepared>, RouteError> {
        let Statement::Explain {
            statement: inner,
            analyze,
            format,
            options,
            ..
        } = explain
        else {
            return Ok(None);
        };
        if !matches!(
            inner.as_ref(),
            Statement::Query(_) | Statement::Update(_) | Statement::Delete(_)
        ) {
            return Ok(None);
        }
        let (tables, _) = query::tables(sql, inner, |t| self.table(t).cloned())?;
        if tables.rules.is_empty() {
            return Ok(None);
        }
        let option = |name: &str| {
            options
                .iter()
                .flatten()
                .find(|o| o.name.value.eq_ignore_ascii_case(name))
        };
        let runs = *analyze || option("analyze").is_some();
        if runs && !matches!(inner.as_ref(), Statement::Query(_)) {
            return Err(RouteError::Unsupported(
                "EXPLAIN ANALYZE of a write to sharded tables (it would make the write on each \
                 node, outside any transaction of the statement's)"
                    .into(),
            ));
        }
        let query = match self.prepare_query(sql, parser, inner, metadata, None)? {
            Prepared::Query(query) => query,
            _ => return Ok(None),
        };
        if query.param_count() > 0 {
            return Err(RouteError::Unsupported(
                "EXPLAIN with parameters of a statement on sharded tables".into(),
            ));
        }
        let text = match (format, option("format")) {
            (Some(AnalyzeFormatKind::Keyword(f) | AnalyzeFormatKind::Assignment(f)), _) => {
                f.to_string().eq_ignore_ascii_case("text")
            }
            (None, Some(o)) => o
                .arg
                .as_ref()
                .is_some_and(|a| a.to_string().eq_ignore_ascii_case("text")),
            (None, None) => true,
        };
        let bound = query.bind(&[])?;
        if bound.gather.is_some() {
            return Err(RouteError::Unsupported(
                "EXPLAIN of a read whose rows are gathered from several shards (PREVIEW shows \
                 how it runs)"
                    .into(),
            ));
        }
        Ok(Some(Prepared::Explain(Explain {
            plan: Plan::of_units(bound.units),
            text,
        })))
    }
}
