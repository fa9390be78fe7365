#!/usr/bin/env bash
# Chromium for the browser tests: Debian's package (Playwright drives it by path; no
# `playwright install`, which would download its own build). Fast when already installed.
set -euo pipefail

if [ ! -x /usr/bin/chromium ]; then
  echo "yiem: installing Debian's chromium for the browser tests..."
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
/usr/bin/chromium --headless=new --no-sandbox --disable-gpu --version >/dev/null 2>&1 \
  || { echo "yiem: /usr/bin/chromium is installed but does not start" >&2; exit 1; }
