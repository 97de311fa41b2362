"""Strict stock parity for azure.groundedness: the harness's metric and Azure AI Evaluation's own
documented usage score every canonical case against the same realistic test judge, and must agree,
with no allowed difference. Runs where the vendor is installed (``.venv-azure``, which ``.ci/run``
builds); elsewhere it is skipped, saying so.

- Stock side: ``adapters/azure/kit/stock.py`` copied into a temporary folder and run there as a script
  with this interpreter (so the azure environment), ``HOME`` in that folder and no setting of the
  project's. It imports nothing of the project (it reports the modules it sees; the test requires none).
- Harness side: a harness run through ``--judge-url`` to a judge of the same kind (a separate server,
  so each side's books are its own; the replies depend on the prompt only).

A cell agrees when both sides give the same
rating, both are not applicable (Azure's ``skipped``; or the stock call raised Azure's own input refusal,
"(UserError) Response string cannot be empty.", which the metric records as not applicable), or both
fail (the stock call raised and the harness cell is an error). The table is printed (``pytest -s``) and written to the temp dir.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from importlib.util import find_spec

from harness.cases.load import load_cases

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.judges import realistic
from tests.vendors.test_stock_parity import plain_cases

METRIC = "azure.groundedness"
MODES = ("chat-404",) if "chat-404" in getattr(realistic, "SERVER_MODES", ()) else (None,)
"""One server kind: Azure calls chat completions only, and the realistic judge's server modes differ only in
how they answer the Responses API; a chat-only server (llama.cpp's) is the common local judge."""

pytestmark = pytest.mark.skipif(
    find_spec("azure") is None or find_spec("azure.ai.evaluation") is None,
    reason="azure-ai-evaluation is not in this environment: it installs alone (bash scripts/setup_azure.sh); "
           ".ci/run runs this file in .venv-azure")


def stock(url: str, cases_json: str, work) -> dict:
    """case -> [score, exception, message, status] from Azure's documented usage."""
    work.mkdir(exist_ok=True)
    script = shutil.copy(os.path.join(ROOT, "adapters", "azure", "kit", "stock.py"), work)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work)}
    p = subprocess.run([sys.executable, script, realistic.MODEL, cases_json, url], cwd=work, env=env,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads(p.stdout.strip().splitlines()[-1])
    assert data["project_modules"] == [], data["project_modules"]
    return data["cells"]


def harness_cells(url: str, cases, out: str, run_id: str) -> dict:
    """case -> (status, score, reason) from a harness run through ``--judge-url``."""
    from harness.run.runner import JudgeConfig, RunOptions, run
    from harness.store.runstore import RunStore

    outcome = run(RunOptions(cases=cases, metrics=[METRIC], out_dir=out, run_id=run_id, progress=False,
                             judge=JudgeConfig(url=url, model=realistic.MODEL), cache_mode="live"))
    store = RunStore.open(outcome.store_path)
    try:
        return {r[0]: (r[1], r[2], r[3] or "") for r in store.rows(
            "SELECT case_id, status, score, reason FROM cells WHERE metric = ?", (METRIC,))}
    finally:
        store.close()


def compare(stock_cell, harness_cell) -> str:
    """``same`` or ``DIFFERENT``."""
    score, raised, message, status = stock_cell
    got, value, _ = harness_cell
    if raised is not None:   # Azure's validator refusing an input (an empty answer) is the cell's not-applicable
        refused = raised.endswith("EvaluationException") and str(message).startswith("(UserError)")
        return "same" if got == "error" or (refused and got == "not_applicable") else "DIFFERENT"
    if status == "skipped":
        return "same" if got == "not_applicable" else "DIFFERENT"
    if score is None or (isinstance(score, float) and math.isnan(score)):
        return "same" if got == "vendor_nan" else "DIFFERENT"
    return "same" if got == "scored" and math.isclose(score, value, abs_tol=1e-9) else "DIFFERENT"


@pytest.fixture(scope="module")
def parity(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("parity-azure")
    cases = load_cases(CANONICAL)
    cases_json = plain_cases(cases, str(tmp / "cases.json"))
    rows, books = [], []
    for mode in MODES:
        with (realistic.serve(mode=mode) if mode else realistic.serve()) as stock_judge, \
                (realistic.serve(mode=mode) if mode else realistic.serve()) as harness_judge:
            theirs = stock(stock_judge.url, cases_json, tmp / f"stock-{mode or 'one'}")
            ours = harness_cells(harness_judge.url, cases, str(tmp / "runs"), f"parity-{mode or 'one'}")
            books += [stock_judge.stats(), harness_judge.stats()]
        rows += [(mode or "-", c.id, theirs[c.id], ours[c.id], compare(theirs[c.id], ours[c.id])) for c in cases]
    table = "\n".join(f"{r[0]:9} {r[1]:26} stock {r[2][0] if r[2][1] is None else r[2][1]!s:28} "
                      f"harness {r[3][0]} {r[3][1]!s:8} {r[4]}" for r in rows)
    print("\n" + table)
    (tmp / "parity-table.txt").write_text(table + "\n")
    return rows, books


def test_harness_scores_what_azures_own_usage_scores(parity):
    rows, _ = parity
    different = [r for r in rows if r[4] != "same"]
    assert not different, "\n".join(map(str, different))
    scored = [r for r in rows if r[3][0] == "scored"]
    assert len(scored) >= 0.75 * len(rows), "too few scored cells to compare"
    assert {r[3][1] for r in scored} >= {2.0, 5.0}, "the judge's ratings do not vary: nothing is compared"


def test_the_judge_recognised_every_request(parity):
    _, books = parity
    for b in books:
        # one call per answer but the empty one (Azure refuses it before calling)
        assert b["unrecognised"] == 0 and b["crashed"] == 0 and b["calls"] >= 23, b


def test_azures_nan_under_a_judge_that_does_not_know_its_prompt_is_azures_own(tmp_path):
    """Issue 37: against a judge that does not know Azure's prompt and answers it with JSON that holds no
    rating (as a server honouring ``json_object`` makes it), Azure's own documented usage returns NaN on
    every answer (its ``missing_score``), and the harness records the same NaN as the vendor's: nothing
    of the harness's makes it (card: degenerate inputs)."""
    cases = load_cases(CANONICAL)
    cases_json = plain_cases(cases, str(tmp_path / "cases.json"))
    kind = {"mode": MODES[0]} if MODES[0] else {}
    with realistic.serve(forget=("azure",), **kind) as stock_judge, \
            realistic.serve(forget=("azure",), **kind) as harness_judge:
        theirs = stock(stock_judge.url, cases_json, tmp_path / "stock")
        ours = harness_cells(harness_judge.url, cases, str(tmp_path / "runs"), "forgotten")
        assert stock_judge.stats()["steps"]["forgotten.azure"] >= 23
        assert harness_judge.stats()["steps"]["forgotten.azure"] >= 23
    answered = [c.id for c in cases if c.answer]
    assert len(answered) >= 23
    assert [i for i in answered if not (theirs[i][1] is None and theirs[i][0] is not None
                                        and math.isnan(theirs[i][0]))] == [], theirs
    assert [i for i in answered if ours[i][0] != "vendor_nan"] == [], ours
    assert all(compare(theirs[i], ours[i]) == "same" for i in theirs)
