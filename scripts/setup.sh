#!/usr/bin/env bash
# Set up .venv from uv.lock, exactly: the engine, every vendor extra and the dev group (tests, notebooks).
# Needs python3.11 and the package index; nothing else. Your own pip configuration (pip.conf, PIP_*) is used
# to fetch uv, and your uv configuration (uv.toml, UV_*) by uv. Safe to rerun: when uv.lock, pyproject.toml,
# the index and .venv's installed packages are as the last successful run left them (a stamp in .venv), it
# does nothing (well under a second); otherwise it syncs, and byte-compiles only the files that changed.
set -euo pipefail
cd "$(dirname "$0")/.."
# scripts/setup_azure.sh reuses this script for .venv-azure (the azure extra installs alone: pyproject's conflicts)
VENV=${HARNESS_VENV:-.venv}
read -r -a EXTRAS <<< "${HARNESS_EXTRAS:---all-extras --no-extra azure}"
export UV_PROJECT_ENVIRONMENT=$VENV
UV_VERSION=0.13.8
TOOLS=.tools
export UV_PYTHON_DOWNLOADS=never          # use this machine's python3.11, never download one
export UV_LINK_MODE=copy
# PYTHONDONTWRITEBYTECODE is set here, and without .pyc imports run 2-3x slower. uv's own byte-compiling
# (UV_COMPILE_BYTECODE) compiles the whole venv again on every sync (~30 s); compileall after the sync
# compiles only what has no up-to-date .pyc, so a sync that changed nothing costs a stat per file.
unset UV_COMPILE_BYTECODE
PY=$(command -v python3.11 || command -v python3)
# the interpreter itself, not a launcher: a pyenv shim (or any wrapper) names another path than the one the venv
# records, and uv would then replace the whole venv on every sync instead of syncing the difference
PY=$("$PY" -c 'import os, sys; print(os.path.realpath(sys.executable))')
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
# The MLflow server for the browser test of the MLflow export (tests/browser/test_mlflow_server.py) goes into a venv of
# its own, from a lock of its own (tests/helpers/mlflow_server/pyproject.toml says why); only beside the main .venv, and
# with a stamp of its own like the one below.
if [ -z "${HARNESS_VENV:-}" ]; then
  SERVER_VENV=$PWD/.venv-mlflow-server
  server_print() { { echo "$UV_VERSION $PY $index"; cat tests/helpers/mlflow_server/uv.lock tests/helpers/mlflow_server/pyproject.toml;
                     ls -a "$SERVER_VENV"/lib/python*/site-packages 2>/dev/null; } | sha256sum | cut -d' ' -f1; }
  if ! { [ -x "$SERVER_VENV/bin/mlflow" ] && [ "$(cat "$SERVER_VENV/.harness-setup" 2>/dev/null)" = "$(server_print)" ]; }; then
    echo "setup: syncing .venv-mlflow-server with tests/helpers/mlflow_server/uv.lock (frozen)" >&2
    rm -f "$SERVER_VENV/.harness-setup"
    if [ -z "$index" ]; then
      UV_PROJECT_ENVIRONMENT=$SERVER_VENV "$TOOLS/bin/uv" sync --frozen --project tests/helpers/mlflow_server --python "$PY" --quiet
    else
      sreq=$(mktemp)
      "$TOOLS/bin/uv" export --frozen --project tests/helpers/mlflow_server --format requirements-txt --no-emit-project \
          --quiet -o "$sreq"
      [ -x "$SERVER_VENV/bin/python" ] || "$TOOLS/bin/uv" venv --python "$PY" --quiet "$SERVER_VENV"
      "$TOOLS/bin/uv" pip sync --python "$SERVER_VENV/bin/python" --quiet "$sreq"
      rm -f "$sreq"
    fi
    server_print > "$SERVER_VENV/.harness-setup"
  fi
fi
STAMP=$VENV/.harness-setup
fingerprint() {   # what a synced .venv depends on, and the installed set (site-packages changes on any install)
  { echo "$UV_VERSION $PY $index"; cat uv.lock pyproject.toml; ls -a "$VENV"/lib/python*/site-packages 2>/dev/null; } \
    | sha256sum | cut -d' ' -f1
}
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(fingerprint)" ]; then
  echo "setup: $VENV is up to date with uv.lock (nothing to do)" >&2
  exit 0
fi
rm -f "$STAMP"
if [ -z "$index" ]; then
  echo "setup: syncing $VENV with uv.lock (frozen)" >&2
  "$TOOLS/bin/uv" sync --frozen "${EXTRAS[@]}" --python "$PY" --quiet
else
  echo "setup: installing uv.lock's pins and hashes through your index ($index)" >&2
  req=$(mktemp)
  trap 'rm -f "$req"' EXIT
  "$TOOLS/bin/uv" export --frozen "${EXTRAS[@]}" --format requirements-txt --no-emit-project --quiet -o "$req"
  [ -x "$VENV/bin/python" ] || "$TOOLS/bin/uv" venv --python "$PY" --quiet "$VENV"
  "$TOOLS/bin/uv" pip sync --python "$VENV/bin/python" --quiet "$req"
  "$TOOLS/bin/uv" pip install --python "$VENV/bin/python" --no-deps --quiet -e .
fi
echo "setup: byte-compiling what changed" >&2
"$VENV/bin/python" -m compileall -q -j 0 "$VENV"/lib/python*/site-packages >/dev/null || true
fingerprint > "$STAMP"
