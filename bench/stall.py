"""Point INSERT latency on one connection while another loads, reads and merges in bulk.

Run by bench/stall.sh: python stall.py postgres DSN ROWS, or python stall.py mysql PORT ROWS.
A writer process (its own interpreter: PyMySQL reading a million rows holds the GIL, which a
thread would measure instead of the proxy) sends a one-row INSERT every 5 ms on its own
connection; the main connection
meanwhile runs each bulk phase; each phase prints the INSERTs' median, 99th percentile and
worst latency.
"""
import multiprocessing, statistics, sys, time

KIND, WHERE, ROWS = sys.argv[1], sys.argv[2], int(sys.argv[3])

if KIND == "postgres":
    import psycopg
    def connect():
        return psycopg.connect(WHERE, autocommit=True)
else:
    import pymysql, pymysql.cursors
    def connect():
        return pymysql.connect(host="127.0.0.1", port=int(WHERE), user="root", password="root",
                               database="sharding_db", autocommit=True)

def execute(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)

def writer(stop, out):
    c = connect()
    lat = []
    while not stop.is_set():
        t = time.perf_counter()
        execute(c, "INSERT INTO t_order (user_id, status) VALUES (7, 'probe')")
        lat.append((time.perf_counter() - t) * 1000)
        time.sleep(0.005)
    out.put(lat)

def phase(name, work):
    stop, out = multiprocessing.Event(), multiprocessing.Queue()
    w = multiprocessing.Process(target=writer, args=(stop, out))
    w.start()
    time.sleep(0.5)
    t = time.perf_counter()
    work()
    took = time.perf_counter() - t
    stop.set()
    lat = out.get()
    w.join()
    lat.sort()
    p99 = lat[int(len(lat) * 0.99) - 1] if lat else 0
    print(f"{name}: {took:.1f} s; point INSERT latency over {len(lat)}: median {statistics.median(lat):.1f} ms, p99 {p99:.1f} ms, max {lat[-1]:.1f} ms", flush=True)

bulk = connect()
execute(bulk, "DROP TABLE IF EXISTS t_order")
execute(bulk, "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT, status VARCHAR(50))")
phase("idle", lambda: time.sleep(3))
def load():
    if KIND == "postgres":
        with bulk.cursor().copy("COPY t_order (user_id, status) FROM STDIN") as cp:
            for i in range(ROWS):
                cp.write_row((i % 1000, f"status {i % 7}"))
        return
    for start in range(0, ROWS, 1000):
        values = ", ".join(f"({i % 1000}, 'status {i % 7}')" for i in range(start, min(start + 1000, ROWS)))
        execute(bulk, f"INSERT INTO t_order (user_id, status) VALUES {values}")
phase(f"load of {ROWS} rows", load)
def read():
    n = 0
    # psycopg's server-side-less cursor and PyMySQL's unbuffered one both hand rows over as
    # the proxy sends them, so the first one's time is the proxy's first byte.
    t = time.perf_counter()
    cur = bulk.cursor() if KIND == "postgres" else bulk.cursor(pymysql.cursors.SSCursor)
    if KIND == "postgres":
        rows = cur.stream("SELECT order_id, user_id, status FROM t_order")
    else:
        cur.execute("SELECT order_id, user_id, status FROM t_order")
        rows = cur
    for _ in rows:
        if n == 0:
            print(f"  first row after {(time.perf_counter() - t) * 1000:.0f} ms", flush=True)
        n += 1
    cur.close()
    assert n >= ROWS
phase(f"SELECT of {ROWS} rows over 4 nodes", read)
def ordered():
    with bulk.cursor() as cur:
        cur.execute("SELECT order_id, user_id, status FROM t_order ORDER BY status, user_id LIMIT 10")
        cur.fetchall()
phase(f"ORDER BY over {ROWS} rows (merge)", ordered)
