#!/usr/bin/env bash
# PostgreSQL for the usage tests (yiem.usage must give the same figures on SQLite and PostgreSQL):
# Debian's server package; the tests start their own throwaway cluster on 127.0.0.1 and stop it.
# Fast when already installed.
set -euo pipefail

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "yiem: installing Debian's postgresql for the usage tests..."
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
# initdb and postgres refuse to run as root, so the tests run them as this user (the package makes it).
id postgres >/dev/null 2>&1 || { echo "yiem: no 'postgres' user to run the test server as" >&2; exit 1; }
