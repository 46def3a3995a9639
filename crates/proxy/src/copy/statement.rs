//! The COPY statement itself: `COPY … FROM STDIN` read into the load it starts, `COPY … TO
//! STDOUT` into how its rows are written, and the options of either (the format, its
//! delimiter, NULL string, quote and escape, a CSV header).

use keyshard_types::Dialect;

use super::{CopyIn, Format, bad};
use crate::error::Error;

/// `sql`, led by `COPY` (see `Intent::of`), as a load: `Some(Ok)` for `COPY … FROM STDIN` in a
/// format the proxy reads, `Some(Err)` for other COPYs (to a file, to the client, binary),
/// `None` when it is not a COPY the proxy can tell.
pub(crate) fn parse(sql: &str) -> Option<Result<CopyIn, Error>> {
    let text = sql.trim().trim_end_matches(';').trim_end();
    let lower = text.to_ascii_lowercase();
    let from = find_word(&lower, "from")?;
    let target = text["copy".len()..from].trim();
    let source = lower[from + "from".len()..].trim_start();
    let Some(options) = source.strip_prefix("stdin") else {
        return Some(Err(Error::unsupported(
            "COPY other than FROM STDIN (files are the shards' business; TO STDOUT is not \
             offered)",
        )));
    };
    let original = &text[text.len() - options.len()..];
    Some(options_of(original, false).map(|format| CopyIn {
        verb: "INSERT INTO",
        target: target.to_owned(),
        columns: column_count(target),
        format,
        skip: 0,
        rows_before: 0,
        dialect: Dialect::Postgres,
        file: String::new(),
    }))
}

/// `COPY table [(columns)] TO STDOUT [options]`, or `COPY (query) TO STDOUT [options]`, which
/// the router planned: how its rows are written, and how many columns it names.
pub(crate) fn out_format(sql: &str) -> Result<(Format, Option<usize>), Error> {
    let text = sql.trim().trim_end_matches(';').trim_end();
    let lower = text.to_ascii_lowercase();
    let not_stdout = || bad("COPY … TO other than STDOUT");
    let to = find_word(&lower, "to").ok_or_else(not_stdout)?;
    let target = text.get("copy".len()..to).unwrap_or_default().trim();
    let options = lower[to + "to".len()..]
        .trim_start()
        .strip_prefix("stdout")
        .ok_or_else(not_stdout)?;
    let format = options_of(&text[text.len() - options.len()..], true)?;
    let columns = match target.starts_with('(') {
        true => None,
        false => column_count(target),
    };
    Ok((format, columns))
}

/// The position of `word` standing alone in `lower`, outside parentheses and quotes.
fn find_word(lower: &str, word: &str) -> Option<usize> {
    let (mut depth, mut quote) = (0i32, None);
    for (i, c) in lower.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('(', None) => depth += 1,
            (')', None) => depth -= 1,
            _ if quote.is_none() && depth == 0 && lower[i..].starts_with(word) => {
                let before = lower[..i].chars().next_back();
                let after = lower[i + word.len()..].chars().next();
                let alone = |c: Option<char>| c.is_none_or(|c| c.is_whitespace() || c == '(');
                if before.is_some_and(|c| c.is_whitespace() || c == ')') && alone(after) {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

pub(crate) fn column_count(target: &str) -> Option<usize> {
    let list = target.split_once('(')?.1.rsplit_once(')')?.0;
    Some(crate::words::split_top_level(list).len())
}

/// `WITH (FORMAT csv, HEADER, DELIMITER ';', NULL '')`, or the old `CSV HEADER DELIMITER ';'`;
/// `to`: of a `COPY … TO`, which the database writes (so only what shapes its rows matters).
fn options_of(options: &str, to: bool) -> Result<Format, Error> {
    let options = options.trim();
    let options = options
        .strip_prefix("with")
        .or_else(|| options.strip_prefix("WITH"))
        .unwrap_or(options)
        .trim();
    let list = options
        .strip_prefix('(')
        .and_then(|o| o.strip_suffix(')'))
        .unwrap_or(options);
    let mut words = Vec::new();
    for item in crate::words::split_top_level(list) {
        words.extend(tokens(item));
    }
    let mut binary = false;
    let (mut csv, mut header, mut delimiter, mut null, mut quote, mut escape) =
        (false, false, None, None, '"', None);
    let mut words = words.into_iter().peekable();
    while let Some(word) = words.next() {
        let mut value = || {
            words
                .next()
                .ok_or_else(|| bad(&format!("{word} without a value")))
        };
        match word.to_ascii_lowercase().as_str() {
            "format" => match value()?.to_ascii_lowercase().as_str() {
                "csv" => csv = true,
                "text" => csv = false,
                "binary" => binary = true,
                other => {
                    return Err(Error::unsupported(format!(
                        "COPY in the {other} format (text, csv and binary are read)"
                    )));
                }
            },
            "csv" => csv = true,
            "binary" => binary = true,
            "header" => {
                header = !matches!(
                    words.peek().map(|w| w.to_ascii_lowercase()).as_deref(),
                    Some("false" | "off" | "0")
                );
                if matches!(
                    words.peek().map(|w| w.to_ascii_lowercase()).as_deref(),
                    Some("true" | "on" | "1" | "false" | "off" | "0")
                ) {
                    words.next();
                }
            }
            "delimiter" => delimiter = Some(single(&value()?)?),
            "null" => null = Some(value()?),
            "quote" => quote = single(&value()?)?,
            "escape" => escape = Some(single(&value()?)?),
            "encoding" => {
                let encoding = value()?;
                if !to && !matches!(encoding.to_ascii_uppercase().as_str(), "UTF8" | "UTF-8") {
                    return Err(Error::unsupported(format!("COPY in {encoding}")));
                }
            }
            // Which columns the database quotes: `FORCE_QUOTE *`, `FORCE_QUOTE (a, b)`, and
            // the old `FORCE QUOTE a, b`.
            "force_quote" | "force" if to => {
                if word.eq_ignore_ascii_case("force") {
                    words.next_if(|w| w.eq_ignore_ascii_case("quote"));
                }
                while words.next_if(|w| !is_option(w)).is_some() {}
            }
            other => return Err(bad(&format!("unknown option {other}"))),
        }
    }
    if binary {
        // PostgreSQL refuses these too: the binary layout has no delimiters or NULL strings.
        // (A COPY … TO gets the database's own refusal.)
        if !to && (csv || header || delimiter.is_some() || null.is_some() || escape.is_some()) {
            return Err(bad("cannot specify text or CSV options in BINARY mode"));
        }
        return Ok(Format::Binary);
    }
    Ok(if csv {
        Format::Csv {
            delimiter: delimiter.unwrap_or(','),
            null: null.unwrap_or_default(),
            quote,
            escape: escape.unwrap_or(quote),
            header,
        }
    } else {
        Format::Text {
            delimiter: delimiter.unwrap_or('\t'),
            null: null.unwrap_or_else(|| "\\N".to_owned()),
            mysql: false,
        }
    })
}

fn is_option(word: &str) -> bool {
    const OPTIONS: &[&str] = &[
        "format",
        "csv",
        "binary",
        "header",
        "delimiter",
        "null",
        "quote",
        "escape",
        "encoding",
        "force_quote",
        "force",
    ];
    OPTIONS.iter().any(|o| o.eq_ignore_ascii_case(word))
}

/// An option list's words, quoted strings unquoted.
fn tokens(item: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = item.trim().chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '\'' || c == '"' {
            chars.next();
            let mut word = String::new();
            while let Some(c2) = chars.next() {
                if c2 == c {
                    if chars.peek() == Some(&c) {
                        word.push(c);
                        chars.next();
                    } else {
                        break;
                    }
                } else {
                    word.push(c2);
                }
            }
            out.push(word);
        } else {
            let mut word = String::new();
            while let Some(&c2) = chars.peek() {
                if c2.is_whitespace() {
                    break;
                }
                word.push(c2);
                chars.next();
            }
            out.push(word);
        }
    }
    out
}

fn single(value: &str) -> Result<char, Error> {
    one_char(value).ok_or_else(|| bad("a COPY delimiter, quote or escape must be one character"))
}

/// The character `value` is, when it is exactly one.
pub(crate) fn one_char(value: &str) -> Option<char> {
    let mut chars = value.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}
