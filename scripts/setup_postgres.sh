#!/usr/bin/env bash
# PostgreSQL for the store and usage tests (yiem.store and yiem.costs must behave the same on SQLite
# and PostgreSQL): Debian's server package. The tests start their own throwaway cluster on
# 127.0.0.1 (tests/fixtures/postgres.py) and remove it; nothing here starts a server.
# Idempotent, and returns at once when the server binaries are already installed.
set -euo pipefail

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "yiem: installing Debian's postgresql for the store tests..."
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  # The package may make its own "main" cluster; the tests never use or start it.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
# initdb and postgres refuse to run as root, so the tests run them as this user (the package makes it).
id postgres >/dev/null 2>&1 || { echo "yiem: no 'postgres' user to run the test server as" >&2; exit 1; }
