#!/usr/bin/env bash
# Installs the pinned third-party MCP servers the tests and benchmarks start: the npm servers
# (from the committed package-lock.json, started through node_modules/.bin, never npx) into a
# cache folder keyed by the lock file's hash, linked as mcp_servers/node_modules; and PyPI's
# mcp-server-time into its own venv, cached under a folder keyed by version. A fresh clone only
# links the cached folders; returns at once when both are already in place.
set -euo pipefail

cd "$(dirname "$0")/.."
MCP_TIME_VERSION=2026.10.19
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
TIME_DIR="$CACHE_ROOT/mcp-server-time-$MCP_TIME_VERSION"
PYTHON="${PYTHON:-python3}"
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
