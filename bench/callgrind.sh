#!/usr/bin/env bash
# Instructions Keyshard executes per statement, counted by callgrind: unmoved by a shared
# machine's speed, where wall time and even CPU ticks are not, so each optimisation can be
# weighed. Not exact: one build's counts moved by up to ~4 % between runs hours apart (the
# runtime's timers and scheduling), so compare two builds run back to back.
#
#   bash bench/callgrind.sh [statements] [case…]     (default 2000; all cases)
#   cases: pg-simple pg-extended pg-prepared pg-select pg-select-extended pg-select-prepared
#          pg-merge pg-one pg-merge-prepared pg-one-prepared pg-wide mysql-text
#          mysql-prepared mysql-select mysql-merge mysql-one mysql-wide pg-bulk mysql-bulk
#
# The select cases send a point SELECT by both sharding columns (one node, one row found);
# pg-merge sends an ORDER BY … LIMIT 10 over the two nodes of one data source (a merge of ten
# rows from each), as does mysql-merge; pg-one and mysql-one send the same read of t_recent,
# which one node answers (ten of its twenty rows); pg-wide and mysql-wide the merge's read over
# t_wide, whose rows have 20 columns of mixed types (decimals, floats, timestamps, JSON, UUID …);
# pg-merge-prepared and pg-one-prepared the merge's and the one-node read as named prepared
# statements (pgbench -M prepared), their user id a parameter.
# The bulk cases send a 1,000-row INSERT (as bench/cpu.sh does), BULK_N of them (default 50)
# after 20 for warm-up, and also print instructions per row.
#
# Keyshard runs under callgrind with two shards; one client sends a warm-up (pools filled,
# shapes learnt), the counters are zeroed, the client sends `statements` single-row INSERTs
# without the key column, and the counters are dumped: the total divided by the statements
# is the whole process's cost per statement (wire decoding, session, router, keygen, sqlx,
# reply encoding, the runtime, system call wrappers). The dumps stay in
# ${CALLGRIND_OUT:-/tmp/keyshard-callgrind} for callgrind_annotate.
# Needs valgrind, pgbench and sysbench (Debian packages), PostgreSQL and MariaDB as for
# bench/cpu.sh. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${1:-2000}
shift || true
CASES=${*:-pg-simple pg-extended pg-prepared pg-select pg-select-extended pg-select-prepared pg-merge pg-one pg-merge-prepared pg-one-prepared pg-wide mysql-text mysql-prepared mysql-select mysql-merge mysql-one mysql-wide pg-bulk mysql-bulk}
BULK_N=${BULK_N:-50}
OUT=${CALLGRIND_OUT:-/tmp/keyshard-callgrind}
mkdir -p "$OUT"
WORK=$(mktemp -d)
KS=
cleanup() {
  [ -n "$KS" ] && kill "$KS" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# KEYSHARD_BIN=path measures that binary (an earlier build, say) instead of building this tree.
if [ -z "${KEYSHARD_BIN:-}" ]; then
  cargo build --release --quiet --bin keyshard
  KEYSHARD_BIN=${CARGO_TARGET_DIR:-target}/release/keyshard
fi

psql -X -q -h 127.0.0.1 -p 5432 -U postgres -d postgres -c "SET client_min_messages = warning" \
  -c "DROP DATABASE IF EXISTS ks_cg_0 WITH (FORCE)" -c "CREATE DATABASE ks_cg_0" \
  -c "DROP DATABASE IF EXISTS ks_cg_1 WITH (FORCE)" -c "CREATE DATABASE ks_cg_1"
mariadb --protocol=tcp -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS ks_cg_0; CREATE DATABASE ks_cg_0;
  DROP DATABASE IF EXISTS ks_cg_1; CREATE DATABASE ks_cg_1;"
sed -e 's/127.0.0.1:6433/127.0.0.1:6633/' -e 's/keyshard_bench_/ks_cg_/g' bench/keyshard-postgres.yaml > "$WORK/pg.yaml"
sed -e 's/127.0.0.1:3310/127.0.0.1:3510/' -e 's/keyshard_bench_/ks_cg_/g' bench/keyshard-mariadb.yaml > "$WORK/my.yaml"
VALUES=$(seq 1 1000 | awk '{printf "%s(%d, '"'"'new'"'"')", (NR > 1 ? ", " : ""), $1}')
echo "INSERT INTO t_order (user_id, status) VALUES $VALUES;" > "$WORK/bulk.sql"
cat > "$WORK/bulk.lua" <<LUA
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  sql = "INSERT INTO t_order (user_id, status) VALUES $VALUES"
end
function event()
  con:query(sql)
end
LUA

# start CONFIG NAME: Keyshard under callgrind, counting nothing until told.
start() {
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$2.%p" --dump-instr=no --compress-strings=no --compress-pos=no \
    "$KEYSHARD_BIN" serve --config "$1" > "$WORK/$2.log" 2>&1 &
  KS=$!
}
# count NAME COMMAND…: warm-up with COMMAND $WARM (300), zero, COMMAND $COUNT (N), dump;
# prints Ir / statement.
count() {
  local name=$1 n=${COUNT:-$N}
  shift
  "$@" "${WARM:-300}" >/dev/null
  callgrind_control -z "$KS" >/dev/null 2>&1
  "$@" "$n" >/dev/null
  callgrind_control -d "$name" "$KS" >/dev/null 2>&1
  local dump total
  # Dumps are named after the process: <start name>.<pid>.<dump number>.
  dump=$(ls -t "$OUT"/*."$KS".* | head -n 1)
  total=$(awk '/^(summary|totals):/ {print $2; exit}' "$dump")
  printf '%-16s %10d instructions per statement (%s)\n' "$name" "$((total / n))" "$dump"
  if [[ $name == *-bulk ]]; then
    printf '%-16s %10d instructions per row\n' "$name" "$((total / n / 1000))"
  fi
}
stop() { kill "$KS"; wait "$KS" 2>/dev/null || true; KS=; }

pg_up() {
  for _ in $(seq 1 300); do
    PGPASSWORD=root psql -X -h 127.0.0.1 -p 6633 -U root -d sharding_db -c "SELECT 1" >/dev/null 2>&1 && return
    sleep 0.2
  done
}
my_up() {
  for _ in $(seq 1 300); do
    mariadb --protocol=tcp -h127.0.0.1 -P3510 -uroot -proot -e "SELECT 1" sharding_db >/dev/null 2>&1 && return
    sleep 0.2
  done
}
pgb() { PGPASSWORD=root pgbench -n -f "${SCRIPT:-bench/insert.sql}" -M "$1" -c 1 -t "$2" -h 127.0.0.1 -p 6633 -U root sharding_db; }
sb() {
  sysbench "$1" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3510 --mysql-user=root \
    --mysql-password=root --mysql-db=sharding_db --threads=1 --time=0 --events="$2" run
}
{ read_rows_sql t_order; read_rows_sql t_recent; read_rows_sql t_wide; } > "$WORK/read_rows.sql"
CREATE="CREATE TABLE IF NOT EXISTS t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))"
CREATE_RECENT="CREATE TABLE IF NOT EXISTS t_recent (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))"
# t_wide: t_order's three columns and 17 more of mixed types, filled by their defaults.
CREATE_WIDE_PG="CREATE TABLE IF NOT EXISTS t_wide (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
  status VARCHAR(32), price NUMERIC(10,2) DEFAULT 12.34, qty INT DEFAULT 3, weight FLOAT8 DEFAULT 1.5, \
  ratio FLOAT4 DEFAULT 0.25, paid BOOLEAN DEFAULT true, created_at TIMESTAMPTZ DEFAULT '2024-02-29 12:34:56+00', \
  updated_at TIMESTAMP DEFAULT '2024-03-01 08:00:00.5', due DATE DEFAULT '2024-03-31', \
  slot TIME DEFAULT '12:30:00', note TEXT DEFAULT 'a note of some length', code CHAR(8) DEFAULT 'ABCDEFGH', \
  doc JSONB DEFAULT '{\"a\": 1, \"b\": [true]}', ref UUID DEFAULT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', \
  big BIGINT DEFAULT 9007199254740993, small SMALLINT DEFAULT 7, tags VARCHAR(64) DEFAULT 'x,y', \
  ip INET DEFAULT '10.0.0.1')"
CREATE_WIDE_MY="CREATE TABLE IF NOT EXISTS t_wide (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
  status VARCHAR(32), price DECIMAL(10,2) DEFAULT 12.34, qty INT DEFAULT 3, weight DOUBLE DEFAULT 1.5, \
  ratio FLOAT DEFAULT 0.25, paid BOOLEAN DEFAULT true, created_at DATETIME(6) DEFAULT '2024-02-29 12:34:56', \
  updated_at TIMESTAMP(3) NULL DEFAULT '2024-03-01 08:00:00.5', due DATE DEFAULT '2024-03-31', \
  slot TIME DEFAULT '12:30:00', note TEXT DEFAULT 'a note of some length', code CHAR(8) DEFAULT 'ABCDEFGH', \
  doc JSON DEFAULT '{\"a\": 1, \"b\": [true]}', ref CHAR(36) DEFAULT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', \
  big BIGINT DEFAULT 9007199254740993, small SMALLINT DEFAULT 7, tags VARCHAR(64) DEFAULT 'x,y', \
  ip VARBINARY(16) DEFAULT 0x0a000001)"

if [[ " $CASES " == *" pg-"* ]]; then
  rm -f "$OUT"/pg.*
  start "$WORK/pg.yaml" pg
  pg_up
  PGPASSWORD=root psql -X -q -h 127.0.0.1 -p 6633 -U root -d sharding_db -c "$CREATE" -c "$CREATE_RECENT" \
    -c "$CREATE_WIDE_PG" -f "$WORK/read_rows.sql"
  for mode in simple extended prepared; do
    [[ " $CASES " == *" pg-$mode "* ]] && count "pg-$mode" pgb $mode
  done
  [[ " $CASES " == *" pg-select "* ]] && SCRIPT=bench/select.sql count pg-select pgb simple
  # The point SELECT over the extended protocol: unnamed (Parse/Bind/Describe/Execute each
  # time) and named prepared (issue 38).
  for mode in extended prepared; do
    [[ " $CASES " == *" pg-select-$mode "* ]] && SCRIPT=bench/select.sql count "pg-select-$mode" pgb $mode
  done
  [[ " $CASES " == *" pg-merge "* ]] && SCRIPT=bench/merge.sql count pg-merge pgb simple
  [[ " $CASES " == *" pg-one "* ]] && SCRIPT=bench/recent.sql count pg-one pgb simple
  # The same two reads as named prepared statements with a parameter (what drivers send).
  [[ " $CASES " == *" pg-merge-prepared "* ]] && SCRIPT=bench/merge.sql count pg-merge-prepared pgb prepared
  [[ " $CASES " == *" pg-one-prepared "* ]] && SCRIPT=bench/recent.sql count pg-one-prepared pgb prepared
  [[ " $CASES " == *" pg-wide "* ]] && SCRIPT=bench/wide.sql count pg-wide pgb simple
  [[ " $CASES " == *" pg-bulk "* ]] && SCRIPT=$WORK/bulk.sql WARM=20 COUNT=$BULK_N count pg-bulk pgb simple
  stop
fi
if [[ " $CASES " == *" mysql-"* ]]; then
  rm -f "$OUT"/mysql.*
  start "$WORK/my.yaml" mysql
  my_up
  mariadb --protocol=tcp -h127.0.0.1 -P3510 -uroot -proot sharding_db -e "$CREATE; $CREATE_RECENT; $CREATE_WIDE_MY"
  mariadb --protocol=tcp -h127.0.0.1 -P3510 -uroot -proot sharding_db < "$WORK/read_rows.sql"
  [[ " $CASES " == *" mysql-text "* ]] && count mysql-text sb bench/insert.lua
  [[ " $CASES " == *" mysql-prepared "* ]] && count mysql-prepared sb bench/prepared_insert.lua
  [[ " $CASES " == *" mysql-select "* ]] && count mysql-select sb bench/select.lua
  [[ " $CASES " == *" mysql-merge "* ]] && count mysql-merge sb bench/merge.lua
  [[ " $CASES " == *" mysql-one "* ]] && count mysql-one sb bench/recent.lua
  [[ " $CASES " == *" mysql-wide "* ]] && count mysql-wide sb bench/wide.lua
  [[ " $CASES " == *" mysql-bulk "* ]] && WARM=20 COUNT=$BULK_N count mysql-bulk sb "$WORK/bulk.lua"
  stop
fi
