"""The compare page (``harness compare RUN_A RUN_B``) as plain text, built once from one
:class:`harness.reports.analysis.compare.Comparison`: the HTML and the Markdown page
(:mod:`harness.reports.render.compare`) only lay it out."""
from __future__ import annotations

from dataclasses import dataclass

from harness.reports.model.sections import SIGNIFICANT, fmt

INTRO = ("For each metric both runs have: the mean over the cases both runs scored, the mean paired "
         "difference B - A with a paired bootstrap 95% interval (cases resampled together), and the cases "
         "that moved most. A difference whose interval excludes 0 is marked " + SIGNIFICANT + ".")
DRIFT_INTRO = ("Cells whose outcome (status, or score) differs between the runs, and what the drift sentinel saw "
               "change with each: vendor version, prompt templates (by step), judge fingerprint, the judge's "
               "replies, the vendor's parsing (same replies, other verdicts) or its scoring rule (same verdicts, "
               "another score).")
STATUS_INTRO = "Cells whose status differs between the runs (a score on one side, no score on the other, or two kinds of no score)."


def _signed(v) -> str:
    """A signed number, or an en dash.

    >>> _signed(0.25), _signed(-0.5), _signed(None)
    ('+0.25', '-0.50', '\u2013')
    """
    return "\u2013" if v is None else f"{v:+.2f}"


def _rows(cmp) -> list[list[str]]:
    rows = []
    for d in cmp.metrics:
        ci = f"[{_signed(d.low)}, {_signed(d.high)}]" if d.diff is not None else "\u2013"
        ver = f"v{d.version_a}" if d.version_a == d.version_b else f"v{d.version_a} \u2192 v{d.version_b}"
        movers = "; ".join(f"{c}: {x:.2f} \u2192 {y:.2f}" for c, x, y in d.movers) or "none"
        rows.append([d.metric, ver, str(d.n_pairs), fmt(d.mean_a), fmt(d.mean_b),
                     _signed(d.diff) + (f" {SIGNIFICANT}" if d.significant else ""), ci, movers])
    return rows


HEADS = ["metric", "version", "paired cases", "mean A", "mean B", "B - A", "95% interval", "biggest movers"]


def _scope(cmp) -> list[str]:
    out = [f"A: run {cmp.a.run_id} ({(cmp.a.spec.get('judge') or {}).get('description', '?')})",
           f"B: run {cmp.b.run_id} ({(cmp.b.spec.get('judge') or {}).get('description', '?')})",
           f"shared cases: {len(cmp.shared_cases)}; only in A: {len(cmp.only_a)}; only in B: {len(cmp.only_b)}"]
    if cmp.only_metrics_a or cmp.only_metrics_b:
        out.append(f"metrics only in A: {', '.join(cmp.only_metrics_a) or 'none'}; "
                   f"only in B: {', '.join(cmp.only_metrics_b) or 'none'}")
    return out



def _drift_rows(drift) -> list[list[str]]:
    return [[c.case_id, c.metric, c.label_a, c.label_b, "; ".join(c.causes)] for c in drift.changes]


DRIFT_HEADS = ["case", "metric", "A", "B", "what changed with it"]



@dataclass(frozen=True)
class Page:
    """Everything the compare page says, as text."""

    run_a: str
    run_b: str
    scope: list[str]
    """The two runs, the cases they share, the metrics only one has."""
    differences: list[str]
    """What differs between the runs' specs and case digests."""
    rows: list[list[str]]
    """Per metric (:data:`HEADS`)."""
    changes: list[list[str]]
    """Cells that changed status: case, metric, A, B."""
    drift_recorded: bool
    """Did both runs record what the drift sentinel compares?"""
    drift_rows: list[list[str]]
    """Cells that changed outcome (:data:`DRIFT_HEADS`)."""


def page(cmp) -> Page:
    """The page of one comparison."""
    recorded = cmp.drift is not None and cmp.drift.recorded
    return Page(cmp.a.run_id, cmp.b.run_id, _scope(cmp), list(cmp.differences), _rows(cmp),
                [[c.case_id, c.metric, c.label_a, c.label_b] for c in cmp.changes], recorded,
                _drift_rows(cmp.drift) if recorded else [])
