//! Binary COPY fields of dates, times, timestamps and UUIDs, as the text PostgreSQL prints for
//! them (and reads back): days and microseconds since 2000-01-01, 16 bytes of UUID.

use keyshard_types::SqlType;

use crate::postgres::pg_error::PgError;

/// Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
const EPOCH_DAYS: i64 = 10_957;
const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Whether fields of columns of type `ty` are read here.
pub(super) fn is_temporal(ty: SqlType) -> bool {
    matches!(
        ty,
        SqlType::Date
            | SqlType::Time
            | SqlType::DateTime
            | SqlType::Timestamp
            | SqlType::Zoned
            | SqlType::Uuid
    )
}

/// The text of `bytes`, a field of a column of type `ty` ([`is_temporal`]; others are read
/// as timestamps). `Zoned` columns are read as `timestamptz`, the one zoned type of eight
/// bytes (a `timetz` or `interval` field is longer, and refused).
pub(super) fn text(ty: SqlType, bytes: &[u8]) -> Result<String, PgError> {
    let width = match ty {
        SqlType::Date => 4,
        SqlType::Uuid => 16,
        _ => 8,
    };
    if ty == SqlType::Zoned && bytes.len() > width {
        return Err(PgError::new(
            "0A000",
            "binary COPY of a timetz or interval field: Keyshard does not read that type's \
             binary form (use the text or CSV format)",
        ));
    }
    // As PostgreSQL's receive functions: fewer bytes is "insufficient data", more unread data.
    if bytes.len() < width {
        return Err(PgError::new("08P01", "insufficient data left in message"));
    }
    if bytes.len() > width {
        return Err(PgError::new("22P03", "incorrect binary data format"));
    }
    let mut eight = [0u8; 8];
    eight[..width.min(8)].copy_from_slice(&bytes[..width.min(8)]);
    let micros = i64::from_be_bytes(eight);
    Ok(match ty {
        SqlType::Date => {
            let days = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            match days {
                i32::MAX => "infinity".to_owned(),
                i32::MIN => "-infinity".to_owned(),
                days => date(i64::from(days)),
            }
        }
        SqlType::Time => time_of_day(micros),
        SqlType::Uuid => uuid(bytes),
        _ => match micros {
            i64::MAX => "infinity".to_owned(),
            i64::MIN => "-infinity".to_owned(),
            micros => {
                let days = micros.div_euclid(MICROS_PER_DAY);
                let (day, clock) = (date(days), time_of_day(micros.rem_euclid(MICROS_PER_DAY)));
                // A BC date keeps its era after the time, where PostgreSQL reads it.
                let (day, era) = match day.strip_suffix(" BC") {
                    Some(day) => (day.to_owned(), " BC"),
                    None => (day, ""),
                };
                let zone = if ty == SqlType::Zoned { "+00" } else { "" };
                format!("{day} {clock}{zone}{era}")
            }
        },
    })
}

/// `YYYY-MM-DD` of `days` since 2000-01-01 (the proleptic Gregorian calendar; years before 1
/// as PostgreSQL writes them, `… BC`).
fn date(days: i64) -> String {
    // Howard Hinnant's days-to-civil algorithm, from 1970-01-01.
    let z = days + EPOCH_DAYS + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    if year <= 0 {
        format!("{:04}-{month:02}-{day:02} BC", 1 - year)
    } else {
        format!("{year:04}-{month:02}-{day:02}")
    }
}

/// `HH:MM:SS.ffffff` of `micros` since midnight.
fn time_of_day(micros: i64) -> String {
    let seconds = micros.div_euclid(1_000_000);
    format!(
        "{:02}:{:02}:{:02}.{:06}",
        seconds / 3_600,
        seconds / 60 % 60,
        seconds % 60,
        micros.rem_euclid(1_000_000)
    )
}

fn uuid(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(36);
    for (i, byte) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(text: &[u8]) -> String {
        super::text(SqlType::Date, text).unwrap()
    }

    #[test]
    fn dates_times_and_uuids_read_as_postgresql_prints_them() {
        assert_eq!(days(&0i32.to_be_bytes()), "2000-01-01");
        assert_eq!(days(&(-1i32).to_be_bytes()), "1999-12-31");
        assert_eq!(days(&60i32.to_be_bytes()), "2000-03-01");
        assert_eq!(days(&(-10_957i32).to_be_bytes()), "1970-01-01");
        assert_eq!(days(&(-730_119i32).to_be_bytes()), "0001-01-01");
        assert_eq!(days(&(-730_120i32).to_be_bytes()), "0001-12-31 BC");
        assert_eq!(days(&i32::MAX.to_be_bytes()), "infinity");
        let micros = (9_132 * MICROS_PER_DAY + 45_296_000_001).to_be_bytes();
        let at = |ty| super::text(ty, &micros).unwrap();
        assert_eq!(at(SqlType::Timestamp), "2025-01-01 12:34:56.000001");
        assert_eq!(at(SqlType::Zoned), "2025-01-01 12:34:56.000001+00");
        let before = (-MICROS_PER_DAY - 1).to_be_bytes();
        assert_eq!(
            super::text(SqlType::Timestamp, &before).unwrap(),
            "1999-12-30 23:59:59.999999"
        );
        let noon = (12 * 3_600_000_000i64).to_be_bytes();
        assert_eq!(
            super::text(SqlType::Time, &noon).unwrap(),
            "12:00:00.000000"
        );
        let id: Vec<u8> = (0u8..16).collect();
        assert_eq!(
            super::text(SqlType::Uuid, &id).unwrap(),
            "00010203-0405-0607-0809-0a0b0c0d0e0f"
        );
        assert_eq!(
            super::text(SqlType::Date, &[0; 3]).unwrap_err().code,
            "08P01"
        );
        assert_eq!(
            super::text(SqlType::Uuid, &[0; 17]).unwrap_err().code,
            "22P03"
        );
        assert!(!is_temporal(SqlType::Json));
    }
}
