//! Prepare: an INSERT's AST and tokens → what every execution needs (rows, key slots,
//! sharding sources and the template), so that executing only binds, generates and renders.

use std::ops::Range;
use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{
    Assignment, AssignmentTarget, Expr, Insert, ObjectName, ObjectNamePart, SetExpr, Spanned,
    UnaryOperator, Value as SqlValue,
};

use crate::locate::Locator;
use crate::plan::{KeySpec, PreparedInsert, RowSpec, Source};
use crate::template::{Edit, Piece, Template, push_identifier};
use crate::tokens::{Kind, Tokens};
use crate::value::Value;
use crate::{Dialect, Metadata, RouteError};

/// The statement's values: rows of `VALUES`, or the one row of `INSERT … SET`.
enum Body<'a> {
    Values {
        rows: Vec<(&'a [Expr], Range<SpanPair>)>,
        explicit_row: bool,
    },
    Set(&'a [Assignment]),
}

/// A row's `(` and `)` positions as sqlparser reports them.
type SpanPair = sqlparser::tokenizer::Location;

pub(crate) fn prepare(
    sql: &str,
    dialect: Dialect,
    parser: &sqlparser::parser::Parser<'_>,
    insert: &Insert,
    name: &ObjectName,
    rule: &Arc<TableRule>,
    metadata: &dyn Metadata,
) -> Result<PreparedInsert, RouteError> {
    reject_unsupported(insert)?;
    let key_column = rule.key_generate.as_ref().map(|k| k.column.as_str());
    let body = body(insert, key_column)?;

    let mut locator = Locator::new(sql);
    let name_span = name.span();
    let name_range = locator.offset(name_span.start)?..locator.offset(name_span.end)?;
    let table_quote = match name.0.last() {
        Some(ObjectNamePart::Identifier(ident)) => ident.quote_style,
        _ => None,
    };

    // Columns, and the values of each row in column order.
    let rows: Vec<&[Expr]>;
    let values_of_set: Vec<Expr>;
    let mut columns: Vec<String> = Vec::new();
    let mut synthesised = false;
    match &body {
        Body::Set(assignments) => {
            for a in *assignments {
                match &a.target {
                    AssignmentTarget::ColumnName(column) => columns.push(last_ident(column)),
                    AssignmentTarget::Tuple(_) => {
                        return Err(RouteError::Unsupported(
                            "tuple assignment in INSERT … SET".into(),
                        ));
                    }
                }
            }
            values_of_set = assignments.iter().map(|a| a.value.clone()).collect();
            rows = vec![&values_of_set];
        }
        Body::Values { rows: values, .. } => {
            rows = values.iter().map(|(exprs, _)| *exprs).collect();
            let width = rows.first().map_or(0, |r| r.len());
            if width == 0 {
                return Err(RouteError::Unsupported(
                    "INSERT with an empty value list".into(),
                ));
            }
            if let Some(bad) = rows.iter().position(|r| r.len() != width) {
                return Err(RouteError::ColumnCount { row: bad + 1 });
            }
            if insert.columns.is_empty() {
                let visible = metadata.visible_columns(&rule.logic_table).ok_or_else(|| {
                    RouteError::UnknownColumns {
                        table: rule.logic_table.clone(),
                    }
                })?;
                let key_visible =
                    key_column.is_some_and(|k| visible.iter().any(|c| c.eq_ignore_ascii_case(k)));
                if width == visible.len() {
                    columns = visible;
                } else if key_visible && width + 1 == visible.len() {
                    // ShardingSphere's rule: one value short of the visible columns means the
                    // key is left out; the other columns keep their order.
                    columns = visible
                        .into_iter()
                        .filter(|c| key_column.is_none_or(|k| !c.eq_ignore_ascii_case(k)))
                        .collect();
                    synthesised = true;
                } else {
                    return Err(RouteError::ColumnCount { row: 1 });
                }
            } else {
                columns = insert.columns.iter().map(last_ident).collect();
                if width != columns.len() {
                    return Err(RouteError::ColumnCount { row: 1 });
                }
            }
        }
    }

    let position = |column: &str| columns.iter().position(|c| c.eq_ignore_ascii_case(column));
    let key_index = key_column.and_then(position);
    let tokens = Tokens::scan(parser, &mut locator, dialect, &rule.logic_table)?;

    let mut edits = vec![Edit {
        range: name_range.clone(),
        piece: Piece::Table(table_quote),
    }];
    for (range, kind) in &tokens.significant {
        if let Kind::TableQualifier(quote) = kind
            && !(name_range.start <= range.start && range.end <= name_range.end)
        {
            edits.push(Edit {
                range: range.clone(),
                piece: Piece::Table(*quote),
            });
        }
    }

    // Where each row's text is, and where an absent key goes.
    let mut row_ranges = Vec::with_capacity(rows.len());
    let mut key_inserts = Vec::with_capacity(rows.len());
    let (row_separator, append_key) = match &body {
        Body::Values {
            rows: values,
            explicit_row,
        } => {
            for (_, parens) in values {
                let open = locator.offset(parens.start)?;
                let close = locator.offset(parens.end)?;
                row_ranges.push(open..close + 1);
                key_inserts.push(close);
            }
            (if *explicit_row { ", ROW" } else { ", " }, ", ".to_owned())
        }
        Body::Set(assignments) => {
            let first = assignments
                .first()
                .ok_or(RouteError::Internal("INSERT … SET without assignments"))?;
            let start = locator.offset(first.target.span().start)?;
            let last_value_start = assignments
                .last()
                .map(|a| locator.offset(a.value.span().start))
                .transpose()?
                .unwrap_or(start);
            let end = tokens.list_end(last_value_start);
            row_ranges.push(start..end);
            key_inserts.push(end);
            let mut append = ", ".to_owned();
            if let Some(k) = key_column {
                push_identifier(&mut append, k, None);
            }
            append.push_str(" = ");
            (", ", append)
        }
    };

    // The column list grows by the key column, or is written out when there was none.
    let key_absent = key_column.is_some() && key_index.is_none();
    if let (true, Some(key)) = (key_absent, key_column) {
        if synthesised {
            let mut list = String::from("(");
            for c in &columns {
                push_identifier(&mut list, c, quote_for(c, dialect));
                list.push_str(", ");
            }
            push_identifier(&mut list, key, quote_for(key, dialect));
            list.push(')');
            edits.push(Edit {
                range: name_range.end..name_range.end,
                piece: Piece::Text(list.into()),
            });
        } else if let Some(last) = insert.columns.last() {
            let end = locator.offset(last.span().end)?;
            let quote = match last.0.last() {
                Some(ObjectNamePart::Identifier(ident)) => ident.quote_style,
                _ => None,
            };
            let mut text = String::from(", ");
            push_identifier(&mut text, key, quote);
            edits.push(Edit {
                range: end..end,
                piece: Piece::Text(text.into()),
            });
        }
    }

    let zero_means_generate = dialect == Dialect::MySql;
    let mut key_params = Vec::new();
    let mut specs = Vec::with_capacity(rows.len());
    for (row, exprs) in rows.iter().enumerate() {
        let key = match (key_column, key_index) {
            (None, _) => KeySpec::None,
            (Some(_), None) => {
                edits.push(Edit {
                    range: key_inserts[row]..key_inserts[row],
                    piece: Piece::Text(append_key.as_str().into()),
                });
                edits.push(Edit {
                    range: key_inserts[row]..key_inserts[row],
                    piece: Piece::Key,
                });
                KeySpec::Generate
            }
            (Some(_), Some(k)) => match classify(&exprs[k], &tokens, &mut locator)? {
                Classified::Param(i) => {
                    key_params.push(i.1);
                    KeySpec::ParamOrGenerate(i.0)
                }
                Classified::Absent { range, .. } => {
                    edits.push(Edit {
                        range,
                        piece: Piece::Key,
                    });
                    KeySpec::Generate
                }
                Classified::Value(v) if v.means_generate(zero_means_generate) => {
                    let span = exprs[k].span();
                    let range = locator.offset(span.start)?..locator.offset(span.end)?;
                    edits.push(Edit {
                        range,
                        piece: Piece::Key,
                    });
                    KeySpec::Generate
                }
                Classified::Value(v) => KeySpec::Given(Source::Value(v)),
                Classified::Expr => KeySpec::Given(Source::Expr),
            },
        };
        let source =
            |column: &str, locator: &mut Locator<'_>| -> Result<Option<Source>, RouteError> {
                if key_column.is_some_and(|k| k.eq_ignore_ascii_case(column)) {
                    return Ok(Some(Source::Key));
                }
                let Some(i) = position(column) else {
                    return Ok(None);
                };
                Ok(Some(match classify(&exprs[i], &tokens, locator)? {
                    Classified::Param((index, _)) => Source::Param(index),
                    Classified::Value(v) => Source::Value(v),
                    Classified::Absent { null: true, .. } => Source::Value(Value::Null),
                    Classified::Absent { null: false, .. } | Classified::Expr => Source::Expr,
                }))
            };
        let database = match &rule.database_strategy {
            Some(s) => source(&s.column, &mut locator)?,
            None => None,
        };
        let table = match &rule.table_strategy {
            Some(s) => source(&s.column, &mut locator)?,
            None => None,
        };
        specs.push(RowSpec {
            key,
            database,
            table,
            has_params: tokens.has_placeholder_in(&row_ranges[row]),
        });
    }

    for placeholder in &tokens.placeholders {
        let piece = if key_params.contains(&placeholder.range.start) {
            Piece::KeyParam(placeholder.index)
        } else {
            Piece::Param(placeholder.index)
        };
        edits.push(Edit {
            range: placeholder.range.clone(),
            piece,
        });
    }

    let template = Template::build(sql.len(), &row_ranges, row_separator, edits)?;
    Ok(PreparedInsert {
        sql: sql.into(),
        dialect,
        rule: Arc::clone(rule),
        template,
        rows: specs,
        generator: rule.key_generate.as_ref().map(|k| Arc::clone(&k.generator)),
        param_count: tokens.param_count,
    })
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
            Ok(Body::Values {
                rows: values
                    .rows
                    .iter()
                    .map(|r| {
                        (
                            r.content.as_slice(),
                            r.opening_token.0.span.start..r.closing_token.0.span.start,
                        )
                    })
                    .collect(),
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

fn last_ident(name: &ObjectName) -> String {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(ident)) => ident.value.clone(),
        _ => name.to_string(),
    }
}

/// Column names from metadata are quoted only when they need it.
fn quote_for(name: &str, dialect: Dialect) -> Option<char> {
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    match (plain, dialect) {
        (true, _) => None,
        (false, Dialect::MySql) => Some('`'),
        (false, Dialect::Postgres) => Some('"'),
    }
}

/// What a value expression means to the router.
enum Classified {
    /// A placeholder: (parameter index, byte offset of the placeholder).
    Param((usize, usize)),
    /// `NULL` (`null: true`) or `DEFAULT`, at this byte range.
    Absent { range: Range<usize>, null: bool },
    /// A literal.
    Value(Value),
    /// Anything else: a function call, arithmetic, a subquery.
    Expr,
}

fn classify(
    expr: &Expr,
    tokens: &Tokens,
    locator: &mut Locator<'_>,
) -> Result<Classified, RouteError> {
    Ok(match expr {
        Expr::Value(v) => match &v.value {
            SqlValue::Placeholder(_) => {
                let start = locator.offset(v.span.start)?;
                let placeholder = tokens.placeholder_at(start).ok_or(RouteError::Internal(
                    "a placeholder the tokenizer did not see",
                ))?;
                Classified::Param((placeholder.index, start))
            }
            SqlValue::Null => Classified::Absent {
                range: locator.offset(v.span.start)?..locator.offset(v.span.end)?,
                null: true,
            },
            other => literal(other, false).map_or(Classified::Expr, Classified::Value),
        },
        Expr::Identifier(ident)
            if ident.quote_style.is_none() && ident.value.eq_ignore_ascii_case("DEFAULT") =>
        {
            Classified::Absent {
                range: locator.offset(ident.span.start)?..locator.offset(ident.span.end)?,
                null: false,
            }
        }
        // `-0` stays an expression: its span leaves out the sign, so it cannot be replaced.
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match &**expr {
            Expr::Value(v) => match literal(&v.value, true) {
                Some(Value::Int(0)) | None => Classified::Expr,
                Some(value) => Classified::Value(value),
            },
            _ => Classified::Expr,
        },
        Expr::Nested(inner) => match classify(inner, tokens, locator)? {
            // `(NULL)` is a value, not a keyword to replace; it still means "generate" but
            // is left to the literal rule below.
            Classified::Absent { .. } => Classified::Value(Value::Null),
            other => other,
        },
        _ => Classified::Expr,
    })
}

fn literal(value: &SqlValue, negative: bool) -> Option<Value> {
    match value {
        SqlValue::Number(text, _) => {
            let text = text.as_str();
            if let Ok(v) = text.parse::<i64>() {
                return Some(Value::Int(if negative { v.checked_neg()? } else { v }));
            }
            if !negative && let Ok(v) = text.parse::<u64>() {
                return Some(Value::UInt(v));
            }
            let v = text.parse::<f64>().ok()?;
            Some(Value::Double(if negative { -v } else { v }))
        }
        SqlValue::SingleQuotedString(s)
        | SqlValue::DoubleQuotedString(s)
        | SqlValue::EscapedStringLiteral(s)
        | SqlValue::NationalStringLiteral(s)
            if !negative =>
        {
            Some(Value::Text(s.clone()))
        }
        SqlValue::Boolean(b) if !negative => Some(Value::Int(i64::from(*b))),
        _ => None,
    }
}
