//! A statement's text with its leading keyword, read once where the statement comes in.

use keyshard_router::Leading;

use crate::control::{self, Control};

/// A statement's text with its leading keyword, read once where the statement comes in (a
/// frontend, a prepare, or the proxy for a statement it writes itself) and carried from there:
/// whatever is decided by the first word (which handler answers it, its counter, whether its
/// rows may stream, its command tag) asks [`Leading`], not the text again.
#[derive(Debug, Clone, Copy)]
pub struct Sql<'a> {
    /// The statement as sent.
    pub text: &'a str,
    /// Its leading keyword.
    pub leading: Leading,
}

impl<'a> Sql<'a> {
    /// `text`, its leading keyword read.
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            leading: Leading::of(text),
        }
    }

    /// The transaction control it is, if it is (`SET autocommit`, `SET TRANSACTION …` too).
    pub(crate) fn control(self) -> Option<Control> {
        let leading = self.leading;
        let may =
            leading.controls_transaction() || matches!(leading, Leading::Abort | Leading::Set);
        may.then(|| control::parse(self.text)).flatten()
    }
}
