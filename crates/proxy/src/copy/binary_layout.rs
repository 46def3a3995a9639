//! PostgreSQL's binary COPY layout (asyncpg's `copy_records_to_table` sends it): the 11-byte
//! signature, an int32 of flags, an int32 header-extension length and its bytes; then per tuple
//! an int16 field count (-1: the trailer) and per field an int32 length (-1: NULL) and the
//! bytes. This reads the layout only; what a field's bytes mean is the column type's business
//! (`postgres::copy_binary`). The data is already whole in memory (bounded as a statement), so
//! however the client split it across CopyData messages does not matter here, and a length
//! is only ever compared with what is left, never used to size an allocation.

/// PostgreSQL's `PGCOPY\n\377\r\n\0`.
pub(crate) const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// PostgreSQL's MaxAllocSize: it refuses a field this long before reading it.
const MAX_FIELD: usize = 0x3fff_ffff;

/// Why the data is not a binary COPY stream, in PostgreSQL's words (SQLSTATE 22P04,
/// bad_copy_file_format, but for [`BinaryError::FieldTooLarge`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BinaryError {
    #[error("COPY file signature not recognized")]
    Signature,
    #[error("invalid COPY file header (missing flags)")]
    MissingFlags,
    #[error("invalid COPY file header (WITH OIDS)")]
    WithOids,
    #[error("unrecognized critical flags in COPY file header")]
    CriticalFlags,
    #[error("invalid COPY file header (missing length)")]
    MissingLength,
    #[error("invalid COPY file header (wrong length)")]
    WrongLength,
    #[error("row field count is {found}, expected {expected}")]
    FieldCount { found: i16, expected: usize },
    #[error("invalid field size")]
    FieldSize,
    /// A field PostgreSQL would not make room for, whatever follows (its 1 GB allocation
    /// limit; SQLSTATE 54000).
    #[error("out of memory: a COPY field of {0} bytes is over the 1 GB limit")]
    FieldTooLarge(usize),
    #[error("unexpected EOF in COPY data")]
    UnexpectedEof,
    #[error("received copy data after EOF marker")]
    DataAfterTrailer,
}

/// The tuples of a binary COPY stream, one at a time: each is its fields' bytes (`None`:
/// NULL), borrowed from the data.
pub(crate) struct Tuples<'a> {
    rest: &'a [u8],
    width: usize,
    done: bool,
}

/// Reads the header of `data`; the tuples follow, each of `width` fields.
pub(crate) fn tuples(data: &[u8], width: usize) -> Result<Tuples<'_>, BinaryError> {
    let rest = data.strip_prefix(SIGNATURE).ok_or(BinaryError::Signature)?;
    let (flags, rest) = int32(rest).ok_or(BinaryError::MissingFlags)?;
    // Bit 16 was WITH OIDS (gone since PostgreSQL 12); the other high bits are critical
    // flags a reader must refuse, the low ones may be ignored.
    if flags & (1 << 16) != 0 {
        return Err(BinaryError::WithOids);
    }
    if (flags as u32) >> 16 != 0 {
        return Err(BinaryError::CriticalFlags);
    }
    let (extension, rest) = int32(rest).ok_or(BinaryError::MissingLength)?;
    let extension = usize::try_from(extension).map_err(|_| BinaryError::WrongLength)?;
    let rest = rest.get(extension..).ok_or(BinaryError::WrongLength)?;
    Ok(Tuples {
        rest,
        width,
        done: false,
    })
}

impl<'a> Tuples<'a> {
    fn tuple(&mut self) -> Result<Option<Vec<Option<&'a [u8]>>>, BinaryError> {
        // The end of the data at a tuple's start ends the load, trailer or not, as in
        // PostgreSQL.
        if self.rest.is_empty() {
            return Ok(None);
        }
        let (count, rest) = int16(self.rest).ok_or(BinaryError::UnexpectedEof)?;
        self.rest = rest;
        if count == -1 {
            if !self.rest.is_empty() {
                return Err(BinaryError::DataAfterTrailer);
            }
            return Ok(None);
        }
        if usize::try_from(count).ok() != Some(self.width) {
            return Err(BinaryError::FieldCount {
                found: count,
                expected: self.width,
            });
        }
        let mut fields = Vec::with_capacity(self.width);
        for _ in 0..self.width {
            let (length, rest) = int32(self.rest).ok_or(BinaryError::UnexpectedEof)?;
            self.rest = rest;
            if length == -1 {
                fields.push(None);
                continue;
            }
            let length = usize::try_from(length).map_err(|_| BinaryError::FieldSize)?;
            if length >= MAX_FIELD {
                return Err(BinaryError::FieldTooLarge(length));
            }
            if length > self.rest.len() {
                return Err(BinaryError::UnexpectedEof);
            }
            let (field, rest) = self.rest.split_at(length);
            self.rest = rest;
            fields.push(Some(field));
        }
        Ok(Some(fields))
    }
}

impl<'a> Iterator for Tuples<'a> {
    type Item = Result<Vec<Option<&'a [u8]>>, BinaryError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let tuple = self.tuple();
        // After the end or an error nothing more is read.
        if !matches!(tuple, Ok(Some(_))) {
            self.done = true;
        }
        tuple.transpose()
    }
}

fn int16(data: &[u8]) -> Option<(i16, &[u8])> {
    let (head, rest) = data.split_first_chunk::<2>()?;
    Some((i16::from_be_bytes(*head), rest))
}

fn int32(data: &[u8]) -> Option<(i32, &[u8])> {
    let (head, rest) = data.split_first_chunk::<4>()?;
    Some((i32::from_be_bytes(*head), rest))
}

#[cfg(test)]
mod tests;
