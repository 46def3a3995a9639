"""The comparison the *_types.py scripts share: each reader's results through Keyshard against
its results from the plain database, cell by cell. A reader is (name, read), read(target)
giving [(sql, column names, rows of cells)] for target "proxy" or "plain"."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# .ci/compat.sh puts node_modules beside the venv this script runs in.
NODE_PATH = os.path.join(os.path.dirname(sys.prefix), "node", "node_modules")
PGJDBC = "/usr/share/java/postgresql.jar"


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


def node_reader(driver, connections, queries):
    """A reader running types_reader.js with `driver` ("pg", "mysql2", "mysql2-prepared") on
    connections[target]; queries are [(sql, params)]."""
    def read(target):
        request = json.dumps({"connection": connections[target], "queries": queries})
        done = subprocess.run(["node", os.path.join(HERE, "types_reader.js"), driver],
                              input=request, capture_output=True, text=True,
                              env={**os.environ, "NODE_PATH": NODE_PATH})
        if done.returncode != 0:
            raise RuntimeError(f"node {driver} on {target}: {done.stderr}")
        return json.loads(done.stdout)
    return read


def pgjdbc_reader(urls, queries):
    """A reader running tests/jdbc/TypesReader.java with pgjdbc on the JDBC URL urls[target]
    (a URL, user, password triple); queries are [(sql, params)] with at most one integer."""
    classes = tempfile.mkdtemp(prefix="keyshard_types_jdbc")
    source = os.path.join(HERE, "..", "jdbc", "TypesReader.java")
    subprocess.run(["javac", "-cp", PGJDBC, "-d", classes, source], check=True)
    lines = "".join(sql.replace("%s", "?") + "".join(f"\t{p}" for p in params) + "\n"
                    for sql, params in queries)

    def read(target):
        done = subprocess.run(["java", "-cp", f"{classes}:{PGJDBC}", "TypesReader", *urls[target]],
                              input=lines, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"pgjdbc on {target}: {done.stderr}")
        return json.loads(done.stdout)
    return read
