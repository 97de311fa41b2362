"""Agreement estimates from a labelled sample with known inclusion probabilities (pure numpy functions).

The labelled answers are treated as the sample, each weighted ``w_i = 1 / pi_i`` (its inclusion probability
under the review's design, :mod:`harness.reports.review.sampling`). When labelling stops partway, the labelled answers
are the first ones of the app's seeded random review order, a random subsample of the drawn sample: each answer's
probability of being labelled is ``pi_i * r`` with the same ``r`` for all, and every figure here is a ratio of
weighted counts (Hajek's form), so ``r`` cancels and the figures stay (nearly) unbiased for the whole run.

Every item (an answer, or a claim) carries four counts (tp, fp, fn, tn with "ungrounded" as the positive class);
at answer level one of them is 1, at claim level they are the answer's claims. The bootstrap resamples
*answers* with their weights (clustered: an answer's claims move together), all resamples at once; a
percentile interval of a ratio of weighted counts stays inside the measure's range by construction, and where
the sample sits at the edge of the range (every resample the same, e.g. perfect agreement) the interval is
widened to the Wilson interval at the Kish effective sample size, so 20 perfect answers never read as proof.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.reports.analysis.intervals import wilson

import numpy as np

RESAMPLES = 2000
SEED = 20261202
STATISTICS = ("base_rate", "flagged", "accuracy", "tpr", "fpr", "precision", "balanced_accuracy", "kappa",
              "ac1", "mcc")
"""Every statistic :func:`estimate` gives, in display order."""
RANGE = {s: (-1.0, 1.0) if s in ("kappa", "ac1", "mcc") else (0.0, 1.0) for s in STATISTICS}
WORDS = {"base_rate": "base rate (share the labels call ungrounded)",
         "flagged": "flagged rate (share the metric calls ungrounded)",
         "accuracy": "raw agreement", "tpr": "true positive rate (ungrounded caught)",
         "fpr": "false positive rate (grounded flagged)", "precision": "precision (ungrounded)",
         "balanced_accuracy": "balanced accuracy", "kappa": "Cohen's kappa",
         "ac1": "Gwet's AC1 (prevalence-robust)", "mcc": "Matthews correlation"}


@dataclass(frozen=True)
class Estimate:
    """Weighted figures of one metric against the gold labels."""

    n: int
    """Labelled answers the figures rest on."""
    items: int
    """Labelled items (answers, or claims at claim level)."""
    n_eff: float
    """Kish effective sample size of the answers' weights, ``(sum w)^2 / sum w^2``."""
    point: dict[str, float | None]
    """statistic -> weighted point estimate (None where undefined)."""
    ci: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """statistic -> 95% interval, inside :data:`RANGE`."""


def counts(truth, pred) -> np.ndarray:
    """(items x 4) counts tp, fp, fn, tn of binary labels.

    >>> counts([True, False], [True, True]).tolist()
    [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
    """
    t, p = np.asarray(truth, bool), np.asarray(pred, bool)
    return np.stack([t & p, ~t & p, t & ~p, ~t & ~p], axis=-1).astype(float)


def clustered(cluster, truth, pred) -> tuple[list, np.ndarray]:
    """(cluster ids in first-seen order, (clusters x 4) counts): claims summed per answer.

    >>> ids, c = clustered(["a", "a", "b"], [True, False, True], [True, True, False])
    >>> ids, c.tolist()
    (['a', 'b'], [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    """
    ids = list(dict.fromkeys(cluster))
    pos = {c: i for i, c in enumerate(ids)}
    out = np.zeros((len(ids), 4))
    np.add.at(out, [pos[c] for c in cluster], counts(truth, pred))
    return ids, out


def statistics(tot: np.ndarray) -> dict[str, np.ndarray]:
    """statistic -> values from weighted totals ``tot[..., 4]`` (tp, fp, fn, tn); NaN where undefined.

    >>> s = statistics(np.array([3., 1., 1., 5.]))   # AC1: pi = 0.4, pe1 = 0.48, (0.8 - 0.48) / 0.52
    >>> [round(float(s[k]), 4) for k in ("accuracy", "kappa", "ac1", "mcc")]
    [0.8, 0.5833, 0.6154, 0.5833]
    """
    tp, fp, fn, tn = (tot[..., i] for i in range(4))
    n = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        base, flag, po = (tp + fn) / n, (tp + fp) / n, (tp + tn) / n
        tpr, fpr = tp / (tp + fn), fp / (fp + tn)
        pe = flag * base + (1 - flag) * (1 - base)
        kappa = np.where(pe < 1 - 1e-12, (po - pe) / (1 - pe), np.nan)
        pi = (flag + base) / 2
        pe1 = 2 * pi * (1 - pi)
        ac1 = np.where(pe1 < 1 - 1e-12, (po - pe1) / (1 - pe1), np.nan)
        mcc = (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        return {"base_rate": base, "flagged": flag, "accuracy": po, "tpr": tpr, "fpr": fpr,
                "precision": tp / (tp + fp), "balanced_accuracy": (tpr + 1 - fpr) / 2, "kappa": kappa,
                "ac1": ac1, "mcc": mcc}


def resample_counts(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """(resamples x n) multiplicities of a with-replacement bootstrap of ``n`` answers.

    >>> m = resample_counts(5, 3, 1)
    >>> m.shape, m.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    """
    return multiplicities(np.random.default_rng(seed), n, (resamples,))


def multiplicities(rng, n: int, shape: tuple) -> np.ndarray:
    """(*shape, n) bootstrap multiplicities of ``n`` answers, every resample at once (one draw of indices, one
    bincount).

    >>> multiplicities(np.random.default_rng(0), 4, (2, 3)).sum(axis=-1).tolist()
    [[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
    """
    rows = int(np.prod(shape))
    if not n:
        return np.zeros((*shape, 0))
    idx = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=rows * n).reshape(*shape, n).astype(float)


def kish(w) -> float:
    """Kish's effective sample size of weights.

    >>> kish([1, 1, 1, 1]), kish([3, 1])
    (4.0, 1.6)
    """
    w = np.asarray(w, float)
    return float(w.sum() ** 2 / (w * w).sum()) if w.size and (w * w).sum() > 0 else 0.0


def _edge(stat: str, point: float, c: np.ndarray, w: np.ndarray) -> tuple[float, float] | None:
    """The interval of a statistic whose every resample is the same (the sample sits at an edge the bootstrap
    cannot see past): a proportion gets the Wilson interval at the Kish effective size of its denominator; a
    chance-corrected statistic at its top gets raw agreement's Wilson bound mapped through kappa's formula with
    the observed marginals; any other point (balanced accuracy 0.50 of a metric that flags everything) is
    widened by the Wilson half-width of a proportion at 0 on that effective size."""
    den = {"tpr": (0, 2), "fpr": (1, 3), "precision": (0, 1)}.get(stat, (0, 1, 2, 3))
    m = kish(w * c[:, list(den)].sum(axis=1))
    if m <= 0:
        return None
    r0, r1 = RANGE[stat]
    if r0 == 0.0 and point in (0.0, 1.0):
        return wilson(point * m, m)
    if stat in ("kappa", "ac1", "mcc") and point >= 1.0:
        s = statistics(w @ c)
        pe = float(s["flagged"] * s["base_rate"] + (1 - s["flagged"]) * (1 - s["base_rate"]))
        if pe < 1:
            return max(r0, (wilson(m, m)[0] - pe) / (1 - pe)), 1.0
    half = wilson(0, m)[1]
    return max(r0, point - half), min(r1, point + half)


def quantiles(values: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise percentile bounds of ``values`` (rows x resamples), NaN left out (numpy's linear rule); NaN
    for a row with no value.

    >>> lo, hi = quantiles(np.array([[0., 1., 2., 3., 4.], [1., np.nan, 1., 1., 1.]]), 0.5)
    >>> lo.tolist(), hi.tolist()
    ([1.0, 1.0], [3.0, 1.0])
    """
    v = np.sort(np.atleast_2d(values), axis=1)   # NaN sorts last
    cnt = (~np.isnan(v)).sum(axis=1)
    a = (1 - level) / 2
    out = []
    for q in (a, 1 - a):
        pos = q * np.maximum(cnt - 1, 0)
        i0 = np.floor(pos).astype(int)
        i1 = np.minimum(i0 + 1, np.maximum(cnt - 1, 0))
        rows = np.arange(len(v))
        x0, x1 = v[rows, i0], v[rows, i1]
        out.append(np.where(cnt > 0, x0 + (pos - i0) * (x1 - x0), np.nan))
    return out[0], out[1]


def interval(values: np.ndarray, stat: str, level: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile interval of bootstrap values (NaN left out), clipped to the statistic's range.

    >>> interval(np.array([0.9, 1.0, 1.0, np.nan]), "accuracy")
    (0.905, 1.0)
    """
    lo, hi = (float(x[0]) for x in quantiles(np.asarray(values, float)[None, :], level))
    if math.isnan(lo):
        return None, None
    r0, r1 = RANGE[stat]
    return min(max(lo, r0), r1), min(max(hi, r0), r1)


def estimate(c, w, resamples: int = RESAMPLES, seed: int = SEED, boot: np.ndarray | None = None) -> Estimate:
    """Weighted figures and 95% intervals from per-answer counts ``c`` (answers x 4: tp, fp, fn, tn) and the
    answers' weights ``w`` (``1 / inclusion probability``); ``boot`` (resamples x answers multiplicities) reuses
    a bootstrap so two metrics on the same answers are compared on the same resamples.

    >>> c = counts([True, True, False, False, False], [True, False, False, False, True])
    >>> e = estimate(c, [1, 1, 1, 1, 1], resamples=200)
    >>> round(e.point["accuracy"], 2), e.n, e.ci["accuracy"][0] < 0.6 < e.ci["accuracy"][1]
    (0.6, 5, True)
    """
    c, w = np.asarray(c, float).reshape(-1, 4), np.asarray(w, float)
    if not len(w):
        return Estimate(0, 0, 0.0, {s: None for s in STATISTICS}, {s: (None, None) for s in STATISTICS})
    pts = {k: _f(v) for k, v in statistics(w @ c).items()}
    m = resample_counts(len(w), resamples, seed) if boot is None else boot
    vals = statistics((m * w) @ c)
    los, his = quantiles(np.stack([np.asarray(vals[s], float) for s in STATISTICS]))
    ci = {}
    for i, s in enumerate(STATISTICS):
        r0, r1 = RANGE[s]
        lo, hi = (None, None) if math.isnan(los[i]) else (min(max(float(los[i]), r0), r1), min(max(float(his[i]), r0), r1))
        p = pts[s]
        if p is not None and lo is not None and hi - lo < 1e-12:
            edge = _edge(s, p, c, w)   # the sample sits at the edge: the bootstrap cannot see past it
            if edge is not None:
                lo, hi = min(lo, edge[0]), max(hi, edge[1])
        ci[s] = (lo, hi) if p is not None else (None, None)
    return Estimate(len(w), int(c.sum()), kish(w), pts, ci)


def _f(v) -> float | None:
    v = float(v)
    return None if math.isnan(v) else v


def figure(e: Estimate, stat: str) -> str:
    """``0.81 [0.53, 1.00]`` or an en dash.

    >>> figure(Estimate(3, 3, 3.0, {"accuracy": 0.5}, {"accuracy": (0.1, 0.9)}), "accuracy")
    '0.50 [0.10, 0.90]'
    """
    p = e.point.get(stat)
    if p is None:
        return "\u2013"
    lo, hi = e.ci.get(stat, (None, None))
    return f"{_n(p)} [{_n(lo)}, {_n(hi)}]" if lo is not None else _n(p)


def _n(v: float) -> str:
    """Two decimals, never "-0.00"."""
    s = f"{v:.2f}"
    return "0.00" if s == "-0.00" else s
