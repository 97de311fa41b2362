"""Golden tables: ``<metric folder>/golden/<metric>.csv`` (found through the registered class, see
``harness.metric.paths.golden_path``) with columns case_id, expected, reasoning.

``expected`` is a number (compared with an absolute tolerance of 1e-6) or one of ``NON_SCORES``;
``reasoning`` is one line derived by hand from the metric's definition and the annotation.
:func:`canonical_results` scores a metric on the canonical set once per test session, so the golden
test and each vendor's own tests share one run.
"""
from __future__ import annotations

import csv
import functools
import math
import os

from tests.conftest import CANONICAL

NON_SCORES = ("unscored", "vendor_nan", "not_applicable")
TOLERANCE = 1e-6


def golden_file(metric: str) -> str:
    """Where ``metric``'s golden table lives (next to its adapter module)."""
    from harness.metric import registry
    from harness.metric.paths import golden_path

    return golden_path(registry.get(metric))


def golden(metric: str) -> dict[str, dict]:
    """case_id -> row of a metric's golden table (the table's shape is asserted)."""
    path = golden_file(metric)
    assert os.path.isfile(path), f"{metric} is registered but has no golden table at {path}"
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        assert set(r) == {"case_id", "expected", "reasoning"}, f"{metric}.csv: bad columns in {r}"
        assert r["reasoning"].strip() and "\n" not in r["reasoning"], f"{metric}.csv {r['case_id']}: reasoning"
    ids = [r["case_id"] for r in rows]
    assert len(ids) == len(set(ids)), f"{metric}.csv: duplicate case ids"
    return {r["case_id"]: r for r in rows}


@functools.lru_cache(maxsize=None)
def canonical_results(metric: str) -> dict:
    """case id -> ``Scored`` for ``metric`` on every canonical case, reference judge, real gateway
    (computed once per session)."""
    from harness.cases.load import load_cases

    from tests.helpers.scoring import score_cases

    return score_cases(metric, list(load_cases(CANONICAL)))


def mismatch(result, row: dict) -> str | None:
    """Why a cell result disagrees with its golden row, or None when it agrees."""
    exp = row["expected"]
    if exp in NON_SCORES:
        if result.status == exp and result.score is None and result.reason:
            return None
    elif result.status == "scored" and math.isclose(result.score, float(exp), abs_tol=TOLERANCE):
        return None
    return (f"{row['case_id']}: expected {exp}, got {result.status} {result.score} ({result.reason}) "
            f"-- golden: {row['reasoning']}")
