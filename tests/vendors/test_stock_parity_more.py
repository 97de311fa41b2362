"""Strict stock parity for every vendor whose folder has a stock-usage script run by ``tests/helpers/stock_common.py``
(``kit/stock.py``: Phoenix faithfulness, MLflow groundedness, Opik hallucination): the harness's metric and the vendor's own documented usage score every canonical case
against the same realistic test judge, and must agree, with no allowed difference.

- Stock side: the vendor's ``kit/stock.py``, copied with ``tests/helpers/stock_common.py`` into a temporary folder and
  run there as a script, one process per vendor. It imports nothing of the project (it reports the modules it
  sees; the test requires none) and gets no setting of the project's: the judge URL, the model name, the cases
  as plain JSON, ``HOME`` in a temporary folder and the vendor's own switches (its ``switches.py``).
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
import subprocess

from harness.cases.load import load_cases
from harness.metric import registry
from harness.run.runner import JudgeConfig, RunOptions, run
from harness.store.runstore import RunStore

import pytest

from tests.conftest import CANONICAL
from tests.helpers import kits
from tests.helpers.judges import realistic
from tests.vendors.test_stock_parity import _same, plain_cases


def _vendors() -> dict:
    """vendor -> (its stock script, the module that must import, its metrics, its switches): every vendor whose
    folder has a ``kit/stock.py`` run by ``tests/helpers/stock_common.py`` (:mod:`tests.helpers.kits`) and a ``switches.py``
    (the only settings the stock side gets)."""
    out = {}
    for folder, script in kits.parts("stock").items():
        if hasattr(script, "score"):   # one judge at a time: not tests/vendors/test_stock_parity.py's vendors (score_urls),
            # nor azure's script, which has a shape of its own (tests/vendors/test_azure_parity.py)
            switches = registry.folder_part(folder, "switches")
            out[folder.rpartition(".")[2]] = (script.__file__, script.MODULE, tuple(script.METRICS),
                                              dict(getattr(switches, "SWITCHES", {})))
    return out


VENDORS = _vendors()
SWITCHES = {k: v for *_, switches in VENDORS.values() for k, v in switches.items()}
"""Every such vendor's own switches (the live comparison runs them all with one environment)."""
MODES = tuple(getattr(realistic, "SERVER_MODES", ())) or (None,)



def _serve(mode):
    return realistic.serve(mode=mode) if mode else realistic.serve()


def stock(vendor: str, url: str, cases_json: str, tmp) -> dict:
    """metric -> case -> [score, exception, message] from the vendor's documented usage."""
    work = tmp / f"stock-{vendor}"
    work.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), **VENDORS[vendor][3]}
    p = subprocess.run([*kits.stock_argv(vendor, work), realistic.MODEL, cases_json, url], cwd=work, env=env,
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
    """``same`` or ``DIFFERENT``, by the strict test's rule (:func:`tests.vendors.test_stock_parity._same`: the same
    score, or an error raised with the exception type stock raised). A stock NaN stays DIFFERENT here: these
    vendors never return one, so one would be new behaviour to look at."""
    score, raised, _ = stock_cell
    nan = raised is None and (score is None or math.isnan(score))
    return "same" if not nan and _same(stock_cell, harness_cell) else "DIFFERENT"


@pytest.fixture(scope="module", params=sorted(VENDORS))
def parity(request, tmp_path_factory):
    vendor = request.param
    _, module, metrics, _ = VENDORS[vendor]
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
