#!/usr/bin/env bash
# A backward clock step under load: a reader's latency and INSERTs' errors on the same
# Keyshard while its clock steps back (issue 36: no generator may stall the proxy).
#
#   bash bench/clockstep.sh [step-seconds]   (default 5)
#
# Keyshard (release build, one runtime thread) over two PostgreSQL shards, its SNOWFLAKE
# generator tolerating steps of 10 s, runs under libfaketime (Debian's `faketime` package),
# whose offset bench/clockstep.py changes from +0 to -STEP seconds mid-run; only the realtime
# clock moves (the monotonic one, which leases and timeouts use, does not). Its port (6635) and
# databases (ks_clock_*) are its own. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
STEP=${1:-5}
FAKETIME_LIB=${FAKETIME_LIB:-/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1}
[ -e "$FAKETIME_LIB" ] || { echo "needs libfaketime (apt-get install faketime)"; exit 1; }
WORK=$(mktemp -d)
PID=
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
source bench/lib.sh
keyshard_bin
bench_python
for db in ks_clock_0 ks_clock_1; do
  psql -X -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
done
sed -e 's/127.0.0.1:6433/127.0.0.1:6635/' -e 's/keyshard_bench_/ks_clock_/g' \
  -e 's/max-vibration-offset: 3/max-vibration-offset: 3\n        max-tolerate-time-difference-milliseconds: 10000/' \
  bench/keyshard-postgres.yaml > "$WORK/keyshard.yaml"
grep -q "max-tolerate-time-difference-milliseconds: 10000" "$WORK/keyshard.yaml"
echo "+0" > "$WORK/clock"
LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$WORK/clock" FAKETIME_CACHE_DURATION=1 \
  FAKETIME_DONT_FAKE_MONOTONIC=1 \
  "$KEYSHARD_BIN" serve --config "$WORK/keyshard.yaml" > "$WORK/keyshard.log" 2>&1 &
PID=$!
WHERE="host=127.0.0.1 port=6635 user=root password=root dbname=sharding_db"
for _ in $(seq 1 100); do
  "$PYTHON" -c "import psycopg; psycopg.connect('$WHERE')" 2>/dev/null && break
  sleep 0.2
done
"$PYTHON" bench/clockstep.py "$WHERE" "$WORK/clock" "$STEP"
echo "Keyshard's log, warnings and errors:"
grep -iE "warn|error" "$WORK/keyshard.log" | head -5 || true
