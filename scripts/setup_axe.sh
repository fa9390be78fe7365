#!/usr/bin/env bash
# Installs the pinned axe-core the accessibility browser test injects into each page (tests/axe:
# the npm package `axe-core` from the committed package-lock.json), cached and linked as
# tests/axe/node_modules. Returns at once when in place.
set -euo pipefail

cd "$(dirname "$0")/.."
bash scripts/install_npm_lock.sh tests/axe axe-core "axe-core for the accessibility test" \
  axe-core/axe.min.js
