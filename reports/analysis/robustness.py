"""Robustness under rule-based edits (cases written by ``harness perturb``): per metric, how often its
decision flips under a meaning-preserving edit (ideal 0) and how often it notices a meaning-changing
one (ideal 1), by edit kind.

Each variant case is paired with its original (the ``perturb-of:`` tag); a pair counts only when both
cells are scores (the others are counted as "not comparable"). For an edit expected to change nothing
(``same``), a *flip* is a changed decision: grounded (the oriented score at the top of the range) on one
side and ungrounded on the other, as the agreement and stability figures read it; the share whose score
moved at all is shown beside it. For an edit that makes a supported claim unsupported
(``ungrounded``) or points a citation at the wrong passage (``citation``), *detection* is a lower
oriented score on the variant than on the original. Per kind each case gives at most one variant, so
the interval is Wilson's; a meaning-changing pair whose original already scores the bottom of the
range cannot score lower and is counted apart (at floor), not as a miss; pooled over kinds, variants share a case, so the interval is a percentile
bootstrap that resamples cases (clusters), widened by Wilson's so that 0 and 1 are never shown as certain.

Under the reference judge the figures are the definition's own robustness (the judge reads the
transformed labels perfectly); under a real judge they are judge and definition together.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from harness.cases.perturb import CHANGING, EXPECT, PRESERVING, tags_of
from harness.reports.analysis import agreement_stats as A
from harness.reports.analysis.intervals import widen, wilson
from harness.reports.analysis.orient import oriented

EPS = 1e-9
ALL = "all"


@dataclass(frozen=True)
class Rate:
    """One figure: ``hits`` of ``n`` comparable pairs, with its 95% interval."""

    hits: int
    n: int
    low: float | None
    high: float | None
    moved: int = 0
    """(meaning-preserving edits) pairs whose score moved at all."""
    lost: int = 0
    """Pairs with a side that is not a score (unscored, NaN, not applicable, error)."""
    floor: int = 0
    """(meaning-changing edits) pairs whose original already scores the bottom of the range: it cannot go lower."""

    @property
    def rate(self) -> float | None:
        return self.hits / self.n if self.n else None


@dataclass
class MetricRobustness:
    """One metric's rates: ``flips`` (meaning-preserving kinds) and ``detections`` (meaning-changing), by kind
    and pooled under :data:`ALL` (``citation`` edits are pooled apart: only citation checks should notice)."""

    metric: str
    flips: dict[str, Rate] = field(default_factory=dict)
    detections: dict[str, Rate] = field(default_factory=dict)


@dataclass
class Robustness:
    """The robustness section's model (empty ``metrics``: the run holds no variants)."""

    reference: bool
    variants: int = 0
    metrics: list[MetricRobustness] = field(default_factory=list)


def pairs(cases: dict, cells: dict, metric: str):
    """``(kind, expect, case id of the original, original score, variant score)`` for every variant of the run
    (scores None where the cell is not a score). ``cells``: ``{(case_id, metric): (status, score)}``."""
    out = []
    for cid, case in cases.items():
        t = tags_of(case)
        if "of" not in t or t.get("kind") not in EXPECT:
            continue
        a, b = cells.get((t["of"], metric)), cells.get((cid, metric))
        sa = a[1] if a is not None and a[0] == "scored" else None
        sb = b[1] if b is not None and b[0] == "scored" else None
        out.append((t["kind"], EXPECT[t["kind"]], t["of"], sa, sb))
    return out


def rate(rows, hit, moved=None, resamples: int = A.RESAMPLES) -> Rate:
    """The rate of ``hit(orig, variant)`` over comparable ``rows`` (``(kind, expect, of, orig, variant)``):
    Wilson's interval when no case gives two rows, else a case-clustered bootstrap widened by Wilson's.

    >>> r = rate([("order", "same", "a", 1.0, 1.0), ("split", "same", "b", 1.0, 0.5)], lambda a, b: a != b)
    >>> (r.hits, r.n, round(r.low, 2), round(r.high, 2))
    (1, 2, 0.09, 0.91)
    """
    comp = [r for r in rows if r[3] is not None and r[4] is not None]
    lost = len(rows) - len(comp)
    k = sum(bool(hit(r[3], r[4])) for r in comp)
    mv = sum(bool(moved(r[3], r[4])) for r in comp) if moved else 0
    lo, hi = wilson(k, len(comp))
    by_case: dict[str, list[int]] = {}
    for r in comp:
        by_case.setdefault(r[2], []).append(bool(hit(r[3], r[4])))
    if len(by_case) < len(comp) and len(by_case) > 1:
        import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

        hits = np.array([sum(v) for v in by_case.values()], float)
        ns = np.array([len(v) for v in by_case.values()], float)
        m = A.multiplicities(len(by_case), resamples)
        vals = (m @ hits) / (m @ ns)
        lo, hi = widen((lo, hi), tuple(float(x) for x in np.quantile(vals, [0.025, 0.975])))
    if comp:   # the interval holds the point exactly (no floating-point dust below 0 or above the rate)
        lo, hi = (0.0 if k == 0 else min(lo, k / len(comp))), (1.0 if k == len(comp) else max(hi, k / len(comp)))
    return Rate(k, len(comp), lo, hi, mv, lost)


def metric_robustness(rows, metric: str, span: tuple[float, float, bool], bottom: float | None = None
                      ) -> MetricRobustness:
    """The rates of one metric from its pairs (:func:`pairs`). A meaning-changing pair whose original already
    scores the bottom of the range (``bottom``; default the metric's) cannot score lower: it is counted under
    ``floor``, not in n. ``span``: the metric's recorded (bottom, top, higher_is_better)."""
    top = span[1]
    bottom = span[0] if bottom is None else bottom
    o = [(k, e, c, None if a is None else oriented(span, a), None if b is None else oriented(span, b))
         for k, e, c, a, b in rows]
    floor = {r for r in o if r[1] != "same" and r[3] is not None and r[3] <= bottom + EPS}
    o_change = [r for r in o if r not in floor]
    flip = lambda a, b: (a < top - EPS) != (b < top - EPS)  # noqa: E731 - a decision read as agreement reads it
    moved = lambda a, b: abs(a - b) > EPS  # noqa: E731
    lower = lambda a, b: b < a - EPS  # noqa: E731
    mr = MetricRobustness(metric)
    for kind in PRESERVING:
        sel = [r for r in o if r[0] == kind]
        if sel:
            mr.flips[kind] = rate(sel, flip, moved)
    if any(r[1] == "same" for r in o):
        mr.flips[ALL] = rate([r for r in o if r[1] == "same"], flip, moved)
    for kind in CHANGING:
        sel = [r for r in o_change if r[0] == kind]
        if any(r[0] == kind for r in o):
            mr.detections[kind] = replace(rate(sel, lower), floor=sum(r[0] == kind for r in floor))
    if any(r[1] == "ungrounded" for r in o):
        mr.detections[ALL] = replace(rate([r for r in o_change if r[1] == "ungrounded"], lower),
                                     floor=sum(r[1] == "ungrounded" for r in floor))
    return mr


def compute(data) -> Robustness:
    """The robustness of every metric of the run (no variants: an empty model)."""
    rob = Robustness(data.is_reference)
    variants = [c for c in data.cases.values() if "of" in tags_of(c)]
    rob.variants = len(variants)
    if not variants:
        return rob
    cells = {(r.case_id, r.metric): (r.status, None if r.score is None else float(r.score))
             for r in data.cells.itertuples(index=False)}
    for m in data.metrics:
        rob.metrics.append(metric_robustness(pairs(data.cases, cells, m), m, data.info[m].scale))
    return rob


TITLE = "Robustness under edits"
def show(r: Rate | None) -> str:
    """``"2/40 = 5% [1%, 17%]"``; an en dash when nothing was comparable.

    >>> show(Rate(0, 40, 0.0, 0.088))
    '0/40 = 0% [0%, 9%]'
    """
    if r is None or not r.n:
        return "\u2013"
    return f"{r.hits}/{r.n} = {r.rate:.0%} [{r.low:.0%}, {r.high:.0%}]"
