//! Statements on no sharded table: sent as written to the data source their tables live on,
//! or, for writes to broadcast tables and type definitions, to every data source.

use sqlparser::ast::Statement;
use sqlparser::parser::Parser;

use crate::{Direct, Other, Prepared, RouteError, Router, locate, tokens};

impl Router {
    /// A statement on `tables`, none of them sharded: to the default data source, or, for a
    /// write to broadcast tables only, to every data source.
    pub(crate) fn direct(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        tables: &[String],
        is_read: bool,
    ) -> Result<Prepared, RouteError> {
        self.direct_as(sql, sql, parser, tables, is_read)
    }

    /// A statement of a kind the router does not plan (a sequence, a view, a grant, a cursor,
    /// a comment…): sent as written where unsharded statements go, as the database would take
    /// it, unless a word of it names a sharded or broadcast table, which that data source
    /// alone cannot answer for. The proxy answers `LISTEN channel` itself: another form of it
    /// is refused.
    pub(crate) fn unclassified(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        statement: &Statement,
    ) -> Result<Prepared, RouteError> {
        let refused = match statement {
            Statement::LISTEN { .. } => "this form of LISTEN (LISTEN takes one channel name)",
            // COPY … FROM STDIN is the proxy's own (see the frontends), COPY … TO planned above.
            Statement::Copy { .. } => "this form of COPY",
            // The proxy answers `KILL [CONNECTION | QUERY] id` of its own sessions; on a shard
            // an id would name a pooled connection other clients share.
            Statement::Kill { .. } => {
                "this form of KILL (KILL [CONNECTION | QUERY] id, of a session SHOW PROCESSLIST \
                 lists)"
            }
            _ => "",
        };
        if !refused.is_empty() {
            return Err(RouteError::Unsupported(refused.into()));
        }
        if self.default_data_source.is_none() {
            return Ok(Prepared::Other(Other::NotRouted));
        }
        let named = (0..)
            .map(|index| parser.token_at(index))
            .take_while(|token| token.token != sqlparser::tokenizer::Token::EOF)
            .find_map(|token| match &token.token {
                sqlparser::tokenizer::Token::Word(word)
                    if self.table(&word.value).is_some() || self.is_broadcast(&word.value) =>
                {
                    Some(word.value.clone())
                }
                _ => None,
            });
        if let Some(table) = named {
            return Err(RouteError::Unsupported(format!(
                "this kind of statement on the sharded or broadcast table '{table}'"
            )));
        }
        if defines_column_types(statement) {
            return self.everywhere(sql, parser);
        }
        self.direct(sql, parser, &[], false)
    }

    /// A statement every data source runs, as a write to a broadcast table is.
    fn everywhere(&self, sql: &str, parser: &Parser<'_>) -> Result<Prepared, RouteError> {
        let mut locator = locate::Locator::new(sql);
        let tokens = tokens::Tokens::scan(parser, &mut locator, self.dialect, &[])?;
        Ok(Prepared::Direct(Direct {
            sql: sql.into(),
            data_sources: self.data_sources.clone(),
            param_count: tokens.param_count,
            is_read: false,
            replicated: true,
            replica_safe: false,
            table: String::new(),
        }))
    }

    /// [`Router::direct`] of `sql`, which runs as `text` (the same placeholders).
    pub(crate) fn direct_as(
        &self,
        sql: &str,
        text: &str,
        parser: &Parser<'_>,
        tables: &[String],
        is_read: bool,
    ) -> Result<Prepared, RouteError> {
        let Some(default) = &self.default_data_source else {
            let table = tables.first().cloned().unwrap_or_default();
            return Ok(Prepared::Other(Other::UnshardedTable(table)));
        };
        let replicated =
            !is_read && !tables.is_empty() && tables.iter().all(|t| self.is_broadcast(t));
        let data_sources = if replicated {
            self.data_sources.clone()
        } else {
            vec![self.home(tables, default)?]
        };
        let mut locator = locate::Locator::new(sql);
        let tokens = tokens::Tokens::scan(parser, &mut locator, self.dialect, &[])?;
        Ok(Prepared::Direct(Direct {
            sql: text.into(),
            data_sources,
            param_count: tokens.param_count,
            is_read,
            replicated,
            replica_safe: is_read && !tokens.needs_primary,
            table: tables.first().cloned().unwrap_or_default(),
        }))
    }
}

/// Whether `statement` creates, changes or drops a type, a domain or an extension: what a
/// sharded table's columns may be declared with, so that every data source needs it where
/// the table's actual tables are created.
fn defines_column_types(statement: &Statement) -> bool {
    matches!(
        statement,
        Statement::CreateType { .. }
            | Statement::AlterType(_)
            | Statement::CreateDomain(_)
            | Statement::DropDomain(_)
            | Statement::CreateExtension(_)
            | Statement::DropExtension(_)
            | Statement::Drop {
                object_type: sqlparser::ast::ObjectType::Type,
                ..
            }
    )
}
