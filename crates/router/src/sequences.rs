//! MariaDB's sequence expressions, `NEXT VALUE FOR s` and `PREVIOUS VALUE FOR s` (in a SELECT,
//! an INSERT's values or a column's DEFAULT), which sqlparser does not read. A statement that
//! uses one and names no sharded or broadcast table goes as written to where its unsharded
//! tables live, as a statement of a kind the router does not plan does: sequences are
//! unsharded objects of that data source.

use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::Token;

use crate::budget::tokenize;
use crate::direct::Direct;
use crate::{Prepared, RouteError, Router};

impl Router {
    /// `sql`, which the parser refused, as a statement on a MariaDB sequence; `None` when it
    /// uses none.
    pub(crate) fn sequence_statement(&self, sql: &str) -> Option<Result<Prepared, RouteError>> {
        let tokens = tokenize(sql, &MySqlDialect {}).ok()?;
        let words: Vec<&str> = tokens
            .iter()
            .filter_map(|t| match &t.token {
                Token::Word(word) => Some(word.value.as_str()),
                _ => None,
            })
            .collect();
        let bare = |at: usize, word: &str| {
            matches!(&tokens[at].token, Token::Word(w) if w.quote_style.is_none()
                && w.value.eq_ignore_ascii_case(word))
        };
        // Blanks and comments between the three words are tokens too.
        let significant: Vec<usize> = (0..tokens.len())
            .filter(|&at| !matches!(tokens[at].token, Token::Whitespace(_)))
            .collect();
        let uses_sequence = significant.windows(3).any(|w| {
            (bare(w[0], "next") || bare(w[0], "previous"))
                && bare(w[1], "value")
                && bare(w[2], "for")
        });
        if !uses_sequence {
            return None;
        }
        Some(self.sequence_direct(sql, &tokens, &words))
    }

    fn sequence_direct(
        &self,
        sql: &str,
        tokens: &[sqlparser::tokenizer::TokenWithSpan],
        words: &[&str],
    ) -> Result<Prepared, RouteError> {
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
        let data_source = self.home(&names, default)?.to_owned();
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
            table: String::new(),
        }))
    }
}
