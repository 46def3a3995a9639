#!/usr/bin/env bash
# What all-or-nothing costs: two-row INSERTs whose rows go to two data sources, through one
# Keyshard committing LOCAL and one committing XA, on MariaDB shards (sysbench) and on
# PostgreSQL shards (pgbench). The two alternate for `rounds` rounds, one line each, so that a
# slow moment of a shared machine does not land on one side only.
# Usage: bash bench/xa.sh [seconds] [clients] [rounds]
# Needs sysbench and pgbench (Debian packages), MariaDB and PostgreSQL (with
# max_prepared_transactions > 0) on this machine, as bench/run.sh and bench/pg-run.sh do.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-10}
CLIENTS=${2:-8}
ROUNDS=${3:-3}
MYSQL="mariadb --protocol=tcp -h127.0.0.1 -P3306 -uroot"
PSQL="psql -X -q -h 127.0.0.1 -p 5432 -U postgres"
TABLE="CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))"
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

for db in keyshard_xa_bench_0 keyshard_xa_bench_1; do
  $MYSQL -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
  $PSQL -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
done
cargo build --release --quiet

# serve <bench config> <port> <LOCAL|XA>: the bench configuration on the XA bench databases,
# listening on <port>, with a leased worker id (two instances share the repository).
serve() {
  local config="$TMP/$(basename "$1" .yaml)-$3.yaml"
  sed -e "s/keyshard_bench_/keyshard_xa_bench_/; s/listen: 127.0.0.1:[0-9]*/listen: 127.0.0.1:$2/" \
    -e '/worker-id:/d' "$1" > "$config"
  printf -- '- !TRANSACTION\n  defaultType: %s\n' "$3" >> "$config"
  ./target/release/keyshard serve --config "$config" > "$TMP/$2.log" 2>&1 &
  PIDS+=($!)
}
serve bench/keyshard-mariadb.yaml 3311 LOCAL
serve bench/keyshard-mariadb.yaml 3312 XA
serve bench/keyshard-postgres.yaml 6434 LOCAL
serve bench/keyshard-postgres.yaml 6435 XA
for _ in $(seq 1 50); do
  mariadb --protocol=tcp -h127.0.0.1 -P3312 -uroot -proot -e "SELECT 1" sharding_db >/dev/null 2>&1 \
    && PGPASSWORD=root psql -X -h 127.0.0.1 -p 6435 -U root -d sharding_db -c "SELECT 1" >/dev/null 2>&1 \
    && break
  sleep 0.2
done
mariadb --protocol=tcp -h127.0.0.1 -P3311 -uroot -proot sharding_db -e "$TABLE"
PGPASSWORD=root psql -X -q -h 127.0.0.1 -p 6434 -U root -d sharding_db -c "$TABLE"

mysql_tps() {
  sysbench bench/pair.lua --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" \
    --mysql-user=root --mysql-password=root --mysql-db=sharding_db \
    --threads="$CLIENTS" --time="$SECONDS_EACH" --report-interval=0 run \
    | sed -n 's/.*queries:.*(\(.*\) per sec.)/\1/p' | awk '{printf "%.0f", $1}'
}
pg_tps() {
  PGPASSWORD=root pgbench -n -f bench/pair.sql -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" \
    -h 127.0.0.1 -p "$1" -U root sharding_db 2>&1 | awk '/^tps/ {printf "%.0f", $3}'
}
echo "statements/s (2 rows each, one per data source), $CLIENTS clients"
echo "round  MariaDB LOCAL  MariaDB XA  XA/LOCAL  PostgreSQL LOCAL  PostgreSQL XA  XA/LOCAL"
for round in $(seq 1 "$ROUNDS"); do
  my_local=$(mysql_tps 3311)
  my_xa=$(mysql_tps 3312)
  pg_local=$(pg_tps 6434)
  pg_xa=$(pg_tps 6435)
  awk -v r="$round" -v a="$my_local" -v b="$my_xa" -v c="$pg_local" -v d="$pg_xa" \
    'BEGIN { printf "%5s  %13s  %10s  %7.1f%%  %16s  %13s  %7.1f%%\n", r, a, b, 100 * b / a, c, d, 100 * d / c }'
done
