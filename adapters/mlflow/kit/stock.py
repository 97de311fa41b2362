"""mlflow-skinny 3.17.2's own documented usage, pointed straight at a judge's base URL: the stock side of the strict
stock-parity test (``tests/vendors/test_stock_parity_more.py``).

``OPENAI_API_BASE`` and ``OPENAI_API_KEY`` in the environment and
``mlflow.genai.judges.is_grounded(request=, response=, context=[{"content": passage}, ...],
model="openai:/<model>")``, one call at a time; its ``yes``/``no`` scored 1/0 (another value raises).

A standalone script: the test copies it beside ``tests/helpers/stock_common.py`` into a temporary folder and runs
``python stock_common.py stock.py MODEL CASES.json BASE_URL ...``; it imports no module of the project and reads
no setting of the project's (the runner lists any project module in ``sys.modules`` before it answers). The
environment carries only the vendor's own switches (its ``switches.py``) and ``HOME`` in a temporary folder.
"""
from __future__ import annotations

import os

MODULE = "mlflow.genai"
"""The vendor module that must be installed for the parity test to run."""
METRICS = ('mlflow.groundedness',)
"""The metrics :func:`score` scores (the harness side runs the same)."""


def score(url: str, model: str, cases: list[dict]) -> dict:
    from stock_common import KEY, outcome  # the runner's helpers (beside this script)

    os.environ["OPENAI_API_BASE"], os.environ["OPENAI_API_KEY"] = url, KEY
    from mlflow.genai.judges import is_grounded

    def one(c):
        try:
            fb = is_grounded(request=c["question"], response=c["answer"], model=f"openai:/{model}",
                             context=[{"content": t} for t in c["contexts"]])
        except Exception as e:  # noqa: BLE001 - the stock call's failure is the outcome
            return outcome(e)
        value = getattr(fb.value, "value", fb.value)
        return outcome({"yes": 1.0, "no": 0.0}[value] if value in ("yes", "no") else ValueError(value))

    return {"mlflow.groundedness": {c["id"]: one(c) for c in cases}}
