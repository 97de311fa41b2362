"""Agreement statistics between a metric's verdicts and human labels (pure functions, numpy only).

The positive class is "ungrounded" throughout: ``truth[i]`` is True when the humans say answer (or
claim) ``i`` is ungrounded, ``pred[i]`` when the metric does. A metric's continuous score is higher
for better grounded answers, so AUROC ranks by the negated score. A statistic that is undefined on
the data (recall with no ungrounded answer, kappa when both raters are constant) is None, never a
number that only looks like one.

Intervals are seeded percentile bootstraps over the items (:func:`bootstrap`); resamples on which
the statistic is undefined are left out and counted.
"""
from __future__ import annotations

from dataclasses import dataclass

RESAMPLES = 2000
SEED = 20261201


@dataclass(frozen=True)
class Confusion:
    """Counts with "ungrounded" as the positive class."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


def confusion(truth, pred) -> Confusion:
    """Confusion counts.

    >>> confusion([True, True, False, False], [True, False, True, False])
    Confusion(tp=1, fp=1, fn=1, tn=1)
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    t = np.fromiter((bool(x) for x in truth), dtype=bool) if not isinstance(truth, np.ndarray) else truth.astype(bool)
    p = np.fromiter((bool(x) for x in pred), dtype=bool) if not isinstance(pred, np.ndarray) else pred.astype(bool)
    m = min(t.size, p.size)   # as zip pairs them
    t, p = t[:m], p[:m]
    tp, fp, fn = int((t & p).sum()), int((p & ~t).sum()), int((t & ~p).sum())
    return Confusion(tp, fp, fn, m - tp - fp - fn)


def _div(a: float, b: float) -> float | None:
    return a / b if b else None


def accuracy(c: Confusion) -> float | None:
    """Raw agreement: the share of items where metric and humans agree."""
    return _div(c.tp + c.tn, c.n)


def precision(c: Confusion) -> float | None:
    """Of the items the metric calls ungrounded, the share the humans call ungrounded."""
    return _div(c.tp, c.tp + c.fp)


def recall(c: Confusion) -> float | None:
    """Of the items the humans call ungrounded, the share the metric catches."""
    return _div(c.tp, c.tp + c.fn)


def balanced_accuracy(c: Confusion) -> float | None:
    """Mean of the recall of each class; None unless both classes occur in the labels.

    >>> balanced_accuracy(Confusion(tp=3, fp=1, fn=1, tn=5))
    0.7916666666666667
    """
    tpr, tnr = _div(c.tp, c.tp + c.fn), _div(c.tn, c.tn + c.fp)
    return None if tpr is None or tnr is None else (tpr + tnr) / 2


def cohen_kappa(c: Confusion) -> float | None:
    """Cohen's kappa: (observed - chance agreement) / (1 - chance agreement); None when chance is 1.

    >>> round(cohen_kappa(Confusion(tp=3, fp=1, fn=1, tn=5)), 4)
    0.5833
    """
    n = c.n
    if not n:
        return None
    po = (c.tp + c.tn) / n
    pe = ((c.tp + c.fp) * (c.tp + c.fn) + (c.fn + c.tn) * (c.fp + c.tn)) / (n * n)
    return None if pe >= 1 else (po - pe) / (1 - pe)


def auroc(truth, scores) -> float | None:
    """Area under the ROC curve of ``-score`` for "ungrounded" (ties count one half).

    The probability that a random ungrounded item scores lower than a random grounded one.

    >>> auroc([True, True, False, False], [0.2, 0.6, 0.6, 0.9])
    0.875
    >>> auroc([True, True], [0.1, 0.2]) is None
    True
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    t = np.asarray(truth, dtype=bool)
    s = -np.asarray(scores, dtype=float)
    n1, n0 = int(t.sum()), int((~t).sum())
    if not n1 or not n0:
        return None
    return float(_rank_sum(s, t) - n1 * (n1 + 1) / 2) / (n1 * n0)


def _rank_sum(s, t) -> float:
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    uniq, inv, counts = np.unique(s, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    mid = ends - (counts - 1) / 2.0            # the mid-rank of each distinct value
    return float(mid[inv][t].sum())


def bootstrap(stat, n: int, resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95):
    """(low, high, undefined resamples) of ``stat(indices)`` over a seeded percentile bootstrap.

    ``stat`` takes an index array and returns a float or None. (None, None, k) when no resample
    is defined.

    >>> lo, hi, bad = bootstrap(lambda ix: float(sum(ix)) / len(ix), 10, resamples=200)
    >>> 2.0 < lo < 4.5 < hi < 7.0, bad
    (True, 0)
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    if n == 0:
        return None, None, resamples
    rng = np.random.default_rng(seed)
    vals, bad = [], 0
    for ix in rng.integers(0, n, size=(resamples, n)):
        v = stat(ix)
        if v is None:
            bad += 1
        else:
            vals.append(v)
    if not vals:
        return None, None, bad
    a = (1 - level) / 2
    lo, hi = np.quantile(np.asarray(vals), [a, 1 - a])
    return float(lo), float(hi), bad


BIG = 5000
"""Above this many items a bootstrap does not draw a resamples x n matrix of items (memory and time that grow
with n: 1.6 GB at 100,000 answers): it draws each resample's counts of the distinct items, a multinomial over
them with the items' shares (:func:`grouped_multiplicities`), which is the same distribution as drawing the
items one by one. Runs up to this size keep their exact resamples (and figures) of before."""
GRID = 1e-3
"""Past :data:`BIG` items and 1,000 distinct scores, scores are put on this grid for the interval's resamples
(the point estimate stays exact): an interval's ends move by less than the grid."""


def grouped_multiplicities(counts, resamples: int = RESAMPLES, seed: int = SEED):
    """(resamples x k) counts of k distinct items, drawn as a bootstrap of their ``counts`` (n = their sum)
    would draw them: one multinomial per resample.

    >>> c = grouped_multiplicities([3, 1], resamples=4)
    >>> c.shape, c.sum(axis=1).tolist()
    ((4, 2), [4, 4, 4, 4])
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    counts = np.asarray(counts, dtype=float)
    return np.random.default_rng(seed).multinomial(int(counts.sum()), counts / counts.sum(), size=resamples)


def on_grid(s):
    """The scores as they are when at most 1,000 are distinct, else on :data:`GRID`."""
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    return s if np.unique(s).size <= 1000 else np.round(s / GRID) * GRID


def multiplicities(n: int, resamples: int = RESAMPLES, seed: int = SEED):
    """(resamples x n) counts: how often each item is drawn in each bootstrap resample."""
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    idx += np.arange(resamples)[:, None] * n   # one count per (resample, item): a bincount of the flat index
    return np.bincount(idx.ravel(), minlength=resamples * n).reshape(resamples, n).astype(float)


def _interval(values, level: float = 0.95):
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    v = values[~np.isnan(values)]
    if not v.size:
        return None, None
    a = (1 - level) / 2
    lo, hi = np.quantile(v, [a, 1 - a])
    return float(lo), float(hi)


def binary_intervals(truth, pred, resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    """statistic -> bootstrap 95% interval, for accuracy, balanced accuracy, precision, recall and kappa,
    computed for all resamples at once (the same resamples as :func:`bootstrap` with this seed).

    >>> ci = binary_intervals([True, False] * 10, [True, False] * 10, resamples=50)
    >>> ci["kappa"], ci["balanced_accuracy"]
    ((1.0, 1.0), (1.0, 1.0))
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    t, p = np.asarray(truth, dtype=bool), np.asarray(pred, dtype=bool)
    if not t.size:
        return {k: (None, None) for k in ("accuracy", "balanced_accuracy", "precision", "recall", "kappa")}
    if t.size > BIG:   # the four cells' counts, drawn as a multinomial (see BIG)
        g = grouped_multiplicities([(t & p).sum(), (~t & p).sum(), (t & ~p).sum(), (~t & ~p).sum()], resamples, seed)
        tp, fp, fn, tn = (g[:, 0].astype(float), g[:, 1].astype(float), g[:, 2].astype(float), g[:, 3].astype(float))
    else:
        c = multiplicities(t.size, resamples, seed)
        tp, fp, fn, tn = (c @ (t & p), c @ (~t & p), c @ (t & ~p), c @ (~t & ~p))
    n = float(t.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr, tnr = tp / (tp + fn), tn / (tn + fp)
        po = (tp + tn) / n
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
        kappa = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
        stats = {"accuracy": po, "balanced_accuracy": (tpr + tnr) / 2, "precision": tp / (tp + fp),
                 "recall": tpr, "kappa": kappa}
    return {k: _interval(np.asarray(v, dtype=float)) for k, v in stats.items()}


def auroc_interval(truth, scores, resamples: int = RESAMPLES, seed: int = SEED) -> tuple:
    """Bootstrap 95% interval of :func:`auroc` (same resamples as :func:`binary_intervals`)."""
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    t, s = np.asarray(truth, dtype=bool), np.asarray(scores, dtype=float)
    if not t.size:
        return None, None
    if t.size > BIG:
        return _interval(grouped_auroc(t, on_grid(s), resamples, seed))
    c = multiplicities(t.size, resamples, seed)
    if t.size <= 400:   # pairwise: M[i, j] = 1 when i scores lower than j, 1/2 on a tie
        m = (s[:, None] < s[None, :]) + 0.5 * (s[:, None] == s[None, :])
        pos, neg = c * t, c * ~t
        num = np.einsum("ri,ij,rj->r", pos, m, neg)
        den = pos.sum(axis=1) * neg.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            vals = np.where(den > 0, num / den, np.nan)
    else:
        vals = counted_auroc(c, t, s)
    return _interval(vals)


def counted_auroc(c, t, s):
    """:func:`auroc` of each resample given as a row of item counts ``c`` (resamples x n): the counts summed
    per distinct score, then the chance that an ungrounded item scores lower than a grounded one, ties one
    half, as :func:`grouped_auroc` counts it. Every sum is of whole and half counts, so each value is the
    same float as :func:`auroc` of the resample drawn item by item (NaN where it is None).

    >>> import numpy as np
    >>> t, s = np.array([True, True, False, False]), np.array([0.2, 0.6, 0.6, 0.9])
    >>> c = np.array([[1, 1, 1, 1], [2, 0, 1, 1], [0, 0, 2, 2]], dtype=float)
    >>> counted_auroc(c, t, s).tolist()[:2] == [auroc(t, s), auroc([True] * 2 + [False] * 2, [0.2, 0.2, 0.6, 0.9])]
    True
    >>> bool(np.isnan(counted_auroc(c, t, s)[2]))
    True
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    t, s = np.asarray(t, dtype=bool), np.asarray(s, dtype=float)
    _, inv = np.unique(s, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inv[order]) != 0])   # where each distinct score begins
    out = []
    for rows in np.array_split(np.asarray(c, dtype=float), max(1, len(c) // 250)):   # bounded memory
        pos = np.add.reduceat((rows * t)[:, order], starts, axis=1)
        neg = np.add.reduceat((rows * ~t)[:, order], starts, axis=1)
        above = neg.sum(axis=1, keepdims=True) - np.cumsum(neg, axis=1)   # grounded items scoring higher
        num = (pos * (above + 0.5 * neg)).sum(axis=1)
        den = pos.sum(axis=1) * neg.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(np.where(den > 0, num / den, np.nan))
    return np.concatenate(out) if out else np.zeros(0)


def grouped_auroc(t, s, resamples: int = RESAMPLES, seed: int = SEED):
    """:func:`auroc` of each bootstrap resample, drawn over the distinct (truth, score) pairs (see :data:`BIG`):
    the chance that an ungrounded item scores lower than a grounded one, ties one half.

    >>> v = grouped_auroc([True, True, False, False], [0.2, 0.6, 0.6, 0.9], resamples=300)
    >>> 0.6 < float(__import__("numpy").nanmedian(v)) <= 1.0
    True
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    t, s = np.asarray(t, dtype=bool), np.asarray(s, dtype=float)
    vals, inv = np.unique(s, return_inverse=True)
    k = vals.size
    counts = np.concatenate([np.bincount(inv[t], minlength=k), np.bincount(inv[~t], minlength=k)])
    keep = counts > 0
    g = np.zeros((resamples, 2 * k))
    g[:, keep] = grouped_multiplicities(counts[keep], resamples, seed)
    pos, neg = g[:, :k], g[:, k:]
    above = neg.sum(axis=1, keepdims=True) - np.cumsum(neg, axis=1)   # grounded items scoring higher
    num = (pos * (above + 0.5 * neg)).sum(axis=1)
    den = pos.sum(axis=1) * neg.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.nan)


@dataclass(frozen=True)
class Point:
    """The binary figures at one threshold (an answer is ungrounded when its score is below it)."""

    threshold: float
    confusion: Confusion
    accuracy: float | None
    balanced_accuracy: float | None
    precision: float | None
    recall: float | None
    kappa: float | None


def at_threshold(truth, scores, threshold: float) -> Point:
    """The figures when "score < threshold" means ungrounded.

    >>> p = at_threshold([True, False, False], [0.5, 1.0, 0.5], 1.0)
    >>> p.confusion, p.recall, p.precision
    (Confusion(tp=1, fp=1, fn=0, tn=1), 1.0, 0.5)
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    c = confusion(truth, np.asarray(scores, dtype=float) < threshold)
    return Point(threshold, c, accuracy(c), balanced_accuracy(c), precision(c), recall(c), cohen_kappa(c))


def sweep(truth, scores) -> list[Point]:
    """One point per distinct cut: each distinct score, and just above the highest one.

    >>> [p.threshold for p in sweep([True, False], [0.5, 1.0])]
    [0.5, 1.0, 1.000001]
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    cuts = sorted(set(np.unique(np.asarray(scores, dtype=float)).tolist()))
    cuts.append(cuts[-1] + 1e-6 if cuts else 1.0)
    return [at_threshold(truth, scores, t) for t in cuts]


def best(points: list[Point]) -> Point | None:
    """The point with the highest balanced accuracy (ties: higher kappa, then the lower threshold)."""
    ok = [p for p in points if p.balanced_accuracy is not None]
    if not ok:
        return None
    return max(ok, key=lambda p: (round(p.balanced_accuracy, 12), round(p.kappa or -2.0, 12), -p.threshold))
