#!/usr/bin/env bash
# The client libraries of the compatibility tests (crates/proxy/tests/it/compat.rs), pinned, in a
# cache outside the checkout so that later runs find them: a Python venv and node_modules; and
# Debian's ActiveRecord and PHP.
# Idempotent: nothing is downloaded when the pinned versions are already there.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${KEYSHARD_COMPAT_DIR:-$HOME/.cache/keyshard-compat}"
mkdir -p "$CACHE"

# mysqlclient builds against libmariadb; ActiveRecord and its drivers, and PHP's PDO drivers,
# come from Debian (the release's own versions: ActiveRecord 6.1 and PHP 8.2 on bookworm).
need=()
pkg-config --exists libmariadb 2>/dev/null || need+=(libmariadb-dev pkg-config)
ruby -e 'require "active_record"; require "pg"; require "mysql2"' 2>/dev/null \
  || need+=(ruby ruby-activerecord ruby-pg ruby-mysql2)
php -r 'exit(extension_loaded("pdo_mysql") && extension_loaded("pdo_pgsql") ? 0 : 1);' 2>/dev/null \
  || need+=(php-cli php-mysql php-pgsql)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

requirements=crates/proxy/tests/compat/requirements.txt
if ! cmp -s "$requirements" "$CACHE/requirements.txt"; then
  rm -rf "$CACHE/venv"
  python3 -m venv "$CACHE/venv"
  "$CACHE/venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$CACHE/requirements.txt"
fi

package=crates/proxy/tests/compat/package.json
if ! cmp -s "$package" "$CACHE/node/package.json"; then
  rm -rf "$CACHE/node"
  mkdir -p "$CACHE/node"
  cp "$package" "$CACHE/node/package.json"
  npm install --silent --no-audit --no-fund --prefix "$CACHE/node" >/dev/null
fi
