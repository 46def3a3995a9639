//! COM_STMT_EXECUTE: the request header, then the parameters once the statement is known.

use std::collections::HashMap;

use keyshard_types::Value;
use mysql_common::constants::ColumnType;

use super::binary_value::{decode_value, from_long_data};
use crate::mysql::protocol::error::ProtocolError;
use crate::mysql::protocol::wire::Reader;

/// A COM_STMT_EXECUTE whose parameters are still raw: decoding them needs the statement's
/// parameter count, which only the session knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteRequest {
    /// The prepared statement.
    pub stmt_id: u32,
    /// Cursor flags (0 = CURSOR_TYPE_NO_CURSOR); cursors are not supported.
    pub flags: u8,
    /// The command's payload, kept whole rather than copied (a long parameter is megabytes):
    /// from [`PARAMS_AT`] on, the NULL bitmap, new-params-bound flag, types and values.
    payload: Vec<u8>,
}

/// Where the parameters start: command byte, statement id, flags, iteration count.
const PARAMS_AT: usize = 1 + 4 + 1 + 4;

impl ExecuteRequest {
    /// Decodes the payload, command byte included.
    pub(super) fn decode(payload: Vec<u8>) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload.get(1..).unwrap_or_default(), "COM_STMT_EXECUTE");
        let stmt_id = r.u32()?;
        let flags = r.u8()?;
        // The iteration count is always 1 in the MySQL protocol.
        r.u32()?;
        Ok(Self {
            stmt_id,
            flags,
            payload,
        })
    }

    fn params(&self) -> &[u8] {
        &self.payload[PARAMS_AT..]
    }
}

/// Decodes the parameters of `req` for a statement with `param_count` placeholders.
///
/// `types` keeps the parameter types across executions: a request whose new-params-bound flag
/// is 0 reuses them, one with the flag set replaces them. `long_data` holds the chunks of
/// COM_STMT_SEND_LONG_DATA by parameter index; such a parameter takes that value and its bytes
/// are absent from the request. The map is emptied, since long data lasts one execution.
pub fn decode_params(
    req: &ExecuteRequest,
    param_count: usize,
    types: &mut Vec<(ColumnType, bool)>,
    long_data: &mut HashMap<u16, Vec<u8>>,
) -> Result<Vec<Value>, ProtocolError> {
    let mut long_data = std::mem::take(long_data);
    if param_count == 0 {
        return Ok(Vec::new());
    }
    let mut r = Reader::new(req.params(), "COM_STMT_EXECUTE parameters");
    let null_bitmap = r.bytes(param_count.div_ceil(8))?;
    if r.u8()? == 1 {
        let mut bound = Vec::with_capacity(param_count);
        for _ in 0..param_count {
            let ty = r.u8()?;
            let flags = r.u8()?;
            let ty = ColumnType::try_from(ty).map_err(|_| {
                ProtocolError::malformed(format!("unknown parameter type 0x{ty:02x}"))
            })?;
            bound.push((ty, flags & 0x80 != 0));
        }
        *types = bound;
    } else if types.len() != param_count {
        return Err(ProtocolError::malformed(
            "COM_STMT_EXECUTE without parameter types for a first execution",
        ));
    }

    let mut values = Vec::with_capacity(param_count);
    for (i, &(ty, unsigned)) in types.iter().enumerate() {
        let long = u16::try_from(i).ok().and_then(|i| long_data.remove(&i));
        let value = match long {
            Some(bytes) => from_long_data(ty, bytes),
            None if is_null(null_bitmap, i) => Value::Null,
            None => decode_value(&mut r, ty, unsigned)?,
        };
        values.push(value);
    }
    Ok(values)
}

/// Bit `i` of the client's NULL bitmap (no offset, unlike result rows).
fn is_null(bitmap: &[u8], i: usize) -> bool {
    bitmap
        .get(i / 8)
        .is_some_and(|byte| byte & (1 << (i % 8)) != 0)
}
