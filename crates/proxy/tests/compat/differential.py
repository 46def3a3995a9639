"""The comparison the *_types.py scripts share: each reader's results through Keyshard against
its results from the plain database, cell by cell. A reader is (name, read), read(target)
giving [(sql, column names, rows of cells)] for target "proxy" or "plain"."""
import sys


def compare(readers):
    """Prints every difference and exits 1 on any; prints {"keys": []} when all agree."""
    differences = []
    for name, read in readers:
        want = read("plain")
        got = read("proxy")
        for (sql, want_names, want_rows), (_, got_names, got_rows) in zip(want, got):
            assert want_rows, f"the plain database has no rows for {sql}"
            if want_names != got_names:
                differences.append(f"[{name}] {sql}: columns {got_names} / plain {want_names}")
            if len(want_rows) != len(got_rows):
                differences.append(f"[{name}] {sql}: {len(got_rows)} rows / plain {len(want_rows)}")
            for r, (want_row, got_row) in enumerate(zip(want_rows, got_rows)):
                for column, w, g in zip(want_names, want_row, got_row):
                    if w != g:
                        differences.append(f"[{name}] {sql}: row {r} {column}: {g} / plain {w}")
    for line in differences:
        print(line)
    if differences:
        sys.exit(1)
    print('{"keys": []}')


def inserts(columns, rows):
    """One INSERT per row of t_order(order_id, user_id, *columns), the row's values taken from
    each column's list; the rows spread over four users (so over the shards)."""
    return [
        f"INSERT INTO t_order VALUES ({i + 1}, {i % 4 + 1}, "
        + ", ".join(values[i] for _, _, values in columns) + ")"
        for i in range(rows)
    ]
