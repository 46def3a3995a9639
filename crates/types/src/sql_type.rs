//! Result and table column types, read once from the type names a data source reports, with
//! that database's meaning of each name: SQLite's `INTEGER` is 64 bits and its `REAL` a double,
//! PostgreSQL's `INTEGER` is 32 bits and its `REAL` single precision, MySQL's `FLOAT` is single
//! precision where PostgreSQL's is double. Both frontends describe columns from this, so no
//! layer above parses type names again.

use crate::DatabaseKind;

/// A column's type.
// The plain variants are the SQL types they name.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SqlType {
    Bool,
    /// An integer of `bytes` bytes: 1, 2, 3 (MySQL's MEDIUMINT), 4 or 8.
    Int {
        bytes: u8,
        unsigned: bool,
    },
    /// Single precision.
    Float,
    /// Double precision.
    Double,
    Decimal {
        unsigned: bool,
    },
    Year,
    Date,
    Time,
    DateTime,
    Timestamp,
    /// PostgreSQL's zoned and interval types (`TIMESTAMPTZ`, `TIMETZ`, `INTERVAL`): printed in
    /// forms no MySQL temporal type holds.
    Zoned,
    /// Fixed-length text (`CHAR`, PostgreSQL's `bpchar`).
    Char,
    VarChar,
    Text,
    /// PostgreSQL's `name`.
    Name,
    Uuid,
    /// MySQL's `ENUM` and `SET`.
    Enum,
    /// Fixed-length bytes (MySQL's `BINARY`).
    Binary,
    /// Variable-length bytes with a length limit (MySQL's `VARBINARY`).
    VarBinary,
    /// `BLOB`s and PostgreSQL's `bytea`.
    Blob,
    Json,
    Bit,
    /// PostgreSQL's `oid`.
    Oid,
    /// A PostgreSQL array (`INT4[]`, `_text`) of the element type with this OID (0: a type
    /// Keyshard does not know).
    Array {
        element: u32,
    },
    /// A name this model does not know, or none (SQLite's `NULL` for an expression): the
    /// frontends type such a column by its values.
    #[default]
    Unknown,
}

impl SqlType {
    /// Whether its values are never text, so they order without a collation: booleans and
    /// numbers.
    pub fn never_text(self) -> bool {
        matches!(
            self,
            SqlType::Bool
                | SqlType::Int { .. }
                | SqlType::Float
                | SqlType::Double
                | SqlType::Decimal { .. }
                | SqlType::Oid
        )
    }

    /// The type `type_name` names in a database of `kind`: `BIGINT UNSIGNED`, `varchar(32)`,
    /// `INT8`, `DOUBLE PRECISION`, PostgreSQL's `udt_name`s (`int4`) alike.
    pub fn of(type_name: &str, kind: DatabaseKind) -> SqlType {
        if kind == DatabaseKind::Postgres
            && let Some(element) = crate::pg_array::element_of_type_name(type_name)
        {
            return SqlType::Array { element };
        }
        let name = type_name.trim();
        // A driver's result column names its type as one upper-case word ("BIGINT", "INT8"),
        // read as it is; a declared type ("bigint(20) unsigned") is normalised first.
        let (base, unsigned) = if name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        {
            (std::borrow::Cow::Borrowed(name), false)
        } else {
            let upper = name.to_ascii_uppercase();
            let base = upper.split('(').next().unwrap_or_default();
            let base = base
                .split_whitespace()
                .filter(|w| !matches!(*w, "UNSIGNED" | "SIGNED" | "ZEROFILL"))
                .collect::<Vec<_>>()
                .join(" ");
            (std::borrow::Cow::Owned(base), upper.contains("UNSIGNED"))
        };
        let int = |bytes| SqlType::Int { bytes, unsigned };
        match (&*base, kind) {
            ("BOOL" | "BOOLEAN", _) => SqlType::Bool,
            ("TINYINT", _) => int(1),
            ("SMALLINT" | "INT2" | "SMALLSERIAL" | "SERIAL2", _) => int(2),
            ("MEDIUMINT", _) => int(3),
            ("INTEGER", DatabaseKind::Sqlite) => int(8),
            ("INT" | "INTEGER" | "INT4" | "SERIAL" | "SERIAL4", _) => int(4),
            ("BIGINT" | "INT8" | "BIGSERIAL" | "SERIAL8", _) => int(8),
            ("FLOAT", DatabaseKind::MySql) | ("REAL", DatabaseKind::Postgres) => SqlType::Float,
            ("FLOAT4", _) => SqlType::Float,
            ("FLOAT" | "REAL" | "DOUBLE" | "DOUBLE PRECISION" | "FLOAT8", _) => SqlType::Double,
            ("DECIMAL" | "NUMERIC" | "DEC", _) => SqlType::Decimal { unsigned },
            ("YEAR", _) => SqlType::Year,
            ("DATE", _) => SqlType::Date,
            ("TIME" | "TIME WITHOUT TIME ZONE", _) => SqlType::Time,
            ("DATETIME", _) => SqlType::DateTime,
            ("TIMESTAMP" | "TIMESTAMP WITHOUT TIME ZONE", _) => SqlType::Timestamp,
            (
                "TIMESTAMPTZ"
                | "TIMETZ"
                | "INTERVAL"
                | "TIMESTAMP WITH TIME ZONE"
                | "TIME WITH TIME ZONE",
                _,
            ) => SqlType::Zoned,
            ("CHAR" | "BPCHAR" | "CHARACTER" | "NCHAR", _) => SqlType::Char,
            ("VARCHAR" | "CHARACTER VARYING" | "NVARCHAR", _) => SqlType::VarChar,
            ("TEXT" | "TINYTEXT" | "MEDIUMTEXT" | "LONGTEXT", _) => SqlType::Text,
            ("NAME", _) => SqlType::Name,
            ("UUID", _) => SqlType::Uuid,
            ("ENUM" | "SET", _) => SqlType::Enum,
            ("BINARY", _) => SqlType::Binary,
            ("VARBINARY", _) => SqlType::VarBinary,
            ("BLOB" | "TINYBLOB" | "MEDIUMBLOB" | "LONGBLOB" | "BYTEA", _) => SqlType::Blob,
            ("JSON" | "JSONB", _) => SqlType::Json,
            ("BIT", _) => SqlType::Bit,
            ("OID", _) => SqlType::Oid,
            _ => SqlType::Unknown,
        }
    }

    /// Whether it holds exact fractions (an average of it stays exact).
    pub fn is_decimal(self) -> bool {
        matches!(self, SqlType::Decimal { .. })
    }

    /// Whether it holds binary floating point numbers.
    pub fn is_float(self) -> bool {
        matches!(self, SqlType::Float | SqlType::Double)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_database_means_its_own_names() {
        use DatabaseKind::*;
        let int = |bytes, unsigned| SqlType::Int { bytes, unsigned };
        for (name, kind, expected) in [
            ("BIGINT UNSIGNED", MySql, int(8, true)),
            ("int(11) unsigned", MySql, int(4, true)),
            ("TINYINT(1)", MySql, int(1, false)),
            ("INTEGER", Sqlite, int(8, false)),
            ("INTEGER", Postgres, int(4, false)),
            ("int4", Postgres, int(4, false)),
            ("INT8", Postgres, int(8, false)),
            (" BIGINT ", MySql, int(8, false)),
            ("FLOAT", MySql, SqlType::Float),
            ("FLOAT", Postgres, SqlType::Double),
            ("REAL", Postgres, SqlType::Float),
            ("REAL", Sqlite, SqlType::Double),
            ("double precision", Postgres, SqlType::Double),
            (
                "decimal(10,2) unsigned zerofill",
                MySql,
                SqlType::Decimal { unsigned: true },
            ),
            ("varchar(32)", MySql, SqlType::VarChar),
            ("bpchar", Postgres, SqlType::Char),
            ("ENUM('a','b')", MySql, SqlType::Enum),
            ("TIMESTAMPTZ", Postgres, SqlType::Zoned),
            ("timestamp with time zone", Postgres, SqlType::Zoned),
            ("BYTEA", Postgres, SqlType::Blob),
            ("NULL", Sqlite, SqlType::Unknown),
            ("_int4", Postgres, SqlType::Array { element: 23 }),
            ("TEXT[]", Postgres, SqlType::Array { element: 25 }),
            ("_my_enum", Postgres, SqlType::Array { element: 0 }),
        ] {
            assert_eq!(SqlType::of(name, kind), expected, "{name} in {kind:?}");
        }
    }
}
