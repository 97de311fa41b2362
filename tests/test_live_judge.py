"""A real judge in the loop (opt-in, marker ``live``): the canonical cases x every metric through a
real OpenAI-compatible server, e.g. the small real model of ``../shared/realllm/setup.sh``.

    bash ../shared/realllm/setup.sh serve 1.5b 8081
    HARNESS_LIVE_JUDGE_URL=http://127.0.0.1:8081/v1 HARNESS_LIVE_JUDGE_MODEL=qwen2.5-coder-1.5b-instruct \\
        bash scripts/test.sh tests/test_live_judge.py -m live -s

Skipped unless ``HARNESS_LIVE_JUDGE_URL`` is set (``HARNESS_LIVE_JUDGE_MODEL`` names the model,
``HARNESS_LIVE_JUDGE_KEY_ENV`` the variable holding a key, if the server needs one). The cases are
:data:`DEFAULT_CASES` (7 of the 24, one of each kind; tens of minutes with the 1.5B model on 2
shared cores), or ``HARNESS_LIVE_CASES``: ``all`` or comma-separated ids. Concurrency 2.

What must hold with a real model: no cell errors because of the harness. A cell may still error
because the judge failed a call (the gateway retried it) or because the vendor's own code raised on
what the model wrote; the test prints those, and fails on any error raised in the harness's own code
(``detail.raised_in`` under ``harness.`` or ``adapters.``) and on any judge request the gateway
itself could not serve. :func:`live_parity` is the stock-parity comparison against the same judge,
for the strict parity test to call with its URL.
"""
import os

from harness.cases import CaseSet
from harness.run.runner import JudgeConfig, RunOptions, run
from harness.store.runstore import RunStore

import pytest

pytestmark = pytest.mark.live

URL = os.environ.get("HARNESS_LIVE_JUDGE_URL")
MODEL = os.environ.get("HARNESS_LIVE_JUDGE_MODEL", "")
KEY_ENV = os.environ.get("HARNESS_LIVE_JUDGE_KEY_ENV")
DEFAULT_CASES = ("cookie-yield", "release-date-contradicted", "refund-invented", "abstain-answerable",
                 "citation-misattributed", "multi-hop", "empty-answer")
"""One case of each kind (the subset ``bench/realllm.py`` was run on): partly grounded, contradicted,
invented, an abstention, [N] citations, two passages, the empty answer."""
HARNESS_CODE = ("harness.", "adapters.")

needs_judge = pytest.mark.skipif(not URL, reason="set HARNESS_LIVE_JUDGE_URL (and HARNESS_LIVE_JUDGE_MODEL)")


def live_cases(canonical) -> CaseSet:
    """The canonical cases this run covers (see the module docstring)."""
    want = os.environ.get("HARNESS_LIVE_CASES", ",".join(DEFAULT_CASES))
    if want.strip() == "all":
        return canonical
    ids = [i.strip() for i in want.split(",") if i.strip()]
    return CaseSet(canonical.path, tuple(canonical.by_id(i) for i in ids), canonical.sha256)


def run_live(url: str, model: str, cases, out: str, metrics=None, key_env: str | None = None) -> list[tuple]:
    """Every metric (or ``metrics``) on ``cases`` through the judge at ``url``; the cells as
    (case, metric, status, score, reason, detail JSON, judge errors, flags JSON)."""
    from harness.metric import registry

    outcome = run(RunOptions(cases=cases, metrics=list(metrics or registry.names()), out_dir=out, run_id="live",
                             progress=False, judge=JudgeConfig(url=url, model=model, key_env=key_env),
                             cache_mode="live", concurrency=2, cell_timeout_s=1800, call_timeout_s=600))
    store = RunStore.open(outcome.store_path)
    try:
        return store.rows("SELECT case_id, metric, status, score, reason, detail, errors, flags FROM cells")
    finally:
        store.close()


def harness_errors(cells) -> list[tuple]:
    """The error cells the harness caused: raised in its own code (``detail.raised_in``), or a reply the
    gateway could not hand on ("judge reply unusable"). A judge call the judge itself failed, after the
    gateway's retries, is the judge's."""
    import json

    out = []
    for case_id, metric, status, _score, reason, detail, _errors, _flags in cells:
        if status != "error":
            continue
        raised_in = json.loads(detail or "{}").get("raised_in") or ""
        if raised_in.startswith(HARNESS_CODE) or "judge reply unusable" in (reason or ""):
            out.append((case_id, metric, raised_in, reason))
    return out


def live_parity(url: str, model: str, cases, out: str, key_env: str | None = None) -> list[tuple]:
    """The stock-parity rows against the judge at ``url``: the harness's cells and the vendors' own
    usage (``tests/stock_usage.py`` in a subprocess), compared by ``tests.test_stock_parity.compare``."""
    import json
    import subprocess
    import sys

    from tests import stock_usage
    from tests.conftest import ROOT
    from tests.test_stock_parity import METRICS, compare

    cells = {(c, m): (s, sc, r or "", tuple(json.loads(f or "[]")))
             for c, m, s, sc, r, _d, _e, f in run_live(url, model, cases, out, METRICS, key_env)}
    p = subprocess.run([sys.executable, os.path.join("tests", "stock_usage.py"), url, model, ",".join(METRICS)],
                       cwd=ROOT, capture_output=True, text=True, timeout=7200)
    assert p.returncode == 0, p.stderr[-3000:]
    stock = json.loads(p.stdout.strip().splitlines()[-1])
    ids = {c.id for c in cases}
    return [compare(m, cid, stock_usage.Outcome(score=v[0], raised=v[1]), cells[(cid, m)])
            for m in METRICS for cid, v in stock[m].items() if cid in ids]


@needs_judge
def test_a_real_judge_scores_the_canonical_cases_with_no_error_of_the_harness(canonical, tmp_path):
    cells = run_live(URL, MODEL, live_cases(canonical), str(tmp_path), key_env=KEY_ENV)
    by_status: dict = {}
    for case_id, metric, status, _s, reason, *_ in cells:
        by_status.setdefault(metric, {}).setdefault(status, []).append(f"{case_id}: {(reason or '')[:100]}")
    for metric, statuses in sorted(by_status.items()):
        print(metric, {s: len(v) for s, v in statuses.items()})
        for s in ("error", "unscored", "vendor_nan"):
            for line in statuses.get(s, ()):
                print(f"    {s}: {line}")
    assert len(cells) == len(live_cases(canonical)) * len(by_status)
    assert not harness_errors(cells), harness_errors(cells)


@needs_judge
@pytest.mark.skipif(os.environ.get("HARNESS_LIVE_PARITY") != "1",
                    reason="set HARNESS_LIVE_PARITY=1: the stock side scores every canonical case again")
def test_stock_parity_holds_against_the_real_judge(canonical, tmp_path):
    rows = live_parity(URL, MODEL, live_cases(canonical), str(tmp_path), KEY_ENV)
    for r in rows:
        print("  ".join(str(v) for v in r))
    assert rows and not [r for r in rows if r[4] == "DIFFERENT"]
