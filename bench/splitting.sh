#!/usr/bin/env bash
# What read/write splitting costs a point read: Keyshard's CPU per point SELECT by key through
# a read/write group with one caught-up replica, against the same reads of the primary without
# splitting.
#
#   bash bench/splitting.sh [statements per side and round] [clients] [rounds]   (default 12000 4 3)
#
# Two Keyshard instances over the same rows (users 1–1000, twenty orders each, in t_order_0/1
# of one database on the primary of .ci/replicas.sh): one whose data source is a group (the
# primary on 5442, its standby on 5443: the reads go to the standby), one whose data source is
# the primary, no group. pgbench sends bench/select.sql to each in turn, alternating
# sides round by round, with -M simple and -M prepared; what is compared is each proxy
# process's CPU (user + system ticks from /proc/PID/stat) per statement. MySQL: the same with
# sysbench (bench/select.lua) over the MariaDB pair on 3316/3317.
#
# CALLGRIND=1 counts instructions instead (valgrind's callgrind, one client, one round):
# deterministic where CPU ticks on a shared machine are not.
#
# Needs .ci/replicas.sh's servers, pgbench and sysbench (and valgrind for CALLGRIND=1). Ports 6543/3430 and 6544/3431 and the
# database ks_split are its own. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${1:-12000}
CLIENTS=${2:-4}
ROUNDS=${3:-3}
HZ=$(getconf CLK_TCK)
CALLGRIND=${CALLGRIND:-0}
if [ "$CALLGRIND" = 1 ]; then CLIENTS=1 ROUNDS=1; fi
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
keyshard_bin
bash .ci/replicas.sh

# --- rows, on each primary (the replicas copy them) ------------------------------------------
# t_order's rows in t_order_<order_id % 2>, as the table strategy puts them, through a
# scratch table.
table='CREATE TABLE %s (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16))'
read_rows_sql t_all_rows > "$WORK/rows.sql"
split_rows="$(printf "$table" t_order_0); $(printf "$table" t_order_1);
INSERT INTO t_order_0 SELECT * FROM t_all_rows WHERE order_id % 2 = 0;
INSERT INTO t_order_1 SELECT * FROM t_all_rows WHERE order_id % 2 = 1;"
psql -q -h 127.0.0.1 -p 5442 -U postgres -c 'DROP DATABASE IF EXISTS ks_split' -c 'CREATE DATABASE ks_split'
psql -q -h 127.0.0.1 -p 5442 -U postgres -d ks_split -c "$(printf "$table" t_all_rows)" \
  -f "$WORK/rows.sql" -c "$split_rows"
mariadb --protocol=tcp -h127.0.0.1 -P3316 -uroot -e "DROP DATABASE IF EXISTS ks_split;
  CREATE DATABASE ks_split; USE ks_split; $(printf "$table" t_all_rows);
  SOURCE $WORK/rows.sql; $split_rows"
sleep 2

# --- the two proxies per database kind -------------------------------------------------------
config() { # kind, port, split (1|0)
  local kind=$1 port=$2 split=$3 primary replica listen
  case $kind in
    pg) primary=postgres://postgres@127.0.0.1:5442/ks_split replica=postgres://postgres@127.0.0.1:5443/ks_split listen=postgres ;;
    my) primary=mysql://root@127.0.0.1:3316/ks_split replica=mysql://root@127.0.0.1:3317/ks_split listen=mysql ;;
  esac
  cat <<YAML
databaseName: sharding_db
server:
  $listen: {listen: 127.0.0.1:$port}
authority:
  users:
    - {user: root, password: root}
mode: {type: Standalone, repository: {type: JDBC, props: {data-source: ds}}}
YAML
  if [ "$split" = 1 ]; then
    cat <<YAML
dataSources:
  write_ds: {url: '$primary', maxPoolSize: 8}
  read_ds: {url: '$replica', maxPoolSize: 8}
rules:
- !READWRITE_SPLITTING
  dataSourceGroups:
    ds: {writeDataSourceName: write_ds, readDataSourceNames: [read_ds]}
YAML
  else
    cat <<YAML
dataSources:
  ds: {url: '$primary', maxPoolSize: 8}
rules:
YAML
  fi
  cat <<YAML
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds.t_order_\${0..1}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: t_mod}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    t_mod: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE}
YAML
}
start() { # kind, port, split: prints the pid
  config "$1" "$2" "$3" > "$WORK/$1-$3.yaml"
  if [ "$CALLGRIND" = 1 ]; then
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$1-$3.%p" --dump-instr=no \
      "$KEYSHARD_BIN" serve --config "$WORK/$1-$3.yaml" > "$WORK/$1-$3.log" 2>&1 &
  else
    "$KEYSHARD_BIN" serve --config "$WORK/$1-$3.yaml" > "$WORK/$1-$3.log" 2>&1 &
  fi
  echo $!
}
PG_SPLIT=$(start pg 6543 1); PG_PLAIN=$(start pg 6544 0)
MY_SPLIT=$(start my 3430 1); MY_PLAIN=$(start my 3431 0)
PIDS+=("$PG_SPLIT" "$PG_PLAIN" "$MY_SPLIT" "$MY_PLAIN")
sleep $([ "$CALLGRIND" = 1 ] && echo 20 || echo 3)

ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
per_statement() { # pid, command…: µs of the pid's CPU (or instructions) per statement
  local pid=$1 t0 t1
  shift
  if [ "$CALLGRIND" = 1 ]; then
    callgrind_control -z "$pid" > /dev/null 2>&1
    "$@" > /dev/null 2>&1
    callgrind_control -d "$pid" > /dev/null 2>&1
    awk -v n="$N" '/^(summary|totals):/ {printf "%.0f", $2 / n; exit}' "$(ls -t "$WORK"/cg.*."$pid".* | head -n 1)"
    return
  fi
  t0=$(ticks "$pid")
  "$@" > /dev/null 2>&1
  t1=$(ticks "$pid")
  awk -v t="$((t1 - t0))" -v n="$N" -v hz="$HZ" 'BEGIN {printf "%.1f", t * 1e6 / hz / n}'
}
pg_reads() { # port, mode
  PGPASSWORD=root pgbench -n -h 127.0.0.1 -p "$1" -U root -M "$2" -f bench/select.sql \
    -c "$CLIENTS" -j 2 -t $((N / CLIENTS)) sharding_db
}
my_reads() { # port, prepared (on|off)
  sysbench bench/select.lua --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" \
    --mysql-user=root --mysql-password=root --mysql-db=sharding_db --threads="$CLIENTS" \
    --events="$N" --time=0 --db-ps-mode="$([ "$2" = on ] && echo auto || echo disable)" run
}
compare() { # name, split pid, plain pid, command (with PORT for the port)…
  local name=$1 split=$2 plain=$3 a b sa=0 sb=0
  shift 3
  local split_port=${SPLIT_PORT} plain_port=${PLAIN_PORT}
  "$@" "$split_port" > /dev/null 2>&1; "$@" "$plain_port" > /dev/null 2>&1 # warm-up
  local unit=µs; [ "$CALLGRIND" = 1 ] && unit=Ir
  printf '%-36s %5s %12s %12s %7s\n' "$name" round "group $unit" "plain $unit" ratio
  for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then
      a=$(per_statement "$split" "$@" "$split_port"); b=$(per_statement "$plain" "$@" "$plain_port")
    else
      b=$(per_statement "$plain" "$@" "$plain_port"); a=$(per_statement "$split" "$@" "$split_port")
    fi
    sa=$(awk -v x="$sa" -v y="$a" 'BEGIN {print x + y}'); sb=$(awk -v x="$sb" -v y="$b" 'BEGIN {print x + y}')
    awk -v r="$round" -v a="$a" -v b="$b" 'BEGIN {printf "%-36s %5s %12.1f %12.1f %7.2f\n", "", r, a, b, a / b}'
  done
  awk -v a="$sa" -v b="$sb" -v n="$ROUNDS" 'BEGIN {printf "%-36s %5s %12.1f %12.1f %7.2f\n\n", "", "all", a / n, b / n, a / b}'
}
pg_simple() { pg_reads "$1" simple; }
pg_prepared() { pg_reads "$1" prepared; }
my_text() { my_reads "$1" off; }
my_prepared() { my_reads "$1" on; }
SPLIT_PORT=6543 PLAIN_PORT=6544
compare "PG point SELECT -M simple" "$PG_SPLIT" "$PG_PLAIN" pg_simple
compare "PG point SELECT -M prepared" "$PG_SPLIT" "$PG_PLAIN" pg_prepared
SPLIT_PORT=3430 PLAIN_PORT=3431
compare "MySQL point SELECT text" "$MY_SPLIT" "$MY_PLAIN" my_text
compare "MySQL point SELECT prepared" "$MY_SPLIT" "$MY_PLAIN" my_prepared
