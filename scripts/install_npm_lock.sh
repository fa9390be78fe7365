#!/usr/bin/env bash
# Usage: install_npm_lock.sh FOLDER CACHE_NAME LABEL CHECK...
# Installs FOLDER's committed package-lock.json (`npm ci`) into a cache folder named CACHE_NAME plus
# the lock file's hash, so a changed pin installs anew and nothing else does, and links it as
# FOLDER/node_modules. Each CHECK (a path under node_modules) must exist after the install.
# Returns at once when the link is already current.
set -euo pipefail

folder=$1 cache_name=$2 label=$3
shift 3
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
LOCK_HASH=$(sha1sum "$folder/package-lock.json" | cut -c1-12)
NPM_DIR="$CACHE_ROOT/$cache_name-$LOCK_HASH"
STAMP=".yiem-installed-$LOCK_HASH"

if [ ! -f "$NPM_DIR/node_modules/$STAMP" ]; then
  echo "yiem: installing $label (npm ci into $NPM_DIR)..."
  rm -rf "$NPM_DIR" && mkdir -p "$NPM_DIR"
  cp "$folder/package.json" "$folder/package-lock.json" "$NPM_DIR/"
  (cd "$NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  for check in "$@"; do
    test -e "$NPM_DIR/node_modules/$check" || { echo "yiem: $label lacks $check after npm ci" >&2; exit 1; }
  done
  touch "$NPM_DIR/node_modules/$STAMP"
fi
if [ ! -f "$folder/node_modules/$STAMP" ]; then
  # A link left by an older lock file is replaced; a stale real folder is removed first.
  if [ -d "$folder/node_modules" ] && [ ! -L "$folder/node_modules" ]; then
    rm -rf "$folder/node_modules"
  fi
  ln -sfn "$NPM_DIR/node_modules" "$folder/node_modules"
  test -f "$folder/node_modules/$STAMP"
fi
