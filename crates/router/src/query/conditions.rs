//! Which data nodes a WHERE clause can match: equalities and IN lists on sharding columns
//! (literals and parameters), joined by AND and OR; anything else matches every node.

use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{BinaryOperator, Expr, InTarget, UnaryOperator, Value as SqlValue};

use crate::RouteError;
use crate::literal::literal_value;
use crate::locate::Locator;
use crate::route::{is_sharding_column, nodes_with};
use crate::tokens::Tokens;
use crate::value::Value;

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
                BinaryOperator::And => Condition::And(vec![
                    self.condition(left, locator)?,
                    self.condition(right, locator)?,
                ]),
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
                _ => Condition::Any,
            },
            Expr::In {
                expr,
                target: InTarget::List(list),
                negated: false,
                ..
            } => match self.column(expr) {
                Some((table, column)) => self.equals(table, column, list, locator)?,
                None => Condition::Any,
            },
            _ => Condition::Any,
        })
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
            None => (0..self.rules.len()).any(shards_by),
        };
        known.then_some((table, column))
    }
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
            Operand::Param(i) => params.get(*i).ok_or(RouteError::MissingParameter {
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
    ) -> Result<Vec<bool>, RouteError> {
        let count = rules.first().map_or(0, |r| r.data_nodes.len());
        Ok(match self {
            Condition::Any => vec![true; count],
            Condition::Equals {
                table,
                column,
                values,
            } => {
                let mut nodes = vec![false; count];
                for value in values {
                    let value = value.resolve(params)?;
                    let mut these = vec![true; count];
                    for (t, rule) in rules.iter().enumerate() {
                        if table.is_some_and(|only| only != t) {
                            continue;
                        }
                        // A value that routes nowhere is looked for everywhere: the database
                        // evaluates the condition anyway, so this is only slower, never wrong.
                        if let Some(matching) = nodes_with(rule, column, value, scratch) {
                            and(&mut these, &matching);
                        }
                    }
                    or(&mut nodes, &these);
                }
                nodes
            }
            Condition::And(parts) => {
                let mut nodes = vec![true; count];
                for part in parts {
                    and(&mut nodes, &part.nodes(rules, params, scratch)?);
                }
                nodes
            }
            Condition::Or(parts) => {
                let mut nodes = vec![false; count];
                for part in parts {
                    or(&mut nodes, &part.nodes(rules, params, scratch)?);
                }
                nodes
            }
        })
    }
}

fn and(nodes: &mut [bool], other: &[bool]) {
    for (n, o) in nodes.iter_mut().zip(other) {
        *n &= *o;
    }
}

fn or(nodes: &mut [bool], other: &[bool]) {
    for (n, o) in nodes.iter_mut().zip(other) {
        *n |= *o;
    }
}
