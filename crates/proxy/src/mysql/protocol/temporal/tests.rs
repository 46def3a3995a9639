use super::*;

fn round_trip_datetime(v: DateTime) -> DateTime {
    let mut buf = Vec::new();
    v.encode(&mut buf);
    DateTime::decode(&mut Reader::new(&buf, "t")).unwrap()
}

#[test]
fn datetime_prints_like_mysql() {
    let v = DateTime::parse("2024-01-02 03:04:05").unwrap();
    assert_eq!(v.to_string(), "2024-01-02 03:04:05");
    assert_eq!(v.date_string(), "2024-01-02");
    let v = DateTime::parse("2024-01-02T03:04:05.5").unwrap();
    assert_eq!(v.micros, 500_000);
    assert_eq!(v.to_string(), "2024-01-02 03:04:05.500000");
    assert_eq!(
        DateTime::parse("2024-01-02").unwrap().to_string(),
        "2024-01-02 00:00:00"
    );
    assert!(DateTime::parse("yesterday").is_none());
    assert!(DateTime::parse("2024-01-02 -01:00:00").is_none());
}

#[test]
fn datetime_binary_round_trips_at_every_length() {
    for text in [
        "0000-00-00",
        "2024-01-02",
        "2024-01-02 03:04:05",
        "2024-01-02 03:04:05.000007",
    ] {
        let v = DateTime::parse(text).unwrap();
        assert_eq!(round_trip_datetime(v), v, "{text}");
    }
}

#[test]
fn time_prints_like_mysql() {
    let t = Time::parse("-838:59:59").unwrap();
    assert_eq!((t.days, t.hour), (34, 22));
    assert_eq!(t.to_string(), "-838:59:59");
    assert_eq!(
        Time::parse("1:02:03.000100").unwrap().to_string(),
        "01:02:03.000100"
    );
    assert!(Time::parse("1:60:00").is_none());
    assert!(Time::parse("1:00:00.1234567").is_none());
    for text in ["00:00:00", "12:34:56", "-100:00:01.5"] {
        let t = Time::parse(text).unwrap();
        let mut buf = Vec::new();
        t.encode(&mut buf);
        assert_eq!(
            Time::decode(&mut Reader::new(&buf, "t")).unwrap(),
            t,
            "{text}"
        );
    }
}

#[test]
fn bad_lengths_are_rejected() {
    assert!(DateTime::decode(&mut Reader::new(&[5, 0, 0, 0, 0, 0], "t")).is_err());
    assert!(Time::decode(&mut Reader::new(&[8, 0], "t")).is_err());
}
