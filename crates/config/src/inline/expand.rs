//! Expansion of data node expressions (`ds_${0..1}.t_order_${0..1}`) into every name they denote.

use std::fmt::Write as _;

use super::error::{InlineError, column};
use super::expr::Literal;
use super::parser::{Group, Segment, parse_template, split_top_level};

/// The most names one expression may expand to. Generous for real sharding layouts, and keeps a
/// typo like `${0..99999999}` from exhausting memory at load time.
pub const MAX_EXPANSION: usize = 100_000;

/// Expands every range and list, returning the cartesian product in order (the leftmost group
/// varies slowest), for each comma-separated item in turn.
///
/// `ds_${0..1}.t_order_${0..1}` gives `ds_0.t_order_0, ds_0.t_order_1, ds_1.t_order_0,
/// ds_1.t_order_1`, the order ShardingSphere lists data nodes in. Empty items (a trailing comma)
/// are skipped. Groups may also hold constant expressions (`${1 + 1}`) but no variables.
pub fn expand(text: &str) -> Result<Vec<String>, InlineError> {
    let mut names = Vec::new();
    for (start, end) in split_top_level(text)? {
        let item = &text[start..end];
        let trimmed_start = start + (item.len() - item.trim_start().len());
        let trimmed_end = start + item.trim_end().len();
        if trimmed_start >= trimmed_end {
            continue;
        }
        let segments = parse_template(text, trimmed_start, trimmed_end)?;
        let choices = segments
            .iter()
            .map(|segment| choices(text, segment))
            .collect::<Result<Vec<_>, _>>()?;
        let count = choices
            .iter()
            .try_fold(1usize, |acc, c| acc.checked_mul(c.len()))
            .filter(|count| names.len().saturating_add(*count) <= MAX_EXPANSION)
            .ok_or(InlineError::TooManyNames {
                limit: MAX_EXPANSION,
            })?;
        names.reserve(count);
        product(&choices, &mut String::new(), &mut names);
    }
    Ok(names)
}

/// The values one segment can take.
fn choices(text: &str, segment: &Segment) -> Result<Vec<String>, InlineError> {
    let (group, at) = match segment {
        Segment::Literal(literal) => return Ok(vec![literal.clone()]),
        Segment::Group { group, at } => (group, *at),
    };
    Ok(match group {
        Group::Range { first, last } => {
            let len = first.abs_diff(*last);
            if len >= MAX_EXPANSION as u64 {
                return Err(InlineError::TooManyNames {
                    limit: MAX_EXPANSION,
                });
            }
            if first <= last {
                (*first..=*last).map(|v| v.to_string()).collect()
            } else {
                (*last..=*first).rev().map(|v| v.to_string()).collect()
            }
        }
        Group::List(items) => items.iter().map(literal_text).collect(),
        Group::Expr(expr) => {
            let mut names = Vec::new();
            expr.collect_variables(&mut names);
            if let Some(name) = names.first() {
                return Err(InlineError::VariableInDataNodes {
                    name: (*name).to_owned(),
                    column: column(text, at),
                });
            }
            match expr.constant() {
                Some(value) => vec![literal_text(&value?)],
                None => Vec::new(),
            }
        }
    })
}

fn literal_text(literal: &Literal) -> String {
    match literal {
        Literal::Int(v) => v.to_string(),
        Literal::Str(s) => s.clone(),
    }
}

/// Appends `prefix` followed by every combination of `choices` to `out`.
fn product(choices: &[Vec<String>], prefix: &mut String, out: &mut Vec<String>) {
    let Some((first, rest)) = choices.split_first() else {
        out.push(prefix.clone());
        return;
    };
    let len = prefix.len();
    for choice in first {
        let _ = write!(prefix, "{choice}");
        product(rest, prefix, out);
        prefix.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cartesian_product_in_shardingsphere_order() {
        assert_eq!(
            expand("ds_${0..1}.t_order_${0..1}").unwrap(),
            [
                "ds_0.t_order_0",
                "ds_0.t_order_1",
                "ds_1.t_order_0",
                "ds_1.t_order_1"
            ]
        );
    }

    #[test]
    fn lists_alternative_syntax_and_commas() {
        assert_eq!(
            expand("ds_$->{['a', 'b']}.t_${[0, 1]}").unwrap(),
            ["ds_a.t_0", "ds_a.t_1", "ds_b.t_0", "ds_b.t_1"]
        );
        assert_eq!(
            expand(" ds_0.t_a, ds_1.t_${2..3} ,").unwrap(),
            ["ds_0.t_a", "ds_1.t_2", "ds_1.t_3"]
        );
        assert_eq!(expand("t_${3..1}").unwrap(), ["t_3", "t_2", "t_1"]);
        assert_eq!(expand("t_${0..<2}").unwrap(), ["t_0", "t_1"]);
        assert_eq!(expand("t_${1 + 1}").unwrap(), ["t_2"]);
        assert_eq!(expand("plain").unwrap(), ["plain"]);
    }

    #[test]
    fn rejects_variables_and_huge_expansions() {
        assert_eq!(
            expand("ds_0.t_${id % 2}").unwrap_err().to_string(),
            "variable 'id' cannot be used in a data node expression (column 8)"
        );
        assert_eq!(
            expand("t_${0..9999999999}").unwrap_err(),
            InlineError::TooManyNames {
                limit: MAX_EXPANSION
            }
        );
        assert_eq!(
            expand("t_${0..999}_${0..999}").unwrap_err(),
            InlineError::TooManyNames {
                limit: MAX_EXPANSION
            }
        );
        assert_eq!(
            expand("t_${i64_min}").unwrap_err().to_string(),
            "variable 'i64_min' cannot be used in a data node expression (column 3)"
        );
    }
}
