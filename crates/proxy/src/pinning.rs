//! Statements that leave state on the shard connection they run on which no setting makes
//! again elsewhere — temporary tables, user and advisory locks, LOCK TABLES, cursors held
//! past their transaction, `set_config` — and the statements that let it go. A session
//! that holds any of it keeps the shard connections it uses (pinned) until it holds none.
//!
//! What is let go must be known for certain, or the session stays pinned: a lock is counted
//! by its key only when the key is written as a literal (`GET_LOCK('k', 0)`,
//! `pg_advisory_lock(42)`), since anything else may name another lock at release; a lock taken
//! any other way, or several in one statement, is held until the session resets.

use std::collections::BTreeMap;

use crate::calls::{called_names, says_its_effect};
use crate::routines::Set as Names;
use crate::sql::Sql;

use keyshard_router::{Leading, SequenceUse};
use keyshard_types::Dialect;

/// State a session holds on its shard connections.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Held {
    /// A temporary table, by lower-case name.
    TemporaryTable(String),
    /// A MySQL `GET_LOCK` or PostgreSQL session-level advisory lock, by its literal key
    /// (PostgreSQL's shared ones apart); counted, as both databases stack them.
    Lock(String),
    /// MySQL's `LOCK TABLES`.
    TableLocks,
    /// A cursor declared `WITH HOLD`.
    Cursors,
    /// Values a sequence handed out (`nextval`, `setval`), which `currval`/`lastval` read back.
    Sequences,
    /// A function that changes the connection's session (`set_config`, and whatever else it
    /// set that the proxy does not follow): only a reset lets it go.
    Session,
}

impl Held {
    /// What it is, and which one.
    pub(crate) fn describe(&self) -> (&'static str, String) {
        match self {
            Held::TemporaryTable(name) => ("temporary table", name.clone()),
            Held::Lock(key) => ("lock", key.clone()),
            Held::TableLocks => ("table locks", String::new()),
            Held::Cursors => ("cursors with hold", String::new()),
            Held::Sequences => ("sequence values", String::new()),
            Held::Session => ("session state", String::new()),
        }
    }
}

/// What a statement does to the state a session holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    Holds(Held),
    /// Lets go of every `Held` for which the predicate answers true.
    Releases(Released),
    /// Reads what the session holds (`lastval()` its `nextval`s): refused when it holds none,
    /// as a shared connection would answer with another session's.
    Reads(Held),
    /// MariaDB's sequences, by name: a connection answers `PREVIOUS VALUE FOR s` with the
    /// value it last took of `s`, whoever took it (a sequence default in another session's
    /// INSERT, on a connection shared then), and nothing like PostgreSQL's `DISCARD SEQUENCES`
    /// clears that. So a session reads only the sequences it advanced itself, on the
    /// connections it has kept since.
    Sequences(SequenceUse),
}

/// What a statement lets go of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Released {
    /// These temporary tables (`DROP [TEMPORARY] TABLE`), where they are temporary.
    Tables(Vec<String>),
    /// Every temporary table (`DISCARD TEMP`).
    AllTables,
    /// One lock of this key.
    Lock(String),
    /// Every lock.
    Locks,
    TableLocks,
    Cursors,
    Sequences,
}

/// Lock functions, and the namespace of the keys they take.
const LOCKING: &[(&str, &str)] = &[
    ("get_lock", "user"),
    ("pg_advisory_lock", "advisory"),
    ("pg_try_advisory_lock", "advisory"),
    ("pg_advisory_lock_shared", "shared"),
    ("pg_try_advisory_lock_shared", "shared"),
];

/// Unlock functions, and the namespace of the keys they take.
const UNLOCKING: &[(&str, &str)] = &[
    ("release_lock", "user"),
    ("pg_advisory_unlock", "advisory"),
    ("pg_advisory_unlock_shared", "shared"),
];

/// Functions whose call lets go of every lock.
const UNLOCKING_ALL: &[&str] = &["release_all_locks", "pg_advisory_unlock_all"];

/// What `sql` does to the state a session holds, if anything. Most statements are INSERTs,
/// UPDATEs and DELETEs, answered by their first word.
/// `routines`: the lower-case names of the functions and procedures the shards define (see
/// `routines`), whose calls may change the session unseen.
pub(crate) fn effect(sql: Sql<'_>, dialect: Dialect, routines: &Names) -> Option<Effect> {
    let (leading, sql) = (sql.leading, sql.text);
    // A procedure or an anonymous block may do anything to the session.
    if matches!(leading, Leading::Call | Leading::Do) {
        return Some(Effect::Holds(Held::Session));
    }
    let statement = says_its_effect(leading);
    // Any other statement holds or releases state only by a function call: one with no `(`
    // (a point SELECT, say) is answered without more, and so is one that mentions neither a
    // routine of the shards nor `lock`, `set_config` or a sequence function (a write's
    // `lock` or `set_config` is a value, not a call that holds anything).
    let bytes = sql.as_bytes();
    if !statement {
        let sequences = mentions_sequences(bytes);
        // MariaDB's `NEXT VALUE FOR s` calls without parentheses.
        if memchr::memchr(b'(', bytes).is_none() && !sequences {
            return None;
        }
        let dml = leading.writes_rows();
        let mentions = |word: &[u8]| crate::words::find_ignore_ascii_case(bytes, word).next();
        let builtin = !dml && (mentions(b"lock").is_some() || mentions(b"set_config").is_some());
        if !builtin && !sequences && routines.is_empty() {
            return None;
        }
        let lower = sql.to_ascii_lowercase();
        if calls_any(&lower, leading, routines) {
            return Some(Effect::Holds(Held::Session));
        }
        if sequences {
            let effect = match dialect {
                Dialect::MySql => mariadb_sequence_effect(sql),
                Dialect::Postgres => sequence_effect(&lower),
            };
            if effect.is_some() {
                return effect;
            }
        }
        return match builtin {
            true => function_effect(&lower),
            false => None,
        };
    }
    let lower = sql.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
        .collect();
    match words.as_slice() {
        ["create", rest @ ..] => {
            let rest = match rest {
                ["global" | "local", rest @ ..] => rest,
                rest => rest,
            };
            if let ["temporary" | "temp", "table", rest @ ..] = rest {
                let rest = match rest {
                    ["if", "not", "exists", rest @ ..] => rest,
                    rest => rest,
                };
                let name = rest.first().map(|n| table_name(n))?;
                return Some(Effect::Holds(Held::TemporaryTable(name)));
            }
            // A temporary view, sequence… : held until the session resets.
            if let ["temporary" | "temp", ..] = rest {
                return Some(Effect::Holds(Held::Session));
            }
            return None;
        }
        ["drop", rest @ ..] => {
            let rest = match rest {
                ["temporary", rest @ ..] => rest,
                rest => rest,
            };
            let ["table", rest @ ..] = rest else {
                return None;
            };
            let rest = match rest {
                ["if", "exists", rest @ ..] => rest,
                rest => rest,
            };
            let names = rest
                .join(" ")
                .split(',')
                .map(|n| n.split_whitespace().next().unwrap_or_default())
                .filter(|n| !n.is_empty() && *n != "cascade" && *n != "restrict")
                .map(table_name)
                .collect();
            return Some(Effect::Releases(Released::Tables(names)));
        }
        ["discard", "temp" | "temporary"] => return Some(Effect::Releases(Released::AllTables)),
        ["discard", "sequences"] => return Some(Effect::Releases(Released::Sequences)),
        // PostgreSQL's `LOCK` ends with its transaction.
        ["lock", "tables" | "table", ..] if dialect == Dialect::MySql => {
            return Some(Effect::Holds(Held::TableLocks));
        }
        ["unlock", "tables" | "table"] => return Some(Effect::Releases(Released::TableLocks)),
        ["declare", ..] if lower.contains("with hold") => {
            return Some(Effect::Holds(Held::Cursors));
        }
        ["close", "all"] => return Some(Effect::Releases(Released::Cursors)),
        _ => {}
    }
    function_effect(&lower)
}

/// `SELECT lastval()` and nothing else (PDO's `lastInsertId()`), which the session answers with
/// the key it last generated when it took no sequence value since.
pub(crate) fn is_bare_lastval(sql: &str) -> bool {
    let compact: String = sql
        .trim()
        .trim_end_matches(';')
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        compact.as_str(),
        "selectlastval()" | "selectpg_catalog.lastval()"
    )
}

/// Whether `sql` may use a sequence's session functions: `nextval`, `setval`, `currval`,
/// `lastval`, `NEXT`/`PREVIOUS VALUE FOR`. One pass over the text, for every INSERT's sake.
fn mentions_sequences(sql: &[u8]) -> bool {
    let ends_with = |end: usize, word: &[u8]| {
        end >= word.len() && sql[end - word.len()..end].eq_ignore_ascii_case(word)
    };
    // `VALUE` as a word (not `VALUES`), which blanks or comments may separate from `FOR`.
    let value_word = |at: usize| {
        sql.len() >= at + 5
            && sql[at..at + 5].eq_ignore_ascii_case(b"value")
            && sql
                .get(at + 5)
                .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$'))
    };
    crate::words::find_ignore_ascii_case(sql, b"val").any(|at| {
        ["next", "curr", "last", "set"]
            .iter()
            .any(|p| ends_with(at, p.as_bytes()))
            || value_word(at)
    })
}

/// What a statement's use of sequences does: `nextval`/`setval` (MariaDB's `NEXT VALUE FOR`)
/// leave values on the connection, which `currval`/`lastval` (`PREVIOUS VALUE FOR`) read.
/// An INSERT into a table whose key a sequence defaults to leaves one unseen: its `lastval`
/// is refused like any other outside a session holding sequence values.
fn sequence_effect(lower: &str) -> Option<Effect> {
    let called = |f: &str| !calls(lower, f).is_empty();
    if called("nextval") || called("setval") || lower.contains("next value for") {
        return Some(Effect::Holds(Held::Sequences));
    }
    if called("currval") || called("lastval") || lower.contains("previous value for") {
        return Some(Effect::Reads(Held::Sequences));
    }
    None
}

/// What a MariaDB statement's use of sequences does (see [`Effect::Sequences`]).
fn mariadb_sequence_effect(sql: &str) -> Option<Effect> {
    keyshard_router::mariadb_sequences(sql).map(Effect::Sequences)
}

/// What the function calls in `lower` (a statement in lower case) do to the state it holds.
fn function_effect(lower: &str) -> Option<Effect> {
    if lower.contains("set_config") && !calls(lower, "set_config").is_empty() {
        return Some(Effect::Holds(Held::Session));
    }
    if UNLOCKING_ALL.iter().any(|f| !calls(lower, f).is_empty()) {
        return Some(Effect::Releases(Released::Locks));
    }
    let keyed = |functions: &[(&str, &str)]| -> Vec<Option<String>> {
        functions
            .iter()
            .flat_map(|(f, space)| {
                calls(lower, f)
                    .into_iter()
                    .map(move |args| literal_key(space, args))
            })
            .collect()
    };
    let locks = keyed(LOCKING);
    let unlocks = keyed(UNLOCKING);
    match (locks.as_slice(), unlocks.as_slice()) {
        ([], []) => None,
        ([Some(key)], []) => Some(Effect::Holds(Held::Lock(key.clone()))),
        // A key not written as a literal, or several locks at once.
        (locks, _) if !locks.is_empty() => Some(Effect::Holds(Held::Session)),
        ([], [Some(key)]) => Some(Effect::Releases(Released::Lock(key.clone()))),
        // An unlock whose key is not certain lets nothing go.
        _ => None,
    }
}

/// A lock's key in `space` when its arguments (`'name', 0` for GET_LOCK, `42` or `1, 2` for
/// advisory locks) are literals: the name (GET_LOCK's timeout left out), lower case as both
/// databases compare user lock names.
fn literal_key(space: &str, args: &str) -> Option<String> {
    let args = crate::words::split_top_level(args);
    let key: Vec<&str> = match space {
        "user" => args.into_iter().take(1).collect(),
        _ => args,
    };
    let literal = |arg: &str| {
        let arg = arg.trim();
        let quoted = arg.len() >= 2
            && arg.starts_with('\'')
            && arg.ends_with('\'')
            && !arg[1..arg.len() - 1].contains(['\'', '\\']);
        let number = !arg.is_empty()
            && arg
                .trim_start_matches('-')
                .bytes()
                .all(|b| b.is_ascii_digit());
        (quoted || number).then(|| arg.to_owned())
    };
    let parts = key.into_iter().map(literal).collect::<Option<Vec<_>>>()?;
    Some(format!("{space}:{}", parts.join(",")))
}

/// Whether `lower`, led by `leading`, calls any of `routines`.
fn calls_any(lower: &str, leading: Leading, routines: &Names) -> bool {
    !routines.is_empty() && called_names(lower, leading).any(|name| routines.contains(name))
}

/// The argument lists of each call of function `name` in `lower`: the name, not part of a
/// longer one, then `(`, up to its matching `)` outside quotes.
fn calls<'a>(lower: &'a str, name: &str) -> Vec<&'a str> {
    lower
        .match_indices(name)
        .filter_map(|(at, _)| {
            let before = lower[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                return None;
            }
            let after = lower[at + name.len()..].trim_start();
            let args = after.strip_prefix('(')?;
            let (mut depth, mut quote) = (0usize, false);
            for (i, c) in args.char_indices() {
                match c {
                    '\'' => quote = !quote,
                    '(' if !quote => depth += 1,
                    ')' if !quote && depth == 0 => return Some(&args[..i]),
                    ')' if !quote => depth -= 1,
                    _ => {}
                }
            }
            None
        })
        .collect()
}

/// A table name as written, without quotes, schema or the column list glued to it.
fn table_name(written: &str) -> String {
    let name = written.split('(').next().unwrap_or_default();
    let name = name.rsplit('.').next().unwrap_or_default();
    name.trim_matches(['`', '"']).to_owned()
}

/// Records that the session now holds `held`.
pub(crate) fn hold(holding: &mut BTreeMap<Held, usize>, held: Held) {
    *holding.entry(held).or_default() += 1;
}

/// Applies `released` to what the session holds.
pub(crate) fn release(holding: &mut BTreeMap<Held, usize>, released: &Released) {
    if let Released::Lock(key) = released {
        let lock = Held::Lock(key.clone());
        if let Some(count) = holding.get_mut(&lock) {
            *count -= 1;
            if *count == 0 {
                holding.remove(&lock);
            }
        }
        return;
    }
    holding.retain(|h, _| match (released, h) {
        (Released::Tables(names), Held::TemporaryTable(name)) => !names.contains(name),
        (Released::AllTables, Held::TemporaryTable(_)) => false,
        (Released::Locks, Held::Lock(_)) => false,
        (Released::TableLocks, Held::TableLocks) => false,
        (Released::Cursors, Held::Cursors) => false,
        (Released::Sequences, Held::Sequences) => false,
        _ => true,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(sql: &str) -> Option<Effect> {
        super::effect(
            Sql::new(sql),
            Dialect::MySql,
            &["audit_log".to_owned()].into_iter().collect(),
        )
    }

    fn holds(sql: &str) -> Held {
        match effect(sql) {
            Some(Effect::Holds(held)) => held,
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn releases(sql: &str) -> Released {
        match effect(sql) {
            Some(Effect::Releases(released)) => released,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn what_holds_state_on_a_connection_is_recognised() {
        assert_eq!(
            holds("CREATE TEMPORARY TABLE IF NOT EXISTS `Tmp`(id int)"),
            Held::TemporaryTable("tmp".into())
        );
        assert_eq!(
            holds("create temp table t as select 1"),
            Held::TemporaryTable("t".into())
        );
        assert_eq!(
            holds("SELECT GET_LOCK('K', 0)"),
            Held::Lock("user:'k'".into())
        );
        assert_eq!(
            holds("select pg_advisory_lock (42)"),
            Held::Lock("advisory:42".into())
        );
        assert_eq!(
            holds("SELECT pg_try_advisory_lock_shared(1, -2)"),
            Held::Lock("shared:1,-2".into())
        );
        // A key that is not a literal, or two locks at once: held until a reset.
        assert_eq!(holds("SELECT GET_LOCK(@name, 0)"), Held::Session);
        assert_eq!(
            holds("SELECT pg_advisory_lock(hashtext('x'))"),
            Held::Session
        );
        assert_eq!(
            holds("SELECT GET_LOCK('a', 0), GET_LOCK('b', 0)"),
            Held::Session
        );
        assert_eq!(
            holds("SELECT pg_catalog.set_config('search_path', '', false);"),
            Held::Session
        );
        assert_eq!(holds("LOCK TABLES t_order WRITE"), Held::TableLocks);
        assert_eq!(
            holds("DECLARE c CURSOR WITH HOLD FOR SELECT 1"),
            Held::Cursors
        );
        // The application's own functions and procedures may do anything to the session.
        assert_eq!(holds("SELECT public.Audit_Log ('x')"), Held::Session);
        assert_eq!(
            holds("INSERT INTO t VALUES (audit_log('x'))"),
            Held::Session
        );
        assert_eq!(holds("CALL refresh()"), Held::Session);
        assert_eq!(holds("DO $$ BEGIN PERFORM 1; END $$"), Held::Session);
        for none in [
            "INSERT INTO t VALUES (get_lock('k', 0))",
            "SELECT pg_advisory_xact_lock(1)",
            "SELECT my_get_lock(1)",
            "SELECT 'get_lock' FROM t",
            "CREATE TABLE t (id int)",
            "SELECT RELEASE_LOCK(@name)",
            "SELECT audit_logger(1), COUNT(*) FROM t",
        ] {
            assert_eq!(effect(none), None, "{none}");
        }
        assert_eq!(
            super::effect(
                Sql::new("INSERT INTO t (id) VALUES (NEXTVAL ('s'))"),
                Dialect::Postgres,
                &Names::default()
            ),
            Some(Effect::Holds(Held::Sequences))
        );
        let pg = |sql| super::effect(Sql::new(sql), Dialect::Postgres, &Names::default());
        assert_eq!(
            pg("SELECT setval('s', 10)"),
            Some(Effect::Holds(Held::Sequences))
        );
        for read in ["SELECT lastval()", "SELECT currval('s')"] {
            assert_eq!(pg(read), Some(Effect::Reads(Held::Sequences)), "{read}");
        }
        let mariadb = |advances: &[&str], reads: &[&str]| {
            Some((
                advances.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                reads.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            ))
        };
        let effect = |sql| match effect(sql) {
            Some(Effect::Sequences(used)) => Some((used.advances, used.reads)),
            None => None,
            other => panic!("{sql}: {other:?}"),
        };
        assert_eq!(effect("SELECT NEXT VALUE FOR s"), mariadb(&["s"], &[]));
        assert_eq!(
            effect("INSERT INTO t VALUES (next value for `Db`.`S q`, NEXTVAL( db . s2 ))"),
            mariadb(&["Db.S q", "db.s2"], &[])
        );
        // Blanks and comments between the words, as the server reads them.
        assert_eq!(
            effect("SELECT PREVIOUS /* x */ VALUE\n  FOR s"),
            mariadb(&[], &["s"])
        );
        assert_eq!(
            effect("SELECT PREVIOUS VALUE FOR Ks_seq, LASTVAL(test.s)"),
            mariadb(&[], &["Ks_seq", "test.s"])
        );
        assert_eq!(effect("SELECT SETVAL(s, 10)"), None);
        for none in [
            "INSERT INTO t VALUES (1, 'interval')",
            "SELECT my_nextval(1)",
        ] {
            assert_eq!(effect(none), None, "{none}");
        }
        // PostgreSQL's LOCK is its transaction's.
        for lock in [
            "LOCK TABLE t IN ACCESS EXCLUSIVE MODE",
            "LOCK t",
            "lock table t",
        ] {
            assert_eq!(
                super::effect(Sql::new(lock), Dialect::Postgres, &Names::default()),
                None
            );
        }
    }

    #[test]
    fn what_lets_state_go_is_recognised() {
        let mut held = BTreeMap::new();
        for h in [
            Held::TemporaryTable("a".into()),
            Held::TemporaryTable("b".into()),
            Held::Lock("user:'k'".into()),
            Held::Lock("user:'k'".into()),
            Held::Lock("advisory:7".into()),
        ] {
            hold(&mut held, h);
        }
        release(
            &mut held,
            &releases("DROP TEMPORARY TABLE IF EXISTS a, `B`"),
        );
        release(&mut held, &releases("SELECT RELEASE_LOCK('k')"));
        assert_eq!(held.len(), 2, "{held:?}");
        release(&mut held, &releases("select release_lock ( 'K' )"));
        release(&mut held, &releases("SELECT pg_advisory_unlock(7)"));
        assert!(held.is_empty(), "{held:?}");
        hold(&mut held, Held::Lock("user:'x'".into()));
        release(&mut held, &releases("SELECT RELEASE_ALL_LOCKS()"));
        assert!(held.is_empty());
        assert_eq!(
            effect("UNLOCK TABLES"),
            Some(Effect::Releases(Released::TableLocks))
        );
    }
}
