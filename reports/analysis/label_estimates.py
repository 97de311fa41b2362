"""From a team's labelled sample to each metric's figures over the whole run (``harness agree --labels``, the
report): design-weighted agreement (:mod:`harness.reports.analysis.design_estimates`) at answer level and, clustered by
answer, at claim level; the corrected ungrounded share (:mod:`harness.reports.analysis.corrected_rate`); a threshold fitted
on the labels out of fold (:mod:`harness.reports.analysis.threshold_fit`); and the label planner: how many more labels
would separate the two best metrics.

Target: ``hallucinated`` (some claim not_found or contradicted), the decision table's; the metric calls an
answer ungrounded below the top of its (oriented) range. ``weights`` maps each labelled case id to its design
weight (``1 / inclusion probability``); cells that are not scores are left out and counted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.core.spans import overlaps
from harness.reports.analysis import corrected_rate as R
from harness.reports.analysis import design_estimates as D
from harness.reports.analysis import threshold_fit as T
from harness.reports.analysis.agreement import TARGETS, WHOLE, _top, answer_truth
from harness.reports.analysis.intervals import Z95
from harness.reports.analysis.orient import oriented

import numpy as np

TARGET = "hallucinated"
RANK = "kappa"
"""The statistic the planner separates the two best metrics on."""


@dataclass
class MetricEstimates:
    """One metric's figures from the labelled sample."""

    metric: str
    answers: D.Estimate
    claims: D.Estimate | None
    """Claim level (units located in the answer), bootstrap clustered by answer; None when not located."""
    rate: R.Rate
    fitted: T.Fitted | None
    excluded: dict[str, int] = field(default_factory=dict)
    """status -> labelled answers whose cell is not a score."""


@dataclass(frozen=True)
class Plan:
    """How many more labels would separate the two best metrics at 95%."""

    best: str
    second: str
    stat: str
    difference: float
    """best - second on the shared labelled answers."""
    se: float
    """Its bootstrap standard error."""
    n: int
    """Labelled answers both metrics scored."""
    more: int | None
    """Further labels needed (0: already separated; None: no difference seen, labels cannot separate them)."""
    remaining: int
    """Answers of the run not labelled yet."""

    def text(self, names: dict[str, str]) -> str:
        a, b = names.get(self.best, self.best), names.get(self.second, self.second)
        head = (f"planner: {a} vs {b}, {self.stat} difference {self.difference:+.2f} "
                f"(standard error {self.se:.2f}, n = {self.n})")
        if self.more is None:
            return head + ": no difference seen on the labels so far, so labels cannot size the gap"
        if self.more == 0:
            return head + ": already separated at 95%"
        tail = f" (the run has {self.remaining} unlabelled answers)" if self.more > self.remaining else ""
        return head + f": about {self.more} more labels would separate them at 95%{tail}"


def _scored(data, metric: str, ids: list[str]):
    keep, scores, excluded = [], [], {}
    for cid in ids:
        cell = data.cell(cid, metric)
        status = "missing" if cell is None else cell.status
        if status != "scored":
            excluded[status] = excluded.get(status, 0) + 1
            continue
        keep.append(cid)
        scores.append(oriented(data.info[metric].scale, float(cell.score)))
    return keep, np.asarray(scores, float), excluded


def _run_flags(data, metric: str) -> np.ndarray:
    c = data.cells[(data.cells["metric"] == metric) & (data.cells["status"] == "scored")]
    top = _top(data, metric)
    return np.asarray([oriented(data.info[metric].scale, float(s)) < top for s in c["score"]], bool)


def _claims(data, metric: str, ids: list[str], w: dict[str, float], boot_seed: int, resamples: int):
    u = data.units[data.units["metric"] == metric]
    located = u[u["span_start"].notna() & ~u["kind"].isin(WHOLE)]
    if not len(located):
        return None
    by_case: dict[str, list] = {}
    for r in located.itertuples(index=False):
        by_case.setdefault(r.case_id, []).append(((int(r.span_start), int(r.span_end)), str(r.verdict)))
    cluster, truth, pred = [], [], []
    for cid in ids:
        units = by_case.get(cid, [])
        for claim in data.cases[cid].judged_claims():
            hits = [v for sp, v in units if overlaps(sp, claim.answer_span)]
            if hits:
                cluster.append(cid)
                truth.append(claim.label in TARGETS[TARGET])
                pred.append("unsupported" in hits)
    if not cluster:
        return D.estimate(np.zeros((0, 4)), [])
    keys, c = D.clustered(cluster, truth, pred)
    return D.estimate(c, [w[k] for k in keys], resamples, boot_seed)


def compute(data, weights: dict[str, float], resamples: int = D.RESAMPLES) -> list[MetricEstimates]:
    """Every metric's figures (``data``'s cases carry the gold labels; ``weights``: case id -> 1 / pi)."""
    ids = [c for c in data.case_ids if c in weights and c in data.cases and data.cases[c].annotation is not None]
    out = []
    for m in data.metrics:
        keep, s, excluded = _scored(data, m, ids)
        y = np.asarray([answer_truth(data.cases[c], TARGET) for c in keep], bool)
        w = np.asarray([weights[c] for c in keep], float)
        top = _top(data, m)
        f = s < top
        est = D.estimate(D.counts(y, f), w, resamples)
        rate = R.corrected(_run_flags(data, m), y, f, w, resamples)
        out.append(MetricEstimates(m, est, _claims(data, m, keep, weights, D.SEED, resamples), rate,
                                   T.fit(y, s, w, top, resamples=resamples), excluded))
    return out


def plan(data, weights: dict[str, float], results: list[MetricEstimates],
         resamples: int = D.RESAMPLES) -> Plan | None:
    """The planner line: the two metrics with the highest weighted kappa, compared on the labelled answers both
    scored with the same bootstrap resamples; labels needed ``n (z se / |diff|)^2`` (the standard error shrinks
    as one over the root of the labels, the design kept)."""
    ranked = sorted((r for r in results if r.answers.point.get(RANK) is not None),
                    key=lambda r: -r.answers.point[RANK])
    if len(ranked) < 2:
        return None
    a, b = ranked[0].metric, ranked[1].metric
    ids = [c for c in data.case_ids if c in weights and c in data.cases and data.cases[c].annotation is not None]
    ka, sa, _ = _scored(data, a, ids)
    kb, sb, _ = _scored(data, b, ids)
    both = [c for c in ka if c in set(kb)]
    if len(both) < 2:
        return None
    ia, ib = {c: i for i, c in enumerate(ka)}, {c: i for i, c in enumerate(kb)}
    y = np.asarray([answer_truth(data.cases[c], TARGET) for c in both], bool)
    w = np.asarray([weights[c] for c in both], float)
    fa = np.asarray([sa[ia[c]] for c in both]) < _top(data, a)
    fb = np.asarray([sb[ib[c]] for c in both]) < _top(data, b)
    diff, se = paired(y, fa, fb, w, resamples)
    remaining = int(data.cells["case_id"].nunique()) - len(ids)
    if math.isnan(diff) or math.isnan(se):
        return None
    return Plan(a, b, RANK, diff, se, len(both), labels_needed(len(both), diff, se), max(0, remaining))


def paired(y, fa, fb, w, resamples: int = D.RESAMPLES, seed: int = D.SEED, stat: str = RANK) -> tuple[float, float]:
    """(difference of ``stat`` between metric a's flags ``fa`` and b's ``fb`` against labels ``y`` with weights
    ``w``, its bootstrap standard error on the same resamples).

    >>> y = np.array([1, 1, 0, 0, 1, 0, 0, 0], bool)
    >>> d, se = paired(y, y, np.array([1, 0, 0, 1, 1, 0, 0, 0], bool), np.ones(8), resamples=300)
    >>> round(d, 2), 0 < se < 1
    (0.53, True)
    """
    m = D.resample_counts(len(y), resamples, seed) * w
    ca, cb = D.counts(y, fa), D.counts(y, fb)
    diff = float(D.statistics(w @ ca)[stat] - D.statistics(w @ cb)[stat])
    boot = D.statistics(m @ ca)[stat] - D.statistics(m @ cb)[stat]
    boot = boot[~np.isnan(boot)]
    return diff, (float(boot.std(ddof=1)) if boot.size > 1 else float("nan"))


def labels_needed(n: int, diff: float, se: float) -> int | None:
    """More labels for a difference ``diff`` with standard error ``se`` on ``n`` labels to clear 1.96 standard
    errors, the error shrinking as one over the root of the labels (0: clear already; None: no difference).

    >>> labels_needed(40, 0.1, 0.1), labels_needed(40, 0.3, 0.1), labels_needed(40, 0.0, 0.1)
    (114, 0, None)
    """
    if abs(diff) < 1e-12:
        return None
    if abs(diff) > Z95 * se:
        return 0
    return max(1, math.ceil(n * (Z95 * se / abs(diff)) ** 2) - n)
