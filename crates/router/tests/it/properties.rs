//! Property tests for the INSERT router: generated multi-row INSERTs with awkward literals,
//! comments and spacing, in both dialects, checked against sqlparser's own reading of the
//! statement; and arbitrary input, which must never panic.

use crate::common;

use std::collections::HashSet;
use std::sync::OnceLock;

use keyshard_router::{Plan, Router};
use keyshard_types::{Dialect, Value};
use proptest::prelude::*;
use proptest::test_runner::Config;
use sqlparser::ast::{
    Expr, Ident, ObjectName, ObjectNamePart, OnConflict, OnConflictAction, OnInsert, SetExpr,
    Statement, TableObject, Value as SqlValue,
};
use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

// ---------------------------------------------------------------------------------------------
// The model: what a generated statement says, independent of how it is spelled.

/// Where a row's `order_id` comes from (when the column list names it).
#[derive(Debug, Clone)]
enum KeyCell {
    /// A positive literal.
    Lit(i64),
    /// `NULL`.
    Null,
    /// `DEFAULT`.
    Default,
    /// `0`: generated in MySQL, a given key in PostgreSQL.
    Zero,
    /// A placeholder bound to this value (`Int`, `UInt`, `Null` or `Int(0)`).
    Param(Value),
}

/// A row's `status`: its SQL spelling, or a placeholder bound to this text.
#[derive(Debug, Clone)]
enum StatusCell {
    Lit(String),
    Param(String),
}

#[derive(Debug, Clone)]
struct Row {
    user: i64,
    /// `None`: a literal; `Some(unsigned)`: a placeholder bound to `Int` or `UInt`.
    user_param: Option<bool>,
    status: StatusCell,
    key: KeyCell,
}

/// The three columns, by position in the statement's column list.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Col {
    User,
    Status,
    Key,
}

#[derive(Clone)]
struct Stmt {
    dialect: Dialect,
    head: usize,
    table: usize,
    columns: Vec<Col>,
    column_style: usize,
    value_keyword: bool,
    rows: Vec<Row>,
    tail: usize,
    seps: Vec<&'static str>,
    /// Seeds the PostgreSQL `$n` numbering (a permutation of text order).
    numbering: u64,
}

/// Shrunk failures print as the statement they spell.
impl std::fmt::Debug for Stmt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (sql, params) = spell(self, self.dialect);
        write!(f, "{:?} sql={sql:?} params={params:?}", self.dialect)
    }
}

impl Row {
    fn has_params(&self, columns: &[Col]) -> bool {
        self.user_param.is_some()
            || matches!(self.status, StatusCell::Param(_))
            || (columns.contains(&Col::Key) && matches!(self.key, KeyCell::Param(_)))
    }

    /// Whether the router must generate this row's key.
    fn generates(&self, columns: &[Col], dialect: Dialect) -> bool {
        if !columns.contains(&Col::Key) {
            return true;
        }
        let zero = dialect == Dialect::MySql;
        match &self.key {
            KeyCell::Lit(_) => false,
            KeyCell::Null | KeyCell::Default => true,
            KeyCell::Zero => zero,
            KeyCell::Param(Value::Null) => true,
            KeyCell::Param(Value::Int(0) | Value::UInt(0)) => zero,
            KeyCell::Param(_) => false,
        }
    }

    fn given_key(&self) -> i64 {
        match &self.key {
            KeyCell::Lit(v) => *v,
            KeyCell::Zero => 0,
            KeyCell::Param(Value::Int(v)) => *v,
            KeyCell::Param(Value::UInt(v)) => i64::try_from(*v).unwrap(),
            other => panic!("no given key in {other:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies.

fn mysql_sep() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "",
        " ",
        "  ",
        "\n",
        "\t",
        "\r\n",
        "\r",
        " /* c */ ",
        "/*c*/",
        "/* é 漢字 😀 */",
        " -- c\n",
        "-- é ? \n",
        "# c ?\n",
        "/* ? */",
        "\n\t ",
    ])
}

fn postgres_sep() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "",
        " ",
        "  ",
        "\n",
        "\t",
        "\r\n",
        "\r",
        " /* c */ ",
        "/*c*/",
        "/* é 漢字 😀 */",
        "/* a /* nested */ b */",
        " -- c\n",
        "-- é $1 ?\n",
        "\n\t ",
    ])
}

/// Characters that are hard to quote, or look like placeholders and comments.
fn awkward_text() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec![
        'a', 'Z', ' ', '\'', '\\', '"', 'é', '漢', '字', '😀', '\n', '\t', '%', '_', '`', '?', '$',
        '-', '/', '*', '#', ';', '(', ')', ',', '1',
    ]);
    prop::collection::vec(chars, 0..12).prop_map(|c| c.into_iter().collect())
}

/// A MySQL string literal for `text`, with randomly chosen escapes.
fn mysql_literal(text: &str, style: u64) -> String {
    let double = style.is_multiple_of(5);
    let quote = if double { '"' } else { '\'' };
    let mut out = String::new();
    out.push(quote);
    for (i, c) in text.chars().enumerate() {
        let pick = (style >> (i % 60)) & 1 == 1;
        match c {
            // Escaped by a backslash or doubled.
            c if c == quote => out.extend([if pick { '\\' } else { quote }, quote]),
            '\\' => out.push_str("\\\\"),
            '\n' if pick => out.push_str("\\n"),
            '\t' if pick => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A PostgreSQL string literal for `text`: standard, `E'…'` or dollar-quoted.
fn postgres_literal(text: &str, style: u64) -> String {
    match style % 3 {
        1 => {
            let mut out = String::from("E'");
            for (i, c) in text.chars().enumerate() {
                let pick = (style >> (i % 60)) & 1 == 1;
                match c {
                    '\'' if pick => out.push_str("\\'"),
                    '\'' => out.push_str("''"),
                    '\\' => out.push_str("\\\\"),
                    '\n' if pick => out.push_str("\\n"),
                    '\t' if pick => out.push_str("\\t"),
                    c => out.push(c),
                }
            }
            out.push('\'');
            out
        }
        2 if !text.contains('$') => format!("$${text}$$"),
        _ => format!("'{}'", text.replace('\'', "''")),
    }
}

fn key_cell() -> impl Strategy<Value = KeyCell> {
    prop_oneof![
        3 => (1..=i64::MAX).prop_map(KeyCell::Lit),
        1 => (1..1000i64).prop_map(KeyCell::Lit),
        2 => Just(KeyCell::Null),
        2 => Just(KeyCell::Default),
        2 => Just(KeyCell::Zero),
        2 => (1..=i64::MAX).prop_map(|v| KeyCell::Param(Value::Int(v))),
        1 => (1..=i64::MAX).prop_map(|v| KeyCell::Param(Value::UInt(v as u64))),
        2 => Just(KeyCell::Param(Value::Null)),
        2 => Just(KeyCell::Param(Value::Int(0))),
        1 => Just(KeyCell::Param(Value::UInt(0))),
    ]
}

fn row(dialect: Dialect) -> impl Strategy<Value = Row> {
    let user = prop_oneof![0..100i64, 0..=i64::MAX];
    let user_param = prop_oneof![2 => Just(None), 1 => any::<bool>().prop_map(Some)];
    let status = (awkward_text(), any::<u64>(), 0..3u8).prop_map(move |(text, style, p)| {
        if p == 0 {
            StatusCell::Param(text)
        } else {
            StatusCell::Lit(match dialect {
                Dialect::MySql => mysql_literal(&text, style),
                Dialect::Postgres => postgres_literal(&text, style),
            })
        }
    });
    (user, user_param, status, key_cell()).prop_map(|(user, user_param, status, key)| Row {
        user,
        user_param,
        status,
        key,
    })
}

fn stmt(dialect: Dialect) -> impl Strategy<Value = Stmt> {
    let seps = match dialect {
        Dialect::MySql => prop::collection::vec(mysql_sep().boxed(), 48),
        Dialect::Postgres => prop::collection::vec(postgres_sep().boxed(), 48),
    };
    let columns = (0..4usize, any::<bool>()).prop_map(|(key_at, swap)| {
        let mut columns = if swap {
            vec![Col::Status, Col::User]
        } else {
            vec![Col::User, Col::Status]
        };
        if key_at < 3 {
            columns.insert(key_at, Col::Key);
        }
        columns
    });
    (
        (0..4usize, 0..3usize, columns, 0..3usize, any::<bool>()),
        prop::collection::vec(row(dialect), 1..=20),
        (0..7usize, seps, any::<u64>()),
    )
        .prop_map(
            move |((head, table, columns, column_style, value_keyword), rows, (tail, seps, n))| {
                Stmt {
                    dialect,
                    head,
                    table,
                    columns,
                    column_style,
                    value_keyword: value_keyword && dialect == Dialect::MySql,
                    rows,
                    tail,
                    seps,
                    numbering: n,
                }
            },
        )
}

// ---------------------------------------------------------------------------------------------
// Spelling a statement.

struct Writer<'a> {
    out: String,
    seps: std::iter::Cycle<std::slice::Iter<'a, &'static str>>,
    /// Placeholder positions in `out`, filled in once all are known.
    marks: Vec<usize>,
    slots: Vec<Value>,
}

impl Writer<'_> {
    /// Separator that may be empty (next to punctuation).
    fn opt(&mut self) {
        let sep = self.seps.next().copied().unwrap_or(" ");
        self.out.push_str(sep);
    }
    /// Separator between two words: never empty.
    fn ws(&mut self) {
        let sep = self.seps.next().copied().unwrap_or(" ");
        self.out.push_str(if sep.is_empty() { " " } else { sep });
    }
    fn param(&mut self, value: Value) {
        self.marks.push(self.out.len());
        self.slots.push(value);
    }
}

/// The statement's text and bound parameters.
fn spell(s: &Stmt, dialect: Dialect) -> (String, Vec<Value>) {
    let mut w = Writer {
        out: String::new(),
        seps: s.seps.iter().cycle(),
        marks: Vec::new(),
        slots: Vec::new(),
    };
    let head: &[&str] = match (dialect, s.head) {
        (Dialect::MySql, 1) => &["insert", "into"],
        (Dialect::MySql, 2) => &["INSERT", "IGNORE", "INTO"],
        (Dialect::MySql, 3) => &["INSERT"],
        (Dialect::Postgres, 1 | 3) => &["insert", "into"],
        _ => &["INSERT", "INTO"],
    };
    w.opt();
    for word in head {
        w.out.push_str(word);
        w.ws();
    }
    let quote = match dialect {
        Dialect::MySql => '`',
        Dialect::Postgres => '"',
    };
    match s.table {
        0 => w.out.push_str("t_order"),
        1 => w.out.push_str("T_Order"),
        _ => w
            .out
            .extend([quote, 't', '_', 'o', 'r', 'd', 'e', 'r', quote]),
    }
    w.opt();
    w.out.push('(');
    for (i, col) in s.columns.iter().enumerate() {
        if i > 0 {
            w.opt();
            w.out.push(',');
        }
        w.opt();
        let name = match col {
            Col::User => "user_id",
            Col::Status => "status",
            Col::Key => "order_id",
        };
        match s.column_style {
            0 => w.out.push_str(name),
            1 => w.out.push_str(&name.to_ascii_uppercase()),
            _ => {
                w.out.push(quote);
                w.out.push_str(name);
                w.out.push(quote);
            }
        }
    }
    w.opt();
    w.out.push(')');
    w.opt();
    w.out
        .push_str(if s.value_keyword { "VALUE" } else { "VALUES" });
    for (r, row) in s.rows.iter().enumerate() {
        if r > 0 {
            w.opt();
            w.out.push(',');
        }
        w.opt();
        w.out.push('(');
        for (i, col) in s.columns.iter().enumerate() {
            if i > 0 {
                w.opt();
                w.out.push(',');
            }
            w.opt();
            match col {
                Col::User => match row.user_param {
                    None => w.out.push_str(&row.user.to_string()),
                    Some(false) => w.param(Value::Int(row.user)),
                    Some(true) => w.param(Value::UInt(row.user as u64)),
                },
                Col::Status => match &row.status {
                    StatusCell::Lit(text) => w.out.push_str(text),
                    StatusCell::Param(text) => w.param(Value::Text(text.clone())),
                },
                Col::Key => match &row.key {
                    KeyCell::Lit(v) => w.out.push_str(&v.to_string()),
                    KeyCell::Null => w.out.push_str("NULL"),
                    KeyCell::Default => w.out.push_str("DEFAULT"),
                    KeyCell::Zero => w.out.push('0'),
                    KeyCell::Param(v) => w.param(v.clone()),
                },
            }
        }
        w.opt();
        w.out.push(')');
    }
    match (dialect, s.tail) {
        (_, 1) => {
            w.opt();
            w.out.push(';');
        }
        (_, 2) => w.out.push_str(" -- end"),
        (_, 3) => w.out.push_str(" /* end */ ;"),
        (Dialect::MySql, 4) => {
            w.ws();
            w.out
                .push_str("ON DUPLICATE KEY UPDATE status = VALUES(status)");
        }
        (Dialect::MySql, 5) => {
            w.ws();
            w.out.push_str("ON DUPLICATE KEY UPDATE status =");
            w.opt();
            w.param(Value::Text("dup".into()));
        }
        (Dialect::Postgres, 4) => {
            w.ws();
            w.out.push_str("ON CONFLICT DO NOTHING");
        }
        (Dialect::Postgres, 5) => {
            w.ws();
            w.out
                .push_str("ON CONFLICT (order_id) DO UPDATE SET status =");
            w.ws();
            w.param(Value::Text("dup".into()));
        }
        (Dialect::Postgres, 6) => {
            w.ws();
            w.out.push_str("RETURNING order_id, status");
        }
        _ => {}
    }

    // Placeholders: `?` in MySQL; in PostgreSQL, `$n` numbered by a permutation of text order.
    let count = w.slots.len();
    let mut numbers: Vec<usize> = (0..count).collect();
    let mut seed = s.numbering | 1;
    for i in (1..count).rev() {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        numbers.swap(i, (seed >> 33) as usize % (i + 1));
    }
    let mut params = vec![Value::Null; count];
    let mut sql = String::with_capacity(w.out.len() + 4 * count);
    let mut at = 0;
    for (i, mark) in w.marks.iter().enumerate() {
        sql.push_str(&w.out[at..*mark]);
        at = *mark;
        match dialect {
            Dialect::MySql => {
                sql.push('?');
                params[i] = w.slots[i].clone();
            }
            Dialect::Postgres => {
                sql.push('$');
                sql.push_str(&(numbers[i] + 1).to_string());
                params[numbers[i]] = w.slots[i].clone();
            }
        }
    }
    sql.push_str(&w.out[at..]);
    (sql, params)
}

// ---------------------------------------------------------------------------------------------
// Checking a plan.

fn parse(sql: &str, dialect: Dialect) -> Result<Statement, String> {
    let statements = match dialect {
        Dialect::MySql => Parser::parse_sql(&MySqlDialect {}, sql),
        Dialect::Postgres => Parser::parse_sql(&PostgreSqlDialect {}, sql),
    }
    .map_err(|e| format!("{e}"))?;
    match <[Statement; 1]>::try_from(statements) {
        Ok([one]) => Ok(one),
        Err(many) => Err(format!("{} statements", many.len())),
    }
}

fn placeholders(sql: &str, dialect: Dialect) -> Vec<String> {
    let tokens = match dialect {
        Dialect::MySql => Tokenizer::new(&MySqlDialect {}, sql).tokenize(),
        Dialect::Postgres => Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize(),
    };
    tokens
        .unwrap_or_else(|e| panic!("unit SQL does not tokenize: {e}\n{sql}"))
        .into_iter()
        .filter_map(|t| match t {
            Token::Placeholder(p) => Some(p),
            _ => None,
        })
        .collect()
}

/// Numbers the placeholders of the expected statement `$1…$k` in text order, as each unit's
/// are: the rows' (each cell is a bare value) and the `ON CONFLICT … SET status = $n` tail's.
fn renumber(insert: &mut sqlparser::ast::Insert) {
    let mut next = 0;
    let mut number = |expr: &mut Expr| {
        if let Expr::Value(v) = expr
            && let SqlValue::Placeholder(p) = &mut v.value
        {
            next += 1;
            *p = format!("${next}");
        }
    };
    if let Some(SetExpr::Values(values)) = insert.source.as_mut().map(|q| &mut *q.body) {
        values
            .rows
            .iter_mut()
            .flat_map(|r| r.content.iter_mut())
            .for_each(&mut number);
    }
    if let Some(OnInsert::OnConflict(OnConflict {
        action: OnConflictAction::DoUpdate(update),
        ..
    })) = &mut insert.on
    {
        update
            .assignments
            .iter_mut()
            .for_each(|a| number(&mut a.value));
    }
}

fn number(v: i64) -> Expr {
    Expr::value(SqlValue::Number(v.to_string(), false))
}

fn key_int(value: &Value) -> i64 {
    match value {
        Value::Int(v) => *v,
        other => panic!("generated key {other:?} is not an integer"),
    }
}

/// Checks every property of `plan` for the statement `s`, spelled as `sql`.
fn check(s: &Stmt, dialect: Dialect, sql: &str, plan: &Plan) {
    let n = s.rows.len();
    let has_key = s.columns.contains(&Col::Key);
    let key_pos = s.columns.iter().position(|c| *c == Col::Key);

    // (3) Every row lands in exactly one unit; units partition 0..n, rows in order.
    assert_eq!(plan.row_units.len(), n, "row_units length");
    let mut seen = vec![false; n];
    for (u, unit) in plan.units.iter().enumerate() {
        assert!(!unit.rows.is_empty(), "unit {u} without rows");
        assert!(
            unit.rows.windows(2).all(|w| w[0] < w[1]),
            "unit {u} rows out of order"
        );
        for r in &unit.rows {
            assert!(!seen[*r], "row {r} in two units");
            seen[*r] = true;
            assert_eq!(plan.row_units[*r], u, "row_units[{r}]");
        }
    }
    assert!(seen.iter().all(|s| *s), "a row in no unit");
    let nodes: Vec<(&str, &str)> = plan
        .units
        .iter()
        .map(|u| (u.data_source.as_str(), u.table.as_str()))
        .collect();
    assert!(
        nodes.windows(2).all(|w| w[0] < w[1]),
        "units not in data node order: {nodes:?}"
    );

    // (4) Generated keys: one per generating row, unique; every row routes by its values.
    let generating: Vec<usize> = (0..n)
        .filter(|r| s.rows[*r].generates(&s.columns, dialect))
        .collect();
    assert_eq!(
        plan.generated_keys.len(),
        generating.len(),
        "generated key count"
    );
    let generated: Vec<i64> = plan
        .generated_keys
        .iter()
        .map(|k| key_int(&Value::from(k)))
        .collect();
    let unique: HashSet<i64> = generated.iter().copied().collect();
    assert_eq!(unique.len(), generated.len(), "duplicate generated keys");
    let mut row_key: Vec<Option<i64>> = vec![None; n];
    for (r, k) in generating.iter().zip(&generated) {
        row_key[*r] = Some(*k);
    }
    for (r, row) in s.rows.iter().enumerate() {
        let key = row_key[r].unwrap_or_else(|| row.given_key());
        let unit = &plan.units[plan.row_units[r]];
        assert_eq!(
            unit.data_source,
            format!("ds_{}", row.user % 2),
            "row {r} data source"
        );
        assert_eq!(unit.table, format!("t_order_{}", key % 2), "row {r} table");
    }

    // (1), (2) Each unit parses, and reads as the original with its table, rows and keys.
    let original = parse(sql, dialect).expect("the generated statement parses");
    let Statement::Insert(original_insert) = &original else {
        panic!("not an INSERT: {original}");
    };
    let Some(SetExpr::Values(original_values)) = original_insert.source.as_ref().map(|q| &*q.body)
    else {
        panic!("no VALUES: {original}");
    };
    assert_eq!(original_values.rows.len(), n, "original row count");
    let placeholder = Expr::value(SqlValue::Placeholder(match dialect {
        Dialect::MySql => "?".into(),
        Dialect::Postgres => "$1".into(),
    }));

    // Parameters per row in text order, and the tail's.
    let mut by_row: Vec<Vec<Value>> = vec![Vec::new(); n];
    let mut tail_params = Vec::new();
    {
        // Re-derive from the model: the row's cells in column order.
        for (r, row) in s.rows.iter().enumerate() {
            for col in &s.columns {
                match col {
                    Col::User => match row.user_param {
                        None => {}
                        Some(false) => by_row[r].push(Value::Int(row.user)),
                        Some(true) => by_row[r].push(Value::UInt(row.user as u64)),
                    },
                    Col::Status => {
                        if let StatusCell::Param(t) = &row.status {
                            by_row[r].push(Value::Text(t.clone()));
                        }
                    }
                    Col::Key => match (&row.key, row_key[r]) {
                        (KeyCell::Param(_), Some(k)) => by_row[r].push(Value::Int(k)),
                        (KeyCell::Param(v), None) => by_row[r].push(v.clone()),
                        (_, Some(k)) if row.has_params(&s.columns) => {
                            by_row[r].push(Value::Int(k));
                        }
                        _ => {}
                    },
                }
            }
            if !has_key && row.has_params(&s.columns) {
                by_row[r].push(Value::Int(row_key[r].unwrap()));
            }
        }
        if s.tail == 5 {
            tail_params.push(Value::Text("dup".into()));
        }
    }

    for unit in &plan.units {
        let parsed = parse(&unit.sql, dialect).unwrap_or_else(|e| {
            panic!(
                "unit SQL does not parse: {e}\noriginal: {sql}\nunit:     {}",
                unit.sql
            )
        });
        let mut expected = original.clone();
        let Statement::Insert(insert) = &mut expected else {
            unreachable!()
        };
        let TableObject::TableName(name) = &mut insert.table else {
            panic!("table function")
        };
        if let Some(ObjectNamePart::Identifier(ident)) = name.0.last_mut() {
            ident.value = unit.table.clone();
        }
        if !has_key {
            let quote = match insert.columns.last().and_then(|c| c.0.last()) {
                Some(ObjectNamePart::Identifier(ident)) => ident.quote_style,
                _ => None,
            };
            insert.columns.push(ObjectName::from(vec![Ident {
                value: "order_id".into(),
                quote_style: quote,
                span: sqlparser::tokenizer::Span::empty(),
            }]));
        }
        let Some(SetExpr::Values(values)) = insert.source.as_mut().map(|q| &mut *q.body) else {
            unreachable!()
        };
        values.rows = unit
            .rows
            .iter()
            .map(|r| {
                let mut parens = original_values.rows[*r].clone();
                let row = &s.rows[*r];
                if let Some(k) = row_key[*r] {
                    let key = if row.has_params(&s.columns) {
                        placeholder.clone()
                    } else {
                        number(k)
                    };
                    match key_pos {
                        None => parens.content.push(key),
                        Some(p) if !matches!(row.key, KeyCell::Param(_)) => {
                            parens.content[p] = key;
                        }
                        Some(_) => {}
                    }
                }
                parens
            })
            .collect();
        if dialect == Dialect::Postgres {
            renumber(insert);
        }
        // Spans are ignored by the AST's equality; the printed forms must agree as well.
        assert_eq!(
            parsed, expected,
            "AST\noriginal: {sql}\nunit:     {}\nexpected: {expected}",
            unit.sql
        );
        assert_eq!(parsed.to_string(), expected.to_string());

        // (5) Parameters: the rows' own, in order, with keys where a placeholder holds one.
        let mut want: Vec<Value> = unit
            .rows
            .iter()
            .flat_map(|r| by_row[*r].iter().cloned())
            .collect();
        want.extend(tail_params.iter().cloned());
        assert_eq!(
            unit.params, want,
            "params\noriginal: {sql}\nunit:     {}",
            unit.sql
        );
        let found = placeholders(&unit.sql, dialect);
        let numbered: Vec<String> = match dialect {
            Dialect::MySql => vec!["?".to_owned(); want.len()],
            Dialect::Postgres => (1..=want.len()).map(|i| format!("${i}")).collect(),
        };
        assert_eq!(found, numbered, "placeholders of {}", unit.sql);
    }
}

// ---------------------------------------------------------------------------------------------
// The properties.

fn router(dialect: Dialect) -> &'static Router {
    static MYSQL: OnceLock<Router> = OnceLock::new();
    static POSTGRES: OnceLock<Router> = OnceLock::new();
    let cell = match dialect {
        Dialect::MySql => &MYSQL,
        Dialect::Postgres => &POSTGRES,
    };
    cell.get_or_init(|| Router::new(&common::rule(&common::T_ORDER), dialect))
}

fn metadata() -> &'static std::collections::HashMap<String, Vec<String>> {
    static METADATA: OnceLock<std::collections::HashMap<String, Vec<String>>> = OnceLock::new();
    METADATA.get_or_init(common::metadata)
}

/// 256 cases each, so the suite stays fast on two cores; `PROPTEST_CASES` raises it for a
/// longer hunt.
fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    Config {
        cases,
        // No regression files: a failure prints its minimal statement, to become a unit test.
        failure_persistence: None,
        ..Config::default()
    }
}

fn plans_correctly(s: &Stmt, dialect: Dialect) -> Result<(), TestCaseError> {
    let (sql, params) = spell(s, dialect);
    if let Err(e) = parse(&sql, dialect) {
        panic!("test bug: generated SQL does not parse: {e}\n{sql}");
    }
    let plan = router(dialect)
        .plan(&sql, &params, metadata())
        .unwrap_or_else(|e| panic!("router error: {e}\nsql: {sql}\nparams: {params:?}"))
        .unwrap_or_else(|o| panic!("not planned: {o:?}\n{sql}"));
    check(s, dialect, &sql, &plan);
    // The prepared path gives the same statements.
    let prepared = match router(dialect).prepare(&sql, metadata()) {
        Ok(keyshard_router::Prepared::Insert(p)) => p,
        other => panic!("prepare: {other:?}"),
    };
    let again = prepared.bind(&params).expect("bind");
    check(s, dialect, &sql, &again);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// (a) MySQL: awkward literals, comments, `?` placeholders, NULL/DEFAULT/0 keys.
    #[test]
    fn mysql_inserts_route_and_rewrite(s in stmt(Dialect::MySql)) {
        plans_correctly(&s, Dialect::MySql)?;
    }

    /// (b) PostgreSQL: `$n` placeholders in any order, renumbered per unit.
    #[test]
    fn postgres_inserts_route_and_rewrite(s in stmt(Dialect::Postgres)) {
        plans_correctly(&s, Dialect::Postgres)?;
    }
}

// ---------------------------------------------------------------------------------------------
// (c) Arbitrary input never panics.

fn fragment() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "INSERT INTO t_order (",
        "INSERT INTO t_order ",
        "INSERT INTO t_order SET ",
        "INSERT t_order VALUES ",
        "insert into T_ORDER(user_id, status) values",
        "INSERT INTO t_account ",
        "user_id",
        "order_id",
        "status",
        "t_order.status",
        "`t_order`",
        "\"t_order\"",
        "VALUES",
        "VALUE",
        "ROW",
        "SELECT 1",
        "(",
        ")",
        ",",
        " ",
        "\n",
        "\r",
        "=",
        "?",
        "$1",
        "$2",
        "$0",
        "$99999999999999999999",
        "$",
        "'",
        "''",
        "\"",
        "\\",
        "`",
        "--",
        "-- c\n",
        "#",
        "/*",
        "*/",
        "/* é */",
        "ON DUPLICATE KEY UPDATE ",
        "ON CONFLICT DO NOTHING",
        "SET",
        "RETURNING *",
        "RETURNING",
        ";",
        "0",
        "-0",
        "1",
        "-1",
        "18446744073709551616",
        "9223372036854775807",
        "1.5e3",
        "NULL",
        "(NULL)",
        "DEFAULT",
        "é",
        "漢字",
        "😀",
        "X'00'",
        "E'\\''",
        "$$x$$",
        " WHERE ",
        " AND ",
        " OR ",
        " IN (",
        " = ANY(",
        "'{1,2}'",
        "'5'",
        ">",
        "<>",
        " ORDER BY ",
        " GROUP BY ",
        " LIMIT ",
        " FOR UPDATE",
        " UNION SELECT ",
    ])
    .prop_map(str::to_owned);
    prop_oneof![8 => fixed, 1 => "[ -~]{0,4}", 1 => "\\PC{0,3}"]
}

fn random_params() -> impl Strategy<Value = Vec<Value>> {
    let value = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::Int),
        Just(Value::Int(0)),
        any::<u64>().prop_map(Value::UInt),
        any::<f64>().prop_map(Value::Double),
        ".{0,4}".prop_map(Value::Text),
        prop::collection::vec(any::<u8>(), 0..4).prop_map(Value::Bytes),
    ];
    prop::collection::vec(value, 0..=3)
}

fn never_panics(sql: &str, params: &[Value]) {
    for dialect in [Dialect::MySql, Dialect::Postgres] {
        let router = router(dialect);
        let _ = router.plan(sql, params, metadata());
        let _ = router.plan(sql, params, &keyshard_router::NoMetadata);
        // The proxy's path for statements sent as text: a shape checked against the parsed
        // statement plans it (or refuses it) as the parsed statement does.
        let Some(shape) = keyshard_router::Shape::of(sql, dialect) else {
            continue;
        };
        use keyshard_router::Prepared;
        match (
            router.prepare(sql, metadata()),
            router.prepare(shape.text(), metadata()),
        ) {
            (Ok(Prepared::Insert(original)), Ok(Prepared::Insert(from_shape)))
                if from_shape.stands_for(&original, &shape) == Some(true) =>
            {
                assert_eq!(
                    from_shape.bind_shape(sql, &shape).is_ok(),
                    original.bind(&[]).is_ok(),
                    "{sql}"
                );
            }
            // SELECT, UPDATE, DELETE: the same plan, or the same refusal.
            (Ok(Prepared::Query(original)), Ok(Prepared::Query(from_shape)))
                if from_shape.stands_for(&original, &shape) =>
            {
                // Only the shape the plan names (`described_as`) tells the two apart.
                let through_shape = from_shape.bind_shape(sql, &shape).map(|plan| Plan {
                    described_as: None,
                    ..plan
                });
                assert_eq!(
                    through_shape.map_err(|e| e.to_string()),
                    original.bind(&[]).map_err(|e| e.to_string()),
                    "{sql}"
                );
            }
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_strings_never_panic(sql in ".*", params in random_params()) {
        never_panics(&sql, &params);
    }

    #[test]
    fn sqlish_fragments_never_panic(
        parts in prop::collection::vec(fragment(), 0..24),
        params in random_params(),
    ) {
        never_panics(&parts.concat(), &params);
    }

    /// Fragments after a valid prefix, so that more inputs get past the parser.
    #[test]
    fn mutated_inserts_never_panic(
        prefix in prop::sample::select(vec![
            "INSERT INTO t_order (user_id, status) VALUES ",
            "INSERT INTO t_order (user_id, status, order_id) VALUES ",
            "INSERT INTO t_order VALUES ",
            "INSERT INTO t_order SET user_id = ",
            "INSERT INTO t_order SET order_id = ",
        ]),
        parts in prop::collection::vec(fragment(), 0..16),
        params in random_params(),
    ) {
        never_panics(&format!("{prefix}{}", parts.concat()), &params);
    }

    /// Fragments after a WHERE, where a read's or a write's shape cuts its literals.
    #[test]
    fn mutated_reads_and_writes_never_panic(
        prefix in prop::sample::select(vec![
            "SELECT order_id, status FROM t_order WHERE ",
            "SELECT COUNT(*) FROM t_order o WHERE o.user_id = 3 AND ",
            "SELECT status, SUM(user_id) FROM t_order WHERE user_id IN (",
            "UPDATE t_order SET status = 'x' WHERE order_id = ",
            "DELETE FROM t_order WHERE user_id = ",
        ]),
        parts in prop::collection::vec(fragment(), 0..16),
        params in random_params(),
    ) {
        never_panics(&format!("{prefix}{}", parts.concat()), &params);
    }
}
