"""The runner of a vendor's stock-usage script (``kit/stock.py`` in the vendor's folder; :mod:`tests.helpers.kits`): the
stock side of the strict stock-parity tests (``tests/vendors/test_stock_parity.py``, ``tests/vendors/test_stock_parity_more.py``,
``tests/vendors/test_stock_parity_modes.py``, and the live comparison in ``tests/vendors/test_live_judge.py``).

A standalone script: the test copies it and the vendor's script into a temporary folder and runs

    python stock_common.py stock.py MODEL CASES.json BASE_URL [BASE_URL ...]

(a target written ``METRIC=BASE_URL`` is that base URL: the metric's own judge, whose books are its own)

It loads the vendor's script, calls its ``score(url, model, cases)`` once per base URL (each a judge), or its
``score_urls(urls, model, cases, only)`` once for all (a vendor whose stack is best set up once), and prints
one JSON line, ``{"runs": {base_url: {metric: {case_id: [score, exception_type, message]}}}, "project_modules":
[...]}`` (``score`` null when the call raised). Neither this runner nor the vendor's script may import a module of
the project (``harness``, ``adapters``, ``reports``, ``tests``): the modules found in ``sys.modules`` are listed.
``CASES.json`` is a list of ``{"id", "question", "answer", "contexts": [str, ...]}``.
"""
from __future__ import annotations

import asyncio
import importlib.util
import json
import sys

KEY = "sk-stock-parity"
PROJECT = ("harness", "adapters", "reports", "tests")
"""Top-level packages of the project: none may be imported here."""


def outcome(value) -> list:
    """``[score, exception type, message]`` for one stock call's result or exception.

    >>> outcome(0.5), outcome(ValueError("no  answer"))
    ([0.5, None, None], [None, 'ValueError', 'no answer'])
    """
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


CONCURRENCY = 8
"""Metric calls in flight at once. DeepEval gives each call a time budget (180 s by default) and has
128 timeout threads: a few hundred calls at once on a busy machine end in ``TimeoutError`` (wrapped in
``tenacity.RetryError``), which is the test's load, not the metric."""


def one_loop(urls: list[str], cases: list[dict], only: dict, metrics: dict) -> dict:
    """Every (judge, metric, case) call of an async vendor in one event loop, :data:`CONCURRENCY` at a
    time, as an async application runs them (one loop: a second ``asyncio.run`` in one process leaves
    DeepEval state bound to a closed loop): url -> metric -> results in case order. ``only``: url -> the one
    metric scored there."""
    jobs = [(u, m, c) for u in urls for m in metrics if only.get(u, m) == m for c in cases]

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


def outcomes(cases: list[dict], results: dict) -> dict:
    """metric -> case id -> :func:`outcome`, from metric -> results in case order."""
    return {m: {c["id"]: outcome(r) for c, r in zip(cases, rs)} for m, rs in results.items()}


def main(argv: list[str]) -> int:
    script, model, cases_path, *targets = argv
    urls, only = [], {}
    for t in targets:   # METRIC=URL: that judge scores that metric only
        metric, sep, url = t.partition("=")
        if sep and not metric.startswith("http"):
            only[url] = metric
        urls.append(url if sep and not metric.startswith("http") else t)
    spec = importlib.util.spec_from_file_location("stock_vendor", script)
    vendor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vendor)
    with open(cases_path, encoding="utf-8") as fh:
        cases = json.load(fh)
    if hasattr(vendor, "score_urls"):   # every judge in one call (the vendor's stack and loop set up once)
        runs = vendor.score_urls(urls, model, cases, only)
    else:
        runs = {url: {m: cells for m, cells in vendor.score(url, model, cases).items() if only.get(url, m) == m}
                for url in urls}
    seen = sorted(m for m in sys.modules if m.split(".")[0] in PROJECT)
    print(json.dumps({"runs": runs, "project_modules": seen}, allow_nan=True), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
