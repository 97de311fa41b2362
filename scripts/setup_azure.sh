#!/usr/bin/env bash
# Set up .venv-azure from uv.lock: the engine, the azure extra (azure.groundedness) and the dev group, nothing else.
# azure-ai-evaluation needs pandas < 3 and the other extras are locked with pandas 3, so this extra installs alone
# (pyproject.toml's [tool.uv] conflicts; uv.lock holds both forks). Same rules as scripts/setup.sh, which it runs.
# Use it: .venv-azure/bin/harness metrics | run --metrics azure.groundedness ...
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS_VENV=.venv-azure HARNESS_EXTRAS="--extra azure" exec bash scripts/setup.sh
