"""Words shared by the HTML and Markdown reports: section titles, intros, verdict marks."""
from __future__ import annotations

TITLES = {
    "decision": "Which metric for which need",
    "glance": "At a glance",
    "matrix": "Score matrix",
    "divergences": "Where they diverge",
    "metrics": "Per metric",
    "cost": "Cost per metric",
    "evidence": "Evidence check",
}

INTRO = {
    "matrix": "Each cell is one metric's score on one case, exactly as the metric computes it. A cell that "
              "is not a score is never shown as a number: it carries its own label, colour and hatching.",
    "divergences": "Cases on which the scored metrics are at least {threshold:.2f} apart (unscored and NaN "
                   "cells do not count). For each, the answer's claims are the rows, as the annotation "
                   "splits them; each metric's units are placed on the claims they overlap in the answer. "
                   "The reason is chosen by fixed rules over the annotation label and the verdicts "
                   "(reports/reasons.py).",
    "metrics": "Mean over the cases each metric scored, with a 95% bootstrap interval ({resamples} "
               "resamples, fixed seed). Cells that are not scores are counted beside it, never averaged in.",
    "cost": "Judge traffic per answer from the gateway's ledger (not-applicable cells excluded). With the "
            "reference judge the latency is the harness's own overhead; with a real judge it is what you "
            "would wait.",
    "evidence": "For each metric whose judge quotes evidence, the share of its quotes that occur verbatim "
                "in the context (whitespace and quote marks normalised).",
}

VERDICT_MARK = {"supported": "\u2713", "unsupported": "\u2717", "ambiguous": "?", "excluded": "\u2013"}
"""Normalised verdict -> a short mark shown before it."""

ROW_KIND = {
    "claim": "claim",
    "abstention": "abstention",
    "other": "not an annotated claim",
    "answer": "whole answer",
    "unaligned": "unaligned",
}

STATUS_NAMES = {"scored": "scored", "unscored": "unscored", "vendor_nan": "NaN (vendor)",
                "error": "error", "not_applicable": "n/a", "missing": "missing"}
STATUS_ORDER = ("unscored", "vendor_nan", "error", "not_applicable", "missing")


def fmt(v: float | None, digits: int = 2) -> str:
    """A number, or an en dash for none.

    >>> fmt(0.756), fmt(None)
    ('0.76', '\u2013')
    """
    return "\u2013" if v is None else f"{v:.{digits}f}"


def mark_text(mark) -> str:
    """How one unit's verdict reads in an alignment cell.

    >>> from reports.alignment import Mark, Unit
    >>> mark_text(Mark(Unit("m", 0, "x", "ambiguous", "borderline")))
    '? ambiguous (borderline)'
    """
    u = mark.unit
    raw = f" ({u.raw_verdict})" if u.raw_verdict and u.raw_verdict != u.verdict else ""
    return f"{VERDICT_MARK.get(u.verdict, '')} {u.verdict}{raw}{' [shared]' if mark.shared else ''}".strip()
