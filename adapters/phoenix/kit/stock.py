"""The stock side of the parity test for the whole-answer vendors of issue 24 (Phoenix, Opik): each
vendor's own documented usage, pointed straight at a judge's base URL.

A standalone script in the style of ``tests/stock_usage.py``: it imports no module of the project
(``harness``, ``adapters``, ``reports``, ``tests``; it lists any it finds in ``sys.modules`` before it
answers) and reads no setting of the project's. The test copies it into a temporary folder and runs:

    python stock_usage_more.py VENDOR MODEL CASES.json BASE_URL [BASE_URL ...]

``CASES.json`` is a list of ``{"id", "question", "answer", "contexts": [str, ...]}``. It prints one
JSON line, ``{"runs": {base_url: {metric: {case_id: [score, exception_type, message]}}},
"project_modules": [...]}`` (``score`` null when the call raised).

The vendors' documented usage, with their defaults:

- arize-phoenix-evals 3.9.4: ``LLM(provider="openai", model=..., base_url=..., api_key=...)`` and
  ``FaithfulnessEvaluator(llm=llm).async_evaluate({"input", "output", "context"})``; ``context`` is one
  string, so the passages are joined with a blank line, as a user must join them.
- mlflow-skinny 3.17.2: ``OPENAI_API_BASE`` and ``OPENAI_API_KEY`` in the environment and
  ``mlflow.genai.judges.is_grounded(request=, response=, context=[{"content": passage}, ...],
  model="openai:/<model>")``, one call at a time; its ``yes``/``no`` scored 1/0 (another value raises);
- Opik 2.2.122: ``Hallucination(model=LiteLLMChatModel(model_name="openai/<model>", api_base=...,
  api_key=...), track=False)`` and ``await metric.ascore(input=..., output=..., context=[...])``.

Beyond that the test passes only the vendors' own switches in the environment (MLflow's telemetry and
catalog fetch off; Opik's tracking, analytics and Sentry off) and ``HOME`` pointed at a temporary folder; none changes a score.
"""
from __future__ import annotations

import asyncio
import json
import sys

KEY = "sk-stock-parity"
PROJECT = ("harness", "adapters", "reports", "tests")
"""Top-level packages of the project: none may be imported here."""
METRICS = {"phoenix": ("phoenix.faithfulness",), "mlflow": ("mlflow.groundedness",), "opik": ("opik.hallucination",)}


def outcome(value) -> list:
    """``[score, exception type, message]`` for one stock call's result or exception."""
    if isinstance(value, BaseException):
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        return [None, name, " ".join(str(value).split())[:300]]
    return [None if value is None else float(value), None, None]


def gather(coros) -> list:
    """Every coroutine's result or exception, in one event loop that is left open afterwards.

    Not ``asyncio.run``: its teardown cancels every task left, and LiteLLM 1.80.0's logging worker (Opik's
    model) can lose that cancellation on Python 3.11 and wait for ever (CPython gh-86296, LiteLLM #16518;
    the harness's opik adapter carries a shim for it, and this stock side must stay unpatched). The scores
    are complete before the teardown, so skipping it changes nothing the vendor computed."""
    async def main():
        return await asyncio.gather(*coros, return_exceptions=True)

    return asyncio.new_event_loop().run_until_complete(main())


def phoenix(url: str, model: str, cases: list[dict]) -> dict:
    from phoenix.evals import LLM
    from phoenix.evals.metrics.faithfulness import FaithfulnessEvaluator

    evaluator = FaithfulnessEvaluator(llm=LLM(provider="openai", model=model, base_url=url, api_key=KEY))

    async def one(c):
        scores = await evaluator.async_evaluate({"input": c["question"], "output": c["answer"],
                                                 "context": "\n\n".join(c["contexts"])})
        return scores[0].score

    got = gather([one(c) for c in cases])
    return {"phoenix.faithfulness": {c["id"]: outcome(r) for c, r in zip(cases, got)}}


def mlflow(url: str, model: str, cases: list[dict]) -> dict:
    import os

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


def opik(url: str, model: str, cases: list[dict]) -> dict:
    from opik.evaluation.metrics import Hallucination
    from opik.evaluation.models import LiteLLMChatModel

    metric = Hallucination(model=LiteLLMChatModel(model_name=f"openai/{model}", api_base=url, api_key=KEY),
                           track=False)

    async def one(c):
        result = await metric.ascore(input=c["question"], output=c["answer"], context=list(c["contexts"]))
        return result.value

    got = gather([one(c) for c in cases])
    return {"opik.hallucination": {c["id"]: outcome(r) for c, r in zip(cases, got)}}


VENDORS = {"phoenix": phoenix, "mlflow": mlflow, "opik": opik}


def main(argv: list[str]) -> int:
    vendor, model, cases_path, *targets = argv
    urls = [t.partition("=")[2] if "=" in t and not t.startswith("http") else t for t in targets]   # METRIC=URL
    with open(cases_path, encoding="utf-8") as fh:
        cases = json.load(fh)
    runs = {url: VENDORS[vendor](url, model, cases) for url in urls}
    seen = sorted(m for m in sys.modules if m.split(".")[0] in PROJECT)
    print(json.dumps({"runs": runs, "project_modules": seen}, allow_nan=True), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
