#!/usr/bin/env bash
# Run the lint and the test suite offline. Extra arguments go to pytest (e.g. -k span, -m soak).
set -euo pipefail
cd "$(dirname "$0")/.."
# deepeval and langsmith register pytest plugins that import their whole stack into every run
# (~5 s each time): autoload off, the plugins we use are named explicitly.
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
# lint first (imports at top, import order, no relative or star imports: [tool.ruff] in pyproject.toml)
.venv/bin/ruff check --quiet . || { echo "test.sh: ruff found the problems above (.venv/bin/ruff check --fix . mends most)" >&2; exit 1; }
exec .venv/bin/python -m pytest "$@"
