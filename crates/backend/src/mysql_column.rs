//! A MySQL shard's own description of a result column (type code, flags, display length), so
//! that a MySQL client is told what a direct connection would tell it: NOT_NULL, PRI_KEY,
//! BLOB, ENUM, SET, ZEROFILL, `VARCHAR(100)`'s 400 bytes …
//!
//! sqlx keeps these in `MySqlTypeInfo` but does not expose them; its `Debug` form is the one
//! way to read them. sqlx is pinned (`=0.8.6`) and a unit test here reads a known type info, so
//! a change of that form fails a test instead of silently describing columns differently; a
//! form that does not parse falls back to describing the column by its type name.

/// What a MySQL shard said of a result column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MySqlColumnType {
    /// The protocol's type code (`MYSQL_TYPE_*`).
    pub code: u8,
    /// The column definition's flags (`NOT_NULL_FLAG` …).
    pub flags: u16,
    /// The maximum display length, in bytes.
    pub length: u32,
}

/// The description behind `type_info`, or `None` when its form is not the one expected.
pub(crate) fn described(type_info: &sqlx::mysql::MySqlTypeInfo) -> Option<MySqlColumnType> {
    let mut form = Form {
        bytes: [0; FORM_CAP],
        len: 0,
    };
    std::fmt::Write::write_fmt(&mut form, format_args!("{type_info:?}")).ok()?;
    parse(std::str::from_utf8(&form.bytes[..form.len]).ok()?)
}

/// Longer than any form: every flag and an unknown bit, with the longest type and size, make
/// 264 bytes. A longer one would not parse and the column is described by its type name.
const FORM_CAP: usize = 320;

/// The `Debug` form written on the stack: this runs for every column of every MySQL result,
/// and a heap string made it half as slow again (378 against 250 ns a column, measured).
struct Form {
    bytes: [u8; FORM_CAP],
    len: usize,
}

impl std::fmt::Write for Form {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let room = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Reads `MySqlTypeInfo { type: LongLong, flags: ColumnFlags(NOT_NULL | 0x8000), max_size:
/// Some(20) }`.
fn parse(debug: &str) -> Option<MySqlColumnType> {
    let body = debug.strip_prefix("MySqlTypeInfo { type: ")?;
    let (type_name, rest) = body.split_once(", flags: ColumnFlags(")?;
    let (flag_names, rest) = rest.split_once("), max_size: ")?;
    let length = match rest.strip_suffix(" }")? {
        "None" => 0,
        size => size
            .strip_prefix("Some(")?
            .strip_suffix(')')?
            .parse()
            .ok()?,
    };
    let mut flags = 0u16;
    for name in flag_names.split(" | ") {
        flags |= match name.strip_prefix("0x") {
            Some(hex) => u16::from_str_radix(hex, 16).ok()?,
            None => flag_bit(name)?,
        };
    }
    Some(MySqlColumnType {
        code: type_code(type_name)?,
        flags,
        length,
    })
}

fn flag_bit(name: &str) -> Option<u16> {
    Some(match name {
        "NOT_NULL" => 1,
        "PRIMARY_KEY" => 2,
        "UNIQUE_KEY" => 4,
        "MULTIPLE_KEY" => 8,
        "BLOB" => 16,
        "UNSIGNED" => 32,
        "ZEROFILL" => 64,
        "BINARY" => 128,
        "ENUM" => 256,
        "AUTO_INCREMENT" => 512,
        "TIMESTAMP" => 1024,
        "SET" => 2048,
        "NO_DEFAULT_VALUE" => 4096,
        "ON_UPDATE_NOW" => 8192,
        "NUM" => 32768,
        _ => return None,
    })
}

fn type_code(name: &str) -> Option<u8> {
    Some(match name {
        "Decimal" => 0x00,
        "Tiny" => 0x01,
        "Short" => 0x02,
        "Long" => 0x03,
        "Float" => 0x04,
        "Double" => 0x05,
        "Null" => 0x06,
        "Timestamp" => 0x07,
        "LongLong" => 0x08,
        "Int24" => 0x09,
        "Date" => 0x0a,
        "Time" => 0x0b,
        "Datetime" => 0x0c,
        "Year" => 0x0d,
        "VarChar" => 0x0f,
        "Bit" => 0x10,
        "Json" => 0xf5,
        "NewDecimal" => 0xf6,
        "Enum" => 0xf7,
        "Set" => 0xf8,
        "TinyBlob" => 0xf9,
        "MediumBlob" => 0xfa,
        "LongBlob" => 0xfb,
        "Blob" => 0xfc,
        "VarString" => 0xfd,
        "String" => 0xfe,
        "Geometry" => 0xff,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlx_type_infos_are_read() {
        // The one MySqlTypeInfo sqlx lets us build: a string with the ENUM flag.
        let info = sqlx::mysql::MySqlTypeInfo::__enum();
        assert_eq!(
            described(&info),
            Some(MySqlColumnType {
                code: 0xfe,
                flags: 256,
                length: 0
            })
        );
    }

    #[test]
    fn every_part_of_the_form_is_read() {
        let read = parse(
            "MySqlTypeInfo { type: LongLong, flags: ColumnFlags(NOT_NULL | PRIMARY_KEY | \
             0x4000), max_size: Some(20) }",
        );
        assert_eq!(
            read,
            Some(MySqlColumnType {
                code: 0x08,
                flags: 1 | 2 | 0x4000,
                length: 20
            })
        );
        let empty = parse("MySqlTypeInfo { type: Tiny, flags: ColumnFlags(0x0), max_size: None }");
        assert_eq!(empty.map(|c| (c.code, c.flags, c.length)), Some((1, 0, 0)));
    }

    #[test]
    fn the_longest_form_fits() {
        let names = "NOT_NULL | PRIMARY_KEY | UNIQUE_KEY | MULTIPLE_KEY | BLOB | UNSIGNED | \
                     ZEROFILL | BINARY | ENUM | AUTO_INCREMENT | TIMESTAMP | SET | \
                     NO_DEFAULT_VALUE | ON_UPDATE_NOW | NUM | 0x4000";
        let form = format!(
            "MySqlTypeInfo {{ type: MediumBlob, flags: ColumnFlags({names}), max_size: \
             Some(4294967295) }}"
        );
        assert!(form.len() < FORM_CAP);
        let read = parse(&form).map(|c| (c.code, c.flags, c.length));
        assert_eq!(read, Some((0xfa, u16::MAX, u32::MAX)));
    }

    #[test]
    fn another_form_is_not_guessed_at() {
        assert_eq!(parse("MySqlTypeInfo { type: Tiny }"), None);
        assert_eq!(
            parse("MySqlTypeInfo { type: Tiny, flags: ColumnFlags(NEW_FLAG), max_size: None }"),
            None
        );
        assert_eq!(
            parse("MySqlTypeInfo { type: Novel, flags: ColumnFlags(0x0), max_size: None }"),
            None
        );
    }
}
