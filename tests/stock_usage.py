"""Each vendor's own documented usage, pointed straight at a judge URL (no harness in between), for
the stock-parity test. One function per vendor metric; each scores many cases concurrently and
returns ``{case_id: Outcome}``. The test runs this module as a subprocess
(``python tests/stock_usage.py URL MODEL METRIC,...`` prints the outcomes as JSON), so TruLens's stock
provider patching the openai SDK process-wide, and the vendors' threads, stay out of the test session.

What "documented usage" is here (vendor-notes/*.md; the vendors' READMEs):

- Ragas 0.4.3: ``llm_factory(model, client=AsyncOpenAI(base_url, api_key))`` and
  ``ragas.metrics.collections.Faithfulness / ResponseGroundedness(llm=...).ascore(...)``;
- DeepEval 4.3.1: ``FaithfulnessMetric(model=OpenAIModel(model, base_url, api_key),
  penalize_ambiguous_claims=...)`` and ``await metric.a_measure(LLMTestCase(...))``;
- TruLens 2.16.0: ``trulens.providers.openai.OpenAI(model_engine, base_url, api_key, rpm)`` and its
  ``groundedness_measure_with_cot_reasons[_consider_answerability]`` / ``citation_attribution_with_cot_reasons``.

The only harness code used is what a stock run offline needs too, each a shim documented on the
metric's card: TruLens's offline Punkt and ``literal_eval`` trivial filter (``adapters.trulens._shims``),
Ragas's analytics data dir (``adapters.ragas._llm.vendor``); and the passages joined as the TruLens
adapter joins them (TruLens takes one ``source`` string; the card says how it is built).
"""
from __future__ import annotations

import asyncio
import json
import math
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

if __name__ == "__main__":  # pragma: no cover - run as a subprocess by the parity test
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KEY = "sk-parity-test"


@dataclass(frozen=True)
class Outcome:
    """What one stock call gave: a score (NaN kept as NaN) or the exception it raised."""

    score: float | None = None
    raised: str | None = None

    @property
    def nan(self) -> bool:
        return self.raised is None and (self.score is None or math.isnan(self.score))

    def show(self) -> str:
        if self.raised:
            return f"raised {self.raised}"
        return "NaN" if self.nan else f"{self.score:.4f}"


def _run_all(coros) -> list:
    async def main():
        return await asyncio.gather(*coros, return_exceptions=True)

    return asyncio.run(main())


def _outcomes(cases, results) -> dict:
    out = {}
    for case, r in zip(cases, results):
        out[case.id] = Outcome(raised=type(r).__name__) if isinstance(r, BaseException) else Outcome(
            score=float(r) if r is not None else None)
    return out


def ragas(url: str, model: str, cases, metric: str) -> dict:
    from openai import AsyncOpenAI

    from adapters.ragas._llm import vendor

    v = vendor()

    async def one(case):
        llm = v.llm_factory(model, client=AsyncOpenAI(base_url=url, api_key=KEY))
        if metric == "ragas.faithfulness":
            r = await v.Faithfulness(llm=llm).ascore(user_input=case.question, response=case.answer,
                                                     retrieved_contexts=case.context_texts)
        else:
            r = await v.ResponseGroundedness(llm=llm).ascore(response=case.answer,
                                                             retrieved_contexts=case.context_texts)
        return r.value

    return _outcomes(cases, _run_all([one(c) for c in cases]))


def deepeval(url: str, model: str, cases, penalize: bool) -> dict:
    from deepeval.metrics import FaithfulnessMetric
    from deepeval.models import OpenAIModel
    from deepeval.test_case import LLMTestCase

    from adapters.deepeval import _model  # noqa: F401 - harness env first (telemetry off), as in every run

    async def one(case):
        metric = FaithfulnessMetric(model=OpenAIModel(model=model, base_url=url, api_key=KEY),
                                    penalize_ambiguous_claims=penalize)
        tc = LLMTestCase(input=case.question, actual_output=case.answer, retrieval_context=case.context_texts)
        return await metric.a_measure(tc, _show_indicator=False)

    return _outcomes(cases, _run_all([one(c) for c in cases]))


def trulens(url: str, model: str, cases, metric: str) -> dict:
    from adapters.trulens.common import join_source, load_vendor

    load_vendor()   # the offline Punkt and literal_eval shims, as documented on the cards
    from trulens.providers.openai import OpenAI

    provider = OpenAI(model_engine=model, base_url=url, api_key=KEY, rpm=100_000)

    def one(case):
        try:
            if metric == "trulens.groundedness":
                return provider.groundedness_measure_with_cot_reasons(join_source(case), case.answer)[0]
            if metric == "trulens.groundedness_answerability":
                return provider.groundedness_measure_with_cot_reasons_consider_answerability(
                    join_source(case), case.answer, case.question)[0]
            return provider.citation_attribution_with_cot_reasons(case.question, list(case.context_texts),
                                                                  case.answer)[0]
        except Exception as e:  # noqa: BLE001 - the outcome records it
            return e

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, cases))
    out = _outcomes(cases, results)
    # TruLens's own "unparsable" sentinel is its NaN
    return {k: (Outcome(score=float("nan")) if o.score == -1.0 else o) for k, o in out.items()}


def stock(metric: str, url: str, model: str, cases) -> dict:
    """Outcomes of ``metric``'s stock usage on ``cases``."""
    if metric.startswith("ragas."):
        return ragas(url, model, cases, metric)
    if metric.startswith("deepeval."):
        return deepeval(url, model, cases, penalize=metric.endswith("_penalized"))
    return trulens(url, model, cases, metric)


def main(argv: list[str]) -> int:  # pragma: no cover - exercised through the parity test
    """``URL MODEL METRIC[,METRIC...]``: stock outcomes on the canonical cases, as one JSON line."""
    import harness  # noqa: F401 - the vendor switches (telemetry off) before any vendor import
    from harness.cases.load import load_cases

    from tests.conftest import CANONICAL

    url, model, metrics = argv[0], argv[1], argv[2].split(",")
    cases = list(load_cases(CANONICAL))
    with ThreadPoolExecutor(max_workers=len(metrics)) as pool:   # each metric's cases run concurrently too
        futures = {m: pool.submit(stock, m, url, model, cases) for m in metrics}
        out = {m: {cid: [o.score, o.raised] for cid, o in f.result().items()} for m, f in futures.items()}
    print(json.dumps(out, allow_nan=True), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
