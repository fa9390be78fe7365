#!/usr/bin/env bash
# Installs the pinned third-party MCP servers the tests and benchmarks start: the npm servers
# into mcp_servers/node_modules (from the committed package-lock.json, started through
# node_modules/.bin, never npx) and PyPI's mcp-server-time into its own venv, cached under a
# folder keyed by version. Returns at once when both are already in place.
set -euo pipefail

cd "$(dirname "$0")/.."
MCP_TIME_VERSION=2026.10.19
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
TIME_DIR="$CACHE_ROOT/mcp-server-time-$MCP_TIME_VERSION"
PYTHON="${PYTHON:-python3}"
# The stamp names the lock file's hash, so a changed pin reinstalls and nothing else does.
LOCK_HASH=$(sha1sum mcp_servers/package-lock.json | cut -c1-12)
NPM_STAMP="mcp_servers/node_modules/.yiem-installed-$LOCK_HASH"

if [ ! -f "$NPM_STAMP" ]; then
  echo "yiem: installing the npm MCP servers (npm ci in mcp_servers/)..."
  (cd mcp_servers && npm ci --no-audit --no-fund --loglevel=error)
  test -x mcp_servers/node_modules/.bin/mcp-server-everything
  test -x mcp_servers/node_modules/.bin/mcp-server-memory
  touch "$NPM_STAMP"
fi

if [ ! -f "$TIME_DIR/.yiem-installed" ]; then
  echo "yiem: installing mcp-server-time==$MCP_TIME_VERSION into $TIME_DIR..."
  mkdir -p "$CACHE_ROOT"
  # Its own venv, so the server's pins never clash with the project's. A venv's scripts
  # hard-code its path, so it is built in place; the stamp marks it complete.
  rm -rf "$TIME_DIR"
  "$PYTHON" -m venv "$TIME_DIR"
  "$TIME_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
    "mcp-server-time==$MCP_TIME_VERSION"
  test -x "$TIME_DIR/bin/mcp-server-time"
  touch "$TIME_DIR/.yiem-installed"
  echo "yiem: mcp-server-time ready at $TIME_DIR/bin/mcp-server-time"
fi
