#!/usr/bin/env bash
# Run the test suite offline. Extra arguments go to pytest (e.g. -k span, -m soak).
set -euo pipefail
cd "$(dirname "$0")/.."
# deepeval and langsmith register pytest plugins that import their whole stack into every run
# (~5 s each time): autoload off, the plugins we use are named explicitly.
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
exec .venv/bin/python -m pytest "$@"
