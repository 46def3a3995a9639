//! The numeric part of Java's `DateTimeFormatter.ofPattern`, which ShardingSphere's INTERVAL
//! algorithm reads its `datetime-pattern` and `sharding-suffix-pattern` with: year, quarter,
//! month, day, hour, minute, second and fraction fields between literals.

use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};

/// A date-time field a pattern letter stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// `y`, `u`: the year; `yy` its last two digits (2000 to 2099 when parsed).
    Year,
    /// `Q`, `q`: the quarter, 1 to 4 (only written, never read).
    Quarter,
    /// `M`, `L`.
    Month,
    /// `d`.
    Day,
    /// `H`: hour of day, 0 to 23.
    Hour,
    /// `m`.
    Minute,
    /// `s`.
    Second,
    /// `S`: fraction of the second, as many digits as letters.
    Fraction,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Field { field: Field, width: usize },
    Literal(String),
}

/// A parsed pattern such as `yyyy-MM-dd HH:mm:ss` or `yyyyMM`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    tokens: Vec<Token>,
}

/// How much of a date and time a `datetime-pattern` reads, which decides the steps an interval
/// can take (a date has no hours) as Java's temporal types do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// A date and a time of day (`LocalDateTime`).
    DateTime,
    /// A date (`LocalDate`).
    Date,
    /// A year and month (`YearMonth`).
    YearMonth,
    /// A year (`Year`).
    Year,
    /// A month of no year (`Month`).
    Month,
    /// A time of day (`LocalTime`).
    Time,
}

/// The year a pattern without one reads values into: a leap year, so that no month-day is
/// refused for want of a year.
const NO_YEAR: i32 = 2000;

impl Pattern {
    /// Parses a Java pattern; the error names what is not supported.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut tokens = Vec::new();
        let mut chars = text.chars().peekable();
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            if c == '\'' {
                // `'text'` is literal text; `''` a quote.
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    literal.push('\'');
                    continue;
                }
                loop {
                    match chars.next() {
                        Some('\'') if chars.peek() == Some(&'\'') => {
                            chars.next();
                            literal.push('\'');
                        }
                        Some('\'') => break,
                        Some(other) => literal.push(other),
                        None => return Err(format!("unclosed quote in '{text}'")),
                    }
                }
                continue;
            }
            if matches!(c, '[' | ']' | '{' | '}' | '#') {
                return Err(format!(
                    "'{c}' (optional sections) is not supported in '{text}'"
                ));
            }
            if !c.is_ascii_alphabetic() {
                literal.push(c);
                continue;
            }
            let mut width = 1;
            while chars.peek() == Some(&c) {
                chars.next();
                width += 1;
            }
            let field = match c {
                'y' | 'u' => Field::Year,
                'Q' | 'q' => Field::Quarter,
                'M' | 'L' => Field::Month,
                'd' => Field::Day,
                'H' => Field::Hour,
                'm' => Field::Minute,
                's' => Field::Second,
                'S' => Field::Fraction,
                other => {
                    return Err(format!(
                        "pattern letter '{other}' is not supported in '{text}' (supported: y, u, \
                         Q, M, L, d, H, m, s, S and literals)"
                    ));
                }
            };
            let most = match field {
                Field::Year => 9,
                Field::Fraction => 9,
                _ => 2,
            };
            if width > most {
                return Err(format!(
                    "'{}' is not supported in '{text}' (text forms of fields are not)",
                    c.to_string().repeat(width)
                ));
            }
            if !literal.is_empty() {
                tokens.push(Token::Literal(std::mem::take(&mut literal)));
            }
            tokens.push(Token::Field { field, width });
        }
        if !literal.is_empty() {
            tokens.push(Token::Literal(literal));
        }
        if tokens.is_empty() {
            return Err("the pattern is empty".to_owned());
        }
        Ok(Self { tokens })
    }

    fn has(&self, wanted: Field) -> bool {
        self.tokens
            .iter()
            .any(|t| matches!(t, Token::Field { field, .. } if *field == wanted))
    }

    /// How much of a date and time the pattern reads; an error for a pattern that reads no
    /// whole Java temporal (a day without a month, a quarter).
    pub fn precision(&self) -> Result<Precision, String> {
        if self.has(Field::Quarter) {
            return Err("a quarter cannot be read, only written in a suffix".to_owned());
        }
        let (year, month, day, hour) = (
            self.has(Field::Year),
            self.has(Field::Month),
            self.has(Field::Day),
            self.has(Field::Hour),
        );
        Ok(match (year, month, day, hour) {
            (true, true, true, true) => Precision::DateTime,
            (true, true, true, false) => Precision::Date,
            (true, true, false, false) => Precision::YearMonth,
            (true, false, false, false) => Precision::Year,
            (false, true, false, false) => Precision::Month,
            (false, false, false, true) => Precision::Time,
            _ => return Err("it reads no whole date, time, year-month, year or month".to_owned()),
        })
    }

    /// Whether every field of this pattern can be written from a value read at `precision`
    /// (Java refuses to write a day of a `YearMonth`).
    pub fn writable_from(&self, precision: Precision) -> bool {
        self.tokens.iter().all(|token| {
            let Token::Field { field, .. } = token else {
                return true;
            };
            match field {
                Field::Year => !matches!(precision, Precision::Month | Precision::Time),
                Field::Quarter | Field::Month => {
                    !matches!(precision, Precision::Year | Precision::Time)
                }
                Field::Day => matches!(precision, Precision::DateTime | Precision::Date),
                Field::Hour | Field::Minute | Field::Second | Field::Fraction => {
                    matches!(precision, Precision::DateTime | Precision::Time)
                }
            }
        })
    }

    /// Reads `text` whole, as Java's `formatter.parse(text)` does.
    pub fn parse_exact(&self, text: &str) -> Option<NaiveDateTime> {
        let (value, rest) = self.read(text, false)?;
        rest.is_empty().then_some(value)
    }

    /// Reads the start of `text` in the whole pattern; what follows is ignored (ShardingSphere
    /// reads the pattern's length of a value). A value that ends early is not read here
    /// (ShardingSphere would read `2021` under `yyyy-MM-dd HH:mm:ss` as a year, where the
    /// database reads something else or nothing): [`parse_sql`] reads the forms SQL has.
    pub fn parse_prefix(&self, text: &str) -> Option<NaiveDateTime> {
        self.read(text, false).map(|(value, _)| value)
    }

    /// Reads the fields at the start of `text`; `relaxed`, a text that ends between two
    /// fields leaves the rest at their start.
    fn read<'t>(&self, text: &'t str, relaxed: bool) -> Option<(NaiveDateTime, &'t str)> {
        let mut parts = Parts::default();
        let mut rest = text;
        for (i, token) in self.tokens.iter().enumerate() {
            if relaxed && rest.is_empty() && i > 0 {
                break;
            }
            match token {
                Token::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Token::Field { field, width } => {
                    // Digits a field may take: a variable-width field followed by another
                    // field stops where that one's digits must begin (Java's adjacent value
                    // parsing); `yyyy` there takes four.
                    let adjacent = matches!(self.tokens.get(i + 1), Some(Token::Field { .. }));
                    let (least, most) = match (field, width) {
                        (Field::Year, 2) => (2, 2),
                        (Field::Year, _) if adjacent => (4.max(*width), 4.max(*width)),
                        (Field::Year, w) => (*w, 9),
                        (Field::Fraction, w) => (*w, *w),
                        (_, 1) => (1, 2),
                        (_, w) => (*w, *w),
                    };
                    let digits = rest
                        .bytes()
                        .take(most)
                        .take_while(u8::is_ascii_digit)
                        .count();
                    if digits < least {
                        return None;
                    }
                    // At most nine ASCII digits: no overflow, no UTF-8 to check.
                    let number = rest.as_bytes()[..digits]
                        .iter()
                        .fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
                    rest = &rest[digits..];
                    match (field, width) {
                        (Field::Year, 2) => parts.year = Some(2000 + number as i32),
                        (Field::Year, _) => parts.year = Some(i32::try_from(number).ok()?),
                        (Field::Quarter, _) => return None,
                        (Field::Month, _) => parts.month = number,
                        (Field::Day, _) => parts.day = number,
                        (Field::Hour, _) => parts.hour = number,
                        (Field::Minute, _) => parts.minute = number,
                        (Field::Second, _) => parts.second = number,
                        (Field::Fraction, w) => {
                            parts.nano = number * 10u32.pow(9 - *w as u32);
                        }
                    }
                }
            }
        }
        Some((parts.resolve()?, rest))
    }

    /// Writes `value` in this pattern into `out`.
    pub fn format_into(&self, value: NaiveDateTime, out: &mut String) {
        use std::fmt::Write;
        for token in &self.tokens {
            let (field, width) = match token {
                Token::Literal(literal) => {
                    out.push_str(literal);
                    continue;
                }
                Token::Field { field, width } => (*field, *width),
            };
            let number = match field {
                Field::Year if width == 2 => value.year().rem_euclid(100) as u32,
                Field::Year => {
                    // Writing to a String cannot fail.
                    let _ = write!(out, "{:0width$}", value.year());
                    continue;
                }
                Field::Quarter => (value.month() - 1) / 3 + 1,
                Field::Month => value.month(),
                Field::Day => value.day(),
                Field::Hour => value.hour(),
                Field::Minute => value.minute(),
                Field::Second => value.second(),
                Field::Fraction => {
                    let nanos = format!("{:09}", value.nanosecond() % 1_000_000_000);
                    out.push_str(&nanos[..width]);
                    continue;
                }
            };
            let _ = write!(out, "{number:0width$}");
        }
    }
}

/// The fields a value was read into, before they are checked to make a date and time.
struct Parts {
    year: Option<i32>,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nano: u32,
}

impl Default for Parts {
    fn default() -> Self {
        Self {
            year: None,
            month: 1,
            day: 1,
            hour: 0,
            minute: 0,
            second: 0,
            nano: 0,
        }
    }
}

impl Parts {
    fn resolve(&self) -> Option<NaiveDateTime> {
        NaiveDate::from_ymd_opt(self.year.unwrap_or(NO_YEAR), self.month, self.day)?
            .and_hms_nano_opt(self.hour, self.minute, self.second, self.nano)
    }
}

/// Reads a date or date-time as SQL writes one (`2021-06-01`, `2021-06-01 12:30:00.5`,
/// `2021-06-01T12:30:00`), ignoring what follows (a zone): the form a client's typed value
/// arrives in, when it is not in the configured pattern.
pub fn parse_sql(text: &str) -> Option<NaiveDateTime> {
    // Months, days and time fields of one or two digits, as MySQL and PostgreSQL read them.
    let date = Pattern::parse("yyyy-M-d").ok()?;
    let (day, rest) = date.read(text, false)?;
    let rest = match rest.strip_prefix([' ', 'T']) {
        Some(time) if time.starts_with(|c: char| c.is_ascii_digit()) => time,
        _ => return Some(day),
    };
    let time = Pattern::parse("H:m:s").ok()?;
    let (clock, rest) = time.read(rest, true)?;
    let mut value = day.date().and_time(clock.time());
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits: String = fraction
            .chars()
            .take_while(char::is_ascii_digit)
            .take(9)
            .collect();
        if !digits.is_empty() {
            let nanos: u32 = format!("{digits:0<9}").parse().ok()?;
            value = value.with_nanosecond(nanos)?;
        }
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        parse_sql(text).unwrap()
    }

    #[test]
    fn reads_and_writes_numeric_patterns() {
        let pattern = Pattern::parse("yyyy-MM-dd HH:mm:ss").unwrap();
        assert_eq!(pattern.precision(), Ok(Precision::DateTime));
        assert_eq!(
            pattern.parse_exact("2021-06-01 12:30:05"),
            Some(at("2021-06-01 12:30:05"))
        );
        assert_eq!(pattern.parse_exact("2021-06-01 12:30:05.1"), None);
        assert_eq!(
            pattern.parse_prefix("2021-06-01 12:30:05.123"),
            Some(at("2021-06-01 12:30:05"))
        );
        assert_eq!(pattern.parse_prefix("2021-06-01"), None);
        assert_eq!(pattern.parse_prefix("2021-13-01 00:00:00"), None);
        assert_eq!(pattern.parse_prefix("21-06-01"), None);

        let mut out = String::new();
        for (suffix, expected) in [
            ("yyyyMM", "202010"),
            ("yyyyQQ", "202004"),
            ("yyyy_MM_dd", "2020_10_11"),
            ("yy", "20"),
            ("HHmm", "0705"),
            ("'q'Q", "q4"),
            ("ss.SSS", "09.120"),
        ] {
            out.clear();
            Pattern::parse(suffix)
                .unwrap()
                .format_into(at("2020-10-11 07:05:09.12"), &mut out);
            assert_eq!(out, expected, "{suffix}");
        }
    }

    #[test]
    fn adjacent_fields_split_their_digits() {
        let pattern = Pattern::parse("yyyyMMdd").unwrap();
        assert_eq!(pattern.parse_exact("20210601"), Some(at("2021-06-01")));
        assert_eq!(pattern.precision(), Ok(Precision::Date));
        assert_eq!(
            Pattern::parse("MM").unwrap().parse_exact("04"),
            Some(at("2000-04-01"))
        );
        assert_eq!(
            Pattern::parse("HH:mm:ss.SSS")
                .unwrap()
                .parse_exact("02:25:27.500"),
            Some(at("2000-01-01 02:25:27.5"))
        );
    }

    #[test]
    fn refuses_what_it_does_not_read() {
        assert!(Pattern::parse("yyyy-MMM").is_err());
        assert!(Pattern::parse("EEE").is_err());
        assert!(Pattern::parse("yyyy[-MM]").is_err());
        assert!(Pattern::parse("yyyy-dd").unwrap().precision().is_err());
        assert!(
            !Pattern::parse("yyyyMMdd")
                .unwrap()
                .writable_from(Precision::YearMonth)
        );
    }

    #[test]
    fn reads_sql_literals() {
        assert_eq!(at("2021-06-01T12:00:00+09"), at("2021-06-01 12:00:00"));
        assert_eq!(at("2021-06-01 12:00:00.000001").nanosecond(), 1_000);
        assert_eq!(parse_sql("June 1"), None);
        assert_eq!(parse_sql("2021"), None);
        assert_eq!(at("2021-6-1 1:02:03"), at("2021-06-01 01:02:03"));
        assert_eq!(at("2021-06-01 12:30"), at("2021-06-01 12:30:00"));
    }
}
