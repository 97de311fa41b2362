"""Intervals that stay honest at 0% and 100%.

A percentile bootstrap of a statistic that is perfect on the sample (every resample perfect too) gives
the interval [1.00, 1.00], as if 21 answers proved a metric never errs. For a proportion the Wilson
score interval does not collapse: 21 of 21 gives about [0.85, 1.00]. Balanced accuracy (a mean of two
proportions) and Cohen's kappa (a function of raw agreement with the marginals held) get intervals
built from the Wilson intervals of their parts; :func:`widen` joins such an interval with a bootstrap
one, so a figure is never shown narrower than either says.
"""
from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float | None, float | None]:
    """Wilson score 95% interval of the proportion k / n; (None, None) for n = 0.

    >>> [round(x, 3) for x in wilson(21, 21)]
    [0.845, 1.0]
    >>> [round(x, 3) for x in wilson(0, 10)]
    [0.0, 0.278]
    >>> wilson(0, 0)
    (None, None)
    """
    if n <= 0:
        return None, None
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def balanced_interval(tp: int, fn: int, tn: int, fp: int) -> tuple[float | None, float | None]:
    """Balanced accuracy's interval: the mean of the Wilson bounds of the two recalls (None when a class
    is absent from the labels).

    >>> [round(x, 3) for x in balanced_interval(12, 0, 9, 0)]
    [0.729, 1.0]
    """
    a, b = wilson(tp, tp + fn), wilson(tn, tn + fp)
    if a[0] is None or b[0] is None:
        return None, None
    return (a[0] + b[0]) / 2, (a[1] + b[1]) / 2


def kappa_interval(tp: int, fp: int, fn: int, tn: int) -> tuple[float | None, float | None]:
    """Cohen's kappa at the Wilson bounds of raw agreement, the chance agreement of the observed
    marginals held (None when chance agreement is 1: kappa is undefined).

    >>> [round(x, 3) for x in kappa_interval(12, 0, 0, 9)]
    [0.684, 1.0]
    """
    n = tp + fp + fn + tn
    if not n:
        return None, None
    pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    if pe >= 1:
        return None, None
    lo, hi = wilson(tp + tn, n)
    return max(-1.0, (lo - pe) / (1 - pe)), min(1.0, (hi - pe) / (1 - pe))


def widen(a, b) -> tuple[float | None, float | None]:
    """The smallest interval holding both (a side that is None is ignored).

    >>> widen((0.9, 1.0), (0.7, 0.95)), widen((None, None), (0.1, 0.2))
    ((0.7, 1.0), (0.1, 0.2))
    """
    lows = [x for x in (a[0], b[0]) if x is not None]
    highs = [x for x in (a[1], b[1]) if x is not None]
    return (min(lows) if lows else None), (max(highs) if highs else None)


def confusion_intervals(tp: int, fp: int, fn: int, tn: int) -> dict[str, tuple[float | None, float | None]]:
    """statistic -> interval from the counts alone (Wilson, and the two built on it above).

    >>> confusion_intervals(3, 0, 0, 3)["precision"][1]
    1.0
    """
    return {"accuracy": wilson(tp + tn, tp + fp + fn + tn), "precision": wilson(tp, tp + fp),
            "recall": wilson(tp, tp + fn), "balanced_accuracy": balanced_interval(tp, fn, tn, fp),
            "kappa": kappa_interval(tp, fp, fn, tn)}


def honest(ci: dict, truth, pred) -> dict:
    """Bootstrap intervals (statistic -> (low, high)) widened to hold the ones the counts give.

    >>> t = [True] * 12 + [False] * 9
    >>> [round(x, 2) for x in honest({"kappa": (1.0, 1.0)}, t, t)["kappa"]]
    [0.68, 1.0]
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    t, p = np.asarray(truth, dtype=bool), np.asarray(pred, dtype=bool)   # counted whole (100,000 answers each)
    tp, fp, fn = int((t & p).sum()), int((p & ~t).sum()), int((t & ~p).sum())
    tn = len(t) - tp - fp - fn
    counts = confusion_intervals(tp, fp, fn, tn)
    return {k: widen(v, counts[k]) if k in counts else v for k, v in ci.items()}


def honest_auroc(ci: tuple, truth, point: float | None) -> tuple:
    """AUROC's bootstrap interval widened to the Wilson interval of the point on the smaller class (a
    perfect ranking of 9 ungrounded answers is not proof of a perfect metric).

    >>> [round(x, 2) for x in honest_auroc((1.0, 1.0), [True] * 9 + [False] * 12, 1.0)]
    [0.7, 1.0]
    """
    k = min(sum(bool(x) for x in truth), sum(not x for x in truth))
    if point is None or not k:
        return ci
    return widen(ci, wilson(round(point * k), k))
