"""What the agreement section says about a team's own labels (``--labels``): where they came from (file,
reviewers, dates, how many answers were drawn and how many of those are not labelled), and, for a review's
sample, the figures weighted by each answer's inclusion probability (:mod:`harness.reports.analysis.weighted_agreement`),
which estimate agreement over every answer of the run rather than over the sample's lean.

A provenance is any object with ``text()`` (``harness.reports.review.team.Provenance``).
"""
from __future__ import annotations

from harness.reports.model.agreement_section import with_ci
from harness.reports.model.blocks import Section, Table

WEIGHTED_HEADS = ["metric", "n", "base rate (ungrounded)", "raw agreement", "balanced accuracy", "kappa"]
WEIGHTED_NOTE = ("Weighted by 1 / inclusion probability: each labelled answer stands for the answers of the run it "
                 "was drawn to represent, so these figures estimate agreement over every answer of the run (the "
                 "review's sample leans toward answers where the metrics disagree). 95% intervals: a seeded "
                 "bootstrap over the labelled answers.")


def weighted_rows(weighted: list, names: dict[str, str]) -> list[list[str]]:
    """One row per metric of the weighted figures."""
    return [[names.get(w.metric, w.metric), str(w.n), with_ci(w.base_rate, w.ci.get("base_rate")),
             with_ci(w.accuracy, w.ci.get("accuracy")), with_ci(w.balanced_accuracy, w.ci.get("balanced_accuracy")),
             with_ci(w.kappa, w.ci.get("kappa"))] for w in weighted]


def add_to(blocks: list, provenance, weighted: list | None, names: dict[str, str]) -> None:
    """Put the labels' provenance (and the weighted figures) into the agreement section of ``blocks``."""
    block = next((b for b in blocks if isinstance(b, Section) and b.key == "agreement"), None)
    if block is None or provenance is None:
        return
    parts: list = [provenance.text()]
    if weighted:
        parts += [WEIGHTED_NOTE, Table(WEIGHTED_HEADS, weighted_rows(weighted, names),
                                       caption="Answers weighted by inclusion probability, target: hallucinated")]
    block.parts[2:2] = parts   # after the reading and the rule, before the figures


def card_notes(provenance, results: list) -> dict[str, str]:
    """metric -> the line its card carries in this report: its agreement with the team's labels (the committed
    card describes the canonical reference run; this line is the run's own)."""
    if provenance is None:
        return {}
    out = {}
    for a in results:
        f = a.answers.get("hallucinated")
        p = f.point if f else None
        if p is None:
            out[a.metric] = f"With the team's labels ({provenance.path}): no labelled answer with a score."
            continue
        out[a.metric] = (f"With the team's labels ({provenance.path}), on this run: balanced accuracy "
                         f"{with_ci(p.balanced_accuracy, f.ci.get('balanced_accuracy'))}, kappa "
                         f"{with_ci(p.kappa, f.ci.get('kappa'))}, raw agreement {with_ci(p.accuracy, f.ci.get('accuracy'))} "
                         f"on n={f.n} labelled answers ({f.positives} ungrounded), target hallucinated.")
    return out
