"""A score-valued metric's threshold fitted on a team's labels, judged out of fold (pure numpy).

An answer is called ungrounded when its (oriented) score is below the threshold. The fitted threshold is the cut
with the highest weighted balanced accuracy on the labels; choosing it and measuring it on the same answers
flatters it, so its agreement is measured by K-fold cross-validation: each fold's answers are called with the
threshold fitted on the other folds, and the pooled out-of-fold calls are compared with the labels (weighted,
with the answer bootstrap of :mod:`harness.reports.analysis.design_estimates`; the interval is that of the out-of-fold
calls, it does not redo the fit per resample). The vendor's default threshold (the top of the score range) is
measured beside it on the same answers. The threshold to use is the one fitted on every labelled answer.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.reports.analysis import design_estimates as D

import numpy as np

FOLDS = 5
MIN_LABELS = 10
"""Fewer labelled answers (or fewer than two of either class): no fit."""


@dataclass(frozen=True)
class Fitted:
    """A fitted threshold and its out-of-fold agreement beside the default's."""

    threshold: float
    """Fitted on every labelled answer (the one to use)."""
    folds: int
    out_of_fold: D.Estimate
    """Agreement of the out-of-fold calls with the labels."""
    default: D.Estimate
    """Agreement at the vendor's default threshold, same answers."""
    default_threshold: float


def cuts(scores) -> np.ndarray:
    """Candidate thresholds: midpoints between distinct scores, and just past each end.

    >>> cuts([0.2, 0.5, 0.5, 1.0]).tolist()
    [0.199999, 0.35, 0.75, 1.000001]
    """
    u = np.unique(np.asarray(scores, float))
    return np.concatenate([[u[0] - 1e-6], (u[1:] + u[:-1]) / 2, [u[-1] + 1e-6]])


def best_cut(y, s, w) -> float:
    """The cut with the highest weighted balanced accuracy (ties: the one nearest the middle of the tied run).

    >>> round(best_cut(np.array([1, 1, 0, 0], bool), np.array([0.1, 0.3, 0.6, 0.9]), np.ones(4)), 6)
    0.45
    """
    c = cuts(s)
    flag = s[None, :] < c[:, None]                      # cuts x answers
    pos, neg = w @ y, w @ ~y
    tpr = (flag & y) @ w / pos if pos else np.zeros(len(c))
    tnr = (~flag & ~y) @ w / neg if neg else np.zeros(len(c))
    ba = (tpr + tnr) / 2
    top = np.flatnonzero(ba >= ba.max() - 1e-12)
    return float(c[top[len(top) // 2]])


def fit(truth, scores, weights, default: float, folds: int = FOLDS, seed: int = D.SEED,
        resamples: int = D.RESAMPLES) -> Fitted | None:
    """Fit and cross-validate (None when there are too few labels, or a class has fewer than two answers, or the
    scores take fewer than three values: a verdict, not a score).

    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(60) < 0.4
    >>> f = fit(y, np.where(y, 0.3, 0.7) + rng.normal(0, 0.1, 60), np.ones(60), 1.0, resamples=100)
    >>> 0.4 < f.threshold < 0.6, f.out_of_fold.point["balanced_accuracy"] > 0.9, f.default.point["balanced_accuracy"]
    (True, True, 0.5)
    """
    y, s, w = np.asarray(truth, bool), np.asarray(scores, float), np.asarray(weights, float)
    if len(y) < MIN_LABELS or y.sum() < 2 or (~y).sum() < 2 or len(np.unique(s)) < 3:
        return None
    k = min(folds, int(y.sum()), int((~y).sum()))
    rng = np.random.default_rng(seed)
    fold = np.empty(len(y), int)
    for cls in (True, False):                           # stratified: each fold gets both classes
        ix = rng.permutation(np.flatnonzero(y == cls))
        fold[ix] = np.arange(len(ix)) % k
    oof = np.empty(len(y), bool)
    for j in range(k):
        train = fold != j
        oof[~train] = s[~train] < best_cut(y[train], s[train], w[train])
    boot = D.resample_counts(len(y), resamples, seed)
    return Fitted(best_cut(y, s, w), k, D.estimate(D.counts(y, oof), w, boot=boot),
                  D.estimate(D.counts(y, s < default), w, boot=boot), default)
