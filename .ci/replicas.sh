#!/usr/bin/env bash
# Primaries with replicas for the read/write splitting tests, on their own ports beside the
# machine's shared servers (which are never touched):
#   MariaDB primary 127.0.0.1:3316 (binlog, GTID) → replica 127.0.0.1:3317
#   PostgreSQL primary 127.0.0.1:5442 → streaming standby 127.0.0.1:5443 (pg_basebackup)
# Their data lives under $KEYSHARD_REPLICAS_DIR (default /var/tmp/keyshard-replicas). Idempotent:
# what already answers is left as it is; what is down is started, and set up once when new.
set -euo pipefail

ROOT=${KEYSHARD_REPLICAS_DIR:-/var/tmp/keyshard-replicas}
mkdir -p "$ROOT"

# --- MariaDB -------------------------------------------------------------------------------
maria_ping() { mariadb-admin --protocol=tcp -h127.0.0.1 -P"$1" -uroot ping >/dev/null 2>&1; }

maria_start() { # port server-id
  local port=$1 id=$2 dir=$ROOT/mariadb-$1
  if [ ! -d "$dir/data/mysql" ]; then
    mkdir -p "$dir/data"
    mariadb-install-db --no-defaults --user=root --datadir="$dir/data" --auth-root-authentication-method=normal \
      >"$dir/install.log" 2>&1
  fi
  maria_ping "$port" && return 0
  # --no-defaults: nothing of the shared server's my.cnf (its port, socket, datadir) applies.
  # --tmpdir of its own: a starting server deletes every #sql… file in its tmpdir, which under
  # the default /tmp are the shared server's temporary tables in use.
  mkdir -p "$dir/tmp"
  (setsid /usr/sbin/mariadbd --no-defaults --user=root --datadir="$dir/data" --tmpdir="$dir/tmp" \
    --port="$port" --bind-address=127.0.0.1 --socket="$dir/mysqld.sock" \
    --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
    --server-id="$id" --log-bin=binlog --binlog-format=ROW --log-slave-updates \
    --gtid-strict-mode=ON --binlog-expire-logs-seconds=86400 --skip-name-resolve >/dev/null 2>&1 &)
  for _ in $(seq 1 60); do maria_ping "$port" && return 0; sleep 0.5; done
  echo "MariaDB did not start on $port (see $dir/error.log)" >&2
  exit 1
}

maria_start 3316 1
maria_start 3317 2
# root without a password from 127.0.0.1 (install-db creates root@localhost only as a socket
# user on some builds), the replica following the primary by GTID, and a test database.
for port in 3316 3317; do
  mariadb --protocol=socket -S "$ROOT/mariadb-$port/mysqld.sock" -uroot -e "
    SET sql_log_bin = 0;
    CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
    GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;" 2>/dev/null || true
done
if [ -z "$(mariadb --protocol=tcp -h127.0.0.1 -P3317 -uroot -N -e 'SHOW SLAVE STATUS')" ]; then
  # From the primary's position now (the tests create their databases afresh), so that a
  # replica set up again never needs binlogs the primary has let go.
  position=$(mariadb --protocol=tcp -h127.0.0.1 -P3316 -uroot -N -e 'SELECT @@GLOBAL.gtid_binlog_pos')
  mariadb --protocol=tcp -h127.0.0.1 -P3317 -uroot -e "
    SET GLOBAL read_only = ON;
    SET GLOBAL gtid_slave_pos = '$position';
    CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = 3316, MASTER_USER = 'root',
      MASTER_USE_GTID = slave_pos;
    START SLAVE;"
else
  mariadb --protocol=tcp -h127.0.0.1 -P3317 -uroot -e "START SLAVE" 2>/dev/null || true
fi
mariadb --protocol=tcp -h127.0.0.1 -P3316 -uroot -e "CREATE DATABASE IF NOT EXISTS test"

# --- PostgreSQL ----------------------------------------------------------------------------
PG_BIN=/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -n | tail -n 1)/bin
as_postgres() { runuser -u postgres -- "$@"; }
pg_up() { pg_isready -q -h 127.0.0.1 -p "$1"; }

pg_start() { # port
  local dir=$ROOT/pg-$1
  pg_up "$1" && return 0
  rm -f "$dir/data/postmaster.pid"
  as_postgres "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $1 -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
}

mkdir -p "$ROOT/pg-5442" "$ROOT/pg-5443"
chown postgres "$ROOT/pg-5442" "$ROOT/pg-5443"
if [ ! -f "$ROOT/pg-5442/data/PG_VERSION" ]; then
  as_postgres "$PG_BIN/initdb" -D "$ROOT/pg-5442/data" -U postgres --auth=trust >/dev/null
  cat >>"$ROOT/pg-5442/data/postgresql.conf" <<'EOF'
wal_level = replica
max_wal_senders = 8
max_prepared_transactions = 64
hot_standby = on
EOF
  echo "host replication all 127.0.0.1/32 trust" >>"$ROOT/pg-5442/data/pg_hba.conf"
fi
pg_start 5442
if [ ! -f "$ROOT/pg-5443/data/PG_VERSION" ]; then
  # -R writes primary_conninfo and standby.signal: the copy starts as a streaming standby.
  as_postgres "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p 5442 -U postgres -D "$ROOT/pg-5443/data" -R -X stream
fi
pg_start 5443

for _ in $(seq 1 60); do
  [ "$(psql -h 127.0.0.1 -p 5443 -U postgres -Atc 'SELECT pg_is_in_recovery()')" = t ] \
    && [ "$(mariadb --protocol=tcp -h127.0.0.1 -P3317 -uroot -N -e "SHOW SLAVE STATUS" | cut -f11,12)" = "$(printf 'Yes\tYes')" ] \
    && exit 0
  sleep 0.5
done
echo "the replicas do not replicate" >&2
exit 1
