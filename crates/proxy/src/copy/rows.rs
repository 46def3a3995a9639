//! The rows of a load's data in the text and CSV formats, each value text or NULL: the
//! shards convert them to the columns' types as they would for COPY.

use keyshard_types::Value;

use super::bad;
use crate::error::{Error, ErrorKind};

/// The text format: one row per line, `\N` for NULL, backslash escapes.
pub(super) fn text_rows(
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
///
/// Read here rather than with the `csv` crate: PostgreSQL tells a field equal to the NULL
/// string by its quotes (`,,` is NULL, `,"",` an empty string), which `csv` drops without
/// saying a field had them; and the data may end at the old protocol's `\.` line.
pub(super) fn csv_rows(
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
