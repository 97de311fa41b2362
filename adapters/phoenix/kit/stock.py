"""arize-phoenix-evals 3.9.4's own documented usage, pointed straight at a judge's base URL: the stock side of the strict
stock-parity test (``tests/vendors/test_stock_parity_more.py``).

``LLM(provider="openai", model=..., base_url=..., api_key=...)`` and
``FaithfulnessEvaluator(llm=llm).async_evaluate({"input", "output", "context"})``; ``context`` is one
string, so the passages are joined with a blank line, as a user must join them.

A standalone script: the test copies it beside ``tests/helpers/stock_common.py`` into a temporary folder and runs
``python stock_common.py stock.py MODEL CASES.json BASE_URL ...``; it imports no module of the project and reads
no setting of the project's (the runner lists any project module in ``sys.modules`` before it answers). The
environment carries only the vendor's own switches (its ``switches.py``) and ``HOME`` in a temporary folder.
"""
from __future__ import annotations

MODULE = "phoenix.evals"
"""The vendor module that must be installed for the parity test to run."""
METRICS = ('phoenix.faithfulness',)
"""The metrics :func:`score` scores (the harness side runs the same)."""


def score(url: str, model: str, cases: list[dict]) -> dict:
    from phoenix.evals import LLM
    from phoenix.evals.metrics.faithfulness import FaithfulnessEvaluator
    from stock_common import KEY, gather, outcome  # the runner's helpers (beside this script)

    evaluator = FaithfulnessEvaluator(llm=LLM(provider="openai", model=model, base_url=url, api_key=KEY))

    async def one(c):
        scores = await evaluator.async_evaluate({"input": c["question"], "output": c["answer"],
                                                 "context": "\n\n".join(c["contexts"])})
        return scores[0].score

    got = gather([one(c) for c in cases])
    return {"phoenix.faithfulness": {c["id"]: outcome(r) for c, r in zip(cases, got)}}
