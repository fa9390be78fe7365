#!/usr/bin/env bash
# Installs one PyPI MCP server pinned in mcp_servers/pypi-servers.txt into its own venv, cached under
# a folder keyed by version (~/.cache/yiem/NAME-VERSION, or $YIEM_CACHE_DIR), and prints the path of
# its command. Returns at once when it is already in place. Used by setup_mcp.sh and run_app.sh.
# Usage: PYTHON=python3 bash scripts/install_pypi_server.sh NAME
set -euo pipefail

cd "$(dirname "$0")/.."
NAME="${1:?usage: install_pypi_server.sh NAME}"
PIN=$(grep -E "^$NAME==" mcp_servers/pypi-servers.txt) || {
  echo "yiem: $NAME is not pinned in mcp_servers/pypi-servers.txt" >&2
  exit 1
}
VERSION="${PIN#*==}"
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
DIR="$CACHE_ROOT/$NAME-$VERSION"
PYTHON="${PYTHON:-python3}"

if [ ! -f "$DIR/.yiem-installed" ]; then
  echo "yiem: installing $NAME==$VERSION into $DIR..." >&2
  mkdir -p "$CACHE_ROOT"
  # Its own venv, so the server's pins never clash with the project's. A venv's scripts
  # hard-code its path, so it is built in place; the stamp marks it complete.
  rm -rf "$DIR"
  "$PYTHON" -m venv "$DIR"
  "$DIR/bin/python" -m pip install --quiet --disable-pip-version-check "$NAME==$VERSION" >&2
  # A library pinned here (a test server's framework) has no command of its own; it must import.
  test -x "$DIR/bin/$NAME" || "$DIR/bin/python" -c "import importlib.metadata as m; m.version('$NAME')"
  touch "$DIR/.yiem-installed"
  echo "yiem: $NAME ready at $DIR/bin/$NAME" >&2
fi
echo "$DIR/bin/$NAME"
