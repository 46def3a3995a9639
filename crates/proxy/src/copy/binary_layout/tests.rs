use super::*;

/// A stream of `rows` (fields' bytes, `None` for NULL), with the trailer when `trailer`.
fn stream(rows: &[Vec<Option<&[u8]>>], trailer: bool) -> Vec<u8> {
    let mut out = SIGNATURE.to_vec();
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    for row in rows {
        out.extend_from_slice(&(row.len() as i16).to_be_bytes());
        for field in row {
            match field {
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(bytes) => {
                    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                    out.extend_from_slice(bytes);
                }
            }
        }
    }
    if trailer {
        out.extend_from_slice(&(-1i16).to_be_bytes());
    }
    out
}

fn read(data: &[u8], width: usize) -> Result<Vec<Vec<Option<Vec<u8>>>>, BinaryError> {
    tuples(data, width)?
        .map(|t| t.map(|f| f.into_iter().map(|b| b.map(<[u8]>::to_vec)).collect()))
        .collect()
}

fn sample() -> Vec<Vec<Option<&'static [u8]>>> {
    vec![
        vec![Some(&[0, 0, 0, 7][..]), Some(b"seven")],
        vec![Some(&[0, 0, 0, 8][..]), None],
        vec![Some(&[0, 0, 0, 9][..]), Some(b"")],
    ]
}

#[test]
fn reads_tuples_and_nulls() {
    let rows = read(&stream(&sample(), true), 2).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0][1].as_deref(), Some(&b"seven"[..]));
    assert_eq!(rows[1][1], None);
    assert_eq!(rows[2][1].as_deref(), Some(&b""[..]));
    // PostgreSQL takes a stream that ends at a tuple boundary without its trailer.
    assert_eq!(read(&stream(&sample(), false), 2).unwrap(), rows);
    assert_eq!(read(&stream(&[], true), 2).unwrap(), Vec::<Vec<_>>::new());
}

#[test]
fn a_header_extension_is_skipped() {
    let mut data = SIGNATURE.to_vec();
    data.extend_from_slice(&0i32.to_be_bytes());
    data.extend_from_slice(&3i32.to_be_bytes());
    data.extend_from_slice(b"abc");
    data.extend_from_slice(&(-1i16).to_be_bytes());
    assert_eq!(read(&data, 1).unwrap().len(), 0);
}

#[test]
fn the_header_is_checked() {
    let good = stream(&sample(), true);
    let mut bad = good.clone();
    bad[0] = b'X';
    assert_eq!(read(&bad, 2), Err(BinaryError::Signature));
    assert_eq!(read(b"1\tone\n", 2), Err(BinaryError::Signature));
    let mut oids = good.clone();
    oids[11..15].copy_from_slice(&(1i32 << 16).to_be_bytes());
    assert_eq!(read(&oids, 2), Err(BinaryError::WithOids));
    let mut critical = good.clone();
    critical[11..15].copy_from_slice(&(1i32 << 17).to_be_bytes());
    assert_eq!(read(&critical, 2), Err(BinaryError::CriticalFlags));
    let mut low = good.clone();
    low[11..15].copy_from_slice(&1i32.to_be_bytes());
    assert_eq!(read(&low, 2).unwrap().len(), 3, "low flags are ignorable");
    let mut negative = good.clone();
    negative[15..19].copy_from_slice(&(-5i32).to_be_bytes());
    assert_eq!(read(&negative, 2), Err(BinaryError::WrongLength));
    let mut huge = good;
    huge[15..19].copy_from_slice(&i32::MAX.to_be_bytes());
    assert_eq!(read(&huge, 2), Err(BinaryError::WrongLength));
}

#[test]
fn truncated_at_every_byte_is_an_error_or_a_whole_prefix() {
    let data = stream(&sample(), true);
    // Where each complete tuple ends: a stream cut exactly there is a shorter valid load.
    let header = SIGNATURE.len() + 8;
    let row = |value: usize| 2 + 4 + 4 + 4 + value;
    let boundaries = [
        header,
        header + row(5),
        header + row(5) + 2 + 8 + 4,
        header + row(5) + 2 + 8 + 4 + row(0),
    ];
    for cut in 0..data.len() {
        let result = read(&data[..cut], 2);
        match boundaries.iter().position(|&b| b == cut) {
            Some(n) => assert_eq!(result.map(|r| r.len()), Ok(n), "cut at {cut}"),
            None => {
                let expected = if cut < SIGNATURE.len() {
                    BinaryError::Signature
                } else if cut < SIGNATURE.len() + 4 {
                    BinaryError::MissingFlags
                } else if cut < header {
                    BinaryError::MissingLength
                } else {
                    BinaryError::UnexpectedEof
                };
                assert_eq!(result, Err(expected), "cut at {cut}");
            }
        }
    }
    assert_eq!(read(&data, 2).map(|r| r.len()), Ok(3));
}

#[test]
fn field_counts_and_sizes_are_checked() {
    let data = stream(&sample(), true);
    assert_eq!(
        read(&data, 3),
        Err(BinaryError::FieldCount {
            found: 2,
            expected: 3
        })
    );
    let short = stream(&[vec![Some(&b"x"[..])]], true);
    assert_eq!(
        read(&short, 2),
        Err(BinaryError::FieldCount {
            found: 1,
            expected: 2
        })
    );
    // A length bigger than the data, or below -1, never sizes anything.
    for length in [0x3fff_fffe_i32, 6] {
        let mut huge = stream(&[vec![Some(&b"abcde"[..])]], false);
        let at = SIGNATURE.len() + 8 + 2;
        huge[at..at + 4].copy_from_slice(&length.to_be_bytes());
        assert_eq!(read(&huge, 1), Err(BinaryError::UnexpectedEof), "{length}");
    }
    for length in [i32::MAX, 0x3fff_ffff] {
        let mut huge = stream(&[vec![Some(&b"abcde"[..])]], false);
        let at = SIGNATURE.len() + 8 + 2;
        huge[at..at + 4].copy_from_slice(&length.to_be_bytes());
        let expected = BinaryError::FieldTooLarge(length as usize);
        assert_eq!(read(&huge, 1), Err(expected), "{length}");
    }
    let mut negative = stream(&[vec![Some(&b"abcde"[..])]], false);
    let at = SIGNATURE.len() + 8 + 2;
    negative[at..at + 4].copy_from_slice(&(-2i32).to_be_bytes());
    assert_eq!(read(&negative, 1), Err(BinaryError::FieldSize));
    let mut after = stream(&sample(), true);
    after.push(0);
    assert_eq!(read(&after, 2), Err(BinaryError::DataAfterTrailer));
    let mut count = stream(&sample(), true);
    count[SIGNATURE.len() + 8..SIGNATURE.len() + 10].copy_from_slice(&(-7i16).to_be_bytes());
    assert_eq!(
        read(&count, 2),
        Err(BinaryError::FieldCount {
            found: -7,
            expected: 2
        })
    );
}
