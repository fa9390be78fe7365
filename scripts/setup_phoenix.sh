#!/usr/bin/env bash
# Arize Phoenix, the OpenTelemetry receiver the export test sends real spans to (issue 15): the
# pinned PyPI package in its own venv under the cache, keyed by version, so its many dependencies
# never meet the app's. The test starts it on 127.0.0.1 (tests/fixtures/phoenix.py); nothing here
# starts a server. Returns at once when already installed (a first install took about 3 minutes
# and 850 MB here).
set -euo pipefail

PHOENIX_VERSION=20.26.1
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
DIR="$CACHE_ROOT/phoenix-$PHOENIX_VERSION"
PYTHON="${PYTHON:-python3}"

if [ ! -f "$DIR/.yiem-installed" ]; then
  echo "yiem: installing arize-phoenix==$PHOENIX_VERSION into $DIR..."
  mkdir -p "$CACHE_ROOT"
  # A venv's scripts hard-code its path, so it is built in place; the stamp marks it complete.
  rm -rf "$DIR"
  "$PYTHON" -m venv "$DIR"
  "$DIR/bin/python" -m pip install --quiet --disable-pip-version-check "arize-phoenix==$PHOENIX_VERSION"
  test -x "$DIR/bin/phoenix"
  touch "$DIR/.yiem-installed"
fi
