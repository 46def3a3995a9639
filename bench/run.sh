#!/usr/bin/env bash
# Insert throughput through Keyshard (two MariaDB shards) against the same inserts sent straight
# to MariaDB into one AUTO_INCREMENT table. Usage: bash bench/run.sh [seconds] [threads] [rounds]
# The runs alternate for `rounds` rounds (default 3), so that a slow moment of a shared machine
# (disk flushes, other processes) does not land on one side only; each round prints one line.
# When HAProxy is installed, a third run goes to the direct table through it, as a plain TCP
# relay: the cost of one proxy hop that parses nothing (what pgbouncer is for bench/pg-run.sh).
# Needs sysbench (Debian package) and MariaDB on 127.0.0.1:3306 (root, no password).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
SECONDS_EACH=${1:-20}
THREADS=${2:-8}
ROUNDS=${3:-3}
MYSQL="mariadb --protocol=tcp -h127.0.0.1 -P3306 -uroot"

$MYSQL -e "DROP DATABASE IF EXISTS keyshard_bench_direct; CREATE DATABASE keyshard_bench_direct;
  CREATE TABLE keyshard_bench_direct.t_order (order_id BIGINT AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32));
  DROP DATABASE IF EXISTS keyshard_bench_0; CREATE DATABASE keyshard_bench_0;
  DROP DATABASE IF EXISTS keyshard_bench_1; CREATE DATABASE keyshard_bench_1;"

cargo build --release --quiet
./target/release/keyshard serve --config bench/keyshard-mariadb.yaml > /tmp/keyshard-bench.log 2>&1 &
KEYSHARD=$!
HAPROXY_DIR=$(mktemp -d)
cleanup() {
  kill "$KEYSHARD" 2>/dev/null || true
  [ -f "$HAPROXY_DIR/haproxy.pid" ] && kill "$(cat "$HAPROXY_DIR/haproxy.pid")" 2>/dev/null || true
  rm -rf "$HAPROXY_DIR"
}
trap cleanup EXIT
if command -v haproxy >/dev/null; then
  haproxy_relay "$HAPROXY_DIR" 3320
fi
for _ in $(seq 1 50); do
  mariadb --protocol=tcp -h127.0.0.1 -P3310 -uroot -proot -e "SELECT 1" sharding_db >/dev/null 2>&1 && break
  sleep 0.2
done
mariadb --protocol=tcp -h127.0.0.1 -P3310 -uroot -proot sharding_db \
  -e "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))"

run() {
  sysbench bench/insert.lua --db-driver=mysql --mysql-host=127.0.0.1 "$@" \
    --threads="$THREADS" --time="$SECONDS_EACH" --report-interval=0 --percentile=95 run
}
figures() {
  local out tps p95
  out=$(run "$@")
  tps=$(echo "$out" | sed -n 's/.*queries:.*(\(.*\) per sec.)/\1/p')
  p95=$(echo "$out" | awk '/95th percentile/ {print $3}')
  echo "$tps $p95"
}
echo "round  direct tps (p95 ms)  HAProxy tps (p95 ms)  Keyshard tps (p95 ms)  Keyshard/direct  HAProxy/direct"
for round in $(seq 1 "$ROUNDS"); do
  read -r direct direct_p95 < <(figures --mysql-port=3306 --mysql-user=root --mysql-db=keyshard_bench_direct)
  relayed=- relayed_p95=-
  if [ -f "$HAPROXY_DIR/haproxy.pid" ]; then
    read -r relayed relayed_p95 < <(figures --mysql-port=3320 --mysql-user=root --mysql-db=keyshard_bench_direct)
  fi
  read -r proxied proxied_p95 < <(figures --mysql-port=3310 --mysql-user=root --mysql-password=root --mysql-db=sharding_db)
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-") print "-"; else printf "%.1f%%", 100 * a / b }'; }
  printf "%5s  %10s (%5s)  %10s (%5s)   %10s (%5s)  %15s  %14s\n" "$round" "$direct" "$direct_p95" \
    "$relayed" "$relayed_p95" "$proxied" "$proxied_p95" "$(ratio "$proxied" "$direct")" "$(ratio "$relayed" "$direct")"
done
