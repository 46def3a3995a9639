#!/usr/bin/env bash
# No client stalls another: a point INSERT's latency on one connection while another
# connection loads, reads and merges a million rows through the same Keyshard.
#
#   bash bench/stall.sh [rows] [postgres|mysql]   (default 1000000 postgres)
#
# Keyshard (release build, the configuration's default runtime: one thread) over two
# PostgreSQL shards (COPY to load) or two MariaDB ones (1,000-row INSERTs, an unbuffered
# cursor to read), driven by bench/stall.py with psycopg 3 or PyMySQL (the compatibility
# suite's venv, made by .ci/compat.sh, or any python3 that imports them). Issue 39's goal: the
# worst INSERT within 50 ms in every phase. Its ports (6634, 3634) and databases (ks_stall_*)
# are its own. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
KIND=${2:-postgres}
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
for db in ks_stall_0 ks_stall_1; do
  if [ "$KIND" = postgres ]; then
    psql -X -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  else
    mariadb -h 127.0.0.1 -u root -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
  fi
done
if [ "$KIND" = postgres ]; then
  sed -e 's/127.0.0.1:6433/127.0.0.1:6634/' -e 's/keyshard_bench_/ks_stall_/g' \
    bench/keyshard-postgres.yaml > "$WORK/keyshard.yaml"
  WHERE="host=127.0.0.1 port=6634 user=root password=root dbname=sharding_db"
  PROBE="import psycopg; psycopg.connect('$WHERE')"
else
  sed -e 's/127.0.0.1:3310/127.0.0.1:3634/' -e 's/keyshard_bench_/ks_stall_/g' \
    bench/keyshard-mariadb.yaml > "$WORK/keyshard.yaml"
  WHERE=3634
  PROBE="import pymysql; pymysql.connect(host='127.0.0.1', port=3634, user='root', password='root')"
fi
"$KEYSHARD_BIN" serve --config "$WORK/keyshard.yaml" > "$WORK/keyshard.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do
  "$PYTHON" -c "$PROBE" 2>/dev/null && break
  sleep 0.2
done
"$PYTHON" bench/stall.py "$KIND" "$WHERE" "$ROWS"
echo "Keyshard's peak resident memory: $(awk '/VmHWM/ {print $2, $3}' "/proc/$PID/status")"
