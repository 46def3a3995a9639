//! `COPY … TO STDOUT` over several data nodes: their copy data joined into the one stream a
//! database holding all the rows would have written. Text rows are passed on as they come; a
//! CSV header is kept from the first node only; binary data keeps the first node's header and
//! ends with one trailer. Rows are counted for the command tag, and the columns from the first
//! row, for the CopyOutResponse that goes before it.

use keyshard_router::Plan;

use super::Format;

/// A planned `COPY … TO STDOUT`: one unit per data node, and how they write their rows.
#[derive(Debug, Clone)]
pub(crate) struct CopyOut {
    pub(crate) plan: Plan,
    pub(crate) format: Format,
    /// The columns the statement names, if it names them.
    pub(crate) columns: Option<usize>,
}

/// PostgreSQL's binary COPY signature, the first bytes of the 19-byte header.
const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";
const HEADER: usize = 19;
const TRAILER: [u8; 2] = [0xff, 0xff];

/// Copy data that is not what PostgreSQL writes (a shard sent something else).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("copy data from a shard is not in the binary COPY layout: {0}")]
pub(crate) struct Malformed(&'static str);

/// Joins the data of the units of one `COPY … TO STDOUT`, fed in order.
#[derive(Debug)]
pub(crate) struct Merge {
    scan: Scan,
    /// Whether the unit being fed is the first.
    first: bool,
    rows: u64,
    /// Fields of the first row (or CSV header), once it ended.
    columns: Option<usize>,
    /// Fields of the first row so far.
    fields: usize,
}

#[derive(Debug)]
enum Scan {
    Text {
        delimiter: u8,
        /// The last byte was an unescaped backslash.
        escaped: bool,
    },
    Csv {
        delimiter: u8,
        quote: u8,
        escape: u8,
        header: bool,
        quoted: bool,
        /// Inside quotes, the last byte was an escape character distinct from the quote.
        escaped: bool,
        /// Dropping this unit's header record.
        skipping: bool,
        /// This unit's header record is still to end.
        in_header: bool,
    },
    Binary(Binary),
}

/// Where a binary stream is: each fixed-size piece gathered in `got`, then acted on.
#[derive(Debug)]
struct Binary {
    state: BinaryState,
    got: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinaryState {
    Header,
    Extension(usize),
    FieldCount,
    FieldLength { left: usize },
    FieldData { left: usize, bytes: usize },
    Ended,
}

impl Merge {
    pub(crate) fn new(format: &Format) -> Self {
        let ascii = |c: char| u8::try_from(u32::from(c)).unwrap_or(0);
        let scan = match format {
            Format::Text { delimiter, .. } => Scan::Text {
                delimiter: ascii(*delimiter),
                escaped: false,
            },
            Format::Csv {
                delimiter,
                quote,
                escape,
                header,
                ..
            } => Scan::Csv {
                delimiter: ascii(*delimiter),
                quote: ascii(*quote),
                escape: ascii(*escape),
                header: *header,
                quoted: false,
                escaped: false,
                skipping: false,
                in_header: *header,
            },
            Format::Binary => Scan::Binary(Binary {
                state: BinaryState::Header,
                got: Vec::with_capacity(HEADER),
            }),
        };
        Self {
            scan,
            first: true,
            rows: 0,
            columns: None,
            fields: 1,
        }
    }

    /// The next unit's data follows.
    pub(crate) fn next_unit(&mut self) -> Result<(), Malformed> {
        self.first = false;
        match &mut self.scan {
            Scan::Text { escaped, .. } => *escaped = false,
            Scan::Csv {
                header,
                quoted,
                escaped,
                skipping,
                in_header,
                ..
            } => {
                (*quoted, *escaped) = (false, false);
                (*skipping, *in_header) = (*header, *header);
            }
            Scan::Binary(binary) => {
                if binary.state != BinaryState::Ended {
                    return Err(Malformed("a node's data ended before its trailer"));
                }
                binary.state = BinaryState::Header;
            }
        }
        Ok(())
    }

    /// Appends to `out` what of `chunk` the joined stream carries.
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), Malformed> {
        match &mut self.scan {
            Scan::Text { delimiter, escaped } => {
                // Data newlines and delimiters are escaped with a backslash: the bare ones
                // end rows and fields.
                out.extend_from_slice(chunk);
                for &b in chunk {
                    if *escaped {
                        *escaped = false;
                    } else if b == b'\\' {
                        *escaped = true;
                    } else if b == b'\n' {
                        self.rows += 1;
                        self.columns.get_or_insert(self.fields);
                    } else if b == *delimiter && self.columns.is_none() {
                        self.fields += 1;
                    }
                }
            }
            Scan::Csv {
                delimiter,
                quote,
                escape,
                quoted,
                escaped,
                skipping,
                in_header,
                ..
            } => {
                let mut kept = 0;
                for (i, &b) in chunk.iter().enumerate() {
                    if *quoted {
                        if *escaped {
                            *escaped = false;
                        } else if b == *escape && escape != quote {
                            *escaped = true;
                        } else if b == *quote {
                            // A doubled quote closes and opens again.
                            *quoted = false;
                        }
                    } else if b == *quote {
                        *quoted = true;
                    } else if b == *delimiter && self.columns.is_none() {
                        self.fields += 1;
                    } else if b == b'\n' {
                        self.columns.get_or_insert(self.fields);
                        if *in_header {
                            *in_header = false;
                            if *skipping {
                                *skipping = false;
                                kept = i + 1;
                            }
                        } else {
                            self.rows += 1;
                        }
                    }
                }
                if !*skipping {
                    out.extend_from_slice(&chunk[kept..]);
                }
            }
            Scan::Binary(binary) => {
                binary.feed(chunk, out, self.first, &mut self.rows, &mut self.columns)?;
            }
        }
        Ok(())
    }

    /// Appends the end of the joined stream to `out`, once the last unit's data came.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), Malformed> {
        if let Scan::Binary(binary) = &self.scan {
            if binary.state != BinaryState::Ended {
                return Err(Malformed("a node's data ended before its trailer"));
            }
            out.extend_from_slice(&TRAILER);
        }
        Ok(())
    }

    /// Rows passed on so far (a CSV header not counted).
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// The fields of the first row, once it was seen.
    pub(crate) fn columns(&self) -> Option<usize> {
        self.columns
    }
}

impl Binary {
    fn feed(
        &mut self,
        mut chunk: &[u8],
        out: &mut Vec<u8>,
        first: bool,
        rows: &mut u64,
        columns: &mut Option<usize>,
    ) -> Result<(), Malformed> {
        while !chunk.is_empty() {
            match self.state {
                BinaryState::Header => {
                    if !self.gather(&mut chunk, HEADER) {
                        break;
                    }
                    if !self.got.starts_with(SIGNATURE) {
                        return Err(Malformed("no PGCOPY signature"));
                    }
                    let extension = u32::from_be_bytes(word(&self.got[15..]));
                    if first {
                        out.extend_from_slice(&self.got);
                    }
                    self.got.clear();
                    self.state = match extension {
                        0 => BinaryState::FieldCount,
                        n => BinaryState::Extension(n as usize),
                    };
                }
                BinaryState::Extension(left) => {
                    let n = left.min(chunk.len());
                    if first {
                        out.extend_from_slice(&chunk[..n]);
                    }
                    chunk = &chunk[n..];
                    self.state = match left - n {
                        0 => BinaryState::FieldCount,
                        left => BinaryState::Extension(left),
                    };
                }
                BinaryState::FieldCount => {
                    if !self.gather(&mut chunk, 2) {
                        break;
                    }
                    let count = i16::from_be_bytes([self.got[0], self.got[1]]);
                    if count == -1 {
                        self.got.clear();
                        self.state = BinaryState::Ended;
                        continue;
                    }
                    let count = usize::try_from(count).map_err(|_| Malformed("field count"))?;
                    out.extend_from_slice(&self.got);
                    self.got.clear();
                    *rows += 1;
                    columns.get_or_insert(count);
                    self.state = match count {
                        0 => BinaryState::FieldCount,
                        left => BinaryState::FieldLength { left },
                    };
                }
                BinaryState::FieldLength { left } => {
                    if !self.gather(&mut chunk, 4) {
                        break;
                    }
                    out.extend_from_slice(&self.got);
                    let length = i32::from_be_bytes(word(&self.got));
                    self.got.clear();
                    let bytes = match length {
                        -1 => 0,
                        n => usize::try_from(n).map_err(|_| Malformed("field length"))?,
                    };
                    self.state = match bytes {
                        0 => next_field(left),
                        bytes => BinaryState::FieldData { left, bytes },
                    };
                }
                BinaryState::FieldData { left, bytes } => {
                    let n = bytes.min(chunk.len());
                    out.extend_from_slice(&chunk[..n]);
                    chunk = &chunk[n..];
                    self.state = match bytes - n {
                        0 => next_field(left),
                        bytes => BinaryState::FieldData { left, bytes },
                    };
                }
                BinaryState::Ended => return Err(Malformed("data after the trailer")),
            }
        }
        Ok(())
    }

    /// Gathers a `size`-byte piece in `got` from `chunk`: whether it is all there. The
    /// caller clears `got` once it used the piece.
    fn gather(&mut self, chunk: &mut &[u8], size: usize) -> bool {
        let n = size.saturating_sub(self.got.len()).min(chunk.len());
        self.got.extend_from_slice(&chunk[..n]);
        *chunk = &chunk[n..];
        self.got.len() == size
    }
}

fn next_field(left: usize) -> BinaryState {
    match left - 1 {
        0 => BinaryState::FieldCount,
        left => BinaryState::FieldLength { left },
    }
}

fn word(bytes: &[u8]) -> [u8; 4] {
    let mut word = [0; 4];
    for (w, b) in word.iter_mut().zip(bytes) {
        *w = *b;
    }
    word
}

#[cfg(test)]
mod tests;
