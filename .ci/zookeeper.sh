#!/usr/bin/env bash
# ZooKeeper on 127.0.0.1:2181 for the ZooKeeper repository's tests: Debian's zookeeperd (3.8),
# installed when missing and started when nothing answers. Idempotent.
set -euo pipefail

ZK_BIN=/usr/share/zookeeper/bin
ZK_CFG=/etc/zookeeper/conf/zoo.cfg
if [ ! -x "$ZK_BIN/zkServer.sh" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zookeeperd >/dev/null
fi

# Serving means answering `srvr` (the one four-letter word 3.8 allows by default) with a Mode.
zk_serving() {
  local answer
  answer=$(timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/2181 && printf srvr >&3 && cat <&3' \
    2>/dev/null) || true
  [[ $answer == *"Mode: "* ]]
}

if ! zk_serving; then
  # policy-rc.d forbids service starts here, so start it by hand; it needs its dataDir and log
  # dir, and a pid file left by an earlier run would make zkServer.sh refuse.
  zk_data=$(sed -n 's/^dataDir=//p' "$ZK_CFG" | tail -n 1)
  zk_data=${zk_data:-/var/lib/zookeeper}
  mkdir -p "$zk_data" /var/log/zookeeper
  (exec 3<>/dev/tcp/127.0.0.1/2181) 2>/dev/null || rm -f "$zk_data/zookeeper_server.pid"
  "$ZK_BIN/zkServer.sh" start >/dev/null 2>&1 || true
  for _ in $(seq 1 60); do zk_serving && break; sleep 1; done
  zk_serving || { echo "ZooKeeper did not start on 127.0.0.1:2181" >&2; exit 1; }
fi
