//! INTERVAL and AUTO_INTERVAL: date-time sharding values, with ShardingSphere's semantics.
//!
//! INTERVAL steps from `datetime-lower` while not after `datetime-upper`; each step is a
//! half-open interval whose start, written in `sharding-suffix-pattern`, ends the name of its
//! targets. AUTO_INTERVAL numbers fixed spans of seconds from `datetime-lower`.

use std::ops::{Bound, Range, RangeInclusive};

use chrono::{Datelike, Months, NaiveDate, NaiveDateTime, TimeDelta, Timelike};

use super::datetime::{Pattern, Precision, parse_sql};

/// The most intervals INTERVAL may make between its lower and upper ends.
const MAX_INTERVALS: usize = 100_000;

/// Java's `ChronoUnit`s a step may be counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// `NANOS`.
    Nanos,
    /// `MICROS`.
    Micros,
    /// `MILLIS`.
    Millis,
    /// `SECONDS`.
    Seconds,
    /// `MINUTES`.
    Minutes,
    /// `HOURS`.
    Hours,
    /// `HALF_DAYS`.
    HalfDays,
    /// `DAYS`, the default.
    Days,
    /// `WEEKS`.
    Weeks,
    /// `MONTHS`.
    Months,
    /// `YEARS`.
    Years,
    /// `DECADES`.
    Decades,
    /// `CENTURIES`.
    Centuries,
    /// `MILLENNIA`.
    Millennia,
}

impl Unit {
    /// The unit named as Java's `ChronoUnit` is (`Days`, `MONTHS`: any case).
    pub fn named(name: &str) -> Option<Self> {
        const NAMES: [(&str, Unit); 14] = [
            ("NANOS", Unit::Nanos),
            ("MICROS", Unit::Micros),
            ("MILLIS", Unit::Millis),
            ("SECONDS", Unit::Seconds),
            ("MINUTES", Unit::Minutes),
            ("HOURS", Unit::Hours),
            ("HALF_DAYS", Unit::HalfDays),
            ("DAYS", Unit::Days),
            ("WEEKS", Unit::Weeks),
            ("MONTHS", Unit::Months),
            ("YEARS", Unit::Years),
            ("DECADES", Unit::Decades),
            ("CENTURIES", Unit::Centuries),
            ("MILLENNIA", Unit::Millennia),
        ];
        NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.trim()))
            .map(|(_, unit)| *unit)
    }

    /// Whether a value of `precision` can move by this unit (Java's `LocalDate` has no hours,
    /// `YearMonth` no days).
    fn fits(self, precision: Precision) -> bool {
        let calendar = matches!(
            self,
            Unit::Months | Unit::Years | Unit::Decades | Unit::Centuries | Unit::Millennia
        );
        match precision {
            Precision::DateTime => true,
            Precision::Date => calendar || matches!(self, Unit::Days | Unit::Weeks),
            Precision::YearMonth => calendar,
            Precision::Year => calendar && self != Unit::Months,
            Precision::Month => self == Unit::Months,
            Precision::Time => !calendar && !matches!(self, Unit::Days | Unit::Weeks),
        }
    }

    /// `value` moved `amount` of this unit, as Java's `plus` moves it (a month from January
    /// 31st is February's last day).
    fn plus(self, value: NaiveDateTime, amount: i64) -> Option<NaiveDateTime> {
        let months = |n: i64| {
            let n = u32::try_from(n).ok()?;
            value.checked_add_months(Months::new(n))
        };
        let delta = |d: Option<TimeDelta>| value.checked_add_signed(d?);
        match self {
            Unit::Nanos => delta(Some(TimeDelta::nanoseconds(amount))),
            Unit::Micros => delta(Some(TimeDelta::microseconds(amount))),
            Unit::Millis => delta(TimeDelta::try_milliseconds(amount)),
            Unit::Seconds => delta(TimeDelta::try_seconds(amount)),
            Unit::Minutes => delta(TimeDelta::try_minutes(amount)),
            Unit::Hours => delta(TimeDelta::try_hours(amount)),
            Unit::HalfDays => delta(TimeDelta::try_hours(amount.checked_mul(12)?)),
            Unit::Days => delta(TimeDelta::try_days(amount)),
            Unit::Weeks => delta(TimeDelta::try_weeks(amount)),
            Unit::Months => months(amount),
            Unit::Years => months(amount.checked_mul(12)?),
            Unit::Decades => months(amount.checked_mul(120)?),
            Unit::Centuries => months(amount.checked_mul(1_200)?),
            Unit::Millennia => months(amount.checked_mul(12_000)?),
        }
    }
}

/// INTERVAL, its intervals worked out once.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pattern: Pattern,
    precision: Precision,
    /// Each interval's start, ascending; an interval ends where the next starts.
    starts: Vec<NaiveDateTime>,
    /// Each interval's start in `sharding-suffix-pattern`, written once: routing a row then
    /// formats nothing.
    suffixes: Vec<Box<str>>,
    /// Where the last interval ends.
    end: NaiveDateTime,
    /// `datetime-upper`: a range without an upper end reaches it.
    upper: NaiveDateTime,
}

impl Interval {
    /// Builds INTERVAL from its properties; `upper` is `None` for "now", read once, as
    /// ShardingSphere reads it when the rule is loaded.
    pub fn new(
        pattern: &str,
        lower: &str,
        upper: Option<&str>,
        suffix: &str,
        amount: i64,
        unit: Unit,
    ) -> Result<Self, String> {
        let datetime =
            Pattern::parse(pattern).map_err(|e| format!("datetime-pattern '{pattern}': {e}"))?;
        let precision = datetime
            .precision()
            .map_err(|e| format!("datetime-pattern '{pattern}': {e}"))?;
        let read = |key: &str, text: &str| {
            datetime.parse_exact(text).ok_or_else(|| {
                format!("{key} '{text}' does not match datetime-pattern '{pattern}'")
            })
        };
        let lower = read("datetime-lower", lower)?;
        let upper = match upper {
            Some(text) => read("datetime-upper", text)?,
            None => truncate(precision, now()),
        };
        let suffix_pattern = Pattern::parse(suffix)
            .map_err(|e| format!("sharding-suffix-pattern '{suffix}': {e}"))?;
        if !suffix_pattern.writable_from(precision) {
            return Err(format!(
                "sharding-suffix-pattern '{suffix}' writes a field datetime-pattern \
                 '{pattern}' does not read"
            ));
        }
        if amount <= 0 {
            return Err(format!(
                "datetime-interval-amount must be positive, got {amount}"
            ));
        }
        if !unit.fits(precision) {
            return Err(format!(
                "datetime-interval-unit {unit:?} does not apply to values of datetime-pattern \
                 '{pattern}'"
            ));
        }
        let mut starts = Vec::new();
        let mut at = lower;
        while at <= upper {
            if starts.len() == MAX_INTERVALS {
                return Err(format!(
                    "from datetime-lower to datetime-upper by {amount} {unit:?} makes more than \
                     {MAX_INTERVALS} intervals"
                ));
            }
            starts.push(at);
            at = unit
                .plus(at, amount)
                .ok_or_else(|| format!("{at} plus {amount} {unit:?} is out of range"))?;
        }
        let suffixes = starts
            .iter()
            .map(|start| {
                let mut text = String::new();
                suffix_pattern.format_into(*start, &mut text);
                text.into_boxed_str()
            })
            .collect();
        Ok(Self {
            pattern: datetime,
            precision,
            starts,
            suffixes,
            end: at,
            upper,
        })
    }

    /// Reads a sharding value's text: in `datetime-pattern` (what follows it ignored, as
    /// ShardingSphere reads the pattern's length of a string), else as SQL writes a date or
    /// date-time (a client's typed value), cut to the pattern's precision.
    pub fn value(&self, text: &str) -> Option<NaiveDateTime> {
        let value = self
            .pattern
            .parse_prefix(text)
            .or_else(|| parse_sql(text))?;
        Some(truncate(self.precision, value))
    }

    /// The interval `value` (of [`Interval::value`] or a database's own) falls in.
    pub fn interval_of(&self, value: NaiveDateTime) -> Option<usize> {
        let value = truncate(self.precision, value);
        if self.starts.first().is_none_or(|first| value < *first) || value >= self.end {
            return None;
        }
        Some(self.starts.partition_point(|s| *s <= value) - 1)
    }

    /// The intervals a range meets; a missing end is `datetime-lower` or `datetime-upper`,
    /// included, as ShardingSphere reads it.
    pub fn intervals_meeting(
        &self,
        lower: Bound<NaiveDateTime>,
        upper: Bound<NaiveDateTime>,
    ) -> Range<usize> {
        let Some(first_start) = self.starts.first() else {
            return 0..0;
        };
        let (low, low_closed) = match lower {
            Bound::Included(v) => (truncate(self.precision, v), true),
            Bound::Excluded(v) => (truncate(self.precision, v), false),
            Bound::Unbounded => (*first_start, true),
        };
        let (high, high_closed) = match upper {
            Bound::Included(v) => (truncate(self.precision, v), true),
            Bound::Excluded(v) => (truncate(self.precision, v), false),
            Bound::Unbounded => (self.upper, true),
        };
        let meets = |i: usize| {
            let start = self.starts[i];
            let end = self.starts.get(i + 1).copied().unwrap_or(self.end);
            // The intersection of [start, end) with the range: its larger lower end against
            // its smaller upper end.
            let (from, from_closed) = if low >= start {
                (low, low_closed)
            } else {
                (start, true)
            };
            let (to, to_closed) = if high < end {
                (high, high_closed)
            } else {
                (end, false)
            };
            from < to || (from == to && from_closed && to_closed)
        };
        let mut first = self.starts.partition_point(|s| *s <= low).saturating_sub(1);
        while first < self.starts.len() && !meets(first) {
            if self.starts[first] > high {
                return 0..0;
            }
            first += 1;
        }
        let mut last = first;
        while last < self.starts.len() && meets(last) {
            last += 1;
        }
        first..last
    }

    /// Interval `index`'s suffix: its start in `sharding-suffix-pattern`.
    pub fn suffix(&self, index: usize) -> &str {
        self.suffixes.get(index).map_or("", |s| s)
    }
}

/// `value` as a value of `precision` holds it: a date without its time, a year-month on its
/// first day, and so on.
fn truncate(precision: Precision, value: NaiveDateTime) -> NaiveDateTime {
    let date = value.date();
    let day = |y: i32, m: u32, d: u32| {
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap_or(date)
            .and_time(chrono::NaiveTime::MIN)
    };
    match precision {
        Precision::DateTime => value,
        Precision::Date => date.and_time(chrono::NaiveTime::MIN),
        Precision::YearMonth => day(date.year(), date.month(), 1),
        Precision::Year => day(date.year(), 1, 1),
        Precision::Month => day(2000, date.month(), 1),
        Precision::Time => NaiveDate::from_ymd_opt(2000, 1, 1)
            .unwrap_or(date)
            .and_time(value.time()),
    }
}

/// The time now, in UTC (Keyshard does not read the host's zone).
fn now() -> NaiveDateTime {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    chrono::DateTime::from_timestamp(since.as_secs() as i64, 0)
        .map(|t| t.naive_utc())
        .unwrap_or_default()
}

/// AUTO_INTERVAL: partition `n` holds the values up to `n` spans of `sharding-seconds` after
/// `datetime-lower`; the first and last partitions take everything below and above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoInterval {
    lower: NaiveDateTime,
    seconds: i64,
    partitions: i64,
}

/// AUTO_INTERVAL reads and writes its values in this form alone.
const AUTO_PATTERN: &str = "yyyy-MM-dd HH:mm:ss";

impl AutoInterval {
    /// Builds AUTO_INTERVAL from its properties.
    pub fn new(lower: &str, upper: &str, seconds: i64) -> Result<Self, String> {
        let read = |key: &str, text: &str| {
            Pattern::parse(AUTO_PATTERN)
                .ok()
                .and_then(|p| p.parse_exact(text))
                .ok_or_else(|| format!("{key} '{text}' is not of the form {AUTO_PATTERN}"))
        };
        let lower_at = read("datetime-lower", lower)?;
        let upper_at = read("datetime-upper", upper)?;
        if seconds <= 0 {
            return Err(format!("sharding-seconds must be positive, got {seconds}"));
        }
        if upper_at < lower_at {
            return Err(format!(
                "datetime-upper '{upper}' is before datetime-lower '{lower}'"
            ));
        }
        // Whole spans to the upper end, and one partition on each side (integer division
        // first, as ShardingSphere computes it).
        let partitions = (upper_at - lower_at).num_seconds() / seconds + 2;
        Ok(Self {
            lower: lower_at,
            seconds,
            partitions,
        })
    }

    /// Reads a sharding value: `yyyy-MM-dd HH:mm:ss` and whatever follows it (ignored), else a
    /// date or date-time as SQL writes it.
    pub fn value(text: &str) -> Option<NaiveDateTime> {
        Pattern::parse(AUTO_PATTERN)
            .ok()
            .and_then(|p| p.parse_prefix(text))
            .or_else(|| parse_sql(text))
    }

    /// The partition of `value`.
    pub fn partition(&self, value: NaiveDateTime) -> u64 {
        // ShardingSphere reads whole seconds, and rounds the number of spans to two decimals
        // (Java's DecimalFormat "0.00") before rounding it up: a value less than 0.005 of a
        // span after a boundary still belongs to the partition that ends there.
        let whole = value.with_nanosecond(0).unwrap_or(value);
        let spans = (whole - self.lower).num_seconds() as f64 / self.seconds as f64;
        let rounded: f64 = format!("{spans:.2}").parse().unwrap_or(spans);
        (rounded.ceil() as i64).clamp(0, self.partitions - 1) as u64
    }

    /// The partitions a range may reach, ends included, as ShardingSphere routes it.
    pub fn partitions(
        &self,
        lower: Option<NaiveDateTime>,
        upper: Option<NaiveDateTime>,
    ) -> RangeInclusive<u64> {
        let first = lower.map_or(0, |v| self.partition(v));
        let last = upper.map_or(self.partitions as u64 - 1, |v| self.partition(v));
        first..=last
    }

    /// How many partitions there are.
    pub fn count(&self) -> u64 {
        self.partitions as u64
    }
}

#[cfg(test)]
mod tests {
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
        let at_most =
            quarter.intervals_meeting(Bound::Unbounded, Bound::Included(at("2019-09-01")));
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
        let build = |pattern, lower, suffix, unit| {
            Interval::new(pattern, lower, Some(lower), suffix, 1, unit)
        };
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
}
