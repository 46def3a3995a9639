#!/usr/bin/env bash
# Keyshard's peak resident memory per row of multi-row INSERTs it has not seen before.
#
#   bash bench/memory.sh [rows]   (default 4000)
#
# On each frontend: Keyshard over two shards, one small INSERT to warm up, then three INSERTs
# of `rows`, rows-1 and rows-2 rows (three statement texts, each new to Keyshard), and the
# growth of its peak resident set (VmHWM) over them, per row and against the SQL's size.
# Needs PostgreSQL on 127.0.0.1:5432 and MariaDB on 127.0.0.1:3306 as bench/cpu.sh does; its
# ports (6633, 3510) and databases (ks_mem_*) are its own. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-4000}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
# KEYSHARD_BIN=path measures that binary (an earlier build, say) instead of building this tree.
if [ -z "${KEYSHARD_BIN:-}" ]; then
  cargo build --release -q -p keyshard
  KEYSHARD_BIN=${CARGO_TARGET_DIR:-target}/release/keyshard
fi

peak_kib() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
insert() { # rows
  printf 'INSERT INTO t_order (user_id, status) VALUES '
  seq 1 "$1" | awk '{printf "%s(%d, '"'"'new'"'"')", (NR > 1 ? ", " : ""), $1}'
  echo ';'
}

# measure NAME YAML FROM-PORT TO-PORT CLIENT…: the client runs the SQL it reads on stdin.
measure() {
  local name=$1 yaml=$2 from=$3 to=$4
  shift 4
  sed -e "s/127.0.0.1:$from/127.0.0.1:$to/" -e 's/keyshard_bench_/ks_mem_/g' "$yaml" > "$WORK/$name.yaml"
  "$KEYSHARD_BIN" serve --config "$WORK/$name.yaml" > "$WORK/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 100); do echo "SELECT 1;" | "$@" >/dev/null 2>&1 && break; sleep 0.2; done
  echo "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32));" | "$@" >/dev/null
  insert 10 | "$@" >/dev/null
  local before bytes=0
  before=$(peak_kib "$pid")
  for n in 0 1 2; do
    insert $((ROWS - n)) > "$WORK/bulk.sql"
    bytes=$(stat -c %s "$WORK/bulk.sql")
    "$@" < "$WORK/bulk.sql" >/dev/null
  done
  local grown=$(($(peak_kib "$pid") - before))
  awk -v name="$name" -v kib="$grown" -v rows="$ROWS" -v bytes="$bytes" 'BEGIN {
    printf "%s: %d rows (%d bytes of SQL): peak RSS grew %d KiB, %.0f bytes per row, %.1f× the SQL\n",
      name, rows, bytes, kib, kib * 1024 / rows, kib * 1024 / bytes }'
  kill "$pid"
}

if pg_isready -q -h 127.0.0.1 -p 5432; then
  for db in ks_mem_0 ks_mem_1; do
    psql -X -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  done
  PGPASSWORD=root measure PostgreSQL bench/keyshard-postgres.yaml 6433 6633 \
    psql -X -q -h 127.0.0.1 -p 6633 -U root -d sharding_db -v ON_ERROR_STOP=1
fi
if mariadb-admin --protocol=tcp -h127.0.0.1 -uroot ping >/dev/null 2>&1; then
  mariadb --protocol=tcp -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS ks_mem_0; CREATE DATABASE ks_mem_0;
    DROP DATABASE IF EXISTS ks_mem_1; CREATE DATABASE ks_mem_1;"
  measure MySQL bench/keyshard-mariadb.yaml 3310 3510 \
    mariadb --protocol=tcp -h127.0.0.1 -P3510 -uroot -proot sharding_db
fi
