use super::*;

fn csv(header: bool) -> Format {
    Format::Csv {
        delimiter: ',',
        null: String::new(),
        quote: '"',
        escape: '"',
        header,
    }
}

fn text() -> Format {
    Format::Text {
        delimiter: '\t',
        null: "\\N".to_owned(),
        mysql: false,
    }
}

/// The units' data joined, each fed in chunks of `size` bytes.
fn joined(
    format: &Format,
    units: &[&[u8]],
    size: usize,
) -> Result<(Vec<u8>, u64, Option<usize>), Malformed> {
    let mut merge = Merge::new(format);
    let mut out = Vec::new();
    for (i, unit) in units.iter().enumerate() {
        if i > 0 {
            merge.next_unit()?;
        }
        for chunk in unit.chunks(size) {
            merge.feed(chunk, &mut out)?;
        }
    }
    merge.finish(&mut out)?;
    Ok((out, merge.rows(), merge.columns()))
}

#[test]
fn text_rows_are_passed_on_and_counted_escaped_newlines_and_tabs_inside_them() {
    let units: [&[u8]; 3] = [b"1\ta\\tb\n2\tc\\nd\n", b"", b"3\t\\\\\n"];
    for size in [1, 2, 5, 100] {
        let (out, rows, columns) = joined(&text(), &units, size).unwrap();
        assert_eq!(out, b"1\ta\\tb\n2\tc\\nd\n3\t\\\\\n");
        assert_eq!((rows, columns), (3, Some(2)));
    }
    assert_eq!(
        joined(&text(), &[b"", b""], 1).unwrap(),
        (Vec::new(), 0, None)
    );
}

#[test]
fn csv_keeps_the_first_header_only_and_counts_records_not_quoted_newlines() {
    let units: [&[u8]; 3] = [
        b"id,\"no,te\"\n1,\"a\nb\"\n",
        b"id,\"no,te\"\n2,\"say \"\"hi\"\"\"\n",
        b"id,\"no,te\"\n",
    ];
    for size in [1, 3, 100] {
        let (out, rows, columns) = joined(&csv(true), &units, size).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "id,\"no,te\"\n1,\"a\nb\"\n2,\"say \"\"hi\"\"\"\n"
        );
        assert_eq!((rows, columns), (2, Some(2)));
    }
    let (out, rows, columns) = joined(&csv(false), &[b"1,\"x,\ny\"\n", b"2,z\n"], 1).unwrap();
    assert_eq!(out, b"1,\"x,\ny\"\n2,z\n");
    assert_eq!((rows, columns), (2, Some(2)));
}

/// One node's binary data: the header (with `extension` bytes), the rows, the trailer.
fn binary(extension: &[u8], rows: &[&[Option<&[u8]>]]) -> Vec<u8> {
    let mut out = SIGNATURE.to_vec();
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&(extension.len() as u32).to_be_bytes());
    out.extend_from_slice(extension);
    for row in rows {
        out.extend_from_slice(&(row.len() as i16).to_be_bytes());
        for field in *row {
            match field {
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(bytes) => {
                    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                    out.extend_from_slice(bytes);
                }
            }
        }
    }
    out.extend_from_slice(&TRAILER);
    out
}

#[test]
fn binary_data_keeps_one_header_and_one_trailer() {
    let a = binary(
        b"ext",
        &[&[Some(b"\0\0\0\x01"), None], &[Some(b""), Some(b"xyz")]],
    );
    let b = binary(b"", &[]);
    let c = binary(b"", &[&[Some(b"\0\0\0\x03"), Some(b"q")]]);
    let whole = binary(
        b"ext",
        &[
            &[Some(b"\0\0\0\x01"), None],
            &[Some(b""), Some(b"xyz")],
            &[Some(b"\0\0\0\x03"), Some(b"q")],
        ],
    );
    for size in [1, 2, 3, 7, 1000] {
        let (out, rows, columns) = joined(&Format::Binary, &[&a, &b, &c], size).unwrap();
        assert_eq!(out, whole, "chunks of {size}");
        assert_eq!((rows, columns), (3, Some(2)));
    }
    let empty = binary(b"", &[]);
    assert_eq!(
        joined(&Format::Binary, &[&empty], 4).unwrap(),
        (empty, 0, None)
    );
}

#[test]
fn binary_data_that_is_not_pg_copy_is_refused() {
    let a = binary(b"", &[&[Some(b"x")]]);
    assert!(joined(&Format::Binary, &[&a[..a.len() - 2]], 5).is_err());
    assert!(joined(&Format::Binary, &[b"not a copy at all, really"], 5).is_err());
    let mut after = a.clone();
    after.push(0);
    assert!(joined(&Format::Binary, &[&after], 5).is_err());
    let mut negative = binary(b"", &[]);
    negative.splice(19..19, (-5i16).to_be_bytes());
    assert!(joined(&Format::Binary, &[&negative], 5).is_err());
}
