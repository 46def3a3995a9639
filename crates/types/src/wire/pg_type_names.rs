//! The PostgreSQL built-in types whose values travel as [`Wire`](crate::Wire), by name: what
//! a cast to one is written as, and which type a written cast names.

use std::borrow::Cow;

/// The built-in types whose values travel as [`Wire`](crate::Wire), by the name a cast to
/// them is written with, and their OIDs.
pub(super) const BUILTIN_TYPES: [(&str, u32); 43] = [
    ("date", 1082),
    ("time", 1083),
    ("timetz", 1266),
    ("timestamp", 1114),
    ("timestamptz", 1184),
    ("interval", 1186),
    ("uuid", 2950),
    ("json", 114),
    ("jsonb", 3802),
    ("jsonpath", 4072),
    ("xml", 142),
    ("inet", 869),
    ("cidr", 650),
    ("macaddr", 829),
    ("macaddr8", 774),
    ("money", 790),
    ("bit", 1560),
    ("varbit", 1562),
    ("\"char\"", 18),
    ("regclass", 2205),
    ("regtype", 2206),
    ("regproc", 24),
    ("regprocedure", 2202),
    ("regoper", 2203),
    ("regoperator", 2204),
    ("regnamespace", 4089),
    ("regrole", 4096),
    ("regconfig", 3734),
    ("tsvector", 3614),
    ("tsquery", 3615),
    ("point", 600),
    ("lseg", 601),
    ("path", 602),
    ("box", 603),
    ("polygon", 604),
    ("line", 628),
    ("circle", 718),
    ("int4range", 3904),
    ("int8range", 3926),
    ("numrange", 3906),
    ("tsrange", 3908),
    ("tstzrange", 3910),
    ("daterange", 3912),
];

/// PostgreSQL's name and OID of the built-in type `type_name` names (as a cast writes it:
/// `timestamp with time zone`, `TIMESTAMPTZ`, `interval(6)`), for the types whose values travel
/// as [`Wire`](crate::Wire); `None` for any other. The name is the one PostgreSQL gives a
/// cast's column.
pub fn pg_builtin_type(type_name: &str) -> Option<(&'static str, u32)> {
    // Without its modifiers: `timestamp(3) with time zone` is `timestamp with time zone`.
    let mut words = String::with_capacity(type_name.len());
    let mut depth = 0usize;
    for c in type_name.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => words.push(c.to_ascii_lowercase()),
            _ => {}
        }
    }
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    let base = match words.as_str() {
        "time without time zone" => "time",
        "time with time zone" => "timetz",
        "timestamp without time zone" => "timestamp",
        "timestamp with time zone" => "timestamptz",
        "bit varying" => "varbit",
        other => other,
    };
    BUILTIN_TYPES
        .iter()
        .find(|(name, _)| *name == base)
        .map(|(name, oid)| (name.trim_matches('"'), *oid))
}

/// How a cast to built-in type `oid` (one whose values travel as [`Wire`](crate::Wire), or an
/// array of one) is written: `timestamptz`, `"char"`, `date[]`; `None` for the types Keyshard
/// reads and for types it does not know.
pub fn pg_cast_name(oid: u32) -> Option<Cow<'static, str>> {
    let name = |oid: u32| match oid {
        // `bit` alone is bit(1), to which a longer string is cut: bit varying, which any
        // bit(n) column takes and compares with, keeps it whole.
        1560 => Some("varbit"),
        700 => Some("float4"),
        701 => Some("float8"),
        _ => BUILTIN_TYPES
            .iter()
            .find(|(_, known)| *known == oid)
            .map(|(name, _)| *name),
    };
    match crate::pg_array::element_oid_of(oid) {
        Some(element) => name(element).map(|name| Cow::Owned(format!("{name}[]"))),
        None => name(oid).map(Cow::Borrowed),
    }
}
