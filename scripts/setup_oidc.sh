#!/usr/bin/env bash
# Installs the pinned OpenID Connect provider the sign-in tests start (tests/oidc_provider: the npm
# package `oidc-provider` from the committed package-lock.json) into a cache folder keyed by the
# lock file's hash, linked as tests/oidc_provider/node_modules. Returns at once when in place.
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
LOCK_HASH=$(sha1sum tests/oidc_provider/package-lock.json | cut -c1-12)
NPM_DIR="$CACHE_ROOT/oidc-provider-$LOCK_HASH"
STAMP=".yiem-installed-$LOCK_HASH"

if [ ! -f "$NPM_DIR/node_modules/$STAMP" ]; then
  echo "yiem: installing the test OpenID Connect provider (npm ci into $NPM_DIR)..."
  rm -rf "$NPM_DIR" && mkdir -p "$NPM_DIR"
  cp tests/oidc_provider/package.json tests/oidc_provider/package-lock.json "$NPM_DIR/"
  (cd "$NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  test -f "$NPM_DIR/node_modules/oidc-provider/package.json"
  touch "$NPM_DIR/node_modules/$STAMP"
fi
if [ ! -f "tests/oidc_provider/node_modules/$STAMP" ]; then
  # A link left by an older lock file is replaced; a stale real folder is removed first.
  if [ -d tests/oidc_provider/node_modules ] && [ ! -L tests/oidc_provider/node_modules ]; then
    rm -rf tests/oidc_provider/node_modules
  fi
  ln -sfn "$NPM_DIR/node_modules" tests/oidc_provider/node_modules
  test -f "tests/oidc_provider/node_modules/$STAMP"
fi
