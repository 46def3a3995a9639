#!/usr/bin/env bash
# Proxy CPU per statement: Keyshard next to the proxies people put in front of one database.
#
#   bash bench/cpu.sh [statements per side and round] [clients] [rounds]   (default 12000 4 3)
#
# Each case sends the same fixed number of statements through Keyshard (two shards, keys
# generated) and through a reference proxy to one plain table, alternating sides for `rounds`
# rounds (a slow moment of a shared machine then does not land on one side only). What is
# compared is the proxy process's CPU (user + system ticks from /proc/PID/stat over the run;
# the user share is printed apart) divided by the statements sent, not wall time: on a small
# machine throughput is capped by the extra loopback hop either way, while CPU tells how many
# cores a fleet needs.
#
#   PostgreSQL, against pgbouncer (transaction pooling):  pgbench -M simple and -M extended
#     INSERT without the key column, and a point SELECT by both sharding columns (also
#     -M extended and -M prepared).
#     pgbench -M prepared (named statements) against pgbouncer in session pooling, since
#     pgbouncer before 1.21 cannot keep prepared statements under transaction pooling.
#   MySQL, against HAProxy (TCP relay, nbthread 1): sysbench INSERT and a point SELECT, each as
#     text (COM_QUERY) and as a server-side prepared statement (COM_STMT_EXECUTE).
#   Both: a read by user_id with ORDER BY order_id DESC LIMIT 10, which Keyshard sends to the
#     two tables of one data source and merges (ten rows from each), and the same read of
#     t_recent, which one node answers; the summary also prints the merge's Keyshard CPU over
#     the point SELECT's and over the one-node read's (a merge of two nodes should cost at most
#     2× a single-node read).
#   Throughput: 16 clients (THROUGHPUT_CLIENTS) sending single-row autocommit INSERTs for
#     THROUGHPUT_SECONDS (default 15) through Keyshard against the same clients straight to
#     one table of the database (identity / AUTO_INCREMENT key): statements per second, the
#     natural-batching case, with Keyshard's CPU per INSERT (alternating rounds).
#   Bulk: a 1,000-row INSERT through Keyshard against the same statement straight to the
#     database (rows/s, wall time here since it is throughput that is asked of it; alternating
#     rounds), with Keyshard's CPU per row and its peak resident memory.
#
# Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust) and MariaDB on 127.0.0.1:3306
# (root, no password). Installs pgbouncer, haproxy and sysbench (Debian packages) when it runs
# as root and they are missing; a side whose tools are missing is skipped with a message.
# Ports 6533/3410 (Keyshard), 6532 (pgbouncer), 3420 (HAProxy) and databases ks_cpu_* are its
# own, so it can run beside bench/run.sh and bench/pg-run.sh. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${1:-12000}
CLIENTS=${2:-4}
ROUNDS=${3:-3}
BULK_ROWS=1000
BULK_STATEMENTS=${BULK_STATEMENTS:-30}
# BULK_ONLY=1 runs the 1,000-row INSERT cases alone.
BULK_ONLY=${BULK_ONLY:-0}
THROUGHPUT_CLIENTS=${THROUGHPUT_CLIENTS:-16}
THROUGHPUT_SECONDS=${THROUGHPUT_SECONDS:-15}
# ONLY=regex runs the cases whose name matches it (grep -E), e.g. ONLY='SELECT'.
ONLY=${ONLY:-}
selected() { [ -z "$ONLY" ] || echo "$1" | grep -Eq -- "$ONLY"; }
HZ=$(getconf CLK_TCK)
WORK=$(mktemp -d)
chmod 755 "$WORK"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- tools -------------------------------------------------------------------------------
need=()
command -v pgbench >/dev/null || need+=(postgresql-contrib)
command -v pgbouncer >/dev/null || need+=(pgbouncer)
command -v haproxy >/dev/null || need+=(haproxy)
command -v sysbench >/dev/null || need+=(sysbench)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  echo "installing ${need[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; } \
    || echo "could not install ${need[*]}" >&2
fi
PG=1 MY=1
for tool in pgbench pgbouncer psql; do
  command -v $tool >/dev/null || { echo "skipping PostgreSQL: $tool is missing" >&2; PG=0; }
done
for tool in sysbench haproxy mariadb; do
  command -v $tool >/dev/null || { echo "skipping MySQL: $tool is missing" >&2; MY=0; }
done
pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null || { [ $PG = 0 ] || echo "skipping PostgreSQL: no server on 5432" >&2; PG=0; }
mariadb-admin --protocol=tcp -h127.0.0.1 -uroot ping >/dev/null 2>&1 \
  || { [ $MY = 0 ] || echo "skipping MySQL: no server on 3306" >&2; MY=0; }

# KEYSHARD_BIN=path measures that binary (an earlier build, say) instead of building this tree.
if [ -z "${KEYSHARD_BIN:-}" ]; then
  cargo build --release --quiet --bin keyshard
  KEYSHARD_BIN=${CARGO_TARGET_DIR:-target}/release/keyshard
fi

# --- measuring ---------------------------------------------------------------------------
# User and system ticks of a process (fields 14 and 15 of /proc/PID/stat, after its name).
ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12, $13}'; }
# measure PID COMMAND…: runs the command, prints "<proxy ticks> <statements per second>
# <proxy user ticks>" (ticks = user + system); the command prints its own rate on its last line.
measure() {
  local pid=$1 user0 sys0 user1 sys1 rate
  shift
  read -r user0 sys0 < <(ticks "$pid")
  rate=$("$@" | tail -n 1)
  read -r user1 sys1 < <(ticks "$pid")
  echo "$((user1 + sys1 - user0 - sys0)) $rate $((user1 - user0))"
}
pgbench_rate() { # pgbench arguments…: statements per second (one statement per transaction)
  pgbench -n "$@" 2>&1 | awk '/^tps/ {printf "%.0f\n", $3; found = 1} END {if (!found) print "FAILED"}'
}
sysbench_rate() { # sysbench script, arguments…: statements per second
  local script=$1
  shift
  sysbench "$script" --db-driver=mysql --mysql-host=127.0.0.1 --time=0 --report-interval=0 "$@" run 2>&1 \
    | awk '/queries:/ {gsub(/\(/, "", $3); printf "%.0f\n", $3; found = 1} END {if (!found) print "FAILED"}'
}

RESULTS=$WORK/results
# compare NAME STATEMENTS KS_PID REF_PID REF_NAME -- KS_COMMAND… -- REF_COMMAND…
compare() {
  local name=$1 statements=$2 ks_pid=$3 ref_pid=$4 ref_name=$5
  selected "$name" || return 0
  shift 6
  local ks=() ref=()
  while [ "$1" != -- ]; do ks+=("$1"); shift; done
  shift
  ref=("$@")
  "${ks[@]}" >/dev/null # warm-up: pools filled, shapes learnt
  "${ref[@]}" >/dev/null
  local ks_ticks=0 ref_ticks=0 ks_user=0 ref_user=0
  printf '%-28s %5s %14s %14s %7s %12s %12s\n' "$name" round "Keyshard µs" "$ref_name µs" ratio "KS stmt/s" "ref stmt/s"
  for round in $(seq 1 "$ROUNDS"); do
    local a b
    if [ $((round % 2)) = 1 ]; then
      read -r a ka ua < <(measure "$ks_pid" "${ks[@]}")
      read -r b kb ub < <(measure "$ref_pid" "${ref[@]}")
    else
      read -r b kb ub < <(measure "$ref_pid" "${ref[@]}")
      read -r a ka ua < <(measure "$ks_pid" "${ks[@]}")
    fi
    ks_ticks=$((ks_ticks + a)) ks_user=$((ks_user + ua))
    ref_ticks=$((ref_ticks + b)) ref_user=$((ref_user + ub))
    awk -v n="$name" -v r="$round" -v a="$a" -v b="$b" -v s="$statements" -v hz="$HZ" -v ka="$ka" -v kb="$kb" \
      'BEGIN { ua = a * 1e6 / hz / s; ub = b * 1e6 / hz / s;
               printf "%-28s %5s %14.1f %14.1f %7s %12s %12s\n", "", r, ua, ub, (ub > 0 ? sprintf("%.2f", ua / ub) : "-"), ka, kb }'
  done
  # The user-space share apart: both sides make much the same system calls per statement, so
  # what separates them is mostly the proxy's own work.
  awk -v n="$name" -v a="$ks_ticks" -v b="$ref_ticks" -v s="$((statements * ROUNDS))" -v hz="$HZ" -v ref="$ref_name" \
    -v xa="$ks_user" -v xb="$ref_user" \
    'BEGIN { ua = a * 1e6 / hz / s; ub = b * 1e6 / hz / s; ratio = (ub > 0 ? sprintf("%.2f", ua / ub) : "-");
             usera = xa * 1e6 / hz / s; userb = xb * 1e6 / hz / s;
             printf "%-28s %5s %14.1f %14.1f %7s   (user %.1f / %.1f)\n\n", "", "all", ua, ub, ratio, usera, userb;
             printf "%s|%.1f|%s %.1f|%s|%.1f / %.1f\n", n, ua, ref, ub, ratio, usera, userb >> "'"$RESULTS"'" }'
}

# Keyshard over two shards from one of the bench configurations, on this script's own ports
# and databases.
start_keyshard() { # yaml, from-port, to-port, log; prints the pid
  sed -e "s/127.0.0.1:$2/127.0.0.1:$3/" -e 's/keyshard_bench_/ks_cpu_/g' "$1" > "$WORK/$(basename "$1")"
  "$KEYSHARD_BIN" serve --config "$WORK/$(basename "$1")" > "$4" 2>&1 &
  echo $!
}

bulk_values() { # rows: "(1, 'new'), (2, 'new'), …"
  seq 1 "$1" | awk '{printf "%s(%d, '"'"'new'"'"')", (NR > 1 ? ", " : ""), $1}'
}
peak_kib() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
# bulk_compare NAME KS_PID -- DIRECT_COMMAND… -- KS_COMMAND…: the 1,000-row statement straight
# to the database and through Keyshard, alternating for `rounds` rounds (the machine's load
# moves a single run's ratio by ±0.3); rates are averaged over the rounds, Keyshard's CPU
# summed.
bulk_compare() {
  local name=$1 ks_pid=$2
  selected "$name" || return 0
  shift 3
  local direct=() ks=()
  while [ "$1" != -- ]; do direct+=("$1"); shift; done
  shift
  ks=("$@")
  "${ks[@]}" >/dev/null # warm-up
  local d_sum=0 k_sum=0 t_sum=0 d k t
  for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then
      d=$("${direct[@]}")
      read -r t k _ < <(measure "$ks_pid" "${ks[@]}")
    else
      read -r t k _ < <(measure "$ks_pid" "${ks[@]}")
      d=$("${direct[@]}")
    fi
    echo "$name round $round: direct $((d * BULK_ROWS)) rows/s, Keyshard $((k * BULK_ROWS)) rows/s"
    d_sum=$((d_sum + d)) k_sum=$((k_sum + k)) t_sum=$((t_sum + t))
  done
  awk -v name="$name" -v d="$d_sum" -v k="$k_sum" -v t="$t_sum" -v hz="$HZ" -v s="$((BULK_STATEMENTS * ROUNDS))" \
    -v rounds="$ROUNDS" -v rows=$BULK_ROWS -v peak="$(peak_kib "$ks_pid")" 'BEGIN {
      d /= rounds; k /= rounds;
      printf "%s: direct %.0f rows/s, Keyshard %.0f rows/s (%.2f×), Keyshard %.2f µs CPU/row, peak RSS %d KiB\n\n",
        name, d * rows, k * rows, k / d, t * 1e6 / hz / s / rows, peak;
      printf "%s rows/s|%.0f|direct %.0f|%.2f\n", name, k * rows, d * rows, k / d >> "'"$RESULTS"'" }'
}

# throughput_compare NAME KS_PID -- DIRECT_COMMAND… -- KS_COMMAND…: the same clients for the
# same time straight to the database and through Keyshard, alternating for `rounds` rounds;
# statements per second (wall time, since throughput is what is asked), Keyshard's CPU per
# statement beside it.
throughput_compare() {
  local name=$1 ks_pid=$2
  selected "$name" || return 0
  shift 3
  local direct=() ks=()
  while [ "$1" != -- ]; do direct+=("$1"); shift; done
  shift
  ks=("$@")
  local d_sum=0 k_sum=0 t_sum=0 d k t
  printf '%-28s %5s %12s %12s %7s %14s\n' "$name" round "direct/s" "Keyshard/s" ratio "Keyshard µs"
  for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then
      d=$("${direct[@]}" | tail -n 1)
      read -r t k _ < <(measure "$ks_pid" "${ks[@]}")
    else
      read -r t k _ < <(measure "$ks_pid" "${ks[@]}")
      d=$("${direct[@]}" | tail -n 1)
    fi
    awk -v r="$round" -v d="$d" -v k="$k" -v t="$t" -v hz="$HZ" -v s="$THROUGHPUT_SECONDS" \
      'BEGIN { printf "%-28s %5s %12s %12s %7.2f %14.1f\n", "", r, d, k, k / d, t * 1e6 / hz / (k * s) }'
    d_sum=$((d_sum + d)) k_sum=$((k_sum + k)) t_sum=$((t_sum + t))
  done
  awk -v name="$name" -v d="$d_sum" -v k="$k_sum" -v t="$t_sum" -v hz="$HZ" -v s="$THROUGHPUT_SECONDS" \
    -v rounds="$ROUNDS" 'BEGIN {
      printf "%-28s %5s %12.0f %12.0f %7.2f %14.1f\n\n", "", "all", d / rounds, k / rounds, k / d, t * 1e6 / hz / (k * s);
      printf "%s stmt/s|%.0f|direct %.0f|%.2f\n", name, k / rounds, d / rounds, k / d >> "'"$RESULTS"'" }'
}

# --- PostgreSQL ----------------------------------------------------------------------------
if [ $PG = 1 ]; then
  PSQL="psql -X -q -h 127.0.0.1 -p 5432 -U postgres"
  for db in ks_cpu_direct ks_cpu_0 ks_cpu_1; do
    $PSQL -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  done
  $PSQL -d ks_cpu_direct -c "CREATE TABLE t_order (order_id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))" \
    -c "CREATE INDEX ON t_order (user_id, order_id)" -c "CREATE TABLE t_recent (LIKE t_order INCLUDING INDEXES)"
  KS_PG=$(start_keyshard bench/keyshard-postgres.yaml 6433 6533 "$WORK/keyshard-pg.log")
  PIDS+=("$KS_PG")
  cat > "$WORK/pgbouncer.ini" <<INI
[databases]
ks_cpu_direct = host=127.0.0.1 port=5432 dbname=ks_cpu_direct user=postgres
ks_cpu_session = host=127.0.0.1 port=5432 dbname=ks_cpu_direct user=postgres pool_mode=session
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = 6532
unix_socket_dir =
auth_type = trust
auth_file = $WORK/users.txt
pool_mode = transaction
default_pool_size = $CLIENTS
max_client_conn = 100
logfile = $WORK/pgbouncer.log
pidfile = $WORK/pgbouncer.pid
INI
  echo '"postgres" ""' > "$WORK/users.txt"
  # pgbouncer refuses to run as root.
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres "$WORK"
    runuser -u postgres -- pgbouncer -d "$WORK/pgbouncer.ini"
  else
    pgbouncer -d "$WORK/pgbouncer.ini"
  fi
  for _ in $(seq 1 50); do [ -s "$WORK/pgbouncer.pid" ] && break; sleep 0.1; done
  BOUNCER=$(cat "$WORK/pgbouncer.pid")
  PIDS+=("$BOUNCER")
  for _ in $(seq 1 100); do
    PGPASSWORD=root psql -X -h 127.0.0.1 -p 6533 -U root -d sharding_db -c "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.2
  done
  PGPASSWORD=root psql -X -q -h 127.0.0.1 -p 6533 -U root -d sharding_db \
    -c "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))" \
    -c "CREATE TABLE t_recent (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))"
  # The reads by user_id find their rows by index on every side, as the direct table does.
  for n in 0 1; do
    $PSQL -d ks_cpu_$n -c "CREATE INDEX ON t_order_0 (user_id, order_id)" -c "CREATE INDEX ON t_order_1 (user_id, order_id)" \
      -c "CREATE INDEX ON t_recent (user_id, order_id)"
  done
  # The rows the reads find, on both sides.
  { read_rows_sql t_order; read_rows_sql t_recent; } > "$WORK/read_rows.sql"
  $PSQL -d ks_cpu_direct -f "$WORK/read_rows.sql"
  PGPASSWORD=root psql -X -q -h 127.0.0.1 -p 6533 -U root -d sharding_db -f "$WORK/read_rows.sql"

  echo "INSERT INTO t_order (user_id, status) VALUES $(bulk_values $BULK_ROWS);" > "$WORK/bulk.sql"
  chmod 644 "$WORK"/*.sql
  per_client=$((N / CLIENTS))
  ks_pg() { PGPASSWORD=root pgbench_rate -h 127.0.0.1 -p 6533 -U root "$@" sharding_db; }
  bouncer() { pgbench_rate -h 127.0.0.1 -p 6532 -U postgres "$@"; }
  for mode in simple extended; do
    [ "$BULK_ONLY" = 1 ] && break
    compare "PG INSERT -M $mode" $((per_client * CLIENTS)) "$KS_PG" "$BOUNCER" pgbouncer -- \
      ks_pg -f bench/insert.sql -M $mode -c "$CLIENTS" -j 2 -t $per_client -- \
      bouncer -f bench/insert.sql -M $mode -c "$CLIENTS" -j 2 -t $per_client ks_cpu_direct
  done
  [ "$BULK_ONLY" = 1 ] || compare "PG INSERT -M prepared" $((per_client * CLIENTS)) "$KS_PG" "$BOUNCER" "pgb(session)" -- \
    ks_pg -f bench/insert.sql -M prepared -c "$CLIENTS" -j 2 -t $per_client -- \
    bouncer -f bench/insert.sql -M prepared -c "$CLIENTS" -j 2 -t $per_client ks_cpu_session
  [ "$BULK_ONLY" = 1 ] || compare "PG point SELECT -M simple" $((per_client * CLIENTS)) "$KS_PG" "$BOUNCER" pgbouncer -- \
    ks_pg -f bench/select.sql -M simple -c "$CLIENTS" -j 2 -t $per_client -- \
    bouncer -f bench/select.sql -M simple -c "$CLIENTS" -j 2 -t $per_client ks_cpu_direct
  # The point SELECT over the extended protocol: an unnamed statement parsed before every
  # execution, and named prepared statements (pgbouncer in session pooling, as above).
  [ "$BULK_ONLY" = 1 ] || compare "PG point SELECT -M extended" $((per_client * CLIENTS)) "$KS_PG" "$BOUNCER" pgbouncer -- \
    ks_pg -f bench/select.sql -M extended -c "$CLIENTS" -j 2 -t $per_client -- \
    bouncer -f bench/select.sql -M extended -c "$CLIENTS" -j 2 -t $per_client ks_cpu_direct
  [ "$BULK_ONLY" = 1 ] || compare "PG point SELECT -M prepared" $((per_client * CLIENTS)) "$KS_PG" "$BOUNCER" "pgb(session)" -- \
    ks_pg -f bench/select.sql -M prepared -c "$CLIENTS" -j 2 -t $per_client -- \
    bouncer -f bench/select.sql -M prepared -c "$CLIENTS" -j 2 -t $per_client ks_cpu_session
  [ "$BULK_ONLY" = 1 ] || compare "PG merge SELECT -M simple" $((per_client * CLIENTS)) "$KS_PG" "$BOUNCER" pgbouncer -- \
    ks_pg -f bench/merge.sql -M simple -c "$CLIENTS" -j 2 -t $per_client -- \
    bouncer -f bench/merge.sql -M simple -c "$CLIENTS" -j 2 -t $per_client ks_cpu_direct
  [ "$BULK_ONLY" = 1 ] || compare "PG one-node LIMIT 10 SELECT -M simple" $((per_client * CLIENTS)) "$KS_PG" "$BOUNCER" pgbouncer -- \
    ks_pg -f bench/recent.sql -M simple -c "$CLIENTS" -j 2 -t $per_client -- \
    bouncer -f bench/recent.sql -M simple -c "$CLIENTS" -j 2 -t $per_client ks_cpu_direct

  # Throughput: sixteen clients' single-row INSERTs, straight to the database and through Keyshard.
  [ "$BULK_ONLY" = 1 ] || throughput_compare "PG INSERT $THROUGHPUT_CLIENTS clients" "$KS_PG" -- \
    pgbench_rate -h 127.0.0.1 -p 5432 -U postgres -f bench/insert.sql -c "$THROUGHPUT_CLIENTS" -j 2 -T "$THROUGHPUT_SECONDS" ks_cpu_direct -- \
    ks_pg -f bench/insert.sql -c "$THROUGHPUT_CLIENTS" -j 2 -T "$THROUGHPUT_SECONDS"

  # Bulk: one client, the same 1,000-row statement straight to PostgreSQL and through Keyshard.
  bulk_compare "PG 1,000-row INSERT" "$KS_PG" -- \
    pgbench_rate -h 127.0.0.1 -p 5432 -U postgres -f "$WORK/bulk.sql" -t "$BULK_STATEMENTS" ks_cpu_direct -- \
    ks_pg -f "$WORK/bulk.sql" -t "$BULK_STATEMENTS"
fi

# --- MySQL ---------------------------------------------------------------------------------
if [ $MY = 1 ]; then
  MYSQL="mariadb --protocol=tcp -h127.0.0.1 -P3306 -uroot"
  $MYSQL -e "DROP DATABASE IF EXISTS ks_cpu_direct; CREATE DATABASE ks_cpu_direct;
    CREATE TABLE ks_cpu_direct.t_order (order_id BIGINT AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32), KEY (user_id, order_id));
    CREATE TABLE ks_cpu_direct.t_recent LIKE ks_cpu_direct.t_order;
    DROP DATABASE IF EXISTS ks_cpu_0; CREATE DATABASE ks_cpu_0;
    DROP DATABASE IF EXISTS ks_cpu_1; CREATE DATABASE ks_cpu_1;"
  KS_MY=$(start_keyshard bench/keyshard-mariadb.yaml 3310 3410 "$WORK/keyshard-my.log")
  PIDS+=("$KS_MY")
  haproxy_relay "$WORK" 3420
  HAPROXY=$(head -n 1 "$WORK/haproxy.pid")
  PIDS+=("$HAPROXY")
  for _ in $(seq 1 100); do
    mariadb --protocol=tcp -h127.0.0.1 -P3410 -uroot -proot -e "SELECT 1" sharding_db >/dev/null 2>&1 && break
    sleep 0.2
  done
  mariadb --protocol=tcp -h127.0.0.1 -P3410 -uroot -proot sharding_db \
    -e "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32), KEY (user_id, order_id));
        CREATE TABLE t_recent (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32), KEY (user_id, order_id))"
  { read_rows_sql t_order; read_rows_sql t_recent; } > "$WORK/read_rows.sql"
  $MYSQL ks_cpu_direct < "$WORK/read_rows.sql"
  mariadb --protocol=tcp -h127.0.0.1 -P3410 -uroot -proot sharding_db < "$WORK/read_rows.sql"

  cat > "$WORK/bulk.lua" <<LUA
-- The same $BULK_ROWS-row INSERT per event.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  sql = "INSERT INTO t_order (user_id, status) VALUES $(bulk_values $BULK_ROWS)"
end
function event()
  con:query(sql)
end
function thread_done()
  con:disconnect()
end
LUA
  ks_my() { sysbench_rate "$1" --mysql-port=3410 --mysql-user=root --mysql-password=root --mysql-db=sharding_db "${@:2}"; }
  relay() { sysbench_rate "$1" --mysql-port=3420 --mysql-user=root --mysql-db=ks_cpu_direct "${@:2}"; }
  statements=$(((N / CLIENTS) * CLIENTS))
  [ "$BULK_ONLY" = 1 ] || compare "MySQL INSERT text" "$statements" "$KS_MY" "$HAPROXY" HAProxy -- \
    ks_my bench/insert.lua --threads="$CLIENTS" --events="$statements" -- \
    relay bench/insert.lua --threads="$CLIENTS" --events="$statements"
  [ "$BULK_ONLY" = 1 ] || compare "MySQL INSERT prepared" "$statements" "$KS_MY" "$HAPROXY" HAProxy -- \
    ks_my bench/prepared_insert.lua --threads="$CLIENTS" --events="$statements" -- \
    relay bench/prepared_insert.lua --threads="$CLIENTS" --events="$statements"
  [ "$BULK_ONLY" = 1 ] || compare "MySQL point SELECT text" "$statements" "$KS_MY" "$HAPROXY" HAProxy -- \
    ks_my bench/select.lua --threads="$CLIENTS" --events="$statements" -- \
    relay bench/select.lua --threads="$CLIENTS" --events="$statements"
  [ "$BULK_ONLY" = 1 ] || compare "MySQL point SELECT prepared" "$statements" "$KS_MY" "$HAPROXY" HAProxy -- \
    ks_my bench/prepared_select.lua --threads="$CLIENTS" --events="$statements" -- \
    relay bench/prepared_select.lua --threads="$CLIENTS" --events="$statements"
  [ "$BULK_ONLY" = 1 ] || compare "MySQL merge SELECT text" "$statements" "$KS_MY" "$HAPROXY" HAProxy -- \
    ks_my bench/merge.lua --threads="$CLIENTS" --events="$statements" -- \
    relay bench/merge.lua --threads="$CLIENTS" --events="$statements"
  [ "$BULK_ONLY" = 1 ] || compare "MySQL one-node LIMIT 10 SELECT text" "$statements" "$KS_MY" "$HAPROXY" HAProxy -- \
    ks_my bench/recent.lua --threads="$CLIENTS" --events="$statements" -- \
    relay bench/recent.lua --threads="$CLIENTS" --events="$statements"

  [ "$BULK_ONLY" = 1 ] || throughput_compare "MySQL INSERT $THROUGHPUT_CLIENTS clients" "$KS_MY" -- \
    sysbench_rate bench/insert.lua --mysql-port=3306 --mysql-user=root --mysql-db=ks_cpu_direct --threads="$THROUGHPUT_CLIENTS" --time="$THROUGHPUT_SECONDS" -- \
    ks_my bench/insert.lua --threads="$THROUGHPUT_CLIENTS" --time="$THROUGHPUT_SECONDS"

  bulk_compare "MySQL 1,000-row INSERT" "$KS_MY" -- \
    sysbench_rate "$WORK/bulk.lua" --mysql-port=3306 --mysql-user=root --mysql-db=ks_cpu_direct --threads=1 --events="$BULK_STATEMENTS" -- \
    ks_my "$WORK/bulk.lua" --threads=1 --events="$BULK_STATEMENTS"
fi

if [ -s "$RESULTS" ]; then
  echo "summary ($(date -u +%F), $N statements × $ROUNDS rounds per side, $CLIENTS clients)"
  echo "| case | Keyshard µs CPU/stmt | reference µs CPU/stmt | ratio | of which user µs (Keyshard / reference) |"
  echo "|---|---|---|---|---|"
  awk -F'|' '{printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, ($5 == "" ? "–" : $5)}' "$RESULTS"
  # Keyshard's CPU for a two-node merge over its CPU for a single-node read: the point read
  # (one row), and the same ORDER BY … LIMIT 10 answered by one node (ten rows).
  awk -F'|' '$1 ~ /point SELECT/ {point[substr($1, 1, 2)] = $2}
             $1 ~ /one-node/ {one[substr($1, 1, 2)] = $2}
             $1 ~ /merge SELECT/ {merge[substr($1, 1, 2)] = $2}
             END {for (f in merge) {
                    name = (f == "PG" ? "PostgreSQL" : "MySQL")
                    if (point[f] > 0) printf "%s merge ÷ point SELECT (Keyshard CPU): %.2f\n", name, merge[f] / point[f]
                    if (one[f] > 0) printf "%s merge ÷ one-node LIMIT 10 SELECT (Keyshard CPU): %.2f\n", name, merge[f] / one[f]
                  }}' "$RESULTS"
fi
