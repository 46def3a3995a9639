//! Typing placeholders from where they stand: compared with or assigned to a column, cast,
//! or a LIMIT's count.

use keyshard_backend::Column;
use keyshard_config::DatabaseKind;
use keyshard_router::names::last_ident;
use keyshard_types::SqlType;
use keyshard_types::pg_array::array_oid_of;
use sqlparser::ast::{
    Assignment, AssignmentTarget, BinaryOperator, Expr, InTarget, Statement, Value as SqlValue,
};

use super::placeholders::placeholder_index;
use super::table_columns::find;
use crate::postgres::types::{column_oid, oid, oid_of};

/// `column = $n` in a SET list.
pub(super) fn assign(assignment: &Assignment, columns: &[Column], params: &mut [u32]) {
    if let AssignmentTarget::ColumnName(name) = &assignment.target
        && let Some(column) = find(columns, last_ident(name))
    {
        set_param(&assignment.value, column_oid(column), params);
    }
    walk(&assignment.value, columns, params);
}

/// Types placeholders compared with columns anywhere in `expr`.
pub(super) fn walk(expr: &Expr, columns: &[Column], params: &mut [u32]) {
    let oid_of_column = |e: &Expr| match e {
        Expr::Identifier(i) => find(columns, &i.value).map(column_oid),
        Expr::CompoundIdentifier(parts) => parts
            .last()
            .and_then(|i| find(columns, &i.value))
            .map(column_oid),
        _ => None,
    };
    match expr {
        Expr::BinaryOp { left, op, right } => {
            if matches!(op, BinaryOperator::And | BinaryOperator::Or) {
                walk(left, columns, params);
                walk(right, columns, params);
            } else {
                if let Some(oid) = oid_of_column(left) {
                    set_param(right, oid, params);
                }
                if let Some(oid) = oid_of_column(right) {
                    set_param(left, oid, params);
                }
            }
        }
        Expr::Nested(inner) | Expr::UnaryOp { expr: inner, .. } => walk(inner, columns, params),
        Expr::In {
            expr,
            target: InTarget::List(list),
            ..
        } => {
            if let Some(oid) = oid_of_column(expr) {
                for item in list {
                    set_param(item, oid, params);
                }
            }
        }
        // `order_id = ANY($1)`: the placeholder is an array of the column's type, so drivers
        // (asyncpg) send their list as one; `ANY(ARRAY[$1, $2])` types each element.
        Expr::AnyOp { left, right, .. } | Expr::AllOp { left, right, .. } => {
            if let Some(oid) = oid_of_column(left) {
                match &**right {
                    Expr::Array(array) => {
                        for element in &array.elem {
                            set_param(element, oid, params);
                        }
                    }
                    other => set_param(other, array_oid_of(oid).unwrap_or(oid::TEXT_ARRAY), params),
                }
            }
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            if let Some(oid) = oid_of_column(expr) {
                set_param(low, oid, params);
                set_param(high, oid, params);
            }
        }
        _ => {}
    }
}

/// Types every `$n::type` anywhere in the statement (CTEs and subqueries included) as its
/// cast, as PostgreSQL does: asyncpg's type introspection sends its OID list as `$1::oid[]`
/// inside a recursive CTE and encodes the list only when told it is an array.
pub(super) fn cast_placeholders(statement: &Statement, params: &mut [u32]) {
    let _ = sqlparser::ast::visit_expressions(statement, |expr| {
        if let Expr::Cast { expr: inner, .. } = expr
            && matches!(&**inner, Expr::Value(v) if matches!(v.value, SqlValue::Placeholder(_)))
        {
            set_param(expr, oid::TEXT, params);
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
}

/// Types `expr` as `oid` when it is a bare placeholder; a cast placeholder takes its cast.
pub(super) fn set_param(expr: &Expr, oid: u32, params: &mut [u32]) {
    match expr {
        Expr::Value(v) => {
            if let SqlValue::Placeholder(p) = &v.value
                && let Some(slot) = placeholder_index(p).and_then(|i| params.get_mut(i))
            {
                *slot = oid;
            }
        }
        Expr::Cast {
            expr, data_type, ..
        } => set_param(
            expr,
            keyshard_types::wire::pg_builtin_type(&data_type.to_string()).map_or_else(
                || oid_of(SqlType::of(&data_type.to_string(), DatabaseKind::Postgres)),
                |(_, oid)| oid,
            ),
            params,
        ),
        Expr::Nested(inner) => set_param(inner, oid, params),
        _ => {}
    }
}

/// `LIMIT $1 OFFSET $2` take integers.
pub(super) fn mark_integers(text: &str, params: &mut [u32]) {
    for word in text.split(|c: char| c.is_whitespace() || c == ',') {
        if let Some(slot) = placeholder_index(word).and_then(|i| params.get_mut(i)) {
            *slot = oid::INT8;
        }
    }
}
