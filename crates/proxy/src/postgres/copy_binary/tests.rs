use keyshard_config::DatabaseKind;

use super::*;

fn stream(fields: &[Option<&[u8]>]) -> Vec<u8> {
    let mut out = binary_layout::SIGNATURE.to_vec();
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&(fields.len() as i16).to_be_bytes());
    for field in fields {
        match field {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(b) => {
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(b);
            }
        }
    }
    out.extend_from_slice(&(-1i16).to_be_bytes());
    out
}

fn pg(names: &[&str]) -> Vec<SqlType> {
    names
        .iter()
        .map(|n| SqlType::of(n, DatabaseKind::Postgres))
        .collect()
}

fn code(result: Result<Vec<Vec<Value>>, PgError>) -> String {
    result.unwrap_err().code
}

#[test]
fn fields_are_read_by_their_column_types() {
    let data = stream(&[
        Some(&21i32.to_be_bytes()),
        Some(b"paid"),
        None,
        Some(&[1]),
        Some(&1.5f64.to_be_bytes()),
        Some(&[0, 0xff]),
    ]);
    let types = pg(&["int4", "varchar", "int8", "bool", "float8", "bytea"]);
    let rows = rows(&data, &types).unwrap();
    assert_eq!(
        rows,
        [vec![
            Value::Text("21".into()),
            Value::Text("paid".into()),
            Value::Null,
            Value::Text("t".into()),
            Value::Text("1.5".into()),
            Value::Bytes(vec![0, 0xff]),
        ]]
    );
}

#[test]
fn arrays_are_read_by_their_element_type() {
    let mut array = Vec::new();
    for word in [1i32, 0, 23, 2, 1, 4, 1, 4, 2] {
        array.extend_from_slice(&word.to_be_bytes());
    }
    let types = pg(&["_int4"]);
    let rows = rows(&stream(&[Some(&array)]), &types).unwrap();
    assert_eq!(rows, [vec![Value::Text("{1,2}".into())]]);
    // An int8[] sent for an int4[] column is refused, not misread.
    array[8..12].copy_from_slice(&20i32.to_be_bytes());
    assert_eq!(code(rows_of(&array, &types)), "42804");
}

fn rows_of(field: &[u8], types: &[SqlType]) -> Result<Vec<Vec<Value>>, PgError> {
    rows(&stream(&[Some(field)]), types)
}

/// Valid streams with random bytes changed, cut or inserted: each is read or refused with
/// a SQLSTATE, never a panic.
#[test]
fn mutated_streams_never_panic() {
    let types = pg(&[
        "int4", "text", "bool", "numeric", "_int8", "float4", "bytea",
    ]);
    let mut array = Vec::new();
    for word in [1i32, 1, 20, 2, 1, 8, 0, 7, -1] {
        array.extend_from_slice(&word.to_be_bytes());
    }
    let numeric = [0u8, 1, 0, 0, 0, 0, 0, 0, 0, 42];
    let row: [Option<&[u8]>; 7] = [
        Some(&[0, 0, 0, 5]),
        Some(b"text"),
        Some(&[1]),
        Some(&numeric),
        Some(&array),
        Some(&[0x3f, 0x80, 0, 0]),
        None,
    ];
    let good = stream(&row);
    rows(&good, &types).unwrap();
    for seed in crate::fuzzing::seeds(0x5EED_C0B1) {
        let mut rng = crate::fuzzing::Rng::new(seed);
        let mut next = move || rng.next();
        for _ in 0..5_000 {
            let mut data = good.clone();
            for _ in 0..=(next() % 4) {
                let at = (next() % data.len() as u64) as usize;
                match next() % 4 {
                    0 => data[at] = next() as u8,
                    1 => data[at] = [0, 0xff, 0x7f, 0x80][(next() % 4) as usize],
                    2 => data.truncate(at.max(1)),
                    _ => data.insert(at, next() as u8),
                }
            }
            if let Err(e) = rows(&data, &types) {
                assert_eq!(e.code.len(), 5, "{e:?}");
            }
        }
    }
}

#[test]
fn bad_values_get_postgres_sqlstates() {
    let types = pg(&["int4"]);
    assert_eq!(code(rows(&stream(&[Some(&[0, 1])]), &types)), "08P01");
    assert_eq!(code(rows(&stream(&[Some(&[0; 6])]), &types)), "22P03");
    assert_eq!(code(rows(b"PGCOPY\n", &types)), "22P04");
    assert_eq!(code(rows(&stream(&[None, None]), &types)), "22P04");
    let text = pg(&["text"]);
    assert_eq!(code(rows(&stream(&[Some(&[0xff, 0xfe])]), &text)), "22021");
    assert_eq!(code(rows(&stream(&[Some(b"a\0b")]), &text)), "22021");
    // Dates and timestamps are read; JSON's binary form is not.
    let stamp = pg(&["timestamptz"]);
    assert_eq!(
        rows(&stream(&[Some(&[0; 8])]), &stamp).unwrap(),
        [[Value::Text("2000-01-01 00:00:00.000000+00".into())]]
    );
    assert_eq!(code(rows(&stream(&[Some(&[0; 7])]), &stamp)), "08P01");
    assert_eq!(code(rows(&stream(&[Some(b"{}")]), &pg(&["json"]))), "0A000");
}
