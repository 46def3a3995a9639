//! Execute a prepared INSERT: bind parameters, generate the missing keys in one block, route
//! each row and render one statement per data node.

use std::borrow::Cow;
use std::sync::Arc;

use keyshard_config::TableRule;

use super::{KeySpec, PreparedInsert, RowSpec, Source};
use crate::RouteError;
use crate::plan::{BatchRow, ExecutionUnit, Plan};
use crate::route::{Chosen, Level, Nodes, complex_target, route};
use crate::shape::Shape;
use crate::template::{Literals, Renderer, RowKey};
use keyshard_types::Dialect;
use keyshard_types::Value;

impl PreparedInsert {
    /// Binds `params`, generates the keys the rows lack, routes every row and renders the
    /// statement for each data node.
    pub fn bind(&self, params: &[Value]) -> Result<Plan, RouteError> {
        self.bind_with(params, None, Rows::each(self.rows.len()))
    }

    /// Plans `sql`, a statement of `shape`, with this statement prepared from the shape's text
    /// (and checked with [`PreparedInsert::stands_for`]): its literals are bound as the
    /// parameters and written back as they were. A shape that folds its rows was prepared
    /// with one: each row of the statement binds it in turn.
    pub fn bind_shape(&self, sql: &str, shape: &Shape) -> Result<Plan, RouteError> {
        self.bind_with(
            &shape.values,
            Some(shape.literals(sql)),
            self.rows_of(shape)?,
        )
    }

    /// At most the bytes [`PreparedInsert::bind_shape`] holds for `sql`, a statement of
    /// `shape`, at its peak, and a copy of its units for running them: what a proxy reserves
    /// before binding a bulk load by its shape (the shape's own bytes are
    /// [`Shape::memory_bound`]). The units are the statement once more with each row's key,
    /// and the head and tail around the rows repeated per unit; strings and vectors counted
    /// at twice their length, as growth leaves them. Checked in `tests/it/memory.rs`.
    pub fn binding_bytes(&self, sql: &str, shape: &Shape) -> usize {
        /// A generated key's text and its separator, at most.
        const KEY_TEXT: usize = 24;
        let rows = shape.folded_rows().unwrap_or(self.rows.len());
        let units = rows.min(self.rule.data_nodes.len());
        let rendered = sql
            .len()
            .saturating_add(units.saturating_mul(shape.text().len()))
            .saturating_add(rows.saturating_mul(KEY_TEXT));
        // Per row: its key as generated and as a value, its data node and unit (twice each).
        let per_row = 2 * size_of::<Value>() + 6 * size_of::<usize>();
        rendered
            .saturating_mul(3)
            .saturating_add(rows.saturating_mul(per_row))
            .saturating_add(self.rule.data_nodes.len() * size_of::<usize>())
    }

    /// How the rows of a statement of `shape` read this statement's.
    fn rows_of(&self, shape: &Shape) -> Result<Rows, RouteError> {
        let Some(folded) = shape.folded else {
            return Ok(Rows::each(self.rows.len()));
        };
        let literals = self.param_count + (folded.rows - 1) * folded.per_row;
        if self.rows.len() != 1 || shape.values.len() != literals {
            return Err(RouteError::Internal(
                "a statement of repeated rows bound to another shape",
            ));
        }
        Ok(Rows {
            count: folded.rows,
            stride: folded.per_row,
            repeated: true,
        })
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
        let Ok(rows) = self.rows_of(shape) else {
            return Some(false);
        };
        if rows.count != original.rows.len()
            || shape.values.len() != self.param_count + (rows.count - 1) * rows.stride
            || !Arc::ptr_eq(&self.rule, &original.rule)
        {
            return Some(false);
        }
        let zero_means_generate = self.dialect == Dialect::MySql;
        let mut alike = true;
        for (row, theirs) in original.rows.iter().enumerate() {
            let mine = rows.spec(&self.rows, row)?;
            let values = shape.values.get(rows.offset(row)..)?;
            let routed = [
                match mine.key {
                    KeySpec::ParamOrGenerate(i) => Some(i),
                    _ => None,
                },
                param(&mine.database),
                param(&mine.table),
            ];
            let complex = mine.database_columns.iter().chain(&mine.table_columns);
            if routed
                .into_iter()
                .chain(complex.map(param))
                .flatten()
                .any(|i| {
                    values
                        .get(i)
                        .is_some_and(|v| v.means_generate(zero_means_generate))
                })
            {
                return None;
            }
            let source = |mine: &Option<Source>, theirs: &Option<Source>| match (mine, theirs) {
                (None, None) => true,
                (Some(mine), Some(theirs)) => same_source(mine, theirs, values),
                _ => false,
            };
            let key = match (&mine.key, &theirs.key) {
                (KeySpec::None, KeySpec::None) | (KeySpec::Generate, KeySpec::Generate) => true,
                (KeySpec::ParamOrGenerate(i), KeySpec::Given(Source::Value(v))) => {
                    values.get(*i) == Some(v)
                }
                (KeySpec::Given(mine), KeySpec::Given(theirs)) => same_source(mine, theirs, values),
                _ => false,
            };
            let sources = |mine: &[Option<Source>], theirs: &[Option<Source>]| {
                mine.len() == theirs.len() && mine.iter().zip(theirs).all(|(m, t)| source(m, t))
            };
            alike &= key
                && source(&mine.database, &theirs.database)
                && source(&mine.table, &theirs.table)
                && sources(&mine.database_columns, &theirs.database_columns)
                && sources(&mine.table_columns, &theirs.table_columns);
        }
        Some(alike)
    }

    fn bind_with(
        &self,
        params: &[Value],
        literals: Option<Literals<'_>>,
        rows: Rows,
    ) -> Result<Plan, RouteError> {
        if params.len() < self.param_count {
            return Err(RouteError::MissingParameter {
                needed: self.param_count,
                given: params.len(),
            });
        }
        let zero_means_generate = self.dialect == Dialect::MySql;
        let generates = |spec: &RowSpec, params: &[Value]| match spec.key {
            KeySpec::Generate => true,
            KeySpec::ParamOrGenerate(i) => params
                .get(i)
                .is_some_and(|p| p.means_generate(zero_means_generate)),
            KeySpec::None | KeySpec::Given(_) => false,
        };
        // Each row's spec and parameters (those of a repeated row start further on).
        let row = |row: usize| -> Result<(&RowSpec, &[Value]), RouteError> {
            let spec = rows
                .spec(&self.rows, row)
                .ok_or_else(RouteError::internal("a row without its spec"))?;
            let params = params
                .get(rows.offset(row)..)
                .ok_or_else(RouteError::internal("a row without its parameters"))?;
            Ok((spec, params))
        };
        let mut wanted = 0;
        for r in 0..rows.count {
            let (spec, params) = row(r)?;
            wanted += usize::from(generates(spec, params));
        }
        // Gene keys of one statement are 2^bits apart, whatever their rows' genes: a MySQL
        // client computing row i's key as LAST_INSERT_ID() + i would get them wrong.
        let gene_bits = self.generator.as_ref().map_or(0, |g| g.gene_bits());
        if gene_bits > 0 && wanted > 1 && !self.returning && self.dialect == Dialect::MySql {
            return Err(RouteError::Unsupported(format!(
                "{wanted} generated keys in one INSERT into {} without RETURNING, from a \
                 generator with gene-bits: each key's lowest {gene_bits} bits are its row's \
                 gene, so they are not consecutive and a client computing them from \
                 LAST_INSERT_ID() would be wrong; add RETURNING or insert one row at a time",
                self.rule.logic_table
            )));
        }
        let mut generated_keys = Vec::with_capacity(wanted);
        if wanted > 0 {
            let generator = self.generator.as_ref().ok_or_else(RouteError::internal(
                "a key to generate without a generator",
            ))?;
            if self.returning {
                generator.next_keys_spread(wanted, &mut generated_keys)?;
            } else {
                generator.next_keys(wanted, &mut generated_keys)?;
            }
        }

        // Each row's generated key (if any) and data node.
        let mut next_generated = generated_keys.iter_mut();
        let mut row_keys: Vec<Option<Value>> = Vec::with_capacity(rows.count);
        let mut row_nodes = Vec::with_capacity(rows.count);
        let mut scratch = String::new();
        for r in 0..rows.count {
            let (spec, params) = row(r)?;
            let generated = if generates(spec, params) {
                let key = next_generated
                    .next()
                    .ok_or_else(RouteError::internal("too few keys generated"))?;
                self.add_gene(r, key, gene_bits, spec, params)?;
                Some(Value::from(&*key))
            } else {
                None
            };
            let key = match (&generated, &spec.key) {
                (Some(key), _) => Some(key),
                (None, KeySpec::Given(source)) => resolve(source, None, params),
                (None, KeySpec::ParamOrGenerate(i)) => params.get(*i),
                (None, _) => None,
            };
            let node = self.route_row(r, spec, key, params, &mut scratch)?;
            if generated.is_none() {
                self.check_gene(r, key, node, &mut scratch)?;
            }
            row_nodes.push(node);
            row_keys.push(generated);
        }

        let bound = Bound {
            params,
            literals,
            rows,
            row_keys: &row_keys,
        };
        // Units in data node order, each with its rows in the client's order.
        let mut batch_row = None;
        let (row_units, units) = if let [node] = row_nodes[..] {
            // One row, one unit: what nearly every INSERT is.
            let (unit, row) = self.render(node, vec![0], &bound)?;
            if self.joins_others {
                batch_row = Some(Box::new(row));
            }
            (vec![0], vec![unit])
        } else {
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
                let unit_rows = (0..rows.count).filter(|r| row_units[*r] == unit).collect();
                units.push(self.render(*node, unit_rows, &bound)?.0);
            }
            (row_units, units)
        };
        Ok(Plan {
            generated_keys,
            row_units,
            batch_row,
            ..Plan::of_units(units)
        })
    }

    /// What row values say of `level`: its value, or the target a complex strategy's values
    /// give; `None`: nothing, every node. `Err(None)`: the value is an expression; `Err(Some)`:
    /// the values route nowhere, and why.
    fn chosen<'a>(
        &'a self,
        level: Level,
        source: &'a Option<Source>,
        columns: &'a [Option<Source>],
        key: Option<&'a Value>,
        params: &'a [Value],
        scratch: &mut String,
    ) -> Result<Option<Chosen<'a>>, Option<String>> {
        let rule = &*self.rule;
        let Some(strategy) = level.strategy(rule).filter(|s| s.is_complex()) else {
            return match source {
                None => Ok(None),
                Some(source) => resolve(source, key, params)
                    .map(|v| Some(Chosen::Value(v)))
                    .ok_or(None),
            };
        };
        // Every column's value from the row, or no choice (every node).
        let values: Option<Vec<&Value>> = columns
            .iter()
            .map(|s| s.as_ref().and_then(|s| resolve(s, key, params)))
            .collect();
        let Some(values) = values else {
            return Ok(None);
        };
        let value_of = |name: &str| {
            let i = strategy
                .columns
                .iter()
                .position(|c| c.eq_ignore_ascii_case(name));
            i.and_then(|i| values.get(i).map(|v| (*v).clone()))
        };
        let names = rule.data_nodes.iter().map(|n| match level {
            Level::Database => n.data_source.as_str(),
            Level::Table => n.table.as_str(),
        });
        complex_target(strategy, &value_of, names, scratch)
            .map(|target| Some(Chosen::Target(target)))
            .map_err(Some)
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
            column: column(rule, level).into_owned(),
            reason,
        };
        let expression = |level: Level| {
            no_route(
                level,
                "its value is an expression; only literals and parameters can be routed".into(),
            )
        };
        let chosen = |level: Level, problem: Option<String>| match problem {
            Some(reason) => no_route(level, reason),
            None => expression(level),
        };
        let database = self
            .chosen(
                Level::Database,
                &spec.database,
                &spec.database_columns,
                key,
                params,
                scratch,
            )
            .map_err(|p| chosen(Level::Database, p))?;
        let table = self
            .chosen(
                Level::Table,
                &spec.table,
                &spec.table_columns,
                key,
                params,
                scratch,
            )
            .map_err(|p| chosen(Level::Table, p))?;
        match route(rule, database, table, scratch)
            .map_err(|(level, reason)| no_route(level, reason))?
        {
            Nodes::One(node) => Ok(node),
            Nodes::Zero => Err(no_route(
                Level::Table,
                "no data node has both the chosen data source and table".into(),
            )),
            Nodes::Many(nodes) => {
                let missing: Vec<Cow<'_, str>> = [
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

    /// The unit of `node` with `unit_rows`, and where its rows are in its text (with, for a
    /// statement that may join a batch on PostgreSQL, where its placeholders are).
    fn render(
        &self,
        node: usize,
        unit_rows: Vec<usize>,
        bound: &Bound<'_>,
    ) -> Result<(ExecutionUnit, BatchRow), RouteError> {
        let data_node = &self.rule.data_nodes[node];
        let template = &self.template;
        let tables = [data_node.table.as_str()];
        let mut renderer = Renderer::new(&self.sql, self.dialect, &tables, bound.params);
        renderer.literals = bound.literals;
        if self.joins_others && self.dialect == Dialect::Postgres {
            renderer.placeholders = Some(Vec::new());
        }
        renderer.render(template.head(), RowKey::NONE)?;
        let rows_start = renderer.out.len();
        for (n, &row) in unit_rows.iter().enumerate() {
            if n > 0 {
                renderer.out.push_str(template.row_separator);
            }
            let spec = bound.rows.spec(&self.rows, row);
            let key = RowKey {
                key: bound.row_keys[row].as_ref(),
                as_placeholder: spec.is_some_and(|s| s.has_params) && bound.literals.is_none(),
            };
            bound.from(&mut renderer, bound.rows.offset(row))?;
            renderer.render(template.row(bound.rows.template_row(row)), key)?;
        }
        let rows = rows_start..renderer.out.len();
        // What follows the rows numbers its parameters on from the last row's.
        bound.from(&mut renderer, bound.rows.offset(bound.rows.count - 1))?;
        renderer.render(template.tail(), RowKey::NONE)?;
        let unit = ExecutionUnit {
            data_source: data_node.data_source.clone(),
            table: data_node.table.clone(),
            sql: renderer.out,
            params: renderer.out_params,
            rows: unit_rows,
            binary_results: false,
        };
        let rows = BatchRow {
            row: rows,
            placeholders: renderer.placeholders.unwrap_or_default(),
        };
        Ok((unit, rows))
    }
}

/// How the rows of one execution read the prepared rows: each its own, or (a shape that folds
/// its rows, see [`Shape`]) every one the single prepared row, with its literals `stride`
/// parameters on from the row before's.
#[derive(Clone, Copy)]
struct Rows {
    count: usize,
    stride: usize,
    repeated: bool,
}

impl Rows {
    fn each(count: usize) -> Rows {
        Rows {
            count,
            stride: 0,
            repeated: false,
        }
    }

    fn template_row(self, row: usize) -> usize {
        if self.repeated { 0 } else { row }
    }

    fn spec(self, specs: &[RowSpec], row: usize) -> Option<&RowSpec> {
        specs.get(self.template_row(row))
    }

    /// Where row `row`'s parameters start.
    fn offset(self, row: usize) -> usize {
        row * self.stride
    }
}

/// What one execution binds, for rendering its units.
struct Bound<'a> {
    params: &'a [Value],
    literals: Option<Literals<'a>>,
    rows: Rows,
    row_keys: &'a [Option<Value>],
}

impl<'a> Bound<'a> {
    /// Points `renderer` at the parameters (or literals) from `offset` on.
    fn from(&self, renderer: &mut Renderer<'a>, offset: usize) -> Result<(), RouteError> {
        if !self.rows.repeated {
            return Ok(());
        }
        renderer.params = self
            .params
            .get(offset..)
            .ok_or_else(RouteError::internal("a row without its parameters"))?;
        renderer.literals = self.literals.map(|l| l.from(offset));
        Ok(())
    }
}

/// The parameter `source` reads, if it reads one.
fn param(source: &Option<Source>) -> Option<usize> {
    match source {
        Some(Source::Param(i)) => Some(*i),
        _ => None,
    }
}

/// The value `source` stands for in a row whose key is `key`.
pub(super) fn resolve<'a>(
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

fn column(rule: &TableRule, level: Level) -> Cow<'_, str> {
    match level.strategy(rule) {
        // What the statement would have set: its hint's value.
        Some(s) if s.is_hint() => Cow::Borrowed(match level {
            Level::Database => "the hint's SHARDING_DATABASE_VALUE",
            Level::Table => "the hint's SHARDING_TABLE_VALUE",
        }),
        Some(s) if s.is_complex() => Cow::Owned(s.columns.join(", ")),
        Some(s) => Cow::Borrowed(&s.column),
        None => Cow::Borrowed(""),
    }
}
