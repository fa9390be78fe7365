#!/usr/bin/env bash
# The browser half of MCP Apps: installs the pinned official ext-apps SDK and esbuild
# (mcp_apps/package-lock.json, cached and linked as mcp_apps/node_modules), then bundles
# mcp_apps/bridge.mjs with the SDK's AppBridge into one module, cached by the lock's and the
# source's hash and linked as mcp_apps/bridge.js, which ui/app_view.py registers as a component.
# Returns at once when in place.
set -euo pipefail

cd "$(dirname "$0")/.."
bash scripts/install_npm_lock.sh mcp_apps mcp-apps "the MCP Apps host bridge" \
  @modelcontextprotocol/ext-apps/dist/src/app-bridge.js esbuild/bin/esbuild
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
HASH=$(cat mcp_apps/package-lock.json mcp_apps/bridge.mjs | sha1sum | cut -c1-12)
BUNDLE="$CACHE_ROOT/mcp-apps-bridge-$HASH.js"
if [ ! -f "$BUNDLE" ]; then
  echo "yiem: bundling the MCP Apps host bridge..."
  mcp_apps/node_modules/esbuild/bin/esbuild mcp_apps/bridge.mjs --bundle --format=esm \
    --minify --target=es2022 --log-level=warning --outfile="$BUNDLE.tmp"
  mv "$BUNDLE.tmp" "$BUNDLE"
fi
ln -sfn "$BUNDLE" mcp_apps/bridge.js
