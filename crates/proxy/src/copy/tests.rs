use super::*;

fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

#[test]
fn statements() {
    let copy = parse("COPY t_order (user_id, status) FROM STDIN")
        .unwrap()
        .unwrap();
    assert_eq!(copy.columns(), Some(2));
    assert_eq!(copy.target, "t_order (user_id, status)");
    let csv = parse("copy t_order (user_id, status) from stdin with (format csv, header true)")
        .unwrap()
        .unwrap();
    assert!(matches!(csv.format, Format::Csv { header: true, .. }));
    let old = parse("COPY t_order FROM STDIN CSV HEADER DELIMITER ';'")
        .unwrap()
        .unwrap();
    assert!(matches!(
        old.format,
        Format::Csv {
            delimiter: ';',
            header: true,
            ..
        }
    ));
    assert_eq!(old.columns(), None);
    assert!(parse("COPY t_order TO STDOUT").is_none_or(|r| r.is_err()));
    assert!(parse("COPY t_order FROM '/etc/passwd'").unwrap().is_err());
    let binary = parse("COPY t_order FROM STDIN (FORMAT binary)")
        .unwrap()
        .unwrap();
    assert!(binary.is_binary());
    assert_eq!(binary.table_and_columns(), ("t_order".to_owned(), None));
    let old = parse("COPY public.\"t_order\" (user_id, \"status\") FROM STDIN BINARY");
    let old = old.unwrap().unwrap();
    assert!(old.is_binary());
    let columns = Some(vec!["user_id".to_owned(), "status".to_owned()]);
    assert_eq!(old.table_and_columns(), ("t_order".to_owned(), columns));
    assert!(
        parse("COPY t FROM STDIN (FORMAT binary, DELIMITER ',')")
            .unwrap()
            .is_err()
    );
    assert!(parse("SELECT 1").is_none());
}

#[test]
fn text_format() {
    let copy = parse("COPY t (a, b) FROM STDIN").unwrap().unwrap();
    let rows = copy
        .rows("1\ta\\tb\n2\t\\N\n3\tx\\\\y\\101\n\\.\n")
        .unwrap();
    assert_eq!(
        rows,
        [
            vec![text("1"), text("a\tb")],
            vec![text("2"), Value::Null],
            vec![text("3"), text("x\\yA")],
        ]
    );
    assert!(copy.rows("1\n").is_err(), "a missing column");
    assert_eq!(
        copy.insert(&rows[..2]),
        "INSERT INTO t (a, b) VALUES ('1', 'a\tb'), ('2', NULL)"
    );
}

#[test]
fn csv_format() {
    let copy = parse("COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER)")
        .unwrap()
        .unwrap();
    let rows = copy
        .rows("a,b\n1,\"x, \"\"y\"\"\"\n2,\n3,\"\"\n4,\"line\nbreak\"\r\n")
        .unwrap();
    assert_eq!(
        rows,
        [
            vec![text("1"), text("x, \"y\"")],
            vec![text("2"), Value::Null],
            vec![text("3"), text("")],
            vec![text("4"), text("line\nbreak")],
        ]
    );
    assert!(copy.rows("a,b\n1,\"open\n").is_err());
}

#[test]
fn copy_to_stdout_formats() {
    let (format, columns) =
        out_format("COPY public.t_order (order_id, status) TO stdout;").unwrap();
    assert!(matches!(
        format,
        Format::Text {
            delimiter: '\t',
            ..
        }
    ));
    assert_eq!(columns, Some(2));
    let (format, columns) =
        out_format("COPY (SELECT a, b FROM t) TO STDOUT WITH (FORMAT csv, HEADER, FORCE_QUOTE (a, b), DELIMITER ';')")
            .unwrap();
    assert!(matches!(
        format,
        Format::Csv {
            delimiter: ';',
            header: true,
            ..
        }
    ));
    assert_eq!(columns, None);
    let (format, _) =
        out_format("COPY t TO STDOUT CSV HEADER FORCE QUOTE a, b QUOTE '''' ").unwrap();
    assert!(matches!(
        format,
        Format::Csv {
            quote: '\'',
            header: true,
            ..
        }
    ));
    assert!(matches!(
        out_format("COPY t TO STDOUT (FORMAT binary)").unwrap().0,
        Format::Binary
    ));
    assert!(out_format("COPY t TO '/tmp/x'").is_err());
    assert!(out_format("COPY t TO STDOUT (FORMAT xml)").is_err());
}

#[test]
fn batches_cut_at_row_ends_read_the_rows_the_whole_data_holds() {
    let csv = parse("COPY t (a, b) FROM STDIN (FORMAT csv, HEADER true)")
        .unwrap()
        .unwrap();
    let data = "a,b\n1,\"two\nlines\"\n2,\"say \"\"hi\"\"\n,\"\n3,x\n4,";
    let whole = csv.rows(data).unwrap();
    let (mut copy, mut rest, mut batched) = (csv.clone(), data.as_bytes(), Vec::new());
    while let Some(end) = copy.rows_end(rest, 2) {
        let (batch, tail) = rest.split_at(end);
        batched.extend(copy.rows(std::str::from_utf8(batch).unwrap()).unwrap());
        (copy, rest) = (copy.continued(2), tail);
    }
    batched.extend(copy.rows(std::str::from_utf8(rest).unwrap()).unwrap());
    assert_eq!(batched, whole);
    assert_eq!(whole.len(), 4);
    // The text format ends rows at every newline; binary data is read whole.
    let tsv = parse("COPY t (a, b) FROM STDIN").unwrap().unwrap();
    assert_eq!(tsv.rows_end(b"1\tx\n2\ty\n3", 2), Some(8));
    assert_eq!(tsv.rows_end(b"1\tx\n2\ty", 2), None);
    let binary = parse("COPY t FROM STDIN (FORMAT binary)").unwrap().unwrap();
    assert_eq!(binary.rows_end(b"\n\n\n", 1), None);
}
