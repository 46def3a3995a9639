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
