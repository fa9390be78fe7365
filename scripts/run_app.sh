#!/usr/bin/env bash
# `make run`: prepare the embedded local model when no provider key is configured and the example
# MCP server (both cached after the first time), then serve the app on 127.0.0.1:8501.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
PORT="${YIEM_PORT:-8501}"

if provider=$("$PY" -m yiem.chat configured-provider); then
  echo "yiem: using $provider (its key is configured)"
else
  echo "yiem: no provider key configured; the chat uses the embedded local model"
  PYTHON="$PY" bash scripts/setup_llama.sh
fi
# One small real MCP server the Tools page offers to a new user: PyPI's mcp-server-time, cached under
# ~/.cache/yiem keyed by its version, by the same installer the tests use (scripts/setup_mcp.sh).
if example=$(PYTHON="$PY" bash scripts/install_pypi_server.sh mcp-server-time); then
  export YIEM_EXAMPLE_MCP_SERVER="$example"
else
  echo "yiem: the example MCP server could not be installed; the Tools page offers none" >&2
fi
# The browser half of MCP Apps views (the official AppBridge, bundled once and cached).
bash scripts/setup_mcp_apps.sh || echo "yiem: the MCP Apps bridge could not be prepared; tools' views are not drawn" >&2
echo "yiem: starting the app at http://127.0.0.1:$PORT  (Ctrl+C stops it)"
# Only the names of this computer may open the app's WebSocket (DNS rebinding is refused), and
# every form post carries Streamlit's XSRF token.
exec "$PY" -m streamlit run app.py --server.address=127.0.0.1 --server.port="$PORT" \
  --server.headless=true --browser.gatherUsageStats=false --server.enableXsrfProtection=true \
  --server.allowedHosts=127.0.0.1 --server.allowedHosts=localhost
