//! DATE, DATETIME and TIME in the binary protocol, and their text form as MySQL prints them.
//!
//! The router and the backends see temporal parameters as text, which every SQL dialect
//! accepts in a literal; result columns declared temporal come back as text too, so the binary
//! encoder parses that text back into parts.

use std::fmt;

use super::error::ProtocolError;
use super::wire::Reader;

/// A DATE, DATETIME or TIMESTAMP value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct DateTime {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micros: u32,
}

/// A TIME value: a signed duration, not a time of day (MySQL allows ±838:59:59).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Time {
    pub negative: bool,
    pub days: u32,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micros: u32,
}

impl DateTime {
    /// Decodes the binary form: a length byte (0, 4, 7 or 11) and that many bytes.
    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<Self, ProtocolError> {
        let len = length(r, &[0, 4, 7, 11], "DATETIME")?;
        let mut v = Self::default();
        if len >= 4 {
            v.year = r.u16()?;
            v.month = r.u8()?;
            v.day = r.u8()?;
        }
        if len >= 7 {
            (v.hour, v.minute, v.second) = clock(r)?;
        }
        if len == 11 {
            v.micros = r.u32()?;
        }
        Ok(v)
    }

    /// Encodes the shortest binary form that keeps every non-zero part.
    pub(crate) fn encode(&self, buf: &mut Vec<u8>) {
        let has_time = self.hour != 0 || self.minute != 0 || self.second != 0;
        let len: u8 = if self.micros != 0 {
            11
        } else if has_time {
            7
        } else if self.year != 0 || self.month != 0 || self.day != 0 {
            4
        } else {
            0
        };
        buf.push(len);
        if len >= 4 {
            buf.extend_from_slice(&self.year.to_le_bytes());
            buf.extend_from_slice(&[self.month, self.day]);
        }
        if len >= 7 {
            buf.extend_from_slice(&[self.hour, self.minute, self.second]);
        }
        if len == 11 {
            buf.extend_from_slice(&self.micros.to_le_bytes());
        }
    }

    /// `YYYY-MM-DD` as MySQL prints a DATE.
    pub(crate) fn date_string(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// Parses `YYYY-MM-DD`, optionally followed by ` HH:MM:SS[.ffffff]` (or a `T` separator).
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let (date, time) = match text.find([' ', 'T']) {
            Some(i) => (&text[..i], Some(&text[i + 1..])),
            None => (text, None),
        };
        let mut parts = date.splitn(3, '-');
        let mut v = Self {
            year: parts.next()?.parse().ok()?,
            month: parts.next()?.parse().ok()?,
            day: parts.next()?.parse().ok()?,
            ..Self::default()
        };
        if let Some(time) = time {
            let t = Time::parse(time)?;
            if t.negative || t.days != 0 {
                return None;
            }
            (v.hour, v.minute, v.second, v.micros) = (t.hour, t.minute, t.second, t.micros);
        }
        Some(v)
    }
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` as MySQL prints a DATETIME or TIMESTAMP.
impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:02}:{:02}:{:02}",
            self.date_string(),
            self.hour,
            self.minute,
            self.second
        )?;
        write_micros(f, self.micros)
    }
}

impl Time {
    /// Decodes the binary form: a length byte (0, 8 or 12) and that many bytes.
    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<Self, ProtocolError> {
        let len = length(r, &[0, 8, 12], "TIME")?;
        let mut v = Self::default();
        if len >= 8 {
            v.negative = r.u8()? != 0;
            v.days = r.u32()?;
            (v.hour, v.minute, v.second) = clock(r)?;
        }
        if len == 12 {
            v.micros = r.u32()?;
        }
        Ok(v)
    }

    /// Encodes the shortest binary form that keeps every non-zero part.
    pub(crate) fn encode(&self, buf: &mut Vec<u8>) {
        let zero = self.days == 0 && self.hour == 0 && self.minute == 0 && self.second == 0;
        let len: u8 = if self.micros != 0 {
            12
        } else if !zero {
            8
        } else {
            0
        };
        buf.push(len);
        if len >= 8 {
            buf.push(u8::from(self.negative));
            buf.extend_from_slice(&self.days.to_le_bytes());
            buf.extend_from_slice(&[self.hour, self.minute, self.second]);
        }
        if len == 12 {
            buf.extend_from_slice(&self.micros.to_le_bytes());
        }
    }

    /// Parses `[-]H…H:MM:SS[.ffffff]`; hours beyond 23 spill into days.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (hms, fraction) = match text.split_once('.') {
            Some((hms, fraction)) => (hms, Some(fraction)),
            None => (text, None),
        };
        let mut parts = hms.splitn(3, ':');
        let hours: u64 = parts.next()?.parse().ok()?;
        let minute: u8 = parts.next()?.parse().ok()?;
        let second: u8 = parts.next()?.parse().ok()?;
        let micros = match fraction {
            Some(f) if (1..=6).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_digit()) => {
                // ".5" is half a second: pad on the right to six digits.
                format!("{f:0<6}").parse().ok()?
            }
            Some(_) => return None,
            None => 0,
        };
        if minute > 59 || second > 59 {
            return None;
        }
        Some(Self {
            negative,
            days: u32::try_from(hours / 24).ok()?,
            hour: (hours % 24) as u8,
            minute,
            second,
            micros,
        })
    }
}

/// `[-]hh:mm:ss[.ffffff]` with days folded into the hours, as MySQL prints a TIME.
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hours = u64::from(self.days) * 24 + u64::from(self.hour);
        let sign = if self.negative { "-" } else { "" };
        write!(f, "{sign}{hours:02}:{:02}:{:02}", self.minute, self.second)?;
        write_micros(f, self.micros)
    }
}

/// The length byte that starts a binary temporal value, one of the lengths its type allows.
fn length(r: &mut Reader<'_>, allowed: &[u8], what: &str) -> Result<u8, ProtocolError> {
    let len = r.u8()?;
    if allowed.contains(&len) {
        Ok(len)
    } else {
        Err(ProtocolError::malformed(format!("{what} of length {len}")))
    }
}

/// Hour, minute and second, in the order both binary forms carry them.
fn clock(r: &mut Reader<'_>) -> Result<(u8, u8, u8), ProtocolError> {
    Ok((r.u8()?, r.u8()?, r.u8()?))
}

fn write_micros(f: &mut fmt::Formatter<'_>, micros: u32) -> fmt::Result {
    if micros != 0 {
        write!(f, ".{micros:06}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
