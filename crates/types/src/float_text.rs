//! Floating-point numbers written as each database writes them, for the values Keyshard
//! computes (a merged SUM or AVG), converts between formats (a shard's binary value to a
//! client that asked for text) or takes apart (array elements). Values read from a shard and
//! passed on keep the shard's own text.
//!
//! Both databases start from the shortest digits that read back as the same number (what
//! Rust's `{:e}` prints); they differ in where they switch to an exponent and how they write it.

/// A number's significant digits (no leading or trailing zeros) and the position of the
/// decimal point relative to them: `digits` × 10^(`point` − len).
struct Digits {
    digits: String,
    point: i32,
}

impl Digits {
    /// From Rust's scientific form of a finite, non-zero, positive number (`1.2345e-7`).
    fn of_scientific(text: &str) -> Option<Self> {
        let (mantissa, exponent) = text.split_once('e')?;
        let exponent: i32 = exponent.parse().ok()?;
        let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        while digits.len() > 1 && digits.ends_with('0') {
            digits.pop();
        }
        Some(Self {
            digits,
            point: exponent + 1,
        })
    }

    /// The shortest digits that read back as `v` (as `single` precision when set).
    fn shortest(v: f64, single: bool) -> Option<Self> {
        if single {
            Self::of_scientific(&format!("{:e}", v.abs() as f32))
        } else {
            Self::of_scientific(&format!("{:e}", v.abs()))
        }
    }

    /// `v` rounded to at most `precision` significant digits, trailing zeros dropped.
    fn rounded(v: f64, precision: usize) -> Option<Self> {
        Self::of_scientific(&format!("{:.*e}", precision.max(1) - 1, v.abs()))
    }

    fn len(&self) -> i32 {
        self.digits.len() as i32
    }

    /// `123.45`, `0.0012`, `1200`.
    fn push_fixed(&self, out: &mut String) {
        if self.point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', self.point.unsigned_abs() as usize));
            out.push_str(&self.digits);
        } else if self.point >= self.len() {
            out.push_str(&self.digits);
            out.extend(std::iter::repeat_n('0', (self.point - self.len()) as usize));
        } else {
            let (whole, fraction) = self.digits.split_at(self.point as usize);
            out.push_str(whole);
            out.push('.');
            out.push_str(fraction);
        }
    }

    /// `1.2345`: the mantissa of the scientific form.
    fn push_mantissa(&self, out: &mut String) {
        let (first, rest) = self.digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
    }
}

/// PostgreSQL's `float4out`/`float8out` (`single`: float4): with `extra_float_digits` above 0
/// (the default, and what drivers set) the shortest exact digits, fixed-point for decimal
/// exponents from -4 up to the type's digit count (6 or 15), else `1.5e+300`; with 0 or less,
/// printf's `%.Ng` with N = that count plus `extra_float_digits`.
pub fn postgres(v: f64, single: bool, extra_float_digits: i32) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let mut out = String::new();
    if v.is_sign_negative() {
        out.push('-');
    }
    if v == 0.0 {
        out.push('0');
        return out;
    }
    let type_digits = if single { 6 } else { 15 };
    let digits = if extra_float_digits > 0 {
        Digits::shortest(v, single)
    } else {
        Digits::rounded(v, (type_digits + extra_float_digits).max(1) as usize)
    };
    let Some(digits) = digits else {
        return out;
    };
    let exponent = digits.point - 1;
    let fixed_below = if extra_float_digits > 0 {
        type_digits
    } else {
        type_digits + extra_float_digits
    };
    if (-4..fixed_below.max(1)).contains(&exponent) {
        digits.push_fixed(&mut out);
    } else {
        digits.push_mantissa(&mut out);
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        out.push_str(&magnitude.to_string());
    }
    out
}

/// MySQL's and MariaDB's text of a FLOAT (`single`) or DOUBLE without declared decimals
/// (`my_gcvt`): a DOUBLE's shortest exact digits, a FLOAT's rounded to 6; fixed-point for a
/// point from -14 to 15 digits (or further when the digits reach past it), else `1.5e300`,
/// `1e-16`. Zero of either sign is `0`.
pub fn mysql(v: f64, single: bool) -> String {
    if !v.is_finite() {
        // Neither database stores them; what MySQL prints for an overflowed expression.
        return if v.is_nan() { "NaN" } else { "inf" }.to_owned();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let digits = if single {
        Digits::rounded(v, 6)
    } else {
        Digits::shortest(v, false)
    };
    let mut out = String::new();
    if v < 0.0 {
        out.push('-');
    }
    let Some(digits) = digits else {
        return out;
    };
    const DBL_DIG: i32 = 15;
    let point = digits.point;
    if point > -DBL_DIG && (point <= DBL_DIG || digits.len() > point) {
        digits.push_fixed(&mut out);
    } else {
        digits.push_mantissa(&mut out);
        out.push('e');
        out.push_str(&(point - 1).to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_writes_as_postgres_does() {
        // Each pair as PostgreSQL 15 printed it.
        let cases: &[(f64, bool, &str)] = &[
            (1e14, false, "100000000000000"),
            (1e15, false, "1e+15"),
            (123456789012345.0, false, "123456789012345"),
            (1234567890123456.0, false, "1.234567890123456e+15"),
            (0.0001, false, "0.0001"),
            (0.00001, false, "1e-05"),
            (1.5e300, false, "1.5e+300"),
            (1.5e-300, false, "1.5e-300"),
            (-0.0, false, "-0"),
            (f64::NAN, false, "NaN"),
            (f64::NEG_INFINITY, false, "-Infinity"),
            (5e-324, false, "5e-324"),
            (1e100, false, "1e+100"),
            (100000.0, true, "100000"),
            (1000000.0, true, "1e+06"),
            (123456.0, true, "123456"),
            (1234567.0, true, "1.234567e+06"),
            (f64::from(0.1f32), true, "0.1"),
            (0.1, true, "0.1"),
            (0.00001, true, "1e-05"),
            (f64::from(f32::MAX), true, "3.4028235e+38"),
            (f64::from(f32::MIN_POSITIVE), true, "1.1754944e-38"),
            (1e-45, true, "1e-45"),
            (-0.0, true, "-0"),
            (0.1 + 0.2, false, "0.30000000000000004"),
        ];
        for (v, single, want) in cases {
            assert_eq!(postgres(*v, *single, 1), *want, "{v:e} single={single}");
        }
        // extra_float_digits = 0: printf's %.15g and %.6g.
        assert_eq!(postgres(0.1 + 0.2, false, 0), "0.3");
        assert_eq!(postgres(1e15, false, 0), "1e+15");
        assert_eq!(postgres(f64::from(0.1f32), true, 0), "0.1");
        assert_eq!(postgres(123456.7, true, 0), "123457");
        assert_eq!(postgres(2.0 / 3.0, false, -3), "0.666666666667");
    }

    #[test]
    fn mysql_writes_as_mariadb_does() {
        // Each pair as MariaDB 10.11 printed it.
        let doubles: &[(f64, &str)] = &[
            (1e14, "100000000000000"),
            (1e15, "1e15"),
            (123456789012345.0, "123456789012345"),
            (1234567890123456.0, "1.234567890123456e15"),
            (12345678901234567.0, "1.2345678901234568e16"),
            (0.001, "0.001"),
            (0.00001, "0.00001"),
            (1.5e300, "1.5e300"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-1.5e-300, "-1.5e-300"),
            (1e-15, "0.000000000000001"),
            (1e-16, "1e-16"),
            (1.5e-15, "0.0000000000000015"),
            (1.2345678901234567e-14, "0.000000000000012345678901234567"),
            (123456789012345.6, "123456789012345.6"),
            (-1.7976931348623157e308, "-1.7976931348623157e308"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (-0.0, "0"),
            (2.0, "2"),
            (1e20, "1e20"),
        ];
        for (v, want) in doubles {
            assert_eq!(mysql(*v, false), *want, "{v:e}");
        }
        let floats: &[(f32, &str)] = &[
            (0.1, "0.1"),
            (-3.402_823_5e38, "-3.40282e38"),
            (1.175_494_4e-38, "1.17549e-38"),
            (123_456_789.0, "123457000"),
            (1e7, "10000000"),
            (1e-5, "0.00001"),
            (1_234_567.0, "1234570"),
            (1e-45, "1.4013e-45"),
            (1.234_56e-14, "0.0000000000000123456"),
        ];
        for (v, want) in floats {
            assert_eq!(mysql(f64::from(*v), true), *want, "{v:e}");
        }
    }
}
