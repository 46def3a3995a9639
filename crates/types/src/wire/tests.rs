use super::calendar::{MICROS_PER_DAY, hms_micros};
use super::network::network_key;
use super::pg_type_names::BUILTIN_TYPES;
use super::*;

#[test]
fn builtin_types_are_named_as_casts_write_them() {
    assert_eq!(
        pg_builtin_type("timestamp(3) with time zone"),
        Some(("timestamptz", 1184))
    );
    assert_eq!(pg_builtin_type("BIT VARYING(8)"), Some(("varbit", 1562)));
    assert_eq!(pg_builtin_type("\"char\""), Some(("char", 18)));
    // Unquoted, `char` is `character`, which Keyshard reads.
    assert_eq!(pg_builtin_type("char"), None);
    assert_eq!(pg_cast_name(18).as_deref(), Some("\"char\""));
    assert_eq!(pg_cast_name(3802).as_deref(), Some("jsonb"));
    assert_eq!(pg_cast_name(1560).as_deref(), Some("varbit"));
    assert_eq!(pg_cast_name(1182).as_deref(), Some("date[]"));
    assert_eq!(pg_cast_name(25), None);
    assert_eq!(pg_cast_name(1009), None);
    for (name, oid) in BUILTIN_TYPES {
        assert!(pg_wire_kind(oid).is_some(), "{name}");
    }
}

fn key(kind: WireKind, binary: bool, bytes: &[u8]) -> Option<i128> {
    match sort_key(&Wire::new(kind, binary, bytes))? {
        SortKey::Number(n) => Some(n),
        _ => None,
    }
}

#[test]
fn floats_order_as_postgres_orders_them() {
    let key = |kind: WireKind, binary: bool, bytes: &[u8]| {
        Wire::new(kind, binary, bytes)
            .float()
            .map(|v| SortKey::Float(Float(v)))
    };
    let pg = |binary: bool, bytes: &[u8]| key(WireKind::PgFloat, binary, bytes);
    let nan = pg(false, b"NaN").unwrap();
    assert!(pg(false, b"Infinity").unwrap() < nan);
    assert_eq!(pg(true, &f64::NAN.to_be_bytes()).unwrap(), nan);
    assert_eq!(pg(false, b"-0").unwrap(), pg(false, b"0").unwrap());
    assert!(pg(false, b"-Infinity").unwrap() < pg(false, b"-1e300").unwrap());
    assert_eq!(
        pg(true, &0.5f32.to_be_bytes()).unwrap(),
        pg(false, b"0.5").unwrap()
    );
    let mysql = |bytes: &[u8]| key(WireKind::MySqlFloat, true, bytes);
    assert!(mysql(&(-1.5f64).to_le_bytes()).unwrap() < mysql(&0.25f32.to_le_bytes()).unwrap());
    assert!(mysql(b"abc").is_none());
    // money orders by its amount, whatever the locale writes around the digits.
    let money = |binary: bool, bytes: &[u8]| {
        Wire::new(WireKind::PgMoney, binary, bytes)
            .money()
            .map(SortKey::Number)
    };
    assert_eq!(money(false, b"-$1,234.56"), Some(SortKey::Number(-123_456)));
    assert_eq!(money(false, b"($0.05)"), Some(SortKey::Number(-5)));
    assert_eq!(
        money(false, "1.234,56 €".as_bytes()),
        Some(SortKey::Number(123_456))
    );
    assert_eq!(
        money(true, &(-7i64).to_be_bytes()),
        Some(SortKey::Number(-7))
    );
    assert_eq!(money(false, b"$"), None);
    // What sort_key gives is that same key.
    assert_eq!(
        sort_key(&Wire::new(WireKind::PgFloat, false, b"2.5")),
        pg(false, b"2.5")
    );
}

#[test]
fn networks_order_as_postgres_orders_them() {
    let inet = |text: &str| network_key(text.as_bytes(), false);
    // network_cmp: IPv4 before IPv6; the common network bits, then the mask, then the
    // whole address.
    let ordered = [
        "10.0.0.0/8",
        "10.2.0.0/8",
        "10.1.0.0/16",
        "10.1.0.5/16",
        "10.1.0.0",
        "192.168.1.1",
        "::1",
        "2001:db8::/32",
    ];
    for pair in ordered.windows(2) {
        assert!(inet(pair[0]).unwrap() < inet(pair[1]).unwrap(), "{pair:?}");
    }
    // Binary: family 2, 24 bits, inet, 4 bytes.
    let binary = [2, 24, 0, 4, 192, 168, 1, 7];
    assert_eq!(network_key(&binary, true), inet("192.168.1.7/24"));
    let wire = Wire::new(WireKind::PgInet, true, &binary);
    assert!(sort_key(&wire).is_some());
    assert!(inet("not an address").is_none());
}

#[test]
fn text_and_binary_forms_agree() {
    // 2000-01-01 is PostgreSQL's binary epoch: 10,957 days after 1970.
    let epoch = key(WireKind::PgDate, false, b"2000-01-01").unwrap();
    assert_eq!(epoch, 10_957);
    assert_eq!(
        key(WireKind::PgDate, false, b"2000-01-02").unwrap() - epoch,
        i128::from(be_i32(&1i32.to_be_bytes()).unwrap())
    );
    let bc = key(WireKind::PgDate, false, b"0001-12-31 BC").unwrap();
    let ad = key(WireKind::PgDate, false, b"0001-01-01").unwrap();
    assert_eq!(ad - bc, 1);
    assert!(key(WireKind::PgDate, false, b"-infinity").unwrap() < bc);

    let mysql_text = key(WireKind::MySqlDateTime, false, b"2024-02-29 10:11:12.5").unwrap();
    let binary = [11, 0xe8, 0x07, 2, 29, 10, 11, 12, 0x20, 0xa1, 0x07, 0];
    assert_eq!(
        key(WireKind::MySqlDateTime, true, &binary).unwrap(),
        mysql_text
    );
    assert!(key(WireKind::MySqlDateTime, false, b"0000-00-00").unwrap() < mysql_text);

    let minus = [8, 1, 1, 0, 0, 0, 2, 0, 0];
    assert_eq!(
        key(WireKind::MySqlTime, true, &minus).unwrap(),
        key(WireKind::MySqlTime, false, b"-26:00:00").unwrap()
    );
}

#[test]
fn zones_and_intervals_order_as_postgres_does() {
    let ts = |t: &[u8]| key(WireKind::PgTimestamp, false, t).unwrap();
    assert_eq!(ts(b"2024-01-01 10:00:00+02"), ts(b"2024-01-01 08:00:00+00"));
    assert!(ts(b"2024-01-01 08:00:00.5+00") > ts(b"2024-01-01 08:00:00+00"));
    assert!(ts(b"0044-03-15 12:00:00 BC") < ts(b"0001-01-01 00:00:00"));
    assert!(ts(b"294276-12-31 23:59:59.999999") < ts(b"infinity"));
    let iv = |t: &[u8]| key(WireKind::PgInterval, false, t).unwrap();
    assert_eq!(iv(b"1 mon"), iv(b"30 days"));
    assert!(iv(b"-1 days +23:00:00") < iv(b"00:00:00"));
    assert_eq!(
        iv(b"1 year 2 mons 3 days 04:05:06.5"),
        (14 * 30 + 3) * MICROS_PER_DAY + hms_micros("04:05:06.5").unwrap()
    );
    let tz = |t: &[u8]| match sort_key(&Wire::new(WireKind::PgTimeTz, false, t)) {
        Some(SortKey::Pair(instant, zone)) => (instant, zone),
        other => panic!("{other:?}"),
    };
    assert!(tz(b"10:00:00+02") < tz(b"09:00:00+00"));
    assert!(sort_key(&Wire::new(WireKind::Opaque, false, b"{}")).is_none());
    assert!(sort_key(&Wire::new(WireKind::PgDate, false, b"soon")).is_none());
}
