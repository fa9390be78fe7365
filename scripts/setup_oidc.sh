#!/usr/bin/env bash
# Installs the pinned OpenID Connect provider the sign-in tests start (tests/oidc_provider: the npm
# package `oidc-provider` from the committed package-lock.json), cached and linked as
# tests/oidc_provider/node_modules. Returns at once when in place.
set -euo pipefail

cd "$(dirname "$0")/.."
bash scripts/install_npm_lock.sh tests/oidc_provider oidc-provider \
  "the test OpenID Connect provider" oidc-provider/package.json
