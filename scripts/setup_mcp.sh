#!/usr/bin/env bash
# Installs the pinned third-party MCP servers the tests and benchmarks start: the npm servers
# (from the committed package-lock.json, started through node_modules/.bin, never npx) into a
# cache folder keyed by the lock file's hash, linked as mcp_servers/node_modules; and the PyPI
# servers of mcp_servers/pypi-servers.txt, each into its own venv cached under a folder keyed by
# version (scripts/install_pypi_server.sh). A fresh clone only links the cached folders; returns
# at once when all are already in place.
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
# The lock file's hash names the cache folder, so a changed pin installs anew and nothing else does.
LOCK_HASH=$(sha1sum mcp_servers/package-lock.json | cut -c1-12)
NPM_DIR="$CACHE_ROOT/mcp-npm-$LOCK_HASH"
NPM_STAMP=".yiem-installed-$LOCK_HASH"

if [ -d mcp_servers/node_modules ] && [ ! -L mcp_servers/node_modules ] \
  && [ -f "mcp_servers/node_modules/$NPM_STAMP" ]; then
  : # a checkout that installed in place before the cache existed: already current
elif [ ! -f "$NPM_DIR/node_modules/$NPM_STAMP" ]; then
  echo "yiem: installing the npm MCP servers (npm ci into $NPM_DIR)..."
  rm -rf "$NPM_DIR" && mkdir -p "$NPM_DIR"
  cp mcp_servers/package.json mcp_servers/package-lock.json "$NPM_DIR/"
  (cd "$NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  test -x "$NPM_DIR/node_modules/.bin/mcp-server-everything"
  test -x "$NPM_DIR/node_modules/.bin/mcp-server-memory"
  test -x "$NPM_DIR/node_modules/.bin/mcp-server-filesystem"
  touch "$NPM_DIR/node_modules/$NPM_STAMP"
fi
if [ ! -f "mcp_servers/node_modules/$NPM_STAMP" ]; then
  # A link left by an older lock file is replaced; a stale real folder is removed first.
  if [ -d mcp_servers/node_modules ] && [ ! -L mcp_servers/node_modules ]; then
    rm -rf mcp_servers/node_modules
  fi
  ln -sfn "$NPM_DIR/node_modules" mcp_servers/node_modules
  test -f "mcp_servers/node_modules/$NPM_STAMP"
fi

for name in $(grep -Eo '^[a-z0-9-]+==' mcp_servers/pypi-servers.txt | sed 's/==$//'); do
  bash scripts/install_pypi_server.sh "$name" >/dev/null
done
