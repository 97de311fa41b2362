"""Selective judging with a finite-sample guarantee: each stage of a cascade keeps only the answers it is
confident on, with its confidence threshold chosen on human labels so that the kept verdicts agree with
the humans at least at a target, with probability at least 1 - delta.

Method (fixed-sequence testing with exact binomial tests, as in Trust or Escalate, Jung et al., ICLR 2025):

- stage k sees the calibration answers no earlier stage kept; its candidate thresholds are the levels of
  :data:`GRID`, tested from the most confident down;
- at a level ``lam`` the stage would keep the ``n`` answers whose confidence is at least ``lam``, ``a`` of which
  it gets right; the null hypothesis "agreement below target" is rejected when the exact binomial tail
  ``P(Bin(n, target) >= a)`` is at most ``delta / K`` (equivalently: the one-sided Clopper-Pearson lower
  bound at that level reaches the target); levels too high to keep enough answers to ever pass
  (``target ** n > delta / K``) are passed over, since no label could reject them;
- the stage's threshold is the last level rejected before the first one that is not; a stage that
  rejects none decides nothing (threshold None) and hands everything on;
- ``delta`` is split evenly over the K stages (the union bound), so that with probability at least
  1 - delta every stage's kept answers agree at least at the target, and so does their union.

Assumptions: the labelled answers and the answers the cascade will judge are exchangeable (the labelled
sample is drawn like the data), and the labels are what "agreement" means. :mod:`tests.stats.test_cascade_guarantee`
measures the failure rate over many random calibration splits; a naive threshold (the lowest level whose
calibration agreement reaches the target) fails far more often.
"""
from __future__ import annotations

import functools
import math

import numpy as np

GRID = np.round(np.linspace(1.0, 0.0, 101), 2)
"""Candidate confidence thresholds, most confident first (fixed before any label is read)."""
METHOD = ("fixed-sequence testing down a fixed grid of confidence levels (1.00, 0.99, ..., 0.00), exact "
          "binomial (Clopper-Pearson) test at each level, delta split evenly over the stages (Trust or Escalate, "
          "Jung et al., ICLR 2025)")


def binom_tail(k, n, p: float):
    """``P(Bin(n, p) >= k)`` exactly, elementwise over arrays ``k`` and ``n``.

    >>> round(float(binom_tail(3, 3, 0.9)), 6)
    0.729
    >>> float(binom_tail(0, 5, 0.9))
    1.0
    """
    k, n = np.broadcast_arrays(np.asarray(k, dtype=int), np.asarray(n, dtype=int))
    top = int(n.max()) if n.size else 0
    lf = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, top + 1)))])
    j = np.arange(top + 1)
    nn = n[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        logpmf = (lf[np.minimum(nn, top)] - lf[np.clip(j, 0, top)] - lf[np.clip(nn - j, 0, top)]
                  + j * math.log(p) + (nn - j) * (math.log1p(-p) if p < 1 else -np.inf))
    keep = (j >= k[..., None]) & (j <= nn)
    out = np.where(keep, np.exp(np.where(keep, logpmf, -np.inf)), 0.0).sum(axis=-1)
    return np.clip(out, 0.0, 1.0)


def clopper_pearson(a: int, n: int, level: float = 0.95) -> tuple[float | None, float | None]:
    """Exact two-sided interval for a proportion ``a / n`` (bisection on the binomial tails); never
    leaves [0, 1]; (None, None) for n = 0.

    >>> lo, hi = clopper_pearson(10, 10)
    >>> round(lo, 4), hi
    (0.6915, 1.0)
    """
    if n <= 0:
        return None, None
    alpha = (1 - level) / 2

    def solve(f) -> float:   # f increasing in p on [0, 1]
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
        return (lo + hi) / 2

    lower = 0.0 if a == 0 else solve(lambda p: float(binom_tail(a, n, p)) - alpha)
    upper = 1.0 if a == n else solve(lambda p: alpha - (1 - float(binom_tail(a + 1, n, p))))
    return lower, upper


@functools.lru_cache(maxsize=64)
def critical(n_max: int, target: float, alpha: float) -> np.ndarray:
    """``crit[n]``: the fewest agreements out of ``n`` that reject "agreement below target" at level ``alpha``
    (``P(Bin(n, target) >= crit[n]) <= alpha``); ``n + 1`` when none do.

    >>> [int(x) for x in critical(25, 0.9, 0.1)[[20, 21, 22, 25]]]
    [21, 22, 22, 25]
    """
    lf = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n_max + 1)))])
    out = np.empty(n_max + 1, dtype=int)
    for n in range(n_max + 1):
        j = np.arange(n + 1)
        pmf = np.exp(lf[n] - lf[j] - lf[n - j] + j * math.log(target) + (n - j) * math.log1p(-target))
        tails = np.append(np.cumsum(pmf[::-1])[::-1], 0.0)       # tails[k] = P(Bin(n, target) >= k)
        out[n] = int(np.nonzero(tails <= alpha)[0].min())
    return out


def stage_threshold(conf: np.ndarray, correct: np.ndarray, target: float, delta: float) -> float | None:
    """One stage's confidence threshold by fixed-sequence testing (module docstring); None: it decides nothing."""
    conf, correct = np.asarray(conf, dtype=float), np.asarray(correct, dtype=bool)
    kept = conf[None, :] >= GRID[:, None] - 1e-12
    n = kept.sum(axis=1)
    a = (kept & correct[None, :]).sum(axis=1)
    crit = critical(max(256, 1 << int(conf.size).bit_length()), float(target), float(delta))[n]
    reachable = crit <= n      # some labels could pass this level (target ** n <= delta)
    chosen = None
    for i in range(len(GRID)):
        if not reachable[i]:
            continue           # too few answers at this level for any labels to pass it: not a test
        if a[i] < crit[i]:     # the exact binomial tail P(Bin(n, target) >= a) is above delta
            break
        chosen = float(GRID[i])
    return chosen


def naive_threshold(conf: np.ndarray, correct: np.ndarray, target: float) -> float | None:
    """The lowest level whose calibration agreement reaches the target, with no allowance for chance
    (what the guarantee is measured against)."""
    conf, correct = np.asarray(conf, dtype=float), np.asarray(correct, dtype=bool)
    kept = conf[None, :] >= GRID[:, None] - 1e-12
    n = kept.sum(axis=1)
    a = (kept & correct[None, :]).sum(axis=1)
    ok = (n > 0) & (a >= target * n)
    return float(GRID[np.nonzero(ok)[0].max()]) if ok.any() else None


def route(conf: np.ndarray, thresholds: list[float | None]) -> np.ndarray:
    """For each answer (row of ``conf``, one column per stage), the first stage whose confidence reaches its
    threshold, or -1: no stage is confident (a person decides)."""
    conf = np.asarray(conf, dtype=float)
    out = np.full(conf.shape[0], -1, dtype=int)
    for k, lam in enumerate(thresholds):
        if lam is None:
            continue
        take = (out < 0) & (conf[:, k] >= lam - 1e-12)
        out[take] = k
    return out


def calibrate(conf: np.ndarray, correct: np.ndarray, target: float, delta: float,
              naive: bool = False) -> list[float | None]:
    """Every stage's threshold, stage by stage on the answers the earlier stages hand on.

    ``conf`` and ``correct``: one row per labelled answer, one column per stage (the stage's confidence in
    [0, 1], and whether its verdict agrees with the label). ``naive``: the uncorrected rule instead.
    """
    conf, correct = np.asarray(conf, dtype=float), np.asarray(correct, dtype=bool)
    stages = conf.shape[1]
    out: list[float | None] = []
    for k in range(stages):
        left = route(conf, out) < 0
        if naive:
            out.append(naive_threshold(conf[left, k], correct[left, k], target))
        else:
            out.append(stage_threshold(conf[left, k], correct[left, k], target, delta / stages))
    return out
