//! What a statement takes and returns, before it runs: PostgreSQL's Describe answers with the
//! parameter types and the result columns, and clients such as tokio-postgres encode their
//! parameters and decode the rows by exactly those types.
//!
//! Types come from the client's declared parameter OIDs first, then from the logic tables'
//! declared column types: a placeholder in an INSERT's row takes its column's type, one
//! compared with a column (`order_id = $1`, `IN ($1, $2)`, `SET status = $2`) that column's
//! (`order_id = ANY($1)`: an array of it),
//! and `RETURNING`/select lists name columns whose types are known. Session statements are
//! answered on a copy of the session to see their columns; the DistSQL statements the proxy
//! answers have fixed columns.

use std::sync::Arc;

use keyshard_backend::{Column, PgEnumColumn};
use keyshard_config::DatabaseKind;
use keyshard_router::Leading;
use keyshard_router::names::last_ident;
use keyshard_types::SqlType;
use keyshard_types::Value;
use keyshard_types::pg_array::array_oid_of;
use sqlparser::ast::{
    Assignment, AssignmentTarget, BinaryOperator, Expr, FromTable, FunctionArguments, InTarget,
    Insert, SelectItem, SetExpr, Statement, TableFactor, TableObject, TableWithJoins,
    Value as SqlValue,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

use super::types::{column_oid, oid, oid_for_values, oid_of, wire_oid};
use crate::distsql;
use crate::engine::Engine;
use crate::intent::previewed;
use crate::reply::Reply;

/// A result column as RowDescription reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The column name.
    pub name: String,
    /// Its type.
    pub oid: u32,
    /// Its type modifier (`varchar(20)`: 24), -1 for none.
    pub typmod: i32,
    /// A column of a user-defined enum or an array of one.
    pub pg_enum: Option<PgEnumColumn>,
    /// The type's size as the shard described the column, when it is described with the
    /// shard's type.
    pub shard_size: Option<i16>,
    /// The table OID and column number RowDescription tells, as the logical database shows
    /// the table (see `keyshard_backend`'s `origins`); `None`: 0, not from a table.
    pub origin: Option<(u32, i16)>,
}

impl Field {
    /// A column of type `oid` without a type modifier.
    pub fn new(name: impl Into<String>, oid: u32) -> Self {
        Self {
            name: name.into(),
            oid,
            typmod: -1,
            pg_enum: None,
            shard_size: None,
            origin: None,
        }
    }

    /// The type size RowDescription reports: the shard's, else an enum's 4 (as its catalog
    /// row says), else the type's own (see [`super::types::size_of`]).
    pub fn size(&self) -> i16 {
        match (self.shard_size, self.pg_enum) {
            (Some(size), _) => size,
            (None, Some(PgEnumColumn::Enum)) => 4,
            _ => super::types::size_of(self.oid),
        }
    }

    /// The column `column` of a shard's result or a table, typed `oid`.
    pub fn of_column(column: &Column, oid: u32) -> Self {
        Self {
            name: column.name.clone(),
            oid,
            typmod: column.typmod,
            pg_enum: column.pg_enum,
            shard_size: column.pg_size.filter(|_| column.oid == Some(oid)),
            origin: column.pg_origin,
        }
    }
}

/// The result columns of a statement, as far as they can be known before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fields {
    /// It returns no rows (NoData).
    None,
    /// These columns.
    Known(Vec<Field>),
    /// It returns rows whose columns only running it tells.
    Unknown,
}

/// Parameter types and result columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// One OID per parameter.
    pub params: Vec<u32>,
    /// The result columns.
    pub fields: Fields,
    /// Why the statement does not parse, when it does not and is no session statement.
    pub syntax_error: Option<String>,
}

/// The declared columns of the logic tables, as the backend's metadata holds them (read from
/// each first actual table, refreshed after DDL).
#[derive(Debug)]
pub struct TableColumns {
    engine: Arc<Engine>,
}

impl TableColumns {
    /// Table columns read through the engine's backend.
    pub fn new(engine: Arc<Engine>) -> Self {
        Self { engine }
    }

    /// The columns of logic table `name`, when it has a rule and exists; read from its first
    /// actual table when the metadata does not have them yet (created after start).
    async fn columns(&self, name: &str) -> Option<Vec<Column>> {
        let backend = self.engine.backend();
        if let Some(columns) = backend.metadata().columns(name) {
            return Some(columns);
        }
        let rule = self.engine.config().sharding.table(name)?;
        if let Err(e) = backend.refresh_metadata(rule).await {
            tracing::debug!("columns of {name} not read: {e}");
        }
        backend.metadata().columns(name)
    }
}

/// Parses `sql` within the router's operator-chain budget, which keeps a long chain from
/// overflowing the stack.
fn parse(sql: &str) -> Result<Vec<sqlparser::ast::Statement>, String> {
    let dialect = PostgreSqlDialect {};
    let tokens = keyshard_router::tokenize(sql, &dialect).map_err(|e| e.to_string())?;
    Parser::new(&dialect)
        .with_tokens_with_locations(tokens)
        .parse_statements()
        .map_err(|e| e.to_string())
}

/// Describes `sql`, whose highest placeholder is `$parameters` (see [`highest_placeholder`],
/// at most [`MAX_PARAMETERS`]): `declared` are the client's parameter OIDs (0 = let the server
/// decide). `tree` is its syntax tree when it was parsed already.
pub async fn describe(
    sql: &str,
    tree: Option<Statement>,
    parameters: usize,
    declared: &[u32],
    known: &TableColumns,
) -> Description {
    let count = parameters.min(MAX_PARAMETERS).max(declared.len());
    let mut inferred = vec![oid::TEXT; count];
    let mut syntax_error = None;
    let fields = match distsql_fields(sql)
        .or_else(|| session_fields(sql))
        .or_else(|| preview_fields(sql))
        .or_else(|| lastval_fields(sql))
        .or_else(|| listening_channels_fields(sql))
        .or_else(|| kill_fields(sql))
    {
        Some(fields) => fields,
        None => match tree.map_or_else(|| parse(sql), |tree| Ok(vec![tree])) {
            Ok(statements) if statements.len() == 1 => {
                cast_placeholders(&statements[0], &mut inferred);
                analyse(&statements[0], known, &mut inferred).await
            }
            Ok(_) => guess_fields(sql),
            Err(e) => {
                syntax_error = Some(e);
                guess_fields(sql)
            }
        },
    };
    let params = inferred
        .into_iter()
        .enumerate()
        .map(|(i, inferred)| match declared.get(i) {
            Some(&declared) if declared != 0 => declared,
            _ => inferred,
        })
        .collect();
    Description {
        params,
        fields,
        syntax_error,
    }
}

/// The columns of a session statement, known from its text.
fn session_fields(sql: &str) -> Option<Fields> {
    let columns = crate::dialect::postgres::recognise(sql)?.columns();
    Some(reply_fields(&Reply::Rows {
        columns,
        rows: Vec::new(),
    }))
}

/// The column of `SELECT lastval()`, which the session may answer itself.
fn lastval_fields(sql: &str) -> Option<Fields> {
    crate::pinning::is_bare_lastval(sql)
        .then(|| Fields::Known(vec![Field::new("lastval", oid::INT8)]))
}

/// The column of `SELECT pg_listening_channels()`, which a listening session answers itself.
fn listening_channels_fields(sql: &str) -> Option<Fields> {
    crate::notify::is_bare_listening_channels(sql)
        .then(|| Fields::Known(vec![Field::new("pg_listening_channels", oid::TEXT)]))
}

/// The column of `SELECT pg_cancel_backend(id)`, which the proxy answers itself.
fn kill_fields(sql: &str) -> Option<Fields> {
    let kill = crate::kill::Kill::parse(sql, keyshard_types::Dialect::Postgres)?.ok()?;
    Some(reply_fields(&Reply::Rows {
        columns: kill.columns(),
        rows: Vec::new(),
    }))
}

/// The columns of `PREVIEW …`, the same whatever it previews: a client that describes before
/// it executes (asyncpg) otherwise expects no rows and waits.
fn preview_fields(sql: &str) -> Option<Fields> {
    previewed(sql)?;
    Some(reply_fields(&Reply::preview(Vec::new())))
}

/// The columns of a DistSQL statement the proxy answers (`SHOW COMPUTE NODES`): known without
/// running it, so clients that describe before they execute decode its rows.
fn distsql_fields(sql: &str) -> Option<Fields> {
    Some(reply_fields(&Reply::Rows {
        columns: distsql::result_columns(sql)?,
        rows: Vec::new(),
    }))
}

/// The columns of a reply, typed from its type names and values.
pub fn reply_fields(reply: &Reply) -> Fields {
    match reply {
        // A streamed result was described as its rows went out.
        Reply::Ok { .. } | Reply::Streamed { .. } => Fields::None,
        Reply::Rows { columns, rows } => Fields::Known(result_fields(columns, rows)),
    }
}

/// The fields of a result of `columns`, typed from their type names and, where those say
/// nothing, from `rows`' values.
pub fn result_fields(columns: &[Column], rows: &[Vec<Value>]) -> Vec<Field> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let oid = wire_oid(c)
                .unwrap_or_else(|| oid_for_values(c.ty, rows.iter().filter_map(|r| r.get(i))));
            Field::of_column(c, oid)
        })
        .collect()
}

/// For text the parser does not take: whether it looks like a query by its first word.
fn guess_fields(sql: &str) -> Fields {
    if Leading::of(sql).answers_rows() || contains_word(sql, "returning") {
        Fields::Unknown
    } else {
        Fields::None
    }
}

fn contains_word(sql: &str, word: &str) -> bool {
    sql.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w.eq_ignore_ascii_case(word))
}

/// The most parameters a statement can have: Bind carries their count in 16 bits.
pub const MAX_PARAMETERS: usize = 65_535;

/// The highest `$n` in `sql` (0 when there is none).
pub fn highest_placeholder(sql: &str) -> usize {
    let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize() else {
        return 0;
    };
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Placeholder(p) => placeholder_number(p),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// The zero-based index of `$n`.
fn placeholder_index(text: &str) -> Option<usize> {
    placeholder_number(text)?.checked_sub(1)
}

/// The `n` of `$n`, saturating rather than overflowing (`$99999999999` is a number too large
/// to bind, not a word).
fn placeholder_number(text: &str) -> Option<usize> {
    let digits = text.strip_prefix('$')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(usize::MAX))
}

async fn analyse(statement: &Statement, known: &TableColumns, params: &mut [u32]) -> Fields {
    match statement {
        Statement::Insert(insert) => analyse_insert(insert, known, params).await,
        Statement::Update(update) => {
            let columns = table_columns(std::slice::from_ref(&update.table), known).await;
            for assignment in &update.assignments {
                assign(assignment, &columns, params);
            }
            if let Some(selection) = &update.selection {
                walk(selection, &columns, params);
            }
            returning(update.returning.as_deref(), &columns)
        }
        Statement::Delete(delete) => {
            let tables = match &delete.from {
                FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
            };
            let columns = table_columns(tables, known).await;
            if let Some(selection) = &delete.selection {
                walk(selection, &columns, params);
            }
            returning(delete.returning.as_deref(), &columns)
        }
        Statement::Query(query) => match &*query.body {
            SetExpr::Select(select) => {
                let columns = table_columns(&select.from, known).await;
                if let Some(selection) = &select.selection {
                    walk(selection, &columns, params);
                }
                if let Some(limit) = &query.limit_clause {
                    mark_integers(&format!("{limit}"), params);
                }
                match projection(&select.projection, &columns) {
                    Some(fields) => Fields::Known(fields),
                    None => Fields::Unknown,
                }
            }
            _ => Fields::Unknown,
        },
        Statement::ShowVariable { .. } | Statement::Explain { .. } => Fields::Unknown,
        _ => Fields::None,
    }
}

async fn analyse_insert(insert: &Insert, known: &TableColumns, params: &mut [u32]) -> Fields {
    let TableObject::TableName(name) = &insert.table else {
        return returning(insert.returning.as_deref(), &[]);
    };
    let table = known.columns(last_ident(name)).await.unwrap_or_default();
    let rows: Vec<&[Expr]> = match insert.source.as_deref().map(|q| &*q.body) {
        Some(SetExpr::Values(values)) => values.rows.iter().map(|r| r.content.as_slice()).collect(),
        _ => Vec::new(),
    };
    let width = rows.first().map_or(0, |r| r.len());
    // The columns the values are for: named, or the table's, or (one value short) the table's
    // without the generated key, ShardingSphere's rule for a column-less INSERT.
    let targets: Vec<Option<&Column>> = if insert.columns.is_empty() {
        let key = known
            .engine
            .config()
            .sharding
            .table(last_ident(name))
            .and_then(|rule| rule.key_generate.as_ref().map(|k| k.column.clone()));
        if width + 1 == table.len()
            && let Some(key) = key
        {
            table
                .iter()
                .filter(|c| !c.name.eq_ignore_ascii_case(&key))
                .map(Some)
                .collect()
        } else {
            table.iter().map(Some).collect()
        }
    } else {
        insert
            .columns
            .iter()
            .map(|c| find(&table, last_ident(c)))
            .collect()
    };
    for row in rows {
        for (expr, column) in row.iter().zip(&targets) {
            if let Some(column) = column {
                set_param(expr, column_oid(column), params);
            }
        }
    }
    for assignment in &insert.assignments {
        assign(assignment, &table, params);
    }
    returning(insert.returning.as_deref(), &table)
}

fn returning(items: Option<&[SelectItem]>, columns: &[Column]) -> Fields {
    match items {
        None => Fields::None,
        Some(items) => match projection(items, columns) {
            Some(fields) => Fields::Known(fields),
            None => Fields::Unknown,
        },
    }
}

/// The fields of a select or RETURNING list over `columns`; `None` when an item is beyond
/// what can be typed without running it.
fn projection(items: &[SelectItem], columns: &[Column]) -> Option<Vec<Field>> {
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
                        (super::types::typname(oid).unwrap_or("?column?"), oid)
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

/// `column = $n` in a SET list.
fn assign(assignment: &Assignment, columns: &[Column], params: &mut [u32]) {
    if let AssignmentTarget::ColumnName(name) = &assignment.target
        && let Some(column) = find(columns, last_ident(name))
    {
        set_param(&assignment.value, column_oid(column), params);
    }
    walk(&assignment.value, columns, params);
}

/// Types placeholders compared with columns anywhere in `expr`.
fn walk(expr: &Expr, columns: &[Column], params: &mut [u32]) {
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
fn cast_placeholders(statement: &Statement, params: &mut [u32]) {
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
fn set_param(expr: &Expr, oid: u32, params: &mut [u32]) {
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
fn mark_integers(text: &str, params: &mut [u32]) {
    for word in text.split(|c: char| c.is_whitespace() || c == ',') {
        if let Some(slot) = placeholder_index(word).and_then(|i| params.get_mut(i)) {
            *slot = oid::INT8;
        }
    }
}

/// The columns of every sharded table in a FROM list (joins included).
async fn table_columns(from: &[TableWithJoins], known: &TableColumns) -> Vec<Column> {
    let mut columns = Vec::new();
    for table in from {
        let factors =
            std::iter::once(&table.relation).chain(table.joins.iter().map(|j| &j.relation));
        for factor in factors {
            if let TableFactor::Table { name, .. } = factor
                && let Some(found) = known.columns(last_ident(name)).await
            {
                columns.extend(found);
            }
        }
    }
    columns
}

fn find<'a>(columns: &'a [Column], name: &str) -> Option<&'a Column> {
    columns.iter().find(|c| c.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_counted_by_their_highest_number() {
        assert_eq!(highest_placeholder("INSERT INTO t VALUES ($1, $3)"), 3);
        assert_eq!(highest_placeholder("SELECT '$1'"), 0);
        assert_eq!(highest_placeholder("SELECT 1"), 0);
    }

    #[test]
    fn statements_that_return_rows_are_told_apart() {
        assert_eq!(guess_fields("select x"), Fields::Unknown);
        assert_eq!(
            guess_fields("UPDATE t SET a = 1 RETURNING a"),
            Fields::Unknown
        );
        assert_eq!(guess_fields("CREATE TABLE t (a INT)"), Fields::None);
    }

    #[test]
    fn columns_type_their_placeholders() {
        let columns = vec![
            Column::new(
                "order_id",
                SqlType::Int {
                    bytes: 8,
                    unsigned: false,
                },
            ),
            Column::new("status", SqlType::VarChar),
        ];
        let sql = "SELECT * FROM t WHERE order_id IN ($1, $2) AND status = $3::text";
        let Statement::Query(query) = &Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap()[0]
        else {
            panic!()
        };
        let SetExpr::Select(select) = &*query.body else {
            panic!()
        };
        let mut params = vec![oid::TEXT; 3];
        walk(select.selection.as_ref().unwrap(), &columns, &mut params);
        assert_eq!(params, [oid::INT8, oid::INT8, oid::TEXT]);
        let fields = projection(&select.projection, &columns).unwrap();
        assert_eq!(fields.len(), 2);
        assert_eq!(fields[0].oid, oid::INT8);
    }

    /// As PostgreSQL names and types a cast's column: after what it casts where that has a
    /// name, else after the type; a type the application created is left to a shard.
    #[test]
    fn casts_are_named_and_typed_as_postgres_does() {
        let columns = vec![Column::new("status", SqlType::VarChar)];
        let fields = |sql: &str| {
            let Statement::Query(query) =
                &Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap()[0]
            else {
                panic!()
            };
            let SetExpr::Select(select) = &*query.body else {
                panic!()
            };
            projection(&select.projection, &columns).map(|f| {
                f.iter()
                    .map(|f| (f.name.clone(), f.oid))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            fields("SELECT count(*)::int, status::text, 1.5::numeric, 'x'::bpchar, 1::integer, now()::date").unwrap(),
            [
                ("count".to_owned(), oid::INT4),
                ("status".to_owned(), oid::TEXT),
                ("numeric".to_owned(), oid::NUMERIC),
                ("bpchar".to_owned(), oid::BPCHAR),
                ("int4".to_owned(), oid::INT4),
                ("now".to_owned(), 1082),
            ]
        );
        assert_eq!(fields("SELECT 'happy'::mood"), None);
        assert_eq!(
            fields("SELECT 1.5::numeric(10,3)"),
            None,
            "its modifier: the shard's"
        );
    }
}
