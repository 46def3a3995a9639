//! Gene keys at INSERT (see `keyshard_config::Gene`): each generated key takes its row's gene
//! in its lowest bits, and a given key must be looked for where its row goes.

use keyshard_keygen::Key;

use super::bind::resolve;
use super::{PreparedInsert, RowSpec};
use crate::RouteError;
use crate::route::{gene_of, nodes_with};
use keyshard_types::Value;

impl PreparedInsert {
    /// Puts row `row`'s gene in the low bits of `key`, generated for it (gene keys). A table
    /// without a gene has them filled from the bits above, the sequence's, so that routing by
    /// the key's low bits spreads rows as it would without gene bits.
    pub(super) fn add_gene(
        &self,
        row: usize,
        key: &mut Key,
        bits: u32,
        spec: &RowSpec,
        params: &[Value],
    ) -> Result<(), RouteError> {
        let rule = &*self.rule;
        let Key::Int(key) = key else {
            return Ok(());
        };
        let Some(gene) = &rule.gene else {
            *key |= (*key >> bits) & ((1 << bits) - 1);
            return Ok(());
        };
        let on_database = rule
            .database_strategy
            .as_ref()
            .is_some_and(|s| s.column.eq_ignore_ascii_case(&gene.column));
        let source = if on_database {
            &spec.database
        } else {
            &spec.table
        };
        let carried = source
            .as_ref()
            .and_then(|source| resolve(source, None, params))
            .and_then(|value| gene_of(gene, value));
        match carried {
            Some(carried) => {
                *key |= carried;
                Ok(())
            }
            None => Err(RouteError::NoRoute {
                row: row + 1,
                column: gene.column.clone(),
                reason: format!(
                    "its generated {} carries its low {} bits (gene keys), so it must be a \
                     non-negative integer",
                    gene.key_column, gene.bits
                ),
            }),
        }
    }

    /// Refuses a row whose given key would route elsewhere than the row goes (gene keys): a
    /// read by that key would look on the node its gene picks, and not find it.
    pub(super) fn check_gene(
        &self,
        row: usize,
        key: Option<&Value>,
        node: usize,
        scratch: &mut String,
    ) -> Result<(), RouteError> {
        let (Some(gene), Some(key)) = (&self.rule.gene, key) else {
            return Ok(());
        };
        match nodes_with(&self.rule, &gene.key_column, key, scratch) {
            Some(nodes) if !nodes.contains(node) => Err(RouteError::NoRoute {
                row: row + 1,
                column: gene.key_column.clone(),
                reason: format!(
                    "its low {} bits (gene keys) route elsewhere than its {} does; a key \
                         must carry the gene of its row's {}",
                    gene.bits, gene.column, gene.column
                ),
            }),
            _ => Ok(()),
        }
    }
}
