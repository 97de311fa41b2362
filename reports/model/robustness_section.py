"""The words of robustness under edits (:mod:`harness.reports.analysis.robustness`): the report section (a metric
card's paragraph comes from the kept figures: :mod:`harness.reports.cards.robustness`)."""
from __future__ import annotations

from harness.cases.perturb import CHANGING, PRESERVING
from harness.reports.analysis.robustness import ALL, TITLE, Rate, Robustness, show
from harness.reports.model.blocks import Section, Table

HEADS = ["metric", "flips, meaning-preserving (ideal 0)", "score moved", "detected, meaning-changing (ideal 1)",
         "at floor", "citation moved: detected", "not comparable"]



def _by_kind(rates: dict[str, Rate], kinds) -> str:
    return "; ".join(f"{k} {r.hits}/{r.n}" for k in kinds if (r := rates.get(k)) is not None and r.n)


def section(rob: Robustness, names: dict[str, str]):
    """The report section (None when the run holds no variants)."""
    if not rob.metrics:
        return None
    judge = ("Judge: the reference judge, which reads the transformed labels: these are each definition's own "
             "robustness (what a perfect judge under that definition does)." if rob.reference else
             "Judge: a real judge: these figures are the judge and the definition together.")
    b = Section("robustness", TITLE, [
        f"{rob.variants} variants written by harness perturb (rules in docs/robustness.md), each paired with its "
        "original case. Flip: the grounded/ungrounded decision (ungrounded below the top of the score range) "
        "differs between the original and a variant that should mean the same. Detected: the variant that makes a "
        "supported claim unsupported (a number changed, a negation, a swapped name) scores lower; a pair "
        "whose original already scores the bottom of the range cannot, and is left out of n (at floor). 'Citation "
        "moved' points a marker at a passage that does not state the claim; only a citation check should notice. "
        "n counts pairs where both cells are scores; intervals are 95% (Wilson per kind; pooled: a bootstrap over "
        "cases, widened by Wilson).", judge])
    rows = []
    for mr in rob.metrics:
        f, d, c = mr.flips.get(ALL), mr.detections.get(ALL), mr.detections.get("cite-move")
        lost = sum(r.lost for k, r in mr.flips.items() if k != ALL) + sum(
            r.lost for k, r in mr.detections.items() if k != ALL)
        rows.append([names.get(mr.metric, mr.metric), show(f), "\u2013" if not f or not f.n else f"{f.moved}/{f.n}",
                     show(d), "\u2013" if d is None else str(d.floor), show(c), str(lost)])
    b.parts.append(Table(HEADS, rows))
    kinds = [f"{names.get(mr.metric, mr.metric)}: flips by kind: {_by_kind(mr.flips, PRESERVING) or 'none comparable'}"
             f"; detected by kind: {_by_kind(mr.detections, CHANGING) or 'none comparable'}" for mr in rob.metrics]
    b.parts.append(kinds)
    return b

