# Shared by the bench scripts (sourced from the repository root).

# haproxy_relay DIR PORT: HAProxy on 127.0.0.1:PORT as a plain TCP relay to MariaDB on 3306,
# one thread (the cost of one proxy hop that parses nothing); its pid ends up in DIR/haproxy.pid.
haproxy_relay() {
  local dir=$1 port=$2
  cat > "$dir/haproxy.cfg" <<CFG
global
    nbthread 1
defaults
    mode tcp
    timeout connect 5s
    timeout client 1h
    timeout server 1h
listen mariadb
    bind 127.0.0.1:$port
    server direct 127.0.0.1:3306
CFG
  haproxy -f "$dir/haproxy.cfg" -D -p "$dir/haproxy.pid"
  for _ in $(seq 1 50); do [ -s "$dir/haproxy.pid" ] && break; sleep 0.1; done
}

# The rows the read workloads (bench/select.*, bench/merge.*, bench/recent.*) find in TABLE:
# users 1–1000 with 20 orders each, order_id 10^12 + user × 100 + k (clear of generated and
# AUTO_INCREMENT keys; in t_order, k's parity puts ten in each table of a user's data source),
# as 20 INSERTs of 1,000 rows on stdout.
read_rows_sql() {
  local k
  for k in $(seq 0 19); do
    seq 1 1000 | awk -v k="$k" -v table="$1" 'BEGIN {printf "INSERT INTO %s (order_id, user_id, status) VALUES ", table}
      {printf "%s(%d, %d, '"'"'seen'"'"')", (NR > 1 ? ", " : ""), 1000000000000 + $1 * 100 + k, $1}
      END {print ";"}'
  done
}

# Sets KEYSHARD_BIN to a release build of this tree, unless it names a binary already (an
# earlier build, to compare).
keyshard_bin() {
  if [ -z "${KEYSHARD_BIN:-}" ]; then
    cargo build --release -q -p keyshard
    KEYSHARD_BIN=${CARGO_TARGET_DIR:-target}/release/keyshard
  fi
}

# Sets PYTHON to one that imports psycopg and PyMySQL: the compatibility suite's venv (made by
# .ci/compat.sh), else python3.
bench_python() {
  PYTHON=${PYTHON:-$HOME/.cache/keyshard-compat/venv/bin/python}
  [ -x "$PYTHON" ] || PYTHON=python3
}
