//! Which calls are aggregates, and whether the merge can combine the nodes' results of one:
//! the rewrite of a read, its expressions over aggregates and its UNION branches all ask.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, Function, visit_expressions};

use crate::merge::Aggregate;
use crate::names::last_ident;

/// The aggregate functions merged across shards.
pub(super) fn aggregate_of(function: &Function) -> Option<Aggregate> {
    let name = last_ident(&function.name);
    let aggregate = [
        ("count", Aggregate::Count),
        ("sum", Aggregate::Sum),
        ("min", Aggregate::Min),
        ("max", Aggregate::Max),
        ("avg", Aggregate::Avg { count_index: 0 }),
        // Booleans order false before true: AND is the least, OR the greatest.
        ("bool_and", Aggregate::Min),
        ("every", Aggregate::Min),
        ("bool_or", Aggregate::Max),
        ("array_agg", Aggregate::Concat),
    ]
    .into_iter()
    .find(|(n, _)| name.eq_ignore_ascii_case(n))?
    .1;
    Some(aggregate)
}

/// Aggregates whose shard results cannot be merged as they stand: each shard's `json_agg` is
/// only part of the group's, and taking one of them would silently answer wrong. Gathered
/// over several shards (`string_agg` and `GROUP_CONCAT` where the joined module's `join_call`
/// does not join them).
pub(super) fn unmerged_aggregate(function: &Function) -> bool {
    let name = last_ident(&function.name).to_ascii_lowercase();
    matches!(
        name.as_str(),
        "string_agg"
            | "group_concat"
            | "json_agg"
            | "jsonb_agg"
            | "json_object_agg"
            | "jsonb_object_agg"
            | "json_arrayagg"
            | "json_objectagg"
            | "bit_and"
            | "bit_or"
            | "bit_xor"
            | "stddev"
            | "stddev_pop"
            | "stddev_samp"
            | "variance"
            | "var_pop"
            | "var_samp"
            | "xmlagg"
            | "percentile_cont"
            | "percentile_disc"
            | "mode"
    )
}

pub(super) fn contains_aggregate(expr: &Expr) -> bool {
    visit_expressions(expr, |e| match e {
        Expr::Function(f)
            if aggregate_of(f).is_some() || unmerged_aggregate(f) || f.over.is_some() =>
        {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}
