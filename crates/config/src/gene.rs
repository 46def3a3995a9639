//! Gene keys: a key generator with `gene-bits` leaves each key's lowest bits for the row's
//! value of another sharding column (its gene), so `WHERE order_id = ?` finds the one node
//! `user_id` chose. Exact only where that column's strategies route by no more than those low
//! bits: a key routed by a gene that does not decide the node would be looked for on the wrong
//! node and answer no rows. A table where that does not hold (or that shards by no other
//! column) routes as before, its keys' gene bits filled from the bits above them, so that all
//! SNOWFLAKE generators can share one layout.

use crate::algorithm::Algorithm;
use crate::model::{Gene, Strategy, TableRule};

/// The gene keys of `rule`, when its generator has gene bits; `Err`: why its keys cannot
/// route by a gene (said as a warning: the table routes as without one).
pub(crate) fn of(rule: &TableRule) -> Result<Option<Gene>, String> {
    let Some(key) = &rule.key_generate else {
        return Ok(None);
    };
    let bits = key.generator.gene_bits();
    if bits == 0 {
        return Ok(None);
    }
    let strategies: Vec<&Strategy> = [&rule.database_strategy, &rule.table_strategy]
        .into_iter()
        .flatten()
        .filter(|s| !s.column.eq_ignore_ascii_case(&key.column))
        .collect();
    // Sharded by its key alone: nothing to carry.
    let Some(first) = strategies.first() else {
        return Ok(None);
    };
    if let Some(other) = strategies
        .iter()
        .find(|s| !s.column.eq_ignore_ascii_case(&first.column))
    {
        return Err(format!(
            "table '{}' shards by both '{}' and '{}'; a key carries the gene of one",
            rule.logic_table, first.column, other.column
        ));
    }
    for strategy in &strategies {
        let modulus = match &*strategy.algorithm {
            Algorithm::Inline { expression, .. } => expression.remainder_modulus(),
            Algorithm::Mod { sharding_count } => i64::try_from(*sharding_count).ok(),
            _ => None,
        };
        // The node depends on value % m alone; for m dividing 2^bits, value's low bits fix it.
        if !modulus.is_some_and(|m| m > 0 && (1i64 << bits) % m == 0) {
            return Err(format!(
                "algorithm '{}' of table '{}' routes '{}' by more than its low {bits} bits \
                 (gene-bits): gene keys need INLINE '…${{{} % m}}…' or MOD with m a power of two \
                 up to {}",
                strategy.algorithm_name,
                rule.logic_table,
                strategy.column,
                strategy.column,
                1i64 << bits
            ));
        }
    }
    Ok(Some(Gene {
        key_column: key.column.clone(),
        column: first.column.clone(),
        bits,
    }))
}
