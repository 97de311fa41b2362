"""The stock side of azure.groundedness's parity test: Azure AI Evaluation's documented usage, pointed
straight at a judge's base URL. Runs in the azure environment (``.venv-azure``: the vendor installs
alone).

A standalone script in the style of ``tests/helpers/stock_common.py``: it imports no module of the project
(``harness``, ``adapters``, ``reports``, ``tests``; it lists any it finds in ``sys.modules`` before it
answers) and reads no setting of the project's. The test copies it into a temporary folder and runs:

    python stock.py MODEL CASES.json BASE_URL

``CASES.json`` is a list of ``{"id", "question", "answer", "contexts": [str, ...]}``. It prints one JSON
line, ``{"cells": {case_id: [score, exception_type, message, status]}, "project_modules": [...]}``
(``score`` null when the call raised or Azure skipped; ``status`` Azure's ``groundedness_status``).

The documented usage (azure-ai-evaluation 1.18.10), with its defaults (threshold 3):

    model_config = OpenAIModelConfiguration(type="openai", model=MODEL, base_url=URL, api_key=KEY)
    groundedness = GroundednessEvaluator(model_config)
    groundedness(query=question, response=answer, context=context)

``context`` is one string, so the passages are joined with a blank line, as a user must join them.
"""
from __future__ import annotations

import json
import math
import sys

KEY = "sk-stock-parity"
PROJECT = ("harness", "adapters", "reports", "tests")


def outcome(value) -> list:
    """``[score, exception type, message, status]`` for one call's result or exception."""
    if isinstance(value, BaseException):
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        return [None, name, " ".join(str(value).split())[:300], None]
    score = value.get("groundedness")
    if score is not None and math.isnan(float(score)):
        score = float("nan")
    return [None if score is None else float(score), None, None, value.get("groundedness_status")]


def main(argv: list[str]) -> int:
    model, cases_path, url = argv
    from azure.ai.evaluation import GroundednessEvaluator, OpenAIModelConfiguration

    with open(cases_path, encoding="utf-8") as fh:
        cases = json.load(fh)
    config = OpenAIModelConfiguration(type="openai", model=model, base_url=url, api_key=KEY)
    groundedness = GroundednessEvaluator(config)
    cells = {}
    for c in cases:
        try:
            got = groundedness(query=c["question"], response=c["answer"], context="\n\n".join(c["contexts"]))
        except Exception as e:  # noqa: BLE001 - the call's failure is its outcome
            got = e
        cells[c["id"]] = outcome(got)
    seen = sorted(m for m in sys.modules if m.split(".")[0] in PROJECT)
    print(json.dumps({"cells": cells, "project_modules": seen}, allow_nan=True), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
