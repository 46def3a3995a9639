//! Exact decimal numbers, which the proxy carries as their text: arithmetic for merging sums
//! and averages, and PostgreSQL's binary NUMERIC (a header of digit count, weight — the power
//! of 10000 of the first digit —, sign and display scale, then base-10000 digits).

use std::cmp::Ordering;
use std::fmt;

/// Binary NUMERIC as decimal text; `None` when the bytes are not one.
pub fn binary_to_text(bytes: &[u8]) -> Option<String> {
    let word = |i: usize| -> Option<u16> {
        Some(u16::from_be_bytes([
            *bytes.get(i * 2)?,
            *bytes.get(i * 2 + 1)?,
        ]))
    };
    let count = usize::from(word(0)?);
    let weight = i64::from(word(1)? as i16);
    let sign = word(2)?;
    let scale = usize::from(word(3)?);
    // NaN and, since PostgreSQL 14, the infinities are signs of their own.
    match sign {
        0xC000 => return Some("NaN".to_owned()),
        0xD000 => return Some("Infinity".to_owned()),
        0xF000 => return Some("-Infinity".to_owned()),
        _ => {}
    }
    let digits: Vec<u16> = (0..count).map(|i| word(4 + i)).collect::<Option<_>>()?;
    let digit = |position: i64| -> u16 {
        usize::try_from(position)
            .ok()
            .and_then(|p| digits.get(p).copied())
            .unwrap_or(0)
    };
    let mut out = String::new();
    if sign == 0x4000 {
        out.push('-');
    }
    if weight < 0 {
        out.push('0');
    } else {
        out.push_str(&digit(0).to_string());
        for position in 1..=weight {
            out.push_str(&format!("{:04}", digit(position)));
        }
    }
    if scale > 0 {
        let mut fraction = String::new();
        let mut position = weight + 1;
        while fraction.len() < scale {
            fraction.push_str(&format!("{:04}", digit(position)));
            position += 1;
        }
        fraction.truncate(scale);
        out.push('.');
        out.push_str(&fraction);
    }
    Some(out)
}

/// Decimal text (`[-]digits[.digits]`, or `NaN`) as PostgreSQL's binary NUMERIC; `None` when
/// the text is not such a number.
pub fn text_to_binary(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    let header = |count: u16, weight: i16, sign: u16, scale: u16| {
        [count, weight as u16, sign, scale]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect::<Vec<u8>>()
    };
    // The display scale PostgreSQL's `numeric_send` gives each: what its short header's
    // scale bits read for that sign.
    for (special, sign, scale) in [
        ("nan", 0xC000, 0),
        ("infinity", 0xD000, 32),
        ("-infinity", 0xF000, 32),
    ] {
        if text.eq_ignore_ascii_case(special) {
            return Some(header(0, 0, sign, scale));
        }
    }
    let decimal = Decimal::parse(text)?;
    let scale = u16::try_from(decimal.scale).ok()?;
    // Base-10000 digits: the integer part grouped from the point leftwards, the fraction
    // rightwards.
    let int_len = decimal.digits.len() - decimal.scale;
    let int_pad = (4 - int_len % 4) % 4;
    let frac_pad = (4 - decimal.scale % 4) % 4;
    let padded: Vec<u8> = std::iter::repeat_n(0, int_pad)
        .chain(decimal.digits.iter().copied())
        .chain(std::iter::repeat_n(0, frac_pad))
        .collect();
    let mut groups: Vec<u16> = padded
        .chunks(4)
        .map(|c| c.iter().fold(0u16, |v, d| v * 10 + u16::from(*d)))
        .collect();
    let mut weight = ((int_len + int_pad) / 4) as i64 - 1;
    let leading = groups.iter().take_while(|g| **g == 0).count();
    groups.drain(..leading);
    weight -= leading as i64;
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        return Some(header(0, 0, 0, scale));
    }
    let sign = if decimal.negative { 0x4000 } else { 0 };
    let mut out = header(
        u16::try_from(groups.len()).ok()?,
        i16::try_from(weight).ok()?,
        sign,
        scale,
    );
    for g in groups {
        out.extend_from_slice(&g.to_be_bytes());
    }
    Some(out)
}

/// An exact decimal of any size: `digits` (most significant first, at least `scale` of them)
/// with the last `scale` after the point. No leading zeros beyond those, and zero is never
/// negative, so equal values with equal scale are equal structs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    scale: usize,
}

impl Decimal {
    /// `[+-]digits[.digits]`, what MariaDB sends for DECIMAL. No exponent, no spaces.
    pub fn parse(text: &str) -> Option<Decimal> {
        let (negative, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        let all_digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
        if int.len() + frac.len() == 0 || !all_digits(int) || !all_digits(frac) {
            return None;
        }
        let digits = int.bytes().chain(frac.bytes()).map(|c| c - b'0').collect();
        Some(Decimal::normalized(negative, digits, frac.len()))
    }

    /// The integer `v`, scale 0.
    pub fn from_int(v: i128) -> Decimal {
        let digits = v
            .unsigned_abs()
            .to_string()
            .bytes()
            .map(|c| c - b'0')
            .collect();
        Decimal::normalized(v < 0, digits, 0)
    }

    /// The number `digits` (one per byte, most significant first) with `scale` of them after
    /// the point: leading zeros dropped, and no negative zero.
    pub fn normalized(negative: bool, mut digits: Vec<u8>, scale: usize) -> Decimal {
        let leading = digits
            .iter()
            .take(digits.len().saturating_sub(scale))
            .take_while(|&&d| d == 0)
            .count();
        digits.drain(..leading);
        if digits.len() < scale {
            let mut padded = vec![0; scale - digits.len()];
            padded.append(&mut digits);
            digits = padded;
        }
        let negative = negative && digits.iter().any(|&d| d != 0);
        Decimal {
            negative,
            digits,
            scale,
        }
    }

    /// Both magnitudes at the larger scale and the same length, so they compare digit-wise.
    pub fn aligned(&self, other: &Decimal) -> (Vec<u8>, Vec<u8>, usize) {
        let scale = self.scale.max(other.scale);
        let widen = |d: &Decimal| {
            let mut digits = d.digits.clone();
            digits.resize(digits.len() + scale - d.scale, 0);
            digits
        };
        let (mut x, mut y) = (widen(self), widen(other));
        let len = x.len().max(y.len());
        let pad = |v: &mut Vec<u8>| {
            let mut padded = vec![0; len - v.len()];
            padded.append(v);
            *v = padded;
        };
        pad(&mut x);
        pad(&mut y);
        (x, y, scale)
    }

    /// The exact sum.
    pub fn add(&self, other: &Decimal) -> Decimal {
        let (x, y, scale) = self.aligned(other);
        if self.negative == other.negative {
            return Decimal::normalized(self.negative, add_digits(&x, &y), scale);
        }
        if x >= y {
            Decimal::normalized(self.negative, sub_digits(&x, &y), scale)
        } else {
            Decimal::normalized(other.negative, sub_digits(&y, &x), scale)
        }
    }

    /// Numeric order, whatever the scales (`1.50` equals `1.5`).
    pub fn compare(&self, other: &Decimal) -> Ordering {
        let (x, y, _) = self.aligned(other);
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => x.cmp(&y),
            (true, true) => y.cmp(&x),
        }
    }

    /// The nearest double.
    pub fn to_f64(&self) -> f64 {
        self.to_string().parse().unwrap_or(f64::NAN)
    }

    /// The value as an unsigned integer, when it is a non-negative whole number that fits.
    pub fn to_u64(&self) -> Option<u64> {
        let int_len = self.digits.len() - self.scale;
        let (int, frac) = self.digits.split_at(int_len);
        if self.negative || frac.iter().any(|&d| d != 0) {
            return None;
        }
        int.iter().try_fold(0u64, |acc, &d| {
            acc.checked_mul(10)?.checked_add(u64::from(d))
        })
    }

    /// Digits after the point.
    pub fn scale(&self) -> usize {
        self.scale
    }

    /// The scale PostgreSQL gives `self / count` (`select_div_scale`): at least 16 significant
    /// digits, estimated from the weights and first digits of both in base 10000, and no less than
    /// its own scale.
    pub fn pg_division_scale(&self, count: u64) -> usize {
        const MIN_SIG_DIGITS: i64 = 16;
        let (weight1, first1) = self.base_10000_head();
        let count_digits = count.to_string().len() as i64;
        let weight2 = (count_digits - 1) / 4;
        let first2 = count / 10_000u64.pow(weight2 as u32);
        let mut quotient_weight = weight1 - weight2;
        if first1 <= first2 {
            quotient_weight -= 1;
        }
        let scale = (MIN_SIG_DIGITS - quotient_weight * 4)
            .max(self.scale as i64)
            .clamp(0, 1000);
        scale as usize
    }

    /// The weight (power of 10000) and value of the first non-zero base-10000 digit, as
    /// PostgreSQL stores numerics; (0, 0) for zero.
    fn base_10000_head(&self) -> (i64, u64) {
        let int_len = self.digits.len() - self.scale;
        let value = |digits: &[u8]| digits.iter().fold(0u64, |v, d| v * 10 + u64::from(*d));
        let int = &self.digits[..int_len];
        if int.iter().any(|d| *d != 0) {
            let weight = (int_len as i64 - 1) / 4;
            let lead = int_len - 4 * weight as usize;
            return (weight, value(&int[..lead]));
        }
        let frac = &self.digits[int_len..];
        for (group, chunk) in frac.chunks(4).enumerate() {
            let mut padded = [0u8; 4];
            padded[..chunk.len()].copy_from_slice(chunk);
            let digit = value(&padded);
            if digit != 0 {
                return (-(group as i64) - 1, digit);
            }
        }
        (0, 0)
    }

    /// -self.
    pub fn negated(&self) -> Decimal {
        Decimal::normalized(!self.negative, self.digits.clone(), self.scale)
    }

    /// self × other, exactly: its scale is the sum of theirs, as in MySQL and PostgreSQL.
    pub fn mul(&self, other: &Decimal) -> Decimal {
        let mut product = vec![0u32; self.digits.len() + other.digits.len()];
        for (i, &x) in self.digits.iter().enumerate().rev() {
            for (j, &y) in other.digits.iter().enumerate().rev() {
                product[i + j + 1] += u32::from(x) * u32::from(y);
            }
        }
        // Carries, least significant first; each column stays far below u32::MAX for any
        // length a statement can write.
        for k in (1..product.len()).rev() {
            let carry = product[k] / 10;
            product[k] %= 10;
            product[k - 1] += carry;
        }
        let digits = product.into_iter().map(|d| d as u8).collect();
        Decimal::normalized(
            self.negative != other.negative,
            digits,
            self.scale + other.scale,
        )
    }

    /// How many digits it has before and after the point, at least one before.
    pub fn precision(&self) -> usize {
        self.digits.len().max(self.scale + 1)
    }

    /// self / divisor at `scale` fractional digits, rounded half away from zero (MySQL's and
    /// PostgreSQL's rounding of a division). `None` when the divisor is zero, its digits do
    /// not fit 64 bits, or `scale` is below self's less the divisor's.
    pub fn div_to_scale(&self, divisor: &Decimal, scale: usize) -> Option<Decimal> {
        let whole = divisor.digits.iter().try_fold(0u64, |acc, &d| {
            acc.checked_mul(10)?.checked_add(u64::from(d))
        })?;
        // self / divisor = (self × 10^s) / (divisor × 10^s), s the divisor's scale.
        let mut digits = self.digits.clone();
        let own_scale = match self.scale.checked_sub(divisor.scale) {
            Some(own) => own,
            None => {
                digits.resize(digits.len() + divisor.scale - self.scale, 0);
                0
            }
        };
        let shifted = Decimal::normalized(self.negative != divisor.negative, digits, own_scale);
        shifted.div_round(whole, scale.checked_sub(own_scale)?)
    }

    /// self / divisor with `extra_scale` more fractional digits, rounded half away from zero
    /// (MariaDB's rounding for DECIMAL division). `None` when dividing by zero.
    pub fn div_round(&self, divisor: u64, extra_scale: usize) -> Option<Decimal> {
        let divisor = u128::from(divisor);
        if divisor == 0 {
            return None;
        }
        let mut quotient = Vec::with_capacity(self.digits.len() + extra_scale);
        let mut remainder: u128 = 0;
        let extra = std::iter::repeat_n(0u8, extra_scale);
        for digit in self.digits.iter().copied().chain(extra) {
            // remainder < divisor <= u64::MAX, so this cannot overflow u128.
            remainder = remainder * 10 + u128::from(digit);
            quotient.push(u8::try_from(remainder / divisor).unwrap_or(9));
            remainder %= divisor;
        }
        if remainder * 2 >= divisor {
            quotient = add_digits(&quotient, &[1]);
        }
        Some(Decimal::normalized(
            self.negative,
            quotient,
            self.scale + extra_scale,
        ))
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (int, frac) = self.digits.split_at(self.digits.len() - self.scale);
        let digit = |d: &u8| char::from(b'0' + d);
        if self.negative {
            f.write_str("-")?;
        }
        if int.is_empty() {
            f.write_str("0")?;
        }
        int.iter()
            .map(digit)
            .try_for_each(|c| fmt::Write::write_char(f, c))?;
        if !frac.is_empty() {
            f.write_str(".")?;
            frac.iter()
                .map(digit)
                .try_for_each(|c| fmt::Write::write_char(f, c))?;
        }
        Ok(())
    }
}

/// Magnitude sum of two digit strings (most significant first), of any lengths.
fn add_digits(x: &[u8], y: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(x.len().max(y.len()) + 1);
    let (mut i, mut j, mut carry) = (x.len(), y.len(), 0u8);
    while i > 0 || j > 0 || carry > 0 {
        let a = if i > 0 {
            i -= 1;
            x[i]
        } else {
            0
        };
        let b = if j > 0 {
            j -= 1;
            y[j]
        } else {
            0
        };
        let s = a + b + carry;
        out.push(s % 10);
        carry = s / 10;
    }
    out.reverse();
    out
}

/// Magnitude difference x - y of equal-length digit strings with x >= y.
fn sub_digits(x: &[u8], y: &[u8]) -> Vec<u8> {
    let mut out = vec![0; x.len()];
    let mut borrow = 0u8;
    for i in (0..x.len()).rev() {
        let b = y.get(i).copied().unwrap_or(0) + borrow;
        let a = x[i];
        if a >= b {
            out[i] = a - b;
            borrow = 0;
        } else {
            out[i] = a + 10 - b;
            borrow = 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(weight: i16, sign: u16, scale: u16, digits: &[u16]) -> Vec<u8> {
        let mut out = Vec::new();
        for word in [digits.len() as u16, weight as u16, sign, scale]
            .into_iter()
            .chain(digits.iter().copied())
        {
            out.extend_from_slice(&word.to_be_bytes());
        }
        out
    }

    #[test]
    fn binary_numerics_read_as_text() {
        assert_eq!(binary_to_text(&numeric(0, 0, 0, &[])).unwrap(), "0");
        assert_eq!(
            binary_to_text(&numeric(1, 0, 0, &[1, 2345])).unwrap(),
            "12345"
        );
        assert_eq!(
            binary_to_text(&numeric(0, 0x4000, 4, &[15, 5000])).unwrap(),
            "-15.5000"
        );
        assert_eq!(
            binary_to_text(&numeric(-1, 0, 5, &[12])).unwrap(),
            "0.00120"
        );
        assert_eq!(
            binary_to_text(&numeric(-2, 0, 8, &[7])).unwrap(),
            "0.00000007"
        );
        assert_eq!(binary_to_text(&numeric(1, 0, 0, &[2])).unwrap(), "20000");
        assert!(binary_to_text(&[0, 1]).is_none());
    }

    #[test]
    fn text_round_trips_through_binary() {
        for text in [
            "0",
            "12345",
            "-15.5000",
            "0.00120",
            "0.00000007",
            "20000",
            "17636.571428571429",
            "-0.66666666666666666667",
            "1.0",
            "NaN",
            "0.000",
        ] {
            let binary = text_to_binary(text).unwrap();
            assert_eq!(binary_to_text(&binary).unwrap(), text, "{text}");
        }
        assert_eq!(text_to_binary("12345"), Some(numeric(1, 0, 0, &[1, 2345])));
        assert!(text_to_binary("1e5").is_none());
        assert!(text_to_binary("").is_none());
    }

    #[test]
    fn decimals_parse_format_and_compare() {
        let d = |s: &str| Decimal::parse(s).expect("a decimal");
        assert_eq!(d("007.50").to_string(), "7.50");
        assert_eq!(d("-.5").to_string(), "-0.5");
        assert_eq!(d("-0.00").to_string(), "0.00");
        assert_eq!(d("+3").to_string(), "3");
        for bad in ["", "-", ".", "1e5", " 1", "1.2.3", "0x10", "١"] {
            assert_eq!(Decimal::parse(bad), None, "{bad:?}");
        }
        assert_eq!(d("1.50").compare(&d("1.5")), Ordering::Equal);
        assert_eq!(d("-2").compare(&d("-10")), Ordering::Greater);
        assert_eq!(d("0.1").compare(&d("-0.1")), Ordering::Greater);
        assert_eq!(d("0.999").div_round(0, 4), None);
        assert_eq!(
            d("5").div_round(2, 0).map(|q| q.to_string()),
            Some("3".into())
        );
        assert_eq!(
            d("-5").div_round(2, 0).map(|q| q.to_string()),
            Some("-3".into())
        );
    }

    #[test]
    fn decimals_multiply_negate_and_divide_exactly() {
        let d = |s: &str| Decimal::parse(s).unwrap();
        let text = |v: Decimal| v.to_string();
        assert_eq!(text(d("12.50").mul(&d("-0.3"))), "-3.750");
        assert_eq!(text(d("999").mul(&d("999"))), "998001");
        assert_eq!(text(d("0").mul(&d("-2.5"))), "0.0");
        assert_eq!(text(d("1.5").negated()), "-1.5");
        assert_eq!(text(d("0.00").negated()), "0.00");
        assert_eq!(d("123.45").precision(), 5);
        assert_eq!(d("0.05").precision(), 3);
        let div = |a: &str, b: &str, scale| d(a).div_to_scale(&d(b), scale).map(text);
        // MySQL: the dividend's scale plus div_precision_increment (4).
        assert_eq!(div("10.00", "3", 6), Some("3.333333".into()));
        assert_eq!(div("2", "0.3", 4), Some("6.6667".into()));
        assert_eq!(div("-1", "8", 2), Some("-0.13".into()));
        assert_eq!(div("1", "-0.008", 0), Some("-125".into()));
        assert_eq!(div("1.25", "0.5", 1), Some("2.5".into()));
        assert_eq!(div("1", "0.00", 4), None);
        assert_eq!(div("1.234", "1", 2), None);
    }
}
