//! Array parameters and results between Keyshard's values and sqlx: an array parameter is
//! bound in the binary layout with its element type, and array results (binary from prepared
//! statements, text from plain ones) are read into [`Value::Array`].

use keyshard_types::pg_array::{
    TEXT, array_oid_of, decode_binary, decode_text, element_oid_of, element_supported,
    encode_binary,
};
use keyshard_types::{Array, Value};
use sqlx::error::BoxDynError;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueFormat, PgValueRef, Postgres};
use sqlx::{TypeInfo, ValueRef};

/// An array parameter as sqlx binds it: typed as the array of its element type, so the shard
/// compares `order_id = ANY($1)` as PostgreSQL would for the client.
pub(crate) struct ArrayParam<'a>(pub(crate) &'a Array);

impl ArrayParam<'_> {
    /// The element type it is sent as: its own when supported, else text (the text of a value
    /// of any type is what PostgreSQL reads best).
    fn element(&self) -> u32 {
        if element_supported(self.0.element) {
            self.0.element
        } else {
            TEXT
        }
    }

    /// The array type it is sent as.
    pub(crate) fn oid(&self) -> Option<u32> {
        array_oid_of(self.element())
    }
}

impl sqlx::Type<Postgres> for ArrayParam<'_> {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_oid(Oid(1009))
    }
}

impl sqlx::Encode<'_, Postgres> for ArrayParam<'_> {
    fn produces(&self) -> Option<PgTypeInfo> {
        array_oid_of(self.element()).map(|oid| PgTypeInfo::with_oid(Oid(oid)))
    }

    fn encode_by_ref(
        &self,
        buf: &mut PgArgumentBuffer,
    ) -> Result<sqlx::encode::IsNull, BoxDynError> {
        let element = self.element();
        let bytes = encode_binary(self.0, element)?;
        buf.extend_from_slice(&bytes);
        Ok(sqlx::encode::IsNull::No)
    }
}

/// Reads an array result value; `None` when the value is not of an array type.
pub(crate) fn decode_array(
    raw: PgValueRef<'_>,
    index: usize,
) -> Option<Result<Value, sqlx::Error>> {
    let type_info = raw.type_info();
    let element = element_oid_of(type_info.oid()?.0)?;
    let failed = |detail: String| sqlx::Error::ColumnDecode {
        index: index.to_string(),
        source: detail.into(),
    };
    if !element_supported(element) {
        return Some(Err(failed(format!(
            "type {} is not supported in results yet",
            type_info.name()
        ))));
    }
    Some(match raw.format() {
        PgValueFormat::Binary => raw
            .as_bytes()
            .map_err(|e| failed(e.to_string()))
            .and_then(|bytes| decode_binary(bytes, element).map_err(failed)),
        PgValueFormat::Text => raw
            .as_str()
            .map_err(|e| failed(e.to_string()))
            .and_then(|text| decode_text(text, element).map_err(failed)),
    })
}
