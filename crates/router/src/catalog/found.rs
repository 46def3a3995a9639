//! Where a statement names what the views replace, by position in its text: catalog
//! relations, column references qualified with their schema, calls naming the current
//! database, and `regclass` literals naming a logic table.

use std::ops::ControlFlow;

use sqlparser::ast::{
    DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectName,
    ObjectNamePart, TableFactor, Value as SqlValue, ValueWithSpan, Visitor,
};
use sqlparser::tokenizer::Span;

use super::CatalogViews;
use keyshard_types::Dialect;

/// How the statement refers to a catalog relation it names.
pub(super) enum Alias {
    /// By the alias it gives.
    Given,
    /// By its name, as written.
    Unaliased(String),
}

/// Where the statement names a catalog relation, by position in its text.
pub(super) struct Found<'v> {
    pub(super) views: &'v CatalogViews,
    /// Each relation's name (first and last part), its view, and its alias.
    pub(super) relations: Vec<(Span, Span, usize, Alias)>,
    /// Column references qualified with a view's schema: the schema part and the relation part.
    pub(super) qualified: Vec<(Span, Span)>,
    /// The names of `DATABASE()` / `SCHEMA()` calls (PostgreSQL's `current_database()`), from
    /// their first part to their last.
    pub(super) calls: Vec<(Span, Span)>,
    /// String literals naming a logic table as a `regclass` (`'t_order'::regclass`,
    /// `to_regclass('t_order')`), with the literal to write in their place.
    pub(super) regclasses: Vec<(Span, String)>,
}

impl Visitor for Found<'_> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
            && let Some(idents) = plain_idents(name)
            && let Some(view) = self.views.view_of(&idents)
            && let (Some(first), Some(last)) = (idents.first(), idents.last())
        {
            let alias = match alias {
                Some(_) => Alias::Given,
                None => Alias::Unaliased(last.value.clone()),
            };
            self.relations.push((first.span, last.span, view, alias));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        let literal = |e: &Expr| match e {
            Expr::Value(ValueWithSpan {
                value: SqlValue::SingleQuotedString(s),
                span,
            }) => Some((s.clone(), *span)),
            _ => None,
        };
        let mut regclass = |e: &Expr| {
            if self.views.dialect == Dialect::Postgres
                && let Some((written, span)) = literal(e)
                && let Some(text) = self.views.regclass_literal(&written)
            {
                self.regclasses.push((span, text));
            }
        };
        match expr {
            Expr::Cast {
                expr: inner,
                data_type: DataType::Regclass,
                ..
            } => regclass(inner),
            Expr::Function(function)
                if matches!(function.name.0.last(), Some(ObjectNamePart::Identifier(name))
                    if name.value.eq_ignore_ascii_case("to_regclass")) =>
            {
                if let FunctionArguments::List(list) = &function.args
                    && let [FunctionArg::Unnamed(FunctionArgExpr::Expr(arg))] = list.args.as_slice()
                {
                    regclass(arg);
                }
            }
            _ => {}
        }
        match expr {
            Expr::CompoundIdentifier(parts) if parts.len() >= 3 => {
                let (schema, relation) = (&parts[parts.len() - 3], &parts[parts.len() - 2]);
                if self.views.view_of(&[schema, relation]).is_some() {
                    self.qualified.push((schema.span, relation.span));
                }
            }
            Expr::Function(function) => {
                let names: &[&str] = match self.views.dialect {
                    Dialect::MySql => &["database", "schema"],
                    Dialect::Postgres => &["current_database"],
                };
                let called = |name: &Ident| {
                    name.quote_style.is_none()
                        && names.iter().any(|n| name.value.eq_ignore_ascii_case(n))
                };
                match function.name.0.as_slice() {
                    [ObjectNamePart::Identifier(name)] if called(name) => {
                        self.calls.push((name.span, name.span));
                    }
                    [
                        ObjectNamePart::Identifier(schema),
                        ObjectNamePart::Identifier(name),
                    ] if schema.value.eq_ignore_ascii_case("pg_catalog") && called(name) => {
                        self.calls.push((schema.span, name.span));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// The parts of a name that are all identifiers.
fn plain_idents(name: &ObjectName) -> Option<Vec<&Ident>> {
    name.0
        .iter()
        .map(|part| match part {
            ObjectNamePart::Identifier(ident) => Some(ident),
            _ => None,
        })
        .collect()
}
