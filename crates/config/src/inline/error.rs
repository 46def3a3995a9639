/// Why an inline expression could not be parsed, expanded or evaluated.
///
/// Columns are 1-based character positions in the whole expression text, so a message can be
/// matched against the YAML value by eye.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InlineError {
    /// A `${` or `$->{` without its closing `}`.
    #[error("unclosed '${{' starting at column {column}")]
    UnclosedGroup {
        /// Where the group starts.
        column: usize,
    },
    /// A `${}` with nothing inside.
    #[error("empty '${{}}' at column {column}")]
    EmptyGroup {
        /// Where the group starts.
        column: usize,
    },
    /// A string literal without its closing quote.
    #[error("unterminated string literal starting at column {column}")]
    UnterminatedString {
        /// Where the literal starts.
        column: usize,
    },
    /// An integer literal that does not fit a signed 64-bit integer.
    #[error("integer literal out of range at column {column}")]
    IntegerOutOfRange {
        /// Where the literal starts.
        column: usize,
    },
    /// A token that cannot appear where it was found.
    #[error("expected {expected} at column {column}, found {found}")]
    Unexpected {
        /// What was found (a token, or `end of expression`).
        found: String,
        /// What the grammar allows there.
        expected: &'static str,
        /// Where it was found.
        column: usize,
    },
    /// Groovy syntax outside the supported subset (method calls, `?:`, closures …).
    ///
    /// Rejected at load time rather than guessed at, so a configuration never routes
    /// differently from ShardingSphere without saying so.
    #[error("unsupported syntax at column {column}: {what}")]
    Unsupported {
        /// What was found and why it is not supported.
        what: String,
        /// Where it was found.
        column: usize,
    },
    /// Parentheses nested deeper than the parser allows.
    #[error("expression nested too deeply at column {column}")]
    TooDeep {
        /// Where the limit was reached.
        column: usize,
    },
    /// A range or list in a sharding expression, which must produce exactly one value.
    #[error(
        "ranges and lists only belong in data node expressions, not in a sharding expression (column {column})"
    )]
    RangeInExpression {
        /// Where the range or list starts.
        column: usize,
    },
    /// A variable in a data node expression, which has nothing to bind it to.
    #[error("variable '{name}' cannot be used in a data node expression (column {column})")]
    VariableInDataNodes {
        /// The variable.
        name: String,
        /// Where it is used.
        column: usize,
    },
    /// A range whose bounds are not integers.
    #[error("range bounds must be integers (column {column})")]
    NonIntegerRange {
        /// Where the range starts.
        column: usize,
    },
    /// An expansion that would produce more names than [`MAX_EXPANSION`](crate::inline::MAX_EXPANSION).
    #[error("expression expands to more than {limit} names")]
    TooManyNames {
        /// The limit.
        limit: usize,
    },
    /// Evaluation needed a variable the caller has no value for.
    #[error("no value for variable '{name}'")]
    UnboundVariable {
        /// The variable.
        name: String,
    },
    /// An arithmetic operator applied to a string.
    #[error("operator '{op}' needs integer operands, got {left} and {right}")]
    TypeMismatch {
        /// The operator.
        op: char,
        /// The left operand's type (`integer` or `string`); `none` for unary minus.
        left: &'static str,
        /// The right operand's type.
        right: &'static str,
    },
    /// Integer arithmetic that overflowed 64 bits.
    #[error("integer overflow evaluating '{op}'")]
    Overflow {
        /// The operator.
        op: char,
    },
    /// `/` or `%` by zero.
    #[error("division by zero evaluating '{op}'")]
    DivisionByZero {
        /// The operator.
        op: char,
    },
}

/// The 1-based character column of byte offset `at` in `text`.
pub(crate) fn column(text: &str, at: usize) -> usize {
    text.get(..at).map_or(at, |prefix| prefix.chars().count()) + 1
}
