"""The design-weighted estimates of a run against a review's labels: each metric's figures, the planner, the
reviewers' agreement (the human ceiling) and the alternative-annotator test (``harness agree --labels``; the
figures: :mod:`harness.reports.analysis.label_estimates`, their words: :mod:`harness.reports.model.estimates_section`)."""
from __future__ import annotations

from dataclasses import dataclass

from harness.reports.analysis import alt_test as AT
from harness.reports.analysis import label_estimates as LE
from harness.reports.analysis.agreement import _top
from harness.reports.analysis.orient import oriented
from harness.reports.review import reviewers as RV
from harness.reports.review.store import LabelStore


@dataclass
class Gathered:
    results: list
    plan: object
    human: object
    """Inter-reviewer agreement (:class:`harness.reports.review.reviewers.Kappa`) of the raters."""
    alt: dict
    """metric -> :class:`harness.reports.analysis.alt_test.AltTest` (None with fewer than two raters)."""


def gather(data, labels_path: str, weights: dict[str, float], reviewers: list[str] | None = None,
           adjudicators: list[str] | None = None, resamples: int = LE.D.RESAMPLES) -> Gathered:
    """Everything the estimates block says (``data`` carries the gold labels, as ``with_labels`` makes it)."""
    results = LE.compute(data, weights, resamples)
    plan = LE.plan(data, weights, results, resamples)
    human, alt = human_and_alt(data, labels_path, reviewers, adjudicators, resamples)
    return Gathered(results, plan, human, alt)


def human_and_alt(data, labels_path: str, reviewers: list[str] | None = None, adjudicators: list[str] | None = None,
                  resamples: int = LE.D.RESAMPLES) -> tuple[object, dict]:
    """(the raters' agreement, metric -> alternative-annotator test) from a labels file (the report's
    ``data.label_human`` and ``data.label_alt``)."""
    store = LabelStore.open_existing(labels_path)
    try:
        latest = store.latest()
        adj = list(adjudicators) if adjudicators is not None else store.adjudicators()
        order = [p.case_id for p in store.picks()]
        human = RV.compare(order, {c: store.case_json(c)["answer"] for c in order}, latest, reviewers, adj)
    finally:
        store.close()
    alt = {}
    if len(human.reviewers) >= 2:
        labels = AT.ungrounded_by_rater(latest, human.reviewers)
        for m in data.metrics:
            flags = {}
            for cid in order:
                cell = data.cell(cid, m)
                if cell is not None and cell.status == "scored":
                    flags[cid] = oriented(data.info[m].scale, float(cell.score)) < _top(data, m)
            alt[m] = AT.alt_test(labels, flags, resamples=resamples)
    return human, alt
