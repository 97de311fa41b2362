"""DeepEval's own documented usage, pointed straight at a judge's base URL: the stock side of the strict
stock-parity test (``tests/vendors/test_stock_parity.py``).

DeepEval 4.3.1: ``FaithfulnessMetric(model=OpenAIModel(model=..., base_url=..., api_key=...),
penalize_ambiguous_claims=...)`` and ``await metric.a_measure(LLMTestCase(...))``. The environment carries only
``DEEPEVAL_TELEMETRY_OPT_OUT`` (:data:`ENV`) and ``HOME`` in a temporary folder; the working directory is a temporary
folder too (DeepEval reads ``.env`` files from there).

A standalone script: the test copies it beside ``tests/helpers/stock_common.py`` into a temporary folder and runs
``python stock_common.py stock.py MODEL CASES.json [METRIC=]BASE_URL ...``; it imports no module of the project and
reads no setting of the project's (the runner lists any project module in ``sys.modules`` before it answers). All
the judges are scored by one process (:func:`score_urls`: the vendor stack is imported once).
"""
from __future__ import annotations

MODULE = "deepeval"
"""The vendor module that must be installed."""
METRICS = ("deepeval.faithfulness", "deepeval.faithfulness_penalized")
ENV = {"DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
"""The environment the stock side runs with beyond PATH and HOME: the vendor's telemetry switch only."""


def score_urls(urls: list[str], model: str, cases: list[dict], only: dict) -> dict:
    """url -> metric -> case id -> outcome, every judge in one event loop."""
    from deepeval.metrics import FaithfulnessMetric
    from deepeval.models import OpenAIModel
    from deepeval.test_case import LLMTestCase
    from stock_common import KEY, one_loop, outcomes  # the runner's helpers (beside this script)

    def measure(penalize):
        async def one(url, c):
            metric = FaithfulnessMetric(model=OpenAIModel(model=model, base_url=url, api_key=KEY),
                                        penalize_ambiguous_claims=penalize)
            tc = LLMTestCase(input=c["question"], actual_output=c["answer"], retrieval_context=c["contexts"])
            return await metric.a_measure(tc, _show_indicator=False)
        return one

    runs = one_loop(urls, cases, only, {"deepeval.faithfulness": measure(False),
                                  "deepeval.faithfulness_penalized": measure(True)})
    return {url: outcomes(cases, results) for url, results in runs.items()}
