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
export UV_COMPILE_BYTECODE_TIMEOUT=${UV_COMPILE_BYTECODE_TIMEOUT:-900}   # a loaded machine needs more than uv's 60 s per file
PY=$(command -v python3.11 || command -v python3)
if [ ! -x "$TOOLS/bin/uv" ] || [ "$("$TOOLS/bin/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  echo "setup: installing uv $UV_VERSION into $TOOLS/" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
      --target "$TOOLS/lib" "uv==$UV_VERSION"
  mkdir -p "$TOOLS/bin" && ln -sf "../lib/bin/uv" "$TOOLS/bin/uv"
fi
# `uv sync --frozen` downloads from the URLs written in uv.lock, whatever index is configured; so when you
# have configured one for uv (a mirror), the same pins and hashes are installed through it instead.
index=""
for v in UV_DEFAULT_INDEX UV_INDEX_URL UV_INDEX UV_EXTRA_INDEX_URL; do [ -n "${!v:-}" ] && index="\$$v"; done
for f in "${XDG_CONFIG_HOME:-$HOME/.config}/uv/uv.toml" /etc/uv/uv.toml; do
  [ -f "$f" ] && grep -qE '^\s*(\[\[index\]\]|index-url|extra-index-url)' "$f" && index="$f"
done
if [ -z "$index" ]; then
  echo "setup: syncing .venv with uv.lock (frozen)" >&2
  "$TOOLS/bin/uv" sync --frozen --all-extras --python "$PY" --quiet
else
  echo "setup: installing uv.lock's pins and hashes through your index ($index)" >&2
  req=$(mktemp)
  trap 'rm -f "$req"' EXIT
  "$TOOLS/bin/uv" export --frozen --all-extras --format requirements-txt --no-emit-project --quiet -o "$req"
  [ -x .venv/bin/python ] || "$TOOLS/bin/uv" venv --python "$PY" --quiet .venv
  "$TOOLS/bin/uv" pip sync --python .venv/bin/python --quiet "$req"
  "$TOOLS/bin/uv" pip install --python .venv/bin/python --no-deps --quiet -e .
fi
