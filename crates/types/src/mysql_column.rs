//! A MySQL shard's own description of a result column, so that a MySQL client is told what a
//! direct connection would tell it: the type code, every flag (NOT_NULL, PRI_KEY, PART_KEY,
//! BLOB, ENUM, SET, ZEROFILL …), `VARCHAR(100)`'s 400 bytes, `DECIMAL(10,2)`'s 2 decimals,
//! the collation that tells text (a `_bin` one, JSON) from bytes, where the column comes
//! from, and MariaDB's extended type information. sqlx 0.8.6 reads all of it and keeps only
//! part; the copy in `vendor/sqlx-mysql` keeps the rest (see `vendor/README.md`).

use bytes::Bytes;

/// What a MySQL shard said of a result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MySqlColumnType {
    /// The protocol's type code (`MYSQL_TYPE_*`).
    pub code: u8,
    /// The column definition's flags (`NOT_NULL_FLAG` …), every bit as sent.
    pub flags: u16,
    /// The maximum display length, in bytes.
    pub length: u32,
    /// The collation id of the values as sent: 63 for bytes, else the text's.
    pub collation: u16,
    /// Digits after the decimal point (0x1f: not fixed).
    pub decimals: u8,
    /// Where the column is read from, as the shard named it.
    pub origin: MySqlOrigin,
    /// MariaDB's extended type information as sent (`format json` marks a JSON column, which
    /// is a LONGTEXT on the wire); empty from MySQL and for most columns.
    pub extended_type_info: Bytes,
}

/// Where a MySQL result column comes from, in the shard's names (its database, the actual
/// table): the frontend puts the logical names in their place. All empty for an expression;
/// only `table_alias` and `name` for a derived table's column.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MySqlOrigin {
    /// The database of the table.
    pub schema: Bytes,
    /// The table as the statement named it (its alias, or the table's own name).
    pub table_alias: Bytes,
    /// The table's own name.
    pub table: Bytes,
    /// The column's own name, before any alias.
    pub name: Bytes,
}

/// MySQL's and MariaDB's description of `AVG(x)`, from a shard's description of `SUM(x)`, the
/// column Keyshard asks the shards for: both derive from the argument's. A DECIMAL (and any
/// integer) sum has the argument's precision p plus 22 digits (at most 65) and its scale; the
/// average p plus `increment` digits and as many more decimals (`div_precision_increment`, 4
/// by default), so `AVG` of a `DECIMAL(10,2)` is 16 long with 6 decimals by default. A sum at 65 digits leaves p unknown (43 or
/// more): the average is then described at 65. A DOUBLE sum's average is the same DOUBLE (a
/// FLOAT argument's would be 16 long, not 23: not told apart). `None` for another type.
pub fn average_of_sum(sum: &MySqlColumnType, increment: u8) -> Option<MySqlColumnType> {
    const NEWDECIMAL: u8 = 246;
    const DOUBLE: u8 = 5;
    const SUM_DIGITS: u32 = 22;
    const MAX_PRECISION: u32 = 65;
    const MAX_SCALE: u8 = 38;
    match sum.code {
        NEWDECIMAL => {
            // Digits, the decimal point where there are decimals, and the sign.
            let sum_precision = sum.length.checked_sub(u32::from(sum.decimals > 0) + 1)?;
            let precision = match sum_precision.checked_sub(SUM_DIGITS) {
                Some(argument) if sum_precision < MAX_PRECISION => {
                    (argument + u32::from(increment)).min(MAX_PRECISION)
                }
                _ => MAX_PRECISION,
            };
            let decimals = sum.decimals.saturating_add(increment).min(MAX_SCALE);
            Some(MySqlColumnType {
                length: precision + u32::from(decimals > 0) + 1,
                decimals,
                ..sum.clone()
            })
        }
        DOUBLE => Some(sum.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(length: u32, decimals: u8) -> MySqlColumnType {
        MySqlColumnType {
            code: 246,
            flags: 0x80,
            length,
            collation: 63,
            decimals,
            origin: MySqlOrigin::default(),
            extended_type_info: Bytes::new(),
        }
    }

    /// As MariaDB 10.11 described SUM and AVG of each argument type.
    #[test]
    fn an_average_is_described_as_the_database_describes_it() {
        let avg = |length, decimals| {
            let avg = average_of_sum(&decimal(length, decimals), 4).unwrap();
            (avg.length, avg.decimals)
        };
        assert_eq!(avg(34, 2), (16, 6), "DECIMAL(10,2)");
        assert_eq!(avg(28, 0), (11, 4), "DECIMAL(5,0)");
        assert_eq!(avg(33, 0), (16, 4), "INT");
        assert_eq!(avg(42, 0), (25, 4), "BIGINT");
        assert_eq!(avg(26, 0), (9, 4), "TINYINT");
        assert_eq!(avg(67, 10), (67, 14), "DECIMAL(61 or more, 10)");
        // SET div_precision_increment = 7: DECIMAL(10,2)'s average is 19 long with 9.
        let seven = average_of_sum(&decimal(34, 2), 7).unwrap();
        assert_eq!((seven.length, seven.decimals), (19, 9));
        let double = MySqlColumnType {
            code: 5,
            length: 23,
            decimals: 31,
            ..decimal(0, 0)
        };
        assert_eq!(average_of_sum(&double, 4), Some(double.clone()));
        assert_eq!(
            average_of_sum(&MySqlColumnType { code: 8, ..double }, 4),
            None
        );
    }
}
