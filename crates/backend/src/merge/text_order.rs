//! How a column's text orders and groups under its collation, as far as Keyshard reproduces
//! it: what the merge's comparisons and its plan's checks of text values both use.

use std::cmp::Ordering;

use keyshard_types::Dialect;

use crate::outcome::Column;

/// How a column's text values order and group, as its database compares them, as far as
/// Keyshard compares them exactly: by their bytes, or by MySQL's case-insensitive collations
/// for the texts where those reduce to folding ASCII letters ([`TextOrder::exact_for`]); a
/// merge refuses any other text rather than order or group it as no database would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextOrder {
    /// A column whose collation is not known (a MySQL expression's, one that could not be
    /// read, a PostgreSQL nondeterministic one): compared only where every collation agrees,
    /// on lower-case letters and digits (glibc's pass over spaces).
    Unknown,
    /// A PostgreSQL database whose collation is linguistic (`en_US.UTF-8`, ICU): compared
    /// only on lower-case letters and digits, where every such collation agrees with bytes
    /// (they pass over spaces and punctuation, and weigh case after the letters).
    Linguistic,
    /// By bytes: PostgreSQL's C collation, SQLite's BINARY, MySQL's `binary` and NO PAD
    /// `_bin` collations.
    Bytes,
    /// By bytes, trailing spaces aside: MySQL's PAD SPACE `_bin` collations.
    PaddedBytes,
    /// ASCII letters folded to upper case, trailing spaces aside: `utf8mb4_general_ci` (and
    /// `utf8mb3_general_ci`), whose weight for every ASCII character is its upper case, when
    /// `general`; any other MySQL collation otherwise (`unicode_ci`, `0900_ai_ci`,
    /// `uca1400_ai_ci` …), which agree with it on letters, digits and inner spaces only.
    Folded {
        /// The collation is a `general_ci` one.
        general: bool,
    },
}

impl TextOrder {
    /// The order of `column`'s text under the frontend's `dialect`: a MySQL shard's column by
    /// its collation; one no MySQL shard described (SQLite's, whose BINARY collation compares
    /// bytes) and PostgreSQL's (its C collation) by bytes.
    pub(crate) fn of(column: Option<&Column>, dialect: Dialect) -> Self {
        let Some(column) = column else {
            return Self::Bytes;
        };
        if column.oid.is_some() || dialect == Dialect::Postgres {
            // A PostgreSQL shard's: its own or its database's collation (see `collations`),
            // given to columns no MySQL shard described; a nondeterministic one's equality is
            // not the bytes'.
            return match (&column.mysql, column.collation.as_deref()) {
                (None, Some(name)) if name.starts_with("nd:") => Self::Unknown,
                (None, Some(_)) => Self::Linguistic,
                _ => Self::Bytes,
            };
        }
        match (column.mysql.as_deref(), column.collation.as_deref()) {
            // SQLite's: BINARY.
            (None, _) => Self::Bytes,
            (Some(described), _) if described.collation == 63 => Self::Bytes,
            (Some(_), Some(collation)) => Self::named(collation),
            (Some(_), None) => Self::Unknown,
        }
    }

    /// The order of a MySQL collation, by its name.
    fn named(collation: &str) -> Self {
        // MariaDB's `_nopad_` collations and MySQL 8's `0900` ones do not ignore trailing
        // spaces.
        let no_pad = collation.contains("nopad") || collation.contains("_0900_");
        if collation == "binary" || collation.ends_with("_bin") {
            return if no_pad {
                Self::Bytes
            } else {
                Self::PaddedBytes
            };
        }
        if !collation.ends_with("_ci") {
            return Self::Unknown;
        }
        Self::Folded {
            general: collation.ends_with("_general_ci") && !no_pad,
        }
    }

    /// Whether two texts are equal under the collation exactly when [`TextOrder::compare`]
    /// finds them so, whatever they hold: bytes, and PostgreSQL's deterministic collations.
    pub(super) fn equal_as_bytes(self) -> bool {
        matches!(self, Self::Bytes | Self::PaddedBytes | Self::Linguistic)
    }

    /// Whether [`TextOrder::compare`] orders `text` as the collation does.
    pub(crate) fn exact_for(self, text: &str) -> bool {
        let plain = |b: u8| b.is_ascii_alphanumeric() || b == b' ';
        match self {
            Self::Unknown | Self::Linguistic => text
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
            Self::Bytes | Self::PaddedBytes => true,
            Self::Folded { general: true } => text.is_ascii(),
            Self::Folded { general: false } => !text.ends_with(' ') && text.bytes().all(plain),
        }
    }

    pub(crate) fn compare(self, a: &str, b: &str) -> Ordering {
        fn padded(s: &str) -> &[u8] {
            s.trim_end_matches(' ').as_bytes()
        }
        match self {
            Self::Bytes | Self::Unknown | Self::Linguistic => a.as_bytes().cmp(b.as_bytes()),
            Self::PaddedBytes => padded(a).cmp(padded(b)),
            Self::Folded { .. } => {
                let fold = |s| padded(s).iter().map(u8::to_ascii_uppercase);
                fold(a).cmp(fold(b))
            }
        }
    }
}
