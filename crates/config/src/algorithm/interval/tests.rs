//! ShardingSphere's IntervalShardingAlgorithmTest and AutoIntervalShardingAlgorithmTest cases,
//! and the forms its tests leave out.

use super::*;

fn at(text: &str) -> NaiveDateTime {
    parse_sql(text).unwrap()
}

fn suffixes(interval: &Interval, range: Range<usize>) -> Vec<String> {
    range.map(|i| interval.suffix(i).to_owned()).collect()
}

fn precise(interval: &Interval, text: &str) -> Option<String> {
    let index = interval.interval_of(interval.value(text)?)?;
    Some(suffixes(interval, index..index + 1).remove(0))
}

fn closed(interval: &Interval, low: &str, high: &str) -> Vec<String> {
    let range = interval.intervals_meeting(
        Bound::Included(interval.value(low).unwrap()),
        Bound::Included(interval.value(high).unwrap()),
    );
    suffixes(interval, range)
}

// The cases of ShardingSphere's IntervalShardingAlgorithmTest: tables for 2016 to 2020
// by quarter and by month, and every other day of June and July 2021.
#[test]
fn interval_as_shardingsphere_tests_it() {
    let quarter = Interval::new(
        "yyyy-MM-dd HH:mm:ss",
        "2016-01-01 00:00:00",
        Some("2021-12-31 00:00:00"),
        "yyyyQQ",
        3,
        Unit::named("Months").unwrap(),
    )
    .unwrap();
    assert_eq!(precise(&quarter, "2020-01-01 00:00:01").unwrap(), "202001");
    assert_eq!(precise(&quarter, "2020-02-01 00:00:01").unwrap(), "202001");
    assert_eq!(
        closed(&quarter, "2019-10-15 10:59:08", "2020-04-08 10:59:08"),
        ["201904", "202001", "202002"]
    );
    // At least 2018-10-15: the quarters from 2018's fourth to 2020's, which have tables.
    let at_least =
        quarter.intervals_meeting(Bound::Included(at("2018-10-15 10:59:08")), Bound::Unbounded);
    let tables = |s: &String| s.as_str() <= "202004";
    assert_eq!(
        suffixes(&quarter, at_least)
            .iter()
            .filter(|s| tables(s))
            .count(),
        9
    );
    let at_most = quarter.intervals_meeting(Bound::Unbounded, Bound::Included(at("2019-09-01")));
    assert_eq!(suffixes(&quarter, at_most).len(), 15);

    let month = Interval::new(
        "yyyy-MM-dd HH:mm:ss",
        "2016-01-01 00:00:00",
        Some("2021-12-31 00:00:00"),
        "yyyyMM",
        1,
        Unit::Months,
    )
    .unwrap();
    assert_eq!(precise(&month, "2020-01-01 00:00:01").unwrap(), "202001");
    assert_eq!(precise(&month, "2030-01-01 00:00:01"), None);
    assert_eq!(
        closed(&month, "2019-10-15 10:59:08", "2020-04-08 10:59:08").len(),
        7
    );

    let day = Interval::new(
        "yyyy-MM-dd HH:mm:ss",
        "2021-06-01 00:00:00",
        Some("2021-07-31 00:00:00"),
        "yyyyMMdd",
        2,
        Unit::Days,
    )
    .unwrap();
    assert_eq!(precise(&day, "2021-07-01 00:00:01").unwrap(), "20210701");
    assert_eq!(precise(&day, "2021-07-02 00:00:01").unwrap(), "20210701");
    let from = day.intervals_meeting(Bound::Included(at("2021-01-01")), Bound::Unbounded);
    assert_eq!(from.len(), 31);
    let to = day.intervals_meeting(Bound::Unbounded, Bound::Included(at("2021-07-31 01:00")));
    assert_eq!(to.len(), 31);
    assert_eq!(
        closed(&day, "2021-06-15 02:25:27", "2021-07-31 02:25:27").len(),
        24
    );
}

#[test]
fn interval_at_other_precisions() {
    let date = Interval::new(
        "yyyy-MM-dd",
        "2021-06-01",
        Some("2021-07-31"),
        "yyyyMMdd",
        2,
        Unit::Days,
    )
    .unwrap();
    assert_eq!(closed(&date, "2021-06-15", "2021-07-31").len(), 24);
    // A typed value in SQL's form still routes under another pattern.
    let compact = Interval::new(
        "yyyyMMdd",
        "20210601",
        Some("20210731"),
        "yyyyMMdd",
        2,
        Unit::Days,
    )
    .unwrap();
    assert_eq!(
        precise(&compact, "2021-06-04 23:00:00").unwrap(),
        "20210603"
    );

    let hours = Interval::new(
        "HH:mm:ss.SSS",
        "02:00:00.000",
        Some("13:00:00.000"),
        "HHmm",
        2,
        Unit::Hours,
    )
    .unwrap();
    assert_eq!(
        closed(&hours, "02:25:27.000", "12:25:27.000"),
        ["0200", "0400", "0600", "0800", "1000", "1200"]
    );
    let years = Interval::new("yyyy", "2000", Some("2022"), "yyyy", 2, Unit::Years).unwrap();
    assert_eq!(closed(&years, "2001", "2013").len(), 7);
    let year_month = Interval::new(
        "yyyy-MM",
        "2016-01",
        Some("2021-12"),
        "yyyyMM",
        2,
        Unit::Years,
    )
    .unwrap();
    assert_eq!(
        closed(&year_month, "2016-01", "2020-01"),
        ["201601", "201801", "202001"]
    );
    let months = Interval::new("MM", "02", Some("12"), "MM", 2, Unit::Months).unwrap();
    assert_eq!(closed(&months, "04", "10"), ["04", "06", "08", "10"]);
}

#[test]
fn interval_refuses_what_shardingsphere_cannot_run() {
    let build =
        |pattern, lower, suffix, unit| Interval::new(pattern, lower, Some(lower), suffix, 1, unit);
    assert!(build("yyyy", "invalid", "yyyy", Unit::Years).is_err());
    assert!(Unit::named("invalid").is_none());
    assert!(build("yyyy-MM-dd", "2021-01-01", "yyyyMMdd", Unit::Hours).is_err());
    assert!(build("yyyy-MM", "2021-01", "yyyyMMdd", Unit::Months).is_err());
    assert!(
        Interval::new(
            "yyyy-MM-dd HH:mm:ss",
            "2000-01-01 00:00:00",
            Some("2030-01-01 00:00:00"),
            "yyyyMMddHHmmss",
            1,
            Unit::Seconds
        )
        .is_err()
    );
    assert!(Interval::new("yyyy", "2021", Some("2022"), "yyyy", 0, Unit::Years).is_err());
}

#[test]
fn interval_ranges_respect_open_ends() {
    let month = Interval::new(
        "yyyy-MM-dd",
        "2021-01-01",
        Some("2021-12-31"),
        "MM",
        1,
        Unit::Months,
    )
    .unwrap();
    let range = |low, high| suffixes(&month, month.intervals_meeting(low, high));
    assert_eq!(
        range(
            Bound::Included(at("2021-03-01")),
            Bound::Excluded(at("2021-04-01"))
        ),
        ["03"]
    );
    assert_eq!(
        // Between March 31st and April 1st lies part of March to ShardingSphere, whose
        // ranges are continuous even over dates.
        range(
            Bound::Excluded(at("2021-03-31")),
            Bound::Included(at("2021-04-01"))
        ),
        ["03", "04"]
    );
    assert!(
        range(
            Bound::Included(at("2021-05-01")),
            Bound::Included(at("2021-04-01"))
        )
        .is_empty()
    );
    assert!(range(Bound::Included(at("2023-05-01")), Bound::Unbounded).is_empty());
}

// ShardingSphere's AutoIntervalShardingAlgorithmTest.
#[test]
fn auto_interval_as_shardingsphere_tests_it() {
    let auto = AutoInterval::new("2020-01-01 00:00:00", "2020-01-01 00:00:16", 4).unwrap();
    let value = |text: &str| AutoInterval::value(text).unwrap();
    assert_eq!(auto.count(), 6);
    assert_eq!(auto.partition(value("2020-01-01 00:00:01")), 1);
    assert_eq!(auto.partition(value("2021-01-01 00:00:02")), 5);
    assert_eq!(
        auto.partitions(
            Some(value("2019-01-01 00:00:00")),
            Some(value("2020-01-01 00:00:15"))
        ),
        0..=4
    );
    assert_eq!(
        auto.partitions(
            Some(value("2020-01-01 00:00:04")),
            Some(value("2020-01-01 00:00:10"))
        ),
        1..=3
    );
    assert_eq!(
        auto.partitions(None, Some(value("2020-01-01 00:00:11"))),
        0..=3
    );
    assert_eq!(
        auto.partitions(Some(value("2020-01-01 00:00:09")), None),
        3..=5
    );
    let year = AutoInterval::new("2020-01-01 00:00:00", "2021-01-01 00:00:00", 86_400).unwrap();
    assert_eq!(year.count(), 368);
    let seconds = AutoInterval::new("2020-01-01 00:00:00", "2020-01-01 00:00:30", 1).unwrap();
    assert_eq!(
        seconds.partitions(
            Some(value("2020-01-01 00:00:00")),
            Some(value("2020-01-01 00:00:10"))
        ),
        0..=10
    );
    for fraction in ["", ".1", ".12", ".123"] {
        let low = value(&format!("2020-01-01 00:00:11{fraction}"));
        let high = value(&format!("2020-01-01 00:00:21{fraction}"));
        assert_eq!(seconds.partitions(Some(low), Some(high)).count(), 11);
    }
    assert!(AutoInterval::new("invalid", "2020-01-01 00:00:00", 1).is_err());
    // One second into a day's span rounds to 0.00 spans: still the partition before.
    assert_eq!(year.partition(value("2020-01-02 00:00:01")), 1);
    assert_eq!(year.partition(value("2020-01-02 00:08:00")), 2);
}
