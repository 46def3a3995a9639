//! Bulk loads the client streams: PostgreSQL's `COPY table [(columns)] FROM STDIN` in the text,
//! CSV and binary formats (the binary layout in `binary_layout.rs`, its values read by the
//! PostgreSQL frontend, which knows the types), and MySQL's `LOAD DATA LOCAL INFILE` (read in
//! `load_data.rs`). The rows become one multi-row INSERT, so that each row gets its key and goes
//! to its shard, and the load is as atomic as any INSERT (all rows or none). The whole load is
//! held once, as the SQL of that INSERT, so its size is bound as a statement's
//! (`props.statement-memory-bytes`).

use keyshard_router::push_rows;
use keyshard_types::{Dialect, Value};

use crate::error::{Error, ErrorKind};

mod rows;
mod statement;

use rows::{csv_rows, text_rows};
pub(crate) use statement::{column_count, one_char, out_format, parse};

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

fn bad(what: &str) -> Error {
    Error::new(ErrorKind::Syntax, format!("COPY: {what}"))
}

pub(crate) mod binary_layout;
pub(crate) mod out;

#[cfg(test)]
mod tests;
