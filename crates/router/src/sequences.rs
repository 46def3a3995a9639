//! MariaDB's sequence expressions, `NEXT VALUE FOR s` and `PREVIOUS VALUE FOR s` (in a SELECT,
//! an INSERT's values or a column's DEFAULT), which sqlparser does not read. A statement that
//! uses one and names no sharded or broadcast table goes as written to where its unsharded
//! tables live, as a statement of a kind the router does not plan does: sequences are
//! unsharded objects of that data source.

use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::budget::tokenize;
use crate::direct::Direct;
use crate::{Prepared, RouteError, Router};

/// The sequences one MariaDB statement names, each as written (quotes aside): case and schema
/// kept, so that two names compare equal only when they are one sequence.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SequenceUse {
    /// `NEXT VALUE FOR s`, `NEXTVAL(s)`: values the statement takes.
    pub advances: Vec<String>,
    /// `PREVIOUS VALUE FOR s`, `LASTVAL(s)`: the connection's last value of each.
    pub reads: Vec<String>,
    /// Whether it uses the `… VALUE FOR` forms, which sqlparser does not read.
    phrases: bool,
}

/// The sequences `sql`, a MariaDB statement, takes values of and reads the last value of
/// (`SETVAL` changes the sequence for everyone and the connection's last value for no one),
/// read from its tokens: blanks and comments may stand between the words as the server
/// allows. `None` when it names none, or cannot be read.
pub fn mariadb_sequences(sql: &str) -> Option<SequenceUse> {
    let tokens = tokenize(sql, &MySqlDialect {}).ok()?;
    let used = sequence_use(&tokens);
    (used != SequenceUse::default()).then_some(used)
}

fn sequence_use(tokens: &[TokenWithSpan]) -> SequenceUse {
    let tokens: Vec<&Token> = tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let bare = |at: usize, word: &str| {
        matches!(tokens.get(at), Some(Token::Word(w)) if w.quote_style.is_none()
            && w.value.eq_ignore_ascii_case(word))
    };
    let mut used = SequenceUse::default();
    for at in 0..tokens.len() {
        let phrase = |first: &str| bare(at, first) && bare(at + 1, "value") && bare(at + 2, "for");
        let call = |function: &str| {
            bare(at, function) && matches!(tokens.get(at + 1), Some(Token::LParen))
        };
        let (list, name_at) = if phrase("next") {
            used.phrases = true;
            (&mut used.advances, at + 3)
        } else if phrase("previous") {
            used.phrases = true;
            (&mut used.reads, at + 3)
        } else if call("nextval") {
            (&mut used.advances, at + 2)
        } else if call("lastval") {
            (&mut used.reads, at + 2)
        } else {
            continue;
        };
        list.push(name_at_tokens(&tokens, name_at));
    }
    used
}

/// The dotted name that begins at `at`, its parts without quotes.
fn name_at_tokens(tokens: &[&Token], mut at: usize) -> String {
    let mut name = String::new();
    while let Some(Token::Word(word)) = tokens.get(at) {
        name.push_str(&word.value);
        match tokens.get(at + 1) {
            Some(Token::Period) => {
                name.push('.');
                at += 2;
            }
            _ => break,
        }
    }
    name
}

impl Router {
    /// `sql`, which the parser refused, as a statement on a MariaDB sequence; `None` when it
    /// uses none of the `… VALUE FOR` forms.
    pub(crate) fn sequence_statement(&self, sql: &str) -> Option<Result<Prepared, RouteError>> {
        let tokens = tokenize(sql, &MySqlDialect {}).ok()?;
        if !sequence_use(&tokens).phrases {
            return None;
        }
        Some(self.sequence_direct(sql, &tokens))
    }

    fn sequence_direct(&self, sql: &str, tokens: &[TokenWithSpan]) -> Result<Prepared, RouteError> {
        let words: Vec<&str> = tokens
            .iter()
            .filter_map(|t| match &t.token {
                Token::Word(word) => Some(word.value.as_str()),
                _ => None,
            })
            .collect();
        if let Some(table) = words
            .iter()
            .find(|w| self.table(w).is_some() || self.is_broadcast(w))
        {
            return Err(RouteError::Unsupported(format!(
                "NEXT VALUE FOR or PREVIOUS VALUE FOR in a statement on the sharded or \
                 broadcast table '{table}' (take the value with SELECT NEXT VALUE FOR first, \
                 and write it as a literal)"
            )));
        }
        let Some(default) = self.default_data_source.as_deref() else {
            return Err(RouteError::Unsupported(
                "a sequence where no data source is configured for unsharded tables".into(),
            ));
        };
        let names: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        let data_source = self.home(&names, default)?;
        let first = words.first().map(|w| w.to_ascii_lowercase());
        let param_count = tokens
            .iter()
            .filter(|t| matches!(&t.token, Token::Placeholder(p) if p == "?"))
            .count();
        Ok(Prepared::Direct(Direct {
            sql: sql.into(),
            data_sources: vec![data_source],
            param_count,
            is_read: matches!(first.as_deref(), Some("select" | "with")),
            replicated: false,
            replica_safe: false,
            table: String::new(),
        }))
    }
}
