#!/usr/bin/env bash
# Installs the pinned third-party MCP servers the tests and benchmarks start: the npm servers
# (from the committed package-lock.json, started through node_modules/.bin, never npx) into a
# cache folder keyed by the lock file's hash, linked as mcp_servers/node_modules; and the PyPI
# servers of mcp_servers/pypi-servers.txt, each into its own venv cached under a folder keyed by
# version (scripts/install_pypi_server.sh). A fresh clone only links the cached folders; returns
# at once when all are already in place.
set -euo pipefail

cd "$(dirname "$0")/.."
# A checkout that installed in place before the cache existed is already current.
LOCK_HASH=$(sha1sum mcp_servers/package-lock.json | cut -c1-12)
if [ -L mcp_servers/node_modules ] || [ ! -f "mcp_servers/node_modules/.yiem-installed-$LOCK_HASH" ]; then
  bash scripts/install_npm_lock.sh mcp_servers mcp-npm "the npm MCP servers" \
    .bin/mcp-server-everything .bin/mcp-server-memory .bin/mcp-server-filesystem
fi

for name in $(grep -Eo '^[a-z0-9-]+==' mcp_servers/pypi-servers.txt | sed 's/==$//'); do
  bash scripts/install_pypi_server.sh "$name" >/dev/null
done
