#!/usr/bin/env bash
# Write packaging/constraints.txt from uv.lock: every pin the lock proves, for pip users
# (`pip install -c packaging/constraints.txt 'dist/...whl[ragas]'` installs exactly the locked versions).
# tests/cli/test_packaging.py fails when the file and the lock disagree; rerun this after `uv lock`.
set -euo pipefail
cd "$(dirname "$0")/.."
{
  echo "# pip constraints from uv.lock (scripts/constraints.sh writes this file; do not edit by hand)."
  echo "# pip install -c packaging/constraints.txt 'dist/groundedness_harness-0.1.0-py3-none-any.whl[ragas,deepeval]'"
  .tools/bin/uv export --frozen --all-extras --no-extra azure --no-dev --no-hashes --no-emit-project \
      --no-header --no-annotate --format requirements-txt -q
} > packaging/constraints.txt
