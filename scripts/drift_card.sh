#!/usr/bin/env bash
# A drift card: one vendor's metrics scored on the canonical set under two of its releases, side by side
# (docs/drift.md). Usage: bash scripts/drift_card.sh VENDOR OTHER_VERSION [CASES]
#   e.g. bash scripts/drift_card.sh deepeval 4.2.3
# VENDOR is an extra of pyproject.toml and a metric prefix (deepeval, ragas); its locked version runs in
# .venv (scripts/setup.sh), OTHER_VERSION in a venv of its own, .venv-drift-VENDOR-OTHER_VERSION: uv.lock's
# pins for the engine and that extra, with VENDOR overridden to OTHER_VERSION (as .venv-azure runs apart:
# scripts/setup_azure.sh). Needs the package index for that release. Not in CI (a second vendor stack is too
# slow); tests/store/test_drift_sentinel.py checks the card-making logic offline on two recorded runs.
# Writes reports/cards/drift/VENDOR-OLDER-NEWER.md (the older release is run A).
set -euo pipefail
cd "$(dirname "$0")/.."
VENDOR=${1:?usage: bash scripts/drift_card.sh VENDOR OTHER_VERSION [CASES]}
OTHER=${2:?usage: bash scripts/drift_card.sh VENDOR OTHER_VERSION [CASES]}
CASES=${3:-datasets/canonical.jsonl}
export UV_PYTHON_DOWNLOADS=never UV_LINK_MODE=copy
bash scripts/setup.sh
LOCKED=$(.venv/bin/python -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$VENDOR")
[ "$LOCKED" != "$OTHER" ] || { echo "drift_card: $VENDOR $OTHER is the locked version; name another" >&2; exit 2; }
VENV=.venv-drift-$VENDOR-$OTHER
if [ ! -x "$VENV/bin/harness" ]; then
  echo "drift_card: building $VENV ($VENDOR $OTHER over uv.lock's pins)" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  .tools/bin/uv export --frozen --extra "$VENDOR" --no-dev --no-emit-project --no-hashes \
      --format requirements-txt --quiet -o "$work/req.txt"
  echo "$VENDOR==$OTHER" > "$work/override.txt"
  .tools/bin/uv venv --python "$(command -v python3.11 || command -v python3)" --quiet "$VENV"
  .tools/bin/uv pip install --python "$VENV/bin/python" --quiet -r "$work/req.txt" --override "$work/override.txt"
  .tools/bin/uv pip install --python "$VENV/bin/python" --no-deps --quiet -e .
fi
GOT=$("$VENV/bin/python" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$VENDOR")
[ "$GOT" = "$OTHER" ] || { echo "drift_card: $VENV has $VENDOR $GOT, not $OTHER" >&2; exit 1; }
OUT=reports/out/drift
# the older release is run A: the card reads "from A to B" as an upgrade
OLDER=$(printf '%s\n%s\n' "$LOCKED" "$OTHER" | sort -V | head -1)
NEWER=$(printf '%s\n%s\n' "$LOCKED" "$OTHER" | sort -V | tail -1)
bin_of() { if [ "$1" = "$LOCKED" ]; then echo .venv/bin/harness; else echo "$VENV/bin/harness"; fi; }
for v in "$OLDER" "$NEWER"; do
  rm -rf "$OUT/$VENDOR-$v"      # a fresh run each time: the card is what this code makes now
  "$(bin_of "$v")" run --cases "$CASES" --metrics "$VENDOR" --out "$OUT" --run-id "$VENDOR-$v" \
      --workers 1 --no-progress --no-report
done
.venv/bin/harness compare "$VENDOR-$OLDER" "$VENDOR-$NEWER" --out "$OUT" \
    --drift-card "reports/cards/drift/$VENDOR-$OLDER-$NEWER.md"
