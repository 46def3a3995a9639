/// Why a generator could not be built or could not hand out keys.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyGenError {
    /// The configured type is not one Keyshard knows.
    #[error("unknown key generator type '{name}' (supported: {supported})")]
    UnknownType {
        /// The type as configured.
        name: String,
        /// The supported type names, comma-separated.
        supported: String,
    },
    /// A property the generator type does not take.
    #[error("unknown property '{name}' for {generator} (allowed: {allowed})")]
    UnknownProperty {
        /// The generator type.
        generator: &'static str,
        /// The property as configured.
        name: String,
        /// The properties the type takes, comma-separated.
        allowed: String,
    },
    /// A property whose value does not parse or is out of range.
    #[error("property '{name}' = '{value}' is invalid: expected {expected}")]
    InvalidProperty {
        /// The property name.
        name: String,
        /// The value as configured.
        value: String,
        /// What the property accepts.
        expected: String,
    },
    /// The system clock went back further than the configured tolerance.
    #[error(
        "Clock is moving backwards, last time is {last} milliseconds, current time is {now} milliseconds"
    )]
    ClockMovedBackwards {
        /// Milliseconds since the Unix epoch of the last key handed out.
        last: i64,
        /// Milliseconds since the Unix epoch read now.
        now: i64,
    },
    /// A key that cannot be a SNOWFLAKE key (negative).
    #[error("{0} is not a SNOWFLAKE key: keys are positive 63-bit integers")]
    NotASnowflake(i64),
}
