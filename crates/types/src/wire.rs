//! Result values passed on in the shard's own wire form ([`Wire`]): which column types travel
//! so, and the one thing Keyshard computes with them, their order across shards. Each temporal
//! type is read from either format into one number per value (microseconds, days, months), in
//! the order the database itself gives its values.

mod calendar;
mod kinds;
mod mysql_time;
mod network;
mod order;
mod pg_time;
mod pg_type_names;

pub use kinds::{mysql_wire_kind, pg_wire_kind};
pub use order::{Float, SortKey};
pub use pg_type_names::{pg_builtin_type, pg_cast_name};

use crate::{Wire, WireKind};
use mysql_time::{mysql_datetime_binary, mysql_datetime_text, mysql_time_binary, mysql_time_text};
use network::network_key;
use pg_time::{
    interval_span, offset_seconds, pg_date_text, pg_interval_text, pg_time_of_day,
    pg_timestamp_text, timetz_key,
};

/// Where `wire` sorts among values of its column; `None` for a type whose order Keyshard
/// does not know, or bytes that are not a value of the type.
pub fn sort_key(wire: &Wire) -> Option<SortKey<'_>> {
    let bytes = &wire.bytes[..];
    let text = || std::str::from_utf8(bytes).ok();
    let number = SortKey::Number;
    match (wire.kind, wire.binary) {
        (WireKind::Bytewise, _) => Some(SortKey::Bytes(bytes)),
        (
            WireKind::Opaque | WireKind::PgEnum | WireKind::PgEnumArray | WireKind::PgCatalogRef,
            _,
        ) => None,
        (WireKind::PgMoney, _) => wire.money().map(number),
        (WireKind::PgInet, binary) => network_key(bytes, binary),
        (WireKind::PgFloat | WireKind::MySqlFloat, _) => {
            wire.float().map(|v| SortKey::Float(Float(v)))
        }
        (WireKind::PgDate, true) => Some(number(be_i32(bytes)?.into())),
        (WireKind::PgDate, false) => pg_date_text(text()?).map(number),
        (WireKind::PgTime | WireKind::PgTimestamp, true) => Some(number(be_i64(bytes)?.into())),
        (WireKind::PgTime, false) => pg_time_of_day(text()?).map(number),
        (WireKind::PgTimestamp, false) => pg_timestamp_text(text()?).map(number),
        (WireKind::PgTimeTz, true) => {
            let zone = be_i32(bytes.get(8..)?)?;
            timetz_key(be_i64(bytes)?, zone)
        }
        (WireKind::PgTimeTz, false) => {
            let text = text()?;
            let at = text.rfind(['+', '-'])?;
            let zone = -offset_seconds(&text[at..])?;
            timetz_key(pg_time_of_day(&text[..at])?.try_into().ok()?, zone)
        }
        (WireKind::PgInterval, true) => {
            let micros = be_i64(bytes)?;
            let days = be_i32(bytes.get(8..)?)?;
            let months = be_i32(bytes.get(12..)?)?;
            Some(number(interval_span(
                micros.into(),
                days.into(),
                months.into(),
            )))
        }
        (WireKind::PgInterval, false) => pg_interval_text(text()?).map(number),
        (WireKind::MySqlDateTime, true) => mysql_datetime_binary(bytes).map(number),
        (WireKind::MySqlDateTime, false) => mysql_datetime_text(text()?).map(number),
        (WireKind::MySqlTime, true) => mysql_time_binary(bytes).map(number),
        (WireKind::MySqlTime, false) => mysql_time_text(text()?).map(number),
        (WireKind::MySqlYear, true) => Some(number(
            u16::from_le_bytes(bytes.get(..2)?.try_into().ok()?).into(),
        )),
        (WireKind::MySqlYear, false) => text()?.parse::<i128>().ok().map(number),
    }
}

fn be_i32(bytes: &[u8]) -> Option<i32> {
    Some(i32::from_be_bytes(bytes.get(..4)?.try_into().ok()?))
}

fn be_i64(bytes: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(bytes.get(..8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests;
