//! Execute: bind parameters, generate the missing keys in one block, route each row and render
//! one statement per data node.

use std::sync::Arc;

use keyshard_config::TableRule;
use keyshard_keygen::{Key, KeyGenerator};

use crate::merge::MergeSpec;
use crate::route::{Level, Nodes, route};
use crate::shape::Shape;
use crate::template::{Literals, Renderer, RowKey, Template};
use crate::value::Value;
use crate::{Dialect, RouteError};

/// Where a row's sharding value comes from.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// A literal in the statement.
    Value(Value),
    /// A bound parameter (0-based).
    Param(usize),
    /// The row's key, given or generated.
    Key,
    /// An expression the router does not evaluate.
    Expr,
}

/// How a row gets its key.
#[derive(Debug, Clone)]
pub(crate) enum KeySpec {
    /// The table generates no keys.
    None,
    /// The statement gives the key.
    Given(Source),
    /// The key column is absent, `NULL` or `DEFAULT` (or MySQL's 0): generate.
    Generate,
    /// The key is parameter `i`: generate when it is bound to NULL (or MySQL's 0).
    ParamOrGenerate(usize),
}

#[derive(Debug, Clone)]
pub(crate) struct RowSpec {
    pub(crate) key: KeySpec,
    /// The database strategy's value for this row; `None` when the column is not inserted.
    pub(crate) database: Option<Source>,
    /// The table strategy's value for this row; `None` when the column is not inserted.
    pub(crate) table: Option<Source>,
    /// A generated key goes in as a placeholder when the row has parameters, else as a literal.
    pub(crate) has_params: bool,
}

/// An INSERT into a sharded table, parsed once; [`PreparedInsert::bind`] plans one execution.
#[derive(Debug, Clone)]
pub struct PreparedInsert {
    pub(crate) sql: Box<str>,
    pub(crate) dialect: Dialect,
    pub(crate) rule: Arc<TableRule>,
    pub(crate) template: Template,
    pub(crate) rows: Vec<RowSpec>,
    pub(crate) generator: Option<Arc<dyn KeyGenerator>>,
    pub(crate) param_count: usize,
    /// The column each parameter is the whole value of, when every parameter is one.
    pub(crate) value_columns: Option<Box<[Box<str>]>>,
}

/// What to run for one statement: one unit per data node, and the keys generated for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// One rewritten statement per data node the rows go to, in data node order.
    pub units: Vec<ExecutionUnit>,
    /// The keys generated for this statement, in the client's row order (rows that supplied
    /// their own key have none here).
    pub generated_keys: Vec<Key>,
    /// For each row of the statement, in the client's order, the index of its unit.
    pub row_units: Vec<usize>,
    /// For a read sent to several data nodes: how their rows become one result. Such units
    /// run independently, outside any transaction the statement does not already have.
    pub merge: Option<MergeSpec>,
    /// Every unit writes the same rows to its own copy of a broadcast table: the statement
    /// changed as many rows as one unit did.
    pub replicated: bool,
    /// An UPDATE that sets a sharding column the WHERE clause does not pin: runs first, and
    /// the UPDATE is refused when it finds a row.
    pub guard: Option<Box<MoveGuard>>,
}

/// The rows an UPDATE would have to move to another data node: those its WHERE clause matches
/// on the nodes its new sharding values do not route to.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveGuard {
    /// A read of at most one such row, on those nodes only.
    pub reads: Plan,
    /// The sharding column the UPDATE sets.
    pub column: String,
}

impl MoveGuard {
    /// The error when `reads` found a row: ShardingSphere's refusal to move one.
    pub fn refusal(&self) -> RouteError {
        crate::unchanged::moves(&self.column)
    }
}

/// One statement for one data node.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionUnit {
    /// The data source to run it on.
    pub data_source: String,
    /// The actual table it writes.
    pub table: String,
    /// The rewritten SQL.
    pub sql: String,
    /// Its parameters, in placeholder order.
    pub params: Vec<Value>,
    /// The statement's rows (0-based, client order) that this unit inserts, in order.
    pub rows: Vec<usize>,
}

impl PreparedInsert {
    /// How many parameters an execution must bind.
    pub fn param_count(&self) -> usize {
        self.param_count
    }

    /// The logic table the statement inserts into.
    pub fn logic_table(&self) -> &str {
        &self.rule.logic_table
    }

    /// The table rule the statement inserts by.
    pub fn table_rule(&self) -> &TableRule {
        &self.rule
    }

    /// How many rows the statement inserts.
    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// The column each parameter is the whole value of (`$2` in `VALUES ($1, $2)` is the
    /// second column's), in parameter order; `None` when some parameter is anything else:
    /// part of an expression, outside the rows, or used twice.
    pub fn value_columns(&self) -> Option<&[Box<str>]> {
        self.value_columns.as_deref()
    }

    /// Binds `params`, generates the keys the rows lack, routes every row and renders the
    /// statement for each data node.
    pub fn bind(&self, params: &[Value]) -> Result<Plan, RouteError> {
        self.bind_with(params, None)
    }

    /// Plans `sql`, a statement of `shape`, with this statement prepared from the shape's text
    /// (and checked with [`PreparedInsert::stands_for`]): its literals are bound as the
    /// parameters and written back as they were.
    pub fn bind_shape(&self, sql: &str, shape: &Shape) -> Result<Plan, RouteError> {
        let literals = Literals {
            sql,
            ranges: &shape.ranges,
        };
        self.bind_with(&shape.values, Some(literals))
    }

    /// Whether this statement, prepared from `shape`'s text, plans every statement of that
    /// shape as `original`, prepared from one of them, plans it. Each literal that became a
    /// parameter must have been a plain value to the parser (not, say, a cast's operand, which
    /// is an expression), so that binding it routes exactly as the literal does; that depends
    /// on the statement's form, not its values, so one check answers for the shape.
    ///
    /// `None`: this statement cannot tell. In MySQL a routed 0 is read as "generate the key"
    /// both bare and inside a cast, where any other number would make the cast an expression;
    /// another statement of the shape must decide.
    pub fn stands_for(&self, original: &PreparedInsert, shape: &Shape) -> Option<bool> {
        let values = &shape.values;
        let zero_means_generate = self.dialect == Dialect::MySql;
        let routed_params = self.rows.iter().flat_map(|row| {
            let key = match row.key {
                KeySpec::ParamOrGenerate(i) => Some(i),
                _ => None,
            };
            let param = |source: &Option<Source>| match source {
                Some(Source::Param(i)) => Some(*i),
                _ => None,
            };
            [key, param(&row.database), param(&row.table)]
        });
        if routed_params.flatten().any(|i| {
            values
                .get(i)
                .is_some_and(|v| v.means_generate(zero_means_generate))
        }) {
            return None;
        }
        let source = |mine: &Option<Source>, theirs: &Option<Source>| match (mine, theirs) {
            (None, None) => true,
            (Some(mine), Some(theirs)) => same_source(mine, theirs, values),
            _ => false,
        };
        let key = |mine: &KeySpec, theirs: &KeySpec| match (mine, theirs) {
            (KeySpec::None, KeySpec::None) | (KeySpec::Generate, KeySpec::Generate) => true,
            (KeySpec::ParamOrGenerate(i), KeySpec::Given(Source::Value(v))) => {
                values.get(*i) == Some(v)
            }
            (KeySpec::Given(mine), KeySpec::Given(theirs)) => same_source(mine, theirs, values),
            _ => false,
        };
        Some(
            self.param_count == values.len()
                && Arc::ptr_eq(&self.rule, &original.rule)
                && self.rows.len() == original.rows.len()
                && self.rows.iter().zip(&original.rows).all(|(mine, theirs)| {
                    key(&mine.key, &theirs.key)
                        && source(&mine.database, &theirs.database)
                        && source(&mine.table, &theirs.table)
                }),
        )
    }

    fn bind_with(
        &self,
        params: &[Value],
        literals: Option<Literals<'_>>,
    ) -> Result<Plan, RouteError> {
        if params.len() < self.param_count {
            return Err(RouteError::MissingParameter {
                needed: self.param_count,
                given: params.len(),
            });
        }
        let zero_means_generate = self.dialect == Dialect::MySql;
        let generates = |spec: &RowSpec| match spec.key {
            KeySpec::Generate => true,
            KeySpec::ParamOrGenerate(i) => params
                .get(i)
                .is_some_and(|p| p.means_generate(zero_means_generate)),
            KeySpec::None | KeySpec::Given(_) => false,
        };
        let wanted = self.rows.iter().filter(|r| generates(r)).count();
        let mut generated_keys = Vec::with_capacity(wanted);
        if wanted > 0 {
            let generator = self.generator.as_ref().ok_or(RouteError::Internal(
                "a key to generate without a generator",
            ))?;
            generator.next_keys(wanted, &mut generated_keys)?;
        }

        // Each row's generated key (if any) and data node.
        let mut next_generated = generated_keys.iter();
        let mut row_keys: Vec<Option<Value>> = Vec::with_capacity(self.rows.len());
        let mut row_nodes = Vec::with_capacity(self.rows.len());
        let mut scratch = String::new();
        for (row, spec) in self.rows.iter().enumerate() {
            let generated = if generates(spec) {
                let key = next_generated
                    .next()
                    .ok_or(RouteError::Internal("too few keys generated"))?;
                Some(Value::from(key))
            } else {
                None
            };
            let key = match (&generated, &spec.key) {
                (Some(key), _) => Some(key),
                (None, KeySpec::Given(source)) => resolve(source, None, params),
                (None, KeySpec::ParamOrGenerate(i)) => params.get(*i),
                (None, _) => None,
            };
            row_nodes.push(self.route_row(row, spec, key, params, &mut scratch)?);
            row_keys.push(generated);
        }

        // Units in data node order, each with its rows in the client's order.
        let mut node_units = vec![usize::MAX; self.rule.data_nodes.len()];
        let mut used: Vec<usize> = row_nodes.clone();
        used.sort_unstable();
        used.dedup();
        for (unit, node) in used.iter().enumerate() {
            node_units[*node] = unit;
        }
        let row_units: Vec<usize> = row_nodes.iter().map(|n| node_units[*n]).collect();
        let mut units = Vec::with_capacity(used.len());
        for (unit, node) in used.iter().enumerate() {
            let rows: Vec<usize> = (0..self.rows.len())
                .filter(|r| row_units[*r] == unit)
                .collect();
            units.push(self.render(*node, rows, &row_keys, params, literals)?);
        }
        Ok(Plan {
            units,
            generated_keys,
            row_units,
            merge: None,
            replicated: false,
            guard: None,
        })
    }

    fn route_row(
        &self,
        row: usize,
        spec: &RowSpec,
        key: Option<&Value>,
        params: &[Value],
        scratch: &mut String,
    ) -> Result<usize, RouteError> {
        let rule = &*self.rule;
        let no_route = |level: Level, reason: String| RouteError::NoRoute {
            row: row + 1,
            column: column(rule, level).to_owned(),
            reason,
        };
        let expression = |level: Level| {
            no_route(
                level,
                "its value is an expression; only literals and parameters can be routed".into(),
            )
        };
        let database = match &spec.database {
            None => None,
            Some(source) => {
                Some(resolve(source, key, params).ok_or_else(|| expression(Level::Database))?)
            }
        };
        let table = match &spec.table {
            None => None,
            Some(source) => {
                Some(resolve(source, key, params).ok_or_else(|| expression(Level::Table))?)
            }
        };
        match route(rule, database, table, scratch)
            .map_err(|(level, reason)| no_route(level, reason))?
        {
            Nodes::One(node) => Ok(node),
            Nodes::Zero => Err(no_route(
                Level::Table,
                "no data node has both the chosen data source and table".into(),
            )),
            Nodes::Many(nodes) => {
                let missing: Vec<&str> = [
                    (Level::Database, &spec.database),
                    (Level::Table, &spec.table),
                ]
                .into_iter()
                .filter(|(_, source)| source.is_none())
                .map(|(level, _)| column(rule, level))
                .filter(|c| !c.is_empty())
                .collect();
                let hint = if missing.is_empty() {
                    String::new()
                } else {
                    format!(" (the statement does not set {})", missing.join(", "))
                };
                Err(RouteError::AmbiguousRoute {
                    row: row + 1,
                    nodes,
                    hint,
                })
            }
        }
    }

    fn render(
        &self,
        node: usize,
        rows: Vec<usize>,
        row_keys: &[Option<Value>],
        params: &[Value],
        literals: Option<Literals<'_>>,
    ) -> Result<ExecutionUnit, RouteError> {
        let data_node = &self.rule.data_nodes[node];
        let template = &self.template;
        let tables = [data_node.table.as_str()];
        let mut renderer = Renderer::new(&self.sql, self.dialect, &tables, params);
        renderer.literals = literals;
        renderer.render(template.head(), RowKey::NONE)?;
        for (n, row) in rows.iter().enumerate() {
            if n > 0 {
                renderer.out.push_str(template.row_separator);
            }
            let key = RowKey {
                key: row_keys[*row].as_ref(),
                as_placeholder: self.rows[*row].has_params && literals.is_none(),
            };
            renderer.render(template.row(*row), key)?;
        }
        renderer.render(template.tail(), RowKey::NONE)?;
        Ok(ExecutionUnit {
            data_source: data_node.data_source.clone(),
            table: data_node.table.clone(),
            sql: renderer.out,
            params: renderer.out_params,
            rows,
        })
    }
}

/// The value `source` stands for in a row whose key is `key`.
fn resolve<'a>(
    source: &'a Source,
    key: Option<&'a Value>,
    params: &'a [Value],
) -> Option<&'a Value> {
    match source {
        Source::Value(v) => Some(v),
        Source::Param(i) => params.get(*i),
        Source::Key => key,
        Source::Expr => None,
    }
}

/// Whether `mine`, of a statement prepared from a shape, reads a row's value as `theirs`, of
/// the statement the shape was cut from: a parameter where that had a literal.
fn same_source(mine: &Source, theirs: &Source, values: &[Value]) -> bool {
    match (mine, theirs) {
        (Source::Param(i), Source::Value(v)) => values.get(*i) == Some(v),
        (Source::Value(a), Source::Value(b)) => a == b,
        (Source::Key, Source::Key) | (Source::Expr, Source::Expr) => true,
        _ => false,
    }
}

fn column(rule: &TableRule, level: Level) -> &str {
    let strategy = match level {
        Level::Database => &rule.database_strategy,
        Level::Table => &rule.table_strategy,
    };
    strategy.as_ref().map_or("", |s| s.column.as_str())
}
