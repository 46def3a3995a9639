//! `LISTEN` and `UNLISTEN` as a client writes them: which command, and the channel as the
//! server names it. Read when a statement's intent is decided, before any engine acts on it.

/// `LISTEN channel`, `UNLISTEN channel`, `UNLISTEN *`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    Listen(String),
    /// A channel, or every channel.
    Unlisten(Option<String>),
}

/// The command `sql` is, with the channel named as the server keeps it (folded to lower case
/// unless quoted); `None` for any other statement.
pub(crate) fn parse(sql: &str) -> Option<Command> {
    let sql = sql.trim().trim_end_matches(';').trim_end();
    let (keyword, rest) = sql.split_once(char::is_whitespace)?;
    let rest = rest.trim();
    if keyword.eq_ignore_ascii_case("unlisten") && rest == "*" {
        return Some(Command::Unlisten(None));
    }
    let channel = identifier(rest)?;
    if keyword.eq_ignore_ascii_case("listen") {
        Some(Command::Listen(channel))
    } else if keyword.eq_ignore_ascii_case("unlisten") {
        Some(Command::Unlisten(Some(channel)))
    } else {
        None
    }
}

/// One identifier, whole: `"Quoted ""name"""` as written, a bare one lower-cased.
fn identifier(text: &str) -> Option<String> {
    if let Some(quoted) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        let name = quoted.replace("\"\"", "\"");
        // A lone quote inside was not a doubled one: not one identifier.
        return (!name.is_empty() && !quoted.replace("\"\"", "").contains('"')).then_some(name);
    }
    let mut chars = text.chars();
    let first = chars.next()?;
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    ((first.is_alphabetic() || first == '_') && chars.all(word)).then(|| text.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_are_named_as_the_server_names_them() {
        assert_eq!(
            parse("LISTEN Orders;"),
            Some(Command::Listen("orders".into()))
        );
        assert_eq!(
            parse("listen \"New \"\"Orders\"\"\""),
            Some(Command::Listen("New \"Orders\"".into()))
        );
        assert_eq!(
            parse("UNLISTEN orders"),
            Some(Command::Unlisten(Some("orders".into())))
        );
        assert_eq!(parse("unlisten *"), Some(Command::Unlisten(None)));
        for other in [
            "LISTEN",
            "LISTEN a b",
            "LISTEN *",
            "LISTEN \"a\"b\"",
            "LISTEN 1a",
            "NOTIFY orders",
            "SELECT 1",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }
}
