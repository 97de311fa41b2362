"""Strict stock parity when the judge behaves as real servers do (issue 37): a reply cut at the token
limit once (``finish_reason "length"``; the repeat answered in full, as a sampling model may), a reply cut
every time, and repeats of a request that differ (sampling). For every vendor of the strict tests
(Ragas, DeepEval, TruLens, Phoenix, MLflow, Opik) on a handful of cases (:data:`CASES`, one of each kind),
each side's outcome must be the same, or one of the documented differences of
:data:`tests.vendors.test_stock_parity.ALLOWED`, and each side must have sent the judge the same request bodies,
byte for byte (JSON with keys sorted), per metric.

- The judges: the realistic test judge in its OpenAI-like server mode (:data:`MODE`), one per behaviour and
  side, each a process of its own (:class:`tests.vendors.test_stock_parity.JudgeProcess`, the same options on
  both sides: in the test's process the harness's judge would share one interpreter lock with the harness
  run it serves, an asymmetry under load that the stock side does not have), each serving only under its own
  secret path (so another process's traffic is never counted) and holding one lane per metric (DeepEval's two metrics send the same prompts: a judge shared by both would
  cut or vary whichever asked first). Replies always carry ``usage`` here; a reply without it is the
  strict test's (``tests/vendors/test_stock_parity.py``, its usage twin).
- Stock side: each vendor's ``kit/stock.py`` (run by ``tests/helpers/stock_common.py``), one process per vendor for all
  three behaviours, pointed straight at the stock judges (``METRIC=URL``: each metric at its lane).
  TruLens's citation check is asked only of answers with [N] markers (``MARKED_ONLY``, as in the live
  comparison): the harness never asks it of the others (the card's rule, which the strict test holds
  against stock's scores), so their requests would be bodies only one side sent.
- Harness side: a harness run per behaviour and metric through ``--judge-url`` to that lane of the
  harness's judge.

The table (``pytest -s``) and the per-vendor figures (cases, differences, requests compared) are written to
the test's temp dir.
"""
from __future__ import annotations

import json
import os
import subprocess
from importlib.util import find_spec

from harness.adapters.trulens.kit.stock import MARKED_ONLY
from harness.cases import CaseSet
from harness.cases.load import load_cases

import pytest

from tests.conftest import CANONICAL
from tests.helpers import kits
from tests.helpers.judges.realistic import MODEL
from tests.vendors.test_stock_parity import STOCK_ENV, JudgeProcess, _harness_run, compare, plain_cases, render
from tests.vendors.test_stock_parity_more import SWITCHES
from tests.vendors.test_stock_parity_more import VENDORS as MORE_VENDORS
from tests.vendors.test_stock_parity_more import compare as compare_more

MODE = "openai"
BEHAVIOURS = {"truncate-once": ("--truncate", "once"),
              "truncate-always": ("--truncate", "always"),
              "sampling": ("--sampling-rate", "0.3")}
"""behaviour -> the judge process's options (the same on both sides; replies always carry ``usage``)."""
CASES = ("cookie-yield", "release-date-contradicted", "refund-invented", "abstain-answerable",
         "citation-misattributed", "multi-hop", "empty-answer")
"""One canonical case of each kind (tests/vendors/test_live_judge.py's DEFAULT_CASES): partly grounded,
contradicted, invented, an abstention, [N] citations, two passages, the empty answer."""
VENDORS = {folder.rpartition(".")[2]: ("kit/stock.py", tuple(script.METRICS))
           for folder, script in kits.parts("stock").items() if hasattr(script, "score_urls")}
VENDORS.update({v: ("kit/stock.py", metrics) for v, (_, _, metrics, _) in MORE_VENDORS.items()})
"""vendor -> (its stock script, its metrics): every vendor whose folder has a ``kit/stock.py`` run by
``tests/helpers/stock_common.py``."""
MODULES = {**{folder.rpartition(".")[2]: script.MODULE for folder, script in kits.parts("stock").items()
              if hasattr(script, "score_urls")},
           **{v: module for v, (_, module, _, _) in MORE_VENDORS.items()}}
MORE = tuple(MORE_VENDORS)
"""The vendors whose stock script is their folder's ``kit/stock.py`` (:mod:`tests.vendors.test_stock_parity_more`)."""


ONLY = os.environ.get("PARITY_MODES_VENDORS", "")
"""Comma-separated vendors to run (default: every installed one), for a rerun of one vendor by hand."""


def installed() -> tuple[str, ...]:
    return tuple(v for v in VENDORS if find_spec(MODULES[v].split(".")[0]) is not None
                 and (not ONLY or v in ONLY.split(",")))


@pytest.fixture(scope="module")
def modes(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("parity-modes"))
    full = load_cases(CANONICAL)
    cases = CaseSet(full.path, tuple(full.by_id(i) for i in CASES), full.sha256)
    vendors = installed()
    plain = plain_cases(cases, os.path.join(tmp, "stock-cases.json"))
    stock_judges = {b: JudgeProcess(MODE, "--lanes", "--usage-always", *opts) for b, opts in BEHAVIOURS.items()}
    harness_judges = {b: JudgeProcess(MODE, "--lanes", "--usage-always", *opts) for b, opts in BEHAVIOURS.items()}
    try:
        procs = {}
        for v in vendors:
            script, metrics = VENDORS[v]
            work = os.path.join(tmp, f"stock-{v}")
            os.makedirs(work)
            argv = kits.stock_argv(v, work)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work, **STOCK_ENV, **SWITCHES,
                   **({MARKED_ONLY: "1"} if v == "trulens" else {})}
            targets = [f"{m}={lane(stock_judges[b].url, m)}" for b in BEHAVIOURS for m in metrics]
            procs[v] = subprocess.Popen([*argv, MODEL, plain, *targets], cwd=work, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        harness = {(b, m): _harness_run(cases, lane(harness_judges[b].url, m), [m], tmp, f"modes-{b}-{m}")
                   for b in BEHAVIOURS for v in vendors for m in VENDORS[v][1]}
        stock = {}
        for v, p in procs.items():
            out, err = p.communicate(timeout=1800)
            assert p.returncode == 0, f"stock {v} failed:\n{err[-3000:]}"
            data = json.loads(out.strip().splitlines()[-1])
            assert data["project_modules"] == [], data["project_modules"]
            for b in BEHAVIOURS:
                for m in VENDORS[v][1]:
                    stock[(b, m)] = data["runs"][lane(stock_judges[b].url, m)][m]
        books = {(b, m): (lane_stats(stock_judges[b].url, m), lane_stats(harness_judges[b].url, m))
                 for b in BEHAVIOURS for v in vendors for m in VENDORS[v][1]}
    finally:
        for j in (*stock_judges.values(), *harness_judges.values()):
            j.stop()
    rows = []
    for (b, m), cells in harness.items():
        vendor = m.split(".")[0]
        for c in cases:
            cell = cells[(c.id, m)]
            if vendor in MORE:
                verdict = compare_more(stock[(b, m)][c.id], cell)
                s = stock[(b, m)][c.id]
                rows.append((b, m, c.id, f"raised {s[1]}" if s[1] else f"{s[0]}", f"{cell[0]} {cell[1]}", verdict,
                             "" if verdict == "same" else (cell[2] or s[2] or "")[:90]))
            else:
                rows.append((b, *compare(MODE, m, c, {MODE: {m: stock[(b, m)]}}, cell)[1:]))
    figures = summary(rows, books, vendors)
    table = render_modes(rows) + "\n\n" + figures
    print("\n" + table)
    with open(os.path.join(tmp, "parity-modes.txt"), "w", encoding="utf-8") as fh:
        fh.write(table + "\n")
    return rows, books, vendors


def lane(url: str, metric: str) -> str:
    return f"{url.removesuffix('/v1')}/{metric}/v1"


def lane_stats(url: str, metric: str) -> dict:
    import httpx

    return httpx.get(f"{url.removesuffix('/v1')}/{metric}/stats", timeout=60).json()


def bodies(book: dict) -> dict:
    """sha256 of a request body -> count, over every vendor the lane saw."""
    out: dict = {}
    for per in book["bodies"].values():
        for k, n in per.items():
            out[k] = out.get(k, 0) + n
    return out


def summary(rows, books, vendors) -> str:
    lines = ["per vendor: cases x behaviours x metrics compared, differences (DIFFERENT), allowed, "
             "requests compared (stock / harness, bodies not matched)"]
    for v in vendors:
        mine = [r for r in rows if r[1].split(".")[0] == v]
        req = [(sum(bodies(books[k][0]).values()), sum(bodies(books[k][1]).values()), unmatched(books[k]))
               for k in books if k[1].split(".")[0] == v]
        lines.append(f"  {v:9} cells {len(mine):3}  DIFFERENT {sum(r[5] == 'DIFFERENT' for r in mine):2}  "
                     f"allowed {sum(r[5] == 'allowed' for r in mine):2}  requests {sum(x[0] for x in req):4} / "
                     f"{sum(x[1] for x in req):4}  unmatched {sum(x[2] for x in req)}")
    return "\n".join(lines)


def differences(pair) -> dict:
    """sha256 of a body -> how many more times the stock side sent it than the harness (negative: fewer), for
    the bodies the two sides did not send equally often."""
    a, b = bodies(pair[0]), bodies(pair[1])
    return {k: a.get(k, 0) - b.get(k, 0) for k in sorted(set(a) | set(b)) if a.get(k, 0) != b.get(k, 0)}


def unmatched(pair) -> int:
    """Requests of either side the other did not send (same body, same number of times)."""
    return sum(abs(d) for d in differences(pair).values())


def which(pair) -> list[str]:
    """The bodies :func:`unmatched` counts, each as ``"<side> sent N more: <route> <step>"``."""
    names = {**pair[0].get("body_steps", {}), **pair[1].get("body_steps", {})}
    return [f"{'stock' if d > 0 else 'harness'} sent {abs(d)} more: {names.get(k, k[:12])}"
            for k, d in differences(pair).items()]


def render_modes(rows) -> str:
    return render([(r[0], *r[1:]) for r in rows]).split("\n\nper mode")[0]


def test_every_vendor_scores_as_stock_when_the_judge_truncates_or_varies(modes):
    rows, _, vendors = modes
    assert vendors, "no vendor installed"
    different = [r for r in rows if r[5] == "DIFFERENT"]
    assert not different, "\n" + render_modes(different)


def test_each_side_sent_the_same_request_bodies_per_metric(modes):
    _, books, _ = modes
    off = {k: unmatched(v) for k, v in books.items() if unmatched(v)}
    assert not off, (off, {k: which(books[k]) for k in off})


def test_the_behaviours_happened_and_the_judges_recognised_everything(modes):
    """Each judge cut replies (truncation) or answered repeats (sampling), and served only its own test."""
    _, books, _ = modes
    for (b, m), sides in books.items():
        for book in sides:
            assert book["unrecognised"] == 0 and book["crashed"] == 0 and book["foreign"] == 0, (b, m, book)
            if b.startswith("truncate") and book["calls"]:
                assert book["truncated"] > 0, (b, m, book)
