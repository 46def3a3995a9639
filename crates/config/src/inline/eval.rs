//! Sharding expressions: parsed once at load, evaluated per row by the router.

use std::fmt;

use super::error::InlineError;
use super::expr::{Expr, Val, Value, eval};
use super::parser::{Group, Segment, parse_template};

/// A parsed sharding expression such as `t_order_${order_id % 2}`.
///
/// Supported inside `${…}` (or `$->{…}`): decimal integer and quoted string literals, variables,
/// unary minus, parentheses and `+ - * / %`. Arithmetic is on `i64` with overflow reported as an
/// error. `/` is integer division truncating toward zero, and `%` takes the sign of the dividend
/// (so `-3 % 2` is `-1`, as in Java and Groovy); note that Groovy's `/` on integers would give a
/// decimal, which sharding expressions practically never rely on. `+` with a string operand
/// concatenates.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineExpr {
    source: String,
    segments: Vec<Segment>,
    variables: Vec<Box<str>>,
    by_remainder: Option<ByRemainder>,
}

/// The results of an expression `prefix${var % n}suffix` (`n` small and positive), one per
/// remainder, computed at load: nearly every sharding expression has this form, and routing
/// evaluates it for every row.
#[derive(Debug, Clone, PartialEq)]
struct ByRemainder {
    modulus: i64,
    /// The result for remainder `r` (−modulus < r < modulus) at `r + modulus − 1`.
    results: Vec<Box<str>>,
}

/// Remainders beyond this many are evaluated per row instead of kept.
const MAX_KEPT_MODULUS: i64 = 1024;

impl ByRemainder {
    fn of(expr: &InlineExpr) -> Option<Self> {
        let mut groups = expr.segments.iter().filter_map(|segment| match segment {
            Segment::Group { group, .. } => Some(group),
            Segment::Literal(_) => None,
        });
        let (Some(Group::Expr(Expr::Binary('%', left, right))), None) =
            (groups.next(), groups.next())
        else {
            return None;
        };
        let (Expr::Var(_), Expr::Int(modulus)) = (&**left, &**right) else {
            return None;
        };
        let modulus = *modulus;
        if !(1..=MAX_KEPT_MODULUS).contains(&modulus) {
            return None;
        }
        // For |r| < n, r % n is r: each result is what the expression gives for any value
        // with that remainder.
        let results = (1 - modulus..modulus)
            .map(|r| {
                let mut result = String::new();
                expr.evaluate_segments(&|_| Some(Value::Int(r)), &mut result)
                    .map(|()| result.into_boxed_str())
            })
            .collect::<Result<_, _>>()
            .ok()?;
        Some(Self { modulus, results })
    }

    fn result(&self, value: i64) -> Option<&str> {
        let at = value % self.modulus + self.modulus - 1;
        self.results.get(usize::try_from(at).ok()?).map(|r| &**r)
    }
}

impl InlineExpr {
    /// Parses `text`, rejecting ranges, lists and any syntax outside the supported subset.
    pub fn parse(text: &str) -> Result<Self, InlineError> {
        let segments = parse_template(text, 0, text.len())?;
        let mut names = Vec::new();
        for segment in &segments {
            match segment {
                Segment::Literal(_) => {}
                Segment::Group {
                    group: Group::Expr(expr),
                    ..
                } => expr.collect_variables(&mut names),
                Segment::Group { at, .. } => {
                    return Err(InlineError::RangeInExpression {
                        column: super::error::column(text, *at),
                    });
                }
            }
        }
        let mut variables: Vec<Box<str>> = Vec::new();
        for name in names {
            if !variables.iter().any(|v| **v == *name) {
                variables.push(name.into());
            }
        }
        let mut expr = Self {
            source: text.to_owned(),
            segments,
            variables,
            by_remainder: None,
        };
        expr.by_remainder = ByRemainder::of(&expr);
        Ok(expr)
    }

    /// `n` when the expression is `prefix${var % n}suffix` (`n` up to 1024): its result
    /// depends on the remainder alone.
    pub fn remainder_modulus(&self) -> Option<i64> {
        self.by_remainder.as_ref().map(|kept| kept.modulus)
    }

    /// What the expression gives an integer `value`, from the results kept at load (see
    /// [`InlineExpr::remainder_modulus`]); `None` for any other expression.
    pub fn kept_result(&self, value: i64) -> Option<&str> {
        self.by_remainder.as_ref()?.result(value)
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The distinct variable names, in order of first use.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.variables.iter().map(|v| &**v)
    }

    /// Evaluates with variables looked up by name.
    pub fn evaluate<'v>(
        &self,
        lookup: &dyn Fn(&str) -> Option<Value<'v>>,
    ) -> Result<String, InlineError> {
        let mut out = String::with_capacity(self.source.len());
        self.evaluate_into(lookup, &mut out)?;
        Ok(out)
    }

    /// Evaluates with every variable bound to `value`: the usual case of a strategy with one
    /// sharding column, whose expression the configuration has checked names only that column.
    pub fn evaluate_with(&self, value: Value<'_>) -> Result<String, InlineError> {
        self.evaluate(&|_| Some(value))
    }

    /// Evaluates into `out` (appending), so a caller routing many rows can reuse one buffer.
    pub fn evaluate_into<'v>(
        &self,
        lookup: &dyn Fn(&str) -> Option<Value<'v>>,
        out: &mut String,
    ) -> Result<(), InlineError> {
        if let (Some(kept), Some(variable)) = (&self.by_remainder, self.variables.first())
            && let Some(Value::Int(value)) = lookup(variable)
            && let Some(result) = kept.result(value)
        {
            out.push_str(result);
            return Ok(());
        }
        self.evaluate_segments(lookup, out)
    }

    /// Evaluates the expression itself, without the results kept at load.
    fn evaluate_segments<'v>(
        &self,
        lookup: &dyn Fn(&str) -> Option<Value<'v>>,
        out: &mut String,
    ) -> Result<(), InlineError> {
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Group {
                    group: Group::Expr(expr),
                    ..
                } => match eval(expr, lookup)? {
                    // Per routed row: itoa skips fmt's machinery (a fifth of routing's cost).
                    Val::Int(v) => out.push_str(itoa::Buffer::new().format(v)),
                    Val::Str(s) => out.push_str(&s),
                },
                // `parse` admits only expression groups.
                Segment::Group { .. } => {}
            }
        }
        Ok(())
    }
}

impl fmt::Display for InlineExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for InlineExpr {
    type Err = InlineError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_int(text: &str, value: i64) -> Result<String, InlineError> {
        InlineExpr::parse(text)
            .unwrap()
            .evaluate_with(Value::Int(value))
    }

    #[test]
    fn strings_holding_integers_take_part_in_arithmetic() {
        let eval_str = |text: &str, value: &str| {
            InlineExpr::parse(text)
                .unwrap()
                .evaluate_with(Value::Str(value))
        };
        assert_eq!(eval_str("ds_${user_id % 2}", "402").unwrap(), "ds_0");
        assert_eq!(eval_str("ds_${user_id % 2}", "-7").unwrap(), "ds_-1");
        assert_eq!(eval_str("ds_${user_id % 2}", "+7").unwrap(), "ds_1");
        assert_eq!(eval_str("ds_${-user_id}", "7").unwrap(), "ds_-7");
        // Concatenation stays concatenation; what is not an integer stays refused.
        assert_eq!(eval_str("t_${user_id + 1}", "40").unwrap(), "t_401");
        for bad in ["x1", "4 02", "", "+", "402abc", "4.0"] {
            assert!(eval_str("ds_${user_id % 2}", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn evaluates_modulo_like_groovy() {
        assert_eq!(eval_int("t_order_${order_id % 2}", 7).unwrap(), "t_order_1");
        assert_eq!(
            eval_int("t_order_$->{order_id % 2}", 8).unwrap(),
            "t_order_0"
        );
        // The remainder takes the dividend's sign, as in Java and Groovy.
        assert_eq!(eval_int("t_${id % 2}", -3).unwrap(), "t_-1");
        assert_eq!(eval_int("t_${id % -2}", 3).unwrap(), "t_1");
    }

    #[test]
    fn arithmetic_precedence_and_unary_minus() {
        assert_eq!(eval_int("${(id + 1) * 2 - 10 / 3}", 4).unwrap(), "7");
        assert_eq!(eval_int("${-id % 3}", 4).unwrap(), "-1");
        assert_eq!(eval_int("${id / 2}", 7).unwrap(), "3");
        assert_eq!(eval_int("${id / 2}", -7).unwrap(), "-3");
    }

    #[test]
    fn string_concatenation_and_string_values() {
        let expr = InlineExpr::parse("ds_${'x' + id % 2 + \"y\"}").unwrap();
        assert_eq!(expr.evaluate_with(Value::Int(3)).unwrap(), "ds_x1y");
        let expr = InlineExpr::parse("t_${region}").unwrap();
        assert_eq!(expr.evaluate_with(Value::Str("eu")).unwrap(), "t_eu");
        let expr = InlineExpr::parse("${1 + '_' + region}").unwrap();
        assert_eq!(expr.evaluate_with(Value::Str("eu")).unwrap(), "1_eu");
    }

    #[test]
    fn several_groups_and_variables() {
        let expr = InlineExpr::parse("ds_${a % 2}.t_${b % 4}_${a}").unwrap();
        assert_eq!(expr.variables().collect::<Vec<_>>(), ["a", "b"]);
        let lookup = |name: &str| match name {
            "a" => Some(Value::Int(5)),
            "b" => Some(Value::Int(6)),
            _ => None,
        };
        assert_eq!(expr.evaluate(&lookup).unwrap(), "ds_1.t_2_5");
        let expr = InlineExpr::parse("${c}").unwrap();
        assert_eq!(
            expr.evaluate(&lookup).unwrap_err().to_string(),
            "no value for variable 'c'"
        );
    }

    #[test]
    fn evaluation_errors_are_errors_not_panics() {
        assert_eq!(
            eval_int("${id % 0}", 1).unwrap_err(),
            InlineError::DivisionByZero { op: '%' }
        );
        assert_eq!(
            eval_int("${id / 0}", 1).unwrap_err(),
            InlineError::DivisionByZero { op: '/' }
        );
        assert_eq!(
            eval_int("${id * 2}", i64::MAX).unwrap_err(),
            InlineError::Overflow { op: '*' }
        );
        assert_eq!(
            eval_int("${id % -1}", i64::MIN).unwrap_err(),
            InlineError::Overflow { op: '%' }
        );
        assert_eq!(
            eval_int("${-id}", i64::MIN).unwrap_err(),
            InlineError::Overflow { op: '-' }
        );
        let expr = InlineExpr::parse("${id % 2}").unwrap();
        assert_eq!(
            expr.evaluate_with(Value::Str("seven"))
                .unwrap_err()
                .to_string(),
            "operator '%' needs integer operands, got string and integer"
        );
    }

    #[test]
    fn ranges_are_rejected_in_sharding_expressions() {
        assert_eq!(
            InlineExpr::parse("t_${0..1}").unwrap_err(),
            InlineError::RangeInExpression { column: 3 }
        );
        assert!(matches!(
            InlineExpr::parse("t_${[0, 1]}"),
            Err(InlineError::RangeInExpression { column: 3 })
        ));
    }

    #[test]
    fn constant_expressions_need_no_variables() {
        let expr = InlineExpr::parse("t_order").unwrap();
        assert_eq!(expr.variables().count(), 0);
        assert_eq!(expr.evaluate(&|_| None).unwrap(), "t_order");
        assert_eq!(expr.to_string(), "t_order");
    }

    proptest::proptest! {
        /// The results kept per remainder are what evaluating the expression gives, for any
        /// value, and errors still come from evaluating it.
        #[test]
        fn kept_results_are_the_evaluated_ones(
            modulus in 1i64..40,
            value in proptest::prelude::any::<i64>(),
            small in -100i64..100,
        ) {
            let expr = InlineExpr::parse(&format!("t_${{order_id % {modulus}}}_x")).unwrap();
            proptest::prop_assert!(expr.by_remainder.is_some());
            let evaluated = |value: Value<'_>| {
                let mut out = String::new();
                expr.evaluate_segments(&|_| Some(value), &mut out).map(|()| out)
            };
            for v in [value, small, i64::MIN, i64::MAX] {
                proptest::prop_assert_eq!(expr.evaluate(&|_| Some(Value::Int(v))), evaluated(Value::Int(v)));
            }
            let text = small.to_string();
            proptest::prop_assert_eq!(
                expr.evaluate(&|_| Some(Value::Str(&text))),
                evaluated(Value::Str(&text))
            );
            proptest::prop_assert!(expr.evaluate(&|_| None).is_err());
        }
    }

    #[test]
    fn only_one_remainder_of_a_small_modulus_is_kept() {
        for (text, kept) in [
            ("ds_${user_id % 2}", true),
            ("${id % 1024}", true),
            ("${id % 1025}", false),
            ("${id % -2}", false),
            ("${id % 2 + 1}", false),
            ("${a % 2}_${b % 2}", false),
            ("${id}", false),
        ] {
            assert_eq!(
                InlineExpr::parse(text).unwrap().by_remainder.is_some(),
                kept,
                "{text}"
            );
        }
    }
}
