#!/usr/bin/env bash
# Set up .venv from uv.lock, exactly: the engine, every vendor extra and the dev group (tests, notebooks).
# Needs python3.11 and the package index; nothing else. Your own pip configuration (pip.conf, PIP_*) is used
# to fetch uv, and your uv configuration (uv.toml, UV_*) by uv. Safe to rerun: an up-to-date venv is left
# as it is (a few seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=0.13.8
TOOLS=.tools
export UV_PYTHON_DOWNLOADS=never          # use this machine's python3.11, never download one
export UV_COMPILE_BYTECODE=1              # PYTHONDONTWRITEBYTECODE is set here: without .pyc imports run 2-3x slower
export UV_LINK_MODE=copy
PY=$(command -v python3.11 || command -v python3)
if [ ! -x "$TOOLS/bin/uv" ] || [ "$("$TOOLS/bin/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  echo "setup: installing uv $UV_VERSION into $TOOLS/" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
      --target "$TOOLS/lib" "uv==$UV_VERSION"
  mkdir -p "$TOOLS/bin" && ln -sf "../lib/bin/uv" "$TOOLS/bin/uv"
fi
echo "setup: syncing .venv with uv.lock (frozen)" >&2
"$TOOLS/bin/uv" sync --frozen --all-extras --python "$PY" --quiet
