//! The columns of a result in hand (a reply the proxy made, a shard's rows), typed from their
//! type names and, where those say nothing, from the values.

use keyshard_backend::Column;
use keyshard_types::Value;

use super::description::{Field, Fields};
use crate::postgres::types::{oid_for_values, wire_oid};
use crate::reply::Reply;

/// The columns of a reply, typed from its type names and values.
pub fn reply_fields(reply: &Reply) -> Fields {
    match reply {
        // A streamed result was described as its rows went out.
        Reply::Ok { .. } | Reply::Streamed { .. } => Fields::None,
        Reply::Rows { columns, rows } => Fields::Known(result_fields(columns, rows).into()),
    }
}

/// The fields of a result of `columns`, typed from their type names and, where those say
/// nothing, from `rows`' values.
pub fn result_fields(columns: &[Column], rows: &[Vec<Value>]) -> Vec<Field> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let oid = wire_oid(c)
                .unwrap_or_else(|| oid_for_values(c.ty, rows.iter().filter_map(|r| r.get(i))));
            Field::of_column(c, oid)
        })
        .collect()
}
