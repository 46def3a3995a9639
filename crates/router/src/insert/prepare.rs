//! Prepare: an INSERT's AST and tokens → what every execution needs (rows, key slots,
//! sharding sources and the template), so that executing only binds, generates and renders.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{
    Assignment, AssignmentTarget, Expr, Insert, ObjectName, SetExpr, Spanned, UnaryOperator,
    Value as SqlValue,
};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Location;

use super::classify::{Classified, classify};
use super::{KeySpec, PreparedInsert, RowSpec, Source};
use crate::literal::literal_of;
use crate::locate::Locator;
use crate::names::{last_ident, push_identifier, quote_for, quote_of};
use crate::route::Level;
use crate::template::{Edit, Piece, Template};
use crate::tokens::{self, Tokens};
use crate::{Metadata, RouteError};
use keyshard_types::Dialect;
use keyshard_types::Value;

/// The statement's values: rows of `VALUES`, or the one row of `INSERT … SET`.
enum Body<'a> {
    Values {
        /// Each row's values and the positions of its `(` and `)`.
        rows: Vec<(&'a [Expr], Location, Location)>,
        explicit_row: bool,
    },
    Set(&'a [Assignment]),
}

/// One row's values in column order.
#[derive(Clone, Copy)]
enum Row<'a> {
    Values(&'a [Expr]),
    Set(&'a [Assignment]),
}

impl<'a> Row<'a> {
    fn get(self, column: usize) -> Option<&'a Expr> {
        match self {
            Row::Values(exprs) => exprs.get(column),
            Row::Set(assignments) => assignments.get(column).map(|a| &a.value),
        }
    }
}

/// The columns the rows' values are for, and whether the statement names them.
struct Columns<'a> {
    names: Vec<Cow<'a, str>>,
    /// No column list and the key left out: the list is written out, key last.
    synthesised: bool,
}

impl Columns<'_> {
    fn position(&self, column: &str) -> Option<usize> {
        self.names
            .iter()
            .position(|c| c.eq_ignore_ascii_case(column))
    }
}

/// Where each row's text is, and where an absent key is added to it.
struct Layout {
    row_ranges: Vec<Range<usize>>,
    key_inserts: Vec<usize>,
    row_separator: &'static str,
    /// Text before an appended key: `, ` in a row, `, key = ` in a SET list.
    key_prefix: Box<str>,
}

pub(crate) fn prepare(
    sql: &str,
    dialect: Dialect,
    parser: &Parser<'_>,
    insert: &Insert,
    name: &ObjectName,
    rule: &Arc<TableRule>,
    metadata: &dyn Metadata,
) -> Result<PreparedInsert, RouteError> {
    reject_unsupported(insert)?;
    let key_column = rule.key_generate.as_ref().map(|k| k.column.as_str());
    let body = body(insert, key_column)?;
    let rows: Vec<Row<'_>> = match &body {
        Body::Values { rows, .. } => rows
            .iter()
            .map(|(exprs, _, _)| Row::Values(exprs))
            .collect(),
        Body::Set(assignments) => vec![Row::Set(assignments)],
    };
    let columns = columns(&body, insert, rule, key_column, metadata)?;
    let key_index = key_column.and_then(|k| columns.position(k));

    let mut locator = Locator::new(sql);
    let tokens = Tokens::scan(parser, &mut locator, dialect, &[&rule.logic_table])?;
    let layout = layout(&body, key_column, parser, &mut locator)?;

    // PostgreSQL's schema stays (a restored pg_dump inserts into `public.t_order` with an
    // empty search_path); MySQL's qualifier is the logical database, which shards do not have.
    let name_span = match name.0.last() {
        Some(sqlparser::ast::ObjectNamePart::Identifier(ident)) if dialect == Dialect::Postgres => {
            ident.span
        }
        _ => name.span(),
    };
    let name_range = locator.offset(name_span.start)?..locator.offset(name_span.end)?;
    let mut edits = vec![Edit {
        range: name_range.clone(),
        piece: Piece::Table(0, quote_of(name)),
    }];
    for (range, quote, _) in &tokens.qualifiers {
        if !(name_range.start <= range.start && range.end <= name_range.end) {
            edits.push(Edit {
                range: range.clone(),
                piece: Piece::Table(0, *quote),
            });
        }
    }
    if let (Some(key), None) = (key_column, key_index) {
        edits.extend(column_list_edit(
            insert,
            &columns,
            key,
            name_range.end,
            dialect,
            &mut locator,
        )?);
    }

    let hint = crate::hint::read(sql)?;
    let mut key_placeholders = Vec::new();
    let mut specs = Vec::with_capacity(rows.len());
    for (row, values) in rows.iter().enumerate() {
        let key = match (key_column, key_index) {
            (None, _) => KeySpec::None,
            (Some(_), None) => {
                let at = layout.key_inserts[row];
                edits.push(Edit {
                    range: at..at,
                    piece: Piece::Text(layout.key_prefix.clone()),
                });
                edits.push(Edit {
                    range: at..at,
                    piece: Piece::Key,
                });
                KeySpec::Generate
            }
            (Some(_), Some(k)) => {
                let expr = values
                    .get(k)
                    .ok_or_else(|| RouteError::ColumnCount { row: row + 1 })?;
                match classify(expr, &tokens, &mut locator, dialect)? {
                    Classified::Param { index, at } => {
                        key_placeholders.push(at);
                        KeySpec::ParamOrGenerate(index)
                    }
                    Classified::Generate(range) | Classified::Default(range) => {
                        edits.push(Edit {
                            range,
                            piece: Piece::Key,
                        });
                        KeySpec::Generate
                    }
                    Classified::Value(v) => KeySpec::Given(Source::Value(v)),
                    Classified::Expr => KeySpec::Given(Source::Expr),
                }
            }
        };
        let mut source = |column: &str| -> Result<Option<Source>, RouteError> {
            if key_column.is_some_and(|k| k.eq_ignore_ascii_case(column)) {
                return Ok(Some(Source::Key));
            }
            let Some(expr) = columns.position(column).and_then(|i| values.get(i)) else {
                return Ok(None);
            };
            Ok(Some(
                match classify(expr, &tokens, &mut locator, dialect)? {
                    Classified::Param { index, .. } => Source::Param(index),
                    Classified::Value(v) => Source::Value(v),
                    // NULL, or MySQL's 0, is a value in any column but the key.
                    Classified::Generate(_) => {
                        Source::Value(literal_of(expr).unwrap_or(Value::Null))
                    }
                    Classified::Default(_) | Classified::Expr => Source::Expr,
                },
            ))
        };
        // A level's value, or a complex strategy's values (one per column).
        let mut level_sources = |level: Level| -> Result<_, RouteError> {
            Ok(match level.strategy(rule) {
                // A hint strategy's value is the statement's hint, for every row.
                Some(strategy) if strategy.is_hint() => (
                    hint.as_ref()
                        .and_then(|h| h.value(&rule.logic_table, &strategy.column))
                        .cloned()
                        .map(Source::Value),
                    Vec::new(),
                ),
                Some(strategy) if strategy.is_complex() => (
                    None,
                    strategy
                        .columns
                        .iter()
                        .map(|column| source(column))
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                Some(strategy) => (source(&strategy.column)?, Vec::new()),
                None => (None, Vec::new()),
            })
        };
        let (database, database_columns) = level_sources(Level::Database)?;
        let (table, table_columns) = level_sources(Level::Table)?;
        specs.push(RowSpec {
            key,
            database,
            table,
            database_columns,
            table_columns,
            has_params: tokens.has_placeholder_in(&layout.row_ranges[row]),
        });
    }

    for placeholder in &tokens.placeholders {
        let piece = if key_placeholders.contains(&placeholder.range.start) {
            Piece::KeyParam(placeholder.index)
        } else {
            Piece::Param(placeholder.index)
        };
        edits.push(Edit {
            range: placeholder.range.clone(),
            piece,
        });
    }

    // A batch's parameters are its rows' in turn: none may be outside the row.
    let joins_others = joins_others(insert, &body, key_index, &specs)
        && tokens
            .placeholders
            .iter()
            .all(|p| (layout.row_ranges.first()).is_some_and(|row| row.contains(&p.range.start)));
    let value_columns = value_columns(&rows, &columns, &tokens, &mut locator)?;
    let template = Template::build(sql.len(), &layout.row_ranges, layout.row_separator, edits)?;
    Ok(PreparedInsert {
        sql: sql.into(),
        dialect,
        rule: Arc::clone(rule),
        template,
        rows: specs,
        generator: rule.key_generate.as_ref().map(|k| Arc::clone(&k.generator)),
        param_count: tokens.param_count,
        value_columns,
        returning: insert.returning.is_some(),
        joins_others,
    })
}

/// Whether an execution may share one multi-row INSERT with other sessions' rows: one row of
/// plain values and nothing else the statement does, so that its row inserted beside others
/// is what it would have been alone. A generated key's slot may hold anything (`DEFAULT`).
fn joins_others(insert: &Insert, body: &Body<'_>, key: Option<usize>, specs: &[RowSpec]) -> bool {
    let Body::Values {
        rows,
        explicit_row: false,
    } = body
    else {
        return false;
    };
    let ([(values, _, _)], [spec]) = (rows.as_slice(), specs) else {
        return false;
    };
    let generated = matches!(spec.key, KeySpec::Generate)
        .then_some(key)
        .flatten();
    insert.on.is_none()
        && insert.or.is_none()
        && !insert.ignore
        && !insert.replace_into
        && insert.priority.is_none()
        && insert.overriding.is_none()
        && insert.returning.is_none()
        && insert.insert_alias.is_none()
        && values
            .iter()
            .enumerate()
            .all(|(i, value)| Some(i) == generated || is_plain(value))
}

/// A literal, a parameter (a shape's cut literal), a signed number or a cast of one: a value
/// that runs nothing.
fn is_plain(expr: &Expr) -> bool {
    match expr {
        Expr::Value(_) | Expr::TypedString(_) => true,
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => matches!(**expr, Expr::Value(_)),
        Expr::Cast { expr, .. } | Expr::Nested(expr) => is_plain(expr),
        _ => false,
    }
}

/// The column each parameter is the whole value of, in parameter order; `None` when some
/// parameter is anything else: part of an expression, outside the rows, or used twice.
fn value_columns(
    rows: &[Row<'_>],
    columns: &Columns<'_>,
    tokens: &Tokens,
    locator: &mut Locator<'_>,
) -> Result<Option<Box<[Box<str>]>>, RouteError> {
    let mut found: Vec<Option<Box<str>>> = vec![None; tokens.param_count];
    for row in rows {
        for (i, name) in columns.names.iter().enumerate() {
            let Some(Expr::Value(v)) = row.get(i) else {
                continue;
            };
            if !matches!(v.value, SqlValue::Placeholder(_)) {
                continue;
            }
            let index = tokens.placeholder_at(locator.offset(v.span.start)?)?;
            match found.get_mut(index) {
                Some(slot @ None) => *slot = Some(name.as_ref().into()),
                _ => return Ok(None),
            }
        }
    }
    Ok(found.into_iter().collect())
}

fn reject_unsupported(insert: &Insert) -> Result<(), RouteError> {
    let unsupported = if insert.partitioned.is_some() || !insert.after_columns.is_empty() {
        Some("INSERT … PARTITION")
    } else if insert.overwrite || insert.has_table_keyword || insert.by_name {
        Some("this INSERT form")
    } else if insert.output.is_some() {
        Some("INSERT … OUTPUT")
    } else if insert.settings.is_some() || insert.format_clause.is_some() {
        Some("INSERT … SETTINGS/FORMAT")
    } else {
        None
    };
    unsupported.map_or(Ok(()), |what| Err(RouteError::Unsupported(what.into())))
}

fn body<'a>(insert: &'a Insert, key_column: Option<&str>) -> Result<Body<'a>, RouteError> {
    if !insert.assignments.is_empty() {
        return Ok(Body::Set(&insert.assignments));
    }
    let Some(query) = &insert.source else {
        return Err(RouteError::Unsupported("INSERT … DEFAULT VALUES".into()));
    };
    match &*query.body {
        SetExpr::Values(values)
            if query.with.is_none() && query.order_by.is_none() && query.limit_clause.is_none() =>
        {
            let rows = values
                .rows
                .iter()
                .map(|r| {
                    (
                        r.content.as_slice(),
                        r.opening_token.0.span.start,
                        r.closing_token.0.span.start,
                    )
                })
                .collect();
            Ok(Body::Values {
                rows,
                explicit_row: values.explicit_row,
            })
        }
        _ => {
            let names_key = key_column.is_none_or(|k| {
                insert
                    .columns
                    .iter()
                    .any(|c| last_ident(c).eq_ignore_ascii_case(k))
            });
            if names_key {
                Err(RouteError::Unsupported("INSERT … SELECT".into()))
            } else {
                Err(RouteError::InsertSelectWithoutKey)
            }
        }
    }
}

/// The columns of the values: named by the statement, or (no column list) the table's visible
/// columns — all of them, or all but the key when each row is one value short.
fn columns<'a>(
    body: &Body<'a>,
    insert: &'a Insert,
    rule: &TableRule,
    key_column: Option<&str>,
    metadata: &dyn Metadata,
) -> Result<Columns<'a>, RouteError> {
    let named = |names: Vec<Cow<'a, str>>| Columns {
        names,
        synthesised: false,
    };
    let rows = match body {
        Body::Set(assignments) => {
            return assignments
                .iter()
                .map(|a| match &a.target {
                    AssignmentTarget::ColumnName(column) => Ok(Cow::Borrowed(last_ident(column))),
                    AssignmentTarget::Tuple(_) => Err(RouteError::Unsupported(
                        "tuple assignment in INSERT … SET".into(),
                    )),
                })
                .collect::<Result<_, _>>()
                .map(named);
        }
        Body::Values { rows, .. } => rows,
    };
    let width = rows.first().map_or(0, |(r, _, _)| r.len());
    if width == 0 {
        return Err(RouteError::Unsupported(
            "INSERT with an empty value list".into(),
        ));
    }
    if let Some(bad) = rows.iter().position(|(r, _, _)| r.len() != width) {
        return Err(RouteError::ColumnCount { row: bad + 1 });
    }
    if !insert.columns.is_empty() {
        if width != insert.columns.len() {
            return Err(RouteError::ColumnCount { row: 1 });
        }
        return Ok(named(
            insert
                .columns
                .iter()
                .map(|c| Cow::Borrowed(last_ident(c)))
                .collect(),
        ));
    }
    let visible =
        metadata
            .visible_columns(&rule.logic_table)
            .ok_or_else(|| RouteError::UnknownColumns {
                table: rule.logic_table.clone(),
            })?;
    let is_key = |c: &str| key_column.is_some_and(|k| c.eq_ignore_ascii_case(k));
    if width == visible.len() {
        Ok(named(visible.into_iter().map(Cow::Owned).collect()))
    } else if width + 1 == visible.len() && visible.iter().any(|c| is_key(c)) {
        // ShardingSphere's rule: one value short of the visible columns means the key is left
        // out; the other columns keep their order.
        let names = visible
            .into_iter()
            .filter(|c| !is_key(c))
            .map(Cow::Owned)
            .collect();
        Ok(Columns {
            names,
            synthesised: true,
        })
    } else {
        Err(RouteError::ColumnCount { row: 1 })
    }
}

fn layout(
    body: &Body<'_>,
    key_column: Option<&str>,
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
) -> Result<Layout, RouteError> {
    match body {
        Body::Values { rows, explicit_row } => {
            let mut row_ranges = Vec::with_capacity(rows.len());
            let mut key_inserts = Vec::with_capacity(rows.len());
            for (_, open, close) in rows {
                let open = locator.offset(*open)?;
                let close = locator.offset(*close)?;
                row_ranges.push(open..close + 1);
                key_inserts.push(close);
            }
            // The first row's ROW keyword stays in the text before the rows.
            let row_separator = if *explicit_row { ", ROW" } else { ", " };
            Ok(Layout {
                row_ranges,
                key_inserts,
                row_separator,
                key_prefix: ", ".into(),
            })
        }
        Body::Set(assignments) => {
            let (Some(first), Some(last)) = (assignments.first(), assignments.last()) else {
                return Err(RouteError::Internal("INSERT … SET without assignments"));
            };
            let start = locator.offset(first.target.span().start)?;
            let last_value = locator.offset(last.value.span().start)?;
            let end = tokens::list_end(parser, locator, last_value)?;
            let mut key_prefix = String::from(", ");
            push_identifier(&mut key_prefix, key_column.unwrap_or_default(), None);
            key_prefix.push_str(" = ");
            Ok(Layout {
                row_ranges: std::iter::once(start..end).collect(),
                key_inserts: vec![end],
                row_separator: ", ",
                key_prefix: key_prefix.into(),
            })
        }
    }
}

/// Adds the key column to the statement's column list (quoted like its last column), or writes
/// the whole list right after the table name when the statement has none.
fn column_list_edit(
    insert: &Insert,
    columns: &Columns<'_>,
    key: &str,
    name_end: usize,
    dialect: Dialect,
    locator: &mut Locator<'_>,
) -> Result<Option<Edit>, RouteError> {
    if columns.synthesised {
        let mut list = String::from("(");
        for c in &columns.names {
            push_identifier(&mut list, c, quote_for(c, dialect));
            list.push_str(", ");
        }
        push_identifier(&mut list, key, quote_for(key, dialect));
        list.push(')');
        return Ok(Some(Edit {
            range: name_end..name_end,
            piece: Piece::Text(list.into()),
        }));
    }
    let Some(last) = insert.columns.last() else {
        // INSERT … SET: the key goes in with the assignments.
        return Ok(None);
    };
    let end = locator.offset(last.span().end)?;
    let mut text = String::from(", ");
    push_identifier(&mut text, key, quote_of(last));
    Ok(Some(Edit {
        range: end..end,
        piece: Piece::Text(text.into()),
    }))
}
