#!/usr/bin/env bash
# Installs the pinned axe-core the accessibility browser test injects into each page (tests/axe:
# the npm package `axe-core` from the committed package-lock.json) into a cache folder keyed by the
# lock file's hash, linked as tests/axe/node_modules. Returns at once when in place.
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
LOCK_HASH=$(sha1sum tests/axe/package-lock.json | cut -c1-12)
NPM_DIR="$CACHE_ROOT/axe-core-$LOCK_HASH"
STAMP=".yiem-installed-$LOCK_HASH"

if [ ! -f "$NPM_DIR/node_modules/$STAMP" ]; then
  echo "yiem: installing axe-core for the accessibility test (npm ci into $NPM_DIR)..."
  rm -rf "$NPM_DIR" && mkdir -p "$NPM_DIR"
  cp tests/axe/package.json tests/axe/package-lock.json "$NPM_DIR/"
  (cd "$NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  test -f "$NPM_DIR/node_modules/axe-core/axe.min.js"
  touch "$NPM_DIR/node_modules/$STAMP"
fi
if [ ! -f "tests/axe/node_modules/$STAMP" ]; then
  # A link left by an older lock file is replaced; a stale real folder is removed first.
  if [ -d tests/axe/node_modules ] && [ ! -L tests/axe/node_modules ]; then
    rm -rf tests/axe/node_modules
  fi
  ln -sfn "$NPM_DIR/node_modules" tests/axe/node_modules
  test -f "tests/axe/node_modules/$STAMP"
fi
