//! A statement's leading keyword, read from its text without parsing it: the one vocabulary
//! for what is decided by the first word, before or instead of a parse (which counter a
//! statement counts in, whether it may change a table's columns, whether it can answer rows,
//! whether it can change the schema, which of the proxy's own handlers may answer it). The
//! proxy reads it once per statement, where the statement comes in, and carries it from there.
//! A statement whose word is not listed here is [`Leading::Other`], and each question answers
//! the cautious way for it; the words listed only so that a handler may be picked by them
//! (`DESCRIBE`, `EXECUTE`, `CALL` …) answer each question as [`Leading::Other`] does.

/// The first word of a statement, as far as the proxy tells statements apart by it.
// The variants are the SQL keywords they name.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leading {
    Select,
    With,
    Values,
    Table,
    Show,
    Explain,
    Fetch,
    /// Keyshard's own `PREVIEW`.
    Preview,
    Insert,
    Replace,
    Update,
    Delete,
    Create,
    Drop,
    Alter,
    Rename,
    Truncate,
    Begin,
    Start,
    Commit,
    Rollback,
    End,
    Abort,
    Savepoint,
    Release,
    Set,
    Use,
    Lock,
    Unlock,
    Prepare,
    Deallocate,
    Copy,
    Load,
    Discard,
    Reset,
    Listen,
    Unlisten,
    Notify,
    Grant,
    Revoke,
    Xa,
    Kill,
    /// `DESCRIBE` or its short form `DESC` (MySQL).
    Describe,
    Execute,
    /// ShardingSphere's `REFRESH` (DistSQL).
    Refresh,
    /// ShardingSphere's `CLEAR` (DistSQL).
    Clear,
    Call,
    /// PostgreSQL's anonymous block.
    Do,
    Declare,
    Close,
    Merge,
    Move,
    /// Any other word, or none.
    Other,
}

/// Each keyword's text, lower-case.
const WORDS: &[(&str, Leading)] = &[
    ("select", Leading::Select),
    ("insert", Leading::Insert),
    ("update", Leading::Update),
    ("delete", Leading::Delete),
    ("with", Leading::With),
    ("values", Leading::Values),
    ("table", Leading::Table),
    ("show", Leading::Show),
    ("explain", Leading::Explain),
    ("fetch", Leading::Fetch),
    ("preview", Leading::Preview),
    ("replace", Leading::Replace),
    ("create", Leading::Create),
    ("drop", Leading::Drop),
    ("alter", Leading::Alter),
    ("rename", Leading::Rename),
    ("truncate", Leading::Truncate),
    ("begin", Leading::Begin),
    ("start", Leading::Start),
    ("commit", Leading::Commit),
    ("rollback", Leading::Rollback),
    ("end", Leading::End),
    ("abort", Leading::Abort),
    ("savepoint", Leading::Savepoint),
    ("release", Leading::Release),
    ("set", Leading::Set),
    ("use", Leading::Use),
    ("lock", Leading::Lock),
    ("unlock", Leading::Unlock),
    ("prepare", Leading::Prepare),
    ("deallocate", Leading::Deallocate),
    ("copy", Leading::Copy),
    ("load", Leading::Load),
    ("discard", Leading::Discard),
    ("reset", Leading::Reset),
    ("listen", Leading::Listen),
    ("unlisten", Leading::Unlisten),
    ("notify", Leading::Notify),
    ("grant", Leading::Grant),
    ("revoke", Leading::Revoke),
    ("xa", Leading::Xa),
    ("kill", Leading::Kill),
    ("describe", Leading::Describe),
    ("desc", Leading::Describe),
    ("execute", Leading::Execute),
    ("refresh", Leading::Refresh),
    ("clear", Leading::Clear),
    ("call", Leading::Call),
    ("do", Leading::Do),
    ("declare", Leading::Declare),
    ("close", Leading::Close),
    ("merge", Leading::Merge),
    ("move", Leading::Move),
];

impl Leading {
    /// The leading keyword of `sql`, ASCII-case-insensitively.
    pub fn of(sql: &str) -> Leading {
        let word = first_word(sql);
        WORDS
            .iter()
            .find(|(text, _)| text.eq_ignore_ascii_case(word))
            .map_or(Leading::Other, |&(_, leading)| leading)
    }

    /// A read: `SELECT`, `WITH`, `VALUES`, `TABLE` (a `WITH` may also lead a write in
    /// PostgreSQL; it reads rows either way).
    pub fn reads(self) -> bool {
        matches!(self, Self::Select | Self::With | Self::Values | Self::Table)
    }

    /// A statement that writes rows and nothing else.
    pub fn writes_rows(self) -> bool {
        matches!(
            self,
            Self::Insert | Self::Replace | Self::Update | Self::Delete
        )
    }

    /// Whether it may change some table's columns: anything but reads, row writes, `SHOW`
    /// and `XA`.
    pub fn may_change_columns(self) -> bool {
        !(self.reads() || self.writes_rows() || matches!(self, Self::Show | Self::Xa))
    }

    /// Whether it may create, drop, alter or rename a table.
    pub fn may_change_tables(self) -> bool {
        matches!(self, Self::Create | Self::Drop | Self::Alter | Self::Rename)
    }

    /// Whether it can answer rows without a `RETURNING` clause.
    pub fn answers_rows(self) -> bool {
        self.reads()
            || matches!(
                self,
                Self::Show | Self::Explain | Self::Fetch | Self::Preview
            )
    }

    /// Transaction control: `BEGIN`, `START`, `COMMIT`, `ROLLBACK`, `END`, `SAVEPOINT`,
    /// `RELEASE` (PostgreSQL's `ABORT` is counted with the others, as before: not here).
    pub fn controls_transaction(self) -> bool {
        matches!(
            self,
            Self::Begin
                | Self::Start
                | Self::Commit
                | Self::Rollback
                | Self::End
                | Self::Savepoint
                | Self::Release
        )
    }

    /// Whether it may be a read whose rows go to the client as they arrive: anything but
    /// the statements that never are (writes, DDL, transaction control, settings). A read
    /// taken for one of those would keep its rows (within `result-memory-bytes`), so only
    /// statements that cannot read are excluded.
    pub fn may_stream(self) -> bool {
        !(self.writes_rows()
            || self.controls_transaction()
            || matches!(
                self,
                Self::Set
                    | Self::Create
                    | Self::Drop
                    | Self::Alter
                    | Self::Truncate
                    | Self::Use
                    | Self::Lock
                    | Self::Unlock
                    | Self::Prepare
                    | Self::Deallocate
                    | Self::Copy
                    | Self::Load
                    | Self::Discard
                    | Self::Reset
                    | Self::Listen
                    | Self::Unlisten
                    | Self::Notify
                    | Self::Grant
                    | Self::Revoke
                    | Self::Xa
                    | Self::Kill
                    | Self::Abort
            ))
    }
}

/// The leading run of ASCII letters after white space (`""` when there is none).
pub fn first_word(sql: &str) -> &str {
    // Asked several times of every statement: bytes, unless a non-ASCII character (which may
    // be a Unicode blank) comes before the word.
    let bytes = sql.as_bytes();
    let start = bytes
        .iter()
        .position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
        .unwrap_or(bytes.len());
    if !bytes.get(start).is_none_or(u8::is_ascii) {
        let sql = sql.trim_start();
        let end = sql
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(sql.len());
        return &sql[..end];
    }
    let word = &bytes[start..];
    let len = word
        .iter()
        .position(|b| !b.is_ascii_alphabetic())
        .unwrap_or(word.len());
    &sql[start..start + len]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_word_decides_whatever_its_case_and_the_blanks_before_it() {
        assert_eq!(Leading::of("  select 1"), Leading::Select);
        assert_eq!(Leading::of("\n\tInSeRt INTO t"), Leading::Insert);
        assert_eq!(Leading::of("(SELECT 1)"), Leading::Other);
        assert_eq!(Leading::of(""), Leading::Other);
        assert_eq!(Leading::of("\u{a0}select"), Leading::Select);
        assert_eq!(Leading::of("selected"), Leading::Other);
        assert_eq!(first_word("  é"), "");
        assert_eq!(first_word("begin;"), "begin");
        assert_eq!(first_word("\u{a0}\u{2003}SET x"), "SET");
        assert_eq!(first_word("\x0b\r\nselect"), "select");
        assert_eq!(first_word("   "), "");
    }

    #[test]
    fn every_word_is_listed_once() {
        for (i, (word, leading)) in WORDS.iter().enumerate() {
            assert_eq!(Leading::of(word), *leading, "{word}");
            assert!(WORDS[..i].iter().all(|(w, _)| w != word));
        }
        assert_eq!(Leading::of("DESC t"), Leading::Describe);
    }

    #[test]
    fn an_unknown_word_may_change_columns_and_stream() {
        let other = Leading::Other;
        assert!(other.may_change_columns());
        assert!(other.may_stream());
        assert!(!other.answers_rows());
        assert!(!Leading::Select.may_change_columns());
        assert!(Leading::Set.may_change_columns());
        assert!(!Leading::Insert.may_stream());
        // Listed to pick a handler by, they answer as an unlisted word does.
        for picked in [
            Leading::Describe,
            Leading::Execute,
            Leading::Call,
            Leading::Merge,
        ] {
            assert!(picked.may_change_columns() && picked.may_stream() && !picked.answers_rows());
            assert!(!(picked.reads() || picked.writes_rows() || picked.controls_transaction()));
        }
    }
}
