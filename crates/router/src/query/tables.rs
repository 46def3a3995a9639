//! The tables a SELECT, UPDATE or DELETE names: which are sharded, where their names are
//! written (to be spliced per node), and the aliases a WHERE clause may qualify columns with.

use std::ops::{ControlFlow, Range};
use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{
    Delete, FromTable, ObjectName, ObjectNamePart, Spanned, Statement, TableFactor, TableWithJoins,
    visit_relations,
};
use sqlparser::tokenizer::Span;

use super::gather::Written;
use super::select_of;
use crate::RouteError;
use crate::locate::Locator;
use crate::names::last_ident;

/// What prepare needs to know of the statement's tables.
pub(crate) struct Tables<'a> {
    /// The sharded tables in the statement, in order of first appearance.
    pub(crate) rules: Vec<Arc<TableRule>>,
    /// Where each sharded table's name is written, with its number and quote style.
    pub(crate) names: Vec<(Range<usize>, usize, Option<char>)>,
    /// The same names with their qualifiers, for a gathered read.
    pub(crate) written: Vec<Written>,
    /// The same table twice (a self-join or a subquery on it).
    pub(crate) repeated: bool,
    /// The top-level FROM is one sharded table and nothing else, so that the WHERE clause's
    /// conditions are all on it.
    pub(crate) alone: bool,
    /// Aliases of the top-level FROM, lower-cased, by sharded table number.
    pub(crate) aliases: Vec<(String, usize)>,
    /// Sharded tables the top-level FROM aliases with their own name (`t_order t_order`, as
    /// Hibernate and peewee write): a `t_order.` qualifier names the alias, which stays.
    pub(crate) self_aliased: Vec<usize>,
    pub(crate) locator: Locator<'a>,
}

/// The names of the sharded tables a statement reads or writes, where they are written, and the
/// top-level aliases. `rule_of` says whether a name is a sharded table.
pub(crate) fn tables<'a>(
    sql: &'a str,
    statement: &Statement,
    rule_of: impl Fn(&str) -> Option<Arc<TableRule>>,
) -> Result<(Tables<'a>, Vec<String>), RouteError> {
    let mut tables = Tables {
        rules: Vec::new(),
        names: Vec::new(),
        written: Vec::new(),
        repeated: false,
        alone: false,
        aliases: Vec::new(),
        self_aliased: Vec::new(),
        locator: Locator::new(sql),
    };
    let mut others = Vec::new();
    // The name's last part, and the whole name.
    let mut spans: Vec<(Span, Span, usize, Option<char>)> = Vec::new();
    let _ = visit_relations(statement, |name: &ObjectName| {
        let Some(ObjectNamePart::Identifier(ident)) = name.0.last() else {
            return ControlFlow::<()>::Continue(());
        };
        match rule_of(&ident.value) {
            Some(rule) => {
                let number = match tables
                    .rules
                    .iter()
                    .position(|r| Arc::ptr_eq(r, &rule) || r.logic_table == rule.logic_table)
                {
                    Some(n) => n,
                    None => {
                        tables.rules.push(rule);
                        tables.rules.len() - 1
                    }
                };
                spans.push((ident.span, name.span(), number, ident.quote_style));
            }
            None => others.push(ident.value.clone()),
        }
        ControlFlow::Continue(())
    });
    for (span, whole, number, quote) in spans {
        let range = tables.locator.offset(span.start)?..tables.locator.offset(span.end)?;
        let start = tables.locator.offset(whole.start)?;
        tables.written.push(Written {
            schema: start..range.start,
            table: number,
            name: range.clone(),
            quoted: quote.is_some(),
        });
        tables.names.push((range, number, quote));
    }
    // Relations only: a qualified column (`t_order.id`) is not one.
    tables.repeated = tables.names.len() > tables.rules.len();
    let froms: Vec<&TableWithJoins> = match statement {
        Statement::Query(query) => select_of(query)
            .map(|s| s.from.iter().collect())
            .unwrap_or_default(),
        Statement::Update(update) => vec![&update.table],
        Statement::Delete(Delete { from, .. }) => match from {
            FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f.iter().collect(),
        },
        _ => Vec::new(),
    };
    tables.alone = matches!(
        froms.as_slice(),
        [TableWithJoins { relation: TableFactor::Table { name, .. }, joins }]
            if joins.is_empty() && rule_of(last_ident(name)).is_some()
    );
    for from in froms {
        let factors = std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation));
        for factor in factors {
            if let TableFactor::Table { name, alias, .. } = factor {
                let logic = last_ident(name);
                if let Some(n) = tables
                    .rules
                    .iter()
                    .position(|r| r.logic_table.eq_ignore_ascii_case(logic))
                {
                    let written = alias
                        .as_ref()
                        .map_or(logic, |a| a.name.value.as_str())
                        .to_ascii_lowercase();
                    if alias.is_some() && written.eq_ignore_ascii_case(logic) {
                        tables.self_aliased.push(n);
                    }
                    tables.aliases.push((written, n));
                }
            }
        }
    }
    Ok((tables, others))
}
