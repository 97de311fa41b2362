"""Opik 2.2.122's own documented usage, pointed straight at a judge's base URL: the stock side of the strict
stock-parity test (``tests/vendors/test_stock_parity_more.py``).

``Hallucination(model=LiteLLMChatModel(model_name="openai/<model>", api_base=...,
api_key=...), track=False)`` and ``await metric.ascore(input=..., output=..., context=[...])``.

A standalone script: the test copies it beside ``tests/helpers/stock_common.py`` into a temporary folder and runs
``python stock_common.py stock.py MODEL CASES.json BASE_URL ...``; it imports no module of the project and reads
no setting of the project's (the runner lists any project module in ``sys.modules`` before it answers). The
environment carries only the vendor's own switches (its ``switches.py``) and ``HOME`` in a temporary folder.
"""
from __future__ import annotations

MODULE = "opik"
"""The vendor module that must be installed for the parity test to run."""
METRICS = ('opik.hallucination',)
"""The metrics :func:`score` scores (the harness side runs the same)."""


def score(url: str, model: str, cases: list[dict]) -> dict:
    from opik.evaluation.metrics import Hallucination
    from opik.evaluation.models import LiteLLMChatModel
    from stock_common import KEY, gather, outcome  # the runner's helpers (beside this script)

    metric = Hallucination(model=LiteLLMChatModel(model_name=f"openai/{model}", api_base=url, api_key=KEY),
                           track=False)

    async def one(c):
        result = await metric.ascore(input=c["question"], output=c["answer"], context=list(c["contexts"]))
        return result.value

    got = gather([one(c) for c in cases])
    return {"opik.hallucination": {c["id"]: outcome(r) for c, r in zip(cases, got)}}
