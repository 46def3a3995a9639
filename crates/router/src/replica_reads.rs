//! Whether a read may be answered by a replica of its data source (see `!READWRITE_SPLITTING`):
//! only when it changes nothing and takes nothing a later statement could see. Read from the
//! statement's tokens, in the pass the tokens module's `Tokens::scan` makes anyway (it calls
//! [`needs_primary`] on each token).
//!
//! A read goes to the primary when it locks rows (`FOR UPDATE`, `FOR SHARE`, `FOR NO KEY
//! UPDATE`, `FOR KEY SHARE`, `LOCK IN SHARE MODE`), writes a table (`SELECT … INTO`), asks
//! for it (`/* SHARDINGSPHERE_HINT: writeRouteOnly=true */`), or calls a function that changes
//! or reads a session's or the primary's own state (sequences, advisory locks, settings,
//! notifications, the last insert id). A function of the user's that writes is refused by a
//! PostgreSQL standby and by a MariaDB replica's read-only session, never applied there.

use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

/// Functions only a primary may run, lower case.
const PRIMARY_FUNCTIONS: [&str; 24] = [
    "nextval",
    "setval",
    "currval",
    "lastval",
    "last_insert_id",
    "get_lock",
    "release_lock",
    "release_all_locks",
    "is_used_lock",
    "is_free_lock",
    "set_config",
    "pg_notify",
    "txid_current",
    "pg_current_xact_id",
    "pg_advisory_lock",
    "pg_advisory_lock_shared",
    "pg_advisory_unlock",
    "pg_advisory_unlock_shared",
    "pg_advisory_unlock_all",
    "pg_advisory_xact_lock",
    "pg_advisory_xact_lock_shared",
    "pg_try_advisory_lock",
    "pg_try_advisory_xact_lock",
    "pg_current_wal_lsn",
];

/// Whether the token at `index` of `parser`'s statement makes it one only the primary runs.
pub(crate) fn needs_primary(parser: &Parser<'_>, index: usize, token: &TokenWithSpan) -> bool {
    match &token.token {
        Token::Whitespace(Whitespace::MultiLineComment(comment)) => write_route_only(comment),
        Token::Word(word) if word.quote_style.is_none() => match word.keyword {
            Keyword::INTO => true,
            Keyword::FOR => matches!(
                next_keyword(parser, index),
                Some(Keyword::UPDATE | Keyword::SHARE | Keyword::NO | Keyword::KEY)
            ),
            Keyword::LOCK => next_keyword(parser, index) == Some(Keyword::IN),
            _ => {
                next(parser, index).is_some_and(|t| t.token == Token::LParen)
                    && PRIMARY_FUNCTIONS
                        .iter()
                        .any(|f| word.value.eq_ignore_ascii_case(f))
            }
        },
        _ => false,
    }
}

/// ShardingSphere's hint that sends a statement to the primary.
fn write_route_only(comment: &str) -> bool {
    let Some(body) = ["SHARDINGSPHERE_HINT:", "ShardingSphere hint:"]
        .iter()
        .find_map(|start| comment.trim_start().strip_prefix(start))
    else {
        return false;
    };
    body.split(',').any(|entry| {
        entry.split_once('=').is_some_and(|(key, value)| {
            matches!(key.trim(), "writeRouteOnly" | "WRITE_ROUTE_ONLY")
                && value.trim().eq_ignore_ascii_case("true")
        })
    })
}

/// The next token after `index` that is not white space.
fn next<'p>(parser: &'p Parser<'_>, index: usize) -> Option<&'p TokenWithSpan> {
    (index + 1..)
        .map(|i| parser.token_at(i))
        .find(|t| !matches!(t.token, Token::Whitespace(_)))
        .filter(|t| t.token != Token::EOF)
}

fn next_keyword(parser: &Parser<'_>, index: usize) -> Option<Keyword> {
    match &next(parser, index)?.token {
        Token::Word(word) if word.quote_style.is_none() => Some(word.keyword),
        _ => None,
    }
}
