"""Ragas's own documented usage, pointed straight at a judge's base URL: the stock side of the strict
stock-parity test (``tests/vendors/test_stock_parity.py``).

Ragas 0.4.3: ``llm_factory(model, client=AsyncOpenAI(base_url=..., api_key=...))`` and
``ragas.metrics.collections.Faithfulness / ResponseGroundedness(llm=...).ascore(...)``. The environment carries
only ``RAGAS_DO_NOT_TRACK`` (:data:`ENV`) and ``HOME`` in a temporary folder (Ragas writes a uuid file there).

A standalone script: the test copies it beside ``tests/helpers/stock_common.py`` into a temporary folder and runs
``python stock_common.py stock.py MODEL CASES.json [METRIC=]BASE_URL ...``; it imports no module of the project and
reads no setting of the project's (the runner lists any project module in ``sys.modules`` before it answers). All
the judges are scored by one process (:func:`score_urls`: the vendor stack is imported once).
"""
from __future__ import annotations

MODULE = "ragas"
"""The vendor module that must be installed."""
METRICS = ("ragas.faithfulness", "ragas.response_groundedness")
ENV = {"RAGAS_DO_NOT_TRACK": "true"}
"""The environment the stock side runs with beyond PATH and HOME: the vendor's telemetry switch only."""


def score_urls(urls: list[str], model: str, cases: list[dict], only: dict) -> dict:
    """url -> metric -> case id -> outcome, every judge in one event loop."""
    from openai import AsyncOpenAI
    from ragas.llms import llm_factory
    from ragas.metrics.collections import Faithfulness, ResponseGroundedness
    from stock_common import KEY, one_loop, outcomes  # the runner's helpers (beside this script)

    async def faith(url, c):
        llm = llm_factory(model, client=AsyncOpenAI(base_url=url, api_key=KEY))
        r = await Faithfulness(llm=llm).ascore(user_input=c["question"], response=c["answer"],
                                               retrieved_contexts=c["contexts"])
        return r.value

    async def grounded(url, c):
        llm = llm_factory(model, client=AsyncOpenAI(base_url=url, api_key=KEY))
        return (await ResponseGroundedness(llm=llm).ascore(response=c["answer"], retrieved_contexts=c["contexts"])).value

    runs = one_loop(urls, cases, only, {"ragas.faithfulness": faith, "ragas.response_groundedness": grounded})
    return {url: outcomes(cases, results) for url, results in runs.items()}
