//! Inline expressions: the Groovy subset ShardingSphere configurations use.
//!
//! Two uses share one parser: [`expand`] turns a data node expression such as
//! `ds_${0..1}.t_order_${0..1}` into every name it denotes, and [`InlineExpr`] is a sharding
//! expression such as `t_order_${order_id % 2}`, parsed once at load and evaluated per row.
//! Both `${…}` and ShardingSphere's alternative `$->{…}` open a group.

mod error;
mod eval;
mod expand;
mod expr;
mod lexer;
mod parser;

pub use error::InlineError;
pub use eval::InlineExpr;
pub use expand::{MAX_EXPANSION, expand};
pub use expr::Value;

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn parse_and_expand_never_panic(text in "\\PC{0,40}") {
            let _ = InlineExpr::parse(&text);
            let _ = expand(&text);
        }

        #[test]
        fn expression_shaped_input_never_panics(
            text in "[a-z_$>{}\\[\\]()'\",.+*/% 0-9-]{0,40}",
            value in any::<i64>(),
        ) {
            let _ = expand(&text);
            if let Ok(expr) = InlineExpr::parse(&text) {
                let _ = expr.evaluate_with(Value::Int(value));
                let _ = expr.evaluate_with(Value::Str("x"));
            }
        }
    }
}
