"""Strict stock parity for the whole-answer vendors of issue 24 (Phoenix faithfulness, Opik
hallucination): the harness's metric and the vendor's own documented usage score every canonical case
against the same realistic test judge, and must agree, with no allowed difference.

- Stock side: ``tests/stock_usage_more.py``, copied into a temporary folder and run there as a script,
  one process per vendor. It imports nothing of the project (it reports the modules it sees; the test
  requires none) and gets no setting of the project's: the judge URL, the model name, the cases as
  plain JSON, ``HOME`` in a temporary folder and the vendors' own telemetry switches.
- Harness side: a harness run of the metrics through ``--judge-url`` to a judge of the same kind (a
  separate server, so each side's books are its own; the replies depend on the prompt only).

Each kind of server the realistic judge offers is used (``SERVER_MODES`` when the judge has modes).
A cell agrees when both sides give the same score (1e-9), or both fail (the stock call raised and the
harness cell is an error). The parity table is printed (``pytest -s``) and written to the temp dir.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

from harness.cases.load import load_cases
from harness.run.runner import JudgeConfig, RunOptions, run
from harness.store.runstore import RunStore

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.judges import realistic
from tests.test_stock_parity import _same, plain_cases

VENDORS = {"phoenix": ("phoenix.evals", ("phoenix.faithfulness",)),
           "mlflow": ("mlflow.genai", ("mlflow.groundedness",)),
           "opik": ("opik", ("opik.hallucination",))}
"""vendor -> (module that must import, its metrics)."""
SWITCHES = {"MLFLOW_DISABLE_TELEMETRY": "true", "MLFLOW_MODEL_CATALOG_URI": "",
            "OPIK_TRACK_DISABLE": "true", "OPIK_ANALYTICS_ENABLE": "false", "OPIK_SENTRY_ENABLE": "false",
            "OPIK_ENABLE_LITELLM_MODELS_MONITORING": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
"""The vendors' own switches the stock side runs with (Phoenix has none): MLflow's keep it off the network
(no telemetry, no catalog fetch, which feeds only its cost figure and tool-call pruning); Opik's tracking,
analytics and error reporting off, and LiteLLM's bundled price map."""
MODES = tuple(getattr(realistic, "SERVER_MODES", ())) or (None,)


def _serve(mode):
    return realistic.serve(mode=mode) if mode else realistic.serve()


def stock(vendor: str, url: str, cases_json: str, tmp) -> dict:
    """metric -> case -> [score, exception, message] from the vendor's documented usage."""
    work = tmp / f"stock-{vendor}"
    work.mkdir(exist_ok=True)
    script = shutil.copy(os.path.join(ROOT, "tests", "stock_usage_more.py"), work)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), **SWITCHES}
    p = subprocess.run([sys.executable, script, vendor, realistic.MODEL, cases_json, url], cwd=work, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads(p.stdout.strip().splitlines()[-1])
    assert data["project_modules"] == [], data["project_modules"]
    return data["runs"][url]


def harness_cells(metrics, url: str, cases, out: str, run_id: str) -> dict:
    """(metric, case) -> (status, score, reason, flags, detail) from a harness run through ``--judge-url``."""
    outcome = run(RunOptions(cases=cases, metrics=list(metrics), out_dir=out, run_id=run_id, progress=False,
                             judge=JudgeConfig(url=url, model=realistic.MODEL), cache_mode="live"))
    store = RunStore.open(outcome.store_path)
    try:
        return {(r[1], r[0]): (r[2], r[3], r[4] or "", r[5] or "", r[6] or "") for r in store.rows(
            "SELECT case_id, metric, status, score, reason, flags, detail FROM cells")}
    finally:
        store.close()


def compare(stock_cell, harness_cell) -> str:
    """``same`` or ``DIFFERENT``, by the strict test's rule (:func:`tests.test_stock_parity._same`: the same
    score, or an error raised with the exception type stock raised). A stock NaN stays DIFFERENT here: these
    vendors never return one, so one would be new behaviour to look at."""
    score, raised, _ = stock_cell
    nan = raised is None and (score is None or math.isnan(score))
    return "same" if not nan and _same(stock_cell, harness_cell) else "DIFFERENT"


@pytest.fixture(scope="module", params=sorted(VENDORS))
def parity(request, tmp_path_factory):
    vendor = request.param
    module, metrics = VENDORS[vendor]
    pytest.importorskip(module)
    tmp = tmp_path_factory.mktemp(f"parity-{vendor}")
    cases = load_cases(CANONICAL)
    cases_json = plain_cases(cases, str(tmp / "cases.json"))
    rows, books = [], []
    for mode in MODES:
        with _serve(mode) as stock_judge, _serve(mode) as harness_judge:
            theirs = stock(vendor, stock_judge.url, cases_json, tmp)
            ours = harness_cells(metrics, harness_judge.url, cases, str(tmp / "runs"), f"parity-{mode or 'one'}")
            books += [stock_judge.stats(), harness_judge.stats()]
        for m in metrics:
            for c in cases:
                s, h = theirs[m][c.id], ours[(m, c.id)]
                rows.append((mode or "-", m, c.id, s, h, compare(s, h)))
    table = "\n".join(f"{r[0]:9} {r[1]:22} {r[2]:26} stock {r[3][0] if r[3][1] is None else r[3][1]!s:28} "
                      f"harness {r[4][0]} {r[4][1]!s:8} {r[5]}" for r in rows)
    print("\n" + table)
    (tmp / "parity-table.txt").write_text(table + "\n")
    return vendor, rows, books


def test_harness_scores_what_the_vendors_own_usage_scores(parity):
    vendor, rows, _ = parity
    different = [r for r in rows if r[5] != "same"]
    assert not different, "\n".join(map(str, different))
    scored = [r for r in rows if r[4][0] == "scored"]
    assert len(scored) >= 0.75 * len(rows), f"{vendor}: too few scored cells to compare"


def test_the_judge_recognised_every_request(parity):
    vendor, _, books = parity
    for b in books:
        assert b["unrecognised"] == 0 and b["crashed"] == 0 and b["calls"] >= 24, b
