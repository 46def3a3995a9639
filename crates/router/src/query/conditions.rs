//! Which data nodes a WHERE clause can match: equalities, IN lists, `= ANY(array)` and ranges
//! (`BETWEEN`, `<`, `<=`, `>`, `>=`) on sharding columns (literals and parameters), joined by
//! AND and OR; anything else matches every node.

use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{BinaryOperator, DataType, Expr, InTarget, UnaryOperator, Value as SqlValue};

use crate::RouteError;
use crate::literal::{literal_value, number_value};
use crate::locate::Locator;
use crate::route::{NodeSet, is_sharding_column, nodes_with};
use crate::tokens::Tokens;
use keyshard_types::Value;
use keyshard_types::array::{MAX_DIMS, parse_text};

mod between;
mod complex;

use between::{Between, conjunction};

/// A value in the statement: written there, or a parameter (0-based).
#[derive(Debug, Clone)]
pub(crate) enum Operand {
    Value(Value),
    Param(usize),
}

/// Which data nodes a WHERE clause can match.
#[derive(Debug, Clone)]
pub(super) enum Condition {
    /// Any node: the clause says nothing the router reads.
    Any,
    /// A sharding column of the statement's table `table` (of every sharded table that shards
    /// by it when unqualified) equals one of `values`.
    Equals {
        table: Option<usize>,
        column: String,
        values: Vec<Operand>,
    },
    /// A sharding column equals an element of the array parameter `param` (0-based):
    /// `order_id = ANY($1)`, routed as the IN list of its elements once it is bound.
    InArray {
        table: Option<usize>,
        column: String,
        param: usize,
    },
    /// A sharding column lies between two values (boxed: rarer, and larger, than the others).
    Range(Box<Between>),
    And(Vec<Condition>),
    Or(Vec<Condition>),
}

impl Condition {
    /// What a WHERE clause (`None`: the statement has none) says about where its rows are;
    /// columns are qualified by the top-level FROM's `aliases` of the sharded tables `rules`.
    pub(super) fn of_where(
        selection: Option<&Expr>,
        rules: &[Arc<TableRule>],
        aliases: &[(String, usize)],
        tokens: &Tokens,
        locator: &mut Locator<'_>,
    ) -> Result<Condition, RouteError> {
        let Some(expr) = selection else {
            return Ok(Condition::Any);
        };
        let context = Context {
            rules,
            aliases,
            tokens,
        };
        context.condition(expr, locator)
    }

    /// Whether the clause says nothing of where its rows are: no condition on a sharding
    /// column, or one only on a side of an OR.
    pub(super) fn is_any(&self) -> bool {
        match self {
            Condition::Any => true,
            Condition::Equals { .. } | Condition::InArray { .. } | Condition::Range(_) => false,
            Condition::And(parts) => parts.iter().all(Condition::is_any),
            Condition::Or(parts) => parts.iter().any(Condition::is_any),
        }
    }

    /// The one value the clause requires `column` to have in every row it matches: an
    /// equality with a single value, alone or among conditions joined by AND.
    pub(super) fn pinned(&self, column: &str) -> Option<Operand> {
        match self {
            Condition::Equals {
                column: c, values, ..
            } if c.eq_ignore_ascii_case(column) && values.len() == 1 => values.first().cloned(),
            Condition::And(parts) => parts.iter().find_map(|p| p.pinned(column)),
            _ => None,
        }
    }

    /// Whether this condition, read from a shape's text, is `original` (read from a statement
    /// of the shape, whose literals are `values`) with each of those literals a parameter.
    pub(super) fn stands_for(&self, original: &Condition, values: &[Value]) -> bool {
        let operand = |mine: &Operand, theirs: &Operand| match (mine, theirs) {
            (Operand::Param(i), Operand::Value(v)) => values.get(*i) == Some(v),
            (Operand::Value(mine), Operand::Value(theirs)) => mine == theirs,
            _ => false,
        };
        let all = |mine: &[Condition], theirs: &[Condition]| {
            mine.len() == theirs.len()
                && mine
                    .iter()
                    .zip(theirs)
                    .all(|(m, t)| m.stands_for(t, values))
        };
        match (self, original) {
            (Condition::Any, Condition::Any) => true,
            (
                Condition::Equals {
                    table,
                    column,
                    values: mine,
                },
                Condition::Equals {
                    table: their_table,
                    column: their_column,
                    values: theirs,
                },
            ) => {
                table == their_table
                    && column == their_column
                    && mine.len() == theirs.len()
                    && mine.iter().zip(theirs).all(|(m, t)| operand(m, t))
            }
            (Condition::Range(mine), Condition::Range(theirs)) => mine.stands_for(theirs, operand),
            (Condition::And(mine), Condition::And(theirs))
            | (Condition::Or(mine), Condition::Or(theirs)) => all(mine, theirs),
            // An array parameter stands for no literal.
            _ => false,
        }
    }
}

struct Context<'a> {
    rules: &'a [Arc<TableRule>],
    aliases: &'a [(String, usize)],
    tokens: &'a Tokens,
}

impl Context<'_> {
    /// What `expr` (a WHERE clause) says about where its rows are.
    fn condition(&self, expr: &Expr, locator: &mut Locator<'_>) -> Result<Condition, RouteError> {
        Ok(match expr {
            Expr::Nested(inner) => self.condition(inner, locator)?,
            Expr::BinaryOp { left, op, right } => match op {
                BinaryOperator::And => conjunction(
                    self.condition(left, locator)?,
                    self.condition(right, locator)?,
                ),
                BinaryOperator::Or => Condition::Or(vec![
                    self.condition(left, locator)?,
                    self.condition(right, locator)?,
                ]),
                BinaryOperator::Eq => match (self.column(left), self.column(right)) {
                    (Some((table, column)), None) => {
                        self.equals(table, column, [&**right], locator)?
                    }
                    (None, Some((table, column))) => {
                        self.equals(table, column, [&**left], locator)?
                    }
                    _ => Condition::Any,
                },
                BinaryOperator::Gt
                | BinaryOperator::GtEq
                | BinaryOperator::Lt
                | BinaryOperator::LtEq => self.compare(left, op, right, locator)?,
                _ => Condition::Any,
            },
            Expr::Between {
                expr,
                negated: false,
                low,
                high,
            } => self.between(expr, low, high, locator)?,
            Expr::In {
                expr,
                target: InTarget::List(list),
                negated: false,
                ..
            } => match self.column(expr) {
                Some((table, column)) => self.equals(table, column, list, locator)?,
                None => Condition::Any,
            },
            // `col = ANY(array)` is `col IN (elements)`; `<> ALL`, `< ANY` and a subquery's
            // array match rows anywhere.
            Expr::AnyOp {
                left,
                compare_op: BinaryOperator::Eq,
                right,
                ..
            } => match self.column(left) {
                Some((table, column)) => self.any(table, column, right, locator)?,
                None => Condition::Any,
            },
            _ => Condition::Any,
        })
    }

    /// Where `column = ANY(array)` matches: by the elements of an `ARRAY[…]` constructor or a
    /// `'{…}'` literal, or by those of an array parameter when it is bound.
    fn any(
        &self,
        table: Option<usize>,
        column: &str,
        array: &Expr,
        locator: &mut Locator<'_>,
    ) -> Result<Condition, RouteError> {
        match array {
            Expr::Nested(inner) => self.any(table, column, inner, locator),
            Expr::Array(_) => {
                let mut elements = Vec::new();
                if !flatten(array, &mut elements, 0) {
                    return Ok(Condition::Any);
                }
                self.equals(table, column, elements, locator)
            }
            Expr::Cast {
                expr, data_type, ..
            } => match &**expr {
                Expr::Value(v) if matches!(v.value, SqlValue::Placeholder(_)) => {
                    self.any(table, column, expr, locator)
                }
                Expr::Value(v) => Ok(text_array(&v.value, integer_elements(data_type)).map_or(
                    Condition::Any,
                    |values| Condition::Equals {
                        table,
                        column: column.to_owned(),
                        values,
                    },
                )),
                // `ARRAY[1, 2]::bigint[]`: the constructor's elements.
                inner @ Expr::Array(_) => self.any(table, column, inner, locator),
                _ => Ok(Condition::Any),
            },
            Expr::Value(v) => match &v.value {
                SqlValue::Placeholder(_) => match operand(array, self.tokens, locator)? {
                    Some(Operand::Param(param)) => Ok(Condition::InArray {
                        table,
                        column: column.to_owned(),
                        param,
                    }),
                    _ => Ok(Condition::Any),
                },
                // Untyped, the literal's elements take the column's type in the database; read
                // as text they route as `col = '1'` does.
                other => Ok(text_array(other, false).map_or(Condition::Any, |values| {
                    Condition::Equals {
                        table,
                        column: column.to_owned(),
                        values,
                    }
                })),
            },
            _ => Ok(Condition::Any),
        }
    }

    fn equals<'e>(
        &self,
        table: Option<usize>,
        column: &str,
        values: impl IntoIterator<Item = &'e Expr>,
        locator: &mut Locator<'_>,
    ) -> Result<Condition, RouteError> {
        let mut operands = Vec::new();
        for value in values {
            match operand(value, self.tokens, locator)? {
                Some(operand) => operands.push(operand),
                // `id = other_column`, `id IN (1, f(x))`: anywhere.
                None => return Ok(Condition::Any),
            }
        }
        Ok(Condition::Equals {
            table,
            column: column.to_owned(),
            values: operands,
        })
    }

    /// The sharding column `expr` names: `col`, `alias.col` or `table.col`.
    fn column<'e>(&self, expr: &'e Expr) -> Option<(Option<usize>, &'e str)> {
        let (table, column) = match expr {
            Expr::Identifier(ident) => (None, ident.value.as_str()),
            Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                [.., qualifier, column] => {
                    let lower = qualifier.value.to_ascii_lowercase();
                    let table = self
                        .aliases
                        .iter()
                        .find(|(alias, _)| *alias == lower)
                        .map(|(_, t)| *t)?;
                    (Some(table), column.value.as_str())
                }
                _ => return None,
            },
            Expr::Nested(inner) => return self.column(inner),
            _ => return None,
        };
        let shards_by = |t: usize| {
            self.rules
                .get(t)
                .is_some_and(|r| is_sharding_column(r, column))
        };
        let known = match table {
            Some(t) => shards_by(t),
            // An unqualified column is a sharded table's only when one is in the top-level
            // FROM: otherwise it is another table's (a broadcast table's `user_id`) and says
            // nothing of where the rows of a sharded table in a subquery are.
            None => !self.aliases.is_empty() && (0..self.rules.len()).any(shards_by),
        };
        known.then_some((table, column))
    }
}

/// The leaf elements of an `ARRAY[…]` constructor, nested ones included (`= ANY` compares
/// with every element of a multidimensional array); `false` beyond PostgreSQL's dimensions.
fn flatten<'e>(expr: &'e Expr, out: &mut Vec<&'e Expr>, depth: usize) -> bool {
    match expr {
        Expr::Array(array) if depth < MAX_DIMS => array
            .elem
            .iter()
            .all(|element| flatten(element, out, depth + 1)),
        Expr::Array(_) => false,
        other => {
            out.push(other);
            true
        }
    }
}

/// Whether a cast to `data_type` reads the elements as integers (`'{1,2}'::bigint[]`).
fn integer_elements(data_type: &DataType) -> bool {
    let name = data_type.to_string().to_ascii_lowercase();
    let base = name.trim_end_matches("[]");
    base != name
        && matches!(
            base,
            "int" | "integer" | "int2" | "int4" | "int8" | "smallint" | "bigint"
        )
}

/// The non-NULL elements of a `'{…}'` literal as operands (`None`: not a readable array
/// literal, so the condition says nothing). A NULL element equals no row, so it routes nowhere.
fn text_array(value: &SqlValue, integers: bool) -> Option<Vec<Operand>> {
    let text = match value {
        SqlValue::SingleQuotedString(s) | SqlValue::EscapedStringLiteral(s) => s,
        _ => return None,
    };
    let parsed = parse_text(text).ok()?;
    parsed
        .elements
        .into_iter()
        .flatten()
        .map(|element| {
            if integers {
                number_value(element.trim(), false).map(Operand::Value)
            } else {
                Some(Operand::Value(Value::Text(element)))
            }
        })
        .collect()
}

/// A literal or a placeholder; `None` for any other expression.
pub(crate) fn operand(
    expr: &Expr,
    tokens: &Tokens,
    locator: &mut Locator<'_>,
) -> Result<Option<Operand>, RouteError> {
    Ok(match expr {
        Expr::Value(v) => match &v.value {
            SqlValue::Placeholder(_) => {
                let at = locator.offset(v.span.start)?;
                Some(Operand::Param(tokens.placeholder_at(at)?))
            }
            other => literal_value(other, false).map(Operand::Value),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match &**expr {
            Expr::Value(v) => literal_value(&v.value, true).map(Operand::Value),
            _ => None,
        },
        Expr::Nested(inner) => operand(inner, tokens, locator)?,
        _ => None,
    })
}

impl Operand {
    pub(crate) fn resolve<'a>(&'a self, params: &'a [Value]) -> Result<&'a Value, RouteError> {
        match self {
            Operand::Value(v) => Ok(v),
            Operand::Param(i) => params.get(*i).ok_or_else(|| RouteError::MissingParameter {
                needed: i + 1,
                given: params.len(),
            }),
        }
    }
}

impl Condition {
    /// The data nodes (by index, shared by the bound tables) whose rows can match.
    pub(super) fn nodes(
        &self,
        rules: &[Arc<TableRule>],
        params: &[Value],
        scratch: &mut String,
    ) -> Result<NodeSet, RouteError> {
        let count = rules.first().map_or(0, |r| r.data_nodes.len());
        let all = || NodeSet::all(count);
        Ok(match self {
            Condition::Any => all(),
            Condition::Equals {
                table,
                column,
                values,
            } => {
                let values = values
                    .iter()
                    .map(|v| v.resolve(params))
                    .collect::<Result<smallvec::SmallVec<[&Value; 4]>, _>>()?;
                let mut nodes = equal_nodes(rules, *table, column, values, scratch);
                complex::narrow(
                    rules,
                    std::slice::from_ref(self),
                    params,
                    &mut nodes,
                    scratch,
                )?;
                nodes
            }
            Condition::InArray {
                table,
                column,
                param,
            } => match Operand::Param(*param).resolve(params)? {
                // NULL elements equal no row: they route nowhere.
                Value::Array(array) => equal_nodes(
                    rules,
                    *table,
                    column,
                    array.elements.iter().filter(|v| !matches!(v, Value::Null)),
                    scratch,
                ),
                // An array sent as text (a client that declared the parameter so).
                Value::Text(text) => match parse_text(text) {
                    Ok(parsed) => {
                        let values: Vec<Value> = parsed
                            .elements
                            .into_iter()
                            .flatten()
                            .map(Value::Text)
                            .collect();
                        equal_nodes(rules, *table, column, &values, scratch)
                    }
                    Err(_) => all(),
                },
                // Anything else is not an array; the database will say so, on every node.
                _ => all(),
            },
            Condition::Range(range) => range.nodes(rules, params, count)?,
            Condition::And(parts) => {
                let mut nodes = all();
                for part in parts {
                    nodes.and(&part.nodes(rules, params, scratch)?);
                }
                complex::narrow(rules, parts, params, &mut nodes, scratch)?;
                nodes
            }
            Condition::Or(parts) => {
                let mut nodes = NodeSet::none(count);
                for part in parts {
                    nodes.or(&part.nodes(rules, params, scratch)?);
                }
                nodes
            }
        })
    }
}

/// The nodes whose rows can have `column` equal to one of `values`; with `table`, only that
/// table's rule decides.
fn equal_nodes<'v>(
    rules: &[Arc<TableRule>],
    table: Option<usize>,
    column: &str,
    values: impl IntoIterator<Item = &'v Value>,
    scratch: &mut String,
) -> NodeSet {
    let count = rules.first().map_or(0, |r| r.data_nodes.len());
    let mut nodes = NodeSet::none(count);
    for value in values {
        let mut these = NodeSet::all(count);
        for (t, rule) in rules.iter().enumerate() {
            if table.is_some_and(|only| only != t) {
                continue;
            }
            // A value that routes nowhere is looked for everywhere: the database evaluates
            // the condition anyway, so this is only slower, never wrong.
            if let Some(matching) = nodes_with(rule, column, value, scratch) {
                these.and(&matching);
            }
        }
        nodes.or(&these);
    }
    nodes
}
