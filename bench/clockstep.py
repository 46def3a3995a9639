"""Reads and INSERTs through one Keyshard while its clock steps back (issue 36's stall).

Run by bench/clockstep.sh: python clockstep.py DSN CLOCK_FILE STEP_SECONDS. Writer processes
insert one row at a time as fast as they can (RETURNING the key); a reader process sends a
point SELECT every 5 ms and times it; each is its own interpreter, so no GIL is measured. After
2 s the proxy's clock is stepped back STEP_SECONDS (libfaketime reads CLOCK_FILE); 2 s after
the clock has caught up again the run ends. Prints, per phase, the reads' median, 99th
percentile and worst latency and the INSERTs' count, errors and worst latency, then whether
any key was handed out twice or went backwards on one connection.
"""
import multiprocessing, statistics, sys, time

import psycopg

DSN, CLOCK_FILE, STEP = sys.argv[1], sys.argv[2], float(sys.argv[3])
WRITERS = 4
BEFORE, AFTER = 2.0, STEP + 2.0


def phase_of(start, at):
    return "before" if at < start + BEFORE else ("stepped" if at < start + BEFORE + STEP else "after")


def writer(start, stop, out):
    c = psycopg.connect(DSN, autocommit=True)
    rows = []  # (phase, latency ms, key or error)
    user = 0
    while not stop.is_set():
        user += 1
        t = time.perf_counter()
        try:
            key = c.execute(
                "INSERT INTO t_order (user_id, status) VALUES (%s, 'step') RETURNING order_id",
                (user,),
            ).fetchone()[0]
        except psycopg.Error as e:
            key = f"error: {str(e).splitlines()[0]}"
        now = time.time()
        if isinstance(key, int):
            # How far the key's time (SNOWFLAKE's default layout) is from this host's clock.
            key = (key, (key >> 22) + 1_477_958_400_000 - now * 1000)
        rows.append((phase_of(start, now), (time.perf_counter() - t) * 1000, key))
    out.put(("writer", rows))


def reader(start, stop, out):
    c = psycopg.connect(DSN, autocommit=True)
    rows = []
    while not stop.is_set():
        t = time.perf_counter()
        c.execute("SELECT status FROM t_order WHERE user_id = 1 AND order_id = 1").fetchall()
        rows.append((phase_of(start, time.time()), (time.perf_counter() - t) * 1000))
        time.sleep(0.005)
    out.put(("reader", rows))


def summary(latencies):
    latencies = sorted(latencies)
    if not latencies:
        return "none"
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return (f"{len(latencies)}, median {statistics.median(latencies):.2f} ms, "
            f"p99 {p99:.2f} ms, worst {latencies[-1]:.2f} ms")


def main():
    setup = psycopg.connect(DSN, autocommit=True)
    setup.execute("DROP TABLE IF EXISTS t_order")
    setup.execute("CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT, status VARCHAR(50))")
    with open(CLOCK_FILE, "w") as f:
        f.write("+0\n")
    start = time.time()
    stop = multiprocessing.Event()
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=writer, args=(start, stop, out)) for _ in range(WRITERS)]
    procs.append(multiprocessing.Process(target=reader, args=(start, stop, out)))
    for p in procs:
        p.start()
    time.sleep(BEFORE)
    with open(CLOCK_FILE, "w") as f:
        f.write(f"-{STEP}s\n")
    time.sleep(AFTER)
    stop.set()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    writes = [rows for kind, rows in results if kind == "writer"]
    reads = next(rows for kind, rows in results if kind == "reader")
    for name in ["before", "stepped", "after"]:
        print(f"{name}:")
        print(f"  reads: {summary([ms for ph, ms in reads if ph == name])}")
        done = [(ms, key) for rows in writes for ph, ms, key in rows if ph == name]
        errors = [key for ms, key in done if isinstance(key, str)]
        print(f"  INSERTs: {summary([ms for ms, key in done])}; {len(errors)} errors")
        lag = [key[1] for ms, key in done if not isinstance(key, str)]
        if lag:
            print(f"  keys' time minus the real clock: {min(lag):.0f} to {max(lag):.0f} ms")
        for message in sorted(set(errors))[:3]:
            print(f"    {errors.count(message)} x {message}")
    per_writer = [[k[0] for _, _, k in rows if not isinstance(k, str)] for rows in writes]
    keys = [k for mine in per_writer for k in mine]
    backwards = sum(1 for mine in per_writer for a, b in zip(mine, mine[1:]) if b <= a)
    print(f"keys: {len(keys)}, handed out twice: {len(keys) - len(set(keys))}, "
          f"going backwards on one connection: {backwards}")
    stored = setup.execute("SELECT COUNT(*) FROM t_order").fetchone()[0]
    print(f"rows stored: {stored}")


if __name__ == "__main__":
    main()
