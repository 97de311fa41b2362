"""The share of a run's answers that are ungrounded, corrected for the metric's own errors (pure numpy).

A metric's raw share (the answers it flags, over every answer it scored) is biased by its false positives and
misses. Two corrections from the labelled sample (gold label ``y``, the metric's flag ``f``, weight
``w = 1 / inclusion probability``; the sums below are over the labelled answers, ratios of weighted sums):

- **PPI++** (prediction-powered inference with power tuning, Angelopoulos, Duchi and Zrnic 2023):
  ``theta = lam * mean_run(f) + sum w (y - lam f) / sum w``: the metric's share over the whole run plus the
  weighted mean of its error on the labelled answers. Unbiased for any ``lam``; ``lam`` (in [0, 1]) is the
  variance-minimising ``cov(y, f) / ((1 + n / N) var(f))``, so a useless metric gets ``lam`` near 0 and the
  estimate falls back to the labels alone.
- **Rogan-Gladen** (1978): ``(raw + specificity - 1) / (sensitivity + specificity - 1)`` with sensitivity and
  specificity estimated on the labelled answers; undefined when the metric is at chance (Youden's J <= 0).

Intervals: the labelled answers are resampled with their weights (the same bootstrap as the agreement figures)
and the run's raw share with them (a bootstrap of the run's flags), percentile, clipped to [0, 1].
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from harness.reports.analysis import design_estimates as D
from harness.reports.analysis.intervals import wilson

import numpy as np


@dataclass(frozen=True)
class Rate:
    """One metric's ungrounded share over the run."""

    scored: int
    """Answers of the run the metric scored (the rate's population)."""
    raw: float | None
    """Share of them the metric flags (its own verdicts, uncorrected)."""
    raw_ci: tuple[float | None, float | None]
    n: int
    """Labelled answers the correction rests on."""
    ppi: float | None
    """PPI++ corrected share, in [0, 1]."""
    ppi_ci: tuple[float | None, float | None]
    lam: float | None
    """PPI++'s power-tuning weight (0: the labels alone; 1: plain PPI)."""
    rogan_gladen: float | None
    """Rogan-Gladen corrected share, clipped to [0, 1]; None when the metric is at chance."""
    rg_ci: tuple[float | None, float | None]


def _ppi(fbar, y, f, w, n_run):
    """PPI++ estimate(s): ``w`` one weight vector or (resamples x n); ``fbar`` a number or (resamples,)."""
    sw = w.sum(axis=-1)
    my, mf = (w @ y) / sw, (w @ f) / sw
    cov = (w @ (y * f)) / sw - my * mf
    var = (w @ (f * f)) / sw - mf * mf
    n_eff = sw ** 2 / (w * w).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.clip(np.where(var > 0, cov / ((1 + n_eff / n_run) * var), 0.0), 0.0, 1.0)
    return lam * fbar + my - lam * mf, lam


def _rg(fbar, y, f, w):
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = (w @ (y * f)) / (w @ y)
        spec = (w @ ((1 - y) * (1 - f))) / (w @ (1 - y))
        j = tpr + spec - 1
        return np.where(j > 0, (fbar + spec - 1) / j, np.nan)


def _clip(v):
    return None if v is None or math.isnan(v) else min(1.0, max(0.0, float(v)))


def _honest(ci, point, w):
    """A bootstrap interval that collapsed to a point (every resample alike: one labelled answer, or labels all
    of one kind) widened to the Wilson interval of the point at the Kish effective size of the labels."""
    if point is None or ci[0] is None or ci[1] - ci[0] > 1e-12:
        return ci
    lo, hi = wilson(point * D.kish(w), D.kish(w))
    return min(ci[0], lo), max(ci[1], hi)


def corrected(flags_run, y, f, w, resamples: int = D.RESAMPLES, seed: int = D.SEED) -> Rate:
    """The corrected rate from the metric's flags on every scored answer of the run (``flags_run``) and, on the
    labelled answers, the gold labels ``y``, the metric's flags ``f`` and the weights ``w``.

    >>> r = corrected([True] * 30 + [False] * 70, [1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1], resamples=200)
    >>> r.raw, r.scored, r.n, 0 <= r.ppi_ci[0] <= r.ppi <= r.ppi_ci[1] <= 1
    (0.3, 100, 4, True)
    """
    fr = np.asarray(flags_run, float)
    y, f, w = np.asarray(y, float), np.asarray(f, float), np.asarray(w, float)
    if not fr.size:
        return Rate(0, None, (None, None), len(y), None, (None, None), None, None, (None, None))
    fbar = float(fr.mean())
    rng = np.random.default_rng(seed)
    fboot = rng.binomial(fr.size, fbar, size=resamples) / fr.size   # the run's flags resampled: a binomial share
    raw_ci = tuple(float(x) for x in np.quantile(fboot, [0.025, 0.975]))
    if not y.size:
        return Rate(fr.size, fbar, raw_ci, 0, None, (None, None), None, None, (None, None))
    point, lam = _ppi(fbar, y, f, w, fr.size)
    m = D.multiplicities(rng, len(y), (resamples,)) * w
    ppi_b, _ = _ppi(fboot, y, f, m, fr.size)
    rg = _rg(fbar, y, f, w) if y.any() and (1 - y).any() else np.nan
    rg_b = _rg(fboot, y, f, m)
    lo, hi = D.quantiles(np.stack([ppi_b, rg_b]))
    ppi_ci = _honest((_clip(lo[0]), _clip(hi[0])), _clip(point), w)
    rg_ci = _honest((_clip(lo[1]), _clip(hi[1])), _clip(rg), w) if _clip(rg) is not None else (None, None)
    return Rate(fr.size, fbar, raw_ci, len(y), _clip(point), ppi_ci, float(lam), _clip(rg), rg_ci)
