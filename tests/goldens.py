"""Golden tables: ``tests/golden/<metric>.csv`` with columns case_id, expected, reasoning.

``expected`` is a number (compared with an absolute tolerance of 1e-6) or one of ``NON_SCORES``;
``reasoning`` is one line derived by hand from the metric's definition and the annotation.
"""
from __future__ import annotations

import csv
import math
import os

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
NON_SCORES = ("unscored", "vendor_nan", "not_applicable")
TOLERANCE = 1e-6


def metrics_with_golden() -> list[str]:
    """Every metric that has a golden table."""
    return sorted(f[:-4] for f in os.listdir(GOLDEN_DIR) if f.endswith(".csv"))


def golden(metric: str) -> dict[str, dict]:
    """case_id -> row of a metric's golden table (the table's shape is asserted)."""
    with open(os.path.join(GOLDEN_DIR, f"{metric}.csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        assert set(r) == {"case_id", "expected", "reasoning"}, f"{metric}.csv: bad columns in {r}"
        assert r["reasoning"].strip() and "\n" not in r["reasoning"], f"{metric}.csv {r['case_id']}: reasoning"
    ids = [r["case_id"] for r in rows]
    assert len(ids) == len(set(ids)), f"{metric}.csv: duplicate case ids"
    return {r["case_id"]: r for r in rows}


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
