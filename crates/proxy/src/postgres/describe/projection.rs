//! The result columns a select or RETURNING list names, typed without running it: columns of
//! known tables, counts and extremes, casts to built-in types.

use keyshard_backend::Column;
use keyshard_config::DatabaseKind;
use keyshard_router::names::last_ident;
use keyshard_types::SqlType;
use sqlparser::ast::{Expr, FunctionArguments, SelectItem};

use super::description::Field;
use super::table_columns::find;
use crate::postgres::types::{column_oid, oid, oid_of};

/// The fields of a select or RETURNING list over `columns`; `None` when an item is beyond
/// what can be typed without running it.
pub(super) fn projection(items: &[SelectItem], columns: &[Column]) -> Option<Vec<Field>> {
    let mut fields = Vec::new();
    for item in items {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                if columns.is_empty() {
                    return None;
                }
                fields.extend(columns.iter().map(|c| Field::of_column(c, column_oid(c))));
            }
            SelectItem::UnnamedExpr(expr) => fields.push(expr_field(expr, columns)?),
            SelectItem::ExprWithAlias { expr, alias } => fields.push(Field {
                name: alias.value.clone(),
                ..expr_field(expr, columns)?
            }),
            _ => return None,
        }
    }
    Some(fields)
}

fn expr_field(expr: &Expr, columns: &[Column]) -> Option<Field> {
    match expr {
        Expr::Identifier(ident) => {
            let column = find(columns, &ident.value)?;
            Some(Field::of_column(column, column_oid(column)))
        }
        Expr::CompoundIdentifier(parts) => {
            let column = find(columns, &parts.last()?.value)?;
            Some(Field::of_column(column, column_oid(column)))
        }
        Expr::Function(f) => {
            let name = last_ident(&f.name).to_ascii_lowercase();
            match name.as_str() {
                "count" => Some(Field::new(name, oid::INT8)),
                // An aggregate's result has its argument's type, not its modifier.
                "max" | "min" => match &f.args {
                    FunctionArguments::List(list) => match list.args.first()? {
                        sqlparser::ast::FunctionArg::Unnamed(
                            sqlparser::ast::FunctionArgExpr::Expr(e),
                        ) => expr_field(e, columns).map(|field| Field {
                            name,
                            typmod: -1,
                            origin: None,
                            ..field
                        }),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            }
        }
        // A type Keyshard does not know (an enum or a domain the application created), or one
        // with a modifier (`numeric(10,2)`, `char(4)`), only a shard describes as PostgreSQL
        // does: the type, and the modifier RowDescription carries.
        Expr::Cast {
            expr: inner,
            data_type,
            ..
        } => {
            let written = data_type.to_string();
            if written.contains('(') {
                return None;
            }
            let (type_name, oid) = match keyshard_types::wire::pg_builtin_type(&written) {
                Some((name, oid)) => (name, oid),
                None => match SqlType::of(&written, DatabaseKind::Postgres) {
                    SqlType::Unknown => return None,
                    ty => {
                        let oid = oid_of(ty);
                        (
                            crate::postgres::types::typname(oid).unwrap_or("?column?"),
                            oid,
                        )
                    }
                },
            };
            let name = column_name(inner).unwrap_or_else(|| type_name.to_owned());
            Some(Field::new(name, oid))
        }
        Expr::Nested(inner) => expr_field(inner, columns),
        _ => None,
    }
}

/// The name PostgreSQL gives an expression's column when it has one of its own, as
/// `FigureColname` finds it: a column's, a function's, through casts (`count(*)::int` is
/// `count`); `None` where the column would be named after a cast's type or `?column?`.
fn column_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(ident) => Some(ident.value.clone()),
        Expr::CompoundIdentifier(parts) => parts.last().map(|ident| ident.value.clone()),
        Expr::Function(f) => Some(last_ident(&f.name).to_ascii_lowercase()),
        Expr::Cast { expr, .. } | Expr::Nested(expr) => column_name(expr),
        _ => None,
    }
}
