"""A metric's score read one way round: higher = better grounded.

Most metrics score groundedness (higher is better); Opik's hallucination score is the other way round
(0 = faithful). Every rule that compares a score with a cut or with another metric's score (agreement,
stability flips, behaviour facts, the divergence spread) reads it through :func:`oriented` or
:func:`unit`; what the report displays stays the score as the vendor returned it.
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=256)
def scale(metric: str) -> tuple[float, float, bool]:
    """(bottom, top, higher_is_better) from the metric's class; (0, 1, True) when it cannot be read."""
    try:
        from harness.metric import registry  # noqa: PLC0415 - lazy: an old run's metric may not be importable

        cls = registry.declared(metric)
        if cls is None:
            raise LookupError(metric)
        lo, hi = (float(x) for x in getattr(cls, "score_range", (0.0, 1.0)))
        higher = bool(getattr(cls, "higher_is_better", True))
    except Exception:  # noqa: BLE001 - a report of an old run must not need the adapter
        return 0.0, 1.0, True
    return (lo, hi, higher) if hi > lo else (0.0, 1.0, higher)


def oriented(metric: str, score: float, span: tuple[float, float, bool] | None = None) -> float:
    """``score`` on the metric's own range, turned round when lower is better (bottom and top swap).

    >>> oriented("x", 0.25, (0.0, 1.0, False)), oriented("x", 2.0, (1.0, 5.0, True))
    (0.75, 2.0)
    """
    lo, hi, higher = span or scale(metric)
    return score if higher else lo + hi - score


def unit(metric: str, score: float, span: tuple[float, float, bool] | None = None) -> float:
    """``score`` on 0-1, 1 = fully grounded (Azure's 1-5: 5 is 1.0, 3 is 0.5; Opik's 0.25 is 0.75).

    >>> unit("x", 3.0, (1.0, 5.0, True)), unit("x", 0.25, (0.0, 1.0, False))
    (0.5, 0.75)
    """
    lo, hi, _ = span = span or scale(metric)
    return (oriented(metric, score, span) - lo) / (hi - lo)
