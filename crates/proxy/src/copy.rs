//! Bulk loads the client streams: PostgreSQL's `COPY table [(columns)] FROM STDIN` in the text,
//! CSV and binary formats (the binary layout in `binary.rs`, its values read by the PostgreSQL
//! frontend, which knows the types), and MySQL's `LOAD DATA LOCAL INFILE` (read in `load_data.rs`). The rows
//! become one multi-row INSERT, so that each row gets its key and goes to its
//! shard, and the load is as atomic as any INSERT (all rows or none). The whole load is held
//! once, as the SQL of that INSERT, so its size is bound as a statement's
//! (`props.statement-memory-bytes`).

use keyshard_router::push_rows;
use keyshard_types::{Dialect, Value};

use crate::error::{Error, ErrorKind};
use crate::words::starts_with_any;

/// A bulk load the proxy takes: where the rows go and how their text is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CopyIn {
    /// `INSERT INTO`, or MySQL's `INSERT IGNORE INTO` / `REPLACE INTO`.
    pub(crate) verb: &'static str,
    /// The table and column list, as written (`t_order (user_id, status)`).
    pub(crate) target: String,
    /// How many columns each row has; `None`: the table's, unknown here.
    pub(crate) columns: Option<usize>,
    pub(crate) format: Format,
    /// Leading lines to skip (MySQL's `IGNORE n LINES`).
    pub(crate) skip: usize,
    /// Rows of the load read before these (errors number rows from the load's start).
    pub(crate) rows_before: usize,
    pub(crate) dialect: Dialect,
    /// MySQL: the file the client is asked for.
    pub(crate) file: String,
}

/// How rows are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Format {
    /// One row per line, fields split by `delimiter`, backslash escapes (PostgreSQL's octal
    /// and hex ones too unless `mysql`), `null` for NULL.
    Text {
        delimiter: char,
        null: String,
        mysql: bool,
    },
    /// Fields may be quoted.
    Csv {
        delimiter: char,
        null: String,
        quote: char,
        escape: char,
        header: bool,
    },
    /// PostgreSQL's binary layout: each field in its column type's binary form.
    Binary,
}

/// `sql` as a COPY statement: `Some(Ok)` for `COPY … FROM STDIN` in a format the proxy reads,
/// `Some(Err)` for other COPYs (to a file, to the client, binary), `None` for other statements.
pub(crate) fn parse(sql: &str) -> Option<Result<CopyIn, Error>> {
    if !starts_with_any(sql, &["copy"]) {
        return None;
    }
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

fn bad(what: &str) -> Error {
    Error::new(ErrorKind::Syntax, format!("COPY: {what}"))
}

impl CopyIn {
    /// How many columns each row has, when the statement names them.
    pub(crate) fn columns(&self) -> Option<usize> {
        self.columns
    }

    /// Whether the data is PostgreSQL's binary layout, whose values only the frontend can
    /// read (it knows the types' binary forms).
    pub(crate) fn is_binary(&self) -> bool {
        self.format == Format::Binary
    }

    /// The table the COPY loads (unquoted, without a schema) and the columns it names, or
    /// `None` when it names none (all of the table's, in order).
    pub(crate) fn table_and_columns(&self) -> (String, Option<Vec<String>>) {
        let (table, list) = match self.target.split_once('(') {
            Some((table, rest)) => (table, Some(rest.rsplit_once(')').map_or(rest, |r| r.0))),
            None => (self.target.as_str(), None),
        };
        let unquote = |name: &str| name.trim().trim_matches('"').to_owned();
        let table = table.trim();
        let table = table.rsplit_once('.').map_or(table, |(_, t)| t);
        let columns = list.map(|l| {
            crate::words::split_top_level(l)
                .into_iter()
                .map(unquote)
                .collect()
        });
        (unquote(table), columns)
    }

    /// Where the first `rows` complete rows of `data` end, when it holds that many (text and
    /// CSV; `None` for the binary format, read whole). A row ends at a newline outside CSV
    /// quotes, as `rows` reads it.
    pub(crate) fn rows_end(&self, data: &[u8], rows: usize) -> Option<usize> {
        let (quote, escape) = match &self.format {
            Format::Binary => return None,
            Format::Text { .. } => (None, None),
            Format::Csv { quote, escape, .. } => {
                let ascii = |c: char| u8::try_from(c).ok().filter(u8::is_ascii);
                // A quote or escape that is not one byte: read whole.
                (Some(ascii(*quote)?), Some(ascii(*escape)?))
            }
        };
        let mut found = 0;
        let (mut quoted, mut i) = (false, 0);
        while i < data.len() {
            let b = data[i];
            let next = data.get(i + 1).copied();
            if quoted {
                if Some(b) == escape && (next == quote || (escape != quote && next == escape)) {
                    i += 1;
                } else if Some(b) == quote {
                    quoted = false;
                }
            } else if Some(b) == quote {
                quoted = true;
            } else if b == b'\n' {
                found += 1;
                if found == rows {
                    return Some(i + 1);
                }
            }
            i += 1;
        }
        None
    }

    /// The load as it goes on after `rows` more rows: no header to drop or lines to skip.
    pub(crate) fn continued(&self, rows: usize) -> CopyIn {
        let mut copy = self.clone();
        copy.skip = 0;
        copy.rows_before += rows;
        if let Format::Csv { header, .. } = &mut copy.format {
            *header = false;
        }
        copy
    }

    /// The rows of `data`, the whole stream the client sent; each row's values are text or
    /// NULL, which the shards convert to the columns' types as they would for COPY.
    pub(crate) fn rows(&self, data: &str) -> Result<Vec<Vec<Value>>, Error> {
        let rows = match &self.format {
            Format::Binary => {
                return Err(Error::unsupported(
                    "binary COPY data is read by the PostgreSQL frontend",
                ));
            }
            Format::Text {
                delimiter,
                null,
                mysql,
            } => text_rows(data, *delimiter, null, *mysql)?,
            Format::Csv {
                delimiter,
                null,
                quote,
                escape,
                header,
            } => {
                let mut rows = csv_rows(data, *delimiter, null, *quote, *escape)?;
                if *header && !rows.is_empty() {
                    rows.remove(0);
                }
                rows
            }
        };
        let rows: Vec<_> = rows.into_iter().skip(self.skip).collect();
        if let Some(width) = self.columns
            && let Some((line, row)) = rows.iter().enumerate().find(|(_, r)| r.len() != width)
        {
            let what = if row.len() < width {
                "missing data for a column"
            } else {
                "extra data after last expected column"
            };
            return Err(Error::new(
                ErrorKind::ColumnCount,
                format!("COPY row {}: {what}", self.rows_before + line + 1),
            ));
        }
        Ok(rows)
    }

    /// The INSERT of `rows` into the COPY's table.
    pub(crate) fn insert(&self, rows: &[Vec<Value>]) -> String {
        let mut sql = format!("{} {} VALUES ", self.verb, self.target);
        push_rows(&mut sql, rows, self.dialect);
        sql
    }
}

/// The text format: one row per line, `\N` for NULL, backslash escapes.
fn text_rows(
    data: &str,
    delimiter: char,
    null: &str,
    mysql: bool,
) -> Result<Vec<Vec<Value>>, Error> {
    let mut rows = Vec::new();
    for line in data.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        // `\.` ends the data in the old protocol; an empty last line is the final newline.
        if line == "\\." {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let mut row = Vec::new();
        for raw in split_unescaped(line, delimiter) {
            row.push(if raw == null {
                Value::Null
            } else {
                Value::Text(unescape(raw, mysql)?)
            });
        }
        rows.push(row);
    }
    Ok(rows)
}

/// `line` split at each `delimiter` that no backslash escapes.
fn split_unescaped(line: &str, delimiter: char) -> Vec<&str> {
    let mut fields = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == delimiter {
            fields.push(&line[start..i]);
            start = i + c.len_utf8();
        }
    }
    fields.push(&line[start..]);
    fields
}

fn unescape(raw: &str, mysql: bool) -> Result<String, Error> {
    if !raw.contains('\\') {
        return Ok(raw.to_owned());
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            return Err(bad("a backslash at the end of a value"));
        };
        match e {
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' if !mysql => out.push('\u{b}'),
            'Z' if mysql => out.push('\u{1a}'),
            '0' if mysql => out.push(byte_char(0)?),
            '0'..='7' if !mysql => {
                let mut code = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            code = code * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(byte_char(code)?);
            }
            'x' if !mysql => {
                let mut code = 0;
                let mut digits = 0;
                while digits < 2 {
                    match chars.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            code = code * 16 + d;
                            chars.next();
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    out.push('x');
                } else {
                    out.push(byte_char(code)?);
                }
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// An escaped byte: only ASCII stands for itself in UTF-8 text.
fn byte_char(code: u32) -> Result<char, Error> {
    match char::from_u32(code) {
        Some(c) if c.is_ascii() && c != '\0' => Ok(c),
        _ => Err(Error::new(
            ErrorKind::InvalidEncoding,
            format!("COPY: the escaped byte 0x{code:02x} is not a character"),
        )),
    }
}

/// The CSV format: quoted fields may hold delimiters, quotes (doubled or escaped) and
/// newlines; an unquoted field equal to `null` is NULL (a quoted one is the text).
fn csv_rows(
    data: &str,
    delimiter: char,
    null: &str,
    quote: char,
    escape: char,
) -> Result<Vec<Vec<Value>>, Error> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let (mut quoted, mut was_quoted, mut at_start) = (false, false, true);
    let mut chars = data.chars().peekable();
    let end_field = |field: &mut String, was_quoted: bool, row: &mut Vec<Value>| {
        let value = if !was_quoted && field == null {
            Value::Null
        } else {
            Value::Text(std::mem::take(field))
        };
        field.clear();
        row.push(value);
    };
    while let Some(c) = chars.next() {
        if quoted {
            if c == escape && chars.peek() == Some(&quote) {
                // A doubled quote (or the escape, then a quote) inside quotes is one quote.
                chars.next();
                field.push(quote);
            } else if c == escape && escape != quote && chars.peek() == Some(&escape) {
                chars.next();
                field.push(escape);
            } else if c == quote {
                quoted = false;
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            c if c == quote => {
                quoted = true;
                was_quoted = true;
                at_start = false;
            }
            c if c == delimiter => {
                end_field(&mut field, was_quoted, &mut row);
                was_quoted = false;
                at_start = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                // `\.` alone on a line ends the data in the old protocol.
                if row.is_empty() && !was_quoted && field == "\\." {
                    return Ok(rows);
                }
                if !at_start {
                    end_field(&mut field, was_quoted, &mut row);
                    rows.push(std::mem::take(&mut row));
                }
                was_quoted = false;
                at_start = true;
            }
            c => {
                field.push(c);
                at_start = false;
            }
        }
    }
    if quoted {
        return Err(bad("unterminated CSV quoted field"));
    }
    let end_marker = row.is_empty() && !was_quoted && field == "\\.";
    if !at_start && !end_marker {
        end_field(&mut field, was_quoted, &mut row);
        rows.push(row);
    }
    Ok(rows)
}

pub(crate) mod binary_layout;
pub(crate) mod out;

#[cfg(test)]
mod tests;
