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
mod tests;
