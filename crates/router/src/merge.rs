//! How the rows of several shards become one result set, as one database holding all the rows
//! would have returned it. The router decides this at prepare time (and fills in LIMIT at bind
//! time); the backend applies it to the shards' results.

use keyshard_types::Dialect;

/// A read's merge: grouping and aggregates first, then ordering, then OFFSET/LIMIT, then the
/// columns the router added are dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeSpec {
    /// GROUP BY columns: rows equal in all of them form one group. Empty while `aggregates`
    /// is not: the whole result is one group (`SELECT COUNT(*) FROM t`).
    pub group_by: Vec<ColumnRef>,
    /// The aggregate columns, combined per group. Columns that are neither grouped nor
    /// aggregated take the group's first row's value.
    pub aggregates: Vec<AggregateColumn>,
    /// Select-list expressions over aggregates (`SUM(x) / COUNT(*)`), computed from each
    /// merged group's aggregates (hidden columns) into the expression's column.
    pub computed: Vec<ComputedColumn>,
    /// MySQL, for AVG and division: the column holding each node's
    /// `@@div_precision_increment` + 1 (0 where unknown: SQLite), the digits a division adds
    /// to its dividend's scale; 4, its default, where unknown.
    pub division_scale: Option<usize>,
    /// HAVING, tested on each merged group (the nodes are sent the statement without it: a
    /// node's part of a group says nothing of the whole group).
    pub having: Option<Filter>,
    /// The one row an aggregate without GROUP BY answers when no node sends a row (which
    /// happens when the nodes group by a DISTINCT aggregate's argument and have no rows):
    /// COUNTs 0, everything else NULL, hidden columns included.
    pub when_empty: Option<Vec<keyshard_types::Value>>,
    /// ORDER BY, in priority order. Groups without an ORDER BY come out ordered by the
    /// GROUP BY columns, ascending (what MySQL and SQLite do).
    pub order_by: Vec<SortKey>,
    /// Rows skipped after merging.
    pub offset: u64,
    /// Rows kept after skipping; `None`: all.
    pub limit: Option<u64>,
    /// Trailing columns the router appended (sort keys the client did not select, AVG's
    /// counts) that the client must not see.
    pub hidden_columns: usize,
    /// How values compare: MySQL compares text case-insensitively (its default collation)
    /// and sorts NULL first ascending; PostgreSQL sorts NULL last ascending.
    pub dialect: Dialect,
}

impl MergeSpec {
    /// Whether the merge only puts the shards' rows one after the other: nothing grouped,
    /// ordered, windowed or hidden, so each shard's rows may go to the client as they come.
    pub fn is_concatenation(&self) -> bool {
        self.group_by.is_empty()
            && self.aggregates.is_empty()
            && self.computed.is_empty()
            && self.having.is_none()
            && self.order_by.is_empty()
            && self.offset == 0
            && self.limit.is_none()
            && self.hidden_columns == 0
    }
}

/// A column of the shards' rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnRef {
    /// By 0-based position.
    Index(usize),
    /// By name, case-insensitively, among the result's columns (under `SELECT *` only the
    /// result knows the positions).
    Name(String),
}

/// One ORDER BY key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKey {
    /// The column sorted by.
    pub column: ColumnRef,
    /// DESC.
    pub descending: bool,
    /// `NULLS FIRST` / `NULLS LAST` as written; `None`: the dialect's default.
    pub nulls_first: Option<bool>,
}

/// An aggregate in the select list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggregateColumn {
    /// Its position in the shards' rows.
    pub index: usize,
    /// How the shards' partial values combine.
    pub function: Aggregate,
    /// `COUNT`/`SUM`/`AVG(DISTINCT x)`: the column holding `x`, which the nodes also group by.
    /// A group's rows are combined once per distinct non-NULL `x` (each such row holds that
    /// `x` counted or summed once), so a value on several nodes counts once.
    pub distinct: Option<usize>,
    /// `string_agg`/`GROUP_CONCAT` ([`Aggregate::Join`]): how the group's pieces join.
    pub joined: Option<Joined>,
}

/// How the pieces of a `string_agg`/`GROUP_CONCAT` join. With an ORDER BY in the call, the
/// nodes also group by its keys, so each piece holds the values of one key; the merge joins
/// a group's pieces in the keys' order (pieces of equal keys in any order, as the database
/// orders ties).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joined {
    /// What goes between two values.
    pub separator: Box<str>,
    /// The call's ORDER BY keys, columns of the nodes' rows (hidden where not selected).
    pub order: Vec<SortKey>,
    /// DISTINCT: the one key is the value, and pieces of equal keys (equal values, as the
    /// collation compares them) are joined once.
    pub distinct: bool,
    /// MySQL: the column holding each node's `@@group_concat_max_len` (0 where a node has
    /// none: SQLite). A joined value longer than that is one the database would cut (with a
    /// warning), so the merge stops and the read is gathered.
    pub max_length: Option<usize>,
}

/// How partial aggregates combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// COUNT: the sum of the shards' counts.
    Count,
    /// SUM: the sum, NULL when every shard's is NULL.
    Sum,
    /// MIN over the non-NULL values.
    Min,
    /// MAX over the non-NULL values.
    Max,
    /// AVG, sent to the shards as SUM (at `index`) and COUNT (at `count_index`, a hidden
    /// column): the sum of sums over the sum of counts.
    Avg {
        /// Where the shards' COUNT for this average is.
        count_index: usize,
    },
    /// `array_agg` without ORDER BY: the shards' arrays one after another, NULL when every
    /// shard's is NULL (in what order the elements come is unspecified, as in one database).
    Concat,
    /// `string_agg`/`GROUP_CONCAT`: the pieces joined as [`AggregateColumn::joined`] says,
    /// NULL when every piece is NULL.
    Join,
}

/// A select-list expression the merge computes from merged aggregates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputedColumn {
    /// The expression's column, which the nodes fill with their own (partial) value, or
    /// PostgreSQL's none: only its description counts.
    pub index: usize,
    /// What it computes.
    pub expr: Computed,
}

/// Arithmetic and one comparison over merged columns and number literals, with the
/// database's own typing: integers stay integers (PostgreSQL's as wide as the widest
/// operand), exact decimals keep their scale (a division's as the database sets it), doubles
/// are doubles, NULL in gives NULL out. What the merge cannot compute as the database does (an
/// overflow, a division PostgreSQL refuses) stops it, and the read is gathered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Computed {
    /// A merged column (an aggregate), by position.
    Column(usize),
    /// A number literal as written: digits with an optional point.
    Number(Box<str>),
    /// `-x`.
    Negate(Box<Computed>),
    /// `x op y`.
    Arithmetic(Box<Computed>, Arithmetic, Box<Computed>),
    /// `x op y`, the whole expression: MySQL answers 1 or 0, PostgreSQL a boolean.
    Compare(Box<Computed>, Comparison, Box<Computed>),
}

impl Computed {
    /// Whether it divides anywhere.
    pub fn divides(&self) -> bool {
        match self {
            Computed::Column(_) | Computed::Number(_) => false,
            Computed::Negate(inner) => inner.divides(),
            Computed::Arithmetic(left, op, right) => {
                *op == Arithmetic::Divide || left.divides() || right.divides()
            }
            Computed::Compare(left, _, right) => left.divides() || right.divides(),
        }
    }
}

/// An arithmetic operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arithmetic {
    /// `+`
    Add,
    /// `-`
    Subtract,
    /// `*`
    Multiply,
    /// `/`
    Divide,
}

/// A HAVING clause the merge tests itself: comparisons of merged columns with numbers, joined
/// by AND and OR, with SQL's three-valued logic (a comparison with NULL is unknown, and
/// a group is kept only where the whole clause is true).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// Every part true.
    And(Vec<Filter>),
    /// Some part true.
    Or(Vec<Filter>),
    /// `left op right`.
    Compare {
        /// The left operand.
        left: FilterOperand,
        /// The comparison.
        op: Comparison,
        /// The right operand.
        right: FilterOperand,
    },
    /// `operand IS NULL` (`negated`: IS NOT NULL).
    IsNull {
        /// What is tested.
        operand: FilterOperand,
        /// IS NOT NULL.
        negated: bool,
    },
}

/// One side of a HAVING comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterOperand {
    /// A column of the merged rows, by position (an aggregate, or a GROUP BY column).
    Column(usize),
    /// A number literal as written (digits, an optional sign and decimal point): compared
    /// exactly with exact values, as a double with doubles, as the databases compare them.
    Number(Box<str>),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `=`
    Eq,
    /// `<>`, `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

impl Comparison {
    /// Whether `order` (left against right) satisfies the comparison.
    pub fn holds(self, order: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            Comparison::Eq => order == Equal,
            Comparison::NotEq => order != Equal,
            Comparison::Lt => order == Less,
            Comparison::LtEq => order != Greater,
            Comparison::Gt => order == Greater,
            Comparison::GtEq => order != Less,
        }
    }
}
